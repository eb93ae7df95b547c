//! The local index that finds programs by what they do ("picture editor"
//! → GIMP): installed packages (from `dpkg-query`) and desktop
//! applications (`.desktop` files under the XDG data directories) in
//! SQLite FTS5 tables with the `porter unicode61` tokenizer. Built on
//! first use, rebuilt by `partner gate index`.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};

use super::context::Similar;
use super::meaning;
use super::process::probe;
use partner_core::embedder::Embedder;

/// Most `.desktop` files and packages read.
const MAX_ENTRIES: usize = 50_000;
/// Largest `.desktop` file read.
const MAX_DESKTOP_BYTES: u64 = 256 * 1024;

/// An open index.
pub struct Index {
    conn: Connection,
}

/// How many entries a build indexed.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Built {
    /// Desktop applications.
    pub applications: usize,
    /// Installed packages.
    pub packages: usize,
}

/// One desktop application.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DesktopApp {
    /// The file's name without `.desktop`.
    pub id: String,
    /// `Name`.
    pub name: String,
    /// `GenericName`.
    pub generic_name: String,
    /// `Comment`.
    pub comment: String,
    /// `Keywords`, spaced.
    pub keywords: String,
    /// `Exec`'s program.
    pub exec: String,
}

impl Index {
    /// Opens (creating) the index at `path`.
    pub fn open(path: &Path) -> Result<Index, String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let conn = Connection::open(path)
            .map_err(|e| format!("cannot open the index {}: {e}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS apps_fts USING fts5(
                 desktop_id UNINDEXED, name, generic_name, comment, keywords, exec UNINDEXED,
                 tokenize='porter unicode61');
             CREATE VIRTUAL TABLE IF NOT EXISTS packages_fts USING fts5(
                 name, description, installed UNINDEXED, tokenize='porter unicode61');
             CREATE TABLE IF NOT EXISTS entry_vectors (
                 kind TEXT NOT NULL, entry INTEGER NOT NULL, embedder TEXT NOT NULL,
                 vec BLOB NOT NULL, PRIMARY KEY (kind, entry));",
        )
        .map_err(|e| format!("cannot set up the index: {e}"))?;
        Ok(Index { conn })
    }

    /// True when nothing was indexed yet.
    pub fn is_empty(&self) -> bool {
        let count = |t: &str| -> i64 {
            self.conn
                .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
                .unwrap_or(0)
        };
        count("apps_fts") + count("packages_fts") == 0
    }

    /// Replaces the index's contents with `apps` and `packages`.
    pub fn fill(
        &mut self,
        apps: &[DesktopApp],
        packages: &[(String, String)],
    ) -> Result<Built, String> {
        let tx = self.conn.transaction().map_err(|e| e.to_string())?;
        tx.execute_batch(
            "DELETE FROM apps_fts; DELETE FROM packages_fts; DELETE FROM entry_vectors;",
        )
        .map_err(|e| e.to_string())?;
        for a in apps.iter().take(MAX_ENTRIES) {
            tx.execute(
                "INSERT INTO apps_fts VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![a.id, a.name, a.generic_name, a.comment, a.keywords, a.exec],
            )
            .map_err(|e| e.to_string())?;
        }
        for (name, description) in packages.iter().take(MAX_ENTRIES) {
            tx.execute(
                "INSERT INTO packages_fts VALUES (?1, ?2, 1)",
                params![name, description],
            )
            .map_err(|e| e.to_string())?;
        }
        tx.commit().map_err(|e| e.to_string())?;
        Ok(Built {
            applications: apps.len().min(MAX_ENTRIES),
            packages: packages.len().min(MAX_ENTRIES),
        })
    }

    /// Rebuilds from this machine: desktop files under `dirs` and the
    /// installed packages.
    pub fn rebuild(&mut self, dirs: &[PathBuf]) -> Result<Built, String> {
        let apps = desktop_apps(dirs);
        let packages = installed_packages();
        self.fill(&apps, &packages)
    }

    /// Programs matching any of `words`: those matching every word first
    /// (marked `whole`), applications before packages, best first. When
    /// none matches every word and an `embedder` is given, the programs
    /// nearest in meaning come next (the nearest marked `whole`).
    pub fn search(
        &self,
        words: &str,
        limit: usize,
        embedder: Option<&dyn Embedder>,
    ) -> Result<Vec<Similar>, String> {
        let terms: Vec<String> = words
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 1)
            .take(16)
            .map(|w| format!("\"{}\"", w.to_lowercase()))
            .collect();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let mut out: Vec<Similar> = Vec::new();
        let mut by_words = self.query(&terms.join(" AND "), limit, true)?;
        if by_words.is_empty()
            && let Some(embedder) = embedder
        {
            by_words = meaning::nearest(&self.conn, embedder, words, limit).unwrap_or_default();
        }
        by_words.extend(self.query(&terms.join(" OR "), limit, false)?);
        for found in by_words {
            let known = out.iter().any(|s| {
                s.name.eq_ignore_ascii_case(&found.name)
                    || (found.command.is_none()
                        && s.command.as_deref() == Some(found.name.as_str()))
            });
            if !known {
                out.push(found);
            }
        }
        out.truncate(limit);
        Ok(out)
    }

    /// Embeds the entries without a vector from `embedder`, for up to
    /// `budget` (the rest next time): how many it embedded, and whether
    /// some still wait.
    pub fn embed_entries(
        &self,
        embedder: &dyn Embedder,
        budget: std::time::Duration,
    ) -> Result<(usize, bool), String> {
        meaning::embed_entries(&self.conn, embedder, budget)
    }

    /// One FTS5 query over applications, then packages.
    fn query(&self, query: &str, limit: usize, whole: bool) -> Result<Vec<Similar>, String> {
        let mut out = Vec::new();
        let mut apps = self
            .conn
            .prepare(
                "SELECT name, exec, CASE WHEN comment != '' THEN comment ELSE generic_name END
                 FROM apps_fts WHERE apps_fts MATCH ?1 ORDER BY bm25(apps_fts, 0, 4, 3, 1, 2) LIMIT ?2",
            )
            .map_err(|e| e.to_string())?;
        let rows = apps
            .query_map(params![query, limit as i64], |r| {
                Ok(Similar {
                    name: r.get(0)?,
                    command: Some(r.get::<_, String>(1)?).filter(|s| !s.is_empty()),
                    description: r.get(2)?,
                    whole,
                    by_meaning: false,
                })
            })
            .map_err(|e| e.to_string())?;
        out.extend(rows.flatten());
        let mut packages = self
            .conn
            .prepare("SELECT name, description FROM packages_fts WHERE packages_fts MATCH ?1 ORDER BY bm25(packages_fts, 2, 1) LIMIT ?2")
            .map_err(|e| e.to_string())?;
        let rows = packages
            .query_map(params![query, limit as i64], |r| {
                Ok(Similar {
                    name: r.get(0)?,
                    command: None,
                    description: r.get(1)?,
                    whole,
                    by_meaning: false,
                })
            })
            .map_err(|e| e.to_string())?;
        out.extend(rows.flatten());
        Ok(out)
    }
}

/// Where the index is kept unless configured: `gate-index.sqlite` in
/// partner's data directory.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "partner")
        .map(|d| d.data_dir().join("gate-index.sqlite"))
}

/// Opens the index at `path`, building it from this machine the first
/// time (when it is empty). Fails open: `None` when it cannot be opened.
pub fn open_built(path: &Path) -> Option<Index> {
    let mut index = Index::open(path).ok()?;
    if index.is_empty() {
        let _ = index.rebuild(&xdg_application_dirs());
    }
    Some(index)
}

/// The directories holding `applications/`: `$XDG_DATA_HOME` (or
/// `~/.local/share`) and `$XDG_DATA_DIRS` (or `/usr/local/share:/usr/share`).
pub fn xdg_application_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    match std::env::var_os("XDG_DATA_HOME") {
        Some(d) if !d.is_empty() => dirs.push(PathBuf::from(d)),
        _ => {
            if let Some(home) = std::env::var_os("HOME") {
                dirs.push(PathBuf::from(home).join(".local/share"));
            }
        }
    }
    let data = std::env::var("XDG_DATA_DIRS").unwrap_or_default();
    let data = if data.is_empty() {
        "/usr/local/share:/usr/share".to_string()
    } else {
        data
    };
    dirs.extend(data.split(':').filter(|d| !d.is_empty()).map(PathBuf::from));
    dirs.into_iter().map(|d| d.join("applications")).collect()
}

/// Every application in the `.desktop` files directly under `dirs` (the
/// first file of an id wins, as in XDG's lookup).
pub fn desktop_apps(dirs: &[PathBuf]) -> Vec<DesktopApp> {
    let mut out: Vec<DesktopApp> = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten().take(MAX_ENTRIES) {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "desktop") {
                continue;
            }
            if entry.metadata().is_ok_and(|m| m.len() > MAX_DESKTOP_BYTES) {
                continue;
            }
            let id = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if out.iter().any(|a| a.id == id) {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&path)
                && let Some(app) = parse_desktop(&id, &text)
            {
                out.push(app);
            }
        }
    }
    out
}

/// The application a `.desktop` file describes (not hidden, of type
/// `Application`).
pub fn parse_desktop(id: &str, text: &str) -> Option<DesktopApp> {
    let mut app = DesktopApp {
        id: id.to_string(),
        ..DesktopApp::default()
    };
    let mut in_entry = false;
    let mut application = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_entry = line == "[Desktop Entry]";
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !in_entry {
            continue;
        }
        let value = value.trim().to_string();
        match key.trim() {
            "Type" => application = value == "Application",
            "Name" => app.name = value,
            "GenericName" => app.generic_name = value,
            "Comment" => app.comment = value,
            "Keywords" => app.keywords = value.replace(';', " "),
            "Exec" => {
                app.exec = value
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .rsplit('/')
                    .next()
                    .unwrap_or("")
                    .to_string()
            }
            "NoDisplay" | "Hidden" if value == "true" => return None,
            _ => {}
        }
    }
    (application && !app.name.is_empty()).then_some(app)
}

/// Installed packages and their summaries, from `dpkg-query` (none when
/// it is not there).
pub fn installed_packages() -> Vec<(String, String)> {
    let Some(ran) = probe(
        "dpkg-query",
        &[
            "-W",
            "-f=${Package}\t${db:Status-Abbrev}\t${binary:Summary}\n",
        ],
        std::time::Duration::from_secs(20),
    ) else {
        return Vec::new();
    };
    ran.stdout
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, '\t');
            let (name, status, summary) =
                (parts.next()?, parts.next()?, parts.next().unwrap_or(""));
            status
                .starts_with("ii")
                .then(|| (name.to_string(), summary.to_string()))
        })
        .take(MAX_ENTRIES)
        .collect()
}
