//! What touches the machine's services, network and firewall, processes,
//! repositories and packages.

use super::tables::GUARD_UNITS;
use super::{Finding, Risk, finding};
use crate::gate::syntax::Invocation;

pub(super) fn services(inv: &Invocation, out: &mut Vec<Finding>) {
    let args: Vec<String> = inv
        .args()
        .iter()
        .map(|a| a.text.to_ascii_lowercase())
        .collect();
    let (verb, units): (&str, Vec<&String>) = if inv.name() == "service" {
        (
            args.get(1).map_or("", String::as_str),
            args.first().into_iter().collect(),
        )
    } else {
        let verb = args
            .iter()
            .find(|a| !a.starts_with('-'))
            .map_or("", String::as_str);
        (
            verb,
            args.iter()
                .filter(|a| !a.starts_with('-'))
                .skip(1)
                .collect(),
        )
    };
    match verb {
        "" | "status" | "show" | "is-active" | "is-enabled" | "is-failed" | "list-units"
        | "list-unit-files" | "cat" | "list-timers" | "--status-all" => {}
        "poweroff" | "reboot" | "halt" | "suspend" | "hibernate" | "kexec" | "rescue"
        | "emergency" | "isolate" => {
            out.push(finding(
                Risk::High,
                format!("systemctl {verb} takes the machine down or away"),
            ));
        }
        "stop" | "disable" | "mask" | "kill" => {
            for unit in units {
                let name = unit
                    .trim_end_matches(".service")
                    .trim_end_matches(".socket");
                if GUARD_UNITS.contains(&name) {
                    out.push(finding(
                        Risk::Blocked,
                        format!("stops {name}, cutting off access or dropping the firewall"),
                    ));
                } else {
                    out.push(finding(Risk::Medium, format!("{verb}s the service {unit}")));
                }
            }
        }
        _ => out.push(finding(Risk::Medium, format!("{verb} on services"))),
    }
}

pub(super) fn network(inv: &Invocation, out: &mut Vec<Finding>) {
    let words: Vec<String> = inv
        .args()
        .iter()
        .map(|a| a.text.to_ascii_lowercase())
        .collect();
    let has = |w: &str| words.iter().any(|x| x == w);
    let name = inv.name();
    let off = match name {
        "ufw" => has("disable") || has("reset"),
        "iptables" | "ip6tables" => has("-f") || has("--flush") || (has("-p") && has("accept")),
        "nft" => has("flush") && has("ruleset"),
        "ip" => has("link") && has("down"),
        "ifconfig" => has("down"),
        "ifdown" => true,
        "nmcli" => {
            (has("networking") && has("off"))
                || (has("radio") && has("off"))
                || has("disconnect")
                || (has("connection") && has("down"))
        }
        "rfkill" => has("block"),
        _ => false,
    };
    if off {
        out.push(finding(
            Risk::Blocked,
            format!("`{name}` turns off the network or the firewall"),
        ));
    } else if matches!(name, "iptables" | "ip6tables" | "nft" | "ufw")
        && !words.is_empty()
        && !has("status")
        && !has("-l")
        && !has("list")
    {
        out.push(finding(Risk::High, "changes the firewall"));
    }
}

pub(super) fn kill(inv: &Invocation, out: &mut Vec<Finding>) {
    if inv.args().iter().any(|a| a.text == "-1") && inv.args().len() >= 2
        || inv.args().last().is_some_and(|a| a.text == "-1")
    {
        out.push(finding(Risk::High, "kills every process it may"));
    } else {
        out.push(finding(Risk::Medium, "stops processes"));
    }
}

pub(super) fn git(inv: &Invocation, out: &mut Vec<Finding>) {
    let words: Vec<&str> = inv.args().iter().map(|a| a.text.as_str()).collect();
    match words.first().copied() {
        Some("clean") if words.iter().any(|w| w.starts_with('-') && w.contains('f')) => {
            out.push(finding(Risk::High, "git clean deletes untracked files"));
        }
        Some("reset") if words.contains(&"--hard") => {
            out.push(finding(Risk::High, "git reset --hard discards changes"))
        }
        Some("push") if words.iter().any(|w| *w == "-f" || w.starts_with("--force")) => {
            out.push(finding(
                Risk::High,
                "git push --force rewrites shared history",
            ));
        }
        None
        | Some(
            "status" | "log" | "diff" | "show" | "branch" | "remote" | "rev-parse" | "blame"
            | "ls-files" | "tag",
        ) => {}
        Some(other) => out.push(finding(
            Risk::Medium,
            format!("git {other} changes the repository"),
        )),
    }
}

pub(super) fn packages(inv: &Invocation, out: &mut Vec<Finding>) {
    let words: Vec<&str> = inv
        .args()
        .iter()
        .map(|a| a.text.as_str())
        .filter(|w| !w.starts_with('-'))
        .collect();
    let first = inv.args().first().map_or("", |a| a.text.as_str());
    let reading = matches!(
        words.first().copied(),
        None | Some("list" | "search" | "show" | "info" | "policy" | "query")
    ) || (inv.name() == "dpkg"
        && matches!(first, "-l" | "-s" | "-L" | "-S" | "--list" | "--status"));
    if !reading {
        let what = words.first().copied().unwrap_or(first);
        out.push(finding(
            Risk::Medium,
            format!("{} {what} changes installed packages", inv.name()),
        ));
    }
}
