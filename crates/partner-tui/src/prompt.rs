//! The one-line prompt (the `:` command line, search, a deny reason, a
//! message): a line editor with a cursor and the usual editing keys
//! (Ctrl-A/E, Ctrl-W, Ctrl-U, Ctrl-K, word moves with Alt-B/F or
//! Ctrl-Left/Right), history kept across sessions, and completion.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Most history lines kept.
pub const MAX_HISTORY: usize = 500;

/// Longest line the prompt holds.
pub const MAX_LINE: usize = 4096;

/// A line being edited: its text and the cursor (a byte offset on a
/// character boundary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEditor {
    text: String,
    cursor: usize,
}

/// What a key did to the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// The line changed or the cursor moved.
    Changed,
    /// Enter: the line is done.
    Submit,
    /// Esc: the prompt is abandoned.
    Cancel,
    /// Tab: complete.
    Complete,
    /// Up: the previous history line.
    Older,
    /// Down: the next history line.
    Newer,
    /// The key means nothing here.
    Ignored,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl LineEditor {
    /// A line holding `text`, the cursor at its end.
    pub fn with_text(text: &str) -> Self {
        let mut line = LineEditor::default();
        line.set(text);
        line
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor, as a byte offset.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Replaces the text, the cursor at its end.
    pub fn set(&mut self, text: &str) {
        let mut text: String = text.replace(['\n', '\r'], " ");
        if text.len() > MAX_LINE {
            let mut end = MAX_LINE;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        self.cursor = text.len();
        self.text = text;
    }

    /// Moves the cursor to byte `at` (kept on a character boundary).
    pub fn set_cursor(&mut self, at: usize) {
        let mut at = at.min(self.text.len());
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        self.cursor = at;
    }

    /// Inserts text at the cursor (a paste: line breaks become spaces).
    pub fn insert(&mut self, text: &str) {
        let room = MAX_LINE.saturating_sub(self.text.len());
        let mut piece: String = text.replace(['\n', '\r'], " ").replace('\t', " ");
        if piece.len() > room {
            let mut end = room;
            while !piece.is_char_boundary(end) {
                end -= 1;
            }
            piece.truncate(end);
        }
        self.text.insert_str(self.cursor, &piece);
        self.cursor += piece.len();
    }

    fn prev_boundary(&self, at: usize) -> usize {
        self.text[..at].char_indices().last().map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self, at: usize) -> usize {
        self.text[at..]
            .chars()
            .next()
            .map_or(at, |c| at + c.len_utf8())
    }

    /// Where the word before the cursor starts.
    fn word_start(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches(|c: char| !is_word(c));
        trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| !is_word(*c))
            .map_or(0, |(i, c)| i + c.len_utf8())
    }

    /// Where the word after the cursor ends.
    fn word_end(&self) -> usize {
        let after = &self.text[self.cursor..];
        let skip = after.len() - after.trim_start_matches(|c: char| !is_word(c)).len();
        let rest = &after[skip..];
        let word = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
        self.cursor + skip + word
    }

    /// Applies one key.
    pub fn key(&mut self, key: KeyEvent) -> Edit {
        if let Some(edit) = outside_edit(key) {
            return edit;
        }
        if self.moved(key) || self.edited(key) {
            Edit::Changed
        } else {
            Edit::Ignored
        }
    }

    /// Moves the cursor for a movement key (by character, word or to an
    /// end, Emacs style); false for any other key.
    fn moved(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        self.cursor = match key.code {
            KeyCode::Char('a') if ctrl => 0,
            KeyCode::Home => 0,
            KeyCode::Char('e') if ctrl => self.text.len(),
            KeyCode::End => self.text.len(),
            KeyCode::Char('b') if alt => self.word_start(),
            KeyCode::Left if ctrl || alt => self.word_start(),
            KeyCode::Char('f') if alt => self.word_end(),
            KeyCode::Right if ctrl || alt => self.word_end(),
            KeyCode::Char('b') if ctrl => self.prev_boundary(self.cursor),
            KeyCode::Left => self.prev_boundary(self.cursor),
            KeyCode::Char('f') if ctrl => self.next_boundary(self.cursor),
            KeyCode::Right => self.next_boundary(self.cursor),
            _ => return false,
        };
        true
    }

    /// Changes the text for an editing key (deleting a character, a word,
    /// to either end, or typing one within [`MAX_LINE`]); false for any
    /// other key.
    fn edited(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('w') if ctrl => self.delete_word(),
            KeyCode::Backspace if ctrl || alt => self.delete_word(),
            KeyCode::Char('u') if ctrl => {
                self.text.replace_range(..self.cursor, "");
                self.cursor = 0;
            }
            KeyCode::Char('k') if ctrl => self.text.truncate(self.cursor),
            KeyCode::Char('d') if ctrl => self.delete_forward(),
            KeyCode::Delete => self.delete_forward(),
            KeyCode::Backspace => {
                if self.cursor > 0 {
                    let start = self.prev_boundary(self.cursor);
                    self.text.replace_range(start..self.cursor, "");
                    self.cursor = start;
                }
            }
            KeyCode::Char(c) if !ctrl && !alt => {
                if self.text.len() + c.len_utf8() <= MAX_LINE {
                    self.text.insert(self.cursor, c);
                    self.cursor += c.len_utf8();
                }
            }
            _ => return false,
        }
        true
    }

    /// Deletes the word before the cursor.
    fn delete_word(&mut self) {
        let start = self.word_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Deletes the character under the cursor.
    fn delete_forward(&mut self) {
        if self.cursor < self.text.len() {
            let end = self.next_boundary(self.cursor);
            self.text.replace_range(self.cursor..end, "");
        }
    }
}

/// What a key means outside the line itself (submit, cancel, complete,
/// history), if anything.
fn outside_edit(key: KeyEvent) -> Option<Edit> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    Some(match key.code {
        KeyCode::Enter => Edit::Submit,
        KeyCode::Esc => Edit::Cancel,
        KeyCode::Tab => Edit::Complete,
        KeyCode::Up => Edit::Older,
        KeyCode::Down => Edit::Newer,
        KeyCode::Char('c' | 'g') if ctrl => Edit::Cancel,
        KeyCode::Char('p') if ctrl => Edit::Older,
        KeyCode::Char('n') if ctrl => Edit::Newer,
        _ => return None,
    })
}

/// Lines entered before, newest last; kept in a file when there is one.
#[derive(Debug, Clone, Default)]
pub struct History {
    lines: Vec<String>,
    file: Option<PathBuf>,
}

impl History {
    /// The history kept in `file` (read now; a missing or unreadable file is
    /// an empty history).
    pub fn load(file: Option<PathBuf>) -> Self {
        let lines = file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .map(|text| {
                let lines: Vec<String> = text
                    .lines()
                    .filter(|l| !l.trim().is_empty() && l.len() <= MAX_LINE)
                    .map(str::to_string)
                    .collect();
                let skip = lines.len().saturating_sub(MAX_HISTORY);
                lines.into_iter().skip(skip).collect()
            })
            .unwrap_or_default();
        History { lines, file }
    }

    /// The lines, oldest first.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Adds a line (not a repeat of the last), and writes the file.
    pub fn push(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() || self.lines.last().is_some_and(|l| l == line) {
            return;
        }
        self.lines.push(line.to_string());
        if self.lines.len() > MAX_HISTORY {
            self.lines.remove(0);
        }
        if let Some(file) = &self.file {
            if let Some(dir) = file.parent() {
                let _ = partner_core::files::create_private_dir(dir);
            }
            let _ = std::fs::write(file, self.lines.join("\n") + "\n");
        }
    }
}

/// Offers completions for the word under the cursor.
pub trait Completer {
    /// Where the word being completed starts (a byte offset) and the
    /// candidates that can replace it.
    fn complete(&self, line: &str, cursor: usize) -> (usize, Vec<String>);
}

/// Completes from a fixed list of words (commands, agent names).
#[derive(Debug, Clone, Default)]
pub struct WordCompleter {
    /// The words.
    pub words: Vec<String>,
}

impl Completer for WordCompleter {
    fn complete(&self, line: &str, cursor: usize) -> (usize, Vec<String>) {
        let before = &line[..cursor.min(line.len())];
        let word = before.rsplit(' ').next().unwrap_or("");
        let mut found: Vec<String> = self
            .words
            .iter()
            .filter(|w| w.starts_with(word) && w.as_str() != word)
            .cloned()
            .collect();
        found.sort();
        found.dedup();
        (before.len() - word.len(), found)
    }
}

/// A prompt: a line editor walking a history, completing with a completer.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    /// The line.
    pub line: LineEditor,
    /// Where in the history Up has gone (None: editing a new line).
    browsing: Option<usize>,
    /// The new line kept while browsing.
    kept: String,
    /// The completions last offered.
    pub offered: Vec<String>,
    /// Tab again cycles: where the replaced word starts and which
    /// candidate is in the line now.
    cycling: Option<(usize, usize)>,
}

impl Prompt {
    /// A prompt starting with `text`.
    pub fn new(text: &str) -> Self {
        Prompt {
            line: LineEditor::with_text(text),
            ..Prompt::default()
        }
    }

    /// Applies a key; returns what it meant (history and completion handled).
    pub fn key(&mut self, key: KeyEvent, history: &History, completer: &dyn Completer) -> Edit {
        match self.line.key(key) {
            Edit::Older => self.older(history),
            Edit::Newer => self.newer(history),
            Edit::Complete => self.complete(completer),
            other => {
                if other == Edit::Changed {
                    self.offered.clear();
                    self.cycling = None;
                }
                other
            }
        }
    }

    /// The line before in the history (the line being written kept).
    fn older(&mut self, history: &History) -> Edit {
        let lines = history.lines();
        if lines.is_empty() {
            return Edit::Ignored;
        }
        let at = match self.browsing {
            None => {
                self.kept = self.line.text().to_string();
                lines.len() - 1
            }
            Some(i) => i.saturating_sub(1),
        };
        self.browsing = Some(at);
        self.line.set(&lines[at]);
        Edit::Changed
    }

    /// The line after in the history, or past the newest the line that
    /// was being written.
    fn newer(&mut self, history: &History) -> Edit {
        let Some(i) = self.browsing else {
            return Edit::Ignored;
        };
        if i + 1 < history.lines().len() {
            self.browsing = Some(i + 1);
            self.line.set(&history.lines()[i + 1]);
        } else {
            self.browsing = None;
            let kept = std::mem::take(&mut self.kept);
            self.line.set(&kept);
        }
        Edit::Changed
    }

    /// Tab: the next candidate in place of the one offered, or the
    /// candidates' longest shared prefix (a lone one with a space after
    /// it, unless it is a directory).
    fn complete(&mut self, completer: &dyn Completer) -> Edit {
        let cursor = self.line.cursor();
        if let Some((start, i)) = self.cycling
            && self.offered.len() > 1
            && start <= cursor
        {
            let next = (i + 1) % self.offered.len();
            let text = self.line.text();
            let line = format!(
                "{}{}{}",
                &text[..start],
                self.offered[next],
                &text[cursor..]
            );
            self.line.set(&line);
            self.line.set_cursor(start + self.offered[next].len());
            self.cycling = Some((start, next));
            return Edit::Changed;
        }
        let (start, found) = completer.complete(self.line.text(), cursor);
        let start = start.min(cursor);
        let word = self.line.text()[start..cursor].to_string();
        if let Some(first) = found.first() {
            // The longest prefix every candidate shares.
            let mut common = first.clone();
            for f in &found[1..] {
                while !f.to_lowercase().starts_with(&common.to_lowercase()) {
                    common.pop();
                }
            }
            if common.len() >= word.len() && common.is_char_boundary(word.len()) {
                let text = self.line.text();
                let line = format!("{}{}{}", &text[..start], common, &text[cursor..]);
                self.line.set(&line);
                self.line.set_cursor(start + common.len());
            }
            if found.len() == 1 {
                // A directory goes on: its entries come next.
                if !first.ends_with('/') {
                    self.line.insert(" ");
                }
                self.cycling = None;
            } else {
                self.cycling = Some((start, found.len() - 1));
            }
        }
        self.offered = found;
        Edit::Changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn typed(text: &str) -> LineEditor {
        let mut line = LineEditor::default();
        for c in text.chars() {
            line.key(k(KeyCode::Char(c)));
        }
        line
    }

    #[test]
    fn the_line_edits_like_a_shell() {
        let mut line = typed("msg sage hello there");
        line.key(ctrl('w'));
        assert_eq!(line.text(), "msg sage hello ");
        line.key(k(KeyCode::Left));
        line.key(k(KeyCode::Left));
        line.key(k(KeyCode::Char('!')));
        assert_eq!(line.text(), "msg sage hell!o ");
        line.key(ctrl('a'));
        line.key(k(KeyCode::Char(':')));
        assert_eq!(line.text(), ":msg sage hell!o ");
        line.key(ctrl('e'));
        line.key(ctrl('u'));
        assert_eq!(line.text(), "");
        let mut wide = typed("日本語");
        wide.key(k(KeyCode::Backspace));
        assert_eq!(wide.text(), "日本");
        wide.key(k(KeyCode::Left));
        wide.key(k(KeyCode::Delete));
        assert_eq!(wide.text(), "日");
        assert_eq!(
            LineEditor::with_text("a\nb").text(),
            "a b",
            "a line stays one line"
        );
    }

    #[test]
    fn history_walks_back_and_forth_and_is_kept_in_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("history");
        let mut history = History::load(Some(file.clone()));
        history.push("halt scout");
        history.push("msg sage hi");
        history.push("msg sage hi");
        let again = History::load(Some(file));
        assert_eq!(again.lines(), ["halt scout", "msg sage hi"]);
        let words = WordCompleter::default();
        let mut prompt = Prompt::new("draft");
        prompt.key(k(KeyCode::Up), &again, &words);
        assert_eq!(prompt.line.text(), "msg sage hi");
        prompt.key(k(KeyCode::Up), &again, &words);
        assert_eq!(prompt.line.text(), "halt scout");
        prompt.key(k(KeyCode::Down), &again, &words);
        prompt.key(k(KeyCode::Down), &again, &words);
        assert_eq!(
            prompt.line.text(),
            "draft",
            "back to the line being written"
        );
    }

    #[test]
    fn tab_completes_the_word_before_the_cursor() {
        let words = WordCompleter {
            words: vec!["halt".into(), "help".into(), "sage".into(), "scout".into()],
        };
        let history = History::default();
        let mut prompt = Prompt::new("ha");
        prompt.key(k(KeyCode::Tab), &history, &words);
        assert_eq!(prompt.line.text(), "halt ");
        prompt.line.insert("s");
        prompt.key(k(KeyCode::Tab), &history, &words);
        assert_eq!(prompt.line.text(), "halt s", "two candidates share no more");
        assert_eq!(prompt.offered, ["sage", "scout"]);
        // Tab again cycles through them, in place.
        prompt.key(k(KeyCode::Tab), &history, &words);
        assert_eq!(prompt.line.text(), "halt sage");
        prompt.key(k(KeyCode::Tab), &history, &words);
        assert_eq!(prompt.line.text(), "halt scout");
        prompt.key(k(KeyCode::Tab), &history, &words);
        assert_eq!(prompt.line.text(), "halt sage");
        // Typing ends the cycle.
        prompt.key(k(KeyCode::Char('x')), &history, &words);
        assert!(prompt.offered.is_empty());
    }
}
