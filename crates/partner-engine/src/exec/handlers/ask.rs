//! `/ask {"title": …}`: a question for the partner. Only the partner
//! answers it, one request at a time, whatever a rule or a marker says;
//! approved, it gives back the choice (the first option unless the
//! partner edited another in) and the arguments as the partner left them;
//! denied, the partner's reason. Nothing else runs: the answer is the
//! effect, redone from the approved text on replay.

use serde_json::json;

use super::Effect;
use crate::exec::Executor;
use crate::exec::registry::{Cx, Outcome, Stage, VerbHandler};
use partner_dialect::ParsedAction;
use partner_policy::VerbTraits;
use partner_protocol::question::PartnerQuestion;

/// The `/ask` handler.
pub(super) struct Ask;

fn question(action: &ParsedAction) -> Result<PartnerQuestion, String> {
    PartnerQuestion::read(action.content.as_deref().unwrap_or(""))
}

impl VerbHandler for Ask {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Compute
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits {
            partner_only: Some("a question only the partner answers".into()),
            ..VerbTraits::default()
        }
    }

    /// Not in the agents' prompts: it is how a tool outside the
    /// constellation asks (`partner mcp serve`); an agent that writes it
    /// is asked like any.
    fn taught(&self, _table: &partner_dialect::VerbTable) -> bool {
        false
    }

    fn prepare(&self, _exec: &Executor, action: &mut ParsedAction) -> Result<(), String> {
        // What the partner is asked about and may edit: the question as
        // one line of JSON, every field checked.
        let question = question(action)?;
        action.content = Some(question.to_text());
        Ok(())
    }

    fn approvable(&self, action: &ParsedAction) -> Result<(), String> {
        question(action).map(|_| ())
    }

    fn fields(&self, _exec: &Executor, action: &ParsedAction) -> Vec<(String, String)> {
        let Ok(q) = question(action) else {
            return Vec::new();
        };
        let mut fields = vec![("asks".to_string(), q.title.clone())];
        let mut add = |label: &str, text: Option<String>| {
            if let Some(text) = text {
                fields.push((label.to_string(), text));
            }
        };
        add("details", q.details.clone());
        add(
            "options",
            (!q.options.is_empty()).then(|| q.options.join(" · ")),
        );
        add("tool", q.tool.clone());
        add(
            "args",
            q.arguments
                .map(|a| super::pretty(&serde_json::Value::Object(a))),
        );
        fields
    }

    fn run(&self, _cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        let question = question(action)?;
        let answer = question.approved();
        let text = match &answer.choice {
            Some(choice) => format!("the partner answered {:?}: {choice}", question.title),
            None => format!("the partner approved {:?}", question.title),
        };
        Ok(Effect::text(text).with_data(json!({ "answer": answer })))
    }
}
