//! Search by meaning for one constellation: its embedder (opened when
//! first needed), the index of its vectors held in memory, the background
//! work of embedding what was written since, and searches that fuse
//! full-text and vector hits. With no embedder configured, or one that is
//! down, a search is full-text only and says so; a write never waits on
//! the embedder.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::{EmbedError, Embedder, EmbeddingsConfig, open};
use crate::store::Store;
use partner_store::memory::MemoryResult;
use partner_store::memory::search::SearchQuery;
use partner_store::memory::vectors::{self, HybridHit, Searchable, VectorIndex, Vectors};

pub use partner_store::memory::vectors::IndexStatus;

/// What a search found (best first, at most the query's limit from each
/// domain), and what the partner or agent should know about how (searched
/// by keyword only because the embedder is down): the protocol's value,
/// made here and carried as it is.
pub use partner_protocol::views::Found;

use partner_store::memory::vectors::Signature;

/// A constellation's search by meaning.
pub struct Recall {
    config: EmbeddingsConfig,
    embedder: OnceLock<Result<Arc<dyn Embedder>, EmbedError>>,
    index: Mutex<Option<VectorIndex>>,
    status: Mutex<IndexStatus>,
    /// The fingerprint when nothing was last waiting.
    settled: Mutex<Option<Signature>>,
    /// A thread embeds in the background.
    indexing: AtomicBool,
    /// The last problem told to the partner.
    told: Mutex<Option<String>>,
}

impl std::fmt::Debug for Recall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recall")
            .field("config", &self.config)
            .finish()
    }
}

impl Recall {
    fn of(config: EmbeddingsConfig) -> Self {
        Recall {
            config,
            embedder: OnceLock::new(),
            index: Mutex::new(None),
            status: Mutex::new(IndexStatus::default()),
            settled: Mutex::new(None),
            indexing: AtomicBool::new(false),
            told: Mutex::new(None),
        }
    }

    /// Search by meaning with the embedder `config` names; `None` when it
    /// names none.
    pub fn new(config: &EmbeddingsConfig) -> Option<Self> {
        (*config != EmbeddingsConfig::None).then(|| Recall::of(config.clone()))
    }

    /// Search by meaning with an embedder already made (evaluations, tests,
    /// benchmarks).
    pub fn with_embedder(embedder: Arc<dyn Embedder>) -> Self {
        let recall = Recall::of(EmbeddingsConfig::None);
        let _ = recall.embedder.set(Ok(embedder));
        recall
    }

    /// The embedder, opened the first time it is needed (a model that
    /// does not load stays an error until partner starts again).
    pub fn embedder(&self) -> Result<Arc<dyn Embedder>, EmbedError> {
        self.embedder
            .get_or_init(|| {
                open(&self.config).and_then(|e| {
                    e.ok_or_else(|| EmbedError::Failed("no embedder is configured".into()))
                })
            })
            .clone()
    }

    /// Claims the background indexing: true for the first caller only.
    pub fn start_indexing(&self) -> bool {
        !self.indexing.swap(true, Ordering::SeqCst)
    }

    /// Gives the claim back (the thread could not be started).
    pub fn stop_indexing(&self) {
        self.indexing.store(false, Ordering::SeqCst);
    }

    /// How far the vectors have caught up (as of the last catch-up).
    pub fn status(&self) -> IndexStatus {
        lock(&self.status).clone()
    }

    /// The embedder's problem, the first time it is seen (once per
    /// problem: a server down for an hour is told once, and again if it
    /// fails again after coming back).
    pub fn new_problem(&self) -> Option<String> {
        let now = lock(&self.status).problem.clone();
        let mut told = lock(&self.told);
        if now == *told {
            return None;
        }
        told.clone_from(&now);
        now.map(|p| format!("search by meaning: {p}; searching by keyword until it is back"))
    }

    fn note_problem(&self, problem: Option<String>) {
        lock(&self.status).problem = problem;
    }

    /// Embeds up to `batch` items that wait for a vector and stores the
    /// vectors: how many it embedded (0 when nothing waits). The embedder
    /// runs outside any transaction; an item changed meanwhile is
    /// embedded again next time.
    pub fn catch_up(&self, store: &Store, batch: usize) -> Result<usize, EmbedError> {
        let embedder = self.embedder().inspect_err(|e| {
            self.note_problem(Some(e.to_string()));
        })?;
        let id = embedder.id().to_string();
        let db = |e: partner_store::memory::MemoryError| {
            EmbedError::Failed(format!("the database: {e}"))
        };
        let now = store.read(|tx| tx.embed_signature()).map_err(db)?;
        if *lock(&self.settled) == Some(now) {
            return Ok(0);
        }
        let items = store
            .read(|tx| tx.vectors_pending(&id, batch))
            .map_err(db)?;
        if items.is_empty() {
            *lock(&self.settled) = Some(now);
            self.refresh_status(store, &id, None);
            return Ok(0);
        }
        let texts: Vec<String> = items.iter().map(|i| i.text.clone()).collect();
        let made = embedder.embed(&texts).inspect_err(|e| {
            self.refresh_status(store, &id, Some(e.to_string()));
        })?;
        store
            .transaction(|tx| -> MemoryResult<()> {
                for (item, vector) in items.iter().zip(&made) {
                    tx.put_vector(&id, item, vector)?;
                }
                Ok(())
            })
            .map_err(db)?;
        self.refresh_status(store, &id, None);
        Ok(items.len())
    }

    fn refresh_status(&self, store: &Store, id: &str, problem: Option<String>) {
        let progress = store.read(|tx| tx.vectors_progress(id));
        let mut status = lock(&self.status);
        status.embedder = id.to_string();
        status.problem = problem;
        if let Ok((done, waiting)) = progress {
            status.done = done;
            status.waiting = waiting;
        }
    }

    /// Forgets every vector of the current embedder, so all is embedded
    /// again (a model file replaced under the same name).
    pub fn forget(&self, store: &Store) -> Result<usize, EmbedError> {
        let id = self.embedder()?.id().to_string();
        let removed = store.transaction(|tx| tx.forget_vectors(&id)).map_err(
            |e: partner_store::memory::MemoryError| {
                EmbedError::Failed(format!("the database: {e}"))
            },
        )?;
        *lock(&self.index) = None;
        *lock(&self.settled) = None;
        Ok(removed)
    }

    /// Full-text and vector hits for `query`, fused. When the embedder is
    /// unavailable the search is by keyword only and [`Found::note`] says
    /// so.
    pub fn search(&self, store: &Store, query: &SearchQuery) -> MemoryResult<Found> {
        let embedded = self.embedder().and_then(|e| {
            Ok((
                e.id().to_string(),
                e.embed(std::slice::from_ref(&query.text))?,
            ))
        });
        let (id, vector) = match embedded {
            Ok((id, mut v)) if v.len() == 1 => (id, v.remove(0)),
            Ok(_) => return keywords(store, query, "the embedder gave no vector"),
            Err(e) => return keywords(store, query, &e.to_string()),
        };
        // Waiting as this process's own indexing last counted it (exact),
        // or as the index's size against memory's says (cheap).
        let counted = {
            let status = lock(&self.status);
            (status.embedder == id).then_some(status.waiting)
        };
        // The query is embedded before the store is read.
        store.read(|tx| {
            let mut slot = lock(&self.index);
            let index = current(&mut slot, tx, &id)?;
            let hits = vectors::hybrid(tx, query, Some(&vector), index)?;
            Ok(Found {
                hits,
                note: coverage(tx, index, counted.unwrap_or(0))?,
            })
        })
    }
}

impl Recall {
    /// The nearest items by meaning alone (no keywords), for measuring
    /// hybrid search against pure vector search.
    pub fn nearest_only(
        &self,
        store: &Store,
        query: &SearchQuery,
    ) -> Result<Vec<HybridHit>, EmbedError> {
        let failed = |e: partner_store::memory::MemoryError| EmbedError::Failed(e.to_string());
        let embedder = self.embedder()?;
        let id = embedder.id().to_string();
        let vector = embedder
            .embed(std::slice::from_ref(&query.text))?
            .pop()
            .ok_or_else(|| EmbedError::Failed("the embedder gave no vector".into()))?;
        store
            .read(|tx| {
                let mut slot = lock(&self.index);
                let index = current(&mut slot, tx, &id)?;
                vectors::nearest_only(tx, query, &vector, index)
            })
            .map_err(failed)
    }
}

/// The index of embedder `id`'s vectors (a new one when the slot held
/// another embedder's), caught up with the database.
fn current<'a>(
    slot: &'a mut Option<VectorIndex>,
    store: &dyn Vectors,
    id: &str,
) -> MemoryResult<&'a mut VectorIndex> {
    if slot.as_ref().is_some_and(|index| index.embedder() != id) {
        *slot = None;
    }
    let index = slot.get_or_insert_with(|| VectorIndex::new(id));
    index.refresh(store)?;
    Ok(index)
}

/// What a search by meaning could not see: items with no vector from this
/// embedder yet are found by keyword only, and the search says so (a
/// change of embedder leaves everything to embed again).
fn coverage(
    store: &dyn Vectors,
    index: &VectorIndex,
    counted: usize,
) -> MemoryResult<Option<String>> {
    let items = store.embeddable()?;
    let held = i64::try_from(index.len()).unwrap_or(i64::MAX);
    let waiting = (items - held).max(i64::try_from(counted).unwrap_or(i64::MAX));
    Ok((waiting > 0).then(|| {
        format!(
            "searched by meaning only {} of {items} items ({waiting} not yet embedded by {}; \
             found by keyword only until they are: `partner memory reindex` embeds them now)",
            (items - waiting).max(0),
            index.embedder()
        )
    }))
}

/// Full-text search only, shaped as a hybrid search's result (every hit
/// found by keyword).
pub fn by_keyword(store: &dyn Searchable, query: &SearchQuery) -> MemoryResult<Vec<HybridHit>> {
    vectors::hybrid(store, query, None, &VectorIndex::default())
}

fn keywords(store: &Store, query: &SearchQuery, why: &str) -> MemoryResult<Found> {
    Ok(Found {
        hits: store.read(|tx| by_keyword(tx, query))?,
        note: Some(format!("searched by keyword only: {why}")),
    })
}

/// Searches memory: by meaning and keyword with `recall`, by keyword
/// without.
pub fn search(store: &Store, recall: Option<&Recall>, query: &SearchQuery) -> MemoryResult<Found> {
    match recall {
        Some(recall) => recall.search(store, query),
        None => keywords(
            store,
            query,
            "no embedder is configured ([embeddings] in partner.toml)",
        ),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
