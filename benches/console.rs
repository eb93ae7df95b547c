//! Time to lay out and render one full console frame (200×60) after
//! 100,000 and 1,000,000 turns and as many trace records reached the
//! console the way the runtime and the database hand them over (it holds a
//! window of each: `partner::tui::model::MAX_TURNS` turns and `MAX_TRACE`
//! trace records), with the process's resident memory after each load.
//! ratatui's TestBackend, so only the layout and rendering are measured,
//! not the terminal's I/O.

#[path = "../tests/it/support/console.rs"]
mod console;

#[path = "common/memory.rs"]
mod memory;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use partner::runtime::provider::PromptKind;
use partner::store::trace::TraceOutcome;
use partner::tui::panes::Pane;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn loaded(n: usize) -> partner::tui::app::App {
    let mut app = console::scene("dark");
    let text = "Checking the notes before I answer.\n/recall project_notes -> /summarize\nThe launch is on Friday; I'll keep you posted.";
    for i in 0..n {
        let agent = ["sage", "anchor", "scout"][i % 3];
        console::turn(
            &mut app,
            agent,
            PromptKind::Pulse,
            text,
            &[(
                "/recall project_notes -> /summarize",
                "/recall read project_notes -> /summarize",
                console::executed(
                    agent,
                    "/recall read project_notes -> /summarize",
                    "project_notes (archival, v1)",
                ),
            )],
            console::NOW - 1000,
        );
    }
    // The trace arrives in reads of at most 100,000 records, oldest first.
    let mut seq = 1u64;
    while seq <= n as u64 {
        let batch: Vec<_> = (seq..=(seq + 99_999).min(n as u64))
            .map(|i| {
                console::record(
                    i,
                    ["sage", "anchor", "scout"][(i % 3) as usize],
                    "/recall read project_notes",
                    TraceOutcome::Executed,
                    "project_notes (archival, v1)",
                )
            })
            .collect();
        seq += batch.len() as u64;
        app.model.receive_trace(batch, false);
    }
    app
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("console");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(6));
    for (n, name) in [(100_000, "100k"), (1_000_000, "1m")] {
        let before = memory::status_mb("VmRSS");
        let mut app = loaded(n);
        println!(
            "console after {n} turns and trace records: holds {} turns, {} records; resident {:.0} MB (+{:.0} MB)",
            app.model.turns.len(),
            app.model.trace.len(),
            memory::status_mb("VmRSS"),
            memory::status_mb("VmRSS") - before
        );
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        group.bench_function(format!("frame_200x60_{name}"), |b| {
            b.iter(|| {
                terminal
                    .draw(|f| partner::tui::app::render(black_box(&app), f))
                    .unwrap();
            })
        });
        app.turns.agent = Some("scout".into());
        app.trace.agent = Some("scout".into());
        app.focus = Pane::Trace;
        group.bench_function(format!("frame_200x60_{name}_filtered"), |b| {
            b.iter(|| {
                terminal
                    .draw(|f| partner::tui::app::render(black_box(&app), f))
                    .unwrap();
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
