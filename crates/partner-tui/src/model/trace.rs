//! The console's part of the trace: the newest [`MAX_TRACE`] records,
//! followed as they are written, and — for the filter the trace pane
//! shows — pages of older records read as the partner reaches them, so
//! the console holds a window whatever the trace's length and a filter
//! still finds a record of any age.

use super::Model;
use partner_protocol::wire::TraceRecord;
use partner_protocol::wire::{OlderPage, TraceFilter};

/// Most trace records held from the newest; older ones stay in the
/// database and are read a page at a time.
pub const MAX_TRACE: usize = 10_000;

/// Most older records held for one filter: past them the pane says the
/// rest is read with `partner trace`.
pub const MAX_OLDER: usize = 20_000;

/// Records older than the held ones that one filter admits.
#[derive(Debug, Clone, Default)]
pub struct OlderTrace {
    /// The filter they were read for.
    pub filter: TraceFilter,
    /// The records, newest first.
    pub records: Vec<TraceRecord>,
    /// Where the next page starts (exclusive); `None` once the start of
    /// the trace was reached.
    pub from: Option<u64>,
    /// A page was asked for and has not come.
    pub asked: bool,
    /// Why the last page could not be read (no more are asked for this
    /// filter).
    pub failed: Option<String>,
}

impl OlderTrace {
    /// True when [`MAX_OLDER`] records are held and no more are read.
    pub fn full(&self) -> bool {
        self.records.len() >= MAX_OLDER
    }
}

impl Model {
    /// New records from the database (oldest first, after the last one
    /// read); `restart` when older new ones were left out, so what is held
    /// starts anew rather than with a gap.
    pub fn receive_trace(&mut self, records: Vec<TraceRecord>, restart: bool) {
        if restart {
            self.trace.clear();
            self.trace_older = None;
        }
        // Two reads asked before either answered bring the same records:
        // each is held once.
        let known: std::collections::HashSet<&str> = self
            .trace
            .iter()
            .rev()
            .take(records.len() + 1024)
            .map(|r| r.id.as_str())
            .collect();
        let fresh: Vec<TraceRecord> = records
            .into_iter()
            .filter(|r| !known.contains(r.id.as_str()))
            .collect();
        self.trace.extend(fresh);
        if self.trace.len() > MAX_TRACE {
            let drop = self.trace.len() - MAX_TRACE;
            let dropped: Vec<TraceRecord> = self.trace.drain(..drop).collect();
            // What leaves the window joins the older records the pane's
            // filter admits (they are newer than all of those).
            if let Some(older) = &mut self.trace_older {
                let search = older.filter.lowered();
                let mut moved: Vec<TraceRecord> = dropped
                    .into_iter()
                    .rev()
                    .filter(|r| older.filter.admits(r, search.as_deref()))
                    .collect();
                moved.append(&mut older.records);
                older.records = moved;
                if older.records.len() > MAX_OLDER {
                    older.records.truncate(MAX_OLDER);
                    older.from = older.records.last().map(|r| r.seq);
                }
            }
        }
    }

    /// Asks for the next page of older records for `filter`: where it
    /// starts, or `None` when none is needed (one is on its way, the
    /// start was reached, or enough are held).
    pub fn ask_older_trace(&mut self, filter: &TraceFilter) -> Option<u64> {
        let oldest_held = self.trace.first().map(|r| r.seq)?;
        if self
            .trace_older
            .as_ref()
            .is_none_or(|o| &o.filter != filter)
        {
            self.trace_older = Some(OlderTrace {
                filter: filter.clone(),
                records: Vec::new(),
                from: Some(oldest_held),
                asked: false,
                failed: None,
            });
        }
        let older = self.trace_older.as_mut()?;
        if older.asked || older.full() || older.failed.is_some() {
            return None;
        }
        let from = older.from?;
        older.asked = true;
        Some(from)
    }

    /// A page of older records read for `filter` from `before`; a page
    /// that no longer follows what is held (the filter changed, or the
    /// window moved) is dropped.
    pub fn receive_older_trace(&mut self, filter: &TraceFilter, before: u64, page: OlderPage) {
        let Some(older) = &mut self.trace_older else {
            return;
        };
        if &older.filter != filter || older.from != Some(before) {
            return;
        }
        older.asked = false;
        older.records.extend(page.records);
        older.records.truncate(MAX_OLDER);
        older.from = page.next;
    }

    /// A page of older records for `filter` from `before` could not be
    /// read: the pane says so instead of waiting for it.
    pub fn older_trace_failed(&mut self, filter: &TraceFilter, before: u64, why: String) {
        if let Some(older) = &mut self.trace_older
            && &older.filter == filter
            && older.from == Some(before)
        {
            older.asked = false;
            older.failed = Some(why);
        }
    }

    /// Why older records for `filter` could not be read, if they could not.
    pub fn older_trace_failure(&self, filter: &TraceFilter) -> Option<&str> {
        self.trace_older
            .as_ref()
            .filter(|o| &o.filter == filter)
            .and_then(|o| o.failed.as_deref())
    }

    /// The records `filter` admits, newest first: the held ones, then the
    /// older ones read for it.
    pub fn trace_rows<'a>(
        &'a self,
        filter: &TraceFilter,
    ) -> impl Iterator<Item = &'a TraceRecord> + 'a {
        let search = filter.lowered();
        let older = self
            .trace_older
            .as_ref()
            .filter(|o| &o.filter == filter)
            .map(|o| o.records.as_slice())
            .unwrap_or_default();
        let filter = filter.clone();
        self.trace
            .iter()
            .rev()
            .filter(move |r| filter.admits(r, search.as_deref()))
            .chain(older.iter())
    }

    /// Whether records older than those held and admitted by `filter`
    /// may exist: `None` when unknown yet (none was read for it), else
    /// whether more could be read.
    pub fn older_trace_left(&self, filter: &TraceFilter) -> Option<bool> {
        let older = self.trace_older.as_ref().filter(|o| &o.filter == filter)?;
        Some(older.from.is_some())
    }
}
