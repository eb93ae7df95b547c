//! The work of one match: the states left for later (in the arena), the
//! options that prune them, the bounds that stop a runaway match, and
//! which alternatives are worth trying at a place.

use super::matcher::{MAX_STEPS, MatchOptions, Policy};
use super::memo::Memo;
use super::model::RuleSet;
use super::needs::Grams;
use super::state::{Arena, Origin, State};
use super::viable::{Viable, viable_at};

/// The states left for later (in the arena), with the options that prune
/// them and the arena their histories live in.
pub(super) struct Work<'g> {
    pub arena: Arena<'g>,
    pub options: MatchOptions,
    pub steps: usize,
    /// Skip alternatives that cannot begin where they would start (not
    /// when completing: their partial matches are what completion offers).
    pub prune: bool,
    /// Parses found so far.
    pub found: usize,
    /// Searches from the same place are shared (see `joins`).
    pub joins: bool,
    /// The request's letter pairs, once a rule's needed words are asked.
    grams: Option<Grams>,
    /// What completion remembers of the rules it entered (none when
    /// matching).
    pub memo: Option<Box<Memo>>,
}

impl<'g> Work<'g> {
    /// Work with an empty stack.
    pub(super) fn new(options: MatchOptions, prune: bool) -> Self {
        let exhaustive = options == MatchOptions::default();
        Work {
            arena: Arena::new(prune && exhaustive),
            options,
            steps: 0,
            prune,
            found: 0,
            joins: false,
            grams: None,
            memo: (!prune).then(Box::default),
        }
    }

    /// The next state to resume.
    pub(super) fn pop(&mut self) -> Option<State<'g>> {
        if let Some(memo) = &mut self.memo {
            memo.close(self.arena.stack.len());
        }
        self.arena.stack.pop()
    }

    pub(super) fn push(&mut self, mut state: State<'g>, origin: Origin) {
        #[cfg(test)]
        if origin == Origin::Wildcard {
            tests::WILDCARD_FORKS.with(|c| c.set(c.get() + 1));
        }
        state.origin = origin;
        self.arena.stack.push(state);
    }

    /// Which alternatives of `rules` may begin at byte `index` (after
    /// separators when `lead`), or somewhere after it when a wildcard is
    /// open — remembered per place, as many states ask the same.
    pub(super) fn viable<'a>(
        &mut self,
        s: &'a str,
        rules: &'a RuleSet,
        index: usize,
        wild: bool,
        lead: bool,
    ) -> Viable<'a> {
        let count = rules.rules().len();
        if !self.prune || count == 1 {
            // One alternative: its own first part finds out as soon.
            return Viable::Every;
        }
        if count > 64 {
            return Viable::Each {
                s,
                rules,
                index,
                wild,
                lead,
            };
        }
        if let Some(d) = rules.dispatch()
            && !wild
        {
            // Cheaper to look up again than to remember.
            let mask = d.mask_at(s, index, lead);
            return Viable::Mask(self.needs_met(s, rules, mask));
        }
        let key = (
            std::ptr::from_ref(rules) as usize,
            index,
            wild,
            lead && !wild,
        );
        if let Some(&(_, mask)) = self.arena.seen.iter().find(|(k, _)| *k == key) {
            return Viable::Mask(mask);
        }
        let mask = match rules.dispatch() {
            // After an open wildcard: a first word anywhere further on.
            Some(d) => d.mask_from(s, index, count),
            None => (0..count).fold(0u64, |m, i| {
                m | u64::from(viable_at(s, rules, i, index, wild, lead)) << i
            }),
        };
        let mask = self.needs_met(s, rules, mask);
        if self.arena.seen.len() < MAX_VIABLE_SEEN {
            self.arena.seen.push((key, mask));
        }
        Viable::Mask(mask)
    }

    /// Of the alternatives of `rules` in `mask`, those whose needed words
    /// occur in `s` (worked out once per rule set and match).
    pub(super) fn needs_met(&mut self, s: &str, rules: &RuleSet, mask: u64) -> u64 {
        let Some(needs) = rules.needs() else {
            return mask;
        };
        #[cfg(test)]
        if super::needs::tests::OFF.with(std::cell::Cell::get) {
            return mask;
        }
        if mask & mask.wrapping_sub(1) == 0 && self.grams.is_none() {
            // One alternative at most, and the request's pairs not read
            // yet: reading them would cost about what trying it does.
            return mask;
        }
        let grams = self.grams.get_or_insert_with(|| Grams::of(s));
        let key = std::ptr::from_ref(rules) as usize;
        let seen = &mut self.arena.needs;
        let slot = match seen.iter().position(|e| e.0 == key) {
            Some(at) => at,
            None if seen.len() < MAX_VIABLE_SEEN => {
                seen.push((key, 0, 0));
                seen.len() - 1
            }
            None => return needs.filter(grams, s, mask),
        };
        let (_, checked, met) = &mut seen[slot];
        let fresh = mask & !*checked;
        if fresh != 0 {
            *met |= needs.filter(grams, s, fresh);
            *checked |= fresh;
        }
        mask & *met
    }

    /// True once the match has done as much as it may.
    pub(super) fn exhausted(&self) -> bool {
        self.steps > MAX_STEPS || self.arena.len() > MAX_NODES
    }

    /// After a success, drops the forks of every axis that stops at its
    /// first success.
    pub(super) fn succeeded(&mut self) {
        let o = self.options;
        if o == MatchOptions::default() {
            return;
        }
        let kept = |s: &State<'_>| match s.origin {
            Origin::Wildcard => o.wildcard == Policy::Exhaustive,
            Origin::Optional => o.optional == Policy::Exhaustive,
            Origin::Repeat => o.repeat == Policy::Exhaustive,
            Origin::Start | Origin::Alternation => true,
        };
        if let Some(memo) = &mut self.memo {
            // The rules entered are closed at the heights they were
            // entered at: count them again in what is kept.
            let mut below = Vec::with_capacity(self.arena.stack.len() + 1);
            below.push(0);
            for s in &self.arena.stack {
                below.push(below.last().copied().unwrap_or(0) + usize::from(kept(s)));
            }
            memo.rebase(|height| below.get(height).copied().unwrap_or(height));
        }
        self.arena.stack.retain(kept);
    }
}

/// Places whose viable alternatives one match remembers.
const MAX_VIABLE_SEEN: usize = 256;

/// Most history nodes one match may make (a bound on its memory).
const MAX_NODES: usize = 4 * MAX_STEPS;

#[cfg(test)]
mod tests {
    use crate::{LoadOptions, MatchOptions, NoFiles, load_grammar, match_grammar};

    thread_local! {
        /// Copies left to look for a longer wildcard capture, so far.
        pub(super) static WILDCARD_FORKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// The parses' values, and how many wildcard copies matching left.
    fn matched(text: &str, input: &str) -> (Vec<String>, usize) {
        let g = load_grammar("t.agr", text, &LoadOptions::default(), &NoFiles).expect("loads");
        WILDCARD_FORKS.with(|c| c.set(0));
        let found = match_grammar(&g, input, &MatchOptions::default());
        let values = found
            .iter()
            .map(|m| m.value.to_json().to_string())
            .collect();
        (values, WILDCARD_FORKS.with(std::cell::Cell::get))
    }

    #[test]
    fn no_copy_looks_for_a_longer_capture_where_the_words_only_recur_inside_words() {
        let g = "<Start> = remind me to $(task:wildcard) in $(n:number) minutes -> [task, n];";
        // "in" recurs only inside "minutes" and "ink": no place a longer
        // capture could end, so no copy is left to look for one.
        let (values, forks) = matched(g, "remind me to buy ink in 10 minutes");
        assert_eq!(values, [r#"["buy ink",10]"#]);
        assert_eq!(forks, 0, "no copy left for a capture that cannot grow");
        // Where "in" recurs as a word, the copy is left and finds the
        // longer capture (which then fails on "minutes").
        let (values, forks) = matched(g, "remind me to log in in 10 minutes");
        assert_eq!(values, [r#"["log in",10]"#]);
        assert_eq!(forks, 1);
        let (values, _) = matched(g, "remind me to go in in in 10 minutes");
        assert_eq!(values, [r#"["go in in",10]"#]);
        // Several words: "by the" recurs only across "standby theory".
        let g = "<Start> = walk $(a:wildcard) by the $(b:wildcard) -> [a, b];";
        let (values, forks) = matched(g, "walk home by the river in standby theory");
        assert_eq!(values, [r#"["home","river in standby theory"]"#]);
        assert_eq!(forks, 0);
    }

    #[test]
    fn no_copy_looks_for_a_longer_capture_before_a_number_that_does_not_recur() {
        let g = "<Start> = buy $(what:wildcard) $(n:number) times -> [what, n];";
        let (values, forks) = matched(g, "buy apples 3 times");
        assert_eq!(values, [r#"["apples",3]"#]);
        assert_eq!(forks, 0, "no number further on: no copy");
        // "2" cannot end an empty capture; "3" is the last number.
        let (values, forks) = matched(g, "buy 2 apples 3 times");
        assert_eq!(values, [r#"["2 apples",3]"#]);
        assert_eq!(forks, 0);
        // A number further on: the copy is left, and finds the parse.
        let (values, forks) = matched(g, "buy 3 4 apples 3 times");
        assert_eq!(values, [r#"["3 4 apples",3]"#]);
        assert!(forks >= 1);
    }
}
