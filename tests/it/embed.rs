//! Embedders: a tiny Model2Vec model the test builds (a handful of words,
//! 8-dimensional vectors chosen so the neighbours are known) and a loopback
//! `/v1/embeddings` server whose request bodies are recorded; bad models
//! and bad answers are errors, a server that is down is "unavailable".

use crate::support;

use std::path::Path;
use std::time::Duration;

use partner::engine::embed::{
    EmbedError, Embedder, Model2Vec, RemoteEmbedder, RemoteSettings, cosine,
};
use partner::store::memory::backend::{BlockWrite, Memory, NewMessage};
use serde_json::{Value, json};
use support::models::tiny_model;
use support::{Answer, streaming_server};

#[test]
fn a_local_model_finds_neighbours_by_meaning() {
    let dir = tempfile::tempdir().unwrap();
    tiny_model(dir.path());
    let model = Model2Vec::load(dir.path()).unwrap();
    assert!(
        model.id().starts_with("model2vec:") && model.id().ends_with(":8"),
        "{}",
        model.id()
    );
    let texts: Vec<String> = [
        "When do we ship?",
        "Dana said: the launch date is Friday",
        "The cat and the dog",
        "zzz qqq",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let v = model.embed(&texts).unwrap();
    assert_eq!(v.len(), 4);
    assert!(v.iter().all(|x| x.len() == 8));
    let ship_launch = cosine(&v[0], &v[1]);
    let ship_pets = cosine(&v[0], &v[2]);
    // The launch sentence mixes in people and time; it is still far nearer
    // than the pets.
    assert!(
        ship_launch > 0.4 && ship_pets < 0.05,
        "{ship_launch} {ship_pets}"
    );
    // Words the model does not know give a vector that is near nothing.
    assert!(v[3].iter().all(|x| *x == 0.0), "{:?}", v[3]);
    assert_eq!(cosine(&v[3], &v[1]), 0.0);
}

#[test]
fn broken_model_directories_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Model2Vec::load(dir.path()),
        Err(EmbedError::Failed(_))
    ));
    tiny_model(dir.path());
    std::fs::write(
        dir.path().join("model.safetensors"),
        b"\xff\xff\xff\xff\xff\xff\xff\x7fgarbage",
    )
    .unwrap();
    assert!(matches!(
        Model2Vec::load(dir.path()),
        Err(EmbedError::Failed(_))
    ));
    tiny_model(dir.path());
    std::fs::write(dir.path().join("tokenizer.json"), "{not json").unwrap();
    assert!(matches!(
        Model2Vec::load(dir.path()),
        Err(EmbedError::Failed(_))
    ));
}

fn settings(base: &str) -> RemoteSettings {
    RemoteSettings {
        base_url: format!("{base}/v1"),
        api_key: Some("k-test".into()),
        model: "nomic-embed-text".into(),
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
        retries: 2,
        backoff: Duration::from_millis(10),
    }
}

fn answer(texts: usize, dims: usize) -> String {
    let data: Vec<Value> = (0..texts)
        .rev()
        .map(
            |i| json!({"object": "embedding", "index": i, "embedding": vec![i as f32 + 1.0; dims]}),
        )
        .collect();
    json!({"object": "list", "data": data, "model": "nomic-embed-text"}).to_string()
}

#[test]
fn a_server_embeds_in_batches_with_retries() {
    let (base, seen) = streaming_server(|n, req| {
        let body: Value = serde_json::from_str(&req.body).unwrap();
        let count = body["input"].as_array().unwrap().len();
        if n == 0 {
            return Answer::status(503, r#"{"error": "loading"}"#);
        }
        Answer::status(200, &answer(count, 4))
    });
    let e = RemoteEmbedder::new(settings(&base)).unwrap();
    let texts: Vec<String> = (0..70).map(|i| format!("memory {i}")).collect();
    let v = e.embed(&texts).unwrap();
    assert_eq!(v.len(), 70);
    // Answers out of order are put back in order by their index.
    assert_eq!(v[0], vec![1.0; 4]);
    assert_eq!(v[63], vec![64.0; 4]);
    assert_eq!(v[64], vec![1.0; 4], "the second batch starts again");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3, "one retry after the 503, then two batches");
    for req in seen.iter() {
        assert_eq!(req.path, "/v1/embeddings");
        assert_eq!(req.header("authorization"), Some("Bearer k-test"));
        let body: Value = serde_json::from_str(&req.body).unwrap();
        assert_eq!(body["model"], "nomic-embed-text");
    }
    let sizes: Vec<usize> = seen[1..]
        .iter()
        .map(|r| {
            serde_json::from_str::<Value>(&r.body).unwrap()["input"]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    assert_eq!(sizes, vec![64, 6]);
}

#[test]
fn bad_answers_and_a_server_that_is_down_are_told_apart() {
    for (body, says) in [
        (
            r#"{"data": [{"embedding": [1, 2]}]}"#.to_string(),
            "fewer than 2 vectors",
        ),
        (answer(2, 0), "dimensions"),
        (
            r#"{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}]}"#
                .to_string(),
            "dimensions in one answer",
        ),
        (
            r#"{"data": [{"index": 0, "embedding": [1, "x"]}, {"index": 1, "embedding": [1, 2]}]}"#
                .to_string(),
            "not a number",
        ),
        (
            r#"{"data": [{"index": 5, "embedding": [1]}, {"index": 1, "embedding": [1]}]}"#
                .to_string(),
            "out of range",
        ),
        ("<html>".to_string(), "not JSON"),
    ] {
        let (base, _) = streaming_server(move |_, _| Answer::status(200, &body));
        let e = RemoteEmbedder::new(settings(&base)).unwrap();
        match e.embed(&["a".into(), "b".into()]) {
            Err(EmbedError::Failed(why)) => assert!(why.contains(says), "{why}"),
            other => panic!("{says}: {other:?}"),
        }
    }
    // A 400 is the request's fault: failed, not retried.
    let (base, seen) =
        streaming_server(|_, _| Answer::status(400, r#"{"error": "no such model"}"#));
    let e = RemoteEmbedder::new(settings(&base)).unwrap();
    assert!(matches!(e.embed(&["a".into()]), Err(EmbedError::Failed(_))));
    assert_eq!(seen.lock().unwrap().len(), 1);
    // Nobody listening: unavailable, after the retries.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = RemoteEmbedder::new(settings(&format!("http://127.0.0.1:{port}"))).unwrap();
    assert!(matches!(
        e.embed(&["a".into()]),
        Err(EmbedError::Unavailable(_))
    ));
}

#[test]
fn embeddings_are_chosen_in_partner_toml() {
    use partner::engine::embed::EmbeddingsConfig;
    use partner::runtime::ConstellationConfig;
    let load = |extra: &str| {
        let text = format!(
            "[providers.scripted]\nkind = \"scripted\"\n[providers.local]\nbase_url = \"http://127.0.0.1:9/v1\"\nretries = 1\n[providers.claude]\nkind = \"anthropic\"\n{extra}\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\n"
        );
        ConstellationConfig::from_toml(
            &text,
            "t",
            Path::new("/base"),
            None,
            Some("[agents.ada]\npulses = []\n"),
        )
        .map(|c| c.exec.embeddings)
        .map_err(|e| e.to_string())
    };
    // Nothing named: a model in the data directory, else none (what the
    // data directory holds is tested in `models`, with one of its own).
    let found = partner::engine::embed::models::models_dir()
        .map(|dir| partner::engine::embed::models::default_in(&dir))
        .unwrap_or_default();
    assert_eq!(load(""), Ok(found), "the data directory's model, or none");
    assert_eq!(
        load("[embeddings]\nkind = \"none\""),
        Ok(EmbeddingsConfig::None),
        "none when said"
    );
    assert_eq!(
        load("[embeddings]\npath = \"models/potion-base-8M\""),
        Ok(EmbeddingsConfig::Model2Vec {
            path: "/base/models/potion-base-8M".into()
        })
    );
    match load("[embeddings]\nprovider = \"local\"\nmodel = \"nomic-embed-text\"") {
        Ok(EmbeddingsConfig::Remote(s)) => {
            assert_eq!(s.base_url, "http://127.0.0.1:9/v1");
            assert_eq!(s.model, "nomic-embed-text");
            assert_eq!(s.retries, 1, "the provider's own retries");
        }
        other => panic!("{other:?}"),
    }
    for (extra, says) in [
        (
            "[embeddings]\nprovider = \"claude\"\nmodel = \"m\"",
            "anthropic provider",
        ),
        ("[embeddings]\nprovider = \"local\"", "needs model"),
        (
            "[embeddings]\nprovider = \"nowhere\"\nmodel = \"m\"",
            "no [providers.nowhere]",
        ),
        ("[embeddings]\nkind = \"model2vec\"", "needs path"),
        ("[embeddings]\nkind = \"transformer\"", "needs path"),
        (
            "[embeddings]\nkind = \"magic\"",
            "expected transformer, model2vec, provider or none",
        ),
        ("[embeddings]\nsize = 3", "unknown field"),
    ] {
        let e = load(extra).unwrap_err();
        assert!(e.contains(says), "{extra}: {e}");
    }
}

#[test]
fn hybrid_search_finds_by_meaning_what_words_miss_and_keeps_the_filters() {
    use partner::store::memory::MemoryStore;
    use partner::store::memory::search::{SearchDomain, SearchQuery};
    use partner::store::memory::vectors::{self, VectorIndex, Via};

    let dir = tempfile::tempdir().unwrap();
    tiny_model(dir.path());
    let model = Model2Vec::load(dir.path()).unwrap();
    let store = MemoryStore::open(dir.path().join("m.db")).unwrap();
    let conn = store.conn();
    let paraphrase = conn
        .add_archival("ada", "Dana said the release is on Friday", 1)
        .unwrap();
    let keyword = conn
        .add_archival("ada", "launch date: not set, ask Dana", 2)
        .unwrap();
    let pets = conn.add_archival("ada", "the cat and the dog", 3).unwrap();
    let others = conn
        .add_archival("bob", "the release is on Friday", 4)
        .unwrap();
    conn.add_message(
        &NewMessage {
            agent: "ada",
            thread: "main",
            role: "user",
            content: "when do we ship",
            lineage: &[],
            turn: None,
        },
        5,
    )
    .unwrap();

    // The embedder is down: everything waits for a vector, keyword search works.
    let (done, waiting) = vectors::progress(&conn, model.id()).unwrap();
    assert_eq!((done, waiting), (0, 5));
    let mut query = SearchQuery::new("launch date", Some("ada"));
    query.domains = vec![SearchDomain::Archival];
    let index = VectorIndex::new(model.id());
    let hits = vectors::hybrid(&*conn, &query, None, &index).unwrap();
    assert_eq!(
        hits.iter().map(|h| h.hit.id).collect::<Vec<_>>(),
        vec![keyword]
    );
    assert_eq!(hits[0].via, Via::Fts);

    // It is back: what waits is embedded, and found by meaning.
    let items = vectors::pending(&conn, model.id(), 100).unwrap();
    let texts: Vec<String> = items.iter().map(|i| i.text.clone()).collect();
    for (item, v) in items.iter().zip(model.embed(&texts).unwrap()) {
        vectors::put(&conn, model.id(), item, &v).unwrap();
    }
    assert_eq!(vectors::progress(&conn, model.id()).unwrap(), (5, 0));
    let mut index = VectorIndex::new(model.id());
    index.refresh(&*conn).unwrap();
    assert_eq!(index.len(), 5);
    let q = model.embed(&["launch date".into()]).unwrap().remove(0);
    let hits = vectors::hybrid(&*conn, &query, Some(&q), &index).unwrap();
    let by_id = |id: i64| {
        hits.iter()
            .find(|h| h.hit.id == id && h.hit.domain == SearchDomain::Archival)
    };
    assert_eq!(by_id(keyword).map(|h| h.via), Some(Via::Both), "{hits:#?}");
    assert_eq!(
        by_id(paraphrase).map(|h| h.via),
        Some(Via::Vector),
        "{hits:#?}"
    );
    assert!(by_id(others).is_none(), "another agent's memory stays out");
    let rank = |id: i64| hits.iter().position(|h| h.hit.id == id);
    assert!(
        rank(paraphrase) < rank(pets).or(Some(usize::MAX)),
        "{hits:#?}"
    );
    assert!(
        hits.iter().all(|h| h.hit.domain == SearchDomain::Archival),
        "the domain filter holds"
    );

    // A changed block is embedded again; the index catches up.
    let (block, _) = conn
        .create_block(
            &partner::store::memory::NewBlock::new(
                "ada",
                "plan",
                partner::store::memory::BlockKind::Working,
                "cat",
            ),
            "ada",
            10,
        )
        .unwrap();
    assert_eq!(vectors::pending(&conn, model.id(), 10).unwrap().len(), 1);
    conn.write_block(
        &BlockWrite {
            agent: "ada",
            label: "plan",
            value: "we ship friday",
            base: None,
        },
        "ada",
        20,
    )
    .unwrap();
    let items = vectors::pending(&conn, model.id(), 10).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].text, "we ship friday");
    let v = model.embed(&[items[0].text.clone()]).unwrap().remove(0);
    vectors::put(&conn, model.id(), &items[0], &v).unwrap();
    index.refresh(&*conn).unwrap();
    let mut query = SearchQuery::new("launch", Some("ada"));
    query.domains = vec![SearchDomain::Blocks];
    let q = model.embed(&["launch".into()]).unwrap().remove(0);
    let hits = vectors::hybrid(&*conn, &query, Some(&q), &index).unwrap();
    assert_eq!(
        hits.first().map(|h| (h.hit.id, h.via)),
        Some((block.id, Via::Vector)),
        "{hits:#?}"
    );
    // Vectors of another embedder do not count as current.
    assert_eq!(vectors::progress(&conn, "other").unwrap().0, 0);
}
