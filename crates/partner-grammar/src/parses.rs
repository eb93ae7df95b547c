//! The parses of one match as they are found: each built into its value
//! from its captures, with how it ended kept for searches shared later
//! (see `joins`).

use super::expr::Path;
use super::joins::Ending;
use super::matcher::{Arena, MAX_RESULTS, MatchResult, State, Work};
use super::values::{Captures, Stat, make_value};

/// The parses of one match so far (how each ended is `Joins::endings`).
pub(super) struct Found<'r> {
    pub results: Vec<MatchResult>,
    pub request: &'r str,
}

impl Found<'_> {
    /// Builds the parse that ended as `ending`; true when no more may be
    /// found.
    pub(super) fn push<'g>(&mut self, arena: &mut Arena<'g>, ending: Ending<'g>) -> bool {
        let mut stat = Stat::default();
        let captures = Captures {
            arena,
            values: ending.values,
            request: self.request,
        };
        let value = make_value(
            ending.value,
            ending.ids,
            captures,
            &Path::Root,
            &mut stat,
            None,
        );
        self.results.push(MatchResult {
            value,
            matched_value_count: stat.count,
            wildcard_char_count: stat.chars,
            entity_wildcard_property_names: stat.names,
        });
        arena.joins.endings.push(ending);
        self.results.len() >= MAX_RESULTS
    }

    /// Copies parses `from..to` (a twin's); true when no more may be found.
    pub(super) fn copy(&mut self, arena: &mut Arena<'_>, from: usize, to: usize) -> bool {
        let full = super::twins::copy_parses(&mut self.results, from, to, MAX_RESULTS);
        let endings = &mut arena.joins.endings;
        let copied = self.results.len() - endings.len();
        for i in from..from + copied {
            endings.push(endings[i]);
        }
        full
    }

    /// The parses `range` a search from `start` found, as `state`'s; true
    /// when no more may be found.
    pub(super) fn rebase<'g>(
        &mut self,
        work: &mut Work<'g>,
        start: &State<'g>,
        state: &State<'g>,
        range: std::ops::Range<usize>,
    ) -> bool {
        for at in range {
            work.steps += 1;
            let ending = work.arena.rebase(at, start, state);
            if self.push(&mut work.arena, ending) {
                return true;
            }
        }
        false
    }
}
