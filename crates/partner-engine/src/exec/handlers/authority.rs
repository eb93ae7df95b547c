//! The authority verbs — `/approve`, `/deny`, `/escalate`, `/cancel` —
//! decide other requests, which is the executor's own work (it records the
//! decision the same way the partner's is recorded); and `/batch`, which
//! only holds other actions.

use crate::exec::registry::{ActionError, Cx, Outcome, Stage, VerbHandler};
use partner_dialect::ParsedAction;
use partner_policy::VerbTraits;

/// A verb that decides other requests.
pub(super) struct Decides {
    /// Only agents with an authority role may use it.
    pub needs_role: bool,
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
pub(super) struct Batch;

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
