//! GETs that reach only public addresses (unless the policy allows a host):
//! every URL's host is checked by name, every address it resolves to is
//! checked, the connection goes to exactly the addresses checked (so a
//! second lookup cannot point elsewhere), no proxy is used, and redirects
//! are followed by hand, each one checked the same way.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::Url;

use partner_policy::{Network, network};

/// Most redirects a fetch follows.
pub const MAX_REDIRECTS: usize = 5;

/// What to GET, and how.
#[derive(Debug, Clone)]
pub struct GuardedGet {
    /// The URL.
    pub url: String,
    /// A query parameter to add (`q` for a search).
    pub query: Option<(String, String)>,
    /// Hosts the policy lets agents reach although they are not public.
    pub network: Network,
    /// Time allowed for the whole exchange, body included.
    pub timeout: Duration,
}

fn refused(host: &str, what: &str) -> String {
    format!(
        "{host} is {what}, which agents may not reach; the partner can allow the host in the policy ([network] allow_hosts)"
    )
}

/// The addresses `url` may be reached at, each checked.
async fn checked_addresses(
    url: &Url,
    network: &Network,
    timeout: Duration,
) -> Result<Vec<SocketAddr>, String> {
    let host = url.host_str().unwrap_or("");
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let allowed = network.allows(host, url.port());
    if let Some(what) = network::non_public_host(host)
        && !allowed
    {
        return Err(refused(host, what));
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let resolved: Vec<SocketAddr> =
        tokio::time::timeout(timeout, tokio::net::lookup_host((bare, port)))
            .await
            .map_err(|_| format!("looking up {host} took too long"))?
            .map_err(|e| format!("could not find {host}: {e}"))?
            .collect();
    if resolved.is_empty() {
        return Err(format!("{host} has no address"));
    }
    if !allowed {
        for addr in &resolved {
            if let Some(what) = network::non_public(addr.ip()) {
                return Err(refused(host, &format!("{what} ({})", addr.ip())));
            }
        }
    }
    Ok(resolved)
}

/// GETs the URL, following at most [`MAX_REDIRECTS`] redirects, each to an
/// http(s) URL that passes the same checks. Returns the final URL and its
/// response (status not checked, body not read).
pub async fn get_public(get: GuardedGet) -> Result<(String, reqwest::Response), String> {
    let mut url =
        Url::parse(&get.url).map_err(|e| format!("{} is not a URL I can fetch: {e}", get.url))?;
    if let Some((key, value)) = &get.query {
        url.query_pairs_mut().append_pair(key, value);
    }
    for _ in 0..=MAX_REDIRECTS {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("{url} is not an http or https URL"));
        }
        let addresses = checked_addresses(&url, &get.network, get.timeout).await?;
        let host = url.host_str().unwrap_or("").to_string();
        let client = super::client_builder(get.timeout, get.timeout)
            .timeout(get.timeout)
            // A proxy would connect where we cannot check.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .resolve_to_addrs(
                host.trim_start_matches('[').trim_end_matches(']'),
                &addresses,
            )
            .build()
            .map_err(|e| format!("could not set up HTTP: {e}"))?;
        let response = client.get(url.clone()).send().await.map_err(|e| {
            if e.is_timeout() {
                format!(
                    "could not fetch {url}: it took longer than {:?}",
                    get.timeout
                )
            } else {
                format!("could not fetch {url}: {}", error_chain(&e))
            }
        })?;
        if !response.status().is_redirection() {
            return Ok((url.to_string(), response));
        }
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| format!("{url} redirected without saying where"))?;
        url = url
            .join(location.trim())
            .map_err(|_| format!("{url} redirected to '{location}', which I can't follow"))?;
    }
    Err(format!(
        "{} redirected more than {MAX_REDIRECTS} times, so I stopped",
        get.url
    ))
}

/// An error with its causes (reqwest's own message is often just "error
/// sending request").
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}
