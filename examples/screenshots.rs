//! Regenerates the pictures in `screenshots/` from the console's test
//! backend: each scene is rendered by the real view code into a ratatui
//! buffer, turned into ANSI text, then SVG (anstyle-svg), then PNG (resvg).
//!
//! ```sh
//! cargo run --example screenshots
//! ```

#[path = "../tests/support/console.rs"]
mod console;

use std::fmt::Write as _;
use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use partner::tui::app::{App, Pane, ReplayState};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// An SGR parameter for a colour (foreground when `fg`).
fn sgr(color: Color, fg: bool) -> Option<String> {
    let base = if fg { 30 } else { 40 };
    Some(match color {
        Color::Reset => return None,
        Color::Rgb(r, g, b) => format!("{};2;{r};{g};{b}", if fg { 38 } else { 48 }),
        Color::Indexed(i) => format!("{};5;{i}", if fg { 38 } else { 48 }),
        Color::Black => format!("{}", base),
        Color::Red => format!("{}", base + 1),
        Color::Green => format!("{}", base + 2),
        Color::Yellow => format!("{}", base + 3),
        Color::Blue => format!("{}", base + 4),
        Color::Magenta => format!("{}", base + 5),
        Color::Cyan => format!("{}", base + 6),
        Color::Gray => format!("{}", base + 7),
        Color::DarkGray => format!("{}", base + 60),
        Color::LightRed => format!("{}", base + 61),
        Color::LightGreen => format!("{}", base + 62),
        Color::LightYellow => format!("{}", base + 63),
        Color::LightBlue => format!("{}", base + 64),
        Color::LightMagenta => format!("{}", base + 65),
        Color::LightCyan => format!("{}", base + 66),
        Color::White => format!("{}", base + 67),
    })
}

/// The buffer as text with ANSI colour escapes.
fn ansi(buffer: &Buffer) -> String {
    let mut out = String::new();
    let area = buffer.area;
    for y in area.top()..area.bottom() {
        let mut last = String::new();
        for x in area.left()..area.right() {
            let cell = &buffer[(x, y)];
            let mut codes = vec!["0".to_string()];
            if cell.modifier.contains(Modifier::BOLD) {
                codes.push("1".into());
            }
            if cell.modifier.contains(Modifier::ITALIC) {
                codes.push("3".into());
            }
            if cell.modifier.contains(Modifier::UNDERLINED) {
                codes.push("4".into());
            }
            let (fg, bg) = if cell.modifier.contains(Modifier::REVERSED) {
                (cell.bg, cell.fg)
            } else {
                (cell.fg, cell.bg)
            };
            codes.extend(sgr(fg, true));
            codes.extend(sgr(bg, false));
            let code = codes.join(";");
            if code != last {
                // One escape per attribute: converters read these most reliably.
                for part in &codes {
                    let _ = write!(out, "\x1b[{part}m");
                }
                last = code;
            }
            out.push_str(cell.symbol());
        }
        out.push_str("\x1b[0m\n");
    }
    out
}

fn render(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|f| partner::tui::view::render(app, f))
        .expect("the frame renders");
    ansi(terminal.backend().buffer())
}

fn save(name: &str, ansi_text: &str) {
    let svg = anstyle_svg::Term::new()
        .bg_color(anstyle::RgbColor(0x1e, 0x1e, 0x2e).into())
        .fg_color(anstyle::RgbColor(0xcd, 0xd6, 0xf4).into())
        .render_svg(ansi_text);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("screenshots");
    std::fs::create_dir_all(&dir).expect("screenshots/ can be created");
    let mut options = resvg::usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    options
        .fontdb_mut()
        .set_monospace_family("DejaVu Sans Mono");
    let tree = resvg::usvg::Tree::from_str(&svg, &options).expect("anstyle-svg writes valid SVG");
    let size = tree.size().to_int_size();
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("a non-empty picture");
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    let path = dir.join(format!("{name}.png"));
    pixmap.save_png(&path).expect("the PNG is written");
    println!(
        "wrote {} ({}x{})",
        path.display(),
        size.width(),
        size.height()
    );
}

fn key(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn main() {
    let app = console::scene("dark");
    save("console-turns", &render(&app, 180, 44));

    let mut app = console::scene("dark");
    app.focus = Pane::Pending;
    app.pending_sel = 1;
    app.zoom = true;
    save("pending-diff", &render(&app, 110, 20));

    let mut app = console::scene("dark");
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('i'));
    key(&mut app, KeyCode::End);
    for c in " Likes tea.".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    save("memory-editing", &render(&app, 110, 26));

    let mut app = console::scene("dark");
    app.focus = Pane::Trace;
    app.zoom = true;
    save("trace", &render(&app, 110, 14));

    let mut app = console::scene("dark");
    let records = app.model.trace.clone();
    app.replay = Some(ReplayState {
        path: "demo.trace.jsonl".into(),
        records,
        step: 2,
        playing: true,
        speed: 2.0,
        divergence: None,
        verified: true,
    });
    app.focus = Pane::Replay;
    app.zoom = true;
    save("replay", &render(&app, 110, 12));

    let app = console::scene("light");
    save("console-light", &render(&app, 180, 44));
}
