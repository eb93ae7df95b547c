//! Search by meaning inside partner, against a real SQLite file: agents'
//! `/recall "…"` and `/search` find by meaning what their words miss, with
//! the tiny local model the suite builds or a loopback `/v1/embeddings`
//! server; a write never waits on the embedder, is found by keyword while
//! the embedder is down and by meaning once it is back; the command line
//! searches and reindexes with the constellation's embedder.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use partner::engine::embed::{EmbeddingsConfig, RemoteSettings};
use partner::engine::exec::{ActionStatus, ExecConfig};
use partner::policy::Policy;
use partner::store::memory::backend::Memory;
use serde_json::{Value, json};
use support::models::{tiny_model, tiny_vector};
use support::{Answer, Rig, partner_in, rig_with, streaming_server};

fn model_rig() -> (Rig, tempfile::TempDir) {
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let config = ExecConfig {
        embeddings: EmbeddingsConfig::Model2Vec {
            path: model.path().to_path_buf(),
        },
        ..ExecConfig::default()
    };
    (rig_with(Policy::permissive(), config), model)
}

/// Embeds everything that waits, as the runtime's background thread does.
fn catch_up(r: &Rig) {
    let recall = r.exec.recall().expect("an embedder is configured");
    while recall.catch_up(r.exec.store(), 64).unwrap() > 0 {}
}

#[test]
fn an_agents_recall_finds_by_meaning_what_its_words_miss() {
    let (r, _model) = model_rig();
    r.ok("ada", "/recall insert \"Dana: we ship on Friday\"");
    r.ok("ada", "/recall insert \"the cat sat on the mat\"");
    r.ok("bob", "/recall insert \"the release is on Friday\"");
    // Before the vectors are made, words only.
    let before = r.ok("ada", "/recall \"launch date\"");
    assert!(before.text.contains("nothing found"), "{}", before.text);
    catch_up(&r);
    let after = r.ok("ada", "/recall \"launch date\"");
    assert!(
        after.text.contains("Dana: we ship on Friday") && after.text.contains("(by meaning)"),
        "{}",
        after.text
    );
    assert!(!after.text.contains("cat"), "{}", after.text);
    assert!(
        !after.text.contains("the release is on Friday"),
        "another agent's memory stays out: {}",
        after.text
    );
    // `/search` is hybrid too, and its data says which side found what.
    let search = r.ok("ada", "/search \"ship\"");
    let hits = search.data["hits"].as_array().unwrap();
    assert_eq!(hits[0]["via"], "both", "{hits:#?}");
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    // The trace keeps the result; replay reuses it (the vectors are not
    // in the trace).
    let trace = r.trace();
    let last = trace.last().unwrap();
    assert!(last.result.contains("ship"), "{}", last.result);
}

#[test]
fn without_an_embedder_search_is_by_keyword_as_before() {
    let r = rig_with(Policy::permissive(), ExecConfig::default());
    r.ok("ada", "/recall insert \"Dana: we ship on Friday\"");
    let found = r.ok("ada", "/recall \"ship\"");
    assert!(found.text.contains("we [ship] on Friday"), "{}", found.text);
    assert!(!found.text.contains("by meaning"), "{}", found.text);
    let missed = r.ok("ada", "/recall \"launch\"");
    assert!(missed.text.contains("nothing found"), "{}", missed.text);
    assert!(r.exec.recall().is_none());
    // A question in words: no memory holds every word, so those holding
    // some of its telling words answer, the one with most of them first.
    r.ok("ada", "/recall insert \"launch date: not set yet\"");
    r.ok("ada", "/recall insert \"lunch with the team\"");
    let asked = r.ok("ada", "/recall \"what did Dana say about the launch date\"");
    let first = asked.text.find("not set yet");
    let second = asked.text.find("on Friday");
    assert!(
        first.is_some() && second.is_some() && first < second,
        "{}",
        asked.text
    );
    assert!(!asked.text.contains("lunch"), "{}", asked.text);
}

#[test]
fn a_write_is_found_by_keyword_while_the_embedder_is_down_and_by_meaning_once_back() {
    let up = Arc::new(AtomicBool::new(false));
    let serving = Arc::clone(&up);
    let (base, seen) = streaming_server(move |_, req| {
        if !serving.load(Ordering::SeqCst) {
            return Answer::status(503, r#"{"error": "loading model"}"#);
        }
        let body: Value = serde_json::from_str(&req.body).unwrap();
        let data: Vec<Value> = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"index": i, "embedding": tiny_vector(t.as_str().unwrap())}))
            .collect();
        Answer::status(200, &json!({"data": data}).to_string())
    });
    let config = ExecConfig {
        embeddings: EmbeddingsConfig::Remote(RemoteSettings {
            base_url: format!("{base}/v1"),
            api_key: None,
            model: "tiny".into(),
            timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            retries: 0,
            backoff: Duration::from_millis(10),
        }),
        ..ExecConfig::default()
    };
    let Rig {
        dir: _dir, exec, ..
    } = rig_with(Policy::permissive(), config);
    let exec = Arc::new(exec);
    exec.index_in_background();
    let run = |text: &str| {
        let mut ctx = partner::engine::exec::TurnContext::new("ada", "main", "t");
        let report = exec.run_turn(&mut ctx, text);
        assert_eq!(report.actions.len(), 1, "{text}");
        let action = report.actions.into_iter().next().unwrap();
        assert_eq!(action.status, ActionStatus::Executed, "{}", action.text);
        action
    };
    // The write does not wait on the embedder that is down.
    let started = Instant::now();
    run("/recall insert \"Dana: we ship on Friday\"");
    assert!(started.elapsed() < Duration::from_secs(2));
    let by_word = run("/recall \"ship\"");
    assert!(
        by_word.text.contains("we [ship] on Friday")
            && by_word.text.contains("searched by keyword only"),
        "{}",
        by_word.text
    );
    let by_meaning = run("/recall \"launch\"");
    assert!(
        by_meaning.text.contains("nothing found"),
        "{}",
        by_meaning.text
    );
    // The partner hears of it once.
    let recall = exec.recall().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let problem = loop {
        if let Some(p) = recall.new_problem() {
            break p;
        }
        assert!(Instant::now() < deadline, "the problem was never told");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(problem.contains("unavailable"), "{problem}");
    assert_eq!(recall.new_problem(), None, "told once");

    // It is back: the background thread embeds what waited.
    up.store(true, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = recall.status();
        if status.waiting == 0 && status.done >= 1 && status.problem.is_none() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never caught up: {status:?}; requests {}",
            seen.lock().unwrap().len()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let by_meaning = run("/recall \"launch\"");
    assert!(
        by_meaning.text.contains("we ship on Friday") && by_meaning.text.contains("(by meaning)"),
        "{}",
        by_meaning.text
    );
    // The embedded texts went to the server; the query did too.
    let bodies: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.body.clone())
        .collect();
    assert!(bodies.iter().any(|b| b.contains("Dana: we ship on Friday")));
    assert!(bodies.iter().any(|b| b.contains("\"launch\"")));
    drop(exec);
}

/// A constellation of one scripted agent.
const AGENTS: &str = "[providers.s]\nkind = \"scripted\"\nscript = \"script.txt\"\n[[agents]]\nname = \"ada\"\nmodel = \"s:x\"\n";

#[test]
fn the_command_line_searches_and_reindexes_with_the_constellations_embedder() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny-model");
    tiny_model(&model);
    std::fs::write(dir.path().join("script.txt"), "").unwrap();
    std::fs::write(
        dir.path().join("partner.toml"),
        format!("{AGENTS}[embeddings]\nkind = \"model2vec\"\npath = \"tiny-model\"\n"),
    )
    .unwrap();
    let db = dir.path().join("c.db");
    let db = db.to_str().unwrap();
    {
        let store = partner::store::memory::MemoryStore::open(db).unwrap();
        let conn = store.conn();
        for (i, text) in [
            "Dana: we ship on Friday",
            "the cat and the dog",
            "the launch date moved",
        ]
        .iter()
        .enumerate()
        {
            conn.add_archival("ada", text, i as i64 + 1).unwrap();
        }
    }
    let (code, out, err) = partner_in(dir.path(), &["memory", "--db", db, "reindex"], "");
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("embedded 3 items") && out.contains("3 of 3 items have a vector"),
        "{out}"
    );
    let (code, out, _) = partner_in(dir.path(), &["memory", "--db", db, "reindex"], "");
    assert_eq!(code, Some(0));
    assert!(out.contains("embedded 0 items"), "{out}");

    let (code, out, err) = partner_in(
        dir.path(),
        &["memory", "--db", db, "search", "--json", "launch"],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    let hits: Vec<Value> = serde_json::from_str(out.trim()).unwrap();
    let via = |text: &str| {
        hits.iter()
            .find(|h| h["snippet"].as_str().unwrap().contains(text))
            .map(|h| h["via"].as_str().unwrap().to_string())
    };
    assert_eq!(via("date moved").as_deref(), Some("both"), "{hits:#?}");
    assert_eq!(
        via("ship on Friday").as_deref(),
        Some("vector"),
        "{hits:#?}"
    );
    assert_eq!(via("cat"), None, "{hits:#?}");
    assert!(hits.iter().all(|h| h["score"].as_f64().unwrap() > 0.0));

    // Without an embedder: keywords, each hit from `fts`.
    let (code, out, _) = partner_in(
        dir.path(),
        &[
            "memory",
            "--db",
            db,
            "--config",
            "/nonexistent.toml",
            "search",
            "launch",
        ],
        "",
    );
    assert_ne!(
        code,
        Some(0),
        "a config that cannot be read is an error: {out}"
    );
    std::fs::write(dir.path().join("bare.toml"), AGENTS).unwrap();
    let (code, out, _) = partner_in(
        dir.path(),
        &[
            "memory",
            "--db",
            db,
            "--config",
            "bare.toml",
            "search",
            "--json",
            "launch",
        ],
        "",
    );
    assert_eq!(code, Some(0));
    let hits: Vec<Value> = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0]["via"], "fts");
    let (code, out, err) = partner_in(
        dir.path(),
        &["memory", "--db", db, "--config", "bare.toml", "reindex"],
        "",
    );
    assert_ne!(code, Some(0));
    assert!(format!("{out}{err}").contains("no embedder is configured"));
}

/// The same agent's searches by meaning, on a store of each kind: what
/// each found, by which side, in order.
fn searches_on(exec: &partner::engine::exec::Executor) -> Vec<String> {
    use partner::engine::exec::TurnContext;
    let run = |agent: &str, text: &str| {
        let mut ctx = TurnContext::new(agent, "main", "t");
        let report = exec.run_turn(&mut ctx, text).actions.remove(0);
        assert_eq!(report.status, ActionStatus::Executed, "{}", report.text);
        report
    };
    run("ada", "/recall insert \"Dana: we ship on Friday\"");
    run("ada", "/recall insert \"the cat sat on the mat\"");
    run("bob", "/recall insert \"the release is on Friday\"");
    let mut said = vec![run("ada", "/recall \"launch date\"").text];
    let recall = exec.recall().expect("an embedder is configured");
    while recall.catch_up(exec.store(), 64).unwrap() > 0 {}
    said.push(run("ada", "/recall \"launch date\"").text);
    let search = run("ada", "/search \"ship\"");
    for hit in search.data["hits"].as_array().unwrap() {
        said.push(format!("{} via {}", hit["snippet"], hit["via"]));
    }
    said
}

#[test]
fn search_by_meaning_finds_the_same_on_postgresql_as_on_sqlite() {
    use partner::engine::exec::Executor;
    use partner_engine::store::StoreAt;
    let Some(db) = support::postgres::scratch() else {
        return;
    };
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let config = || ExecConfig {
        agents: vec!["ada".into(), "bob".into()],
        embeddings: EmbeddingsConfig::Model2Vec {
            path: model.path().to_path_buf(),
        },
        ..ExecConfig::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let file = StoreAt::File(dir.path().join("m.db"));
    let server = StoreAt::Postgres(db.url.clone());
    let on_file = searches_on(&Executor::open_at(&file, Policy::permissive(), config()).unwrap());
    let on_server =
        searches_on(&Executor::open_at(&server, Policy::permissive(), config()).unwrap());
    // Alike but for the times the records were made at.
    let masked =
        |said: &[String]| -> Vec<String> { said.iter().map(|s| support::mask_times(s)).collect() };
    assert_eq!(masked(&on_file), masked(&on_server));
    // What they found: words only before the vectors, meaning after, and
    // never another agent's memory.
    assert!(on_server[0].contains("nothing found"), "{on_server:?}");
    assert!(
        on_server[1].contains("Dana: we ship on Friday") && on_server[1].contains("(by meaning)"),
        "{on_server:?}"
    );
    assert!(!on_server[1].contains("release"), "{on_server:?}");
    assert!(on_server[2].contains("via \"both\""), "{on_server:?}");
}
