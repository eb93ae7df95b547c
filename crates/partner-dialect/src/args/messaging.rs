//! Arguments of the communication verbs: `/send`, `/reply`, `/post`, `/dm`, `/tell`.

use super::super::action::{ParsedAction, PartKind, RefKind, RefSlot, Reference};
use super::super::canonical::{at, label, push, push_content, push_target};
use super::super::error::ParseErrorKind;
use super::super::lexer::{Token, TokenKind};
use super::super::shape::{ArgPayload, ArgShape};
use super::common::{LinkInput, invalid, missing, part, reference, set_content, strip_at};

/// `/send @domain @target "message"`.
pub struct SendShape;

/// Where a `/send` goes: its domain (the target is the action's).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Destination {
    /// `user`, `agent`, `channel`, `bluesky`, `discord`, or another with an
    /// explicit target.
    pub domain: String,
}

impl ArgPayload for Destination {
    fn domain(&self) -> Option<&str> {
        Some(&self.domain)
    }
}

impl ArgShape for SendShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        send(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        if let Some(to) = action.args.get::<Destination>() {
            push(o, at(&to.domain));
        }
        push_target(o, action, at);
        push_content(o, action);
    }
}

/// `/reply [@parent|@thread] message`.
pub struct ReplyShape;

impl ArgShape for ReplyShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        reply(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        if let Some(r) = action.target_ref() {
            push(o, r.kind.canonical());
        }
        push_content(o, action);
    }
}

/// `/post platform "message"`.
pub struct PostShape;

impl ArgShape for PostShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        post(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        // A platform is read as a plain name whatever the word (`that`
        // names a platform here, not an earlier result), so it is written
        // bare whenever it is one.
        push_target(o, action, |p| {
            let plain = p.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            if plain { p.to_string() } else { label(p) }
        });
        push_content(o, action);
    }
}

/// `/dm @user "message"`.
pub struct DmShape;

impl ArgShape for DmShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        dm(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        push_target(o, action, at);
        push_content(o, action);
    }
}

/// `/tell @agent "message"`; in a chain the message may be the previous
/// output.
pub struct TellShape;

impl ArgShape for TellShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        tell(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        push_target(o, action, at);
        push_content(o, action);
    }
}

/// Domains `/send` knows; another `@word` works only with an explicit target.
pub const SEND_DOMAINS: &[&str] = &["user", "agent", "channel", "bluesky", "discord"];

fn at_word<'x, 'a>(token: Option<&'x Token<'a>>) -> Option<&'x Token<'a>> {
    token.filter(|t| t.kind == TokenKind::Word && t.value.starts_with('@') && t.value.len() > 1)
}

fn is_reserved_ref(token: &Token<'_>) -> bool {
    matches!(
        reference(&token.value),
        Some(
            RefKind::Last
                | RefKind::LastMessage
                | RefKind::LastOutput
                | RefKind::Thread
                | RefKind::Parent
        )
    )
}

fn require_content(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    t: &[Token<'_>],
    verb: &str,
    example: &str,
) -> Result<(), ParseErrorKind> {
    if set_content(action, input.src, t) || input.in_chain {
        Ok(())
    } else {
        Err(missing(verb, "a message", example))
    }
}

/// `/send @domain [@target] "message"`.
fn send(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let example = "/send @agent @entropy \"can you help?\"";
    let Some(domain_tok) = at_word(t.first()).filter(|d| !is_reserved_ref(d)) else {
        return Err(missing(
            "send",
            "a @domain first (@user, @agent, @channel, @bluesky, @discord)",
            example,
        ));
    };
    let domain = strip_at(&domain_tok.value).to_ascii_lowercase();
    part(action, PartKind::Argument, domain_tok.span);
    let mut rest = &t[1..];
    if let Some(target) = at_word(rest.first()).filter(|d| !is_reserved_ref(d)) {
        action.target = Some(strip_at(&target.value));
        part(action, PartKind::Argument, target.span);
        rest = &rest[1..];
    } else if !SEND_DOMAINS.contains(&domain.as_str()) {
        return Err(invalid(
            "send",
            format!(
                "'@{domain}' is not a domain (@user, @agent, @channel, @bluesky, @discord); to message an agent write /tell @{domain} \"…\""
            ),
        ));
    } else if domain != "user" {
        return Err(missing(
            "send",
            &format!("a @target after @{domain}"),
            example,
        ));
    }
    action.args.set(Destination { domain });
    require_content(input, action, rest, "send", example)
}

/// `/reply [@parent|@thread] message`.
fn reply(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let mut rest = t;
    if t.len() > 1
        && let Some(kind @ (RefKind::Parent | RefKind::Thread)) = t[0]
            .kind
            .eq(&TokenKind::Word)
            .then(|| reference(&t[0].value))
            .flatten()
    {
        action.refs.push(Reference {
            kind,
            slot: RefSlot::Target,
            span: t[0].span,
        });
        part(action, PartKind::Reference, t[0].span);
        rest = &t[1..];
    }
    require_content(input, action, rest, "reply", "/reply sounds good to me .")
}

/// `/post platform "message"`.
fn post(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let example = "/post bluesky \"hello\" ?public";
    let is_platform_name = |p: &&Token<'_>| {
        let name = p.value.strip_prefix('@').unwrap_or(&p.value);
        p.kind == TokenKind::Word
            && name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && !is_reserved_ref(p)
    };
    let Some(platform) = t.first().filter(is_platform_name) else {
        return Err(missing("post", "a platform and a message", example));
    };
    action.target = Some(strip_at(&platform.value).to_ascii_lowercase());
    part(action, PartKind::Argument, platform.span);
    require_content(input, action, &t[1..], "post", example)
}

/// `/dm @user "message"`.
fn dm(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    person_then_message(
        input,
        action,
        "dm",
        "a @user",
        "/dm @alice \"private info\" ?",
    )
}

/// `/tell @agent "message"`; in a chain the message may be the previous output.
fn tell(input: &LinkInput<'_, '_>, action: &mut ParsedAction) -> Result<(), ParseErrorKind> {
    person_then_message(
        input,
        action,
        "tell",
        "an @agent",
        "/tell @anchor \"should I do this?\" ?ask",
    )
}

fn person_then_message(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
    verb: &str,
    who: &str,
    example: &str,
) -> Result<(), ParseErrorKind> {
    let t = input.tokens;
    let Some(person) = t
        .first()
        .filter(|p| p.kind == TokenKind::Word && !is_reserved_ref(p))
    else {
        return Err(missing(verb, &format!("{who} to send to"), example));
    };
    action.target = Some(strip_at(&person.value));
    part(action, PartKind::Argument, person.span);
    require_content(input, action, &t[1..], verb, example)
}
