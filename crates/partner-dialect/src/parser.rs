//! [`DialectParser`]: the entry point that turns agent text into actions.

use std::collections::HashSet;
use std::sync::Arc;

use super::blocks::BlockRegistry;
use super::echo::PromptEcho;
use super::error::{ParseError, ParseErrorKind};
use super::link::LinkParser;
use super::scan::scan_turn;
use super::span::Span;
use super::turn::{ParsedTurn, Segment, SegmentKind};
use super::verbs::VerbTable;

/// Parses agent turns into actions, knowing the verb table and the block
/// labels that exist (for recall/context inference).
#[derive(Debug, Clone)]
pub struct DialectParser {
    /// Shared: parsers are made per turn, and a table is a few hundred
    /// phrases.
    table: Arc<VerbTable>,
    blocks: BlockRegistry,
    /// Lines the agent was shown as examples: written back alone on a line,
    /// they are an echo of its instructions, not an action.
    echoes: Option<Arc<HashSet<String>>>,
    /// The agent's instructions: an action line mostly copied from them is
    /// an echo too ([`PromptEcho`]).
    prompt: Option<Arc<PromptEcho>>,
    /// The verbs an error may suggest (all, when unset): an agent is never
    /// pointed at a verb it may not use.
    usable: Option<Arc<HashSet<String>>>,
}

impl Default for DialectParser {
    fn default() -> Self {
        DialectParser::with_shared_table(builtin_table())
    }
}

/// The built-in verb table, built once per process.
fn builtin_table() -> Arc<VerbTable> {
    static BUILTIN: std::sync::LazyLock<Arc<VerbTable>> =
        std::sync::LazyLock::new(|| Arc::new(VerbTable::builtin()));
    Arc::clone(&BUILTIN)
}

/// Most actions one reply may hold. A reply with more runs none of them:
/// each may ask the partner something, and thousands of requests from one
/// reply are a flood, not a turn.
pub const MAX_ACTIONS: usize = 64;

/// A reply past [`MAX_ACTIONS`] (it holds `found` actions; the scanner
/// kept the first ones and the last) becomes one error over all its
/// actions, none of them left to run (every byte stays prose or that
/// error).
fn refuse_past_bound(parsed: &mut ParsedTurn, found: usize) {
    let (Some(first), Some(last)) = (parsed.actions.first(), parsed.actions.last()) else {
        return;
    };
    if found <= MAX_ACTIONS {
        return;
    }
    let start = first
        .span
        .start
        .min(parsed.errors.first().map_or(usize::MAX, |e| e.span.start));
    let end = last
        .span
        .end
        .max(parsed.errors.last().map_or(0, |e| e.span.end));
    let span = Span::new(start, end);
    parsed.actions.clear();
    parsed.errors = vec![ParseError::new(
        ParseErrorKind::TooManyActions {
            max: MAX_ACTIONS,
            found,
        },
        span,
    )];
    let mut segments: Vec<Segment> = Vec::with_capacity(3);
    for segment in parsed.segments.drain(..) {
        if segment.span.end <= start || segment.span.start >= end {
            segments.push(segment);
        } else if segments.last().is_none_or(|s| s.span.end <= start) {
            segments.push(Segment {
                kind: SegmentKind::Invalid,
                span,
                index: Some(0),
            });
        }
    }
    parsed.segments = segments;
}

impl DialectParser {
    /// A parser with the built-in verbs and no known blocks.
    pub fn new() -> Self {
        DialectParser::default()
    }

    /// A parser over a table shared with others, and no known blocks.
    pub fn with_shared_table(table: Arc<VerbTable>) -> Self {
        DialectParser {
            table,
            blocks: BlockRegistry::default(),
            echoes: None,
            prompt: None,
            usable: None,
        }
    }

    /// Replaces the known blocks.
    pub fn with_blocks(mut self, blocks: BlockRegistry) -> Self {
        self.blocks = blocks;
        self
    }

    /// Replaces the verb table.
    pub fn with_table(mut self, table: VerbTable) -> Self {
        self.table = Arc::new(table);
        self
    }

    /// Treats these lines, when a reply holds one alone on its line (spaces
    /// around it aside), as an echo of the prompt: prose, not an action.
    pub fn with_echoes<I: IntoIterator<Item = String>>(mut self, lines: I) -> Self {
        self.echoes = Some(Arc::new(
            lines.into_iter().map(|l| l.trim().to_string()).collect(),
        ));
        self
    }

    /// Treats an action line mostly copied from `instructions` (reworded,
    /// with a slash in front) as an echo of them: prose, not an action.
    /// Call it after [`Self::with_echoes`]: the example lines are left out
    /// of what a line is compared with.
    pub fn with_prompt_echoes(mut self, instructions: &str) -> Self {
        let examples = self.echoes.as_deref().cloned().unwrap_or_default();
        self.prompt = Some(Arc::new(PromptEcho::new(instructions, &examples)));
        self
    }

    /// Limits the verbs errors suggest to these (canonical verb names).
    pub fn with_usable_verbs<I: IntoIterator<Item = String>>(mut self, verbs: I) -> Self {
        self.usable = Some(Arc::new(verbs.into_iter().collect()));
        self
    }

    /// The verb table in use.
    pub fn table(&self) -> &VerbTable {
        &self.table
    }

    /// The known blocks.
    pub fn blocks(&self) -> &BlockRegistry {
        &self.blocks
    }

    /// Mutable access to the known blocks (they change as agents write).
    pub fn blocks_mut(&mut self) -> &mut BlockRegistry {
        &mut self.blocks
    }

    /// Parses one agent turn. Never panics; every byte of `turn` ends up in
    /// an action, an invalid action or prose.
    pub fn parse(&self, turn: &str) -> ParsedTurn {
        let parser = LinkParser {
            table: &self.table,
            blocks: &self.blocks,
        };
        let (masked, echoes) = self.mask_echoes(turn);
        let (mut parsed, found) = scan_turn(&parser, masked.as_deref().unwrap_or(turn));
        parsed.echoes = echoes;
        refuse_past_bound(&mut parsed, found);
        if let Some(usable) = &self.usable {
            for error in &mut parsed.errors {
                self.limit_suggestions(&mut error.kind, usable);
            }
        }
        parsed
    }

    /// The turn with its echoed example lines blanked (same length, so
    /// every span still points into the original), and where they were.
    fn mask_echoes(&self, turn: &str) -> (Option<String>, Vec<Span>) {
        if self.echoes.is_none() && self.prompt.is_none() {
            return (None, Vec::new());
        }
        let mut spans = Vec::new();
        let mut start = 0;
        for line in turn.split_inclusive('\n') {
            let trimmed = echo_core(line);
            let example = self.echoes.as_ref().is_some_and(|e| e.contains(trimmed));
            let copied =
                trimmed.starts_with('/') && self.prompt.as_ref().is_some_and(|p| p.copies(trimmed));
            if !trimmed.is_empty() && (example || copied) {
                spans.push(Span::new(start, start + line.trim_end_matches('\n').len()));
            }
            start += line.len();
        }
        if spans.is_empty() {
            return (None, spans);
        }
        let mut bytes = turn.as_bytes().to_vec();
        for span in &spans {
            bytes[span.start..span.end].fill(b' ');
        }
        // Whole lines of UTF-8 were replaced by spaces: still UTF-8.
        (String::from_utf8(bytes).ok(), spans)
    }

    /// Drops the suggestions an error makes that name verbs outside `usable`.
    fn limit_suggestions(&self, kind: &mut ParseErrorKind, usable: &HashSet<String>) {
        let may = |name: &str| {
            self.table.lookup(name).is_some_and(|entries| {
                entries
                    .iter()
                    .any(|e| usable.contains(self.table.spec(e.spec).verb.name()))
            })
        };
        match kind {
            ParseErrorKind::UnknownVerb { suggestions, .. } => suggestions.retain(|s| may(s)),
            ParseErrorKind::StrictVerbMisspelled {
                written,
                suggestion,
            } if !may(suggestion) => {
                *kind = ParseErrorKind::UnknownVerb {
                    written: std::mem::take(written),
                    suggestions: Vec::new(),
                };
            }
            ParseErrorKind::AmbiguousVerb {
                written,
                candidates,
            } => {
                candidates.retain(|c| may(c));
                if candidates.len() < 2 {
                    *kind = ParseErrorKind::UnknownVerb {
                        written: std::mem::take(written),
                        suggestions: std::mem::take(candidates),
                    };
                }
            }
            _ => {}
        }
    }
}

/// A line as the scanner reads it for an action: without the spaces around
/// it, a list marker before it, or a bold or italic wrapper around it.
fn echo_core(line: &str) -> &str {
    let mut text = line.trim();
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = text.strip_prefix(marker) {
            text = rest.trim_start();
            break;
        }
    }
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && let Some(rest) = text[digits..]
            .strip_prefix(". ")
            .or_else(|| text[digits..].strip_prefix(") "))
    {
        text = rest.trim_start();
    }
    for wrapper in ["***", "**", "__", "*", "_"] {
        if let Some(inner) = text
            .strip_prefix(wrapper)
            .and_then(|t| t.strip_suffix(wrapper))
        {
            return inner.trim();
        }
    }
    text
}
