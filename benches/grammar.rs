//! The action grammar engine on TypeAgent's own agent grammars (read from
//! `../shared/conformance/typeagent/grammars/` when present): one match and
//! one completion per call, for requests written for each grammar. The
//! reference implementation's per-call figures on this machine's kind are
//! quoted in the README beside these.

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use partner::grammar::batch::RootLoader;
use partner::grammar::{
    Direction, LoadOptions, MatchOptions, complete, load_grammar, match_grammar,
};

/// (name, grammar file, request to match, prefix to complete)
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "player",
        "player/src/agent/playerSchema.agr",
        "play Yesterday by the Beatles",
        "play Yesterday b",
    ),
    (
        "list",
        "list/src/listSchema.agr",
        "add milk to my grocery list",
        "add milk to my gro",
    ),
    (
        "calendar",
        "calendar/src/calendarSchema.agr",
        "schedule a team sync for tomorrow at 3pm in room 4 with Alice",
        "schedule a team sync for tomorrow at ",
    ),
    (
        "desktop",
        "desktop/src/desktopSchema.agr",
        "launch notepad",
        "launch no",
    ),
    (
        "weather",
        "weather/src/weatherSchema.agr",
        "what's the weather like in Seattle",
        "what's the weather li",
    ),
];

fn agents() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/conformance/typeagent/grammars/ts/packages/agents");
    p.exists().then_some(p)
}

fn bench(c: &mut Criterion) {
    let Some(dir) = agents() else {
        eprintln!("SKIPPED: ../shared/conformance/typeagent/grammars is not present");
        return;
    };
    let options = LoadOptions {
        enable_value_expressions: true,
        start_value_required: true,
    };
    for (name, file, request, prefix) in CASES {
        let path = dir.join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("SKIPPED {name}: {} is missing", path.display());
            continue;
        };
        let loader = RootLoader {
            root: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
        };
        let grammar = match load_grammar(file, &text, &options, &loader) {
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
