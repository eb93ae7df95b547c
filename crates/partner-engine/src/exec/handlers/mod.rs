//! One handler per verb, grouped in families: `memory` (recall, context),
//! `lookup` (search), `comms` (send, reply, post, dm, tell, uncertain),
//! `web` (fetch, web), `calc` (calc, summarize), `data`, `intentions`
//! (remind, complete, dismiss, intentions, pulse, halt), `authority`
//! (approve, deny, escalate, cancel, batch), `shell` (the parse gate's
//! verb), `tool` (Pattern Lisp tools) and `custom` (verbs from a verb
//! file). Each family lists its handlers in `handlers()`; the registry
//! collects them.

mod authority;
mod calc;
mod comms;
mod custom;
mod data;
mod intentions;
mod lookup;
mod memory;
pub(super) mod shell;
mod tool;
mod web;

use std::sync::Arc;

pub(crate) use crate::exec::registry::Effect;
use crate::exec::registry::VerbHandler;
use partner_dialect::{CustomAction, Verb};

pub(crate) use calc::CalcState;
pub(crate) use web::FetchPages;

/// A family's handlers, by verb.
type Handlers = Vec<(Verb, Arc<dyn VerbHandler>)>;

/// Every built-in verb's handler.
pub(crate) fn builtin() -> Handlers {
    let mut all = Vec::new();
    all.extend(memory::handlers());
    all.extend(lookup::handlers());
    all.extend(comms::handlers());
    all.extend(web::handlers());
    all.extend(calc::handlers());
    all.extend(data::handlers());
    all.extend(intentions::handlers());
    all.extend(authority::handlers());
    all.extend(shell::handlers());
    all.extend(tool::handlers());
    all
}

/// The handler of a verb file's action.
pub(crate) fn custom(action: &CustomAction) -> Arc<dyn VerbHandler> {
    custom::handler(action)
}
