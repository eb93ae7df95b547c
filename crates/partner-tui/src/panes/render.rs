//! Drawing helpers the panes share: borders, word wrapping, diffs, ages
//! and durations in human units, and a colour per agent.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};
use unicode_width::UnicodeWidthChar;

use crate::model::Model;
use crate::theme::Theme;
use partner_core::clock::Millis;

/// Tab stops in turns and blocks.
const TAB: usize = 4;

/// A pane's border and title: thick when it has the focus.
pub fn pane_block(theme: &Theme, title: &str, focused: bool) -> Block<'static> {
    Block::new()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(theme.style(if focused {
            "ui.border_focused"
        } else {
            "ui.border"
        }))
        .title(Span::styled(format!(" {title} "), theme.style("ui.title")))
}

/// A popup's border and title.
pub fn popup(theme: &Theme, title: &str) -> Block<'static> {
    Block::new()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.style("ui.border_focused"))
        .title(Span::styled(format!(" {title} "), theme.style("ui.title")))
        .style(theme.style("ui.background"))
}

/// A rectangle of at most `width`×`height` in the middle of `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// A popup as large as what it shows — its widest line or its title, and
/// its lines — within `area` less a margin, and at least 40 columns wide.
pub fn fitted(area: Rect, widest: usize, lines: usize, title: &str) -> Rect {
    use unicode_width::UnicodeWidthStr;
    let most_w = area.width.saturating_sub(6);
    let most_h = area.height.saturating_sub(4);
    let want_w = widest.max(title.width() + 2).saturating_add(2);
    let w = u16::try_from(want_w)
        .unwrap_or(u16::MAX)
        .clamp(40.min(most_w), most_w);
    let h = u16::try_from(lines.saturating_add(2))
        .unwrap_or(u16::MAX)
        .clamp(3.min(most_h), most_h);
    centered(area, w, h)
}

/// A duration in the largest unit that keeps it readable: `45s`, `14m`,
/// `2h 5m`, `3d`.
pub fn human_duration(ms: Millis) -> String {
    let s = (ms.max(0) / 1000) as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 if s % 3600 >= 60 => format!("{}h {}m", s / 3600, (s % 3600) / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// How long ago `then` was at `now`.
pub fn age(now: Millis, then: Millis) -> String {
    human_duration(now - then)
}

/// The style of an agent's name: each agent of the constellation its own
/// colour (by its place among the agents), the same in every pane.
pub fn agent_style(theme: &Theme, model: &Model, agent: &str) -> Style {
    const ROLES: [&str; 6] = [
        "ui.agent",
        "ui.agent_2",
        "ui.agent_3",
        "ui.agent_4",
        "ui.agent_5",
        "ui.agent_6",
    ];
    let index = model
        .agents
        .iter()
        .position(|a| a.name == agent)
        .unwrap_or_else(|| {
            agent.bytes().fold(0usize, |h, b| {
                h.wrapping_mul(31).wrapping_add(usize::from(b))
            })
        });
    theme.style(ROLES[index % ROLES.len()])
}

/// Diff lines (unified format) styled by kind. A `\ No newline` marker is
/// dropped, and a last line changed only by its missing line end is shown
/// once as unchanged rather than removed and added.
pub fn diff_lines(theme: &Theme, diff: &str) -> Vec<Line<'static>> {
    let lines: Vec<&str> = diff.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with("\\ No newline") {
            i += 1;
            continue;
        }
        // `-x`, `\ No newline`, `+x` (or `-x`, `+x`, `\ No newline`): the
        // same line, only its ending differs.
        if let Some(removed) = l.strip_prefix('-').filter(|_| !l.starts_with("---")) {
            let next = lines[i + 1..]
                .iter()
                .filter(|n| !n.starts_with("\\ No newline"))
                .take(1)
                .next();
            let markers = lines[i + 1..]
                .iter()
                .take(3)
                .any(|n| n.starts_with("\\ No newline"));
            if markers && next.and_then(|n| n.strip_prefix('+')) == Some(removed) {
                out.push(Line::from(Span::styled(
                    format!(" {removed}"),
                    theme.style("ui.text"),
                )));
                // Skip up to and including the matching `+` line.
                let mut j = i + 1;
                while j < lines.len() && !lines[j].starts_with('+') {
                    j += 1;
                }
                i = j + 1;
                continue;
            }
        }
        let role = if l.starts_with("+++") || l.starts_with("---") || l.starts_with("@@") {
            "ui.diff_header"
        } else if l.starts_with('+') {
            "ui.diff_added"
        } else if l.starts_with('-') {
            "ui.diff_removed"
        } else {
            "ui.text"
        };
        out.push(Line::from(Span::styled(l.to_string(), theme.style(role))));
        i += 1;
    }
    out
}

/// A piece of styled text to wrap: a word (with its style and width), a
/// space or a line break.
enum Piece {
    Word(String, Style, usize),
    Tab(Style),
    Space(Style),
    Break,
}

/// Cuts styled text into words, spaces, tabs and line breaks.
fn pieces(spans: Vec<(String, Style)>) -> Vec<Piece> {
    let mut pieces = Vec::new();
    for (text, style) in spans {
        let mut word = String::new();
        let mut w = 0;
        for c in text.chars() {
            match c {
                '\n' | ' ' | '\t' => {
                    if !word.is_empty() {
                        pieces.push(Piece::Word(std::mem::take(&mut word), style, w));
                        w = 0;
                    }
                    pieces.push(match c {
                        '\n' => Piece::Break,
                        '\t' => Piece::Tab(style),
                        _ => Piece::Space(style),
                    });
                }
                '\r' => {}
                c => {
                    word.push(c);
                    w += c.width().unwrap_or(0);
                }
            }
        }
        if !word.is_empty() {
            pieces.push(Piece::Word(word, style, w));
        }
    }
    pieces
}

/// Lines being filled to a width.
struct Wrapper {
    width: usize,
    lines: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    used: usize,
    pending_space: Option<Style>,
}

impl Wrapper {
    fn flush(&mut self) {
        self.lines
            .push(Line::from(std::mem::take(&mut self.current)));
        self.used = 0;
    }

    fn push(&mut self, text: impl Into<std::borrow::Cow<'static, str>>, style: Style, w: usize) {
        self.current.push(Span::styled(text, style));
        self.used += w;
    }

    fn space(&mut self, style: Style) {
        if let Some(prev) = self.pending_space.replace(style) {
            // Several spaces in a row are kept.
            if self.used < self.width {
                self.push(" ", prev, 1);
            }
        }
    }

    fn tab(&mut self, style: Style) {
        if let Some(prev) = self.pending_space.take()
            && self.used < self.width
        {
            self.push(" ", prev, 1);
        }
        let fill = (TAB - self.used % TAB).min(self.width.saturating_sub(self.used));
        self.push(" ".repeat(fill), style, fill);
    }

    fn word(&mut self, word: String, style: Style, w: usize) {
        let space = usize::from(self.pending_space.is_some());
        if self.used > 0 && self.used + space + w > self.width {
            self.flush();
        } else if let Some(prev) = self.pending_space
            && (self.used > 0 || space > 0)
        {
            self.push(" ", prev, 1);
        }
        self.pending_space = None;
        if w <= self.width.saturating_sub(self.used) {
            self.push(word, style, w);
            return;
        }
        // Longer than a line: break it by columns.
        let mut piece = String::new();
        for c in word.chars() {
            let cw = c.width().unwrap_or(0);
            if self.used + cw > self.width {
                if !piece.is_empty() {
                    self.current
                        .push(Span::styled(std::mem::take(&mut piece), style));
                }
                self.flush();
            }
            piece.push(c);
            self.used += cw;
        }
        if !piece.is_empty() {
            self.current.push(Span::styled(piece, style));
        }
    }
}

/// Splits styled text into lines of at most `width` columns, breaking at
/// spaces where it can (a word longer than the line is broken inside);
/// tabs become spaces to the next tab stop.
pub fn wrap_words(spans: Vec<(String, Style)>, width: usize) -> Vec<Line<'static>> {
    let mut wrap = Wrapper {
        width: width.max(1),
        lines: Vec::new(),
        current: Vec::new(),
        used: 0,
        pending_space: None,
    };
    for piece in pieces(spans) {
        match piece {
            Piece::Break => {
                wrap.flush();
                wrap.pending_space = None;
            }
            Piece::Space(style) => wrap.space(style),
            Piece::Tab(style) => wrap.tab(style),
            Piece::Word(word, style, w) => wrap.word(word, style, w),
        }
    }
    if !wrap.current.is_empty() {
        wrap.lines.push(Line::from(wrap.current));
    }
    wrap.lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn words_wrap_at_spaces_and_tabs_become_spaces() {
        let s = Style::default();
        let lines = wrap_words(vec![("the launch is on friday".into(), s)], 10);
        assert_eq!(text(&lines), ["the launch", "is on", "friday"]);
        let lines = wrap_words(vec![("a\tb\n\tc".into(), s)], 20);
        assert_eq!(text(&lines), ["a   b", "    c"]);
        let lines = wrap_words(vec![("abcdefghijkl".into(), s)], 5);
        assert_eq!(text(&lines), ["abcde", "fghij", "kl"]);
        let lines = wrap_words(vec![("日本語のテキスト".into(), s)], 6);
        assert_eq!(text(&lines), ["日本語", "のテキ", "スト"]);
    }

    #[test]
    fn durations_read_in_human_units() {
        assert_eq!(human_duration(45_000), "45s");
        assert_eq!(human_duration(895_000), "14m");
        assert_eq!(human_duration(7_500_000), "2h 5m");
        assert_eq!(human_duration(7_200_000), "2h");
        assert_eq!(human_duration(300_000_000), "3d");
    }

    #[test]
    fn a_missing_final_newline_is_not_a_change() {
        let theme = Theme::builtin("dark").unwrap();
        let diff = partner_protocol::wire::diff("notes", "a\nb", "a\nb\nc", 1, 2);
        let shown: Vec<String> = text(&diff_lines(&theme, &diff));
        assert!(
            !shown.iter().any(|l| l == "-b"),
            "the unchanged last line is not shown as removed: {shown:?}"
        );
        assert!(shown.iter().any(|l| l == "+c"), "{shown:?}");
    }
}
