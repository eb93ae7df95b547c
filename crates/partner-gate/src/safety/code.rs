//! Code partner cannot read: interpreters given a program, awk's
//! `system()` and pipes, sed's `e`, `find -exec`, git's config and pager
//! options, tar, rsync and zip options that run commands, `xargs`,
//! scripts fed to a shell through a here-string, here-document or process
//! substitution, shell functions, `trap`, `eval`, variables that name a
//! program or a pager, `crontab` and `at`, ssh's remote command, and
//! every program partner does not know. Each is at least `high`, with the
//! reason [`OPAQUE`]; the text such code is given is searched for what
//! would be blocked ([`super::scan`]).

use super::scan::blocked_in;
use super::tables::INTERPRETERS;
use super::{Cx, Finding, OPAQUE, Risk, finding};
use crate::syntax::Invocation;
use crate::wrappers::is_shell;

/// Variables whose value a program runs (`PAGER`, `GIT_SSH_COMMAND`,
/// `LD_PRELOAD`…).
const CODE_VARS: &[&str] = &[
    "PAGER",
    "MANPAGER",
    "GIT_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "LESSOPEN",
    "LESSCLOSE",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "NODE_OPTIONS",
    "SHELLOPTS",
    "PS4",
];

/// What code `inv` runs that partner cannot read: why, and the texts it
/// is given (searched for what would be blocked).
fn opaque(inv: &Invocation, cx: &Cx) -> Option<(String, Vec<String>)> {
    let name = inv.name();
    let args: Vec<String> = inv.args().iter().map(|a| a.text.clone()).collect();
    if inv.function {
        return Some((format!("`{name}` is a shell function"), vec![]));
    }
    if let Some((var, value)) = inv
        .assigned
        .iter()
        .find(|(k, _)| CODE_VARS.contains(&k.as_str()) || k.starts_with("GIT_CONFIG"))
    {
        return Some((
            format!("{var} names a program for `{name}` to run"),
            value.iter().cloned().collect(),
        ));
    }
    match name {
        _ if is_shell(name) => shell(inv, &args),
        "source" | "." => Some((format!("`{name}` runs a script file"), args)),
        "eval" => Some(("eval runs text as code".into(), args)),
        "trap" => Some(("trap runs code when a signal comes".into(), args)),
        "exec" | "command" | "builtin" if !args.is_empty() => None,
        _ if name.starts_with("python") && python_module(&args) => None,
        _ if INTERPRETERS.contains(&name) || name.starts_with("python") => {
            let only_asks = args
                .iter()
                .all(|a| matches!(a.as_str(), "--version" | "-V" | "--help" | "-h" | "version"));
            (!only_asks).then(|| (format!("`{name}` runs a program"), args))
        }
        "awk" | "gawk" | "mawk" | "nawk" => awk(&args),
        "vim" | "vi" | "nvim" | "emacs" | "nano"
            if args.iter().any(|a| {
                a.starts_with('+')
                    || matches!(
                        a.as_str(),
                        "-c" | "--cmd" | "-S" | "--eval" | "-l" | "--load" | "-x"
                    )
            }) =>
        {
            Some((format!("`{name}` is given commands to run"), args))
        }
        "alias" if args.iter().any(|a| a.contains('=')) => {
            Some(("alias defines a command".into(), args))
        }
        "sed" | "gsed" => sed(&args),
        "git" => git(inv).or_else(|| {
            let dir = crate::expand::base_dir(&inv.cwd, cx.scene)?;
            let sub = super::system::git_subcommand(&args);
            super::repo::runs_in(std::path::Path::new(&dir), sub).map(|why| (why, args.clone()))
        }),
        "xargs" | "crontab" | "at" | "batch" | "ssh" | "watch" => later(inv, cx, args),
        _ => tool_options(name, args),
    }
}

/// Commands run from input, later, elsewhere or over and over: `xargs`,
/// `crontab`, `at`, ssh's remote command, `watch`.
fn later(inv: &Invocation, cx: &Cx, args: Vec<String>) -> Option<(String, Vec<String>)> {
    let name = inv.name();
    let mut texts: Vec<String> = inv.stdin.iter().cloned().chain(echoed(inv, cx)).collect();
    match name {
        "xargs" => Some(("xargs runs commands from its input".into(), texts)),
        "crontab" if !args.iter().any(|a| a == "-l" || a == "-r") => {
            texts.extend(args);
            Some(("crontab schedules commands to run later".into(), texts))
        }
        "at" | "batch" => {
            texts.extend(args);
            Some((format!("`{name}` schedules commands to run later"), texts))
        }
        "ssh" => remote_command(&args),
        // With known words, the walk reads what it runs.
        "watch" if inv.args().iter().any(|a| a.dynamic) => Some((
            "watch runs a command only known when it runs".into(),
            vec![args.join(" ")],
        )),
        _ => None,
    }
}

/// Options of known tools that run a command they are given.
fn tool_options(name: &str, args: Vec<String>) -> Option<(String, Vec<String>)> {
    match name {
        "find"
            if args
                .iter()
                .any(|a| matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")) =>
        {
            Some(("find runs a command on each file it finds".into(), args))
        }
        "tar" | "bsdtar" => options_that_run(
            &args,
            &[
                "--checkpoint-action",
                "--to-command",
                "--use-compress-program",
                "-I",
                "--info-script",
                "-F",
                "--new-volume-script",
                "--rsh-command",
                "--rmt-command",
            ],
            "tar",
        ),
        "rsync" => {
            options_that_run(&args, &["-e", "--rsh", "--rsync-path"], "rsync").or_else(|| {
                cluster_with(&args, 'e').then(|| ("rsync runs a remote shell".into(), args.clone()))
            })
        }
        "zip" => options_that_run(&args, &["-TT", "--unzip-command"], "zip"),
        "sort" => options_that_run(&args, &["--compress-program"], "sort"),
        "rg" => options_that_run(&args, &["--pre"], "rg"),
        "man" => options_that_run(&args, &["-P", "--pager", "-H", "--html"], "man"),
        "docker" | "podman"
            if args.iter().find(|a| !a.starts_with('-')).is_some_and(|s| {
                matches!(s.as_str(), "run" | "exec" | "compose" | "create" | "start")
            }) =>
        {
            Some((
                format!("`{name}` runs code in a container that can reach the host"),
                args,
            ))
        }
        _ => None,
    }
}

/// A shell: what it is given to run.
fn shell(inv: &Invocation, args: &[String]) -> Option<(String, Vec<String>)> {
    let name = inv.name();
    let with_c = args
        .iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains('c'));
    if let Some(i) = with_c {
        let script = inv.args().get(i + 1);
        return match script {
            Some(s) if !s.dynamic => None,
            _ => Some((
                format!("`{name} -c` runs text only known when it runs"),
                vec![],
            )),
        };
    }
    let file = args.iter().find(|a| !a.starts_with(['-', '+']));
    match file {
        Some(f) if f == "<(…)" => Some((format!("`{name}` runs what a command prints"), vec![])),
        Some(f) => Some((format!("`{name}` runs the script file {f}"), vec![])),
        None if inv.stdin.is_some() => Some((
            format!("`{name}` runs a script given to its input"),
            inv.stdin.iter().cloned().collect(),
        )),
        None if inv
            .redirects
            .iter()
            .any(|r| !r.writes && !r.target.text.starts_with('&')) =>
        {
            Some((
                format!("`{name}` runs the script file given to its input"),
                vec![],
            ))
        }
        None if !inv.upstream.is_empty() => {
            Some((format!("`{name}` runs a script from its input"), vec![]))
        }
        None => None,
    }
}

/// True for `python -m MODULE` with a module of the standard tools
/// (`venv`, `pip`, `pytest`, …), not a program given to it.
fn python_module(args: &[String]) -> bool {
    const MODULES: &[&str] = &[
        "venv",
        "pip",
        "pytest",
        "unittest",
        "http.server",
        "json.tool",
        "ensurepip",
        "build",
        "timeit",
        "pydoc",
        "site",
        "compileall",
        "zipfile",
        "tarfile",
        "mypy",
        "black",
        "ruff",
    ];
    matches!(args, [m, module, ..] if m == "-m" && MODULES.contains(&module.as_str()))
}

/// What an `echo` or `printf` before it in the pipeline prints.
fn echoed(inv: &Invocation, cx: &Cx) -> Option<String> {
    let up = cx.reading.invocations.get(*inv.upstream.last()?)?;
    if !matches!(up.name(), "echo" | "printf") {
        return None;
    }
    Some(
        up.args()
            .iter()
            .map(|a| a.text.replace("\\n", "\n"))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn awk(args: &[String]) -> Option<(String, Vec<String>)> {
    if args.iter().any(|a| a == "-f" || a.starts_with("--file")) {
        return Some(("awk runs a program file".into(), args.to_vec()));
    }
    let program = program_arg(args, &["-F", "-v", "--field-separator", "--assign"])?;
    let runs = program.contains("system")
        || program.contains('|')
        || program.contains("getline")
        || program.contains("@load");
    runs.then(|| ("awk's program runs commands".into(), vec![program.clone()]))
}

/// The first argument that is not an option or an option's value.
fn program_arg<'a>(args: &'a [String], valued: &[&str]) -> Option<&'a String> {
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if valued.contains(&a.as_str()) {
            skip = true;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            continue;
        }
        return Some(a);
    }
    None
}

fn sed(args: &[String]) -> Option<(String, Vec<String>)> {
    if args.iter().any(|a| a == "-f" || a.starts_with("--file")) {
        return Some(("sed runs a script file".into(), args.to_vec()));
    }
    let texts: Vec<String> = sed_scripts(args)
        .iter()
        .flat_map(|s| sed_commands(s))
        .collect();
    (!texts.is_empty()).then(|| ("sed's script runs commands (`e`)".into(), texts))
}

/// A sed invocation's scripts: each `-e`, else its first operand.
fn sed_scripts(args: &[String]) -> Vec<&String> {
    let mut scripts: Vec<&String> = args
        .windows(2)
        .filter(|w| w[0] == "-e" || w[0] == "--expression")
        .map(|w| &w[1])
        .collect();
    if scripts.is_empty() {
        scripts.extend(program_arg(args, &["-l", "-s"]));
    }
    scripts
}

/// The files a sed script writes: `w FILE` and `W FILE` commands, and the
/// `w FILE` flag of an `s` command.
pub(super) fn sed_written(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for script in sed_scripts(args) {
        for cmd in script.split('\n') {
            let body = cmd
                .trim_start()
                .trim_start_matches(|c: char| c.is_ascii_digit() || ",$!~ ".contains(c));
            let body = skip_address(body);
            if let Some(file) = body.strip_prefix(['w', 'W']) {
                out.push(file.trim().to_string());
            } else if let Some(rest) = body.strip_prefix('s')
                && let Some(delim) = rest.chars().next()
            {
                let parts: Vec<&str> = rest[delim.len_utf8()..].splitn(3, delim).collect();
                if let Some(flags) = parts.get(2)
                    && let Some(at) = flags.find('w')
                {
                    out.push(flags[at + 1..].trim().to_string());
                }
            }
        }
    }
    out.retain(|f| !f.is_empty() && !matches!(f.as_str(), "/dev/stdout" | "/dev/stderr"));
    out
}

/// The shell commands a sed script runs: an `e COMMAND` command, and the
/// replacement of an `s///e`.
fn sed_commands(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    for cmd in script.split([';', '\n']) {
        let body = cmd
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit() || ",$!~ ".contains(c));
        let body = skip_address(body);
        if let Some(rest) = body.strip_prefix('e') {
            out.push(rest.trim().to_string());
        } else if let Some(rest) = body.strip_prefix('s')
            && let Some(delim) = rest.chars().next()
        {
            let parts: Vec<&str> = rest[delim.len_utf8()..].split(delim).collect();
            if parts.len() >= 3 && parts[2].contains('e') {
                out.push(parts[1].to_string());
            }
        }
    }
    out
}

/// A sed command without a `/regex/` address before it.
fn skip_address(body: &str) -> &str {
    let mut s = body;
    while let Some(rest) = s.strip_prefix('/') {
        match rest.find('/') {
            Some(end) => {
                s = rest[end + 1..]
                    .trim_start_matches(|c: char| c.is_ascii_digit() || ",$!~ ".contains(c))
            }
            None => return s,
        }
    }
    s
}

/// True when git is pointed at another repository than the one it runs in
/// (`-C`, `--git-dir`, `--work-tree`, `GIT_DIR`…): one partner has not
/// read, whose config can name programs.
/// Config keys whose value git (or a tool it calls) runs.
const GIT_CODE_KEYS: &[&str] = &[
    "pager",
    "editor",
    "sshcommand",
    "alias.",
    "textconv",
    "filter.",
    "helper",
    "hookspath",
    "fsmonitor",
    "program",
    "command",
    "cmd",
    "tool",
    "askpass",
    "templatedir",
    "external",
    "gitproxy",
    "include",
];

fn git_elsewhere(inv: &Invocation, args: &[String]) -> bool {
    args.iter()
        .take_while(|a| a.starts_with('-') || a.contains('='))
        .chain(args.windows(2).filter(|w| w[0] == "-C").map(|w| &w[0]))
        .any(|a| {
            a == "-C"
                || a.starts_with("--git-dir")
                || a.starts_with("--work-tree")
                || a.starts_with("--namespace")
        })
        || inv
            .assigned
            .iter()
            .any(|(k, _)| matches!(k.as_str(), "GIT_DIR" | "GIT_WORK_TREE" | "GIT_COMMON_DIR"))
}

fn git(inv: &Invocation) -> Option<(String, Vec<String>)> {
    let args: Vec<String> = inv.args().iter().map(|a| a.text.clone()).collect();
    let args = &args[..];
    let texts = || args.to_vec();
    if git_elsewhere(inv, args) {
        return Some((
            "git reads a repository partner has not read (its config can name programs git runs)"
                .into(),
            texts(),
        ));
    }
    let global_code = args
        .iter()
        .take_while(|a| a.starts_with('-') || a.contains('='))
        .any(|a| a == "-c" || a.starts_with("--config-env") || a.starts_with("--exec-path="))
        || args.windows(2).any(|w| w[0] == "-c");
    if global_code {
        return Some((
            "git -c sets configuration that can run programs".into(),
            texts(),
        ));
    }
    let runs = args.iter().any(|a| {
        matches!(
            a.as_str(),
            "--ext-diff"
                | "--textconv"
                | "--exec"
                | "-x"
                | "--upload-pack"
                | "--receive-pack"
                | "-u"
        ) || a.starts_with("--upload-pack=")
            || a.starts_with("--exec=")
    });
    let sub = super::system::git_subcommand(args);
    let pager = sub == Some("grep")
        && args
            .iter()
            .any(|a| a.starts_with("-O") || a.starts_with("--open-files-in-pager"));
    if pager {
        return Some(("git grep -O runs the pager it is given".into(), texts()));
    }
    let running_sub = matches!(
        sub,
        Some("filter-branch" | "difftool" | "mergetool" | "hook")
    ) || (sub == Some("submodule") && args.iter().any(|a| a == "foreach"))
        || (sub == Some("bisect") && args.iter().any(|a| a == "run"));
    let sets_config = sub == Some("config")
        && !args
            .iter()
            .any(|a| a.starts_with("--get") || a == "--list" || a == "-l")
        && args.iter().filter(|a| !a.starts_with('-')).count() >= 3
        && args.iter().any(|a| {
            let key = a.to_ascii_lowercase();
            GIT_CODE_KEYS.iter().any(|k| key.contains(k))
        });
    if runs || running_sub {
        return Some(("git runs a program it is given".into(), texts()));
    }
    if sets_config {
        return Some((
            "git config can name programs git runs later".into(),
            texts(),
        ));
    }
    match sub {
        Some(s) if !super::system::GIT_KNOWN.contains(&s) => Some((
            format!("`git {s}` is not a git command partner knows (an alias may run anything)"),
            texts(),
        )),
        _ => None,
    }
}

/// The first of `options` present (`--opt`, `--opt=VALUE`, `-I`), with
/// every argument as the text searched.
fn options_that_run(
    args: &[String],
    options: &[&str],
    name: &str,
) -> Option<(String, Vec<String>)> {
    let found = args.iter().find(|a| {
        options
            .iter()
            .any(|o| a.as_str() == *o || a.starts_with(&format!("{o}=")))
    })?;
    let option = found.split('=').next().unwrap_or(found);
    Some((format!("{name} {option} runs a command"), args.to_vec()))
}

/// True when a short-option cluster holds `letter` (`-avze`).
fn cluster_with(args: &[String], letter: char) -> bool {
    args.iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(letter))
}

/// ssh's command for the other machine, when one is given.
fn remote_command(args: &[String]) -> Option<(String, Vec<String>)> {
    const VALUED: &[&str] = &[
        "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p",
        "-Q", "-R", "-S", "-W", "-w",
    ];
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        i += if VALUED.contains(&args[i].as_str()) {
            2
        } else {
            1
        };
    }
    let host = args.get(i)?;
    let rest = args.get(i + 1..).unwrap_or(&[]);
    (!rest.is_empty()).then(|| {
        (
            format!("ssh runs a command on {host}"),
            vec![rest.join(" ")],
        )
    })
}

/// The findings about code `inv` runs that partner cannot read.
pub(super) fn findings(inv: &Invocation, cx: &Cx) -> Vec<Finding> {
    let Some((why, texts)) = opaque(inv, cx) else {
        return Vec::new();
    };
    let mut out = vec![finding(Risk::High, format!("{OPAQUE}: {why}"))];
    out.extend(blocked_in(&texts, cx));
    out
}
