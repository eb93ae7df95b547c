//! The requests and prefixes the grammar bench and `examples/grammar_profile`
//! run against TypeAgent's agent grammars, and where those grammars are.

use std::path::{Path, PathBuf};

use partner::grammar::batch::RootLoader;
use partner::grammar::{Grammar, LoadOptions, load_grammar};

/// (name, grammar file, request to match, prefix to complete)
pub const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "player",
        "player/src/agent/playerSchema.agr",
        "play Yesterday by the Beatles",
        "play Yesterday b",
    ),
    (
        "list",
        "list/src/listSchema.agr",
        "add milk to my grocery list",
        "add milk to my gro",
    ),
    (
        "calendar",
        "calendar/src/calendarSchema.agr",
        "schedule a team sync for tomorrow at 3pm in room 4 with Alice",
        "schedule a team sync for tomorrow at ",
    ),
    (
        "desktop",
        "desktop/src/desktopSchema.agr",
        "launch notepad",
        "launch no",
    ),
    (
        "weather",
        "weather/src/weatherSchema.agr",
        "what's the weather like in Seattle",
        "what's the weather li",
    ),
    (
        "timer",
        "timer/src/timerSchema.agr",
        "remind me to call mom in 10 minutes",
        "what are ",
    ),
    (
        "email",
        "email/src/emailSchema.agr",
        "'send' 'email' 'to' lunch plans 'with' 'the' 'subject' the report 'with' 'body' the report 'cc' the report",
        "'please' 'reply' lunch plans 'to' Alice 'cc' meeting notes 'blind' 'copy' the report ",
    ),
    (
        "browser",
        "browser/src/agent/browserSchema.agr",
        "open github.com",
        "zoom",
    ),
    (
        "code",
        "code/src/codeSchema.agr",
        "'set' 'my' 'color theme' 'to' 'solarized dark'",
        "'set' 'my' ",
    ),
    (
        "image",
        "image/src/imageSchema.agr",
        "'generate' 12 'images' 'of' a red car 'use' 'the' 'caption' sunset over the sea",
        "'generate' 12 'images'",
    ),
];

/// The agent grammars' folder, when `../shared` is present.
pub fn agents() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/conformance/typeagent/grammars/ts/packages/agents");
    p.exists().then_some(p)
}

/// Loads one case's grammar as the reference does by default (value
/// expressions on, a start value required, quotes part of the words), or
/// says why it cannot.
pub fn load(dir: &Path, file: &str) -> Result<Grammar, String> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{} is missing: {e}", path.display()))?;
    let loader = RootLoader {
        root: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
    };
    let options = LoadOptions {
        enable_value_expressions: true,
        start_value_required: true,
        quotes: partner::grammar::Quotes::Literal,
    };
    load_grammar(file, &text, &options, &loader).map_err(|e| e.to_string())
}
