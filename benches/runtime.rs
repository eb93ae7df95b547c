//! Runtime throughput and search latency.
//!
//! - `executed_action`: one agent turn holding one memory write, through the
//!   whole pipeline — parse, permission check, execute, trace — with a
//!   durable commit (SQLite WAL, synchronous=FULL) per action.
//! - `fts_search_100k`: a two-word full-text search over 100,000 archival
//!   entries (bm25 ranking, snippets, top 10).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use partner::exec::{ExecConfig, Executor, TurnContext};
use partner::memory::records::add_archival;
use partner::memory::search::{SearchDomain, SearchQuery, search};
use partner::permission::Policy;

const WORDS: &[&str] = &[
    "launch",
    "contract",
    "invoice",
    "meeting",
    "budget",
    "review",
    "design",
    "release",
    "customer",
    "deadline",
    "roadmap",
    "security",
    "migration",
    "incident",
    "pricing",
    "hiring",
    "travel",
    "garden",
    "recipe",
    "concert",
    "weather",
    "project",
    "memory",
    "partner",
    "agent",
    "notes",
    "summary",
    "question",
    "answer",
    "decision",
    "morning",
    "evening",
    "friday",
    "monday",
    "email",
    "phone",
    "ticket",
    "server",
    "database",
    "backup",
];

/// Deterministic pseudo-random sentence number `i`.
fn sentence(i: u64) -> String {
    let mut x = i
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut words = Vec::with_capacity(12);
    for _ in 0..12 {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51afd7ed558ccd);
        words.push(WORDS[(x % WORDS.len() as u64) as usize]);
    }
    format!("Entry {i}: {}.", words.join(" "))
}

fn executed_actions(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::permissive();
    let exec = Executor::open(&dir.path().join("bench.db"), policy, ExecConfig::default()).unwrap();
    let mut group = c.benchmark_group("runtime");
    group.throughput(Throughput::Elements(1));
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(8));
    let mut i = 0u64;
    group.bench_function("executed_action", |b| {
        b.iter(|| {
            i += 1;
            let mut ctx = TurnContext::new("ada", "main", "bench");
            let report = exec.run_turn(&mut ctx, &format!("/recall insert \"{}\"", sentence(i)));
            black_box(report)
        })
    });
    group.finish();
}

fn fts_search(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = partner::memory::MemoryStore::open(dir.path().join("search.db")).unwrap();
    store
        .transaction(|tx| -> Result<(), partner::memory::MemoryError> {
            for i in 0..100_000u64 {
                add_archival(
                    tx,
                    if i % 2 == 0 { "ada" } else { "worker" },
                    &sentence(i),
                    i as i64,
                )?;
            }
            Ok(())
        })
        .unwrap();
    let mut query = SearchQuery::new("contract deadline", Some("ada"));
    query.domains = vec![SearchDomain::Archival];
    assert!(!search(&store.conn(), &query).unwrap().is_empty());
    let mut group = c.benchmark_group("search");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("fts_search_100k", |b| {
        b.iter(|| black_box(search(&store.conn(), black_box(&query)).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, executed_actions, fts_search);
criterion_main!(benches);
