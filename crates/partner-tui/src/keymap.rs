//! Key bindings: loaded from `keymaps/*.toml` in a helix-like notation
//! (`a`, `A`, `<C-a>`, `<S-Tab>`, `<Esc>`, `g g` for a sequence), each with
//! a description; the help overlay is generated from the active keymap.
//! A user's keymap in the config directory overrides per key.
//!
//! ```toml
//! [[bind]]
//! keys = "a"
//! action = "approve"
//! desc = "approve the selected request once"
//! ```

use std::fmt;
use std::str::FromStr;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

/// The built-in keymaps.
pub const DEFAULT_KEYMAP: &str = include_str!("../../../keymaps/default.toml");
/// Vim-flavoured bindings.
pub const VIM_KEYMAP: &str = include_str!("../../../keymaps/vim.toml");
/// Emacs-flavoured bindings.
pub const EMACS_KEYMAP: &str = include_str!("../../../keymaps/emacs.toml");

macro_rules! actions {
    ($($variant:ident => $name:literal),+ $(,)?) => {
        /// Something a key can do.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action {
            $(
                #[doc = $name]
                $variant,
            )+
        }

        impl Action {
            /// Every action, in declaration order.
            pub const ALL: &'static [Action] = &[$(Action::$variant),+];

            /// The action's name in keymap files.
            pub fn name(self) -> &'static str {
                match self { $(Action::$variant => $name),+ }
            }
        }

        impl FromStr for Action {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($name => Ok(Action::$variant),)+
                    other => Err(format!("unknown action '{other}'")),
                }
            }
        }
    };
}

actions! {
    Approve => "approve",
    ApproveAlways => "approve_always",
    Deny => "deny",
    DenyWithReason => "deny_with_reason",
    DenyAlways => "deny_always",
    UndoDecision => "undo_decision",
    Rules => "rules",
    Notifications => "notifications",
    HalfPageUp => "half_page_up",
    HalfPageDown => "half_page_down",
    PrevAction => "prev_action",
    NextAction => "next_action",
    Escalate => "escalate",
    EditAction => "edit_action",
    NextRequest => "next_request",
    PrevRequest => "prev_request",
    FocusNext => "focus_next",
    FocusPrev => "focus_prev",
    Zoom => "zoom",
    Search => "search",
    CommandLine => "command_line",
    ShellPrompt => "shell_prompt",
    Help => "help",
    Quit => "quit",
    Up => "up",
    Down => "down",
    PageUp => "page_up",
    PageDown => "page_down",
    Top => "top",
    Bottom => "bottom",
    Select => "select",
    Back => "back",
    EditBlock => "edit_block",
    UndoBlock => "undo_block",
    Follow => "follow",
    FilterAgent => "filter_agent",
    StepForward => "step_forward",
    StepBack => "step_back",
    PlayPause => "play_pause",
    Faster => "faster",
    Slower => "slower",
    Message => "message",
}

/// One key press with modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyChord {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, Alt (Shift is folded into letters and `<S-Tab>`).
    pub modifiers: KeyModifiers,
}

impl KeyChord {
    /// A chord from a terminal key event (Shift folded as in the notation).
    pub fn from_event(event: &KeyEvent) -> Self {
        let mut modifiers =
            event.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match event.code {
            KeyCode::BackTab => {
                modifiers |= KeyModifiers::SHIFT;
                KeyCode::Tab
            }
            KeyCode::Char(c) => {
                modifiers -= KeyModifiers::SHIFT;
                KeyCode::Char(c)
            }
            other => other,
        };
        KeyChord { code, modifiers }
    }
}

fn named(name: &str) -> Option<KeyCode> {
    Some(match name.to_ascii_lowercase().as_str() {
        "tab" => KeyCode::Tab,
        "esc" | "escape" => KeyCode::Esc,
        "enter" | "ret" | "cr" => KeyCode::Enter,
        "space" => KeyCode::Char(' '),
        "bs" | "backspace" => KeyCode::Backspace,
        "del" | "delete" => KeyCode::Delete,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" => KeyCode::PageDown,
        "lt" => KeyCode::Char('<'),
        "gt" => KeyCode::Char('>'),
        f if f.starts_with('f') && f.len() > 1 => KeyCode::F(f[1..].parse().ok()?),
        _ => return None,
    })
}

impl FromStr for KeyChord {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "'{s}' is not a key; write a, A, <C-a>, <A-x>, <S-Tab>, <Esc>, <Enter>, <Space> or <F1>"
            )
        };
        if let Some(inner) = s.strip_prefix('<').and_then(|x| x.strip_suffix('>')) {
            let mut modifiers = KeyModifiers::NONE;
            let mut rest = inner;
            loop {
                match rest.split_once('-') {
                    Some((m, tail)) if !tail.is_empty() && m.len() == 1 => {
                        modifiers |= match m {
                            "C" | "c" => KeyModifiers::CONTROL,
                            "A" | "a" | "M" | "m" => KeyModifiers::ALT,
                            "S" | "s" => KeyModifiers::SHIFT,
                            _ => return Err(bad()),
                        };
                        rest = tail;
                    }
                    _ => break,
                }
            }
            let mut chars = rest.chars();
            let code = match (chars.next(), chars.next()) {
                (Some(c), None) => {
                    let c = if modifiers.contains(KeyModifiers::SHIFT) {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    };
                    modifiers -= KeyModifiers::SHIFT;
                    KeyCode::Char(c)
                }
                _ => named(rest).ok_or_else(bad)?,
            };
            return Ok(KeyChord { code, modifiers });
        }
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if !c.is_whitespace() => Ok(KeyChord {
                code: KeyCode::Char(c),
                modifiers: KeyModifiers::NONE,
            }),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut prefix = String::new();
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            prefix.push_str("C-");
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            prefix.push_str("A-");
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            prefix.push_str("S-");
        }
        let key = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) if prefix.is_empty() => return write!(f, "{c}"),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Backspace => "BS".into(),
            KeyCode::Delete => "Del".into(),
            KeyCode::Up => "Up".into(),
            KeyCode::Down => "Down".into(),
            KeyCode::Left => "Left".into(),
            KeyCode::Right => "Right".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::PageUp => "PageUp".into(),
            KeyCode::PageDown => "PageDown".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        write!(f, "<{prefix}{key}>")
    }
}

/// One binding: a key sequence, its action, and what it does in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The keys, pressed in order.
    pub keys: Vec<KeyChord>,
    /// The action.
    pub action: Action,
    /// What it does.
    pub desc: String,
}

impl Binding {
    /// The keys in notation, space-separated.
    pub fn keys_text(&self) -> String {
        self.keys
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A keymap file that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}, line {line}: {message}")]
pub struct KeymapError {
    /// The file.
    pub file: String,
    /// One-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeymapFile {
    #[serde(default)]
    bind: Vec<BindFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BindFile {
    keys: toml::Spanned<String>,
    action: toml::Spanned<String>,
    #[serde(default)]
    desc: String,
}

/// What a key press did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// It completes a binding.
    Action(Action),
    /// It starts a longer sequence; wait for the next key.
    Pending,
    /// It means nothing.
    None,
}

/// The active bindings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    bindings: Vec<Binding>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Keymap {
    /// Parses a keymap file.
    pub fn from_toml(text: &str, file: &str) -> Result<Self, KeymapError> {
        let err = |line: usize, message: String| KeymapError {
            file: file.to_string(),
            line,
            message,
        };
        let parsed: KeymapFile = toml::from_str(text).map_err(|e| {
            err(
                line_of(text, e.span().map_or(0, |s| s.start)),
                e.message().trim().replace('\n', " "),
            )
        })?;
        let mut bindings = Vec::new();
        for b in parsed.bind {
            let keys_line = line_of(text, b.keys.span().start);
            let keys = b
                .keys
                .get_ref()
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<Vec<KeyChord>, String>>()
                .map_err(|m| err(keys_line, m))?;
            if keys.is_empty() {
                return Err(err(keys_line, "a binding needs at least one key".into()));
            }
            let action = b.action.get_ref().parse().map_err(|m: String| {
                err(
                    line_of(text, b.action.span().start),
                    format!("{m}; see keymaps/default.toml for the actions"),
                )
            })?;
            bindings.push(Binding {
                keys,
                action,
                desc: b.desc,
            });
        }
        Ok(Keymap { bindings })
    }

    /// The default keymap.
    pub fn default_keymap() -> Self {
        Keymap::from_toml(DEFAULT_KEYMAP, "keymaps/default.toml")
            .expect("the default keymap parses")
    }

    /// A built-in keymap by name (`default`, `vim`, `emacs`).
    pub fn builtin(name: &str) -> Option<Self> {
        let (text, file) = match name {
            "default" => (DEFAULT_KEYMAP, "keymaps/default.toml"),
            "vim" => (VIM_KEYMAP, "keymaps/vim.toml"),
            "emacs" => (EMACS_KEYMAP, "keymaps/emacs.toml"),
            _ => return None,
        };
        Some(Keymap::from_toml(text, file).expect("built-in keymaps parse"))
    }

    /// Applies `user` on top: a user binding replaces any binding of the
    /// same keys.
    pub fn overridden_by(mut self, user: Keymap) -> Self {
        for b in user.bindings {
            self.bindings.retain(|x| x.keys != b.keys);
            self.bindings.push(b);
        }
        self
    }

    /// Every binding.
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// What the keys pressed so far mean.
    pub fn lookup(&self, pressed: &[KeyChord]) -> Lookup {
        let mut longer = false;
        for b in &self.bindings {
            if b.keys == pressed {
                return Lookup::Action(b.action);
            }
            longer |= b.keys.len() > pressed.len() && b.keys.starts_with(pressed);
        }
        if longer {
            Lookup::Pending
        } else {
            Lookup::None
        }
    }

    /// The first keys bound to an action, for hints.
    pub fn keys_for(&self, action: Action) -> Option<String> {
        self.bindings
            .iter()
            .find(|b| b.action == action)
            .map(Binding::keys_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chord(s: &str) -> KeyChord {
        s.parse().unwrap()
    }

    #[test]
    fn notation_parses_and_prints_back() {
        for s in [
            "a", "A", "<C-a>", "<S-Tab>", "<Esc>", "<Enter>", "<Space>", "<F5>", "<A-x>", "?", ":",
        ] {
            assert_eq!(chord(s).to_string(), s, "{s}");
        }
        assert_eq!(chord("<S-a>"), chord("A"));
        assert!("<Hyper-x>".parse::<KeyChord>().is_err());
        assert!("ab".parse::<KeyChord>().is_err());
    }

    #[test]
    fn terminal_events_match_the_notation() {
        let shift_a = KeyEvent::new(KeyCode::Char('A'), KeyModifiers::SHIFT);
        assert_eq!(KeyChord::from_event(&shift_a), chord("A"));
        let back_tab = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(KeyChord::from_event(&back_tab), chord("<S-Tab>"));
        let ctrl_a = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::CONTROL);
        assert_eq!(KeyChord::from_event(&ctrl_a), chord("<C-a>"));
    }

    #[test]
    fn built_in_keymaps_load_and_sequences_wait() {
        for name in ["default", "vim", "emacs"] {
            let k = Keymap::builtin(name).unwrap();
            assert!(
                k.bindings().iter().all(|b| !b.desc.is_empty()),
                "{name}: every binding has a desc"
            );
            assert_eq!(
                k.lookup(&[chord("q")]),
                Lookup::Action(Action::Quit),
                "{name}"
            );
        }
        let vim = Keymap::builtin("vim").unwrap();
        assert_eq!(vim.lookup(&[chord("g")]), Lookup::Pending);
        assert_eq!(
            vim.lookup(&[chord("g"), chord("g")]),
            Lookup::Action(Action::Top)
        );
        assert_eq!(vim.lookup(&[chord("x")]), Lookup::None);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let err = Keymap::from_toml(
            "[[bind]]\nkeys = \"a\"\naction = \"teleport\"\ndesc = \"x\"\n",
            "mine.toml",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "mine.toml, line 3: unknown action 'teleport'; see keymaps/default.toml for the actions"
        );
        let err = Keymap::from_toml(
            "[[bind]]\nkeys = \"<Hyper-q>\"\naction = \"quit\"\n",
            "mine.toml",
        )
        .unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("'<Hyper-q>' is not a key"));
    }

    #[test]
    fn user_bindings_override_per_key() {
        let user = Keymap::from_toml(
            "[[bind]]\nkeys = \"a\"\naction = \"approve_always\"\ndesc = \"always\"\n",
            "user",
        )
        .unwrap();
        let k = Keymap::default_keymap().overridden_by(user);
        assert_eq!(
            k.lookup(&[chord("a")]),
            Lookup::Action(Action::ApproveAlways)
        );
        assert_eq!(
            k.lookup(&[chord("d")]),
            Lookup::Action(Action::Deny),
            "other keys stay"
        );
    }
}
