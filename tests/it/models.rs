//! Embedding models in partner's data directory: `partner models list`,
//! `partner models fetch` against a real HTTP server on 127.0.0.1 (each
//! file checked against its pinned hash, nothing kept when one is wrong),
//! the transformer found there used when `[embeddings]` names nothing,
//! `partner memory reindex` telling its rate and the time left, and a
//! change of embedder caught up in the background while search says what
//! meaning cannot see yet.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use partner::engine::embed::models::{self, Known};
use partner::engine::embed::{Embedder, EmbeddingsConfig, Transformer};
use partner::engine::exec::{ExecConfig, Executor};
use partner::policy::Policy;
use partner::store::memory::MemoryStore;

use partner::core::clock::ManualClock;

use crate::support::partner_env;
use partner::store::memory::backend::Memory;

const SHIPPED: &str = "../shared/models/all-minilm-l6-v2";
const STATIC: &str = "../shared/models/minilm-l6-m2v-256";

/// A shipped model's directory, or why it is not here.
fn shipped(name: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    if dir.join("model.safetensors").exists() {
        Some(dir)
    } else {
        eprintln!("SKIPPED: {name} is not beside the project");
        None
    }
}

/// Serves the files under `root` over HTTP on 127.0.0.1 (a path missing
/// is a 404): the base URL and the paths asked for.
fn files_server(root: PathBuf) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (root, seen) = (root.clone(), Arc::clone(&seen));
            std::thread::spawn(move || serve_one(stream, &root, &seen));
        }
    });
    (base, asked)
}

/// Answers one request of [`files_server`].
fn serve_one(mut stream: std::net::TcpStream, root: &Path, seen: &Mutex<Vec<String>>) {
    let mut first = String::new();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
            break;
        }
    }
    let path = first.split(' ').nth(1).unwrap_or("/").to_string();
    seen.lock().unwrap().push(path.clone());
    let (status, body) = match std::fs::read(root.join(path.trim_start_matches('/'))) {
        Ok(b) => ("200 OK", b),
        Err(_) => ("404 Not Found", b"not here".to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

/// A hub laid out as Hugging Face's (`REPO/resolve/REV/PATH`) holding the
/// shipped transformer's files.
fn hub_with(model: &Path, repo: &str, revision: &str) -> tempfile::TempDir {
    let hub = tempfile::tempdir().unwrap();
    let at = hub.path().join(repo).join("resolve").join(revision);
    std::fs::create_dir_all(at.join("1_Pooling")).unwrap();
    for name in files() {
        std::fs::copy(model.join(name), at.join(name)).unwrap();
    }
    hub
}

/// A sentence-transformers directory's files, as the catalog lists them.
pub(crate) fn files() -> impl Iterator<Item = &'static str> {
    models::known(models::DEFAULT_MODEL)
        .unwrap()
        .files
        .iter()
        .map(|f| f.0)
}

fn sha256(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

/// The pinned catalog holds upstream's hashes, which the shipped files
/// (upstream's, unchanged) have; the shipped weights are a float16
/// conversion, so their pin differs and a fetch of them is refused.
#[test]
fn the_catalog_pins_upstreams_files() {
    let Some(dir) = shipped(SHIPPED) else { return };
    let known = models::known("all-minilm-l6-v2").unwrap();
    for &(path, size, hash) in known.files {
        if path == "model.safetensors" {
            assert_eq!(size, 90_868_376, "the float32 upstream file");
            continue;
        }
        let file = dir.join(path);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), size, "{path}");
        assert_eq!(sha256(&file), hash, "{path}");
    }
}

/// A fetch from a hub whose weights are not the pinned ones keeps
/// nothing and says which file and why; a listing shows none.
#[test]
fn a_fetch_whose_file_is_not_the_pinned_one_keeps_nothing() {
    let Some(dir) = shipped(SHIPPED) else { return };
    let known = models::known("all-minilm-l6-v2").unwrap();
    let hub = hub_with(&dir, known.repo, known.revision);
    let (base, asked) = files_server(hub.path().to_path_buf());
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let env = [
        ("XDG_DATA_HOME", Some(data.as_path())),
        ("PARTNER_MODELS_URL", Some(Path::new(&base))),
    ];
    let (code, out, err) = partner_env(work.path(), &["models", "fetch"], "", &env);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("model.safetensors") && err.contains("not its pinned 90868376"),
        "{err}"
    );
    assert!(
        asked
            .lock()
            .unwrap()
            .iter()
            .any(|p| p.ends_with("/config.json"))
    );
    let models_dir = data.join("partner/models");
    let left: Vec<_> = std::fs::read_dir(&models_dir).unwrap().collect();
    assert!(left.is_empty(), "nothing half there: {left:?}");
    let (code, out, _) = partner_env(work.path(), &["models", "list"], "", &env);
    assert_eq!(code, Some(0));
    assert!(out.contains("none: search is by keyword"), "{out}");
    let (code, _, err) = partner_env(work.path(), &["models", "fetch", "gpt-9"], "", &env);
    assert_eq!(code, Some(2));
    assert!(err.contains("no known model gpt-9"), "{err}");
}

/// A fetch whose every file is as pinned is moved into place whole, and
/// loads; a second fetch is refused unless asked to replace.
#[test]
fn a_fetch_of_pinned_files_installs_a_model_that_loads() {
    let Some(dir) = shipped(SHIPPED) else { return };
    // The mechanism, with the shipped files' own pins.
    let files: Vec<(&'static str, u64, &'static str)> = files()
        .map(|name| {
            let file = dir.join(name);
            let size = std::fs::metadata(&file).unwrap().len();
            (name, size, &*Box::leak(sha256(&file).into_boxed_str()))
        })
        .collect();
    let known = Known {
        name: "minilm-test",
        about: "",
        repo: "org/minilm",
        revision: "abc",
        files: Box::leak(files.into_boxed_slice()),
    };
    let hub = hub_with(&dir, known.repo, known.revision);
    let (base, _) = files_server(hub.path().to_path_buf());
    let dest = tempfile::tempdir().unwrap();
    let mut calls = 0u64;
    let mut progress = |done: u64, total: u64| {
        assert!(done <= total);
        calls += 1;
    };
    let fetch = models::fetch(&known, &base, dest.path(), false, &mut progress);
    let installed = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(fetch)
        .unwrap();
    assert!(calls > 0);
    assert_eq!(installed, dest.path().join("minilm-test"));
    let model = Transformer::load(&installed).unwrap();
    assert_eq!(model.embed(&["hamster".into()]).unwrap()[0].len(), 384);
    assert_eq!(
        models::default_in(dest.path()),
        EmbeddingsConfig::Transformer { path: installed }
    );
    let mut quiet = |_, _| {};
    let again = models::fetch(&known, &base, dest.path(), false, &mut quiet);
    let e = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(again)
        .unwrap_err();
    assert!(e.contains("already there"), "{e}");
}

/// Links the shipped models into a data directory's `models/`.
fn data_with_models(root: &Path, which: &[(&str, &Path)]) -> PathBuf {
    let data = root.join("data");
    let models = data.join("partner/models");
    std::fs::create_dir_all(&models).unwrap();
    for (name, dir) in which {
        std::os::unix::fs::symlink(dir, models.join(name)).unwrap();
    }
    data
}

/// With no `[embeddings]`, a transformer in the data directory is what
/// search uses (before a static model found beside it); the listing says
/// so.
#[test]
fn a_transformer_in_the_data_directory_is_the_default() {
    let (Some(transformer), Some(fast)) = (shipped(SHIPPED), shipped(STATIC)) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let data = data_with_models(
        work.path(),
        &[("all-minilm-l6-v2", &transformer), ("aaa-static", &fast)],
    );
    let env = [("XDG_DATA_HOME", Some(data.as_path()))];
    let (code, out, err) = partner_env(work.path(), &["models", "list"], "", &env);
    assert_eq!(code, Some(0), "{err}");
    let used: Vec<&str> = out.lines().filter(|l| l.contains("← used")).collect();
    assert_eq!(used.len(), 1, "{out}");
    assert!(
        used[0].contains("all-minilm-l6-v2") && used[0].contains("transformer"),
        "{out}"
    );
    assert!(
        out.contains("aaa-static") && out.contains("model2vec"),
        "{out}"
    );
    let (code, out, err) = partner_env(work.path(), &["memory", "relevance"], "", &env);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("(transformer:all-minilm-l6-v2:384)"), "{out}");
    // Named explicitly, none is none.
    std::fs::write(
        work.path().join("partner.toml"),
        "[embeddings]\nkind = \"none\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"ollama:x\"\n",
    )
    .unwrap();
    let (_, out, _) = partner_env(work.path(), &["memory", "relevance"], "", &env);
    assert!(out.contains("no [embeddings] configured"), "{out}");
}

/// `partner memory reindex` tells items/s and the time left as it goes.
#[test]
fn reindex_tells_its_rate_and_the_time_left() {
    let Some(transformer) = shipped(SHIPPED) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("c.db");
    {
        let store = MemoryStore::open(&db).unwrap();
        let conn = store.conn();
        for i in 0..240 {
            conn.add_archival(
                "ada",
                &format!("Note {i}: the hamster escaped and hid behind the fridge on day {i}"),
                i + 1,
            )
            .unwrap();
        }
    }
    std::fs::write(
        work.path().join("partner.toml"),
        format!(
            "[embeddings]\npath = \"{}\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"ollama:x\"\n",
            transformer.display()
        ),
    )
    .unwrap();
    let (code, out, err) = partner_env(
        work.path(),
        &[
            "memory",
            "reindex",
            "--config",
            "partner.toml",
            "--db",
            "c.db",
        ],
        "",
        &[],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let last = out.lines().last().unwrap();
    assert!(
        last.contains("embedded 240 items") && last.contains("transformer:all-minilm-l6-v2:384"),
        "{out}"
    );
    let progress: Vec<&str> = out.lines().filter(|l| l.contains("items/s")).collect();
    assert!(!progress.is_empty(), "no progress told: {out}");
    assert!(progress.iter().all(|l| l.contains("left")), "{out}");
}

fn executor(
    store: &Arc<partner_engine::store::Store>,
    embeddings: EmbeddingsConfig,
) -> Arc<Executor> {
    let config = ExecConfig {
        embeddings,
        agents: vec!["ada".into()],
        ..ExecConfig::default()
    };
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    Arc::new(Executor::with_parts(Arc::clone(store), Policy::permissive(), config, clock).unwrap())
}

/// Switching from the static model to the transformer: the new vectors
/// are made in the background, the static ones are kept, and meanwhile
/// a search says how much meaning could not see.
#[test]
fn a_change_of_default_embedder_catches_up_in_the_background() {
    let (Some(transformer), Some(fast)) = (shipped(SHIPPED), shipped(STATIC)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::open(dir.path().join("c.db")).unwrap().into());
    let static_exec = executor(&store, EmbeddingsConfig::Model2Vec { path: fast.clone() });
    let run = |exec: &Executor, text: &str| {
        let mut ctx = partner::engine::exec::TurnContext::new("ada", "main", "t");
        let report = exec.run_turn(&mut ctx, text);
        report.actions.into_iter().next().unwrap().text
    };
    let mut turn = String::new();
    for i in 0..100 {
        turn.push_str(&format!(
            "/recall insert \"Errand {i}: buy stamps and post the parcel\"\n"
        ));
    }
    turn.push_str("/recall insert \"The hamster escaped again and hid behind the fridge\"\n");
    for line in turn.lines() {
        run(&static_exec, line);
    }
    let recall = static_exec.recall().unwrap();
    while recall.catch_up(static_exec.store(), 512).unwrap() > 0 {}
    drop(static_exec);

    let bert = executor(&store, EmbeddingsConfig::Transformer { path: transformer });
    let first = run(&bert, "/recall \"small rodent got loose\"");
    assert!(
        first.contains("searched by meaning only 0 of 101 items")
            && first.contains("101 not yet embedded by transformer:all-minilm-l6-v2:384"),
        "{first}"
    );
    bert.index_in_background();
    let deadline = Instant::now() + Duration::from_secs(120);
    let caught_up = loop {
        let text = run(&bert, "/recall \"small rodent got loose\"");
        if !text.contains("searched by meaning only") {
            break text;
        }
        assert!(Instant::now() < deadline, "never caught up: {text}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let hamster = caught_up.find("hamster").expect(&caught_up);
    let errand = caught_up.find("Errand").unwrap_or(usize::MAX);
    assert!(hamster < errand, "the paraphrase first: {caught_up}");
    drop(bert);
    // The static model's vectors were kept: nothing for it to embed again.
    let again = executor(&store, EmbeddingsConfig::Model2Vec { path: fast });
    assert_eq!(
        again
            .recall()
            .unwrap()
            .catch_up(again.store(), 512)
            .unwrap(),
        0
    );
}
