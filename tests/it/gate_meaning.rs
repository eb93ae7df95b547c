//! The parse gate's index of programs finds by meaning what words miss
//! ("picture editor" → GIMP) when the constellation has an embedder: the
//! index's entries are embedded (by `partner gate index`, or a batch at a
//! time when a request needs them), the nearest is proposed, and without
//! an embedder the words decide as before.

use crate::support;

use partner::engine::embed::{Embedder, Model2Vec, write_model};
use partner::gate::index::{DesktopApp, Index};
use support::partner_in;

/// Axes: pictures, editing, text, music.
fn model(dir: &std::path::Path) -> Model2Vec {
    let v = |a: [f32; 4]| a.to_vec();
    let words = [
        ("picture", v([1.0, 0.0, 0.0, 0.0])),
        ("images", v([0.95, 0.0, 0.0, 0.05])),
        ("image", v([0.95, 0.05, 0.0, 0.0])),
        ("photographs", v([0.9, 0.0, 0.1, 0.0])),
        ("edit", v([0.0, 1.0, 0.0, 0.0])),
        ("editor", v([0.0, 0.95, 0.05, 0.0])),
        ("text", v([0.0, 0.0, 1.0, 0.0])),
        ("files", v([0.0, 0.0, 0.6, 0.0])),
        ("music", v([0.0, 0.0, 0.0, 1.0])),
        ("songs", v([0.0, 0.0, 0.0, 0.9])),
        ("player", v([0.0, 0.1, 0.0, 0.8])),
    ];
    let words: Vec<(&str, Vec<f32>)> = words.iter().map(|(w, v)| (*w, v.clone())).collect();
    write_model(dir, &words).unwrap();
    Model2Vec::load(dir).unwrap()
}

fn app(id: &str, name: &str, generic: &str, comment: &str) -> DesktopApp {
    DesktopApp {
        id: id.into(),
        name: name.into(),
        generic_name: generic.into(),
        comment: comment.into(),
        keywords: String::new(),
        exec: id.into(),
    }
}

fn index(path: &std::path::Path) -> Index {
    let mut index = Index::open(path).unwrap();
    index
        .fill(
            &[
                app(
                    "gimp",
                    "GNU Image Manipulation Program",
                    "Image Editor",
                    "Create images and edit photographs",
                ),
                app("gedit", "gedit", "Text Editor", "Edit text files"),
                app("rhythmbox", "Rhythmbox", "Music Player", "Play your songs"),
            ],
            &[("vorbis-tools".into(), "tools for music files".into())],
        )
        .unwrap();
    index
}

#[test]
fn a_program_is_found_by_meaning_when_its_words_do_not_match() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(&dir.path().join("model"));
    let index = index(&dir.path().join("index.sqlite"));

    // By words: nothing has both words, so no hit may be proposed.
    let by_words = index.search("picture editor", 5, None).unwrap();
    assert!(by_words.iter().all(|s| !s.whole), "{by_words:#?}");

    // By meaning: GIMP, the nearest, may be proposed; the entries were
    // embedded as the request needed them.
    let by_meaning = index.search("picture editor", 5, Some(&model)).unwrap();
    let first = &by_meaning[0];
    assert_eq!(
        first.name, "GNU Image Manipulation Program",
        "{by_meaning:#?}"
    );
    assert!(first.whole && first.by_meaning, "{first:?}");
    assert_eq!(first.command.as_deref(), Some("gimp"));
    assert!(
        by_meaning[1..].iter().all(|s| !s.whole),
        "only the nearest is proposed: {by_meaning:#?}"
    );
    assert!(
        !by_meaning.iter().any(|s| s.name == "Rhythmbox"),
        "music is not near a picture editor: {by_meaning:#?}"
    );

    // Words that match every word still decide first.
    let exact = index.search("music player", 5, Some(&model)).unwrap();
    assert_eq!(exact[0].name, "Rhythmbox");
    assert!(exact[0].whole && !exact[0].by_meaning, "{exact:#?}");

    // Nothing waits once embedded; a rebuilt index is embedded again.
    assert_eq!(
        index
            .embed_entries(&model, std::time::Duration::from_secs(5))
            .unwrap(),
        (0, false)
    );
    let index = self::index(&dir.path().join("index.sqlite"));
    assert_eq!(
        index
            .embed_entries(&model, std::time::Duration::from_secs(5))
            .unwrap(),
        (4, false)
    );
    // A zero budget embeds nothing and says more waits.
    let other = tempfile::tempdir().unwrap();
    let fresh = self::index(&other.path().join("index.sqlite"));
    assert_eq!(
        fresh
            .embed_entries(&model, std::time::Duration::ZERO)
            .unwrap(),
        (0, true)
    );
    assert!(model.id().starts_with("model2vec:"));
}

#[test]
fn the_gate_proposes_the_program_found_by_meaning_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    model(&dir.path().join("model"));
    drop(index(&dir.path().join("index.sqlite")));
    std::fs::write(dir.path().join("script.txt"), "").unwrap();
    std::fs::write(
        dir.path().join("partner.toml"),
        "[providers.s]\nkind = \"scripted\"\nscript = \"script.txt\"\n[[agents]]\nname = \"ada\"\nmodel = \"s:x\"\n[embeddings]\nkind = \"model2vec\"\npath = \"model\"\n",
    )
    .unwrap();
    let (code, out, err) = partner_in(
        dir.path(),
        &[
            "gate",
            "propose",
            "--json",
            "--index",
            "index.sqlite",
            "open the picture editor",
        ],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    let p: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(p["command"], "gimp", "{p:#}");
    let context = p["context"].to_string();
    assert!(context.contains("(by meaning)"), "{context}");
}
