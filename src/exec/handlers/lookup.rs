//! `/search` across memory domains, with grouped results.

use std::sync::Arc;

use rusqlite::Connection;
use serde_json::json;

use super::{Effect, Handlers};
use crate::clock::{Millis, format_time};
use crate::dialect::{ParsedAction, Verb};
use crate::exec::context::TurnContext;
use crate::exec::executor::Executor;
use crate::exec::registry::{Cx, Outcome, Stage, VerbHandler};
use crate::memory::search::{SearchDomain, SearchHit, SearchQuery, search as fts};
use crate::permission::VerbTraits;

fn domain_title(domain: SearchDomain) -> &'static str {
    match domain {
        SearchDomain::Blocks => "Memory blocks",
        SearchDomain::Archival => "Archival memory",
        SearchDomain::Conversations => "Conversations",
    }
}

/// Search hits as text grouped by domain, and as data.
pub(super) fn format_hits(query: &str, hits: &[SearchHit]) -> Effect {
    if hits.is_empty() {
        return Effect::text(format!("nothing found for \"{query}\""))
            .with_data(json!({ "hits": [] }));
    }
    let mut text = format!("{} results for \"{query}\":", hits.len());
    let mut current = None;
    for hit in hits {
        if current != Some(hit.domain) {
            current = Some(hit.domain);
            let count = hits.iter().filter(|h| h.domain == hit.domain).count();
            text.push_str(&format!("\n{} ({count}):", domain_title(hit.domain)));
        }
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
        text.push_str(&format!(
            "\n  - [{who}{place}, {}] {}",
            format_time(hit.time),
            hit.snippet
        ));
    }
    Effect::text(text).with_data(json!({ "hits": hits }))
}

/// `/search`.
fn search(
    exec: &Executor,
    conn: &Connection,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
    let text = action
        .content
        .as_deref()
        .ok_or("/search needs something to search for")?;
    let mut query = SearchQuery::new(text, Some(&ctx.agent));
    match action.domain.as_deref() {
        Some("archival") => query.domains = vec![SearchDomain::Archival, SearchDomain::Blocks],
        Some("conversations") => query.domains = vec![SearchDomain::Conversations],
        // Other agents' memory, as far as the policy lets this agent read:
        // by default their shared blocks, never their private ones.
        Some("constellation") => {
            query.reach = exec.engine().policy().visibility.reach_of(&ctx.agent)
        }
        _ => {}
    }
    if let Some(time) = &action.time {
        let edge = now - (time.amount as i64) * (time.unit.seconds() as i64) * 1000;
        if time.older_than {
            query.until = Some(edge);
        } else {
            query.since = Some(edge);
        }
    }
    query.role = action.role.clone();
    let hits = fts(conn, &query)?;
    Ok(format_hits(text, &hits).continued())
}

/// `/search`: memory and conversations.
struct Search;

impl VerbHandler for Search {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Store
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
        search(cx.exec, cx.conn()?, cx.ctx, action, cx.now)
    }
}

pub(super) fn handlers() -> Handlers {
    vec![(Verb::Search, Arc::new(Search))]
}
