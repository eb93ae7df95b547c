//! The action grammar engine on TypeAgent's own agent grammars (read from
//! `../shared/conformance/typeagent/grammars/` when present): one match and
//! one completion per call, for requests written for each grammar. The
//! reference implementation's per-call figures on this machine's kind are
//! quoted in the README beside these.

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

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
