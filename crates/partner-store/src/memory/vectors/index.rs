//! [`VectorIndex`]: one embedder's vectors held in memory, normalized and
//! quantized to 8 bits (a quarter of the memory to scan; cosine within
//! about 1%), each with what a search filters on — whose it is, its role
//! (messages), its time — so that a search scans only what it may find:
//! another agent's thousands of items never crowd an agent's own out of
//! the nearest. Catches up with rows written since (by any process) on
//! [`VectorIndex::refresh`].

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::domain_of;
use crate::memory::error::MemoryResult;
use crate::memory::search::{Reach, SearchDomain, SearchQuery};
use partner_core::clock::Millis;

/// What a search filters on, for one row (interned names).
#[derive(Debug, Clone, Copy)]
struct Owner {
    domain: SearchDomain,
    /// The owning agent's name, interned (`u32::MAX`: unknown).
    agent: u32,
    /// A message's role, interned (`u32::MAX`: none).
    role: u32,
    /// The item's time when it was embedded.
    time: Millis,
}

/// The vectors of one embedder, held in memory.
#[derive(Debug, Default)]
pub struct VectorIndex {
    embedder: String,
    last_rowid: i64,
    dims: usize,
    keys: Vec<(SearchDomain, i64)>,
    owners: Vec<Owner>,
    at: HashMap<(SearchDomain, i64), usize>,
    data: Vec<i8>,
    names: Vec<String>,
    named: HashMap<String, u32>,
}

/// Which rows a search may find, decided per row before it is scored.
/// It lets through at least every row the search's own filters would
/// (blocks another agent shared are checked again when read), never one
/// they would not for agent, role, domain or time.
struct Scope {
    domains: Vec<SearchDomain>,
    /// `None`: every agent's (the partner, or reach all).
    agent: Option<u32>,
    /// The role `agent:NAME` of messages another agent sent this one.
    told: Option<u32>,
    shared_blocks: bool,
    role: Option<u32>,
    since: Millis,
    until: Millis,
    /// The search names an agent or role the index has never seen.
    nothing: bool,
}

impl Scope {
    fn admits(&self, o: &Owner) -> bool {
        if self.nothing
            || !self.domains.contains(&o.domain)
            || o.time < self.since
            || o.time >= self.until
        {
            return false;
        }
        if let Some(role) = self.role
            && (o.domain != SearchDomain::Conversations || o.role != role)
        {
            return false;
        }
        match self.agent {
            None => true,
            Some(agent) => {
                o.agent == agent
                    || (o.domain == SearchDomain::Blocks && self.shared_blocks)
                    || (o.domain == SearchDomain::Conversations && Some(o.role) == self.told)
            }
        }
    }
}

/// A normalized vector's components as 8-bit integers (`x * 127`).
fn quantized(v: &[f32]) -> Vec<i8> {
    v.iter()
        .map(|x| (x * 127.0).round().clamp(-127.0, 127.0) as i8)
        .collect()
}

/// Rows from which a scan is split over two threads.
const PARALLEL_ROWS: usize = 20_000;

/// The best `k` of `rows` (`dims` wide, the first numbered `first`) for
/// `q` among those `admit` lets through: (score, row), unordered.
fn best_of(
    rows: &[i8],
    dims: usize,
    first: usize,
    q: &[i8],
    k: usize,
    admit: &(dyn Fn(usize) -> bool + Sync),
) -> Vec<(i32, usize)> {
    let mut best: std::collections::BinaryHeap<std::cmp::Reverse<(i32, usize)>> =
        std::collections::BinaryHeap::with_capacity(k + 1);
    for (i, row) in rows.chunks_exact(dims).enumerate() {
        if !admit(first + i) {
            continue;
        }
        let score = dot(row, q);
        if best.len() < k {
            best.push(std::cmp::Reverse((score, first + i)));
        } else if best.peek().is_some_and(|w| score > w.0.0) {
            best.pop();
            best.push(std::cmp::Reverse((score, first + i)));
        }
    }
    best.into_iter().map(|r| r.0).collect()
}

/// The dot product of two quantized vectors, with the widest vector
/// instructions the processor has (AVX2 where there is, found once).
fn dot(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if *AVX2.get_or_init(|| std::arch::is_x86_feature_detected!("avx2")) {
            // SAFETY: the processor was found to have AVX2.
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_lanes(a, b)
}

/// [`dot_lanes`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_lanes(a, b)
}

/// The dot product in lanes the compiler turns into vector instructions:
/// pairs of 8-bit products summed in 16 bits first (at most 2·127², which
/// fits: [`quantized`] never gives -128), then in 32.
#[inline(always)]
fn dot_lanes(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 16];
    let (ac, ar) = a.as_chunks::<32>();
    let (bc, br) = b.as_chunks::<32>();
    for (x, y) in ac.iter().zip(bc) {
        for k in 0..16 {
            let pair = i16::from(x[2 * k]) * i16::from(y[2 * k])
                + i16::from(x[2 * k + 1]) * i16::from(y[2 * k + 1]);
            lanes[k] += i32::from(pair);
        }
    }
    let tail: i32 = ar
        .iter()
        .zip(br)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    lanes.iter().sum::<i32>() + tail
}

/// `embedder`'s vectors written after `after` (a rowid), with owners.
pub(super) fn since(conn: &Connection, after: i64, embedder: &str) -> MemoryResult<Vec<VectorRow>> {
    let mut stmt = conn.prepare_cached(SINCE)?;
    let rows = stmt
        .query_map(params![after, embedder], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ))
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Reads the vectors written after a rowid, with their owners.
const SINCE: &str = "
    SELECT v.rowid, v.domain, v.ref_id, v.dims, v.vec, v.item_time,
           CASE v.domain
             WHEN 'blocks' THEN (SELECT agent FROM blocks WHERE id = v.ref_id)
             WHEN 'archival' THEN (SELECT agent FROM archival WHERE id = v.ref_id)
             ELSE (SELECT agent FROM messages WHERE id = v.ref_id) END,
           CASE v.domain WHEN 'conversations'
             THEN (SELECT role FROM messages WHERE id = v.ref_id) END
      FROM vectors v
     WHERE v.rowid > ?1 AND v.embedder = ?2 ORDER BY v.rowid";

/// One vector as read: its position in the order written, domain, item
/// id, dimensions, bytes (little-endian `f32`s), item time, owning agent
/// and role.
pub type VectorRow = (
    i64,
    String,
    i64,
    i64,
    Vec<u8>,
    Millis,
    Option<String>,
    Option<String>,
);

impl VectorIndex {
    /// An empty index of `embedder`'s vectors.
    pub fn new(embedder: &str) -> Self {
        VectorIndex {
            embedder: embedder.to_string(),
            ..VectorIndex::default()
        }
    }

    /// The embedder whose vectors it holds.
    pub fn embedder(&self) -> &str {
        &self.embedder
    }

    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn intern(&mut self, name: Option<String>) -> u32 {
        let Some(name) = name else {
            return u32::MAX;
        };
        if let Some(&i) = self.named.get(&name) {
            return i;
        }
        let i = u32::try_from(self.names.len()).unwrap_or(u32::MAX - 1);
        self.names.push(name.clone());
        self.named.insert(name, i);
        i
    }

    /// Reads the rows written since the last refresh.
    pub fn refresh(&mut self, store: &dyn super::Vectors) -> MemoryResult<()> {
        for row in store.vectors_since(self.last_rowid, &self.embedder)? {
            self.take(row);
        }
        Ok(())
    }

    /// Keeps one row read from the table (a malformed one is skipped).
    fn take(&mut self, (rowid, domain, id, dims, bytes, time, agent, role): VectorRow) {
        self.last_rowid = self.last_rowid.max(rowid);
        let Some(domain) = domain_of(&domain) else {
            return;
        };
        let dims = dims.max(0) as usize;
        if bytes.len() != dims * 4 || dims == 0 || (self.dims != 0 && dims != self.dims) {
            return;
        }
        self.dims = dims;
        let mut v: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm.is_finite() && norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        } else {
            v.iter_mut().for_each(|x| *x = 0.0);
        }
        let v = quantized(&v);
        let owner = Owner {
            domain,
            agent: self.intern(agent),
            role: self.intern(role),
            time,
        };
        match self.at.get(&(domain, id)) {
            Some(&i) => {
                self.data[i * dims..(i + 1) * dims].copy_from_slice(&v);
                self.owners[i] = owner;
            }
            None => {
                self.at.insert((domain, id), self.keys.len());
                self.keys.push((domain, id));
                self.owners.push(owner);
                self.data.extend_from_slice(&v);
            }
        }
    }

    /// What `query` may find, in this index's names.
    fn scope(&self, query: &SearchQuery) -> Scope {
        let name = |n: &str| self.named.get(n).copied();
        let all = query.agent.is_none() || query.reach == Reach::All;
        let agent = if all {
            None
        } else {
            // An agent the index has never seen owns none of its rows.
            query
                .agent
                .as_deref()
                .map(|a| name(a).unwrap_or(u32::MAX - 1))
        };
        let role = query
            .role
            .as_deref()
            .map(|r| name(r).unwrap_or(u32::MAX - 1));
        Scope {
            domains: query.domains.clone(),
            agent,
            told: query
                .agent
                .as_deref()
                .and_then(|a| name(&format!("agent:{a}"))),
            shared_blocks: query.reach == Reach::Shared,
            role,
            since: query.since.unwrap_or(Millis::MIN),
            until: query.until.unwrap_or(Millis::MAX),
            nothing: role == Some(u32::MAX - 1),
        }
    }

    /// The `k` items nearest `query` (by cosine) among every item, best
    /// first.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<((SearchDomain, i64), f32)> {
        self.scan(query, k, &|_| true)
    }

    /// The `k` items nearest `vector` (by cosine) among those `search`
    /// may find, best first.
    pub fn nearest_for(
        &self,
        vector: &[f32],
        k: usize,
        search: &SearchQuery,
    ) -> Vec<((SearchDomain, i64), f32)> {
        let scope = self.scope(search);
        self.scan(vector, k, &|i| scope.admits(&self.owners[i]))
    }

    fn scan(
        &self,
        query: &[f32],
        k: usize,
        admit: &(dyn Fn(usize) -> bool + Sync),
    ) -> Vec<((SearchDomain, i64), f32)> {
        if query.len() != self.dims || self.dims == 0 || k == 0 {
            return Vec::new();
        }
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return Vec::new();
        }
        let q = quantized(&query.iter().map(|x| x / norm).collect::<Vec<f32>>());
        // A large index is scanned in two halves at once (the machine has
        // two cores); each keeps its best k.
        let rows = self.keys.len();
        let half = if rows >= PARALLEL_ROWS {
            rows.div_ceil(2)
        } else {
            rows
        };
        let scan = |from: usize, to: usize| {
            best_of(
                &self.data[from * self.dims..to * self.dims],
                self.dims,
                from,
                &q,
                k,
                admit,
            )
        };
        let mut all = if half < rows {
            std::thread::scope(|s| {
                match std::thread::Builder::new().spawn_scoped(s, || scan(half, rows)) {
                    Ok(second) => {
                        let mut first = scan(0, half);
                        first.extend(second.join().unwrap_or_default());
                        first
                    }
                    // No thread to be had: one scan.
                    Err(_) => scan(0, rows),
                }
            })
        } else {
            scan(0, rows)
        };
        all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        all.truncate(k);
        let scale = 127.0f32 * 127.0;
        all.into_iter()
            .map(|(s, i)| (self.keys[i], s as f32 / scale))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way of taking the dot product gives the plain sum, at the
    /// extremes of the quantized range and at lengths that leave a tail.
    #[test]
    fn the_dot_product_is_exact_whichever_instructions_run() {
        for len in [0, 1, 31, 32, 33, 256, 300] {
            for (a, b) in [(127i8, 127i8), (-127, -127), (127, -127), (3, -5)] {
                let x: Vec<i8> = (0..len).map(|i| if i % 3 == 0 { a } else { b }).collect();
                let y: Vec<i8> = (0..len).map(|i| if i % 2 == 0 { a } else { b }).collect();
                let plain: i32 = x
                    .iter()
                    .zip(&y)
                    .map(|(p, q)| i32::from(*p) * i32::from(*q))
                    .sum();
                assert_eq!(dot(&x, &y), plain, "len {len}");
                assert_eq!(dot_lanes(&x, &y), plain, "len {len}");
            }
        }
        assert_eq!(quantized(&[-2.0, 2.0]), vec![-127, 127]);
    }
}
