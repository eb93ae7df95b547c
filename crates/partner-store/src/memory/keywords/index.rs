//! [`DomainIndex`]: the archival entries or messages of one database held
//! in memory as postings (term → the documents holding it, with how often),
//! each document with what a search filters on, so that a keyword search
//! scores only the documents holding its words and ranks them with FTS5's
//! own bm25 (same constants, same statistics, same order of operations).

use std::collections::HashMap;

use super::tokenizer::Tokenizer;
use crate::memory::search::SearchDomain;
use partner_core::clock::Millis;

/// bm25's `k1` and `b`, as FTS5 fixes them.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Interned names (agents, roles).
#[derive(Debug, Default)]
pub(crate) struct Names {
    names: Vec<String>,
    at: HashMap<String, u32>,
}

impl Names {
    /// The number of `name`, interned if new.
    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        if let Some(&n) = self.at.get(name) {
            return n;
        }
        let n = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(name.to_string());
        self.at.insert(name.to_string(), n);
        n
    }

    /// The number of `name`, if it was ever interned.
    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        self.at.get(name).copied()
    }
}

/// What a search filters on, for one document.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Doc {
    /// The row id.
    pub(crate) id: i64,
    /// The owning agent (interned).
    pub(crate) agent: u32,
    /// A message's role (interned; `u32::MAX` for archival entries).
    pub(crate) role: u32,
    /// When it was written.
    pub(crate) time: Millis,
    /// Its length in tokens, as FTS5 counts it for bm25.
    pub(crate) len: u32,
}

/// One document holding a term, and how many times.
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    tf: u32,
}

type Terms = HashMap<Box<[u8]>, Vec<Posting>, foldhash::fast::RandomState>;

/// One domain's documents, in row order, and their terms.
#[derive(Default)]
pub(crate) struct DomainIndex {
    docs: Vec<Doc>,
    terms: Terms,
    tokens: u64,
    /// A hash of the last document's text (to notice another database).
    last_text: u64,
}

/// A hash of a document's text.
pub(crate) fn text_hash(text: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::with_seed(0x70617274).hash_one(text)
}

/// Which documents a search may find (the same conditions as its SQL).
pub(crate) struct Scope {
    /// `None`: every agent's.
    pub(crate) agent: Option<u32>,
    /// Messages with this role (`agent:NAME`) were sent to the agent.
    pub(crate) told: Option<u32>,
    /// Only messages of this role.
    pub(crate) role: Option<u32>,
    pub(crate) since: Millis,
    pub(crate) until: Millis,
}

impl Scope {
    fn admits(&self, d: &Doc) -> bool {
        d.time >= self.since
            && d.time < self.until
            && self.role.is_none_or(|r| d.role == r)
            && self
                .agent
                .is_none_or(|a| d.agent == a || self.told.is_some_and(|t| d.role == t))
    }
}

/// A scored document: bm25 (at most 0, lower is better) and its row id.
pub(crate) type Scored = (f64, i64);

impl DomainIndex {
    /// Documents held.
    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    /// The last document held, and the hash of its text.
    pub(crate) fn last(&self) -> Option<(&Doc, u64)> {
        self.docs.last().map(|d| (d, self.last_text))
    }

    /// Adds the document `doc` (its `len` is counted here) with `text`.
    pub(crate) fn add(&mut self, tokenizer: &mut Tokenizer, mut doc: Doc, text: &str) {
        let n = u32::try_from(self.docs.len()).unwrap_or(u32::MAX);
        let mut counts: HashMap<Box<[u8]>, u32, foldhash::fast::RandomState> = HashMap::default();
        let mut len = 0u32;
        tokenizer.tokens(text, false, &mut |t, _| {
            len = len.saturating_add(1);
            match counts.get_mut(t) {
                Some(c) => *c += 1,
                None => {
                    counts.insert(t.into(), 1);
                }
            }
        });
        doc.len = len;
        self.tokens += u64::from(len);
        self.last_text = text_hash(text);
        for (term, tf) in counts {
            self.terms
                .entry(term)
                .or_default()
                .push(Posting { doc: n, tf });
        }
        self.docs.push(doc);
    }

    /// The documents holding `term`.
    fn postings(&self, term: &[u8]) -> &[Posting] {
        self.terms.get(term).map_or(&[], Vec::as_slice)
    }
}

/// The statistics bm25 reads: rows, tokens, and rows holding each phrase.
struct Stats {
    avgdl: f64,
    idf: Vec<f64>,
}

impl Stats {
    fn of(parts: &[&DomainIndex], phrases: &[Box<[u8]>]) -> Stats {
        let rows: u64 = parts.iter().map(|p| p.docs.len() as u64).sum();
        let tokens: u64 = parts.iter().map(|p| p.tokens).sum();
        let n_row = rows as i64;
        let avgdl = tokens as i64 as f64 / n_row as f64;
        let idf = phrases
            .iter()
            .map(|t| {
                let hits: i64 = parts.iter().map(|p| p.postings(t).len() as i64).sum();
                let idf = (((n_row - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
                if idf <= 0.0 { 1e-6 } else { idf }
            })
            .collect();
        Stats { avgdl, idf }
    }

    /// bm25 of a row of `len` tokens holding each phrase `freq[i]` times,
    /// computed as FTS5's `bm25()` computes it.
    fn score(&self, freq: &[f64], len: u32) -> f64 {
        let d = f64::from(len);
        let mut score = 0.0;
        for (idf, f) in self.idf.iter().zip(freq) {
            score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / self.avgdl)));
        }
        -score
    }
}

/// Every document of `parts` (the index, then rows not yet in it) that
/// `scope` admits and that holds every phrase (`any`: some phrase), with
/// its bm25 score.
pub(crate) fn scored(
    parts: &[&DomainIndex],
    phrases: &[Box<[u8]>],
    any: bool,
    scope: &Scope,
) -> Vec<Scored> {
    let stats = Stats::of(parts, phrases);
    let mut out = Vec::new();
    let mut freq = vec![0.0; phrases.len()];
    for part in parts {
        let lists: Vec<&[Posting]> = phrases.iter().map(|t| part.postings(t)).collect();
        let mut each = |doc: u32, freq: &[f64]| {
            let d = &part.docs[doc as usize];
            if scope.admits(d) {
                out.push((stats.score(freq, d.len), d.id));
            }
        };
        if any {
            union(&lists, &mut freq, &mut each);
        } else {
            intersection(&lists, &mut freq, &mut each);
        }
    }
    out
}

/// Calls `each` for every document in all `lists` (sorted by document),
/// with each list's count for it.
fn intersection(lists: &[&[Posting]], freq: &mut [f64], each: &mut dyn FnMut(u32, &[f64])) {
    let Some(shortest) = (0..lists.len()).min_by_key(|&i| lists[i].len()) else {
        return;
    };
    let mut rest: Vec<&[Posting]> = lists.to_vec();
    'docs: for p in lists[shortest] {
        for (i, list) in rest.iter_mut().enumerate() {
            if i == shortest {
                freq[i] = f64::from(p.tf);
                continue;
            }
            let skip = gallop(list, p.doc);
            *list = &list[skip..];
            match list.first() {
                Some(q) if q.doc == p.doc => freq[i] = f64::from(q.tf),
                Some(_) => continue 'docs,
                None => return,
            }
        }
        each(p.doc, freq);
    }
}

/// How many leading postings of `list` are of documents before `doc`
/// (exponential then binary search: cheap when the answer is small).
fn gallop(list: &[Posting], doc: u32) -> usize {
    let mut bound = 1;
    while bound < list.len() && list[bound].doc < doc {
        bound *= 2;
    }
    let end = bound.min(list.len());
    let start = bound / 2;
    start + list[start..end].partition_point(|p| p.doc < doc)
}

/// Calls `each` for every document in any of `lists`, in document order,
/// with each list's count for it (0 where it is absent).
fn union(lists: &[&[Posting]], freq: &mut [f64], each: &mut dyn FnMut(u32, &[f64])) {
    let mut at = vec![0usize; lists.len()];
    loop {
        let next = lists
            .iter()
            .zip(&at)
            .filter_map(|(l, &i)| l.get(i).map(|p| p.doc))
            .min();
        let Some(doc) = next else {
            return;
        };
        for (i, list) in lists.iter().enumerate() {
            freq[i] = match list.get(at[i]) {
                Some(p) if p.doc == doc => {
                    at[i] += 1;
                    f64::from(p.tf)
                }
                _ => 0.0,
            };
        }
        each(doc, freq);
    }
}

/// The domains a keyword index covers: those whose rows are only ever
/// added (blocks change in place, and are few).
pub(crate) fn indexed(domain: SearchDomain) -> bool {
    matches!(domain, SearchDomain::Archival | SearchDomain::Conversations)
}
