//! The candidates one completion gathers, and how they settle into its
//! answer — as the reference settles them: only candidates at the
//! farthest place reached are kept; keywords after a wildcard that runs to
//! the end of the prefix are placed once every parse has been seen (at a
//! keyword begun inside the wildcard when there is one); backward, keywords
//! and properties after a wildcard whose end is open follow the place the
//! others settled on.

use super::super::parse::Spacing;
use super::super::text::wildcard_text;
use super::super::value::utf16_len;
use super::result::{Completion, Direction, Group, Property, mode_name};
use super::words::{partial_in_wildcard, partial_string, separators_only, strip_trailing_seps};

/// What a candidate offers.
pub(super) enum Offer {
    Word(String),
    Property(Property),
}

/// A candidate at the current farthest place.
pub(super) struct Fixed {
    pub offer: Offer,
    pub mode: Spacing,
    pub after_wildcard: bool,
    /// A keyword begun at the end of a wildcard's text, backing up.
    pub backup: bool,
}

/// A candidate after a wildcard whose end is open (backward): offered
/// wherever the others settle, if the wildcard holds something up to there.
pub(super) enum Ranged<'g> {
    Keyword {
        start: usize,
        words: &'g [String],
        mode: Spacing,
    },
    Property {
        start: usize,
        mode: Spacing,
        property: Property,
    },
}

/// A keyword after a wildcard that takes the rest of the prefix.
pub(super) struct AtEnd<'g> {
    pub start: usize,
    pub words: &'g [String],
    pub mode: Spacing,
}

/// The candidates of one completion, and the farthest place (byte) they
/// reached.
pub(super) struct Gathered<'p, 'g> {
    pub prefix: &'p str,
    pub direction: Direction,
    /// The farthest place; past the prefix's end when the caller's
    /// minimum lies beyond it.
    pub max: usize,
    pub fixed: Vec<Fixed>,
    pub ranged: Vec<Ranged<'g>>,
    pub at_end: Vec<AtEnd<'g>>,
    /// Backward: forward readings of a literal, kept if the place they
    /// reach is where the others settle.
    pub shadows: Vec<(usize, Fixed)>,
}

impl<'p, 'g> Gathered<'p, 'g> {
    /// Nothing gathered yet; `min_prefix` (UTF-16 units) is the least place.
    pub(super) fn new(prefix: &'p str, direction: Direction, min_prefix: Option<usize>) -> Self {
        let min = min_prefix.unwrap_or(0);
        let whole = utf16_len(prefix);
        let max = if min > whole {
            prefix.len() + (min - whole)
        } else {
            prefix
                .char_indices()
                .map(|(i, _)| i)
                .chain([prefix.len()])
                .find(|&i| utf16_len(&prefix[..i]) >= min)
                .unwrap_or(prefix.len())
        };
        Gathered {
            prefix,
            direction,
            max,
            fixed: Vec::new(),
            ranged: Vec::new(),
            at_end: Vec::new(),
            shadows: Vec::new(),
        }
    }

    /// A candidate at `at` moves the farthest place there (dropping what
    /// was nearer); true when `at` is the farthest place.
    pub(super) fn reach(&mut self, at: usize) -> bool {
        if at > self.max {
            self.max = at;
            self.fixed.clear();
        }
        at == self.max
    }

    /// Offers the rest of a literal from `start`; false when the literal
    /// offers nothing there.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn literal(
        &mut self,
        lead: Spacing,
        mode: Spacing,
        words: &[String],
        after_wildcard: bool,
        start: usize,
        dir: Direction,
        end_of_match: Option<usize>,
    ) -> bool {
        let tight = lead == Spacing::None;
        let Some(p) = partial_string(self.prefix, start, words, mode, dir, end_of_match, tight)
        else {
            return false;
        };
        if self.reach(p.at) {
            self.fixed.push(Fixed {
                offer: Offer::Word(p.word),
                mode: if p.at == start { lead } else { mode },
                after_wildcard,
                backup: false,
            });
        }
        true
    }

    /// Offers a property at `at` (made only when it is kept).
    pub(super) fn property(
        &mut self,
        at: usize,
        mode: Spacing,
        after_wildcard: bool,
        make: impl FnOnce() -> Property,
    ) {
        if self.reach(at) {
            self.fixed.push(Fixed {
                offer: Offer::Property(make()),
                mode,
                after_wildcard,
                backup: false,
            });
        }
    }

    /// Places the keywords after wildcards that took the rest of the
    /// prefix, and keeps the forward readings that reach the place.
    pub(super) fn settle(&mut self) {
        let mut forward_partial: Option<(usize, String, Spacing)> = None;
        let mut forward_at_end = Vec::new();
        for desc in std::mem::take(&mut self.at_end) {
            let partial = partial_in_wildcard(self.prefix, desc.start, desc.words, desc.mode);
            match (self.direction, partial) {
                (Direction::Backward, Some(p)) if p.at < self.prefix.len() => {
                    if p.at >= self.max {
                        if !separators_only(self.prefix, self.max, p.at) {
                            let at = strip_trailing_seps(self.prefix, p.at, self.max);
                            self.reach(at);
                        }
                        self.fixed.push(Fixed {
                            offer: Offer::Word(p.word),
                            mode: desc.mode,
                            after_wildcard: true,
                            backup: true,
                        });
                    }
                }
                (Direction::Backward, _) => self.ranged.push(Ranged::Keyword {
                    start: desc.start,
                    words: desc.words,
                    mode: desc.mode,
                }),
                (Direction::Forward, Some(p)) => {
                    if forward_partial.as_ref().is_none_or(|f| p.at > f.0) {
                        forward_partial = Some((p.at, p.word, desc.mode));
                    }
                }
                (Direction::Forward, None) => forward_at_end.push(desc),
            }
        }
        self.forward_at_end(forward_partial, forward_at_end);
        for (at, shadow) in std::mem::take(&mut self.shadows) {
            if at == self.max {
                self.fixed.push(shadow);
            }
        }
    }

    /// Forward: a keyword begun inside a wildcard pins the place (else the
    /// end of the prefix, separators stripped), and the keywords after
    /// wildcards that reach it are offered there.
    fn forward_at_end(
        &mut self,
        partial: Option<(usize, String, Spacing)>,
        at_end: Vec<AtEnd<'g>>,
    ) {
        let s = self.prefix;
        let partial = partial.filter(|p| p.0 <= s.len());
        if self.direction == Direction::Backward || (partial.is_none() && at_end.is_empty()) {
            return;
        }
        let mut anchor = partial.as_ref().map_or(s.len(), |p| p.0);
        if partial.is_none() || anchor < s.len() {
            anchor = strip_trailing_seps(s, anchor, self.max);
        }
        if anchor != self.max {
            self.fixed.clear();
            self.max = anchor;
        }
        if let Some((_, word, mode)) = partial {
            self.fixed.push(Fixed {
                offer: Offer::Word(word),
                mode,
                after_wildcard: true,
                backup: false,
            });
        }
        for c in at_end {
            if anchor <= c.start || wildcard_text(s, c.start, anchor, c.mode).is_none() {
                continue;
            }
            if let Some(p) =
                partial_string(s, anchor, c.words, c.mode, Direction::Forward, None, false)
            {
                self.fixed.push(Fixed {
                    offer: Offer::Word(p.word),
                    mode: c.mode,
                    after_wildcard: true,
                    backup: false,
                });
            }
        }
    }

    /// The answer: words grouped by separator mode (each once), every
    /// property as often as it was reached.
    pub(super) fn answer(self) -> Completion {
        let mut groups: Vec<Group> = Vec::new();
        let mut properties = Vec::new();
        let (mut after, mut before, mut backup) = (false, false, false);
        for c in self.fixed {
            match (c.after_wildcard, &c.offer) {
                (true, _) => after = true,
                (false, Offer::Word(_)) => before = true,
                (false, Offer::Property(_)) => {}
            }
            backup |= c.backup;
            match c.offer {
                Offer::Word(w) => add(&mut groups, w, c.mode),
                Offer::Property(p) => properties.push(p),
            }
        }
        let s = self.prefix;
        let max = self.max;
        if self.direction == Direction::Backward && max < s.len() && (!after || backup) {
            for c in self.ranged {
                let (start, mode) = match &c {
                    Ranged::Keyword { start, mode, .. } | Ranged::Property { start, mode, .. } => {
                        (*start, *mode)
                    }
                };
                if max <= start || wildcard_text(s, start, max, mode).is_none() {
                    continue;
                }
                match c {
                    Ranged::Keyword { words, mode, .. } => {
                        let cut = &s[..max];
                        if let Some(p) =
                            partial_string(cut, max, words, mode, Direction::Forward, None, false)
                            && !groups.iter().any(|g| g.completions.contains(&p.word))
                        {
                            add(&mut groups, p.word, mode);
                            after = true;
                        }
                    }
                    Ranged::Property { property, .. } => {
                        properties.push(property);
                        after = true;
                    }
                }
            }
        }
        let length = if max > s.len() {
            utf16_len(s) + (max - s.len())
        } else {
            utf16_len(&s[..max])
        };
        Completion {
            closed_set: properties.is_empty(),
            groups,
            properties,
            matched_prefix_length: length,
            direction_sensitive: length > 0,
            after_wildcard: match (after, before) {
                (false, _) => "none",
                (true, true) => "some",
                (true, false) => "all",
            },
        }
    }
}

/// Adds a word to the group of its separator mode (once).
fn add(groups: &mut Vec<Group>, word: String, mode: Spacing) {
    let mode = mode_name(mode);
    match groups.iter_mut().find(|g| g.separator_mode == mode) {
        Some(g) if g.completions.contains(&word) => {}
        Some(g) => g.completions.push(word),
        None => groups.push(Group {
            completions: vec![word],
            separator_mode: mode,
        }),
    }
}
