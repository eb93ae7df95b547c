//! A fresh PostgreSQL database for one test, on the server
//! `PARTNER_TEST_POSTGRES` names (`.ci/run` sets it), dropped after.
//! When the variable is set and the server cannot be reached, the test
//! fails: it never passes by skipping. When it is not set, the test says
//! loudly that its PostgreSQL half did not run.

use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the test server.
pub const VAR: &str = "PARTNER_TEST_POSTGRES";

/// A database made for one test, dropped with it.
pub struct Scratch {
    /// Its URL.
    pub url: String,
    admin: String,
    name: String,
}

/// `url` with its database replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let server = match base.rsplit_once('/') {
        Some((server, _)) if server.contains("//") && server.len() > "postgres://".len() => server,
        _ => base,
    };
    format!("{server}/{name}{query}")
}

/// A fresh database on the test server, or `None` (said on stderr) when
/// no server is configured. Panics when one is configured but unreachable.
pub fn scratch() -> Option<Scratch> {
    let Ok(admin) = std::env::var(VAR) else {
        eprintln!(
            "NOTE: {VAR} is not set: the PostgreSQL half of this test did not run (.ci/run sets it)"
        );
        return None;
    };
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "partner_it_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    let mut client = postgres::Client::connect(&admin, postgres::NoTls)
        .unwrap_or_else(|e| panic!("{VAR}={admin} is set but cannot be reached: {e}"));
    // One statement each: CREATE DATABASE cannot run in a transaction.
    for sql in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        client.batch_execute(&sql).unwrap_or_else(|e| {
            let why = e
                .as_db_error()
                .map_or(e.to_string(), |d| d.message().to_string());
            panic!("cannot create a test database on {admin}: {why}")
        });
    }
    Some(Scratch {
        url: with_database(&admin, &name),
        admin,
        name,
    })
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}
