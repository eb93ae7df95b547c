//! HTTP for partner, on the tokio stack: one way to build clients (rustls
//! with the ring provider, partner's user agent), bounded reads of bodies
//! and lines, the waits between retries (jittered backoff, `Retry-After` in
//! both its forms), fetches that reach only public addresses, and a bridge
//! that runs such a fetch from synchronous code, cancellable.
//!
//! Everything a server sends is untrusted: every read is bounded in size
//! and in time, and dropping a future closes its connection.

mod body;
mod bridge;
mod guarded;
mod retry;

use std::sync::Once;
use std::time::Duration;

pub use body::{LineTooLong, Lines, read_limited};
pub use bridge::{Interrupted, run};
pub use guarded::error_chain;
pub use guarded::{GuardedGet, MAX_REDIRECTS, get_public};
pub use partner_core::cancel::{Cancel, cancelled};
pub use retry::{backoff, retry_after};

/// The user agent partner sends.
pub const USER_AGENT: &str = concat!("partner/", env!("CARGO_PKG_VERSION"));

/// Makes ring the process's TLS crypto provider (once; a provider another
/// part of the process installed first is kept).
fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A client builder with partner's defaults: rustls, partner's user agent,
/// `connect` to connect and `read` for each read of a response (headers and
/// body alike, so a server that stalls mid-body is noticed).
pub fn client_builder(connect: Duration, read: Duration) -> reqwest::ClientBuilder {
    install_crypto();
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(connect)
        .read_timeout(read)
}

/// A client for model servers: the base URL is the partner's, so proxies
/// from the environment are honoured. Each provider has one, and its
/// connections are reused; it gives up connecting after `connect_timeout`,
/// and each call times its own steps (providers have their own timeouts).
pub fn model_client(connect_timeout: std::time::Duration) -> Result<reqwest::Client, String> {
    install_crypto();
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(connect_timeout)
        .build()
        .map_err(|e| format!("could not set up HTTP: {}", error_chain(&e)))
}
