//! Arguments of the authority verbs: `/approve`, `/deny`, `/escalate`,
//! `/cancel` and `/halt`.

use super::super::action::{Op, ParsedAction, PartKind};
use super::super::error::ParseErrorKind;
use super::super::lexer::Token;
use super::common::{LinkInput, part, request_id, set_content};

/// Takes a leading request id, if the first token looks like one.
fn take_id<'x, 'a>(action: &mut ParsedAction, t: &'x [Token<'a>]) -> &'x [Token<'a>] {
    match t
        .first()
        .and_then(|tok| request_id(tok).map(|id| (id, tok.span)))
    {
        Some((id, span)) => {
            action.target = Some(id);
            part(action, PartKind::Argument, span);
            &t[1..]
        }
        None => t,
    }
}

/// `/approve [id] [always] ["note"]` and `/deny [id] ["reason"] [always]`.
pub(crate) fn decision(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    let rest = take_id(action, input.tokens);
    let mut op = Op::Once;
    let mut kept: Vec<Token<'_>> = Vec::with_capacity(rest.len());
    for (i, tok) in rest.iter().enumerate() {
        let edge = i == 0 || i + 1 == rest.len();
        if op == Op::Once && edge && tok.is_word("always") {
            op = Op::Always;
            part(action, PartKind::Keyword, tok.span);
        } else {
            kept.push(tok.clone());
        }
    }
    action.op = Some(op);
    set_content(action, input.src, &kept);
    Ok(())
}

/// `/escalate [id] ["reason"]`, `/cancel [id] ["reason"]`.
pub(crate) fn id_and_reason(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    let rest = take_id(action, input.tokens);
    set_content(action, input.src, rest);
    Ok(())
}

/// `/halt ["reason"]`.
pub(crate) fn halt(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    set_content(action, input.src, input.tokens);
    Ok(())
}
