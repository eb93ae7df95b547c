//! The transformer embedder with the real model beside the project
//! (`../shared/models/all-minilm-l6-v2/`, sentence-transformers
//! all-MiniLM-L6-v2 in float16): the relevance set's goals, paraphrases
//! that share no word with their answer, and hostile model directories.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use partner::engine::embed::relevance::{BUILTIN_SET, RelevanceSet, evaluate};
use partner::engine::embed::{Embedder, Transformer, cosine};

/// The shipped transformer, or why it is not here.
fn model_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/models/all-minilm-l6-v2");
    if dir.join("model.safetensors").exists() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: ../shared/models/all-minilm-l6-v2 is not beside the project; the transformer cannot be measured here"
        );
        None
    }
}

fn texts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_string()).collect()
}

/// The relevance set's goals: hybrid recall@5 ≥ 0.97 and recall@1 ≥
/// 0.89, never below meaning alone.
#[test]
fn the_transformer_finds_the_relevance_set() {
    let Some(dir) = model_dir() else { return };
    let model = Transformer::load(&dir).unwrap();
    assert_eq!(model.id(), "transformer:all-minilm-l6-v2:384");
    let set = RelevanceSet::parse(BUILTIN_SET).unwrap();
    let started = std::time::Instant::now();
    let report = evaluate(&set, Some(Arc::new(model)), 5).unwrap();
    let hybrid = report.hybrid.as_ref().unwrap().1;
    let vector = report.vector.unwrap();
    let (hybrid1, vector1) = (report.at1[1].unwrap(), report.at1[2].unwrap());
    println!(
        "recall@1 / @5 over {} questions, {} memories ({:.1}s): keyword {:.3} / {:.3}, hybrid {hybrid1:.3} / {hybrid:.3}, meaning alone {vector1:.3} / {vector:.3}",
        report.questions.len(),
        report.memories,
        started.elapsed().as_secs_f64(),
        report.at1[0].unwrap(),
        report.keyword,
    );
    assert!(hybrid >= 0.97, "hybrid recall@5 {hybrid}");
    assert!(hybrid1 >= 0.89, "hybrid recall@1 {hybrid1}");
    assert!(hybrid >= vector, "hybrid {hybrid} below meaning {vector}");
    assert!(
        hybrid1 >= vector1,
        "hybrid @1 {hybrid1} below meaning {vector1}"
    );
}

/// What a static model cannot do: relate texts that share no word.
#[test]
fn paraphrases_with_no_word_in_common_are_near() {
    let Some(dir) = model_dir() else { return };
    let model = Transformer::load(&dir).unwrap();
    let v = model
        .embed(&texts(&[
            "small rodent got loose",
            "The hamster escaped again and hid behind the fridge",
            "The quarterly tax return is due in April",
            "",
        ]))
        .unwrap();
    assert_eq!(v.len(), 4);
    assert!(v.iter().all(|x| x.len() == 384));
    let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "normalised: {norm}");
    let (near, far) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
    assert!(near > far + 0.2, "hamster {near}, taxes {far}");
    // A batch gives what one text alone gives (padding changes nothing).
    let alone = model.embed(&texts(&["small rodent got loose"])).unwrap();
    assert!(cosine(&alone[0], &v[0]) > 0.9999);
}

/// A text far longer than the model reads is cut, not refused.
#[test]
fn a_long_text_is_cut_to_what_the_model_reads() {
    let Some(dir) = model_dir() else { return };
    let model = Transformer::load(&dir).unwrap();
    let long = "the hamster escaped again ".repeat(2000);
    let v = model.embed(&[long]).unwrap();
    assert_eq!(v[0].len(), 384);
    assert!(v[0].iter().all(|x| x.is_finite()));
}

/// Copies the shipped model's small files to a new directory, with
/// `change` applied, and the weights as `weights` gives them.
fn copy_with(
    from: &Path,
    to: &Path,
    change: &dyn Fn(&Path),
    weights: Option<&[u8]>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(to.join("1_Pooling"))?;
    for name in crate::models::files() {
        match (name, weights) {
            ("model.safetensors", Some(bytes)) => std::fs::write(to.join(name), bytes)?,
            _ => {
                std::fs::copy(from.join(name), to.join(name))?;
            }
        }
    }
    change(to);
    Ok(())
}

/// A broken model: its name, what is changed in the directory, the
/// weights written instead of the real ones, and what the error names.
type Case = (
    &'static str,
    Box<dyn Fn(&Path)>,
    Option<&'static [u8]>,
    &'static str,
);

/// Broken and hostile model directories are errors that say what is
/// wrong; none panics or allocates what a config claims.
#[test]
fn a_broken_or_hostile_model_is_an_error() {
    let Some(dir) = model_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let config = |edit: &'static str| {
        move |d: &Path| {
            let mut c: serde_json::Value =
                serde_json::from_slice(&std::fs::read(d.join("config.json")).unwrap()).unwrap();
            let (key, value) = edit.split_once('=').unwrap();
            c[key] = serde_json::from_str(value).unwrap();
            std::fs::write(d.join("config.json"), c.to_string()).unwrap();
        }
    };
    let cases: Vec<Case> = vec![
        (
            "huge",
            Box::new(config("hidden_size=1000000000")),
            None,
            "hidden_size",
        ),
        (
            "layers",
            Box::new(config("num_hidden_layers=100000")),
            None,
            "num_hidden_layers",
        ),
        (
            "heads",
            Box::new(config("num_attention_heads=5")),
            None,
            "multiple",
        ),
        (
            "wide",
            Box::new(config("hidden_size=768")),
            None,
            "model.safetensors",
        ),
        (
            "notjson",
            Box::new(|d: &Path| std::fs::write(d.join("config.json"), "{").unwrap()),
            None,
            "config.json",
        ),
        (
            "tok",
            Box::new(|d: &Path| std::fs::write(d.join("tokenizer.json"), "{\"x\":1}").unwrap()),
            None,
            "tokenizer.json",
        ),
        (
            "pool",
            Box::new(|d: &Path| {
                std::fs::write(
                    d.join("1_Pooling/config.json"),
                    r#"{"pooling_mode_max_tokens": true}"#,
                )
                .unwrap()
            }),
            None,
            "pooling",
        ),
        (
            "trunc",
            Box::new(|_: &Path| {}),
            Some(&[8, 0, 0, 0, 0, 0, 0, 0, b'{', b'}']),
            "model.safetensors",
        ),
        (
            "lies",
            Box::new(|_: &Path| {}),
            Some(&[255, 255, 255, 255, 0, 0, 0, 0, b'{']),
            "model.safetensors",
        ),
    ];
    for (name, change, weights, says) in cases {
        let to = tmp.path().join(name);
        copy_with(&dir, &to, change.as_ref(), weights).unwrap();
        let e = Transformer::load(&to).expect_err(name).to_string();
        assert!(e.contains(says), "{name}: {e}");
    }
}
