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
use super::verbs::Verb;

/// Fills `action` (whose verb is already set) from the link's tokens.
pub(crate) fn parse_args(
    input: &LinkInput<'_, '_>,
    action: &mut ParsedAction,
) -> Result<(), ParseErrorKind> {
    match action.verb {
        Verb::Recall => memory::recall(input, action),
        Verb::Context => memory::context(input, action),
        Verb::Search => tools::search(input, action),
        Verb::Send => messaging::send(input, action),
        Verb::Reply => messaging::reply(input, action),
        Verb::Post => messaging::post(input, action),
        Verb::Dm => messaging::dm(input, action),
        Verb::Tell => messaging::tell(input, action),
        Verb::Fetch => tools::fetch(input, action),
        Verb::Web => tools::web(input, action),
        Verb::Calc => tools::calc(input, action),
        Verb::Data => tools::data(input, action),
        Verb::Approve | Verb::Deny => authority::decision(input, action),
        Verb::Escalate | Verb::Cancel => authority::id_and_reason(input, action),
        Verb::Halt => authority::halt(input, action),
        Verb::Remind => intentions::remind(input, action),
        Verb::Complete => intentions::complete(input, action),
        Verb::Dismiss => intentions::dismiss(input, action),
        Verb::Pulse => intentions::pulse(input, action),
        Verb::Uncertain => intentions::uncertain(input, action),
        // A batch's only argument is its `{`; the body is parsed line by line.
        Verb::Intentions | Verb::Summarize | Verb::Custom(_) | Verb::Batch => {
            intentions::optional_content(input, action)
        }
    }
}
