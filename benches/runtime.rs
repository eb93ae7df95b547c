//! Runtime throughput and search latency.
//!
//! - `executed_action`: one agent turn holding one memory write, through the
//!   whole pipeline — parse, permission check, execute, trace — with a
//!   durable commit (SQLite WAL, synchronous=FULL) per action.
//! - `fts_search_100k`: a two-word full-text search over 100,000 archival
//!   entries (bm25 ranking, snippets, top 10), from the keyword index;
//!   `fts_search_100k_fts5_only` is the same search by FTS5 alone.
//! - `fts_search_100k_postgres`: the same search on PostgreSQL (GIN,
//!   `ts_rank_cd`, `ts_headline`), when `PARTNER_TEST_POSTGRES` names a
//!   server: a database `partner_bench_fts` is made there, filled once,
//!   and kept for the next run.

#[path = "common/memory.rs"]
mod memory;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use partner::engine::exec::{ExecConfig, Executor, TurnContext};
use partner::policy::Policy;
use partner::store::memory::backend::Memory;
use partner::store::memory::search::{SearchDomain, SearchQuery, search_fts};

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
    let store = partner::store::memory::MemoryStore::open(dir.path().join("search.db")).unwrap();
    store
        .transaction(|tx| -> Result<(), partner::store::memory::MemoryError> {
            for i in 0..100_000u64 {
                tx.add_archival(
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
    // The keyword index a daemon builds on its first search, built here
    // before measuring (it answers the same as FTS5: tests/it/keyword_index.rs).
    let built = std::time::Instant::now();
    let before = memory::status_mb("VmRSS");
    assert!(partner::store::memory::keywords::build_now(&store.conn()).unwrap());
    eprintln!(
        "keyword index of 100,000 entries built in {:.0?}; resident memory {before:.0} MB before, {:.0} MB after",
        built.elapsed(),
        memory::status_mb("VmRSS")
    );
    {
        let conn = store.conn();
        assert_eq!(
            conn.search(&query).unwrap(),
            search_fts(&conn, &query).unwrap()
        );
    }
    let mut group = c.benchmark_group("search");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("fts_search_100k", |b| {
        b.iter(|| black_box(store.conn().search(black_box(&query)).unwrap()))
    });
    // The baseline, in the same run: FTS5 ranking every match.
    group.bench_function("fts_search_100k_fts5_only", |b| {
        b.iter(|| black_box(search_fts(&store.conn(), black_box(&query)).unwrap()))
    });
    group.finish();
}

/// The same search on PostgreSQL, over the same 100,000 entries.
fn fts_search_postgres(c: &mut Criterion) {
    let Ok(admin) = std::env::var("PARTNER_TEST_POSTGRES") else {
        eprintln!("PARTNER_TEST_POSTGRES is not set: the PostgreSQL search was not measured");
        return;
    };
    let name = "partner_bench_fts";
    let url = match admin.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{name}"),
        None => panic!("not a PostgreSQL URL: {admin}"),
    };
    let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    let exists = client
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
        .unwrap()
        .is_some();
    if !exists {
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
    }
    let store = partner::engine::store::Store::from(
        partner::store::postgres::PgStore::connect(&url).unwrap(),
    );
    let count = |agent: &str| store.read(|tx| tx.archival_count(agent)).unwrap();
    if count("ada") + count("worker") < 100_000 {
        let mut fill = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        fill.batch_execute("TRUNCATE archival").unwrap();
        let mut tx = fill.transaction().unwrap();
        for i in 0..100_000u64 {
            let agent = if i % 2 == 0 { "ada" } else { "worker" };
            tx.execute(
                "INSERT INTO archival (agent, content, created_at) VALUES ($1, $2, $3)",
                &[&agent, &sentence(i), &(i as i64)],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        fill.batch_execute("ANALYZE archival").unwrap();
    }
    let mut query = SearchQuery::new("contract deadline", Some("ada"));
    query.domains = vec![SearchDomain::Archival];
    assert!(!store.read(|tx| tx.search(&query)).unwrap().is_empty());
    let mut group = c.benchmark_group("search");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("fts_search_100k_postgres", |b| {
        b.iter(|| black_box(store.read(|tx| tx.search(black_box(&query))).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, executed_actions, fts_search, fts_search_postgres);
criterion_main!(benches);
