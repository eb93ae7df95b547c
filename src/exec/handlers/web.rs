//! `/fetch` (HTTP GET with a timeout and size cap, HTML converted to
//! markdown, long pages split for `/fetch continue`) and `/web` (a
//! configured search endpoint). Both connect only to public addresses,
//! checked on every resolved address and every redirect, unless the policy
//! allows a host; no proxy from the environment is used.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

use super::{Effect, Handlers};
use crate::dialect::{Op, ParsedAction, Verb};
use crate::exec::executor::Executor;
use crate::exec::registry::{Cx, Outcome, Stage, VerbHandler};
use crate::permission::{Network, VerbTraits, network};

/// One agent's last fetched page: its URL, its pages and the next to show.
type FetchedPage = (String, Vec<String>, usize);

/// The rest of each agent's last fetched page, for `/fetch continue`.
#[derive(Debug, Default)]
pub(crate) struct FetchPages {
    pages: Mutex<HashMap<String, FetchedPage>>,
}

/// Resolves names like the system does, then refuses every address that is
/// not public (unless the policy allows the host), so a name that points at
/// this machine, its network or a metadata service is never connected to.
#[derive(Debug)]
struct PublicOnly {
    network: Network,
}

impl Resolver for PublicOnly {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let resolved = DefaultResolver::default().resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or("");
        let port = uri.port_u16();
        if self.network.allows(host, port) {
            return Ok(resolved);
        }
        for addr in resolved.iter() {
            if let Some(what) = network::non_public(addr.ip()) {
                return Err(ureq::Error::Io(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!(
                        "{host} is {what} ({}), which agents may not reach; the partner can allow the host in the policy ([network] allow_hosts)",
                        addr.ip()
                    ),
                )));
            }
        }
        Ok(resolved)
    }
}

fn http(exec: &Executor, network: &Network) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(exec.config().fetch.timeout))
        .http_status_as_error(false)
        // Redirects are followed by hand, each one checked.
        .max_redirects(0)
        // A proxy from the environment would connect where we cannot check.
        .proxy(None)
        .user_agent(concat!("partner/", env!("CARGO_PKG_VERSION")))
        .build();
    ureq::Agent::with_parts(
        config,
        DefaultConnector::default(),
        PublicOnly {
            network: network.clone(),
        },
    )
}

/// Most redirects a fetch follows.
const MAX_REDIRECTS: usize = 5;

/// Where a `Location` header points, relative to `base`.
fn redirect_target(base: &ureq::http::Uri, location: &str) -> Option<String> {
    let location = location.trim();
    if location.contains("://") {
        return Some(location.to_string());
    }
    let scheme = base.scheme_str()?;
    let authority = base.authority()?.as_str();
    if let Some(rest) = location.strip_prefix("//") {
        return Some(format!("{scheme}://{rest}"));
    }
    if location.starts_with('/') {
        return Some(format!("{scheme}://{authority}{location}"));
    }
    let path = base.path();
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    Some(format!("{scheme}://{authority}{dir}{location}"))
}

/// GETs `url`, following at most [`MAX_REDIRECTS`] redirects, each to an
/// http(s) URL whose host passes the same checks as the first.
fn get(
    exec: &Executor,
    network: &Network,
    url: &str,
    query: Option<(&str, &str)>,
) -> Result<(String, ureq::http::Response<ureq::Body>), String> {
    let agent = http(exec, network);
    let mut current = url.to_string();
    for _ in 0..=MAX_REDIRECTS {
        let uri: ureq::http::Uri = current
            .parse()
            .map_err(|e| format!("{current} is not a URL I can fetch: {e}"))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) {
            return Err(format!("{current} is not an http or https URL"));
        }
        let host = uri.host().unwrap_or("");
        if let Some(what) = network::non_public_host(host)
            && !network.allows(host, uri.port_u16())
        {
            return Err(format!(
                "{host} is {what}, which agents may not reach; the partner can allow the host in the policy ([network] allow_hosts)"
            ));
        }
        let mut request = agent.get(&current);
        if let Some((key, value)) = query {
            request = request.query(key, value);
        }
        let response = request
            .call()
            .map_err(|e| format!("could not fetch {current}: {e}"))?;
        if !response.status().is_redirection() {
            return Ok((current, response));
        }
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| format!("{current} redirected without saying where"))?;
        current = redirect_target(&uri, location)
            .ok_or_else(|| format!("{current} redirected to '{location}', which I can't follow"))?;
    }
    Err(format!(
        "{url} redirected more than {MAX_REDIRECTS} times, so I stopped"
    ))
}

/// Deepest tag nesting converted to markdown; deeper documents are read as
/// plain text.
const MAX_HTML_DEPTH: usize = 256;

/// How deeply the tags of an HTML document nest, counted cheaply (void and
/// self-closing tags do not nest).
fn html_depth(html: &str) -> usize {
    const VOID: &[&str] = &[
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr", "!doctype", "!--",
    ];
    let (mut depth, mut deepest) = (0usize, 0usize);
    let bytes = html.as_bytes();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'<', &bytes[i..]) {
        let start = i + at + 1;
        let end = memchr::memchr(b'>', &bytes[start..]).map_or(bytes.len(), |e| start + e);
        let tag = &html[start..end.max(start)];
        if tag.starts_with('/') {
            depth = depth.saturating_sub(1);
        } else {
            let name: String = tag
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '/')
                .collect::<String>()
                .to_ascii_lowercase();
            if !name.is_empty() && !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
                depth += 1;
                deepest = deepest.max(depth);
            }
        }
        i = end.min(bytes.len());
        if i >= bytes.len() {
            break;
        }
    }
    deepest
}

/// Text of an HTML document without its tags, for documents too deep to
/// convert.
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// HTML as markdown; a document nested too deeply for that is read as text.
fn html_to_markdown(url: &str, body: &str) -> Result<String, String> {
    if html_depth(body) > MAX_HTML_DEPTH {
        return Ok(strip_tags(body));
    }
    let body = body.to_string();
    crate::isolate::on_big_stack(crate::isolate::BIG_STACK, move || htmd::convert(&body))
        .map_err(|panic| format!("could not read {url}: the converter failed ({panic})"))?
        .map_err(|e| format!("could not turn {url} into markdown: {e}"))
}

/// Reads at most `limit` bytes of a response body.
fn read_body(
    response: &mut ureq::http::Response<ureq::Body>,
    limit: u64,
) -> Result<(String, bool), String> {
    let mut bytes = Vec::new();
    response
        .body_mut()
        .as_reader()
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("the response broke off: {e}"))?;
    let truncated = bytes.len() as u64 > limit;
    bytes.truncate(limit as usize);
    Ok((String::from_utf8_lossy(&bytes).into_owned(), truncated))
}

/// Splits text into pages of about `size` characters, at line ends where possible.
fn paginate(text: &str, size: usize) -> Vec<String> {
    let mut pages = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        if current.chars().count() + line.chars().count() > size && !current.is_empty() {
            pages.push(std::mem::take(&mut current));
        }
        if line.chars().count() > size {
            let chars: Vec<char> = line.chars().collect();
            for chunk in chars.chunks(size) {
                pages.push(chunk.iter().collect());
            }
        } else {
            current.push_str(line);
        }
    }
    if !current.is_empty() || pages.is_empty() {
        pages.push(current);
    }
    pages
}

fn page_effect(url: &str, pages: &[String], index: usize) -> Effect {
    let more = pages.len() - index - 1;
    let tail = if more > 0 {
        format!(
            "\n\n[page {} of {}; /fetch continue for the next]",
            index + 1,
            pages.len()
        )
    } else if pages.len() > 1 {
        format!("\n\n[page {} of {}, the last]", index + 1, pages.len())
    } else {
        String::new()
    };
    Effect::text(format!("{url}:\n{}{tail}", pages[index].trim_end()))
        .with_data(json!({ "url": url, "page": index + 1, "pages": pages.len() }))
        .continued()
}

/// `/fetch URL [html]` and `/fetch continue`.
fn fetch(exec: &Executor, agent: &str, action: &ParsedAction) -> Outcome {
    let store = &exec.fetch_pages().pages;
    if action.op == Some(Op::Continue) && action.target.is_none() {
        let mut pages = store.lock().unwrap_or_else(|e| e.into_inner());
        let Some((url, list, next)) = pages.get_mut(agent) else {
            return Err("there is nothing to continue; /fetch a page first".into());
        };
        if *next >= list.len() {
            return Err(format!("that was the last page of {url}").into());
        }
        let effect = page_effect(url, list, *next);
        *next += 1;
        return Ok(effect);
    }
    let mut url = action.target.clone().ok_or("/fetch needs a URL")?;
    if !url.contains("://") {
        url = format!("https://{url}");
    }
    let config = &exec.config().fetch;
    let (url, mut response) = get(exec, &exec.engine().policy().network, &url, None)?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url} answered {status}").into());
    }
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let textual = content_type.is_empty()
        || content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("xml")
        || content_type.contains("javascript");
    if !textual {
        return Err(format!("{url} is not text ({content_type}), so I can't read it").into());
    }
    let (body, truncated) = read_body(&mut response, config.max_bytes)?;
    let html = content_type.contains("html")
        || (content_type.is_empty() && body.trim_start().starts_with('<'));
    let mut text = if html && action.op != Some(Op::Html) {
        html_to_markdown(&url, &body)?
    } else {
        body
    };
    if truncated {
        text.push_str(&format!("\n\n[cut at {} bytes]", config.max_bytes));
    }
    let pages = paginate(&text, config.page_chars.max(200));
    let effect = page_effect(&url, &pages, 0);
    store
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(agent.to_string(), (url, pages, 1));
    Ok(effect)
}

/// `/web query`.
fn web(exec: &Executor, action: &ParsedAction) -> Outcome {
    let config = exec.config().web.as_ref().ok_or(
        "web search is not configured for this constellation; ask the partner to set a search endpoint",
    )?;
    let query = action
        .content
        .as_deref()
        .ok_or("/web needs something to search for")?;
    // The partner configured the endpoint, so its own host may be local (a
    // SearXNG on this machine); redirects elsewhere are checked as usual.
    let mut network = exec.engine().policy().network.clone();
    if let Ok(uri) = config.endpoint.parse::<ureq::http::Uri>()
        && let Some(authority) = uri.authority()
    {
        network.allow_hosts.push(authority.as_str().to_string());
    }
    let (_, mut response) = get(exec, &network, &config.endpoint, Some(("q", query)))
        .map_err(|e| format!("the web search endpoint did not answer: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("the web search endpoint answered {}", response.status()).into());
    }
    let (body, _) = read_body(&mut response, exec.config().fetch.max_bytes)?;
    let Ok(json) = serde_json::from_str::<Value>(&body) else {
        return Ok(
            Effect::text(format!("web results for \"{query}\":\n{}", body.trim())).continued(),
        );
    };
    let results = json["results"].as_array().cloned().unwrap_or_default();
    if results.is_empty() {
        return Ok(Effect::text(format!("no web results for \"{query}\""))
            .with_data(json)
            .continued());
    }
    let mut text = format!("web results for \"{query}\":");
    for (i, r) in results.iter().take(8).enumerate() {
        let title = r["title"].as_str().unwrap_or("(untitled)");
        let url = r["url"].as_str().unwrap_or("");
        let snippet = ["content", "snippet", "description"]
            .iter()
            .find_map(|k| r[*k].as_str())
            .unwrap_or("");
        text.push_str(&format!("\n{}. {title} — {url}\n   {snippet}", i + 1));
    }
    Ok(Effect::text(text)
        .with_data(json!({ "results": results }))
        .continued())
}

/// The host (and port) a fetch connects to.
fn host_of(action: &ParsedAction) -> Option<(String, Option<u16>)> {
    let target = action.target.as_deref()?;
    let url = if target.contains("://") {
        target.to_string()
    } else {
        format!("https://{target}")
    };
    let uri: ureq::http::Uri = url.parse().ok()?;
    Some((uri.host()?.to_string(), uri.port_u16()))
}

/// `/fetch`: a web page.
struct Fetch;

impl VerbHandler for Fetch {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::External
    }

    fn traits(&self, action: &ParsedAction) -> VerbTraits {
        VerbTraits {
            carries_text: true,
            connects_to: host_of(action),
            ..VerbTraits::default()
        }
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        fetch(cx.exec, &cx.ctx.agent, action)
    }
}

/// `/web`: a web search.
struct Web;

impl VerbHandler for Web {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::External
    }

    fn needs_content(&self) -> bool {
        true
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits {
            carries_text: true,
            ..VerbTraits::default()
        }
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        web(cx.exec, action)
    }
}

pub(super) fn handlers() -> Handlers {
    vec![(Verb::Fetch, Arc::new(Fetch)), (Verb::Web, Arc::new(Web))]
}

#[cfg(test)]
mod tests {
    use super::paginate;

    #[test]
    fn pages_split_at_lines_and_cover_everything() {
        let text = "aaaa\nbbbb\ncccc\n";
        let pages = paginate(text, 10);
        assert_eq!(pages, vec!["aaaa\nbbbb\n", "cccc\n"]);
        assert_eq!(pages.concat(), text);
        let long = "x".repeat(25);
        assert_eq!(paginate(&long, 10).concat(), long);
    }
}
