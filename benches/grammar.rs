//! The action grammar engine on TypeAgent's own agent grammars (read from
//! `../shared/conformance/typeagent/grammars/` when present): one match and
//! one completion per call, for requests written for each of ten grammars.
//! Then, in the same run, the same inputs through TypeAgent's own engine
//! under Node (`benches/grammar_reference.mjs`, where Node and
//! `../shared/conformance/typeagent/engine/` are present), both timed the
//! same way (median of 15 batches of at least 20 ms), and the ratio.

#[path = "common/grammar_cases.rs"]
mod cases;

use cases::{CASES, agents, load};
use criterion::{Criterion, criterion_group, criterion_main};
use partner::grammar::{Direction, MatchOptions, complete, match_grammar};

fn bench(c: &mut Criterion) {
    let Some(dir) = agents() else {
        eprintln!("SKIPPED: ../shared/conformance/typeagent/grammars is not present");
        return;
    };
    for (name, file, request, prefix) in CASES {
        let grammar = match load(&dir, file) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("SKIPPED {name}: {e}");
                continue;
            }
        };
        assert!(
            !match_grammar(&grammar, request, &MatchOptions::default()).is_empty(),
            "{name}: the request matches"
        );
        c.bench_function(&format!("grammar/{name}/match"), |b| {
            b.iter(|| match_grammar(&grammar, request, &MatchOptions::default()))
        });
        c.bench_function(&format!("grammar/{name}/complete"), |b| {
            b.iter(|| {
                complete(
                    &grammar,
                    prefix,
                    Direction::Forward,
                    None,
                    &MatchOptions::default(),
                )
            })
        });
    }
}

/// Median nanoseconds per call of `f`: 15 batches, each of at least 20 ms
/// (as `grammar_reference.mjs` times the reference).
fn median_ns(mut f: impl FnMut()) -> f64 {
    use std::time::Instant;
    let mut n = 1u32;
    loop {
        let t = Instant::now();
        (0..n).for_each(|_| f());
        if t.elapsed().as_secs_f64() > 0.02 {
            break;
        }
        n *= 2;
    }
    let mut per: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            (0..n).for_each(|_| f());
            t.elapsed().as_nanos() as f64 / f64::from(n)
        })
        .collect();
    per.sort_by(f64::total_cmp);
    per[7]
}

/// Partner against the reference on the same inputs, in this run.
fn versus_reference(_: &mut Criterion) {
    let Some(dir) = agents() else { return };
    // `dir` is …/typeagent/grammars/ts/packages/agents.
    let root = dir.join("../../..");
    let engine = dir.join("../../../../engine");
    if !engine.join("typeagent-action-grammar.mjs").exists() {
        eprintln!(
            "SKIPPED versus the reference: ../shared/conformance/typeagent/engine is not present"
        );
        return;
    }
    let cases: Vec<_> = CASES
        .iter()
        .map(|(n, f, r, p)| (*n, format!("ts/packages/agents/{f}"), *r, *p))
        .collect();
    let json = serde_json::to_string(&cases).unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/grammar_reference.mjs");
    let out = std::process::Command::new("node")
        .arg(&script)
        .arg(&engine)
        .arg(&root)
        .arg(&json)
        .output();
    let out = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => panic!(
            "the reference bench failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            eprintln!("SKIPPED versus the reference: node: {e}");
            return;
        }
    };
    println!(
        "grammar       match: partner  reference  ratio   complete: partner  reference  ratio"
    );
    for line in out.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let name = r["name"].as_str().unwrap();
        let (_, file, request, prefix) = CASES.iter().find(|c| c.0 == name).unwrap();
        let grammar = load(&dir, file).unwrap();
        let found = match_grammar(&grammar, request, &MatchOptions::default()).len();
        assert_eq!(
            found as u64,
            r["matches"].as_u64().unwrap(),
            "{name}: as many parses"
        );
        let ours_match = median_ns(|| {
            std::hint::black_box(match_grammar(&grammar, request, &MatchOptions::default()));
        });
        let ours_complete = median_ns(|| {
            std::hint::black_box(complete(
                &grammar,
                prefix,
                Direction::Forward,
                None,
                &MatchOptions::default(),
            ));
        });
        let (theirs_match, theirs_complete) = (
            r["match_ns"].as_f64().unwrap(),
            r["complete_ns"].as_f64().unwrap(),
        );
        println!(
            "{name:<10} {:>9.1} µs {:>9.1} µs {:>6.1}×   {:>9.1} µs {:>9.1} µs {:>6.1}×",
            ours_match / 1e3,
            theirs_match / 1e3,
            theirs_match / ours_match,
            ours_complete / 1e3,
            theirs_complete / 1e3,
            theirs_complete / ours_complete,
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2));
    targets = bench, versus_reference
}
criterion_main!(benches);
