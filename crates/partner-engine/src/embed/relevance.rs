//! How well memory search finds what it should: a relevance set (memories,
//! and questions with the memories that answer them) loaded into a
//! database of its own, each question searched by keyword and, with an
//! embedder, by keyword and meaning; recall@k for each.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::recall::{Recall, by_keyword};
use super::{EmbedError, Embedder};
use crate::store::Store;
use partner_store::memory::MemoryStore;
use partner_store::memory::search::{SearchDomain, SearchQuery};

/// The relevance set kept in the repository (`data/relevance.json`).
pub const BUILTIN_SET: &str = include_str!("../../../../data/relevance.json");

/// Most memories and questions a set may hold.
const MAX_SET: usize = 100_000;

/// A relevance set.
#[derive(Debug, Clone, Deserialize)]
pub struct RelevanceSet {
    /// What an agent remembers.
    pub memories: Vec<SetMemory>,
    /// Questions and what answers them.
    pub queries: Vec<Question>,
}

/// A memory of the set.
#[derive(Debug, Clone, Deserialize)]
pub struct SetMemory {
    /// Its name in the set.
    pub id: String,
    /// Its text.
    pub text: String,
}

/// A question of the set.
#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    /// The words searched for.
    pub query: String,
    /// The memories that answer it.
    pub relevant: Vec<String>,
}

/// How one question went.
#[derive(Debug, Clone, Serialize)]
pub struct Answered {
    /// The question.
    pub query: String,
    /// The share of its memories found in the top k by keyword.
    pub keyword: f64,
    /// The same with meaning (when an embedder was given).
    pub hybrid: Option<f64>,
    /// The same by meaning alone (when an embedder was given).
    pub vector: Option<f64>,
    /// Recall@1 by keyword, hybrid and meaning alone.
    pub at1: [Option<f64>; 3],
}

/// Recall@k of a set, by keyword and hybrid.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The k of recall@k.
    pub k: usize,
    /// Memories in the set.
    pub memories: usize,
    /// The mean recall@k by keyword.
    pub keyword: f64,
    /// The mean recall@k by keyword and meaning, with the embedder named.
    pub hybrid: Option<(String, f64)>,
    /// The mean recall@k by meaning alone.
    pub vector: Option<f64>,
    /// The mean recall@1 by keyword, hybrid and meaning alone.
    pub at1: [Option<f64>; 3],
    /// Each question.
    pub questions: Vec<Answered>,
}

impl RelevanceSet {
    /// Reads a set from JSON; every question's memories must exist.
    pub fn parse(text: &str) -> Result<Self, String> {
        let set: RelevanceSet =
            serde_json::from_str(text).map_err(|e| format!("not a relevance set: {e}"))?;
        if set.memories.len() > MAX_SET || set.queries.len() > MAX_SET {
            return Err(format!(
                "a set holds at most {MAX_SET} memories and questions"
            ));
        }
        for q in &set.queries {
            if let Some(missing) = q
                .relevant
                .iter()
                .find(|id| !set.memories.iter().any(|m| &m.id == *id))
            {
                return Err(format!(
                    "question \"{}\" names no memory {missing}",
                    q.query
                ));
            }
        }
        Ok(set)
    }
}

fn failed(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Failed(e.to_string())
}

/// The memories of a set, stored and (with an embedder) embedded, with
/// each row's name in the set.
struct Corpus {
    store: Store,
    names: HashMap<i64, String>,
    recall: Option<Recall>,
}

impl Corpus {
    /// The memories of `set` as archival entries of one agent, in a
    /// database in memory, embedded before any question is asked.
    fn load(set: &RelevanceSet, embedder: Option<Arc<dyn Embedder>>) -> Result<Self, EmbedError> {
        let store = Store::from(MemoryStore::open_in_memory().map_err(failed)?);
        let mut names = HashMap::new();
        for (i, m) in set.memories.iter().enumerate() {
            let id = store
                .transaction(|tx| tx.add_archival("eval", &m.text, i as i64 + 1))
                .map_err(failed)?;
            names.insert(id, m.id.clone());
        }
        let recall = embedder.map(Recall::with_embedder);
        if let Some(recall) = &recall {
            while recall.catch_up(&store, super::MAX_BATCH)? > 0 {}
        }
        Ok(Corpus {
            store,
            names,
            recall,
        })
    }

    /// The share of `relevant` among the rows `found`.
    fn share(&self, found: &[i64], relevant: &[String]) -> f64 {
        let found: Vec<&str> = found
            .iter()
            .filter_map(|id| self.names.get(id).map(String::as_str))
            .collect();
        let hits = relevant
            .iter()
            .filter(|r| found.contains(&r.as_str()))
            .count();
        hits as f64 / relevant.len().max(1) as f64
    }

    /// Recall@k and recall@1 of one list of hits.
    fn scores(
        &self,
        hits: Vec<partner_store::memory::vectors::HybridHit>,
        relevant: &[String],
    ) -> (f64, f64) {
        let ids: Vec<i64> = hits.into_iter().map(|h| h.hit.id).collect();
        (
            self.share(&ids, relevant),
            self.share(&ids[..ids.len().min(1)], relevant),
        )
    }

    /// One question asked by keyword, and by meaning where it can be.
    fn answer(&self, q: &Question, k: usize) -> Result<Answered, EmbedError> {
        let mut query = SearchQuery::new(&q.query, Some("eval"));
        query.domains = vec![SearchDomain::Archival];
        query.limit = k;
        let (keyword, keyword1) = self.scores(
            self.store
                .read(|tx| by_keyword(tx, &query))
                .map_err(failed)?,
            &q.relevant,
        );
        let (hybrid, vector) = match &self.recall {
            Some(recall) => {
                let found = recall.search(&self.store, &query).map_err(failed)?;
                if let Some(note) = found.note {
                    return Err(EmbedError::Failed(note));
                }
                let nearest = recall.nearest_only(&self.store, &query)?;
                (
                    Some(self.scores(found.hits, &q.relevant)),
                    Some(self.scores(nearest, &q.relevant)),
                )
            }
            None => (None, None),
        };
        Ok(Answered {
            query: q.query.clone(),
            keyword,
            hybrid: hybrid.map(|h| h.0),
            vector: vector.map(|v| v.0),
            at1: [Some(keyword1), hybrid.map(|h| h.1), vector.map(|v| v.1)],
        })
    }
}

/// Recall@`k` of `set` by keyword, and by keyword and meaning with
/// `embedder`: the memories are archival entries of one agent in a
/// database in memory, embedded before the questions are asked.
pub fn evaluate(
    set: &RelevanceSet,
    embedder: Option<Arc<dyn Embedder>>,
    k: usize,
) -> Result<Report, EmbedError> {
    let k = k.max(1);
    let corpus = Corpus::load(set, embedder)?;
    let questions = set
        .queries
        .iter()
        .map(|q| corpus.answer(q, k))
        .collect::<Result<Vec<_>, _>>()?;
    let n = questions.len().max(1) as f64;
    let mean = |f: &dyn Fn(&Answered) -> Option<f64>| -> Option<f64> {
        let all: Vec<f64> = questions.iter().filter_map(f).collect();
        (!all.is_empty()).then(|| all.iter().sum::<f64>() / n)
    };
    let keyword = mean(&|q| Some(q.keyword)).unwrap_or(0.0);
    let vector = mean(&|q| q.vector);
    let at1 = [
        mean(&|q| q.at1[0]),
        mean(&|q| q.at1[1]),
        mean(&|q| q.at1[2]),
    ];
    let hybrid = corpus.recall.map(|r| {
        let id = r.embedder().map(|e| e.id().to_string()).unwrap_or_default();
        (id, mean(&|q| q.hybrid).unwrap_or(0.0))
    });
    Ok(Report {
        k,
        memories: set.memories.len(),
        keyword,
        hybrid,
        vector,
        at1,
        questions,
    })
}
