//! Argument parsing by verb signature: each verb's tokens become the
//! fields of a [`ParsedAction`](super::action::ParsedAction).

mod authority;
mod common;
mod intentions;
mod memory;
mod messaging;
mod tools;

pub(crate) use common::{LinkInput, looks_like_url, reference};
pub use intentions::{format_interval, interval, parse_interval};
pub(crate) use memory::names_working_block;
pub use messaging::SEND_DOMAINS;

use super::action::ParsedAction;
use super::error::ParseErrorKind;
use super::verbs::Signature;

/// Fills `action` (whose verb is already set) from the link's tokens, by
/// the verb's signature.
pub(crate) fn parse_args(
    input: &LinkInput<'_, '_>,
    signature: Signature,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    match signature {
        Signature::Recall => memory::recall(input, action),
        Signature::Context => memory::context(input, action),
        Signature::Search => tools::search(input, action),
        Signature::Send => messaging::send(input, action),
        Signature::Reply => messaging::reply(input, action),
        Signature::Post => messaging::post(input, action),
        Signature::Dm => messaging::dm(input, action),
        Signature::Tell => messaging::tell(input, action),
        Signature::Fetch => tools::fetch(input, action),
        Signature::Web => tools::web(input, action),
        Signature::Calc => tools::calc(input, action),
        Signature::Data => tools::data(input, action),
        Signature::Decision => authority::decision(input, action),
        Signature::IdAndReason => authority::id_and_reason(input, action),
        Signature::Remind => intentions::remind(input, action),
        Signature::Complete => intentions::complete(input, action),
        Signature::Dismiss => intentions::dismiss(input, action),
        Signature::Pulse => intentions::pulse(input, action),
        Signature::Uncertain => intentions::uncertain(input, action),
        Signature::Shell => tools::shell(input, action),
        // A batch's only argument is its `{`; the body is parsed line by line.
        Signature::Text | Signature::Batch => intentions::optional_content(input, action),
    }
}
