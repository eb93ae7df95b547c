//! A verb is defined in one place: a new verb with a new argument shape is
//! its shape (which parses and writes canonically, with a typed payload),
//! its handler and one `add_verb` line — here, all in this file — and the
//! parser, the canonical form, the parser's JSON, the permission check,
//! the executor, the trace and the prompt's verb list all take it.

use crate::support;

use std::sync::Arc;

use partner::dialect::args::{LinkInput, invalid, missing, part, set_content, strip_at};
use partner::dialect::canonical::{at, push, push_content, push_target};
use partner::dialect::{
    ArgPayload, ArgShape, BlockRegistry, DialectParser, ParseErrorKind, ParsedAction, PartKind,
    Shape, Strictness, Verb, VerbSpec,
};
use partner::engine::exec::ActionStatus;
use partner::engine::exec::registry::{Cx, Effect, Outcome, Stage, VerbHandler};
use partner::policy::{Policy, VerbTraits};
use support::{Rig, rig};

/// `/rate @agent N ["why"]`: how useful another agent's work was, 1 to 5.
struct RateShape;

/// The rating a `/rate` carries beyond its target and reason.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
struct Stars {
    stars: u8,
}

impl ArgPayload for Stars {}

impl ArgShape for RateShape {
    fn parse(
        &self,
        input: &LinkInput<'_, '_>,
        action: &mut ParsedAction,
    ) -> Result<(), ParseErrorKind> {
        let example = "/rate @anchor 4 \"clear notes\"";
        let [who, stars, rest @ ..] = input.tokens else {
            return Err(missing("rate", "an @agent and 1 to 5 stars", example));
        };
        if !who.value.starts_with('@') {
            return Err(missing("rate", "the @agent rated", example));
        }
        let stars: u8 = match stars.value.parse() {
            Ok(n @ 1..=5) => n,
            _ => {
                return Err(invalid(
                    "rate",
                    format!("'{}' is not 1 to 5 stars", stars.value),
                ));
            }
        };
        action.target = Some(strip_at(&who.value));
        part(action, PartKind::Argument, who.span);
        action.args.set(Stars { stars });
        set_content(action, input.src, rest);
        Ok(())
    }

    fn write(&self, action: &ParsedAction, out: &mut String) {
        push_target(out, action, at);
        if let Some(rating) = action.args.get::<Stars>() {
            push(out, rating.stars.to_string());
        }
        push_content(out, action);
    }
}

/// What `/rate` does: says the rating back (computed, so replay redoes it).
struct Rate;

impl VerbHandler for Rate {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Compute
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits::default()
    }

    fn run(&self, _cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        let stars = action.args.get::<Stars>().ok_or("/rate needs stars")?.stars;
        let who = action.target.as_deref().unwrap_or("?");
        Ok(Effect::text(format!("rated {who} {stars}/5")))
    }
}

fn rate_spec() -> VerbSpec {
    VerbSpec {
        verb: Verb::Custom("rate".into()),
        strictness: Strictness::Normal,
        everyday: true,
        aliases: vec![("score".into(), None)],
        summary: "rate another agent's work, 1 to 5".into(),
        shape: Shape(&RateShape),
        action: None,
    }
}

fn rig_with_rate() -> Rig {
    let mut r = rig(Policy::default());
    r.exec.add_verb(rate_spec(), Arc::new(Rate)).unwrap();
    r
}

#[test]
fn a_verb_with_its_own_shape_is_one_definition_and_every_stage_takes_it() {
    let r = rig_with_rate();
    let report = r.ok("ada", "/rate @anchor 4 \"clear notes\"");
    assert_eq!(report.text, "rated anchor 4/5");
    assert_eq!(report.canonical, "/rate @anchor 4 \"clear notes\"");
    // The alias, and a misspelling within the verb's strictness.
    assert_eq!(r.ok("ada", "/score @worker 5").text, "rated worker 5/5");
    assert_eq!(r.ok("ada", "/rtae @worker 2").text, "rated worker 2/5");
    // The shape's own errors reach the agent, and nothing runs.
    let mut ctx = partner::engine::exec::TurnContext::new("ada", "main", "turn-2");
    let bad = r.exec.run_turn(&mut ctx, "/rate @anchor 9");
    assert!(bad.actions.is_empty(), "{:?}", bad.actions);
    let said = format!("{:?}", bad.errors);
    assert!(said.contains("'9' is not 1 to 5 stars"), "{said}");
    // The trace holds what ran, in canonical form.
    let trace = r.trace();
    assert!(
        trace
            .iter()
            .any(|t| t.canonical == "/rate @anchor 4 \"clear notes\""),
        "{trace:?}"
    );
    // Agents are taught the verb.
    let taught: Vec<String> = r
        .exec
        .registry()
        .verbs_for(false)
        .iter()
        .map(|s| s.verb.name().to_string())
        .collect();
    assert!(taught.contains(&"rate".to_string()), "{taught:?}");
}

#[test]
fn the_shape_writes_canonically_carries_a_typed_payload_and_reads_back() {
    let r = rig_with_rate();
    let parser = DialectParser::new()
        .with_table(r.exec.registry().table().clone())
        .with_blocks(BlockRegistry::new());
    let turn = parser.parse("/score   @[anchor] 3 \"tidy\" ?");
    assert!(turn.errors.is_empty(), "{:?}", turn.errors);
    let action = &turn.actions[0];
    assert_eq!(action.args.get::<Stars>(), Some(&Stars { stars: 3 }));
    let canonical = action.canonical();
    assert_eq!(canonical, "/rate @anchor 3 \"tidy\" ?");
    let again = parser.parse(&canonical);
    assert!(action.same_meaning(&again.actions[0]), "{canonical}");
    let other = parser.parse("/rate @anchor 2 \"tidy\" ?");
    assert!(
        !action.same_meaning(&other.actions[0]),
        "stars are part of the meaning"
    );
    let json = serde_json::to_value(action).unwrap();
    assert_eq!(json["stars"], 3, "{json}");
    assert_eq!(json["target"], "anchor", "{json}");
}

#[test]
fn a_verb_whose_name_or_alias_is_taken_is_refused() {
    let mut r = rig(Policy::default());
    let mut taken = rate_spec();
    taken.verb = Verb::Custom("recall".into());
    let err = r.exec.add_verb(taken, Arc::new(Rate)).unwrap_err();
    assert!(err.to_string().contains("recall"), "{err}");
    let mut alias = rate_spec();
    alias.aliases = vec![("find".into(), None)];
    let err = r.exec.add_verb(alias, Arc::new(Rate)).unwrap_err();
    assert!(err.to_string().contains("find"), "{err}");
    // Neither was added.
    assert!(
        r.exec
            .registry()
            .table()
            .spec_of(&Verb::Custom("rate".into()))
            .is_none()
    );
    assert_eq!(r.ok("ada", "/find deadline").status, ActionStatus::Executed);
}
