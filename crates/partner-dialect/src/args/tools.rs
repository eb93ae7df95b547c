//! Arguments of `/search`, `/fetch`, `/web`, `/calc` and `/data`.

use super::super::action::{ActionOp, ParsedAction, PartKind, TimeFilter, TimeUnit};
use super::super::canonical::{bare_ok, label, push, push_content, push_target};
use super::super::error::ParseErrorKind;
use super::super::lexer::{Token, TokenKind};
use super::super::shape::{ArgPayload, ArgShape};
use super::super::span::Span;
use super::common::{
    LinkInput, invalid, looks_like_url, missing, part, reference, set_content, span_of,
};

/// `/search [in DOMAIN] query [> 2 weeks] [role:NAME]`.
pub struct SearchShape;

/// The filters of a `/search` beyond its query (the action's content).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SearchFilters {
    /// Where to search: `archival`, `conversations`, `constellation` or
    /// `all`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// How old the results may or must be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<TimeFilter>,
    /// Whose messages (`role:assistant`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

impl ArgPayload for SearchFilters {
    fn domain(&self) -> Option<&str> {
        self.domain.as_deref()
    }
}

impl ArgShape for SearchShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        search(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        let filters = action.args.get::<SearchFilters>();
        if let Some(domain) = filters.and_then(|f| f.domain.as_deref()) {
            push(o, format!("in {domain}"));
        }
        push_content(o, action);
        if let Some(time) = filters.and_then(|f| f.time) {
            push(o, time.canonical());
        }
        if let Some(role) = filters.and_then(|f| f.role.as_deref()) {
            push(o, format!("role:{role}"));
        }
    }
}

/// `/fetch URL [html]`, `/fetch continue`.
pub struct FetchShape;

impl ArgShape for FetchShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        fetch(input, action)
    }

    /// A first word that is a web address (or `@[…]`).
    fn claims(&self, input: &LinkInput<'_, '_>) -> bool {
        input.tokens.first().is_some_and(|t| {
            t.kind == TokenKind::Word && (looks_like_url(&t.value) || t.value.starts_with("@["))
        })
    }

    /// `/fetch URL [html|continue]`, or `/fetch continue`; a URL that
    /// would not read back bare is bracketed.
    fn write(&self, action: &ParsedAction, o: &mut String) {
        if action.op == Some(ActionOp::Continue) && action.target.is_none() {
            push(o, "continue");
            return;
        }
        if let Some(url) = &action.target {
            if looks_like_url(url) && bare_ok(url) {
                push(o, url);
            } else {
                push(o, format!("@[{url}]"));
            }
        }
        match action.op {
            Some(ActionOp::Html) => push(o, "html"),
            Some(ActionOp::Continue) => push(o, "continue"),
            _ => {}
        }
    }
}

/// `/shell COMMAND` or `/shell request in words`: the rest of the link as
/// written, markers included (`ls .` ends in a directory).
pub struct ShellShape;

/// What the shell verb's handler settled before the partner is asked:
/// where the command runs and, for a request in words, what was proposed
/// for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ShellPlan {
    /// The request in words and what the system said about it, shown with
    /// the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
    /// The directory the command would run in (absolute), so that the
    /// queue judges and sandboxes it there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// The partner's own files (absolute: its database, WAL, socket),
    /// which the command is judged and sandboxed as never reaching.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected: Vec<String>,
    /// The constellation's own files (absolute: config, policy, scripts,
    /// tools) the command may read but never change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
}

impl ArgPayload for ShellPlan {}

impl ArgShape for ShellShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        shell(input, action)
    }

    /// `/shell COMMAND`; a command of several lines in a fence, which
    /// keeps every line of it in the action.
    fn write(&self, action: &ParsedAction, o: &mut String) {
        if let Some(c) = &action.content {
            if c.contains('\n') {
                o.push_str(&format!(" ```\n{c}\n```"));
            } else {
                push(o, c);
            }
        }
    }

    fn verbatim(&self) -> bool {
        true
    }
}

/// `/data list|read|search|monitor|pause [source] ["query"]`.
pub struct DataShape;

impl ArgShape for DataShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        data(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        push(o, action.op.unwrap_or(ActionOp::List).as_str());
        push_target(o, action, label);
        push_content(o, action);
    }
}

/// Search domains, as written after `in`, and their canonical names.
const DOMAINS: &[(&str, &str)] = &[
    ("archival", "archival"),
    ("archive", "archival"),
    ("conversations", "conversations"),
    ("conversation", "conversations"),
    ("constellation", "constellation"),
    ("all", "all"),
];

fn domain_of(token: &Token<'_>) -> Option<&'static str> {
    if token.kind != TokenKind::Word {
        return None;
    }
    DOMAINS
        .iter()
        .find(|(w, _)| token.value.eq_ignore_ascii_case(w))
        .map(|(_, d)| *d)
}

fn unit_of(word: &str) -> Option<TimeUnit> {
    let w = word.to_ascii_lowercase();
    Some(match w.as_str() {
        "m" | "min" | "mins" | "minute" | "minutes" => TimeUnit::Minutes,
        "h" | "hr" | "hrs" | "hour" | "hours" => TimeUnit::Hours,
        "d" | "day" | "days" => TimeUnit::Days,
        "w" | "wk" | "wks" | "week" | "weeks" => TimeUnit::Weeks,
        "mo" | "month" | "months" => TimeUnit::Months,
        "y" | "yr" | "yrs" | "year" | "years" => TimeUnit::Years,
        _ => return None,
    })
}

/// Parses a time filter starting at `t[0]` (`>`, `<`, `>2w`…). Returns the
/// filter and how many tokens it used.
fn time_filter(t: &[Token<'_>]) -> Option<(TimeFilter, usize)> {
    let first = t.first().filter(|x| x.kind == TokenKind::Word)?;
    let older_than = match first.value.as_bytes().first()? {
        b'>' => true,
        b'<' => false,
        _ => return None,
    };
    // Glue the comparison, amount and unit together whatever the spacing.
    let mut glued = first.value[1..].to_string();
    let mut used = 1;
    while used < t.len() && used < 3 && t[used].kind == TokenKind::Word {
        let digits = glued.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && digits < glued.len() {
            break;
        }
        glued.push_str(&t[used].value);
        used += 1;
    }
    let digits = glued.chars().take_while(char::is_ascii_digit).count();
    let amount: u32 = glued[..digits].parse().ok()?;
    let unit = unit_of(&glued[digits..])?;
    Some((
        TimeFilter {
            older_than,
            amount,
            unit,
        },
        used,
    ))
}

/// `/search [in DOMAIN|everywhere] query [> 2 weeks] [role:NAME]`.
fn search(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let mut query: Vec<&Token<'_>> = Vec::new();
    let mut i = 0;
    let mut filters = SearchFilters::default();
    while i < t.len() {
        let tok = &t[i];
        if tok.is_word("in")
            && filters.domain.is_none()
            && let Some(domain) = t.get(i + 1).and_then(domain_of)
        {
            filters.domain = Some(domain.to_string());
            part(action, PartKind::Keyword, tok.span.join(t[i + 1].span));
            i += 2;
            continue;
        }
        if tok.is_word("everywhere") && filters.domain.is_none() {
            filters.domain = Some("all".into());
            part(action, PartKind::Keyword, tok.span);
            i += 1;
            continue;
        }
        if filters.time.is_none()
            && let Some((filter, used)) = time_filter(&t[i..])
        {
            filters.time = Some(filter);
            part(action, PartKind::Argument, span_of(&t[i..i + used]));
            i += used;
            continue;
        }
        if tok.kind == TokenKind::Word
            && filters.role.is_none()
            && let Some(role) = tok.value.strip_prefix("role:").filter(|r| !r.is_empty())
        {
            filters.role = Some(role.to_ascii_lowercase());
            part(action, PartKind::Argument, tok.span);
            i += 1;
            continue;
        }
        query.push(tok);
        i += 1;
    }
    if filters != SearchFilters::default() {
        action.args.set(filters);
    }
    let example = "/search in conversations project deadline > 2 weeks";
    match query.as_slice() {
        [] => Err(missing("search", "something to search for", example)),
        [one] if set_content(action, input.src, std::slice::from_ref(*one)) => Ok(()),
        [_] => Err(missing("search", "something to search for", example)),
        many => {
            let contiguous = many.windows(2).all(|w| {
                input.src[w[0].span.end..w[1].span.start]
                    .chars()
                    .all(char::is_whitespace)
            });
            let text = if contiguous {
                Span::new(many[0].span.start, many[many.len() - 1].span.end)
                    .slice(input.src)
                    .to_string()
            } else {
                many.iter()
                    .map(|t| t.value.as_ref())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            for tok in many {
                part(action, PartKind::Content, tok.span);
            }
            action.content = Some(text);
            Ok(())
        }
    }
}

/// `/fetch URL [html|markdown]` or `/fetch continue`.
fn fetch(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let example = "/fetch https://example.com";
    let Some(first) = t.first() else {
        return Err(missing("fetch", "a URL (or `continue`)", example));
    };
    if first.is_word("continue") && t.len() == 1 {
        action.op = Some(ActionOp::Continue);
        part(action, PartKind::Keyword, first.span);
        return Ok(());
    }
    let url = match reference(&first.value) {
        Some(super::super::action::RefKind::Uri(uri)) if first.kind == TokenKind::Word => uri,
        _ if first.kind == TokenKind::Word && looks_like_url(&first.value) => {
            first.value.to_string()
        }
        _ => {
            return Err(invalid(
                "fetch",
                format!(
                    "'{}' is not a web address; write a URL such as {example}",
                    first.value
                ),
            ));
        }
    };
    action.target = Some(url);
    part(action, PartKind::Argument, first.span);
    action.op = Some(ActionOp::Markdown);
    let mut rest = &t[1..];
    if let Some(as_word) = rest.first().filter(|x| x.is_word("as")) {
        part(action, PartKind::Keyword, as_word.span);
        rest = &rest[1..];
    }
    match rest {
        [] => Ok(()),
        [mode] if mode.kind == TokenKind::Word => {
            action.op = Some(match mode.value.to_ascii_lowercase().as_str() {
                "html" | "raw" => ActionOp::Html,
                "markdown" | "md" | "text" => ActionOp::Markdown,
                "continue" => ActionOp::Continue,
                other => {
                    return Err(invalid(
                        "fetch",
                        format!("unknown mode '{other}'; use html, markdown or continue"),
                    ));
                }
            });
            part(action, PartKind::Keyword, mode.span);
            Ok(())
        }
        _ => Err(invalid(
            "fetch",
            "takes one URL and an optional mode (html or markdown)".to_string(),
        )),
    }
}

/// `/web query`.
pub(super) fn web(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    if set_content(action, input.src, input.tokens) || input.in_chain {
        Ok(())
    } else {
        Err(missing(
            "web",
            "something to search for",
            "/web rust async patterns",
        ))
    }
}

/// The link's text as the action's content, which it must have.
fn required_content(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    (verb, what, example): (&str, &str, &str),
) -> Result<(), ParseErrorKind> {
    if set_content(action, input.src, input.tokens) {
        Ok(())
    } else {
        Err(missing(verb, what, example))
    }
}

/// `/calc expression`.
pub(super) fn calc(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    required_content(input, action, ("calc", "an expression", "/calc 20% of 350"))
}

/// `/shell`: the command or request, exactly as written.
fn shell(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    required_content(
        input,
        action,
        ("shell", "a command or a request", "/shell df -h"),
    )
}

/// Data sub-commands and their ops.
const DATA_SUBCOMMANDS: &[(&str, ActionOp)] = &[
    ("list", ActionOp::List),
    ("ls", ActionOp::List),
    ("read", ActionOp::Read),
    ("show", ActionOp::Read),
    ("search", ActionOp::Search),
    ("find", ActionOp::Search),
    ("monitor", ActionOp::Monitor),
    ("watch", ActionOp::Monitor),
    ("pause", ActionOp::Pause),
    ("unwatch", ActionOp::Pause),
];

/// `/data list|read|search|monitor|pause [source] ["query"]`.
fn data(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let sub = t.first().and_then(|tok| {
        DATA_SUBCOMMANDS
            .iter()
            .find(|(w, _)| tok.is_word(w))
            .map(|(_, op)| (*op, tok.span))
    });
    let (op, rest) = match sub {
        Some((op, span)) => {
            part(action, PartKind::Keyword, span);
            (op, &t[1..])
        }
        None if t.is_empty() => (ActionOp::List, t),
        None => (ActionOp::Read, t),
    };
    action.op = Some(op);
    if op == ActionOp::List {
        return match rest {
            [] => Ok(()),
            _ => Err(invalid("data", "`list` takes no arguments")),
        };
    }
    let Some(source) = rest.first() else {
        return Err(missing(
            "data",
            &format!("a source id after `{}`", op.as_str()),
            "/data read inbox",
        ));
    };
    action.target = Some(source.value.to_string());
    part(action, PartKind::Argument, source.span);
    let rest = &rest[1..];
    if op == ActionOp::Search {
        if !set_content(action, input.src, rest) {
            return Err(missing("data", "a query", "/data search inbox \"invoice\""));
        }
    } else if !rest.is_empty() {
        return Err(invalid(
            "data",
            format!("`{}` takes only a source id", op.as_str()),
        ));
    }
    Ok(())
}
