//! Pattern Lisp: a tool over a state of 1,000 nodes (the seed asks for
//! under a second), and evaluation throughput of a small recursive
//! program.

use criterion::{Criterion, criterion_group, criterion_main};
use partner::engine::exec::tools::state_of;
use partner::lisp::Lisp;
use partner::lisp::tool::validate;
use partner::store::memory::{Block, BlockKind, BlockPermission};

/// Ticks every open item of every block: reads and rewrites all of them.
const TICK_ALL: &str = r#"
(define (tick line)
  (if (string-contains? line "[ ]") (string-join (string-split line "[ ]") "[x]") line))
(lambda (state)
  (pattern-set-elements state
    (map (lambda (b)
           (subject-set b value:
             (string-join (map tick (string-split (subject-get b value: "") "\n")) "\n")))
         (pattern-elements state))))
"#;

fn blocks(n: usize) -> Vec<Block> {
    (0..n)
        .map(|i| Block {
            id: i as i64,
            agent: "ada".into(),
            label: format!("list_{i:04}"),
            kind: BlockKind::Working,
            description: String::new(),
            value: format!("- [ ] item {i}\n- [x] done {i}\n- [ ] other {i}"),
            char_limit: 5000,
            permission: BlockPermission::ReadWrite,
            pinned: false,
            shared: false,
            version: 1,
            created_at: 0,
            updated_at: 0,
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    // A state of 1,000 nodes: the state and 999 blocks.
    let state = state_of("ada", "", 0, &blocks(999));
    assert_eq!(state.size(), 1000);
    let tool = validate("tick_all", TICK_ALL).expect("the tool is valid");
    let out = tool.run(&state, 100_000_000).expect("the tool runs");
    assert_eq!(out.size(), 1000);
    c.bench_function("lisp/tool_1000_nodes", |b| {
        b.iter(|| tool.run(&state, 100_000_000).expect("runs"))
    });

    let mut lisp = Lisp::new();
    lisp.eval_str("(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))")
        .expect("defines");
    let fib = lisp.global("fib").expect("fib").clone();
    c.bench_function("lisp/fib_20", |b| {
        b.iter(|| {
            lisp.call(&fib, vec![partner::lisp::Value::Int(20)])
                .expect("runs")
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
