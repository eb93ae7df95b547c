//! What the console's reads and the partner's edits do in the host: the
//! queue with what each request would change or run (judged here, where
//! it would run), pages of the trace, memory, search, standing rules,
//! learned phrasings, Pattern Lisp, and saves. Every answer's data is a
//! typed value of `partner_protocol::views`, cut to fit one line of the
//! socket and saying what it left out.

mod lisp;
mod queue;

use partner_core::clock::Clock;
use partner_engine::exec::{ExecError, Executor};
use partner_policy::Authority;
use partner_protocol::views::{
    self, DATA_BUDGET, Found, Listed, OLDER_PAGE, SaveOutcome, TRACE_WINDOW, TracePage,
};
use partner_protocol::{Answer, Op, Returned};
use partner_store::memory::MemoryError;
use partner_store::trace::query::{OlderPage, TraceFilter};
use partner_store::trace::{BlockSpec, TraceRecord};

use super::Served;
use super::ops::blocking;

/// Most bytes of one trace record's texts an answer carries.
const RECORD_TEXT: usize = 16 * 1024;

/// Data and the words that go with it.
fn data(message: String, data: Returned) -> Result<Answer, String> {
    Ok(Answer { message, data })
}

/// A list fitted to an answer, with how many were left out in words.
fn listed<T: serde::Serialize>(
    what: &str,
    items: Vec<T>,
    returned: impl FnOnce(Listed<T>) -> Returned,
) -> Result<Answer, String> {
    let list = views::fit_list(items, DATA_BUDGET);
    let message = match list.left_out {
        0 => format!("{} {what}", list.items.len()),
        n => format!(
            "{} {what}; {n} more did not fit one answer",
            list.items.len()
        ),
    };
    data(message, returned(list))
}

/// Does what a read or an edit of the console asks, on the blocking pool.
/// An edit is recorded as `by`'s.
pub async fn answer(served: &Served, op: Op, by: &Authority) -> Result<Answer, String> {
    let by = by.clone();
    blocking(served, move |ex| read(ex, op, &by)).await?
}

/// The work itself, with the executor.
fn read(ex: &Executor, op: Op, by: &Authority) -> Result<Answer, String> {
    let now = partner_core::clock::SystemClock.now_ms();
    match op {
        Op::Queue => queue::answer(ex),
        Op::Trace { after } => trace(ex, after),
        Op::OlderTrace { filter, before } => older_trace(ex, &filter, before),
        Op::Blocks { agent } => ex
            .store()
            .read(|tx| tx.blocks(Some(&agent)))
            .map_err(|e| format!("could not read {agent}'s memory: {e}"))
            .and_then(|list| listed("blocks", list, Returned::Blocks)),
        Op::History { agent, label } => ex
            .store()
            .read(|tx| tx.history(&agent, &label))
            .map_err(|e| format!("could not read {label}'s history: {e}"))
            .and_then(|list| listed("versions", list, Returned::History)),
        Op::Search { query } => search(ex, &query),
        Op::Index => data(
            "how far search by meaning has caught up".into(),
            Returned::Index(ex.recall().map(|recall| recall.status())),
        ),
        Op::Rules => ex
            .store()
            .read(|tx| tx.rules(now))
            .map_err(|e| format!("could not read the standing rules: {e}"))
            .and_then(|rules| listed("standing rules", rules, Returned::Rules)),
        Op::RevokeRule { id } => match ex.store().transaction(|tx| tx.revoke_rule(id, now)) {
            Ok(true) => said(format!("standing rule #{id} revoked")),
            Ok(false) => Err(format!("standing rule #{id} was not in force")),
            Err(e) => Err(format!("could not revoke rule #{id}: {e}")),
        },
        Op::Learned => ex
            .store()
            .phrasings()
            .phrasings()
            .map_err(|e| format!("could not read the learned phrasings: {e}"))
            .and_then(|rules| listed("learned phrasings", rules, Returned::Learned)),
        Op::Learn { words, action } => partner_runtime::proposals::learn(
            ex.store().phrasings(),
            &words,
            &action,
            partner_core::clock::SystemClock.now_ms_public(),
        )
        .map(said_ok),
        Op::Forget { id } => match ex.store().phrasings().forget(id) {
            Ok(true) => said(format!("forgot #{id}")),
            Ok(false) => Err(format!("no learned phrasing #{id}")),
            Err(e) => Err(format!("could not forget #{id}: {e}")),
        },
        Op::Lisp { agent, text } => {
            let now = partner_core::clock::SystemClock.now_ms_public();
            let evaluated = lisp::evaluate(ex, &agent, &text, now);
            data(evaluated.title.clone(), Returned::Evaluated(evaluated))
        }
        Op::SaveBlock {
            agent,
            label,
            value,
            base_version,
        } => {
            let outcome = save_block(ex, (&agent, &label), value, base_version, by);
            data(format!("{agent}/{label}"), Returned::Saved(outcome))
        }
        Op::Verbs => data(
            "the verbs beyond the built-in ones".into(),
            Returned::Verbs(ex.registry().table().extensions_toml()),
        ),
        Op::PlanCommand { text } => data(
            format!("the plan for `{text}`"),
            Returned::Plan(Box::new(ex.plan_command(&text))),
        ),
        other => Err(format!("not a read of the constellation: {other:?}")),
    }
}

/// Words alone.
fn said(message: String) -> Result<Answer, String> {
    Ok(said_ok(message))
}

fn said_ok(message: String) -> Answer {
    Answer::said(message)
}

/// A record cut to carry at most [`RECORD_TEXT`] bytes of each text, its
/// structured result left out when that is larger; each cut says so.
fn cut_record(mut record: TraceRecord) -> TraceRecord {
    for text in [&mut record.text, &mut record.canonical, &mut record.result] {
        partner_protocol::fit::cut(text, RECORD_TEXT);
    }
    let size = serde_json::to_string(&record.data).map_or(0, |s| s.len());
    if size > RECORD_TEXT {
        record.data = serde_json::json!({
            "cut": format!("{size} bytes of structured result not sent; `partner trace --json` has them")
        });
    }
    record
}

/// The newest records after `after` that fit one answer: when older ones
/// are left out, the console starts anew and pages them when it needs.
fn trace(ex: &Executor, after: u64) -> Result<Answer, String> {
    let (records, restart) = ex
        .store()
        .read(|tx| tx.newest_after(after, TRACE_WINDOW))
        .map_err(|e| format!("could not read the trace: {e}"))?;
    let next = records.last().map_or(after, |r| r.seq);
    // Keep the newest that fit.
    let newest_first: Vec<TraceRecord> = records.into_iter().rev().map(cut_record).collect();
    let Listed {
        mut items,
        left_out,
    } = views::fit_list(newest_first, DATA_BUDGET);
    items.reverse();
    let page = TracePage {
        records: items,
        next,
        restart: restart || left_out > 0,
    };
    data(
        format!("{} trace records", page.records.len()),
        Returned::Trace(page),
    )
}

/// A page of the records before `before` that `filter` admits, newest
/// first; a page cut to fit goes on below its last record.
fn older_trace(ex: &Executor, filter: &TraceFilter, before: u64) -> Result<Answer, String> {
    let page = ex
        .store()
        .read(|tx| tx.older(before, filter, OLDER_PAGE))
        .map_err(|e| e.to_string())?;
    let records: Vec<TraceRecord> = page.records.into_iter().map(cut_record).collect();
    let Listed { items, left_out } = views::fit_list(records, DATA_BUDGET);
    let next = match (left_out, items.last()) {
        (0, _) => page.next,
        (_, Some(last)) => Some(last.seq),
        (_, None) => return Err("a trace record too large to send".into()),
    };
    let page = OlderPage {
        records: items,
        next,
    };
    data(
        format!("{} older trace records", page.records.len()),
        Returned::OlderTrace(page),
    )
}

/// A memory search, by meaning too where an embedder is configured.
fn search(ex: &Executor, query: &str) -> Result<Answer, String> {
    let q = partner_store::memory::SearchQuery::new(query, None);
    let found = ex
        .search_memory(&q)
        .map_err(|e| format!("search failed: {e}"))?;
    let Listed { items, left_out } = views::fit_list(found.hits, DATA_BUDGET);
    let mut note = found.note;
    if left_out > 0 {
        let cut = format!("{left_out} more hits did not fit one answer");
        note = Some(note.map_or(cut.clone(), |n| format!("{n}; {cut}")));
    }
    let found = Found { hits: items, note };
    data(format!("{} hits", found.hits.len()), Returned::Found(found))
}

/// Writes a block as the partner if it is still at `base`; a block that
/// changed since comes back as it is now.
fn save_block(
    ex: &Executor,
    (agent, label): (&str, &str),
    value: String,
    base: i64,
    by: &Authority,
) -> SaveOutcome {
    let current = match ex.store().read(|tx| tx.block(agent, label)) {
        Ok(Some(block)) => block,
        Ok(None) => return SaveOutcome::Failed(format!("block {label} no longer exists")),
        Err(e) => return SaveOutcome::Failed(e.to_string()),
    };
    let spec = BlockSpec {
        agent: agent.to_string(),
        label: label.to_string(),
        kind: current.kind,
        permission: current.permission,
        char_limit: current.char_limit,
        description: current.description.clone(),
        value,
        shared: current.shared,
    };
    match ex.partner_write_block(spec, base, by) {
        Ok(report) => SaveOutcome::Saved(report.text),
        Err(ExecError::Memory(MemoryError::Conflict(_))) => {
            match ex.store().read(|tx| tx.block(agent, label)) {
                Ok(Some(theirs)) => SaveOutcome::Conflict(theirs),
                _ => SaveOutcome::Failed(format!("block {label} changed and could not be read")),
            }
        }
        Err(e) => SaveOutcome::Failed(e.to_string()),
    }
}
