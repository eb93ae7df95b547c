//! `partner gate`, the contract other tools depend on: each command's JSON
//! fields, and exit statuses, from the real binary.

use crate::support;

use std::path::Path;

use support::partner_in;

use serde_json::Value;

fn gate(args: &[&str], stdin: &str) -> (i32, Value) {
    let args: Vec<&str> = std::iter::once("gate")
        .chain(args.iter().copied())
        .collect();
    let (code, out, err) = partner_in(Path::new("."), &args, stdin);
    let json =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?} {err}"));
    (code.unwrap(), json)
}

#[test]
fn check_extract_intent_and_propose_keep_their_shapes() {
    let (code, v) = gate(&["check", "--json", "rm -rf -- /"], "");
    assert_eq!(code, 1, "blocked exits 1");
    assert_eq!(v["risk"], "blocked");
    assert!(v["reasons"].as_array().is_some_and(|r| !r.is_empty()));
    let (code, v) = gate(&["check", "--json", "-"], "ls -la");
    assert_eq!((code, v["risk"].as_str()), (0, Some("low")));

    let (code, v) = gate(
        &["extract", "--json"],
        "To list files, use ls -la\nls -la\n",
    );
    assert_eq!(code, 0);
    assert_eq!(v["command"], "ls -la");
    assert!(v["explanation"].is_string() && v["reason"].is_null(), "{v}");
    let (code, v) = gate(&["extract", "--json", "-"], "What should I do?");
    assert_eq!(code, 1);
    assert!(v["command"].is_null() && v["reason"].is_string(), "{v}");

    let (_, v) = gate(&["intent", "--json", "get rid of firefox"], "");
    assert_eq!(
        (v["intent"].as_str(), v["target"].as_str()),
        (Some("remove"), Some("firefox"))
    );
    let (_, v) = gate(&["intent", "--json", "hello there"], "");
    assert!(v["intent"].is_null(), "{v}");

    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index.sqlite");
    let (code, v) = gate(
        &[
            "propose",
            "--json",
            "--index",
            index.to_str().unwrap(),
            "run bash",
        ],
        "",
    );
    assert_eq!(code, 0);
    assert_eq!(
        (
            v["intent"].as_str(),
            v["command"].as_str(),
            v["risk"].as_str()
        ),
        (Some("run"), Some("bash"), Some("medium")),
        "{v}"
    );
    assert!(
        v["context"][0]
            .as_str()
            .unwrap()
            .starts_with("- bash: executable at "),
        "{v}"
    );
}
