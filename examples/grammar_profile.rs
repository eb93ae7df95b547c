//! Matches one of the grammar bench's requests N times, for counting the
//! work per match under a profiler:
//! `valgrind --tool=callgrind target/release/examples/grammar_profile calendar 2000`
//! and again with 4000; the difference over 2,000 is the instructions of one
//! match, without loading the grammar.

#[path = "../benches/common/grammar_cases.rs"]
mod cases;

use partner::grammar::{MatchOptions, match_grammar};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "calendar".into());
    let times: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let Some(dir) = cases::agents() else {
        eprintln!("../shared/conformance/typeagent/grammars is not present");
        std::process::exit(2);
    };
    let Some((_, file, request, _)) = cases::CASES.iter().find(|c| c.0 == name) else {
        eprintln!("no case named {name}");
        std::process::exit(2);
    };
    let grammar = cases::load(&dir, file).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let mut parses = 0;
    for _ in 0..times {
        parses += match_grammar(&grammar, request, &MatchOptions::default()).len();
    }
    println!("{name}: {parses} parses over {times} matches");
}
