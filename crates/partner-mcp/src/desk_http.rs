//! The desk over streamable HTTP (`partner mcp serve --listen ADDR`): each
//! request carries a partner's token (`Authorization: Bearer …`), checked
//! before anything is read; a body is at most 1 MiB, headers come within
//! 10 s, and at most 16 connections are served at once (more are closed).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::desk::{Desk, DeskServer};

/// The largest request body read.
pub const MAX_BODY: usize = super::desk::MAX_REQUEST;
/// At most this many connections at once.
pub const MAX_CONNECTIONS: usize = 16;
/// A request's headers must arrive within this.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether a token is a partner's: the partner's name, `None` for a token
/// nobody holds, an error when it could not be checked.
pub type Admit = Arc<dyn Fn(&str) -> Result<Option<String>, String> + Send + Sync>;

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn refused(status: StatusCode, why: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{why}\n"))).boxed());
    *response.status_mut() = status;
    response
}

/// Serves `server` on `listener` to callers `admit` lets in, until the
/// listener fails. `public` lets any Host header through (the listener is
/// not on loopback); otherwise only loopback names are answered.
pub async fn serve_http<D: Desk>(
    server: DeskServer<D>,
    listener: TcpListener,
    admit: Admit,
    public: bool,
) -> Result<(), String> {
    let config = if public {
        StreamableHttpServerConfig::default().disable_allowed_hosts()
    } else {
        StreamableHttpServerConfig::default()
    };
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (stream, _) = listener
            .accept()
            .await
            .map_err(|e| format!("the listener failed: {e}"))?;
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            continue;
        };
        let (service, admit) = (service.clone(), admit.clone());
        tokio::spawn(async move {
            let answer = hyper::service::service_fn(move |request| {
                let (service, admit) = (service.clone(), admit.clone());
                async move { Ok::<_, Infallible>(answer(&service, &admit, request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), answer)
                .await;
            drop(permit);
        });
    }
}

async fn answer<D: Desk>(
    service: &StreamableHttpService<DeskServer<D>, LocalSessionManager>,
    admit: &Admit,
    request: Request<Incoming>,
) -> Response<Body> {
    let token = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let Some(token) = token else {
        return refused(
            StatusCode::UNAUTHORIZED,
            "a partner's token is needed: Authorization: Bearer TOKEN (partner partners add NAME)",
        );
    };
    let admit = admit.clone();
    match tokio::task::spawn_blocking(move || admit(&token)).await {
        Ok(Ok(Some(_))) => {}
        Ok(Ok(None)) => return refused(StatusCode::UNAUTHORIZED, "that token is no partner's"),
        Ok(Err(e)) => return refused(StatusCode::SERVICE_UNAVAILABLE, &e),
        Err(_) => return refused(StatusCode::INTERNAL_SERVER_ERROR, "the token check stopped"),
    }
    let (parts, body) = request.into_parts();
    let body = Limited::new(body, MAX_BODY);
    service.handle(Request::from_parts(parts, body)).await
}
