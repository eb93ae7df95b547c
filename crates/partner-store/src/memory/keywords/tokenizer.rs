//! [`Tokenizer`]: SQLite's own FTS5 tokenizer (`porter unicode61`, as the
//! memory's full-text tables are declared), called directly, so that the
//! keyword index holds exactly the terms FTS5 would match: no second
//! tokenizer to drift from the first.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;

use rusqlite::{Connection, ffi};

/// Longest token FTS5 keeps; longer ones are cut to this many bytes.
const MAX_TOKEN: usize = 32768;

/// What receives tokens: each token, and the byte range of the text it
/// was read from.
pub(crate) type Sink<'a> = dyn FnMut(&[u8], std::ops::Range<usize>) + 'a;

/// The `porter unicode61` tokenizer of an in-memory SQLite connection it
/// owns. Not shared between threads at once (it is kept behind a lock).
pub(crate) struct Tokenizer {
    instance: *mut ffi::Fts5Tokenizer,
    methods: ffi::fts5_tokenizer,
    // Dropped after the instance (see Drop): the tokenizer belongs to it.
    _conn: Connection,
}

// SAFETY: the tokenizer instance and its connection are only used by one
// thread at a time (the index holding it is behind a mutex), which
// SQLite's default (serialized) threading mode allows.
unsafe impl Send for Tokenizer {}

impl Tokenizer {
    /// The tokenizer FTS5 uses for `tokenize = 'porter unicode61'`.
    pub(crate) fn porter() -> Result<Self, String> {
        let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
        // SAFETY: the handle is the live connection's; the statement is
        // finalized before returning; the pointer bound is to a local the
        // statement writes once while it steps.
        let api = unsafe { fts5_api(&conn) }?;
        let mut methods = ffi::fts5_tokenizer {
            xCreate: None,
            xDelete: None,
            xTokenize: None,
        };
        let mut user: *mut c_void = ptr::null_mut();
        // SAFETY: `api` came from this connection, which outlives the call.
        let find = unsafe { (*api).xFindTokenizer }.ok_or("FTS5 has no xFindTokenizer")?;
        // SAFETY: as above; the name is a NUL-terminated literal.
        let rc = unsafe { find(api, c"porter".as_ptr(), &mut user, &mut methods) };
        if rc != ffi::SQLITE_OK {
            return Err(format!("FTS5 has no porter tokenizer ({rc})"));
        }
        let create = methods
            .xCreate
            .ok_or("the porter tokenizer has no xCreate")?;
        let mut args: [*const c_char; 1] = [c"unicode61".as_ptr()];
        let mut instance: *mut ffi::Fts5Tokenizer = ptr::null_mut();
        // SAFETY: the user data and arguments are what FTS5 gave and a
        // NUL-terminated literal; `instance` receives the new tokenizer.
        let rc = unsafe { create(user, args.as_mut_ptr(), 1, &mut instance) };
        if rc != ffi::SQLITE_OK || instance.is_null() {
            return Err(format!("the porter tokenizer could not be made ({rc})"));
        }
        if methods.xTokenize.is_none() {
            return Err("the porter tokenizer has no xTokenize".into());
        }
        Ok(Tokenizer {
            instance,
            methods,
            _conn: conn,
        })
    }

    /// Calls `each` with every token of `text`, in order, as FTS5 indexes
    /// a document (`query`: as it reads a query's words), with the byte
    /// range of the text it was read from.
    pub(crate) fn tokens(&mut self, text: &str, query: bool, each: &mut Sink<'_>) {
        let Some(tokenize) = self.methods.xTokenize else {
            return;
        };
        let Ok(len) = c_int::try_from(text.len()) else {
            return;
        };
        let flags = if query {
            ffi::FTS5_TOKENIZE_QUERY
        } else {
            ffi::FTS5_TOKENIZE_DOCUMENT
        };
        let mut sink: &mut Sink<'_> = each;
        let ctx = (&mut sink as *mut &mut Sink<'_>).cast::<c_void>();
        // SAFETY: the instance is live; the text pointer and length describe
        // `text`; `ctx` points at `sink`, which outlives the call, and is
        // only read by `on_token` during it.
        unsafe {
            tokenize(
                self.instance,
                ctx,
                flags,
                text.as_ptr().cast(),
                len,
                Some(on_token),
            );
        }
    }
}

/// The callback FTS5 calls with each token: hands it to the sink `ctx`
/// points at. Never unwinds (pushing a token cannot panic but on OOM,
/// which aborts).
unsafe extern "C" fn on_token(
    ctx: *mut c_void,
    flags: c_int,
    token: *const c_char,
    len: c_int,
    start: c_int,
    end: c_int,
) -> c_int {
    if flags & ffi::FTS5_TOKEN_COLOCATED != 0 || token.is_null() {
        return ffi::SQLITE_OK;
    }
    let len = usize::try_from(len).unwrap_or(0).min(MAX_TOKEN);
    // SAFETY: FTS5 passes `len` readable bytes at `token`, and `ctx` is the
    // sink `tokens` set up for this call.
    unsafe {
        let sink = &mut *ctx.cast::<&mut Sink<'_>>();
        let range = usize::try_from(start).unwrap_or(0)..usize::try_from(end).unwrap_or(0);
        sink(std::slice::from_raw_parts(token.cast::<u8>(), len), range);
    }
    ffi::SQLITE_OK
}

impl Drop for Tokenizer {
    fn drop(&mut self) {
        if let Some(delete) = self.methods.xDelete {
            // SAFETY: the instance was made by this tokenizer's xCreate and
            // is deleted once, before its connection closes.
            unsafe { delete(self.instance) };
        }
    }
}

/// The FTS5 API of `conn`.
///
/// # Safety
/// `conn` must stay open while the returned pointer is used.
unsafe fn fts5_api(conn: &Connection) -> Result<*mut ffi::fts5_api, String> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    // SAFETY: the caller keeps the connection open; every pointer passed
    // is live for the call it is passed to.
    unsafe {
        let db = conn.handle();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(format!("FTS5 is not available ({rc})"));
        }
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&mut api as *mut *mut ffi::fts5_api).cast(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
    }
    if api.is_null() {
        return Err("FTS5 gave no API".into());
    }
    Ok(api)
}

#[cfg(test)]
mod tests {
    use super::Tokenizer;

    fn tokens(t: &mut Tokenizer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        t.tokens(text, false, &mut |tok, _| {
            out.push(String::from_utf8_lossy(tok).into_owned())
        });
        out
    }

    #[test]
    fn it_folds_splits_and_stems_as_fts5_does() {
        let mut t = Tokenizer::porter().unwrap();
        assert_eq!(
            tokens(&mut t, "Launching the Deadlines, don't café_au-lait"),
            ["launch", "the", "deadlin", "don", "t", "cafe", "au", "lait"]
        );
        assert!(tokens(&mut t, "  ,.; ").is_empty());
    }

    #[test]
    fn its_tokens_are_the_terms_fts5_indexes() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
        )
        .unwrap();
        let long = "x".repeat(300);
        let texts = [
            "Running runners ran; relational generalizations, hopefulness",
            "ÉCOLE Straße naïve coöperate 東京タワー Ελληνικά привет мир",
            "v2.0 1,000,000 3.14159 e-mail snake_case CamelCase don't",
            "emoji 🎉 party 🎉🎉 tab	new
line",
            long.as_str(),
        ];
        let mut t = Tokenizer::porter().unwrap();
        for (i, text) in texts.iter().enumerate() {
            conn.execute(
                "INSERT INTO t(rowid, x) VALUES (?1, ?2)",
                rusqlite::params![i as i64, text],
            )
            .unwrap();
            let mut stmt = conn
                .prepare("SELECT term FROM v WHERE doc = ?1 ORDER BY offset")
                .unwrap();
            let fts5: Vec<String> = stmt
                .query_map([i as i64], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert_eq!(tokens(&mut t, text), fts5, "{text}");
        }
    }
}
