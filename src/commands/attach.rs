//! `partner attach`: the console as a client of a running daemon.
//! Everything of the constellation — the queue, the trace, memory,
//! decisions, edits, the live events — goes through the daemon's socket,
//! as it does to the host of an embedded console; nothing here opens the
//! database. Quitting detaches: the agents keep running.

use std::path::PathBuf;
use std::sync::Arc;

use super::run::{config_dir, data_dir};
use crate::error::{Error, Result};
use crate::host::lock;
use crate::host::remote::{Address, Door, RemoteHost};
use crate::protocol::host::Host;

/// Options of `partner attach`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AttachOptions {
    /// The database whose daemon to attach to (default: the one `partner`
    /// runs on here).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// The daemon's socket (default: the one the database's daemon listens on).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// A daemon's TCP listener (`HOST:PORT`, `partner serve --listen`),
    /// perhaps on another machine; needs your partner's token.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["socket", "db"])]
    pub connect: Option<std::net::SocketAddr>,
    /// Console theme: dark, light or high-contrast.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// Console keymap: default, vim or emacs.
    #[arg(long, value_name = "NAME")]
    pub keymap: Option<String>,
    /// No terminal bell when a request arrives for the partner.
    #[arg(long)]
    pub no_bell: bool,
    /// A file holding your partner's token (`partner partners add NAME`
    /// printed it), to decide and edit under your name; default: the
    /// `PARTNER_TOKEN` environment variable, else the unnamed local partner.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

/// The partner's token a client shows: from `file`, else `PARTNER_TOKEN`.
pub fn partner_token(file: Option<&std::path::Path>) -> Result<Option<String>> {
    let token = match file {
        Some(path) => Some(std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?),
        None => std::env::var("PARTNER_TOKEN").ok(),
    };
    Ok(token
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty()))
}

/// Runs `partner attach`.
pub fn run_attach(options: &AttachOptions) -> Result<i32> {
    let token = partner_token(options.token_file.as_deref())?;
    let (at, db) = match options.connect {
        Some(addr) if token.is_none() => {
            return Err(Error::Usage(format!(
                "{addr} admits partners only: give your token with --token-file FILE or PARTNER_TOKEN"
            )));
        }
        Some(addr) => (Address::Tcp(addr), None),
        None => {
            let (db, team) = match (&options.db, &options.socket) {
                (Some(db), _) => (Some(db.clone()), None),
                (None, Some(_)) => (None, None),
                // On PostgreSQL: the team daemon of this machine.
                (None, None) => match super::common::DbArg::default_store().store_at()? {
                    partner_engine::store::StoreAt::File(db) => (Some(db), None),
                    partner_engine::store::StoreAt::Postgres(_) => {
                        (None, Some(super::team::socket_here()?))
                    }
                },
            };
            let socket = options
                .socket
                .clone()
                .or(team)
                .or_else(|| db.as_deref().map(lock::socket_of))
                .ok_or_else(|| Error::Usage("give --db, --socket or --connect".into()))?;
            (Address::Socket(socket), db)
        }
    };
    let dir = config_dir();
    let theme = crate::tui::driver::load_theme(options.theme.as_deref(), dir.as_deref())
        .map_err(Error::Usage)?;
    let keymap = crate::tui::driver::load_keymap(options.keymap.as_deref(), dir.as_deref())
        .map_err(Error::Usage)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let door = Door { at, token };
        let remote = RemoteHost::connect(&door).await.map_err(|e| match e {
            // Nothing answered: perhaps nothing runs there.
            crate::host::remote::Opening::Unreachable(why) => {
                Error::Usage(format!("{why} (is partner serve running there?)"))
            }
            // A daemon answered: its own words, no guess.
            other => Error::Usage(other.to_string()),
        })?;
        let data = remote
            .call(crate::protocol::Op::Status)
            .await
            .map_err(Error::Runtime)?
            .data;
        let crate::protocol::Returned::Status(status) = data else {
            return Err(Error::Runtime("the daemon sent no status".into()));
        };
        let db = db.unwrap_or_else(|| PathBuf::from(&status.db));
        // The daemon's verbs, so completion and a replay opened here read
        // actions as the constellation does.
        let verbs = Arc::new(
            crate::console::constellation_verbs(remote.as_ref())
                .await
                .map_err(Error::Runtime)?,
        );
        // Which partner this console decides as, named on screen.
        let title = match remote.partner() {
            Some(partner) if partner != "partner" => format!("{} · as {partner}", status.name),
            _ => status.name.clone(),
        };
        let mut app = crate::tui::app::App::new(&title, &db.display().to_string(), theme, keymap);
        app.verb_words = crate::tui::completion::verb_words(&verbs);
        let settings = crate::tui::driver::ConsoleSettings {
            theme: options.theme.clone(),
            keymap: options.keymap.clone(),
            bell: !options.no_bell,
            replay: None,
            history: data_dir().ok().map(|d| d.join("console_history")),
        };
        crate::console::run(remote, verbs, app, settings)
            .await
            .map_err(|e| Error::Runtime(format!("the console failed: {e}")))?;
        Ok(0)
    })
}
