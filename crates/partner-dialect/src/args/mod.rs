//! Argument shapes, one per way of writing a verb's arguments: each reads
//! a link's tokens into a [`ParsedAction`]
//! (and its typed payload) and writes them back in canonical form.

mod authority;
mod common;
mod intentions;
mod memory;
mod messaging;
mod tools;

pub use authority::{DecisionShape, IdAndReasonShape};
pub use common::{
    LinkInput, any_id, invalid, is_label_word, looks_like_url, missing, part, reference,
    request_id, set_content, span_of, strip_at, text_of,
};
pub use intentions::{
    BatchShape, CompleteShape, DismissShape, Due, Interval, PulseShape, RemindShape,
    format_interval, interval, parse_interval,
};
pub use memory::{ContextEdit, ContextShape, RecallShape};
pub use messaging::{
    Destination, DmShape, PostShape, ReplyShape, SEND_DOMAINS, SendShape, TellShape,
};
pub use tools::{DataShape, FetchShape, SearchFilters, SearchShape, ShellPlan, ShellShape};

use super::action::ParsedAction;
use super::canonical::push_content;
use super::error::ParseErrorKind;
use super::shape::ArgShape;

/// A shape whose arguments are the action's content alone, read by its
/// parser (required or not) and written back as the content.
pub struct ContentShape(
    pub fn(&LinkInput<'_, '_>, &mut ParsedAction) -> Result<(), ParseErrorKind>,
);

impl ArgShape for ContentShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        (self.0)(input, action)
    }

    fn write(&self, action: &ParsedAction, o: &mut String) {
        push_content(o, action);
    }
}

/// `/web query` (in a chain, the query may be the previous output).
pub const WEB: ContentShape = ContentShape(tools::web);

/// `/calc expression`.
pub const CALC: ContentShape = ContentShape(tools::calc);

/// `/uncertain "what is unclear"`: required free text.
pub const UNCERTAIN: ContentShape = ContentShape(intentions::uncertain);

/// Optional free text (`/intentions`, `/summarize`, `/halt`, `/tool`, and
/// verbs from a verb file, which name no other shape).
pub static TEXT: ContentShape = ContentShape(intentions::optional_content);
