//! Forks that would repeat a search already made. An optional rule
//! (`(<Polite>)?`) forks the parse: one copy skips it and waits on the
//! stack, the other takes it. When the taken rule matches nothing and the
//! parse comes back to exactly where the skipping copy starts — same place
//! in the same rule, same captures — everything the waiting copy would
//! find, the taking path finds first, in the same order. So when the
//! waiting copy's turn comes, those parses are copied instead of searched
//! for again. (The parses are found twice, as the reference finds them;
//! only the search is not repeated.)

use super::state::{Ids, NIL, State};

/// A skipped fork, and what the taking path found once it became the same.
#[derive(Debug)]
pub(super) struct Twin<'g> {
    /// The skipping copy, as it was pushed.
    skip: State<'g>,
    /// Its place on the stack.
    at: usize,
    /// The stack's height when the taking path became the same as it.
    mark: Option<usize>,
    /// The parses found before then, and when that path's search was done.
    from: usize,
    to: Option<usize>,
}

/// The skipped forks of one match (only when every fork is explored: the
/// policies that stop at a first success prune the stack).
#[derive(Debug, Default)]
pub(super) struct Twins<'g> {
    list: Vec<Twin<'g>>,
    /// Marked twins whose taking path is still searching, innermost last.
    open: Vec<usize>,
    /// Twins whose skipping copy still waits, by stack place, lowest first.
    waiting: Vec<usize>,
    /// Whether forks are remembered at all.
    on: bool,
}

/// Most forks one match remembers.
const MAX_TWINS: usize = 1024;

/// True when two parses in progress will go on the same way.
fn same(a: &State<'_>, b: &State<'_>) -> bool {
    let ids = match (a.ids, b.ids) {
        (Ids::Off, Ids::Off) => true,
        (Ids::On(x), Ids::On(y)) => x == y,
        _ => false,
    };
    ids && std::ptr::eq(a.set, b.set)
        && a.alt == b.alt
        && a.part == b.part
        && a.index == b.index
        && a.values == b.values
        && a.parent == b.parent
        && a.in_repeat == b.in_repeat
        && a.spacing == b.spacing
        && a.wild == b.wild
        && a.no_skip == b.no_skip
        && match (a.value, b.value) {
            (None, None) => true,
            (Some(x), Some(y)) => std::ptr::eq(x, y),
            _ => false,
        }
}

impl<'g> Twins<'g> {
    /// Empty, over buffers kept from an earlier match; forks remembered
    /// (`on`) or not.
    pub(super) fn reuse(
        list: Vec<Twin<'g>>,
        open: Vec<usize>,
        waiting: Vec<usize>,
        on: bool,
    ) -> Self {
        Twins {
            list,
            open,
            waiting,
            on,
        }
    }

    /// Its buffers, for keeping.
    pub(super) fn into_buffers(self) -> (Vec<Twin<'g>>, Vec<usize>, Vec<usize>) {
        (self.list, self.open, self.waiting)
    }

    /// Remembers the skipping copy `skip`, waiting at stack place `at`;
    /// returns the mark the taking state carries.
    pub(super) fn fork(&mut self, skip: &State<'g>, at: usize) -> u32 {
        if !self.on || self.list.len() >= MAX_TWINS {
            return NIL;
        }
        self.waiting.push(self.list.len());
        self.list.push(Twin {
            skip: *skip,
            at,
            mark: None,
            from: 0,
            to: None,
        });
        (self.list.len() - 1) as u32
    }

    /// A state came back to a rule from a nested one: when it is now the
    /// same as the copy that skipped, its search from here on is the one
    /// that copy would make. `height` is the stack's, `found` the parses
    /// found so far.
    pub(super) fn arrived(&mut self, state: &mut State<'g>, height: usize, found: usize) {
        let id = state.twin as usize;
        let Some(t) = self.list.get_mut(id) else {
            return;
        };
        if t.mark.is_none() && same(state, &t.skip) {
            t.mark = Some(height);
            t.from = found;
            state.twin = NIL;
            self.open.push(id);
        }
    }

    /// Before a state is taken off a stack `height` high: the searches that
    /// are done (nothing they left remains) are closed.
    pub(super) fn close(&mut self, height: usize, found: usize) {
        while let Some(&id) = self.open.last() {
            match self.list[id].mark {
                Some(mark) if height <= mark => {
                    self.list[id].to = Some(found);
                    self.open.pop();
                }
                _ => break,
            }
        }
    }

    /// The state at stack place `at` is taken off: when it is a skipping
    /// copy whose twin's search is done, the range of parses to copy.
    pub(super) fn replay(&mut self, at: usize) -> Option<(usize, usize)> {
        let &id = self.waiting.last()?;
        if self.list[id].at != at {
            return None;
        }
        self.waiting.pop();
        let t = &self.list[id];
        Some((t.from, t.to?))
    }
}

/// Copies the parses `from..to` to the end of `results`, up to `max` in
/// all; true when that many are found.
pub(super) fn copy_parses<T: Clone>(
    results: &mut Vec<T>,
    from: usize,
    to: usize,
    max: usize,
) -> bool {
    #[cfg(test)]
    tests::COPIED.with(|c| c.set(c.get() + to.saturating_sub(from)));
    for i in from..to {
        if results.len() >= max {
            break;
        }
        let Some(copy) = results.get(i).cloned() else {
            break;
        };
        results.push(copy);
    }
    results.len() >= max
}

#[cfg(test)]
pub(super) mod tests {
    use crate::{LoadOptions, MatchOptions, NoFiles, load_grammar, match_grammar};

    thread_local! {
        /// Set to match without remembering skipped forks.
        pub(crate) static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// Parses copied instead of searched for, so far.
        pub(crate) static COPIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn copied_parses_are_the_ones_a_second_search_would_find_in_its_order() {
        let cases = [
            (
                "<Start> = (<Polite>)? <Ask> $(place:wildcard) -> { place } | (<Polite>)? $(x:wildcard) -> { x };\n<Polite> = (please | kindly)?;\n<Ask> = (what's | what is) the weather (like)? (in | for)?;",
                [
                    "what's the weather like in Seattle",
                    "please what is the weather in Paris",
                    "kindly go",
                ],
            ),
            (
                "<Start> = (<A>)? (<B>)? play $(t:wildcard) $(a:<By>)? -> { t, a };\n<By> = by $(a:wildcard) -> a;\n<A> = (um)?;\n<B> = (<A>)? (uh)?;",
                [
                    "um uh play Yesterday by the Beatles",
                    "play it by ear by me",
                    "uh play x",
                ],
            ),
        ];
        let options = LoadOptions {
            enable_value_expressions: true,
            start_value_required: true,
            ..Default::default()
        };
        for (text, inputs) in cases {
            let g = load_grammar("t.agr", text, &options, &NoFiles).expect("the grammar loads");
            for input in inputs {
                COPIED.with(|c| c.set(0));
                let on = match_grammar(&g, input, &MatchOptions::default());
                let copied = COPIED.with(std::cell::Cell::get);
                OFF.with(|o| o.set(true));
                let off = match_grammar(&g, input, &MatchOptions::default());
                OFF.with(|o| o.set(false));
                assert_eq!(
                    COPIED.with(std::cell::Cell::get),
                    copied,
                    "nothing is copied when off"
                );
                assert!(!off.is_empty(), "{input}: matches");
                assert_eq!(on, off, "{input}");
                assert!(
                    copied > 0,
                    "{input}: some parses were copied, not searched for"
                );
            }
        }
    }
}
