//! Themes: a style for every UI role and dialect highlight scope, from
//! `themes/*.toml`. A partial user theme overrides only what it names.
//! `NO_COLOR` removes colours (keeping bold, reverse…); terminals without
//! true colour get the nearest 256 or 16 colours.

use std::collections::BTreeMap;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The built-in themes by name.
pub const BUILTIN_THEMES: &[(&str, &str)] = &[
    ("dark", include_str!("../../../themes/dark.toml")),
    ("light", include_str!("../../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../../themes/high-contrast.toml"),
    ),
];

/// Every role a theme styles (section `ui`, then `dialect`).
pub const ROLES: &[&str] = &[
    "ui.background",
    "ui.text",
    "ui.dim",
    "ui.title",
    "ui.border",
    "ui.border_focused",
    "ui.selection",
    "ui.status_bar",
    "ui.key_hint",
    "ui.header",
    "ui.agent",
    "ui.agent_2",
    "ui.agent_3",
    "ui.agent_4",
    "ui.agent_5",
    "ui.agent_6",
    "ui.ok",
    "ui.waiting",
    "ui.denied",
    "ui.error",
    "ui.diff_added",
    "ui.diff_removed",
    "ui.diff_header",
    "ui.bar_filled",
    "ui.bar_empty",
    "ui.input",
    "dialect.verb",
    "dialect.alias",
    "dialect.keyword",
    "dialect.argument",
    "dialect.content",
    "dialect.marker",
    "dialect.chain",
    "dialect.reference",
    "dialect.punctuation",
];

/// How many colours the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    /// 24-bit colour.
    TrueColor,
    /// The 256-colour palette.
    Ansi256,
    /// The 16 ANSI colours.
    Ansi16,
    /// No colour (`NO_COLOR`).
    None,
}

impl ColorDepth {
    /// Guesses from the environment: `NO_COLOR`, `COLORTERM`, `TERM`.
    pub fn detect() -> Self {
        Self::from_env(|k| std::env::var(k).ok())
    }

    /// Guesses from the given variables.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Self {
        if var("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return ColorDepth::None;
        }
        let colorterm = var("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm.contains("truecolor") || colorterm.contains("24bit") {
            return ColorDepth::TrueColor;
        }
        let term = var("TERM").unwrap_or_default();
        if term.contains("256")
            || term.contains("kitty")
            || term.contains("alacritty")
            || term.contains("wezterm")
        {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum StyleFile {
    Color(String),
    Full {
        fg: Option<String>,
        bg: Option<String>,
        #[serde(default)]
        bold: bool,
        #[serde(default)]
        italic: bool,
        #[serde(default)]
        underline: bool,
        #[serde(default)]
        reversed: bool,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    #[serde(default)]
    ui: BTreeMap<String, StyleFile>,
    #[serde(default)]
    dialect: BTreeMap<String, StyleFile>,
}

fn color(text: &str) -> Result<Color, String> {
    text.parse::<Color>().map_err(|_| {
        format!("'{text}' is not a colour; write \"#rrggbb\" or a name like \"lightblue\"")
    })
}

fn style_of(file: &StyleFile) -> Result<Style, String> {
    Ok(match file {
        StyleFile::Color(c) => Style::new().fg(color(c)?),
        StyleFile::Full {
            fg,
            bg,
            bold,
            italic,
            underline,
            reversed,
        } => {
            let mut s = Style::new();
            if let Some(fg) = fg {
                s = s.fg(color(fg)?);
            }
            if let Some(bg) = bg {
                s = s.bg(color(bg)?);
            }
            for (on, m) in [
                (bold, Modifier::BOLD),
                (italic, Modifier::ITALIC),
                (underline, Modifier::UNDERLINED),
                (reversed, Modifier::REVERSED),
            ] {
                if *on {
                    s = s.add_modifier(m);
                }
            }
            s
        }
    })
}

/// A theme file that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ThemeError {
    /// The file.
    pub file: String,
    /// What is wrong (with the line where known).
    pub message: String,
}

/// A loaded theme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// The theme's name.
    pub name: String,
    styles: BTreeMap<String, Style>,
    depth: ColorDepth,
}

/// The closest of the 16 ANSI colours by what the eye sees: greys stay
/// greys (by lightness), colours keep their hue family (red, yellow,
/// green, cyan, blue, magenta), light ones the bright variant. A plain
/// distance in RGB turns pastel themes into greys.
fn nearest16(r: u8, g: u8, b: u8) -> Color {
    let (rf, gf, bf) = (
        f64::from(r) / 255.0,
        f64::from(g) / 255.0,
        f64::from(b) / 255.0,
    );
    let max = rf.max(gf).max(bf);
    let min = rf.min(gf).min(bf);
    let light = (max + min) / 2.0;
    let chroma = max - min;
    if chroma < 0.12 || (light > 0.8 && chroma < 0.2) {
        return match light {
            l if l < 0.2 => Color::Black,
            l if l < 0.5 => Color::DarkGray,
            l if l < 0.85 => Color::Gray,
            _ => Color::White,
        };
    }
    let hue = if max == rf {
        60.0 * (((gf - bf) / chroma).rem_euclid(6.0))
    } else if max == gf {
        60.0 * ((bf - rf) / chroma + 2.0)
    } else {
        60.0 * ((rf - gf) / chroma + 4.0)
    };
    let bright = light > 0.55;
    let pick = |dark: Color, light: Color| if bright { light } else { dark };
    match hue {
        h if !(20.0..330.0).contains(&h) => pick(Color::Red, Color::LightRed),
        h if h < 70.0 => pick(Color::Yellow, Color::LightYellow),
        h if h < 165.0 => pick(Color::Green, Color::LightGreen),
        h if h < 200.0 => pick(Color::Cyan, Color::LightCyan),
        h if h < 260.0 => pick(Color::Blue, Color::LightBlue),
        _ => pick(Color::Magenta, Color::LightMagenta),
    }
}

/// The nearest colour of the 256-colour cube.
fn nearest256(r: u8, g: u8, b: u8) -> Color {
    let step = |v: u8| -> u8 {
        if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        }
    };
    Color::Indexed(16 + 36 * step(r) + 6 * step(g) + step(b))
}

fn adapt(c: Option<Color>, depth: ColorDepth) -> Option<Color> {
    match (c?, depth) {
        (_, ColorDepth::None) => None,
        (Color::Rgb(r, g, b), ColorDepth::Ansi16) => Some(nearest16(r, g, b)),
        (Color::Rgb(r, g, b), ColorDepth::Ansi256) => Some(nearest256(r, g, b)),
        (other, _) => Some(other),
    }
}

impl Theme {
    /// Parses a theme file (all roles must be known; missing ones stay unstyled).
    pub fn from_toml(name: &str, text: &str, file: &str) -> Result<Self, ThemeError> {
        let mut theme = Theme {
            name: name.to_string(),
            styles: BTreeMap::new(),
            depth: ColorDepth::TrueColor,
        };
        theme.overlay(text, file)?;
        Ok(theme)
    }

    /// A built-in theme (`dark`, `light`, `high-contrast`).
    pub fn builtin(name: &str) -> Option<Self> {
        let (_, text) = BUILTIN_THEMES.iter().find(|(n, _)| *n == name)?;
        Some(
            Theme::from_toml(name, text, &format!("themes/{name}.toml"))
                .expect("built-in themes parse"),
        )
    }

    /// Applies a partial theme on top of this one.
    pub fn overlay(&mut self, text: &str, file: &str) -> Result<(), ThemeError> {
        let err = |message: String| ThemeError {
            file: file.to_string(),
            message,
        };
        let parsed: ThemeFile = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            let line = text[..at.min(text.len())].matches('\n').count() + 1;
            err(format!("line {line}: {}", e.message().trim()))
        })?;
        for (section, map) in [("ui", &parsed.ui), ("dialect", &parsed.dialect)] {
            for (role, style) in map {
                let key = format!("{section}.{role}");
                if !ROLES.contains(&key.as_str()) {
                    return Err(err(format!(
                        "unknown role '{key}'; the roles are {}",
                        ROLES.join(", ")
                    )));
                }
                self.styles.insert(
                    key,
                    style_of(style).map_err(|m| err(format!("{section}.{role}: {m}")))?,
                );
            }
        }
        Ok(())
    }

    /// Renders for a terminal of `depth`.
    pub fn with_depth(mut self, depth: ColorDepth) -> Self {
        self.depth = depth;
        self
    }

    /// The style of a role (`ui.text`, `dialect.verb`…), adapted to the
    /// terminal's colours.
    pub fn style(&self, role: &str) -> Style {
        let s = self.styles.get(role).copied().unwrap_or_default();
        Style {
            fg: adapt(s.fg, self.depth),
            bg: adapt(s.bg, self.depth),
            ..s
        }
    }

    /// The colour depth in use.
    pub fn depth(&self) -> ColorDepth {
        self.depth
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_themes_style_every_role() {
        for (name, _) in BUILTIN_THEMES {
            let theme = Theme::builtin(name).unwrap();
            for role in ROLES {
                assert_ne!(
                    theme.style(role),
                    Style::default(),
                    "{name} leaves {role} unstyled"
                );
            }
        }
    }

    #[test]
    fn partial_themes_override_only_what_they_name() {
        let mut theme = Theme::builtin("dark").unwrap();
        let before = theme.style("ui.border");
        theme
            .overlay("[dialect]\nverb = \"#ff0000\"\n", "mine.toml")
            .unwrap();
        assert_eq!(theme.style("dialect.verb").fg, Some(Color::Rgb(255, 0, 0)));
        assert_eq!(theme.style("ui.border"), before);
        let err = theme
            .overlay("[ui]\nsparkle = \"red\"\n", "mine.toml")
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("mine.toml: unknown role 'ui.sparkle'"),
            "{err}"
        );
        let err = theme
            .overlay("[ui]\ntext = \"#12\"\n", "mine.toml")
            .unwrap_err();
        assert!(err.to_string().contains("'#12' is not a colour"), "{err}");
    }

    #[test]
    fn no_color_and_small_palettes() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            ColorDepth::from_env(env(&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")])),
            ColorDepth::None
        );
        assert_eq!(
            ColorDepth::from_env(env(&[("COLORTERM", "truecolor")])),
            ColorDepth::TrueColor
        );
        assert_eq!(
            ColorDepth::from_env(env(&[("TERM", "xterm-256color")])),
            ColorDepth::Ansi256
        );
        assert_eq!(
            ColorDepth::from_env(env(&[("TERM", "linux")])),
            ColorDepth::Ansi16
        );
        let dark = Theme::builtin("dark").unwrap();
        let plain = dark
            .clone()
            .with_depth(ColorDepth::None)
            .style("dialect.verb");
        assert_eq!(
            (plain.fg, plain.add_modifier.contains(Modifier::BOLD)),
            (None, true),
            "bold survives NO_COLOR"
        );
        let ansi = dark
            .clone()
            .with_depth(ColorDepth::Ansi16)
            .style("dialect.verb")
            .fg
            .unwrap();
        assert!(
            !matches!(ansi, Color::Rgb(..) | Color::Indexed(_)),
            "{ansi:?}"
        );
        assert!(matches!(
            dark.with_depth(ColorDepth::Ansi256).style("ui.text").fg,
            Some(Color::Indexed(_))
        ));
    }

    #[test]
    fn sixteen_colours_keep_hues_and_selection_stands_out() {
        let greys = [Color::Black, Color::DarkGray, Color::Gray, Color::White];
        for (name, _) in BUILTIN_THEMES {
            for depth in [
                ColorDepth::TrueColor,
                ColorDepth::Ansi256,
                ColorDepth::Ansi16,
            ] {
                let theme = Theme::builtin(name).unwrap().with_depth(depth);
                let selection = theme.style("ui.selection");
                let background = theme.style("ui.background");
                assert_ne!(
                    selection.bg, background.bg,
                    "{name} at {depth:?}: a selected row looks like any other"
                );
                assert!(
                    selection.fg.is_some() && selection.fg != selection.bg,
                    "{name} at {depth:?}: selected text has its own colour"
                );
            }
        }
        let dark = Theme::builtin("dark")
            .unwrap()
            .with_depth(ColorDepth::Ansi16);
        // The accents stay colours, not greys.
        for role in [
            "ui.ok",
            "ui.waiting",
            "ui.denied",
            "ui.agent",
            "dialect.verb",
            "ui.agent_2",
        ] {
            let fg = dark.style(role).fg.unwrap();
            assert!(!greys.contains(&fg), "{role} became {fg:?}");
        }
        assert_eq!(nearest16(0xa6, 0xe3, 0xa1), Color::LightGreen);
        assert_eq!(nearest16(0xf3, 0x8b, 0xa8), Color::LightRed);
        assert_eq!(nearest16(0x1e, 0x1e, 0x2e), Color::Black);
        assert_eq!(nearest16(0xcd, 0xd6, 0xf4), Color::White);
    }
}
