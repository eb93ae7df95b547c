//! Arguments of the authority verbs: `/approve`, `/deny`, `/escalate`,
//! `/cancel` and `/halt`.
//!
//! A decision must name its request unambiguously or not happen: the id is
//! written plainly (`r12`, `#12`, `[r12]` or `"r12"`), at most one id
//! appears, and an id-like word anywhere else (`r2,`, `**r2**`, `request
//! r2`, `r2 and r3`) makes the action an error instead of a guess.

use super::super::action::{ActionOp, ParsedAction, PartKind};
use super::super::canonical::{push, push_content, push_target, request};
use super::super::error::ParseErrorKind;
use super::super::lexer::{Token, TokenKind};
use super::super::shape::ArgShape;
use super::common::{LinkInput, part, set_content};

/// `/approve|deny [id] [always] ["reason"]`.
pub struct DecisionShape {
    /// True for a grant (`/approve`): without an id, nothing else may be
    /// written, so that an approval never guesses its request.
    pub grants: bool,
}

impl ArgShape for DecisionShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        decision(input, action, self.grants)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        push_target(o, action, request);
        push_content(o, action);
        if action.op == Some(ActionOp::Always) {
            push(o, "always");
        }
    }
}

/// `/escalate|cancel [id] ["reason"]`.
pub struct IdAndReasonShape;

impl ArgShape for IdAndReasonShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        id_and_reason(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        push_target(o, action, request);
        push_content(o, action);
    }
}

/// `r12`, `R12` or `#12` → `r12`; digits only after the prefix.
fn plain_id(text: &str) -> Option<String> {
    let digits = text
        .strip_prefix(['r', 'R', '#'])
        .filter(|d| !d.is_empty() && d.len() <= 18 && d.bytes().all(|b| b.is_ascii_digit()))?;
    Some(format!("r{digits}"))
}

/// The request a token names plainly: `r12`, `#12`, `[anything]` or a
/// quoted `"r12"`.
fn request_of(token: &Token<'_>) -> Option<String> {
    match token.kind {
        TokenKind::Word => {
            let word = token.value.as_ref();
            if let Some(inner) = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
                let ok = !inner.is_empty()
                    && inner
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
                return ok.then(|| plain_id(inner).unwrap_or_else(|| inner.to_string()));
            }
            plain_id(word)
        }
        TokenKind::Quoted => plain_id(token.value.trim()),
        _ => None,
    }
}

/// A bare word stripped of punctuation and markdown (`**r2**` → `r2`).
fn core<'t>(token: &'t Token<'_>) -> Option<&'t str> {
    (token.kind == TokenKind::Word).then(|| {
        token
            .value
            .trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '#')
    })
}

/// True for a bare word that, stripped of punctuation and markdown, is a
/// request id (`r2,`, `**r2**`, `(#3)`).
fn id_like(token: &Token<'_>) -> bool {
    core(token).is_some_and(|c| plain_id(c).is_some())
}

/// True for an id-like word or a bare number, either of which in the id's
/// place means the id was not written plainly.
fn id_like_first(token: &Token<'_>) -> bool {
    id_like(token)
        || core(token).is_some_and(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()))
}

fn unclear(verb: &str, message: impl Into<String>) -> ParseErrorKind {
    ParseErrorKind::UnclearRequest {
        verb: verb.to_string(),
        message: message.into(),
    }
}

/// Takes the request id at the front of `t`, if one is written plainly;
/// an id-like word there that is not plain is an error.
fn take_id<'x, 'a>(
    verb: &str,
    action: &mut ParsedAction,
    t: &'x [Token<'a>],
) -> Result<&'x [Token<'a>], ParseErrorKind> {
    let Some(first) = t.first() else {
        return Ok(t);
    };
    if let Some(id) = request_of(first) {
        action.target = Some(id);
        part(action, PartKind::Argument, first.span);
        return Ok(&t[1..]);
    }
    if id_like_first(first) {
        return Err(unclear(
            verb,
            format!(
                "'{}' is not a plainly written request id (write it like r2)",
                first.value
            ),
        ));
    }
    Ok(t)
}

/// Refuses a second id among the words after the first.
fn no_other_ids(verb: &str, rest: &[Token<'_>]) -> Result<(), ParseErrorKind> {
    match rest
        .iter()
        .find(|t| id_like(t) || (t.kind == TokenKind::Word && request_of(t).is_some()))
    {
        Some(t) => Err(unclear(
            verb,
            format!("'{}' looks like another request id", t.value),
        )),
        None => Ok(()),
    }
}

/// `/approve [once|always] [id] [always] ["note"]` and `/deny [id]
/// ["reason"] [always]`. An approval without an id takes the one request
/// waiting on the agent only when nothing else is written; `always` always
/// needs an id.
fn decision(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    grants: bool,
) -> Result<(), ParseErrorKind> {
    let verb = action.verb.name().to_string();
    let mut t = input.tokens;
    let mut op = None;
    if let Some(first) = t.first()
        && (first.is_word("always") || first.is_word("once"))
    {
        op = Some(if first.is_word("always") {
            ActionOp::Always
        } else {
            ActionOp::Once
        });
        part(action, PartKind::Keyword, first.span);
        t = &t[1..];
    }
    let rest = take_id(&verb, action, t)?;
    let mut kept: Vec<Token<'_>> = Vec::with_capacity(rest.len());
    for (i, tok) in rest.iter().enumerate() {
        let edge = i == 0 || i + 1 == rest.len();
        if op.is_none() && edge && tok.is_word("always") {
            op = Some(ActionOp::Always);
            part(action, PartKind::Keyword, tok.span);
        } else {
            kept.push(tok.clone());
        }
    }
    no_other_ids(&verb, &kept)?;
    let op = op.unwrap_or(ActionOp::Once);
    action.op = Some(op);
    if action.target.is_none() {
        if op == ActionOp::Always {
            return Err(unclear(&verb, "a standing rule needs the request's id"));
        }
        if grants && !kept.is_empty() {
            return Err(unclear(&verb, "no request id was written"));
        }
    }
    set_content(action, input.src, &kept);
    Ok(())
}

/// `/escalate [id] ["reason"]`, `/cancel [id] ["reason"]`.
fn id_and_reason(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    let verb = action.verb.name().to_string();
    let rest = take_id(&verb, action, input.tokens)?;
    no_other_ids(&verb, rest)?;
    set_content(action, input.src, rest);
    Ok(())
}
