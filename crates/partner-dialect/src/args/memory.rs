//! Arguments of `/recall` (long-term memory) and `/context` (working memory).

use super::super::action::{ActionOp, ParsedAction, PartKind};
use super::super::blocks::LabelMatch;
use super::super::canonical::{label, push, push_content, push_target, quote};
use super::super::error::ParseErrorKind;
use super::super::lexer::{Token, TokenKind};
use super::super::shape::{ArgPayload, ArgShape};
use super::common::{LinkInput, is_label_word, missing, part, set_content, span_of, text_of};

/// `/recall [op] [label] [+ content]`: the intent read from the
/// argument's shape.
pub struct RecallShape;

impl ArgShape for RecallShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        recall(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        match action.op {
            Some(ActionOp::Search) | None => push_content(o, action),
            Some(op) => {
                push(o, op.as_str());
                push_target(o, action, label);
                push_content(o, action);
            }
        }
    }
}

/// `/context label + "text"`, `/context replace label "old" -> "new"`,
/// `/context archive|load|swap …`.
pub struct ContextShape;

/// What a `/context` edit names beyond its block and its new text.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ContextEdit {
    /// The text being replaced, for `replace` (the new text is the
    /// action's content).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// The archival label of a `swap` (the working block is the target).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<String>,
}

impl ArgPayload for ContextEdit {
    fn scanned(&self) -> Vec<&str> {
        self.old.as_deref().into_iter().collect()
    }
}

impl ArgShape for ContextShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        context(input, action)
    }

    fn claims(&self, input: &LinkInput<'_, '_>) -> bool {
        names_working_block(input)
    }

    /// `/context [op] label [archival label] ["old" ->] "text"`.
    fn write(&self, action: &ParsedAction, o: &mut String) {
        if let Some(op) = action.op {
            push(o, op.as_str());
        }
        push_target(o, action, label);
        let edit = action.args.get::<ContextEdit>();
        if let Some(other) = edit.and_then(|e| e.other.as_deref()) {
            push(o, label(other));
        }
        if let Some(old) = edit.and_then(|e| e.old.as_deref()) {
            push(o, quote(old));
            push(o, "->");
        }
        push_content(o, action);
    }
}

/// Recall sub-command words and the op each selects.
const RECALL_SUBCOMMANDS: &[(&str, ActionOp)] = &[
    ("insert", ActionOp::Insert),
    ("add", ActionOp::Insert),
    ("save", ActionOp::Insert),
    ("store", ActionOp::Insert),
    ("append", ActionOp::Append),
    ("read", ActionOp::Read),
    ("get", ActionOp::Read),
    ("check", ActionOp::Read),
    ("show", ActionOp::Read),
    ("delete", ActionOp::Delete),
    ("remove", ActionOp::Delete),
    ("forget", ActionOp::Delete),
    ("patch", ActionOp::Patch),
    ("edit", ActionOp::Patch),
    ("search", ActionOp::Search),
    ("find", ActionOp::Search),
];

/// Context sub-command words and the op each selects.
const CONTEXT_SUBCOMMANDS: &[(&str, ActionOp)] = &[
    ("append", ActionOp::Append),
    ("add", ActionOp::Append),
    ("replace", ActionOp::Replace),
    ("edit", ActionOp::Replace),
    ("archive", ActionOp::Archive),
    ("load", ActionOp::Load),
    ("swap", ActionOp::Swap),
];

fn subcommand(table: &[(&str, ActionOp)], token: &Token<'_>) -> Option<ActionOp> {
    if token.kind != TokenKind::Word {
        return None;
    }
    table
        .iter()
        .find(|(w, _)| token.value.eq_ignore_ascii_case(w))
        .map(|(_, op)| *op)
}

/// Resolves a label for an operation that changes an existing block: an
/// exact match is used, a partial match is an error listing candidates,
/// an unknown label is kept as written (the executor reports it).
fn write_label(
    input: &LinkInput<'_, '_>,
    verb: &str,
    written: &str,
    working_only: bool,
) -> Result<String, ParseErrorKind> {
    match input.blocks.resolve(written, working_only) {
        LabelMatch::Exact(label) => Ok(label),
        LabelMatch::Partial(candidates) => Err(ParseErrorKind::AmbiguousBlock {
            verb: verb.into(),
            written: written.into(),
            candidates,
        }),
        LabelMatch::Unknown => Ok(written.to_string()),
    }
}

fn set_label(action: &mut ParsedAction, label: String, tokens: &[Token<'_>]) {
    action.target = Some(label);
    part(action, PartKind::Argument, span_of(tokens));
}

/// `/recall` and its aliases: intent from sub-command or argument shape.
fn recall(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let Some(first) = t.first() else {
        return Err(missing(
            "recall",
            "a block label or something to search for",
            "/recall project_notes or /recall \"deadlines\"",
        ));
    };
    if first.kind == TokenKind::Word {
        let w = first.value.as_ref();
        if w == "+" {
            part(action, PartKind::Keyword, first.span);
            return recall_insert(input, action, &t[1..]);
        }
        if w == "-" {
            part(action, PartKind::Keyword, first.span);
            return recall_delete(input, action, &t[1..]);
        }
        if w.len() > 1 && w.starts_with('-') && !w.starts_with("--") && t.len() == 1 {
            let label = &w[1..];
            action.op = Some(ActionOp::Delete);
            part(
                action,
                PartKind::Keyword,
                super::super::span::Span::new(first.span.start, first.span.start + 1),
            );
            let resolved = write_label(input, "recall", label, false)?;
            action.target = Some(resolved);
            part(
                action,
                PartKind::Argument,
                super::super::span::Span::new(first.span.start + 1, first.span.end),
            );
            return Ok(());
        }
        if t.len() > 1
            && let Some(op) = subcommand(RECALL_SUBCOMMANDS, first)
        {
            part(action, PartKind::Keyword, first.span);
            let rest = &t[1..];
            return match op {
                ActionOp::Insert => recall_insert(input, action, rest),
                ActionOp::Append => recall_append(input, action, &rest[..1], &rest[1..]),
                ActionOp::Read => recall_read(input, action, rest, true),
                ActionOp::Delete => recall_delete(input, action, rest),
                ActionOp::Patch => recall_patch(input, action, rest),
                _ => recall_search(input, action, rest),
            };
        }
    }
    if let Some(plus) = t.iter().position(|x| x.is_word("+"))
        && plus >= 1
    {
        part(action, PartKind::Keyword, t[plus].span);
        return recall_append(input, action, &t[..plus], &t[plus + 1..]);
    }
    let quoted = t.len() == 1 && t[0].kind.is_quoted();
    match input.alias_op {
        Some(ActionOp::Insert) if quoted => return recall_insert(input, action, t),
        Some(ActionOp::Delete) => return recall_delete(input, action, t),
        Some(ActionOp::Patch) => return recall_patch(input, action, t),
        _ => {}
    }
    if quoted {
        return recall_search(input, action, t);
    }
    let text = text_of(input.src, t);
    if let LabelMatch::Exact(label) = input.blocks.resolve(&text, false) {
        action.op = Some(ActionOp::Read);
        set_label(action, label, t);
        return Ok(());
    }
    match input.alias_op {
        Some(ActionOp::Insert) => recall_insert(input, action, t),
        Some(ActionOp::Read) => recall_read(input, action, t, false),
        _ => recall_search(input, action, t),
    }
}

fn recall_insert(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    t: &[Token<'_>],
) -> Result<(), ParseErrorKind> {
    action.op = Some(ActionOp::Insert);
    let content = match t {
        [label, content] if is_label_word(label) && content.kind.is_quoted() => {
            set_label(action, label.value.to_string(), &t[..1]);
            &t[1..]
        }
        _ => t,
    };
    if !set_content(action, input.src, content) {
        return Err(missing(
            "recall",
            "something to store",
            "/recall insert \"the launch moved to May\"",
        ));
    }
    Ok(())
}

fn recall_append(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    label: &[Token<'_>],
    content: &[Token<'_>],
) -> Result<(), ParseErrorKind> {
    action.op = Some(ActionOp::Append);
    let content = match content.first() {
        Some(tok) if tok.is_word("+") => {
            part(action, PartKind::Keyword, tok.span);
            &content[1..]
        }
        _ => content,
    };
    let written = text_of(input.src, label);
    let resolved = write_label(input, "recall", &written, false)?;
    set_label(action, resolved, label);
    if !set_content(action, input.src, content) {
        return Err(missing(
            "recall",
            "the text to append",
            "/recall append project_notes \"next step: ship\"",
        ));
    }
    Ok(())
}

fn recall_read(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    t: &[Token<'_>],
    explicit: bool,
) -> Result<(), ParseErrorKind> {
    let written = text_of(input.src, t);
    match input.blocks.resolve(&written, false) {
        LabelMatch::Exact(label) => {
            action.op = Some(ActionOp::Read);
            set_label(action, label, t);
            Ok(())
        }
        _ if explicit && input.blocks.is_empty() => {
            action.op = Some(ActionOp::Read);
            set_label(action, written, t);
            Ok(())
        }
        _ => recall_search(input, action, t),
    }
}

fn recall_delete(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    t: &[Token<'_>],
) -> Result<(), ParseErrorKind> {
    action.op = Some(ActionOp::Delete);
    if t.is_empty() {
        return Err(missing(
            "recall",
            "the label of the block to delete",
            "/recall delete old_notes",
        ));
    }
    let written = text_of(input.src, t);
    let resolved = write_label(input, "recall", &written, false)?;
    set_label(action, resolved, t);
    Ok(())
}

fn recall_patch(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    t: &[Token<'_>],
) -> Result<(), ParseErrorKind> {
    action.op = Some(ActionOp::Patch);
    let example = "/recall patch project_notes ```diff ... ```";
    let Some(label) = t.first() else {
        return Err(missing(
            "recall",
            "a block label and a unified diff",
            example,
        ));
    };
    let resolved = write_label(input, "recall", &label.value, false)?;
    set_label(action, resolved, &t[..1]);
    if !set_content(action, input.src, &t[1..]) {
        return Err(missing("recall", "the diff to apply", example));
    }
    Ok(())
}

fn recall_search(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    t: &[Token<'_>],
) -> Result<(), ParseErrorKind> {
    action.op = Some(ActionOp::Search);
    if !set_content(action, input.src, t) {
        return Err(missing(
            "recall",
            "something to search for",
            "/recall \"deadlines\"",
        ));
    }
    Ok(())
}

/// True when a `remember` action names a working-memory block, so it means
/// `context` rather than `recall`.
pub(crate) fn names_working_block(input: &LinkInput<'_, '_>) -> bool {
    let t = input.tokens;
    let label_tokens = match t.iter().position(|x| x.is_word("+")) {
        Some(plus) if plus >= 1 => &t[..plus],
        _ => match t.first() {
            Some(first) if subcommand(CONTEXT_SUBCOMMANDS, first).is_some() => {
                &t[1.min(t.len())..2.min(t.len())]
            }
            _ => &t[..1.min(t.len())],
        },
    };
    !label_tokens.is_empty() && input.blocks.is_working(&text_of(input.src, label_tokens))
}

fn context_label(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    t: &[Token<'_>],
) -> Result<(), ParseErrorKind> {
    let written = text_of(input.src, t);
    let working_only = input.blocks.blocks().iter().any(|b| b.working);
    let resolved = write_label(input, "context", &written, working_only)?;
    set_label(action, resolved, t);
    Ok(())
}

fn replace_pair<'x, 'a>(
    t: &'x [Token<'a>],
) -> Option<(&'x Token<'a>, Option<&'x Token<'a>>, &'x Token<'a>)> {
    match t {
        [old, arrow, new]
            if old.kind.is_quoted() && arrow.is_word("->") && new.kind.is_quoted() =>
        {
            Some((old, Some(arrow), new))
        }
        [old, new] if old.kind.is_quoted() && new.kind.is_quoted() => Some((old, None, new)),
        _ => None,
    }
}

/// `/context` and its aliases.
fn context(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let example = "/context human + \"prefers mornings\" or /context persona \"old\" -> \"new\"";
    let Some(first) = t.first() else {
        return Err(missing(
            "context",
            "a working-memory block and what to do with it",
            example,
        ));
    };
    if t.len() > 1
        && let Some(op) = subcommand(CONTEXT_SUBCOMMANDS, first)
    {
        part(action, PartKind::Keyword, first.span);
        action.op = Some(op);
        let rest = &t[1..];
        return match op {
            ActionOp::Append => {
                context_label(input, action, &rest[..1])?;
                context_append(input, action, &rest[1..])
            }
            ActionOp::Replace => {
                context_label(input, action, &rest[..1])?;
                context_replace(input, action, &rest[1..], example)
            }
            ActionOp::Swap => {
                let [block, other] = rest else {
                    return Err(missing(
                        "context",
                        "a working block and an archival label",
                        "/context swap scratch old_project",
                    ));
                };
                context_label(input, action, std::slice::from_ref(block))?;
                action.args.get_mut::<ContextEdit>().other = Some(other.value.to_string());
                part(action, PartKind::Argument, other.span);
                Ok(())
            }
            _ => {
                // archive and load name one block each.
                let written = text_of(input.src, rest);
                let label = match input.blocks.resolve(&written, false) {
                    LabelMatch::Exact(label) => label,
                    _ => written,
                };
                set_label(action, label, rest);
                Ok(())
            }
        };
    }
    let rest = &t[1..];
    context_label(input, action, &t[..1])?;
    match rest.first() {
        Some(plus) if plus.is_word("+") => {
            part(action, PartKind::Keyword, plus.span);
            action.op = Some(ActionOp::Append);
            context_append(input, action, &rest[1..])
        }
        Some(_) if replace_pair(rest).is_some_and(|(_, arrow, _)| arrow.is_some()) => {
            action.op = Some(ActionOp::Replace);
            context_replace(input, action, rest, example)
        }
        Some(_) => {
            action.op = Some(ActionOp::Append);
            context_append(input, action, rest)
        }
        None => Err(missing(
            "context",
            &format!("what to do with block '{}'", first.value),
            example,
        )),
    }
}

fn context_append(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    t: &[Token<'_>],
) -> Result<(), ParseErrorKind> {
    let t = match t.first() {
        Some(tok) if tok.is_word("+") => {
            part(action, PartKind::Keyword, tok.span);
            &t[1..]
        }
        _ => t,
    };
    if !set_content(action, input.src, t) {
        return Err(missing(
            "context",
            "the text to append",
            "/context human + \"prefers mornings\"",
        ));
    }
    Ok(())
}

fn context_replace(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    t: &[Token<'_>],
    example: &str,
) -> Result<(), ParseErrorKind> {
    let Some((old, arrow, new)) = replace_pair(t) else {
        return Err(missing(
            "context",
            "the old and the new text, both quoted",
            example,
        ));
    };
    action.args.get_mut::<ContextEdit>().old = Some(old.value.to_string());
    part(action, PartKind::Content, old.span);
    if let Some(arrow) = arrow {
        part(action, PartKind::Keyword, arrow.span);
    }
    set_content(action, input.src, std::slice::from_ref(new));
    Ok(())
}
