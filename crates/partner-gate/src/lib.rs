//! The parse gate: shell commands that agents (or the partner, at the `!`
//! prompt) propose, checked before anybody may run them. "Native until
//! foreign, foreign until confirmed": a request in words is read for its
//! intent and checked against the system ([`context`]) before a command is
//! proposed ([`propose`]); every command, the agent's own included, passes
//! three layers — sanitize and validate ([`extract`]), then safety
//! ([`safety`], over a real bash parse in [`syntax`]) — and runs only
//! when the partner approves it ([`process`] runs it, bounded). `/shell`
//! (`exec::handlers::shell`) is how the dialect reaches it.

pub mod containment;
pub mod context;
pub mod expand;
pub mod extract;
pub mod index;
pub mod intent;
mod meaning;
pub mod paths;
pub mod plan;
pub mod process;
pub mod propose;
pub mod protected;
pub mod safety;
pub mod sandbox;
pub mod scene;
pub mod syntax;
pub mod wrappers;

pub use extract::{Extracted, extract, validate};
pub use intent::{Intent, IntentKind, analyze};
pub use plan::CommandPlan;
pub use safety::{Assessment, Risk, assess, assess_in};
pub use scene::Scene;
