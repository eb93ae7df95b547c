//! Parsing the worst input shapes at 10 KB, 100 KB and 1 MB. Parsing is
//! linear, so the time per byte of each shape stays about the same at every
//! size; the bench prints the per-byte medians and, per shape, the ratio of
//! the 1 MB figure to the 10 KB one (1.0 is perfectly linear; a quadratic
//! shape would show about 100).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use partner::dialect::DialectParser;

/// Shapes that once made parsing quadratic, and others like them.
const SHAPES: &[(&str, &str)] = &[
    ("unclosed_fence", "/recall ```\n"),
    ("unclosed_tildes", "/recall ~~~\n"),
    ("unclosed_triple", "/recall \"\"\"\n"),
    ("triples_one_line", "/reply \"\"\" "),
    ("legacy_openers", "[[A:"),
    ("legacy_on_one_line", "[[PULSE:10m]] "),
    ("unclosed_quotes", "/reply \"a "),
    ("chain_links", "/recall x -> "),
    ("failing_links", "/aaaa -> "),
    ("do_prefixes", "x /do /recall y "),
];

const SIZES: &[usize] = &[10_000, 100_000, 1_000_000];

fn input(unit: &str, size: usize) -> String {
    unit.repeat(size / unit.len() + 1)[..size].to_string()
}

fn bench(c: &mut Criterion) {
    let parser = DialectParser::new();
    let mut group = c.benchmark_group("parse_worst");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for (name, unit) in SHAPES {
        for size in SIZES {
            let text = input(unit, *size);
            group.throughput(Throughput::Bytes(*size as u64));
            group.bench_with_input(BenchmarkId::new(*name, size), &text, |b, text| {
                b.iter(|| black_box(parser.parse(black_box(text))))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);

fn median_ns(name: &str, size: usize) -> Option<f64> {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| std::path::PathBuf::from("target"), Into::into);
    let path = dir
        .join("criterion/parse_worst")
        .join(name)
        .join(size.to_string())
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    println!("\nshape                 ns/byte @10KB  @100KB   @1MB   1MB/10KB");
    for (name, _) in SHAPES {
        let per_byte: Vec<Option<f64>> = SIZES
            .iter()
            .map(|s| median_ns(name, *s).map(|ns| ns / *s as f64))
            .collect();
        if let [Some(a), Some(b), Some(c)] = per_byte[..] {
            println!("{name:20} {a:13.2} {b:7.2} {c:7.2} {:9.2}", c / a);
        }
    }
}
