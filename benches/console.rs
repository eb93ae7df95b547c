//! Time to lay out and render one full console frame (200×60) with the
//! console full: 100,000 turns pushed (it keeps at most
//! `partner::tui::model::MAX_TURNS`, dropping the oldest tenth past it) and
//! 100,000 trace records (ratatui's TestBackend, so only the layout and
//! rendering are measured, not the terminal's I/O).

#[path = "../tests/support/console.rs"]
mod console;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use partner::agent::provider::PromptKind;
use partner::trace::TraceOutcome;
use partner::tui::panes::Pane;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn loaded() -> partner::tui::app::App {
    let mut app = console::scene("dark");
    let text = "Checking the notes before I answer.\n/recall project_notes -> /summarize\nThe launch is on Friday; I'll keep you posted.";
    for i in 0..100_000 {
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
    app.model.trace = (1..=100_000u64)
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
    app
}

fn bench(c: &mut Criterion) {
    let mut app = loaded();
    assert!(app.model.turns.len() >= 90_000 && app.model.trace.len() == 100_000);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut group = c.benchmark_group("console");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(6));
    group.bench_function("frame_200x60_100k", |b| {
        b.iter(|| {
            terminal
                .draw(|f| partner::tui::app::render(black_box(&app), f))
                .unwrap();
        })
    });
    app.turns.agent = Some("scout".into());
    app.trace.agent = Some("scout".into());
    app.focus = Pane::Trace;
    group.bench_function("frame_200x60_100k_filtered", |b| {
        b.iter(|| {
            terminal
                .draw(|f| partner::tui::app::render(black_box(&app), f))
                .unwrap();
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
