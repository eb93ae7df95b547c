//! A parse in progress, and the arena its shared history lives in.
//!
//! A parse forks at every alternative, optional part, repetition and
//! wildcard length; the forks share what was matched before them. That
//! shared history — the rule frames being matched, the variables named and
//! the values captured — is kept as linked lists whose nodes live in one
//! arena per match and are only ever appended, so a state is a few indices
//! and copying one is a `memcpy`: no reference counts, no allocation per
//! fork, everything freed at once when the match ends. Captured text is a
//! span of the request (or the grammar's own words), read when a value is
//! built.

use super::expr::Expr;
use super::joins::{JoinBuffers, Joins};
use super::model::{Part, RuleSet};
use super::parse::Spacing;
use super::twins::{Twin, Twins};

/// A node in one of the arena's lists; `NIL` ends a list.
pub(super) type Link = u32;

/// The end of a list.
pub(super) const NIL: Link = u32::MAX;

/// A variable a rule names, in the order named.
#[derive(Debug, Clone, Copy)]
pub(super) struct IdNode<'g> {
    pub name: Option<&'g str>,
    pub id: u32,
    /// Captured by a wildcard of an entity type (not `string`,
    /// `wildcard`, `word` or `number`).
    pub entity: bool,
    pub prev: Link,
}

/// Which values a rule keeps: none (`Off`), or a list (possibly empty).
#[derive(Debug, Clone, Copy)]
pub(super) enum Ids {
    Off,
    On(Link),
}

/// What a variable captured.
#[derive(Debug, Clone, Copy)]
pub(super) enum Captured<'g> {
    /// Text of the request, by byte range.
    Span(u32, u32),
    /// A literal's words (the value of a rule that is one literal).
    Words(&'g [String]),
    Num(f64),
    Undefined,
    /// A nested rule: its value expression and its variables.
    Nested(Option<&'g Expr>, Link),
}

/// A value captured for variable `id`.
#[derive(Debug, Clone, Copy)]
pub(super) struct ValNode<'g> {
    pub id: u32,
    pub value: Captured<'g>,
    pub wildcard: bool,
    pub prev: Link,
}

/// A rule being matched around a nested one: where to go on when the
/// nested rule is done.
#[derive(Debug, Clone, Copy)]
pub(super) struct Frame<'g> {
    pub set: &'g RuleSet,
    pub alt: usize,
    pub value: Option<&'g Expr>,
    pub part: usize,
    pub var: Option<&'g str>,
    pub ids: Ids,
    pub parent: Link,
    pub repeat_part: Option<usize>,
    /// Where the current repetition began: one that read nothing is the
    /// last (an empty repetition would repeat forever).
    pub repeat_start: usize,
    pub spacing: Spacing,
    /// The completion's entry this rule set was entered as (`NIL`: none).
    pub memo: Link,
    /// Entered where it was entered before: completion offers nothing
    /// from a parse stopped inside it (see `memo`).
    pub again: bool,
}

/// The nodes of one match's parses, and its stack of states left for
/// later. Their buffers are kept per thread between matches (emptied), so
/// a match allocates nothing for them once the thread has matched before.
#[derive(Debug, Default)]
pub(super) struct Arena<'g> {
    frames: Vec<Frame<'g>>,
    ids: Vec<IdNode<'g>>,
    values: Vec<ValNode<'g>>,
    /// The stack of states left for later.
    pub stack: Vec<State<'g>>,
    /// Places already asked which alternatives may begin there.
    pub seen: Vec<(Place, u64)>,
    /// Rule sets (by address) already asked which alternatives' needed
    /// words the request holds: the alternatives checked, and those met.
    pub needs: Vec<(usize, u64, u64)>,
    /// Skipped forks whose search a taking path may make for them.
    pub twins: Twins<'g>,
    /// Searches made, to share with states that would make them again.
    pub joins: Joins<'g>,
}

/// A place in a match where alternatives are checked: the rule set (by
/// address), the byte, whether a wildcard is open, whether separators may
/// come first.
pub(super) type Place = (usize, usize, bool, bool);

/// Emptied buffers kept for the next match on this thread.
#[derive(Default)]
struct Spare {
    frames: Vec<Frame<'static>>,
    ids: Vec<IdNode<'static>>,
    values: Vec<ValNode<'static>>,
    stack: Vec<State<'static>>,
    seen: Vec<(Place, u64)>,
    needs: Vec<(usize, u64, u64)>,
    twins: Vec<Twin<'static>>,
    twins_open: Vec<usize>,
    twins_waiting: Vec<usize>,
    joins: JoinBuffers,
}

thread_local! {
    static SPARE: std::cell::RefCell<Spare> = std::cell::RefCell::default();
}

/// Buffers larger than this (a hostile match) are not kept.
const MAX_KEPT: usize = 1 << 14;

/// An emptied buffer, for keeping: the same allocation, retyped (the
/// in-place collect reuses it, as no element is produced).
pub(super) fn emptied<A, B>(mut list: Vec<A>) -> Vec<B> {
    if list.capacity() > MAX_KEPT {
        return Vec::new();
    }
    list.clear();
    list.into_iter().filter_map(|_| None).collect()
}

impl<'g> Arena<'g> {
    /// An empty arena, reusing this thread's spare buffers; skipped forks
    /// are remembered when `twins`.
    pub(super) fn new(twins: bool) -> Self {
        #[cfg(test)]
        let twins = twins && !super::twins::tests::OFF.with(std::cell::Cell::get);
        // A match made from inside another on this thread finds the
        // buffers taken (empty) and grows its own; the last to end keeps
        // its buffers.
        SPARE.with_borrow_mut(|spare| Arena {
            frames: std::mem::take(&mut spare.frames),
            ids: std::mem::take(&mut spare.ids),
            values: std::mem::take(&mut spare.values),
            stack: std::mem::take(&mut spare.stack),
            seen: std::mem::take(&mut spare.seen),
            needs: std::mem::take(&mut spare.needs),
            twins: Twins::reuse(
                emptied(std::mem::take(&mut spare.twins)),
                std::mem::take(&mut spare.twins_open),
                std::mem::take(&mut spare.twins_waiting),
                twins,
            ),
            joins: Joins::reuse(std::mem::take(&mut spare.joins), false),
        })
    }
}

impl Drop for Arena<'_> {
    fn drop(&mut self) {
        let (twins, mut twins_open, mut twins_waiting) =
            std::mem::take(&mut self.twins).into_buffers();
        twins_open.clear();
        twins_waiting.clear();
        let joins = std::mem::take(&mut self.joins).into_buffers();
        SPARE.with_borrow_mut(|spare| {
            spare.joins = joins;
            spare.twins = emptied(twins);
            spare.twins_open = twins_open;
            spare.twins_waiting = twins_waiting;
            spare.frames = emptied(std::mem::take(&mut self.frames));
            spare.ids = emptied(std::mem::take(&mut self.ids));
            spare.values = emptied(std::mem::take(&mut self.values));
            spare.stack = emptied(std::mem::take(&mut self.stack));
            spare.seen = emptied(std::mem::take(&mut self.seen));
            spare.needs = emptied(std::mem::take(&mut self.needs));
        });
    }
}

fn push<T>(list: &mut Vec<T>, node: T) -> Link {
    let at = list.len() as Link;
    list.push(node);
    at
}

impl<'g> Arena<'g> {
    pub(super) fn frame(&self, at: Link) -> Option<&Frame<'g>> {
        self.frames.get(at as usize)
    }

    pub(super) fn id(&self, at: Link) -> Option<&IdNode<'g>> {
        self.ids.get(at as usize)
    }

    pub(super) fn value(&self, at: Link) -> Option<&ValNode<'g>> {
        self.values.get(at as usize)
    }

    pub(super) fn push_frame(&mut self, frame: Frame<'g>) -> Link {
        push(&mut self.frames, frame)
    }

    /// A copy of captured value `node` on top of list `prev`.
    pub(super) fn push_value(&mut self, mut node: ValNode<'g>, prev: Link) -> Link {
        node.prev = prev;
        push(&mut self.values, node)
    }

    /// How many nodes it holds.
    pub(super) fn len(&self) -> usize {
        self.frames.len() + self.ids.len() + self.values.len()
    }
}

/// Why a state was left for later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    Start,
    Alternation,
    Optional,
    Repeat,
    Wildcard,
}

/// What was matched last, for backward completion: where it began,
/// whether it was found by scanning past a wildcard, and the spacing it was
/// matched with.
#[derive(Debug, Clone, Copy)]
pub(super) enum LastPart<'g> {
    Str {
        start: usize,
        words: &'g [String],
        after_wildcard: bool,
        mode: Spacing,
    },
    /// A number, and the variable it filled.
    Num {
        start: usize,
        id: u32,
        after_wildcard: bool,
    },
}

/// One parse in progress: where it is in which rule, and (as arena links)
/// the rules around it, its variables and its captures.
#[derive(Debug, Clone, Copy)]
pub(super) struct State<'g> {
    pub set: &'g RuleSet,
    pub alt: usize,
    pub value: Option<&'g Expr>,
    pub part: usize,
    pub ids: Ids,
    pub next_id: u32,
    pub values: Link,
    pub parent: Link,
    pub in_repeat: bool,
    pub spacing: Spacing,
    pub index: usize,
    pub wild: Option<(usize, Option<u32>)>,
    pub origin: Origin,
    pub last: Option<LastPart<'g>>,
    /// Resumed to take an optional part whose skip was tried first.
    pub no_skip: bool,
    /// The skipped fork this parse may turn out the same as (`NIL`: none;
    /// see `twins`).
    pub twin: u32,
}

impl<'g> State<'g> {
    /// A state at the start of alternative `alt` of the top rule.
    pub(super) fn start(set: &'g RuleSet, alt: usize) -> Self {
        let rule = &set.rules()[alt];
        State {
            set,
            alt,
            value: rule.value.as_deref(),
            part: 0,
            ids: Ids::On(NIL),
            next_id: 0,
            values: NIL,
            parent: NIL,
            in_repeat: false,
            spacing: rule.spacing,
            index: 0,
            wild: None,
            origin: Origin::Start,
            last: None,
            no_skip: false,
            twin: NIL,
        }
    }

    /// The parts of the alternative being matched.
    pub(super) fn parts(&self) -> &'g [Part] {
        let set: &'g RuleSet = self.set;
        set.rules()
            .get(self.alt)
            .map_or(&[], |r| r.parts.as_slice())
    }

    /// The list of variables, when the rule keeps them.
    pub(super) fn id_list(&self) -> Link {
        match self.ids {
            Ids::On(list) => list,
            Ids::Off => NIL,
        }
    }

    /// Names a variable (when the rule keeps values); its id.
    pub(super) fn add_id(
        &mut self,
        arena: &mut Arena<'g>,
        name: Option<&'g str>,
        entity: bool,
    ) -> Option<u32> {
        let Ids::On(list) = self.ids else {
            return None;
        };
        let id = self.next_id;
        self.next_id += 1;
        let node = IdNode {
            name,
            id,
            entity,
            prev: list,
        };
        self.ids = Ids::On(push(&mut arena.ids, node));
        Some(id)
    }

    /// Records what variable `id` captured.
    pub(super) fn add_with_id(
        &mut self,
        arena: &mut Arena<'g>,
        id: u32,
        value: Captured<'g>,
        wildcard: bool,
    ) {
        let node = ValNode {
            id,
            value,
            wildcard,
            prev: self.values,
        };
        self.values = push(&mut arena.values, node);
    }

    /// Names a variable and records its value.
    pub(super) fn add_value(
        &mut self,
        arena: &mut Arena<'g>,
        name: Option<&'g str>,
        value: Captured<'g>,
    ) {
        if let Some(id) = self.add_id(arena, name, false) {
            self.add_with_id(arena, id, value, false);
        }
    }

    /// The spacing that governs separators before the current part: the
    /// rule's own, or for a nested rule's first part, the nearest ancestor
    /// with a part before the reference (else the top rule's).
    pub(super) fn leading_spacing(&self, arena: &Arena<'g>) -> Spacing {
        if self.part != 0 {
            return self.spacing;
        }
        let mut frame = arena.frame(self.parent);
        while let Some(f) = frame {
            if f.part > 1 || f.parent == NIL {
                return f.spacing;
            }
            frame = arena.frame(f.parent);
        }
        self.spacing
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_KEPT, emptied};

    #[test]
    fn emptied_buffers_keep_their_room_unless_huge() {
        let small: Vec<u64> = (0..100).collect();
        let kept: Vec<u64> = emptied(small);
        assert!(kept.is_empty());
        assert!(kept.capacity() >= 100, "the allocation is reused");
        let huge: Vec<u64> = vec![0; MAX_KEPT + 1];
        let dropped: Vec<u64> = emptied(huge);
        assert_eq!(
            dropped.capacity(),
            0,
            "a hostile match's buffers are let go"
        );
    }
}
