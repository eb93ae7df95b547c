//! `partner parse` as other tools use it: the real binary, real files,
//! standard input, the JSON contract and the exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn partner(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("partner starts");
    // The binary may exit before reading (a bad option); that is not a failure here.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().expect("partner finishes")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("partner-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn json_output_follows_the_contract() {
    let turn = "Let me check my notes.\n/recall project notes\n/post bluesky \"shipped!\" ?public -> /tell @anchor \"posted\"\nActually, never mind.\n";
    let out = partner(
        &["parse", "--json", "--blocks", "project_notes,meeting_notes"],
        turn.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["errors"], Value::Array(vec![]));
    let actions = json["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 2);
    let recall = &actions[0];
    for key in [
        "verb",
        "op",
        "target",
        "content",
        "marker",
        "marker_note",
        "refs",
        "cancelled",
        "span",
        "canonical",
        "chain",
    ] {
        assert!(recall.get(key).is_some(), "missing {key} in {recall}");
    }
    assert_eq!(recall["verb"], "recall");
    assert_eq!(recall["op"], "read");
    assert_eq!(recall["target"], "project_notes");
    assert_eq!(recall["content"], Value::Null);
    assert_eq!(recall["marker"], Value::Null);
    assert_eq!(recall["cancelled"], false);
    assert_eq!(recall["canonical"], "/recall read project_notes");
    let span: Vec<usize> = serde_json::from_value(recall["span"].clone()).unwrap();
    assert_eq!(&turn[span[0]..span[1]], "/recall project notes");

    let post = &actions[1];
    assert_eq!(post["verb"], "post");
    assert_eq!(post["op"], Value::Null);
    assert_eq!(post["target"], "bluesky");
    assert_eq!(post["content"], "shipped!");
    assert_eq!(post["marker"], "check");
    assert_eq!(post["marker_note"], "public");
    assert_eq!(
        post["cancelled"], true,
        "the cancellation phrase cancels the nearest action"
    );
    let chain = post["chain"].as_array().unwrap();
    assert_eq!(chain.len(), 1);
    assert_eq!(chain[0]["verb"], "tell");
    assert_eq!(chain[0]["target"], "anchor");
    assert_eq!(chain[0]["cancelled"], true);
}

#[test]
fn refs_and_markers_in_json() {
    let out = partner(
        &["parse", "--json"],
        b"/post bluesky @last.output !\n/tell @anchor \"ok\" ?ask\n/reply fine .",
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let actions = json["actions"].as_array().unwrap();
    assert_eq!(actions[0]["refs"][0]["kind"], "last.output");
    assert_eq!(actions[0]["refs"][0]["slot"], "content");
    assert_eq!(actions[0]["marker"], "serious");
    assert_eq!(actions[1]["marker"], "ask");
    assert_eq!(actions[2]["marker"], "routine");
}

#[test]
fn errors_exit_one_with_spans_and_words() {
    let turn = "Approving now.\n/aprove r1\n";
    let out = partner(&["parse", "--json"], turn.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["actions"], Value::Array(vec![]));
    let error = &json["errors"][0];
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("did you mean /approve?")
    );
    let span: Vec<usize> = serde_json::from_value(error["span"].clone()).unwrap();
    assert_eq!(&turn[span[0]..span[1]], "/aprove r1");

    let out = partner(&["parse"], turn.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error: line 2, column 1: /aprove is not an action"),
        "{err}"
    );
}

#[test]
fn text_output_is_canonical_lines() {
    let out = partner(
        &["parse"],
        b"- /search in archival deadlines > 2 weeks\n[[PULSE:10m]]\n/reply ok\nscratch that\n",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "/search in archival \"deadlines\" > 2 weeks\n/pulse 10m\n# cancelled: /reply \"ok\"\n"
    );
}

#[test]
fn zero_actions_is_success() {
    let out = partner(
        &["parse", "--json"],
        b"Just thinking out loud about /usr/bin and 1/2 of it.",
    );
    assert_eq!(out.status.code(), Some(0));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["actions"], Value::Array(vec![]));
    assert_eq!(json["segments"][0]["kind"], "prose");
}

#[test]
fn reads_a_file_argument() {
    let dir = temp_dir("file");
    let path = dir.join("turn.txt");
    std::fs::write(&path, "/remember scratch + \"buy milk\"\n").unwrap();
    let out = partner(
        &[
            "parse",
            "--working-blocks",
            "scratch",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "/context append scratch \"buy milk\"\n");
}

#[test]
fn missing_file_is_one_line_and_exit_two() {
    let out = partner(&["parse", "/nonexistent/turn.txt"], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("partner: cannot read /nonexistent/turn.txt:"),
        "{err}"
    );
    assert!(!err.contains("Os {"), "no debug dump: {err}");
}

#[test]
fn non_utf8_input_is_a_clear_error() {
    let out = partner(&["parse"], b"/reply caf\xe9");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).trim(),
        "partner: standard input is not UTF-8 text (invalid byte at offset 10)"
    );
}

#[test]
fn verb_files_extend_the_table() {
    let dir = temp_dir("verbs");
    let path = dir.join("verbs.toml");
    std::fs::write(
        &path,
        "[verbs.recall]\naliases = [\"jot down\"]\n\n[verbs.shout]\naliases = [\"yell\"]\nsummary = \"say it loudly\"\n",
    )
    .unwrap();
    let out = partner(
        &["parse", "--verbs", path.to_str().unwrap()],
        b"/jot down \"milk is out\"\n/yell \"fire drill at noon\" !\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "/recall \"milk is out\"\n/shout \"fire drill at noon\" !\n"
    );
}

#[test]
fn bad_verb_files_name_the_file_and_the_problem() {
    let dir = temp_dir("badverbs");
    let taken = dir.join("taken.toml");
    std::fs::write(&taken, "[verbs.post]\naliases = [\"find\"]\n").unwrap();
    let out = partner(
        &["parse", "--verbs", taken.to_str().unwrap()],
        b"/post x \"y\"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("taken.toml")
            && err.contains("alias 'find' of verb 'post' is already an alias of 'search'"),
        "{err}"
    );

    let broken = dir.join("broken.toml");
    std::fs::write(&broken, "[verbs.post]\naliases = [\"a\"\nstrictness = 3\n").unwrap();
    let out = partner(&["parse", "--verbs", broken.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("broken.toml: line 3, column 1:"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}
