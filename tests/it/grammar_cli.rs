//! `partner grammar` as a person and a script use it: check a file (errors
//! with file, line and column), match and complete requests, and answer a
//! batch of JSON records one line each, a bad line included.

use crate::support;

use support::partner_in as partner;

const PLAYER: &str = r#"
import { Ordinal };
<Start> = play $(track:wildcard) by $(artist:wildcard) -> { actionName: "play", track, artist }
        | play the $(n:<Ordinal>) track -> { actionName: "playNumber", n }
        | <Polite> pause -> { actionName: "pause" };
"#;

#[test]
fn check_match_and_complete() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("player.agr"), PLAYER).unwrap();
    std::fs::write(
        d.join("broken.agr"),
        "<Start> = play $(x) ->;\n<B> = <Missing>;\n",
    )
    .unwrap();
    let (code, out, _) = partner(d, &["grammar", "check", "player.agr"], "");
    assert_eq!(code, Some(0), "{out}");
    let (code, out, _) = partner(d, &["grammar", "check", "broken.agr"], "");
    assert_eq!(code, Some(1));
    assert!(out.starts_with("broken.agr(1,"), "{out}");
    assert!(out.contains("expected"), "{out}");

    let (code, out, _) = partner(
        d,
        &[
            "grammar",
            "match",
            "--grammar",
            "player.agr",
            "--json",
            "play Yesterday by the Beatles",
        ],
        "",
    );
    assert_eq!(code, Some(0));
    let results: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        results[0]["match"],
        serde_json::json!({"actionName": "play", "track": "Yesterday", "artist": "the Beatles"})
    );
    assert_eq!(results[0]["wildcardCharCount"], 20);
    let (_, out, _) = partner(
        d,
        &["grammar", "match", "--grammar", "player.agr", "-"],
        "play the third track\n",
    );
    assert_eq!(out.trim(), r#"{"actionName":"playNumber","n":3}"#);
    let (_, out, _) = partner(
        d,
        &[
            "grammar",
            "match",
            "--grammar",
            "player.agr",
            "please pause",
        ],
        "",
    );
    assert_eq!(out.trim(), r#"{"actionName":"pause"}"#);
    let (code, out, _) = partner(
        d,
        &["grammar", "match", "--grammar", "player.agr", "dance"],
        "",
    );
    assert_eq!((code, out.trim()), (Some(1), "no match"));

    let (_, out, _) = partner(
        d,
        &[
            "grammar",
            "complete",
            "--grammar",
            "player.agr",
            "--json",
            "play Yesterday b",
        ],
        "",
    );
    let c: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(c["groups"][0]["completions"], serde_json::json!(["by"]));
    assert_eq!(c["afterWildcard"], "all");
    let (_, out, _) = partner(
        d,
        &["grammar", "complete", "--grammar", "player.agr", "pla"],
        "",
    );
    assert_eq!(out.trim(), "play");
    let (code, _, err) = partner(
        d,
        &[
            "grammar",
            "complete",
            "--grammar",
            "player.agr",
            "--direction",
            "up",
            "x",
        ],
        "",
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("forward or backward"));
}

#[test]
fn batch_answers_every_line_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("g")).unwrap();
    std::fs::write(d.join("g/base.agr"), "<Verb> = play -> \"play\";\n").unwrap();
    std::fs::write(
        d.join("g/main.agr"),
        "import { Verb } from \"./base.agr\";\n<Start> = $(v:<Verb>) music -> v;\n",
    )
    .unwrap();
    let lines = [
        r#"{"kind":"match","grammar":"<Start> = hi -> 1;","input":"hi"}"#,
        "this is not json",
        r#"{"kind":"match","grammar_path":"g/main.agr","input":"play music"}"#,
        r#"{"kind":"match","grammar_path":"../etc/passwd","input":"x"}"#,
        r#"{"kind":"loadError","grammar":"<Start> = <Nope>;"}"#,
        r#"{"kind":"completion","grammar":"<Start> = play music -> 1;","input":"play ","direction":"forward"}"#,
        r#"{"kind":"loadWarning","grammar":"<Start> = a;\n<Unused> = b;"}"#,
    ];
    let (code, out, _) = partner(
        d,
        &["grammar", "batch", "--root", "."],
        &(lines.join("\n") + "\n"),
    );
    assert_eq!(code, Some(0));
    let answers: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), lines.len(), "{out}");
    assert_eq!(answers[0]["result"][0]["match"], 1);
    assert!(
        answers[1]["error"]
            .as_str()
            .unwrap()
            .contains("not a JSON record")
    );
    assert_eq!(answers[2]["result"][0]["match"], "play");
    assert!(
        answers[3]["error"].is_string(),
        "a path outside the root is refused"
    );
    assert!(
        answers[4]["error"]
            .as_str()
            .unwrap()
            .contains("Missing rule definition for '<Nope>'")
    );
    assert_eq!(
        answers[5]["result"]["groups"][0]["completions"],
        serde_json::json!(["music"])
    );
    assert_eq!(answers[5]["result"]["matchedPrefixLength"], 4);
    assert_eq!(answers[6]["warnings"].as_array().unwrap().len(), 1);
}

/// A typed start rule beside the TypeScript schema it imports its type
/// from: `check` holds every value to the type, through the rules it
/// passes through; without the schema file nothing can be checked.
#[test]
fn typed_rules_are_held_to_their_typescript_schema() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("playerSchema.ts"),
        "// The player's actions.\nexport type PlayerAction = PlayAction | PauseAction;\nexport interface PlayAction {\n  actionName: \"play\";\n  parameters: { trackName: string; mode?: \"loud\" | \"quiet\" };\n}\nexport interface PauseAction { actionName: \"pause\" }\n",
    )
    .unwrap();
    let good = "import { PlayerAction } from \"./playerSchema.ts\";\n<Start> : PlayerAction = play $(t:wildcard) $(m:<Mode>)? -> { actionName: \"play\", parameters: { trackName: t, mode: m } } | <Pause>;\n<Mode> = loud | quiet;\n<Pause> = pause -> { actionName: \"pause\" };\n";
    std::fs::write(d.join("good.agr"), good).unwrap();
    let (code, out, _) = partner(d, &["grammar", "check", "good.agr"], "");
    assert_eq!(code, Some(0), "{out}");
    let bad = good
        .replace("<Mode> = loud | quiet;", "<Mode> = loud | noisy;")
        .replace("actionName: \"pause\"", "actionName: \"stop\"");
    std::fs::write(d.join("bad.agr"), &bad).unwrap();
    let (code, out, _) = partner(d, &["grammar", "check", "bad.agr"], "");
    assert_eq!(code, Some(1), "{out}");
    let errors: Vec<&str> = out.lines().filter(|l| l.contains(": error: ")).collect();
    assert_eq!(errors.len(), 2, "{out}");
    assert!(
        errors
            .iter()
            .all(|e| e.contains("does not match any union type member")),
        "{out}"
    );
    assert!(
        errors[1].starts_with("bad.agr(4,"),
        "the error is where the value is: {out}"
    );
    // A type the schema does not declare, or declares without export.
    std::fs::write(
        d.join("missing.agr"),
        "import { Stop } from \"./playerSchema.ts\";\n<Start> : Stop = stop -> { actionName: \"stop\" };\n",
    )
    .unwrap();
    let (code, out, _) = partner(d, &["grammar", "check", "missing.agr"], "");
    assert_eq!(code, Some(1));
    assert!(
        out.contains("Cannot resolve type 'Stop' from './playerSchema.ts'"),
        "{out}"
    );
    // Without the schema file there is nothing to hold the values to.
    std::fs::remove_file(d.join("playerSchema.ts")).unwrap();
    let (code, out, _) = partner(d, &["grammar", "check", "bad.agr"], "");
    assert_eq!(code, Some(0), "{out}");
    // A batch record may carry the files its grammar imports.
    let record = serde_json::json!({
        "kind": "loadError",
        "grammar": "import { P } from \"schema.ts\";\n<Start> : P = go -> { actionName: \"go\", level: \"high\" };",
        "files": { "schema.ts": "export interface P { actionName: \"go\"; level: number }" },
    });
    let (_, out, _) = partner(d, &["grammar", "batch"], &format!("{record}\n"));
    let answer: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(
        answer["error"]
            .as_str()
            .unwrap_or("")
            .contains("Field 'level' expected number, got string"),
        "{out}"
    );
}

#[test]
fn hostile_grammars_and_requests_end() {
    // Left recursion is refused; a wildcard-heavy grammar on a long
    // request ends within its step bound.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = r#"{"kind":"loadError","grammar":"<Start> = <A> x;\n<A> = <A> y | z;"}"#;
    let (_, out, _) = partner(d, &["grammar", "batch"], &format!("{line}\n"));
    assert!(out.contains("epsilon-reachable cycle"), "{out}");
    let grammar = "<Start> = ($(a) x)* $(b) -> 1;";
    let input = "x ".repeat(400);
    let record = serde_json::json!({"kind": "match", "grammar": grammar, "input": input});
    let started = std::time::Instant::now();
    let (code, out, _) = partner(d, &["grammar", "batch"], &format!("{record}\n"));
    assert_eq!(code, Some(0));
    assert!(
        out.starts_with("{\"result\""),
        "{}",
        &out[..out.len().min(200)]
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn learned_phrasings_persist_and_can_be_removed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, out, err) = partner(
        d,
        &[
            "grammar",
            "learned",
            "--db",
            "l.db",
            "add",
            "jot down buy milk",
            "/recall insert \"buy milk\"",
        ],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("learned #1"), "{out}");
    let (code, _, err) = partner(
        d,
        &[
            "grammar",
            "learned",
            "--db",
            "l.db",
            "add",
            "x",
            "not an action",
        ],
        "",
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("not one dialect action"), "{err}");
    // Another process reads them from the database.
    let (_, out, _) = partner(d, &["grammar", "learned", "--db", "l.db", "list"], "");
    assert_eq!(
        out.trim(),
        "1  jot down buy milk  →  /recall insert \"buy milk\""
    );
    let (code, _, _) = partner(
        d,
        &["grammar", "learned", "--db", "l.db", "remove", "1"],
        "",
    );
    assert_eq!(code, Some(0));
    let (_, out, _) = partner(d, &["grammar", "learned", "--db", "l.db", "list"], "");
    assert!(out.trim().is_empty(), "{out}");
    let (code, _, err) = partner(
        d,
        &["grammar", "learned", "--db", "l.db", "remove", "1"],
        "",
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("no learned phrasing #1"));
}

/// The `partner grammar` examples of `docs/grammar.md`, run as written (in a copy of
/// `grammars/`), and every shipped grammar checked.
#[test]
fn the_readme_grammar_examples_run_and_every_shipped_grammar_checks() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("docs/grammar.md")).unwrap();
    let section = &readme[readme.find("# Action grammars").unwrap()..];
    let block = &section[section.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("grammars")).unwrap();
    for entry in std::fs::read_dir(root.join("grammars")).unwrap().flatten() {
        std::fs::copy(
            entry.path(),
            dir.path().join("grammars").join(entry.file_name()),
        )
        .unwrap();
    }
    let bin = env!("CARGO_BIN_EXE_partner");
    let mut ran = 0;
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        // The command, without its comment, with the binary built here.
        let command = line.split("   #").next().unwrap().trim();
        let command = command.replace("partner grammar", &format!("{bin} grammar"));
        let out = std::process::Command::new("sh")
            .current_dir(dir.path())
            .arg("-c")
            .arg(&command)
            .output()
            .unwrap();
        // Each says something, on standard output or into the file it names.
        let said = !out.stdout.is_empty() || command.contains(" > ");
        assert!(
            out.status.success() && said,
            "{line}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 7, "{ran} commands");
    for entry in std::fs::read_dir(root.join("grammars")).unwrap().flatten() {
        let out = std::process::Command::new(bin)
            .args(["grammar", "check"])
            .arg(entry.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            entry.path().display(),
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
