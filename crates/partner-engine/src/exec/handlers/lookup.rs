//! `/search` across memory domains, with grouped results.

use serde_json::json;

use super::Effect;
use crate::embed::Found;
use crate::exec::context::TurnContext;
use crate::exec::executor::Executor;
use crate::exec::registry::{Cx, Outcome, Stage, VerbHandler};
use partner_core::clock::{Millis, format_time};
use partner_dialect::{ParsedAction, SearchFilters};
use partner_policy::VerbTraits;
use partner_store::memory::search::{SearchDomain, SearchQuery};
use partner_store::memory::vectors::{HybridHit, Via};

fn domain_title(domain: SearchDomain) -> &'static str {
    match domain {
        SearchDomain::Blocks => "Memory blocks",
        SearchDomain::Archival => "Archival memory",
        SearchDomain::Conversations => "Conversations",
    }
}

/// Search hits as text grouped by domain (in the order of the domains'
/// best hits), best first, each found by meaning marked so; and as data.
pub(super) fn format_hits(query: &str, found: &Found) -> Effect {
    let data = json!({ "hits": found.hits, "note": found.note });
    // A long query is echoed cut, not whole.
    let shown: String = query.chars().take(120).collect();
    let query = if shown.len() < query.len() {
        format!("{shown}…")
    } else {
        shown
    };
    let note = found
        .note
        .as_ref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    if found.hits.is_empty() {
        return Effect::text(format!("nothing found for \"{query}\"{note}")).with_data(data);
    }
    let mut order: Vec<SearchDomain> = Vec::new();
    for h in &found.hits {
        if !order.contains(&h.hit.domain) {
            order.push(h.hit.domain);
        }
    }
    let mut text = format!("{} results for \"{query}\"{note}:", found.hits.len());
    for domain in order {
        let hits: Vec<&HybridHit> = found
            .hits
            .iter()
            .filter(|h| h.hit.domain == domain)
            .collect();
        text.push_str(&format!("\n{} ({}):", domain_title(domain), hits.len()));
        for HybridHit { hit, via, .. } in hits {
            let place = match (&hit.label, &hit.role) {
                (Some(thread), Some(role)) => format!("{thread}, {role}"),
                (Some(label), None) => label.clone(),
                _ => format!("#{}", hit.id),
            };
            let who = if hit.agent.is_empty() {
                String::new()
            } else {
                format!("{}: ", hit.agent)
            };
            let how = match via {
                Via::Vector => " (by meaning)",
                _ => "",
            };
            text.push_str(&format!(
                "\n  - [{who}{place}, {}] {}{how}",
                format_time(hit.time),
                partner_store::memory::search::bracketed(&hit.snippet)
            ));
        }
    }
    Effect::text(text).with_data(data)
}

/// `/search`.
fn search(exec: &Executor, ctx: &TurnContext, action: &ParsedAction, now: Millis) -> Outcome {
    let text = action
        .content
        .as_deref()
        .ok_or("/search needs something to search for")?;
    let mut query = SearchQuery::new(text, Some(&ctx.agent));
    let filters = action.args.get::<SearchFilters>();
    match filters.and_then(|f| f.domain.as_deref()) {
        Some("archival") => query.domains = vec![SearchDomain::Archival, SearchDomain::Blocks],
        Some("conversations") => query.domains = vec![SearchDomain::Conversations],
        // Other agents' memory, as far as the policy lets this agent read:
        // by default their shared blocks, never their private ones.
        Some("constellation") => {
            query.reach = exec.engine().policy().visibility.reach_of(&ctx.agent)
        }
        _ => {}
    }
    if let Some(time) = filters.and_then(|f| f.time) {
        let edge = now - (time.amount as i64) * (time.unit.seconds() as i64) * 1000;
        if time.older_than {
            query.until = Some(edge);
        } else {
            query.since = Some(edge);
        }
    }
    query.role = filters.and_then(|f| f.role.clone());
    let mut found = exec.search_memory(&query)?;
    if query.left_out > 0 {
        let cut = format!(
            "searched for its first {} telling words; {} more were left out",
            partner_store::memory::MAX_QUERY_WORDS,
            query.left_out
        );
        found.note = Some(match found.note.take() {
            Some(n) => format!("{cut}; {n}"),
            None => cut,
        });
    }
    Ok(format_hits(text, &found).continued())
}

/// `/search`: memory and conversations.
pub(super) struct Search;

impl VerbHandler for Search {
    /// Reads beside the writer, and may ask an embedder about the query:
    /// before any transaction.
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::External
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits::default()
    }

    /// Searches read conversations, which the runtime stores outside the
    /// trace: replay takes their results from the record.
    fn reproducible(&self, _action: &ParsedAction) -> bool {
        false
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        search(cx.exec, cx.ctx, action, cx.now)
    }
}
