//! The action grammar engine on TypeAgent's own agent grammars (read from
//! `../shared/conformance/typeagent/grammars/` when present): one match and
//! one completion per call, for requests written for each of ten grammars.
//! Then, in the same run, the same inputs through TypeAgent's own engine
//! under Node (`benches/grammar_reference.mjs`, where Node and
//! `../shared/conformance/typeagent/engine/` are present), both timed the
//! same way (batches of at least 20 ms), a batch on each in turn, 45 pairs
//! a case in five rounds, and the median of the pairs' ratios.

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

/// Rounds of the comparison; in each, every case is timed on both engines
/// in [`PAIRS`] pairs of batches.
const ROUNDS: usize = 5;

/// Pairs of batches a case is timed in per round: a batch on the
/// reference, then one here, right after it, so that both see the machine
/// in the same state (this one's speed can change by half from one second
/// to the next).
const PAIRS: usize = 9;

/// Calls a batch of `f` takes: doubled until they take at least 20 ms
/// (as `grammar_reference.mjs` counts the reference's).
fn batch_size(mut f: impl FnMut()) -> u32 {
    let mut n = 1u32;
    loop {
        let t = std::time::Instant::now();
        (0..n).for_each(|_| f());
        if t.elapsed().as_secs_f64() > 0.02 {
            return n;
        }
        n *= 2;
    }
}

/// Nanoseconds per call of a batch of `n` calls of `f`.
fn batch_ns(n: u32, mut f: impl FnMut()) -> f64 {
    let t = std::time::Instant::now();
    (0..n).for_each(|_| f());
    t.elapsed().as_nanos() as f64 / f64::from(n)
}

/// The median of `values`.
fn median(values: Vec<f64>) -> f64 {
    quantile(&values, 0.5)
}

/// The value `q` of the way up `values` sorted (0.5: the median).
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// TypeAgent's engine under Node, timing a case when asked.
struct Reference {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Reference {
    /// Starts the reference on `cases`; with each case's parse count.
    fn start(
        engine: &std::path::Path,
        root: &std::path::Path,
        cases: &str,
    ) -> std::io::Result<(Reference, Vec<(String, u64)>)> {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/grammar_reference.mjs");
        let mut child = Command::new("node")
            .arg(&script)
            .arg(engine)
            .arg(root)
            .arg(cases)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("no pipes to node"));
        };
        let mut reference = Reference {
            child,
            input,
            output: std::io::BufReader::new(output).lines(),
        };
        let mut counts = Vec::new();
        loop {
            let line = reference.line()?;
            if line == "ready" {
                return Ok((reference, counts));
            }
            let r: serde_json::Value = serde_json::from_str(&line)?;
            let name = r["name"].as_str().unwrap_or_default().to_string();
            counts.push((name, r["matches"].as_u64().unwrap_or(u64::MAX)));
        }
    }

    fn line(&mut self) -> std::io::Result<String> {
        match self.output.next() {
            Some(line) => line,
            None => Err(std::io::Error::other("the reference ended")),
        }
    }

    /// The reference's nanoseconds per `what` (`match` or `complete`) of
    /// case `name`, over one batch.
    fn time(&mut self, name: &str, what: &str) -> f64 {
        use std::io::Write;
        writeln!(self.input, "{name} {what}").expect("the reference reads");
        let line = self.line().expect("the reference answers");
        let r: serde_json::Value = serde_json::from_str(&line).expect("the reference's JSON");
        r["ns"]
            .as_f64()
            .unwrap_or_else(|| panic!("the reference: {line}"))
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Partner against the reference on the same inputs, in this run: each
/// case timed on both, batch after batch; the ratio is the median of the
/// pairs' ratios (with the lowest and highest), the times the medians.
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
    let (mut reference, counts) = match Reference::start(&engine, &root, &json) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("SKIPPED versus the reference: node: {e}");
            return;
        }
    };
    let grammars: Vec<_> = CASES
        .iter()
        .map(|(name, file, request, _)| {
            let grammar = load(&dir, file).unwrap();
            let found = match_grammar(&grammar, request, &MatchOptions::default()).len();
            let theirs = counts.iter().find(|c| c.0 == *name).map(|c| c.1);
            assert_eq!(Some(found as u64), theirs, "{name}: as many parses");
            grammar
        })
        .collect();
    // For each case, match and complete: (partner, reference) per pair.
    let mut pairs = vec![[Vec::new(), Vec::new()]; CASES.len()];
    let mut sizes = vec![[0u32; 2]; CASES.len()];
    for _ in 0..ROUNDS {
        for (k, (name, _, request, prefix)) in CASES.iter().enumerate() {
            let grammar = &grammars[k];
            let matching = || {
                std::hint::black_box(match_grammar(grammar, request, &MatchOptions::default()));
            };
            let completing = || {
                std::hint::black_box(complete(
                    grammar,
                    prefix,
                    Direction::Forward,
                    None,
                    &MatchOptions::default(),
                ));
            };
            for (kind, what) in ["match", "complete"].into_iter().enumerate() {
                let run: &dyn Fn() = if kind == 0 { &matching } else { &completing };
                if sizes[k][kind] == 0 {
                    sizes[k][kind] = batch_size(run);
                }
                for _ in 0..PAIRS {
                    let theirs = reference.time(name, what);
                    let ours = batch_ns(sizes[k][kind], run);
                    pairs[k][kind].push((ours, theirs));
                }
            }
        }
    }
    println!(
        "grammar     match: partner  reference  ratio (10%–90% of pairs)   complete: partner  reference  ratio (10%–90% of pairs)"
    );
    for (k, (name, ..)) in CASES.iter().enumerate() {
        let cell = |pairs: &Vec<(f64, f64)>| {
            let ratios: Vec<f64> = pairs.iter().map(|(o, t)| t / o).collect();
            let (lo, hi) = (quantile(&ratios, 0.1), quantile(&ratios, 0.9));
            format!(
                "{:>9.2} µs {:>9.2} µs {:>6.1}× ({lo:.1}–{hi:.1})",
                median(pairs.iter().map(|p| p.0).collect()) / 1e3,
                median(pairs.iter().map(|p| p.1).collect()) / 1e3,
                median(ratios),
            )
        };
        println!("{name:<10} {}   {}", cell(&pairs[k][0]), cell(&pairs[k][1]));
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2));
    targets = bench, versus_reference
}
criterion_main!(benches);
