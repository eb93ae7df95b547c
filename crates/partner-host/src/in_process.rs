//! [`InProcess`]: the constellation in the console's own process, served
//! as a [`Host`] by the same operations a daemon serves over its socket.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::broadcast;

use super::{Hub, Served};
use partner_protocol::host::Pending;
use partner_protocol::{Answer, Connection, Event, Host, Op};
use partner_runtime::{ConstellationConfig, RuntimeHandle};

/// A runtime in this process, answering the protocol's operations.
#[derive(Clone)]
pub struct InProcess {
    served: Arc<Served>,
    /// A subscription made as the runtime started, for the first client
    /// (it sees every event from the first).
    first: Arc<std::sync::Mutex<Option<broadcast::Receiver<Event>>>>,
}

impl InProcess {
    /// The host of the constellation `config` describes, running behind
    /// `handle` over the database `db`.
    pub fn new(handle: RuntimeHandle, config: &ConstellationConfig, db: &Path) -> Self {
        // Nothing here numbers events for clients to fetch again: the
        // console subscribes to the runtime itself.
        InProcess {
            served: Arc::new(Served::new(handle, config, db, None, Hub::new())),
            first: Arc::default(),
        }
    }

    /// [`InProcess::new`], its first client given `first`: a subscription
    /// made before the runtime did anything.
    pub fn watched(
        handle: RuntimeHandle,
        config: &ConstellationConfig,
        db: &Path,
        first: broadcast::Receiver<Event>,
    ) -> Self {
        let host = InProcess::new(handle, config, db);
        *host.first.lock().unwrap_or_else(|e| e.into_inner()) = Some(first);
        host
    }
}

impl Host for InProcess {
    fn events(&self) -> broadcast::Receiver<Event> {
        self.first
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_else(|| self.served.handle.subscribe())
    }

    fn call(&self, op: Op) -> Pending<'_, Result<Answer, String>> {
        // The console in the constellation's own process is the local
        // partner's.
        Box::pin(super::ops::answer(
            &self.served,
            op,
            &partner_policy::Authority::Partner,
        ))
    }

    fn connection(&self) -> Connection {
        Connection::Embedded
    }
}
