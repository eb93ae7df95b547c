//! What a host answers the console's reads and edits with, as typed
//! values: the queue with what each request would do, pages of the trace,
//! a save's outcome, a Pattern Lisp result. Each travels as an
//! [`Answer`](crate::Answer)'s typed data ([`crate::Returned`]), the same
//! in process and over the socket.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::wire::{Assessment, Block, HybridHit, PendingRequest, TraceRecord};

/// Most trace records a console holds, and so the most one read of the
/// newest returns.
pub const TRACE_WINDOW: usize = 10_000;

/// Most older trace records one page returns.
pub const OLDER_PAGE: usize = 1_000;

/// Most bytes of data one answer carries (its JSON): a list that would be
/// longer is cut and says how much was left out, so every answer fits one
/// line of the socket.
pub const DATA_BUDGET: usize = crate::MAX_LINE / 2 - 16 * 1024;

/// A command a waiting request would run, as the process that would run
/// it judges it (its risk and reasons, and how it would be sandboxed):
/// the console shows and refuses by this, never by its own machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandPreview {
    /// The command line.
    pub line: String,
    /// Its risk and why.
    pub assessment: Assessment,
    /// How it would run (`landlock: …`), or why it could not be sandboxed.
    pub sandbox: Result<String, String>,
}

/// What the console shows with each waiting request, read through the
/// verb registry, by request id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Previews {
    /// The memory change a request would make, as a diff.
    pub diffs: HashMap<String, String>,
    /// The command a request would run, judged where it would run.
    pub commands: HashMap<String, CommandPreview>,
    /// What a tool call or a question asks, field by field (a label and
    /// its text; arguments pretty-printed, cut to 40 lines).
    #[serde(default, skip_serializing_if = "HashMap::is_empty")]
    pub fields: HashMap<String, Vec<(String, String)>>,
}

/// The waiting requests, oldest first, with what each would do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    /// The requests.
    pub requests: Vec<PendingRequest>,
    /// What they would change or run.
    pub previews: Previews,
    /// Requests that did not fit this answer (the newest).
    pub left_out: usize,
}

/// The newest trace records after a sequence number.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TracePage {
    /// The records, oldest first.
    pub records: Vec<TraceRecord>,
    /// The last sequence number read.
    pub next: u64,
    /// True when older records after the asked one were left out: what
    /// the console holds starts anew (older ones are read a page at a time).
    pub restart: bool,
}

/// A list an answer carries, cut to fit [`DATA_BUDGET`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Listed<T> {
    /// The items, in the order read.
    pub items: Vec<T>,
    /// Items that did not fit (the last ones).
    pub left_out: usize,
}

/// How a save of a block went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "snake_case")]
pub enum SaveOutcome {
    /// Saved: what the executor said.
    Saved(String),
    /// The block changed since the edit began: its value now.
    Conflict(Block),
    /// It could not be saved (the draft is kept).
    Failed(String),
}

/// A memory search's answer: the hits, best first, and how the search went
/// when it could not use meaning.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// The hits.
    pub hits: Vec<HybridHit>,
    /// Why meaning was not used, when it was not.
    pub note: Option<String>,
}

/// What a Pattern Lisp evaluation (or a tool's dry run) gave.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evaluated {
    /// What was evaluated, as whom.
    pub title: String,
    /// The result as a tree, or the error.
    pub lines: Vec<String>,
    /// True when it is an error.
    pub failed: bool,
}

impl Evaluated {
    /// Most lines a result carries.
    pub const MAX_LINES: usize = 5_000;

    /// A result: its title and its lines.
    pub fn result(title: String, lines: Vec<String>) -> Self {
        Evaluated {
            title,
            lines,
            failed: false,
        }
    }

    /// An error.
    pub fn error(title: String, message: String) -> Self {
        Evaluated {
            title,
            lines: vec![message],
            failed: true,
        }
    }
}

/// Keeps the first items of `items` whose JSON fits `budget` bytes; the
/// rest are dropped and counted.
pub fn fit_list<T: Serialize>(mut items: Vec<T>, budget: usize) -> Listed<T> {
    let mut used = 0usize;
    let mut keep = items.len();
    for (i, item) in items.iter().enumerate() {
        used += serde_json::to_string(item).map_or(usize::MAX / 2, |s| s.len() + 1);
        if used > budget {
            keep = i;
            break;
        }
    }
    let left_out = items.len() - keep;
    items.truncate(keep);
    Listed { items, left_out }
}

#[cfg(test)]
mod tests {
    use crate::{Returned, ServerMsg};

    /// Every answer's data reads back as what was sent, over a line: "no
    /// index yet" is an index of nothing, not a missing answer, and words
    /// alone carry no data at all.
    #[test]
    fn an_answers_data_reads_back_as_it_was_sent() {
        for data in [
            Returned::Index(None),
            Returned::Nothing,
            Returned::Verbs(String::new()),
            Returned::EventPiece {
                json: "{}".into(),
                next: None,
                total: 2,
            },
        ] {
            let reply = ServerMsg::Reply {
                id: 1,
                ok: true,
                message: "m".into(),
                data: data.clone(),
            };
            let line = crate::line(&reply);
            if data.is_nothing() {
                assert!(!line.contains("data"), "{line}");
            }
            let back: ServerMsg = crate::parse(&line).unwrap();
            assert_eq!(back, reply, "{line}");
        }
        // A kind nobody sends is refused, not guessed at.
        let known = crate::line(&ServerMsg::Reply {
            id: 1,
            ok: true,
            message: "m".into(),
            data: Returned::Verbs("x".into()),
        });
        assert!(crate::parse::<ServerMsg>(&known).is_ok());
        let odd = known.replace("\"verbs\"", "\"no_such\"");
        assert_ne!(odd, known);
        assert!(crate::parse::<ServerMsg>(&odd).is_err(), "{odd}");
    }
}
