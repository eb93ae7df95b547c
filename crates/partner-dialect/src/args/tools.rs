//! Arguments of `/search`, `/fetch`, `/web`, `/calc` and `/data`.

use super::super::action::{Op, ParsedAction, PartKind, TimeFilter, TimeUnit};
use super::super::error::ParseErrorKind;
use super::super::lexer::{Token, TokenKind};
use super::super::span::Span;
use super::common::{
    LinkInput, invalid, looks_like_url, missing, part, reference, set_content, span_of,
};

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
pub(crate) fn search(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let mut query: Vec<&Token<'_>> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let tok = &t[i];
        if tok.is_word("in")
            && action.domain.is_none()
            && let Some(domain) = t.get(i + 1).and_then(domain_of)
        {
            action.domain = Some(domain.to_string());
            part(action, PartKind::Keyword, tok.span.join(t[i + 1].span));
            i += 2;
            continue;
        }
        if tok.is_word("everywhere") && action.domain.is_none() {
            action.domain = Some("all".into());
            part(action, PartKind::Keyword, tok.span);
            i += 1;
            continue;
        }
        if action.time.is_none()
            && let Some((filter, used)) = time_filter(&t[i..])
        {
            action.time = Some(filter);
            part(action, PartKind::Argument, span_of(&t[i..i + used]));
            i += used;
            continue;
        }
        if tok.kind == TokenKind::Word
            && action.role.is_none()
            && let Some(role) = tok.value.strip_prefix("role:").filter(|r| !r.is_empty())
        {
            action.role = Some(role.to_ascii_lowercase());
            part(action, PartKind::Argument, tok.span);
            i += 1;
            continue;
        }
        query.push(tok);
        i += 1;
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
pub(crate) fn fetch(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let example = "/fetch https://example.com";
    let Some(first) = t.first() else {
        return Err(missing("fetch", "a URL (or `continue`)", example));
    };
    if first.is_word("continue") && t.len() == 1 {
        action.op = Some(Op::Continue);
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
    action.op = Some(Op::Markdown);
    let mut rest = &t[1..];
    if let Some(as_word) = rest.first().filter(|x| x.is_word("as")) {
        part(action, PartKind::Keyword, as_word.span);
        rest = &rest[1..];
    }
    match rest {
        [] => Ok(()),
        [mode] if mode.kind == TokenKind::Word => {
            action.op = Some(match mode.value.to_ascii_lowercase().as_str() {
                "html" | "raw" => Op::Html,
                "markdown" | "md" | "text" => Op::Markdown,
                "continue" => Op::Continue,
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
pub(crate) fn web(
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
pub(crate) fn calc(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    required_content(input, action, ("calc", "an expression", "/calc 20% of 350"))
}

/// `/shell`: the command or request, exactly as written.
pub(crate) fn shell(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    required_content(
        input,
        action,
        ("shell", "a command or a request", "/shell df -h"),
    )
}

/// Data sub-commands and their ops.
const DATA_SUBCOMMANDS: &[(&str, Op)] = &[
    ("list", Op::List),
    ("ls", Op::List),
    ("read", Op::Read),
    ("show", Op::Read),
    ("search", Op::Search),
    ("find", Op::Search),
    ("monitor", Op::Monitor),
    ("watch", Op::Monitor),
    ("pause", Op::Pause),
    ("unwatch", Op::Pause),
];

/// `/data list|read|search|monitor|pause [source] ["query"]`.
pub(crate) fn data(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
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
        None if t.is_empty() => (Op::List, t),
        None => (Op::Read, t),
    };
    action.op = Some(op);
    if op == Op::List {
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
    if op == Op::Search {
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
