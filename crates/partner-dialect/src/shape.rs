//! Argument shapes: how one verb's arguments are read from a link and
//! written back in canonical form, and the typed payload they leave on
//! the action.
//!
//! A verb names its shape in its table row. Every shape fills the fields
//! all actions have (op, target, content, references) and may add a
//! payload of its own type ([`Args`]): a search's filters, a replaced
//! text, a reminder's time. A new verb with a new argument shape is one
//! file — the shape, its payload type and its handler — and one row in
//! the list; nothing else in the parser or the canonical writer changes.

use std::any::Any;
use std::fmt;

use serde::Serialize;

use super::action::ParsedAction;
use super::args::LinkInput;
use super::error::ParseErrorKind;

/// How a verb's arguments are read and written back: the shape of what
/// follows the verb.
pub trait ArgShape: Send + Sync + 'static {
    /// Fills `action` (whose verb is already set) from the link's
    /// argument tokens; an error says what is missing or wrong.
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind>;

    /// Writes the action's arguments in canonical form after the verb,
    /// each piece after a space (see [`crate::canonical::push`]), so that
    /// the text parses back to the same action.
    fn write(&self, action: &ParsedAction, out: &mut String);

    /// True when the link's argument is the rest of the line as written,
    /// markers included (`/shell ls .`): a trailing `.`, `?` or `!` is
    /// part of it, not a permission marker.
    fn verbatim(&self) -> bool {
        false
    }

    /// True when, of the verbs an alias shared by several verbs can mean,
    /// this argument is plainly this verb's (`get` a URL is `/fetch`,
    /// `remember` a working block is `/context`).
    fn claims(&self, _input: &LinkInput<'_, '_>) -> bool {
        false
    }

    /// True when the action holds other actions instead of running itself
    /// (`/batch {`): its body is parsed line by line after it.
    fn holds_actions(&self) -> bool {
        false
    }
}

/// What a payload type says about itself beyond its data: the parts the
/// permission engine reads without knowing the verb.
pub trait ArgPayload: Any + Clone + PartialEq + Serialize + fmt::Debug + Send + Sync {
    /// The domain the action names (a search's `in archival`, a send's
    /// `@bluesky`), matched by policy rules.
    fn domain(&self) -> Option<&str> {
        None
    }

    /// Text the action would send out or store, beyond its content and
    /// target (a replaced text): scanned for secrets.
    fn scanned(&self) -> Vec<&str> {
        Vec::new()
    }
}

/// A payload behind [`Args`]: any [`ArgPayload`], type erased.
trait Payload: Send + Sync + fmt::Debug {
    fn clone_box(&self) -> Box<dyn Payload>;
    fn same(&self, other: &dyn Payload) -> bool;
    fn json(&self) -> serde_json::Value;
    fn any(&self) -> &dyn Any;
    fn any_mut(&mut self) -> &mut dyn Any;
    fn domain(&self) -> Option<&str>;
    fn scanned(&self) -> Vec<&str>;
}

impl<T: ArgPayload> Payload for T {
    fn clone_box(&self) -> Box<dyn Payload> {
        Box::new(self.clone())
    }
    fn same(&self, other: &dyn Payload) -> bool {
        other.any().downcast_ref::<T>() == Some(self)
    }
    fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
    fn any(&self) -> &dyn Any {
        self
    }
    fn any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn domain(&self) -> Option<&str> {
        ArgPayload::domain(self)
    }
    fn scanned(&self) -> Vec<&str> {
        ArgPayload::scanned(self)
    }
}

/// The typed arguments a shape left on an action beyond the fields every
/// action has: empty for most verbs.
#[derive(Default)]
pub struct Args(Option<Box<dyn Payload>>);

impl Args {
    /// The payload, when it is a `T`.
    pub fn get<T: ArgPayload>(&self) -> Option<&T> {
        self.0.as_ref().and_then(|p| p.any().downcast_ref())
    }

    /// The payload as a `T` to change, made from `T::default()` when there
    /// is none (or it is of another type).
    pub fn get_mut<T: ArgPayload + Default>(&mut self) -> &mut T {
        if self.get::<T>().is_none() {
            self.0 = Some(Box::new(T::default()));
        }
        self.0
            .as_mut()
            .and_then(|p| p.any_mut().downcast_mut())
            .expect("the payload was just made a T")
    }

    /// Sets the payload.
    pub fn set<T: ArgPayload>(&mut self, payload: T) {
        self.0 = Some(Box::new(payload));
    }

    /// True when both hold equal payloads (or neither holds one).
    pub fn same(&self, other: &Args) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same(b.as_ref()),
            _ => false,
        }
    }

    /// The domain the action names, if its payload has one.
    pub fn domain(&self) -> Option<&str> {
        self.0.as_ref().and_then(|p| p.domain())
    }

    /// The payload's text to scan for secrets.
    pub fn scanned(&self) -> Vec<&str> {
        self.0.as_ref().map(|p| p.scanned()).unwrap_or_default()
    }

    /// The payload's fields as JSON object entries (none for an empty
    /// payload or one that is not an object), for the parser's JSON.
    pub fn json_fields(&self) -> serde_json::Map<String, serde_json::Value> {
        match self.0.as_ref().map(|p| p.json()) {
            Some(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }
    }
}

impl Clone for Args {
    fn clone(&self) -> Self {
        Args(self.0.as_ref().map(|p| p.clone_box()))
    }
}

impl fmt::Debug for Args {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(p) => p.fmt(f),
            None => f.write_str("-"),
        }
    }
}

/// The argument shape an action was read with (and is written back
/// with).
#[derive(Clone, Copy)]
pub struct Shape(pub &'static dyn ArgShape);

impl std::ops::Deref for Shape {
    type Target = dyn ArgShape;

    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Shape")
    }
}
