//! Arguments of `/remind`, `/complete`, `/dismiss`, `/intentions`, `/pulse`,
//! `/summarize`, `/uncertain` and verbs added from a TOML file.

use std::time::Duration;

use super::super::action::{ParsedAction, PartKind};
use super::super::canonical::{canonical, id, push, push_content, push_target, quote};
use super::super::error::ParseErrorKind;
use super::super::lexer::{Token, TokenKind};
use super::super::shape::{ArgPayload, ArgShape};
use super::common::{LinkInput, any_id, invalid, missing, part, set_content, span_of, text_of};

/// `/remind "when" "what"`.
pub struct RemindShape;

/// When a reminder is due, as written (`in 20 minutes`, `tomorrow
/// morning`); what it says is the action's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Due {
    /// The time, as written.
    pub when: String,
}

impl ArgPayload for Due {}

impl ArgShape for RemindShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        remind(input, action)
    }

    /// `/remind "when" ["text" | | reference]`.
    fn write(&self, action: &ParsedAction, o: &mut String) {
        if let Some(due) = action.args.get::<Due>() {
            push(o, quote(&due.when));
        }
        if action.content_ref().is_some() {
            push(o, "|");
        }
        push_content(o, action);
    }
}

/// `/complete id ["note"]` (also `id | note`).
pub struct CompleteShape;

impl ArgShape for CompleteShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        complete(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        push_target(o, action, id);
        push_content(o, action);
    }
}

/// `/dismiss id ["why"]`.
pub struct DismissShape;

impl ArgShape for DismissShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        dismiss(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        push_target(o, action, id);
        push_content(o, action);
    }
}

/// `/pulse 30m`.
pub struct PulseShape;

/// A pulse interval.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Interval {
    /// The interval in seconds (the action's content writes it as `30m`).
    pub duration_secs: u64,
}

impl ArgPayload for Interval {}

impl ArgShape for PulseShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        pulse(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        if let Some(c) = &action.content {
            push(o, c);
        }
    }
}

/// `/batch {` … `}`: its only argument is its `{`; the body is parsed line
/// by line after it.
pub struct BatchShape;

impl ArgShape for BatchShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        optional_content(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        o.push_str(" {");
        for inner in &action.batch {
            o.push('\n');
            o.push_str(&canonical(inner));
        }
        o.push_str("\n}");
    }

    fn holds_actions(&self) -> bool {
        true
    }
}

type PipeSplit<'x, 'a> = (&'x [Token<'a>], &'x Token<'a>, &'x [Token<'a>]);

/// Splits tokens at a bare `|`.
fn split_pipe<'x, 'a>(t: &'x [Token<'a>]) -> Option<PipeSplit<'x, 'a>> {
    let i = t.iter().position(|x| x.is_word("|"))?;
    Some((&t[..i], &t[i], &t[i + 1..]))
}

/// `/remind "when" "what"`, `/remind when | what` or `/remind when words "what"`.
fn remind(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let example = "/remind \"tomorrow morning\" \"check the build\"";
    let (when, what): (&[Token<'_>], &[Token<'_>]) = if let Some((when, pipe, what)) = split_pipe(t)
    {
        part(action, PartKind::Keyword, pipe.span);
        (when, what)
    } else {
        match t {
            [.., last] if t.len() >= 2 && last.kind.is_quoted() => {
                (&t[..t.len() - 1], &t[t.len() - 1..])
            }
            _ => {
                return Err(missing(
                    "remind",
                    "when and what, e.g. a quoted time and a quoted reminder",
                    example,
                ));
            }
        }
    };
    if when.is_empty() {
        return Err(missing("remind", "when the reminder is due", example));
    }
    action.args.set(Due {
        when: text_of(input.src, when),
    });
    part(action, PartKind::Argument, span_of(when));
    if !set_content(action, input.src, what) {
        return Err(missing("remind", "what to be reminded of", example));
    }
    Ok(())
}

/// `/complete id ["note"]` (also `id | note`).
fn complete(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let Some(id) = t.first() else {
        return Err(missing(
            "complete",
            "the id of the intention",
            "/complete 3 \"called them\"",
        ));
    };
    action.target = Some(any_id(id));
    part(action, PartKind::Argument, id.span);
    let mut rest = &t[1..];
    if let Some(pipe) = rest.first().filter(|x| x.is_word("|")) {
        part(action, PartKind::Keyword, pipe.span);
        rest = &rest[1..];
    }
    set_content(action, input.src, rest);
    Ok(())
}

/// `/dismiss id ["why"]`.
fn dismiss(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let Some(id) = t.first() else {
        return Err(missing("dismiss", "the id of the intention", "/dismiss 3"));
    };
    action.target = Some(any_id(id));
    part(action, PartKind::Argument, id.span);
    set_content(action, input.src, &t[1..]);
    Ok(())
}

/// `/intentions [filter]`, `/summarize [what]`, custom verbs: optional content.
pub(super) fn optional_content(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    set_content(action, input.src, input.tokens);
    Ok(())
}

/// `/uncertain "what is unclear"`.
pub(super) fn uncertain(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    if set_content(action, input.src, input.tokens) {
        Ok(())
    } else {
        Err(missing(
            "uncertain",
            "what you are unsure about",
            "/uncertain \"this looks like sarcasm but I can't tell\"",
        ))
    }
}

/// Parses a pulse interval: `10m`, `1h 30m`, `45 minutes`, `2 hours`;
/// at least a second and at most [`partner_core::clock::MAX_SPAN`].
pub fn parse_interval(text: &str) -> Option<Duration> {
    interval(text).ok()
}

/// [`parse_interval`], saying what is wrong.
pub fn interval(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let parsed = partner_core::clock::parse_span(trimmed).or_else(|first| {
        let glued: String = trimmed.split_whitespace().collect();
        partner_core::clock::parse_span(&glued).map_err(|_| first)
    })?;
    if parsed.as_secs() == 0 {
        return Err("it must be at least a second".into());
    }
    Ok(parsed)
}

/// Writes an interval canonically (`30m`, `1h 30m`).
pub fn format_interval(duration: Duration) -> String {
    humantime::format_duration(Duration::from_secs(duration.as_secs())).to_string()
}

/// `/pulse 30m`.
fn pulse(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    if t.is_empty() {
        return Err(missing("pulse", "an interval", "/pulse 30m"));
    }
    let text = text_of(input.src, t);
    let words_only = t
        .iter()
        .all(|x| x.kind == TokenKind::Word || x.kind == TokenKind::Quoted);
    match parse_interval(&text).filter(|_| words_only) {
        Some(duration) => {
            action.args.set(Interval {
                duration_secs: duration.as_secs(),
            });
            action.content = Some(format_interval(duration));
            part(action, PartKind::Argument, span_of(t));
            Ok(())
        }
        None => Err(invalid(
            "pulse",
            format!("'{text}' is not an interval; write one like 3m, 10m, 30m, 1h or 6h"),
        )),
    }
}
