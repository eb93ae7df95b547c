//! Argument shapes, one per way of writing a verb's arguments: each reads
//! a link's tokens into a [`ParsedAction`](super::action::ParsedAction)
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
    BatchShape, CompleteShape, DismissShape, Due, Interval, PulseShape, RemindShape, TextShape,
    UncertainShape, format_interval, interval, parse_interval,
};
pub use memory::{ContextEdit, ContextShape, RecallShape};
pub use messaging::{
    Destination, DmShape, PostShape, ReplyShape, SEND_DOMAINS, SendShape, TellShape,
};
pub use tools::{
    CalcShape, DataShape, FetchShape, SearchFilters, SearchShape, ShellPlan, ShellShape, WebShape,
};

/// The shape of free text, for a verb that names no other.
pub static TEXT: TextShape = TextShape;
