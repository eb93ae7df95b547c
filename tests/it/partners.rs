//! Several partners, with real processes: each added with a token of their
//! own (`partner partners add`); a daemon's TCP listener admits only these
//! tokens and a revoked one no longer; a decision or an edit made through a
//! partner's connection is recorded under their name; a policy rule names
//! who may decide a verb and how many must approve it; two partners
//! deciding one request at once get one winner, and the other is told who.

use crate::support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use partner::policy::Decision;
use partner::protocol::Op;
use partner::protocol::client::Client;
use partner::protocol::views::Queue;
use serde_json::Value;
use support::daemon::{Daemon, serve_with};
use support::partner_in;

/// A constellation of one agent that acts only when told, whose posts
/// alice and bob must both approve, and whose direct messages any one
/// partner may.
fn constellation(dir: &Path) {
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"team\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1h\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("policy.toml"),
        "default = \"allow\"\n[platforms.bluesky]\nagents = [\"*\"]\n\n[[rules]]\nverb = \"post\"\ndecide = \"ask\"\npartners = [\"alice\", \"bob\"]\napprovals = 2\n\n[[rules]]\nverb = \"dm\"\ndecide = \"ask\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("script.toml"),
        "[agents.ada]\nreplies = [\"ok\"]\n",
    )
    .unwrap();
}

/// Adds a partner with the command line; their token.
fn add(dir: &Path, name: &str) -> String {
    let (code, out, err) = partner_in(
        dir,
        &["partners", "add", name, "--db", "c.db", "--json"],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    let added: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(added["name"], name);
    added["token"].as_str().unwrap().to_string()
}

/// A daemon listening on TCP too, once it answers there.
fn team_daemon(dir: &Path, addr: SocketAddr, token: &str) -> Daemon {
    let daemon = serve_with(dir, &["--listen", &addr.to_string()], &[]);
    crate::daemon::wait_for("the TCP listener", Duration::from_secs(20), || {
        Client::connect_tcp(addr, "probe", token).is_ok()
    });
    daemon
}

fn decide(client: &mut Client, id: &str, decision: Decision) -> Result<String, String> {
    client
        .request(Op::Decide {
            request: id.into(),
            decision,
        })
        .map(|(message, _)| message)
        .map_err(|e| e.to_string())
}

fn queue(client: &mut Client) -> Queue {
    match client.request(Op::Queue).unwrap().1 {
        partner::protocol::Returned::Queue(queue) => queue,
        other => panic!("a queue answered with {other:?}"),
    }
}

/// The waiting requests.
fn waiting(client: &mut Client) -> Vec<partner::policy::PendingRequest> {
    queue(client).requests
}

/// ada asks for `line`; the request's id.
fn ask(local: &mut Client, line: &str) -> String {
    let before = waiting(local).len();
    let (said, _) = local
        .request(Op::Run {
            agent: "ada".into(),
            text: line.into(),
        })
        .unwrap();
    let now = waiting(local);
    assert_eq!(now.len(), before + 1, "{line} did not wait: {said}");
    now.last().unwrap().id.clone()
}

fn trace_lines(dir: &Path) -> String {
    let (code, out, err) = partner_in(dir, &["trace", "show", "--db", "c.db"], "");
    assert_eq!(code, Some(0), "{err}");
    out
}

#[test]
fn a_tcp_client_is_a_partner_by_token_and_a_revoked_token_opens_nothing() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let alice = add(dir.path(), "alice");
    let carol = add(dir.path(), "carol");
    let addr = crate::support::free_port();
    let _daemon = team_daemon(dir.path(), addr, &alice);
    // No token, an empty one, a made-up one: refused, each with a reason.
    for token in ["", "ptk_0000", "not a token at all"] {
        let refused = Client::connect_tcp(addr, "stranger", token).err().unwrap();
        assert!(
            refused.to_string().contains("token"),
            "{token:?}: {refused}"
        );
    }
    let mut as_carol = Client::connect_tcp(addr, "carol", &carol).unwrap();
    assert!(as_carol.request(Op::Status).is_ok());
    let mut watching = Client::connect_tcp(addr, "carol's console", &carol).unwrap();
    watching.subscribe().unwrap();
    assert!(matches!(
        watching.read().unwrap(),
        partner::protocol::ServerMsg::Snapshot { .. }
    ));
    // Revoked while connected: the open connection may do nothing more,
    // and the token opens no new one.
    let (code, out, err) = partner_in(
        dir.path(),
        &["partners", "revoke", "carol", "--db", "c.db"],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("revoked carol"), "{out}");
    let refused = as_carol.request(Op::Status).unwrap_err().to_string();
    assert!(refused.contains("partner:carol was revoked"), "{refused}");
    // Carol's open subscription hears nothing more: at the next event
    // (alice's message to ada) it is told and let go.
    std::thread::sleep(Duration::from_millis(1200));
    let mut as_alice = Client::connect_tcp(addr, "alice", &alice).unwrap();
    as_alice
        .request(Op::Message {
            agent: "ada".into(),
            text: "hello".into(),
        })
        .unwrap();
    let mut told = None;
    for _ in 0..50 {
        match watching.read() {
            Ok(partner::protocol::ServerMsg::Event(e)) => {
                panic!("a revoked partner was sent an event: {e:?}")
            }
            Ok(partner::protocol::ServerMsg::Error { message }) => {
                told = Some(message);
                break;
            }
            Ok(_) => {}
            Err(e) => {
                told = Some(e.to_string());
                break;
            }
        }
    }
    let told = told.expect("the subscription was never closed");
    assert!(told.contains("partner:carol was revoked"), "{told}");
    assert!(watching.read().is_err(), "the connection stays open");
    let again = Client::connect_tcp(addr, "carol", &carol).err().unwrap();
    assert!(again.to_string().contains("revoked"), "{again}");
    // The list says so.
    let (_, out, _) = partner_in(dir.path(), &["partners", "list", "--db", "c.db"], "");
    assert!(
        out.lines()
            .any(|l| l.starts_with("alice") && !l.contains("revoked")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("carol") && l.contains("revoked")),
        "{out}"
    );
}

#[test]
fn a_rule_names_its_deciders_and_needs_two_of_them_and_the_trace_says_who() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let (alice, bob, carol) = (
        add(dir.path(), "alice"),
        add(dir.path(), "bob"),
        add(dir.path(), "carol"),
    );
    let addr = crate::support::free_port();
    let daemon = team_daemon(dir.path(), addr, &alice);
    let mut local = Client::connect(&daemon.socket, "test").unwrap();
    let mut as_alice = Client::connect_tcp(addr, "alice", &alice).unwrap();
    let mut as_bob = Client::connect_tcp(addr, "bob", &bob).unwrap();
    let mut as_carol = Client::connect_tcp(addr, "carol", &carol).unwrap();
    let id = ask(&mut local, "/post bluesky \"we ship friday\"");
    let asked = waiting(&mut local);
    let request = asked.last().unwrap();
    assert_eq!(request.deciders, ["alice", "bob"]);
    assert_eq!(request.approvals_needed, 2);
    // Carol is not one of its deciders, nor is the console without a
    // partner's token.
    let refused = decide(&mut as_carol, &id, Decision::ApproveOnce).unwrap_err();
    assert!(
        refused.contains("partner:carol may not decide"),
        "{refused}"
    );
    assert!(
        refused.contains("alice") && refused.contains("bob"),
        "{refused}"
    );
    let refused = decide(&mut local, &id, Decision::ApproveOnce).unwrap_err();
    assert!(
        refused.contains("partner may not decide") && refused.contains("only partner alice"),
        "{refused}"
    );
    // Alice's approval is counted and the request still waits.
    let said = decide(&mut as_alice, &id, Decision::ApproveOnce).unwrap();
    assert!(
        said.contains("partner:alice approved") && said.contains("1 of 2"),
        "{said}"
    );
    let still = waiting(&mut local);
    let request = still.iter().find(|w| w.id == id).expect("still waits");
    assert_eq!(request.approved_by, ["alice"]);
    assert!(
        !trace_lines(dir.path()).contains("bluesky"),
        "nothing ran yet"
    );
    // Alice twice is still one partner; "always" cannot stand for two.
    let again = decide(&mut as_alice, &id, Decision::ApproveOnce).unwrap_err();
    assert!(
        again.contains("approved") && again.contains("already"),
        "{again}"
    );
    let always = decide(&mut as_bob, &id, Decision::ApproveAlways).unwrap_err();
    assert!(always.contains("once, not always"), "{always}");
    // Bob's completes it: the post runs, recorded with both names.
    decide(&mut as_bob, &id, Decision::ApproveOnce).unwrap();
    assert!(waiting(&mut local).iter().all(|w| w.id != id));
    let trace = trace_lines(dir.path());
    let line = trace
        .lines()
        .find(|l| l.contains("bluesky"))
        .unwrap_or_else(|| panic!("{trace}"));
    assert!(
        line.contains("executed") && line.contains("by partner:bob"),
        "{line}"
    );
    let (_, json, _) = partner_in(dir.path(), &["trace", "show", "--db", "c.db", "--json"], "");
    let records: Vec<Value> = serde_json::from_str(json.trim()).unwrap();
    let post = records.iter().find(|r| r["verb"] == "post").unwrap();
    let steps = post["decision"]["steps"].to_string();
    assert!(
        steps.contains("approved by partner alice and partner bob"),
        "{steps}"
    );
    // Deciding it after is told who did.
    let late = decide(&mut as_alice, &id, Decision::Deny(None)).unwrap_err();
    assert!(late.contains("approved by partner:bob"), "{late}");
}

#[test]
fn two_partners_deciding_at_once_get_one_winner_and_an_edit_is_signed() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let (alice, bob) = (add(dir.path(), "alice"), add(dir.path(), "bob"));
    let addr = crate::support::free_port();
    let daemon = team_daemon(dir.path(), addr, &alice);
    let mut local = Client::connect(&daemon.socket, "test").unwrap();
    for round in 0..5 {
        let id = ask(&mut local, &format!("/dm @sam \"round {round}\""));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let racers: Vec<_> = [("alice", alice.clone()), ("bob", bob.clone())]
            .into_iter()
            .map(|(name, token)| {
                let (id, barrier) = (id.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut client = Client::connect_tcp(addr, name, &token).unwrap();
                    barrier.wait();
                    (name, decide(&mut client, &id, Decision::ApproveOnce))
                })
            })
            .collect();
        let results: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        let winners: Vec<_> = results.iter().filter(|(_, r)| r.is_ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        let winner = winners[0].0;
        let (_, lost) = results.iter().find(|(_, r)| r.is_err()).unwrap();
        let lost = lost.as_ref().unwrap_err();
        assert!(
            lost.contains(&format!("approved by partner:{winner}")),
            "round {round}: {lost}"
        );
        let sent = trace_lines(dir.path());
        let line = sent
            .lines()
            .find(|l| l.contains(&format!("round {round}")))
            .unwrap_or_else(|| panic!("{sent}"));
        assert!(line.contains(&format!("by partner:{winner}")), "{line}");
    }
    // An edit through bob's connection is bob's, in the trace and in the
    // block's history.
    let mut as_bob = Client::connect_tcp(addr, "bob", &bob).unwrap();
    as_bob
        .request(Op::SetBlock {
            block: partner::store::trace::BlockSpec {
                agent: "ada".into(),
                label: "plans".into(),
                kind: partner::store::memory::BlockKind::Working,
                permission: partner::store::memory::BlockPermission::ReadWrite,
                char_limit: 1000,
                description: String::new(),
                value: "ship friday".into(),
                shared: false,
            },
        })
        .unwrap();
    let trace = trace_lines(dir.path());
    let line = trace
        .lines()
        .find(|l| l.contains("plans"))
        .unwrap_or_else(|| panic!("{trace}"));
    assert!(line.contains("edit by partner:bob"), "{line}");
    let (_, data) = as_bob
        .request(Op::History {
            agent: "ada".into(),
            label: "plans".into(),
        })
        .unwrap();
    assert!(
        serde_json::to_string(&data)
            .unwrap()
            .contains("partner:bob"),
        "{data:?}"
    );
}

#[test]
fn a_policy_says_who_decides_only_in_ways_that_can_be_met() {
    use partner::policy::{Authority, Policy};
    let rule = |extra: &str| format!("[[rules]]\nverb = \"post\"\ndecide = \"ask\"\n{extra}\n");
    for (extra, says) in [
        (
            "partners = [\"alice\", \"bob\"]\napprovals = 3",
            "only 2 partners",
        ),
        ("approvals = 0", "approvals must be 1 to"),
        ("approvals = 10", "approvals must be 1 to"),
        ("partners = [\"Alice\"]", "not a partner's name"),
        (
            "authority = [\"agent:anchor\"]\napprovals = 2",
            "not agents",
        ),
        ("authority = [\"partner:Bob\"]", "not a partner's name"),
    ] {
        let refused = Policy::from_toml(&rule(extra)).unwrap_err();
        assert!(refused.message.contains(says), "{extra}: {refused:?}");
    }
    // Two approvals without names: any two named partners, never the
    // unnamed one, and no one partner twice.
    let policy = Policy::from_toml(&rule("approvals = 2")).unwrap();
    let quorum = policy.rules[0].clone();
    let quorum = partner::policy::Quorum::of(&quorum);
    assert_eq!((quorum.partners.len(), quorum.approvals), (0, 2));
    let mut request = support::console::request(
        "r1",
        "ada",
        "/post bluesky \"x\"",
        Authority::Partner,
        "r",
        0,
    );
    request.approvals_needed = 2;
    assert!(request.partner_may_decide(&Authority::Partner).is_err());
    assert!(
        request
            .partner_may_decide(&Authority::Named("alice".into()))
            .is_ok()
    );
    assert_eq!(request.approvals_missing(), 2);
    request.approved_by = vec!["alice".into()];
    assert_eq!(request.approvals_missing(), 1);
    // "partner:NAME" is an authority of its own: only that partner decides.
    let named: Authority = "partner:alice".parse().unwrap();
    assert_eq!(named.to_string(), "partner:alice");
    assert!(named.is_partner());
    let mut waits_on_alice = support::console::request(
        "r2",
        "ada",
        "/post bluesky \"x\"",
        Authority::Partner,
        "r",
        0,
    );
    waits_on_alice.authorities = vec![named.clone()];
    waits_on_alice.authority_index = 0;
    assert!(waits_on_alice.decidable_by(&named));
    assert!(!waits_on_alice.decidable_by(&Authority::Named("bob".into())));
    assert!(!waits_on_alice.decidable_by(&Authority::Partner));
}

#[test]
fn the_queue_shows_who_may_decide_and_who_has_approved() {
    use partner::policy::Authority;
    use partner::tui::backend::{Previews, Reply};
    let mut post = support::console::request(
        "r1",
        "ada",
        "/post bluesky \"we ship\"",
        Authority::Partner,
        "posts need two of us",
        5,
    );
    post.deciders = vec!["alice".into(), "bob".into()];
    post.approvals_needed = 2;
    post.approved_by = vec!["alice".into()];
    let mut app = support::console::scene("dark");
    app.size = (180, 48);
    app.on_reply(Reply::Pending(vec![post], Previews::default()));
    let shown = support::driving::screen(&mut app, 180, 48);
    assert!(
        shown.contains("alice or bob · 1 of 2 approved: alice"),
        "{shown}"
    );
}

/// A console on another machine: `partner attach --connect` over TCP with
/// alice's token, in a real terminal; her approval is recorded as hers.
/// Without a token it is refused before it starts.
#[test]
fn a_console_attached_over_tcp_decides_as_its_partner() {
    use support::tmux::{Tmux, first_partner_request};
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let alice = add(dir.path(), "alice");
    std::fs::write(dir.path().join("alice.token"), format!("{alice}\n")).unwrap();
    let addr = crate::support::free_port();
    let daemon = team_daemon(dir.path(), addr, &alice);
    let (code, _, err) = partner_in(dir.path(), &["attach", "--connect", &addr.to_string()], "");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("admits partners only"), "{err}");
    let mut local = Client::connect(&daemon.socket, "test").unwrap();
    let id = ask(&mut local, "/dm @sam \"see you friday\"");
    let command = format!(
        "cd {} && env TERM=xterm-256color COLORTERM= {} attach --connect {addr} --token-file alice.token --no-bell; exec sh",
        dir.path().display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let console = Tmux::start("attach-tcp", &command);
    let screen = console.wait("the request", Duration::from_secs(30), |s| {
        first_partner_request(s).is_some()
    });
    assert!(screen.contains("team · as partner:alice"), "{screen}");
    assert_eq!(first_partner_request(&screen).as_deref(), Some(id.as_str()));
    console.keys(&["a"]);
    console.wait("the queue emptied", Duration::from_secs(10), |s| {
        s.contains("Nothing waits")
    });
    crate::daemon::wait_for("the decision in the trace", Duration::from_secs(10), || {
        trace_lines(dir.path()).contains("see you friday")
    });
    let trace = trace_lines(dir.path());
    let line = trace
        .lines()
        .find(|l| l.contains("see you friday"))
        .unwrap_or_else(|| panic!("{trace}"));
    assert!(line.contains("approve_once by partner:alice"), "{line}");
    console.keys(&["q"]);
}

/// `partners add --token-file` writes the token to a new file only its
/// owner may read, which a TCP client's token opens the daemon with; an
/// existing file is never overwritten (and nobody is added).
#[test]
fn a_token_written_to_its_file_opens_the_daemon() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let (code, out, err) = partner_in(
        dir.path(),
        &[
            "partners",
            "add",
            "dana",
            "--token-file",
            "dana.token",
            "--db",
            "c.db",
        ],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("their token is in dana.token"), "{out}");
    assert!(!out.contains("ptk_"), "the token is not printed: {out}");
    let file = dir.path().join("dana.token");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // Read as `partner attach --token-file` reads it.
    let token = partner::commands::partner_token(Some(&file))
        .unwrap()
        .unwrap();
    assert!(token.starts_with("ptk_"), "{token}");
    let addr = crate::support::free_port();
    let _daemon = team_daemon(dir.path(), addr, &token);
    let mut as_dana = Client::connect_tcp(addr, "dana", &token).unwrap();
    assert!(as_dana.request(Op::Status).is_ok());
    // Again into the same file: refused, and no second partner.
    let (code, _, err) = partner_in(
        dir.path(),
        &[
            "partners",
            "add",
            "erin",
            "--token-file",
            "dana.token",
            "--db",
            "c.db",
        ],
        "",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("dana.token exists"), "{err}");
    let (_, listed, _) = partner_in(dir.path(), &["partners", "list", "--db", "c.db"], "");
    assert!(!listed.contains("erin"), "{listed}");
}

/// A console with a token the daemon does not take is told so in the
/// daemon's words (not asked whether a daemon runs there); one whose
/// partner is revoked while it watches says it is refused, and that what
/// waits is not known — never `0 pending` while a request waits.
#[test]
fn a_refused_console_says_so_and_never_shows_a_stale_queue() {
    use support::tmux::{Tmux, first_partner_request};
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let alice = add(dir.path(), "alice");
    let carol = add(dir.path(), "carol");
    std::fs::write(dir.path().join("carol.token"), format!("{carol}\n")).unwrap();
    std::fs::write(dir.path().join("bad.token"), "ptk_0000\n").unwrap();
    let addr = crate::support::free_port();
    let daemon = team_daemon(dir.path(), addr, &alice);
    let connect = addr.to_string();
    let (code, _, err) = partner_in(
        dir.path(),
        &["attach", "--connect", &connect, "--token-file", "bad.token"],
        "",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the daemon refused this console"), "{err}");
    assert!(!err.contains("is partner serve running"), "{err}");
    let mut local = Client::connect(&daemon.socket, "test").unwrap();
    let id = ask(&mut local, "/dm @sam \"see you friday\"");
    let command = format!(
        "cd {} && env TERM=xterm-256color COLORTERM= {} attach --connect {addr} --token-file carol.token --no-bell; exec sh",
        dir.path().display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let console = Tmux::start("attach-revoked", &command);
    let screen = console.wait("the request", Duration::from_secs(30), |s| {
        first_partner_request(s).is_some()
    });
    assert_eq!(first_partner_request(&screen).as_deref(), Some(id.as_str()));
    let (code, _, err) = partner_in(
        dir.path(),
        &["partners", "revoke", "carol", "--db", "c.db"],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    let screen = console.wait("the refusal", Duration::from_secs(15), |s| {
        s.contains("refused by the daemon since")
    });
    assert!(screen.contains("? pending"), "{screen}");
    assert!(!screen.contains(" 0 pending"), "{screen}");
    console.keys(&["q"]);
}
