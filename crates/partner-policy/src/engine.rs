//! [`PermissionEngine`]: decides allow / ask / deny for one action, and
//! says how it got there.
//!
//! Order of checks (the first refusal wins):
//! 1. strict verbs (approve, deny, escalate, halt) need an authority role;
//! 2. posting to a platform needs the platform configured and allowed;
//! 3. the rate limit for the agent and verb;
//! 4. the block's permission, for memory writes;
//! 5. a standing rule (approve/deny always, approve for a while);
//! 6. the first matching policy rule, else the default;
//! 7. the marker: `!` asks the partner, `?`/`?ask` always ask, `.` allows
//!    where the rule says routine is fine;
//! 8. a public post from a private conversation asks the partner;
//! 9. anything that looks like a secret or personal data in any field that
//!    leaves the agent (content, target, URL, query) asks the partner
//!    directly, never a supervising agent.
//!
//! A fetch to a host that names this machine or a private network is
//! refused at step 2 unless the policy allows the host. Whoever is asked,
//! an agent never decides a request it made itself or one made on its
//! behalf: such agents are taken out of the authority chain.

use crate::rate::Buckets;
use crate::requests::{Requests, RuleScope};
use serde::Serialize;

use super::network;
use super::pending;
use super::policy::{Policy, RuleDecision};
use super::rate::{self, RateCharge};
use super::sensitivity;
use partner_core::clock::Millis;
use partner_dialect::{Marker, ParsedAction};
use partner_protocol::request::Authority;
use partner_store::memory::{Block, BlockPermission, MemoryError};

/// The outcome of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "lowercase")]
pub enum Verdict {
    /// Run it now.
    Allow,
    /// Ask these authorities, in order.
    Ask {
        /// Who decides, in escalation order.
        authorities: Vec<Authority>,
        /// Why it needs asking.
        reason: String,
    },
    /// Refuse it.
    Deny {
        /// Why, for the agent.
        reason: String,
    },
}

/// A verdict and the steps that led to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// The decision.
    pub verdict: Verdict,
    /// Each step that mattered, in words.
    pub path: Vec<String>,
    /// The rate-limit token the action takes when its outcome commits (the
    /// check only saw that one is there).
    #[serde(skip)]
    pub charge: Option<RateCharge>,
}

impl Check {
    /// A check with no rate-limit token to take.
    pub fn new(verdict: Verdict, path: Vec<String>) -> Self {
        Check {
            verdict,
            path,
            charge: None,
        }
    }
}

/// What the engine needs to know about one action.
#[derive(Debug, Clone)]
pub struct CheckInput<'a> {
    /// The acting agent.
    pub agent: &'a str,
    /// The action, references resolved.
    pub action: &'a ParsedAction,
    /// True when the agent is in a private (DM) conversation.
    pub private_context: bool,
    /// What the verb registry says about the action.
    pub traits: &'a VerbTraits,
    /// The existing block a memory write targets.
    pub block: Option<&'a Block>,
    /// Agents whose messages led to this action (nearest first); they may
    /// not decide it.
    pub on_behalf_of: &'a [String],
}

/// How an action changes a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// Adds to the end.
    Append,
    /// Rewrites, replaces, patches or moves it.
    Change,
    /// Removes it.
    Delete,
}

/// A block an action writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenBlock {
    /// The block's label (the acting agent's block).
    pub label: String,
    /// How.
    pub kind: WriteKind,
}

/// What the permission engine must know about one action, from the verb
/// registry: the engine itself knows no verbs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerbTraits {
    /// Only agents with an authority role may use the verb.
    pub needs_role: bool,
    /// The block it changes, if any (block permissions apply).
    pub writes_block: Option<WrittenBlock>,
    /// The platform it publishes to, if any.
    pub platform: Option<String>,
    /// It sends text out or stores it: every field is checked for secrets.
    pub carries_text: bool,
    /// The host (and port) it connects to, if any.
    pub connects_to: Option<(String, Option<u16>)>,
    /// Only the partner may let it run, one request at a time, whatever
    /// the policy, a standing rule or a marker says (a policy may still
    /// deny it): why, as the request shows it. A shell command.
    pub partner_only: Option<String>,
    /// Asked about when no policy rule or standing rule names it, whatever
    /// the policy's default (a rule that names it still decides): why, as
    /// the request shows it. An MCP tool that may destroy or reach beyond
    /// the machine.
    pub asks_unless_ruled: Option<String>,
}

/// The text of every field of an action (content, what its arguments
/// name for scanning — a replaced text —, target, domain), to check for
/// secrets and personal data.
fn fields_text(action: &ParsedAction) -> String {
    let mut fields: Vec<&str> = action.content.as_deref().into_iter().collect();
    fields.extend(action.args.scanned());
    fields.extend(action.target.as_deref());
    fields.extend(action.domain());
    fields.join("\n")
}

fn ask(authorities: Vec<Authority>, reason: impl Into<String>) -> Verdict {
    Verdict::Ask {
        authorities,
        reason: reason.into(),
    }
}

fn chain_text(authorities: &[Authority]) -> String {
    authorities
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" → ")
}

/// Decides allow / ask / deny by policy, standing rules and implicit checks.
#[derive(Debug)]
pub struct PermissionEngine {
    policy: Policy,
}

impl PermissionEngine {
    /// An engine with a policy.
    pub fn new(policy: Policy) -> Self {
        PermissionEngine { policy }
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Checks one action at `now`: each rule in the order the module doc
    /// gives, the first refusal winning, every step said in `path`.
    pub fn check<S: Requests + Buckets + ?Sized>(
        &self,
        store: &S,
        input: &CheckInput<'_>,
        now: Millis,
    ) -> Result<Check, MemoryError> {
        let mut path = Vec::new();
        match self.decide(store, input, now, &mut path)? {
            Ok((verdict, charge)) => {
                if let Verdict::Ask { authorities, .. } = &verdict {
                    path.push(format!("asks {}", chain_text(authorities)));
                }
                Ok(Check {
                    verdict,
                    path,
                    charge,
                })
            }
            Err(reason) => Ok(Check::new(Verdict::Deny { reason }, path)),
        }
    }

    /// The verdict and the rate token it takes, or the reason it is refused.
    fn decide<S: Requests + Buckets + ?Sized>(
        &self,
        store: &S,
        input: &CheckInput<'_>,
        now: Millis,
        path: &mut Vec<String>,
    ) -> Result<Step<(Verdict, Option<RateCharge>)>, MemoryError> {
        if let Err(reason) = self.gates(input, path) {
            return Ok(Err(reason));
        }
        let charge = match self.rate_charge(store, input, now, path)? {
            Ok(charge) => charge,
            Err(reason) => return Ok(Err(reason)),
        };
        let block_asks = match block_rule(input, path) {
            Ok(asks) => asks,
            Err(reason) => return Ok(Err(reason)),
        };
        let ruled = match self.rule_verdict(store, input, now, path)? {
            Ok(ruled) => ruled,
            Err(reason) => return Ok(Err(reason)),
        };
        let verdict = apply_marker(input.action, &ruled, block_asks.is_some(), path);
        let verdict = escalate(input, verdict, block_asks, path);
        let verdict = skip_own(input, verdict, path);
        Ok(Ok((verdict, charge)))
    }

    /// Rules 1, 2 and 2b: an authority role for strict verbs, a platform
    /// configured for the agent, a public host unless the policy names it.
    fn gates(&self, input: &CheckInput<'_>, path: &mut Vec<String>) -> Step<()> {
        let (agent, verb, traits) = (input.agent, input.action.verb.name(), input.traits);
        if traits.needs_role {
            if !self.policy.has_role(agent) {
                return refuse(
                    path,
                    format!("/{verb} needs an authority role, and {agent} has none"),
                );
            }
            path.push(format!("{agent} has the role {}", self.policy.roles[agent]));
        }
        if let Some(platform) = traits.platform.as_deref() {
            match self.policy.platforms.get(&platform.to_ascii_lowercase()) {
                None => return refuse(path, format!("no platform '{platform}' is configured")),
                Some(p) if !p.agents.iter().any(|a| a == "*" || a == agent) => {
                    return refuse(path, format!("{agent} may not post to {platform}"));
                }
                Some(_) => path.push(format!("platform {platform} is configured for {agent}")),
            }
        }
        if let Some((host, port)) = &traits.connects_to
            && let Some(what) = network::non_public_host(host)
            && !self.policy.network.allows(host, *port)
        {
            return refuse(
                path,
                format!(
                    "/{verb} may not reach {host}: it is {what}; the partner can allow the host in the policy ([network] allow_hosts)"
                ),
            );
        }
        Ok(())
    }

    /// Rule 3: a rate token must be there; it is taken when the outcome
    /// commits.
    fn rate_charge<S: Buckets + ?Sized>(
        &self,
        store: &S,
        input: &CheckInput<'_>,
        now: Millis,
        path: &mut Vec<String>,
    ) -> Result<Step<Option<RateCharge>>, MemoryError> {
        let (agent, verb) = (input.agent, input.action.verb.name());
        let Some(limit) = self.policy.rate_limit(verb) else {
            return Ok(Ok(None));
        };
        if let Err(wait) = store.available(agent, verb, limit, now)? {
            return Ok(refuse(path, rate::refusal(verb, agent, wait)));
        }
        Ok(Ok(Some(RateCharge {
            agent: agent.to_string(),
            verb: verb.to_string(),
            limit,
        })))
    }

    /// Rules 5 and 6: a standing rule, else the first matching policy
    /// rule, else the policy's default.
    fn rule_verdict<S: Requests + ?Sized>(
        &self,
        store: &S,
        input: &CheckInput<'_>,
        now: Millis,
        path: &mut Vec<String>,
    ) -> Result<Step<Ruled>, MemoryError> {
        let (agent, action) = (input.agent, input.action);
        let verb = action.verb.name();
        let scope = RuleScope {
            agent,
            verb,
            op: action.op.map(|o| o.as_str()),
            target: action.target.as_deref(),
            lineage: input.on_behalf_of,
        };
        let standing = store.matching_rule(&scope, now)?;
        let mut ruled = Ruled {
            verdict: Verdict::Allow,
            routine: false,
            authorities: self.policy.default_authority.clone(),
        };
        match standing {
            Some(rule) if rule.effect == "deny" => {
                let reason = rule.reason.clone().unwrap_or_else(|| {
                    format!(
                        "the partner refuses /{verb} {} always",
                        rule.target.as_deref().unwrap_or("")
                    )
                });
                path.push(format!("standing rule #{} denies", rule.id));
                return Ok(Err(reason.trim().to_string()));
            }
            Some(rule) => {
                path.push(format!(
                    "standing rule #{} allows (by {})",
                    rule.id, rule.created_by
                ));
                return Ok(Ok(ruled));
            }
            None => {}
        }
        let (decision, reason) = match self.policy.rule_for(agent, action) {
            Some((index, rule)) => {
                ruled.routine = rule.routine == Some(RuleDecision::Allow);
                ruled.authorities = self.policy.authorities_of(Some(rule));
                let reason = rule
                    .reason
                    .clone()
                    .unwrap_or_else(|| format!("policy rule {}", index + 1));
                path.push(
                    format!(
                        "policy rule {} ({verb}) decides {:?}: {reason}",
                        index + 1,
                        rule.decide
                    )
                    .to_lowercase(),
                );
                (rule.decide, reason)
            }
            None => match &input.traits.asks_unless_ruled {
                Some(why) => {
                    path.push(format!("no rule matches, and {why}: asked"));
                    (RuleDecision::Ask, why.clone())
                }
                None => {
                    path.push(
                        format!("no rule matches; the default is {:?}", self.policy.default)
                            .to_lowercase(),
                    );
                    (self.policy.default, "the policy default".to_string())
                }
            },
        };
        ruled.verdict = match decision {
            RuleDecision::Allow => Verdict::Allow,
            RuleDecision::Ask => ask(ruled.authorities.clone(), reason),
            RuleDecision::Deny => return Ok(Err(reason)),
        };
        Ok(Ok(ruled))
    }
}

/// A step of a check: `Err` holds why the action is refused.
type Step<T> = Result<T, String>;

/// Says `reason` in the path and refuses with it.
fn refuse<T>(path: &mut Vec<String>, reason: String) -> Step<T> {
    path.push(reason.clone());
    Err(reason)
}

/// What a standing or policy rule decided, with what the marker rule
/// needs from it.
struct Ruled {
    /// Allow or ask (a refusal ends the check before).
    verdict: Verdict,
    /// The matching policy rule lets a `.` marker waive its ask.
    routine: bool,
    /// Who that rule asks.
    authorities: Vec<Authority>,
}

/// Rule 4: a memory write must respect the block's permission; a block
/// that needs the partner's consent makes the action ask (the reason is
/// returned).
fn block_rule(input: &CheckInput<'_>, path: &mut Vec<String>) -> Step<Option<String>> {
    let (Some(write), Some(block)) = (&input.traits.writes_block, input.block) else {
        return Ok(None);
    };
    let appending = write.kind == WriteKind::Append;
    let deleting = write.kind == WriteKind::Delete;
    let refusal = match block.permission {
        BlockPermission::ReadOnly => Some(format!("block '{}' is read-only", block.label)),
        BlockPermission::Append if !appending => {
            Some(format!("block '{}' only takes appends", block.label))
        }
        BlockPermission::ReadWrite | BlockPermission::Partner | BlockPermission::Human
            if deleting =>
        {
            Some(format!(
                "block '{}' can be deleted only with admin permission",
                block.label
            ))
        }
        _ => None,
    };
    if let Some(reason) = refusal {
        return refuse(path, reason);
    }
    if matches!(
        block.permission,
        BlockPermission::Partner | BlockPermission::Human
    ) {
        let reason = format!(
            "block '{}' needs the partner's consent to change",
            block.label
        );
        path.push(reason.clone());
        return Ok(Some(reason));
    }
    Ok(None)
}

/// Rule 7: `!` asks the partner, `?` and `?ask` always ask, `.` allows
/// where the rule says routine is fine (never past a block's consent).
fn apply_marker(
    action: &ParsedAction,
    ruled: &Ruled,
    block_asks: bool,
    path: &mut Vec<String>,
) -> Verdict {
    let verdict = ruled.verdict.clone();
    match action.marker {
        Some(Marker::Serious) => {
            path.push("marker ! asks the partner directly".into());
            ask(
                vec![Authority::Partner],
                "the agent marked this serious (!)",
            )
        }
        Some(Marker::Check | Marker::Ask) if verdict == Verdict::Allow => {
            let marker = if action.marker == Some(Marker::Ask) {
                "?ask"
            } else {
                "?"
            };
            path.push(format!(
                "marker {marker} always asks ({})",
                chain_text(&ruled.authorities)
            ));
            ask(
                ruled.authorities.clone(),
                format!("the agent asked for a check ({marker})"),
            )
        }
        Some(Marker::Routine)
            if ruled.routine && matches!(verdict, Verdict::Ask { .. }) && !block_asks =>
        {
            path.push("marker . is routine here, so it is allowed".into());
            Verdict::Allow
        }
        _ => verdict,
    }
}

/// What asks the partner whatever came before: a block's consent (rule
/// 4), a public post from a private conversation (rule 8), sensitive
/// content in any field that leaves (rule 9), a verb only the partner may
/// let run.
fn escalate(
    input: &CheckInput<'_>,
    mut verdict: Verdict,
    block_asks: Option<String>,
    path: &mut Vec<String>,
) -> Verdict {
    let traits = input.traits;
    if let Some(reason) = block_asks
        && !matches!(&verdict, Verdict::Ask { authorities, .. } if authorities.first() == Some(&Authority::Partner))
    {
        verdict = ask(vec![Authority::Partner], reason);
    }
    if input.private_context && traits.platform.is_some() && verdict == Verdict::Allow {
        let reason = "this conversation is private, and the post is public".to_string();
        path.push(reason.clone());
        verdict = ask(vec![Authority::Partner], reason);
    }
    if traits.carries_text {
        let found = sensitivity::findings(&fields_text(input.action));
        let partner_only = matches!(&verdict, Verdict::Ask { authorities, .. } if authorities == &[Authority::Partner]);
        if !found.is_empty() && !partner_only {
            let reason = format!("the action looks like it holds {}", found.join(" and "));
            path.push(reason.clone());
            verdict = ask(vec![Authority::Partner], reason);
        }
    }
    if let Some(reason) = &traits.partner_only {
        path.push(format!(
            "/{} always asks the partner",
            input.action.verb.name()
        ));
        verdict = ask(vec![Authority::Partner], reason.clone());
    }
    verdict
}

/// Nobody decides their own request, nor one made on their behalf: such
/// authorities are taken out of the chain.
fn skip_own(input: &CheckInput<'_>, verdict: Verdict, path: &mut Vec<String>) -> Verdict {
    let Verdict::Ask {
        authorities,
        reason,
    } = &verdict
    else {
        return verdict;
    };
    let (kept, skipped) =
        pending::independent_authorities(authorities, input.agent, input.on_behalf_of);
    for authority in &skipped {
        path.push(format!(
            "{authority} is skipped: the request is its own or made on its behalf"
        ));
    }
    if skipped.is_empty() {
        verdict
    } else {
        ask(kept, reason.clone())
    }
}
