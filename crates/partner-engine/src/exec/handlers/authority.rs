//! The authority verbs — `/approve`, `/deny`, `/escalate`, `/cancel` —
//! decide other requests, which is the executor's own work (it records the
//! decision the same way the partner's is recorded); and `/batch`, which
//! only holds other actions.

use std::sync::Arc;

use super::Handlers;
use crate::exec::registry::{ActionError, Cx, Outcome, Stage, VerbHandler};
use partner_dialect::{ParsedAction, Verb};
use partner_policy::VerbTraits;

/// A verb that decides other requests.
struct Decides {
    needs_role: bool,
}

impl VerbHandler for Decides {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Authority
    }

    fn needs_role(&self) -> bool {
        self.needs_role
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits {
            needs_role: self.needs_role,
            ..VerbTraits::default()
        }
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        cx.exec.authority_action(cx.ctx, action)
    }
}

/// `/batch`: its members run, not it.
struct Batch;

impl VerbHandler for Batch {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Structure
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits::default()
    }

    fn run(&self, _cx: &Cx<'_>, _action: &ParsedAction) -> Outcome {
        Err(ActionError::System(
            "a /batch runs its members, not itself".into(),
        ))
    }
}

pub(super) fn handlers() -> Handlers {
    let strict: Arc<dyn VerbHandler> = Arc::new(Decides { needs_role: true });
    vec![
        (Verb::Approve, Arc::clone(&strict)),
        (Verb::Deny, Arc::clone(&strict)),
        (Verb::Escalate, strict),
        (Verb::Cancel, Arc::new(Decides { needs_role: false })),
        (Verb::Batch, Arc::new(Batch)),
    ]
}
