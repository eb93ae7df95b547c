//! `/fetch` (HTTP GET with a timeout and size cap, HTML converted to
//! markdown, long pages split for `/fetch continue`) and `/web` (a
//! configured search endpoint). Both connect only to public addresses,
//! checked on every resolved address and every redirect, unless the policy
//! allows a host; no proxy from the environment is used.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::Effect;
use crate::exec::registry::{ActionError, Cancel, Cx, Outcome, Stage, VerbHandler};
use crate::net::{GuardedGet, get_public, read_limited};
use partner_dialect::{ActionOp, ParsedAction};
use partner_policy::{Network, VerbTraits};

/// One agent's last fetched page: its URL, its pages and the next to show.
type FetchedPage = (String, Vec<String>, usize);

/// The rest of each agent's last fetched page, for `/fetch continue`.
#[derive(Debug, Default)]
pub(crate) struct FetchPages {
    pages: Mutex<HashMap<String, FetchedPage>>,
}

/// What a GET brought back: the final URL, its status, its content type
/// (lower case) and at most the body limit of its body (cut when the flag
/// is set).
struct Fetched {
    url: String,
    status: reqwest::StatusCode,
    content_type: String,
    body: String,
    truncated: bool,
}

/// GETs `get` on partner's network runtime (see [`crate::net::run`]),
/// reading at most `limit` bytes of the body; a halt of the agent (`cancel`)
/// stops it at once and closes the connection.
fn fetch_url(
    get: GuardedGet,
    limit: usize,
    cancel: Option<&Cancel>,
) -> Result<Fetched, ActionError> {
    let work = async move {
        let (url, mut response) = get_public(get).await?;
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let (body, truncated) = if status.is_success() {
            read_limited(&mut response, limit).await.map_err(|e| {
                format!(
                    "the response from {url} broke off: {}",
                    crate::net::error_chain(&e)
                )
            })?
        } else {
            (Vec::new(), false)
        };
        Ok::<_, String>(Fetched {
            url,
            status,
            content_type,
            body: String::from_utf8_lossy(&body).into_owned(),
            truncated,
        })
    };
    match crate::net::run(work, cancel.cloned()) {
        Ok(fetched) => fetched.map_err(ActionError::Agent),
        Err(crate::net::Interrupted::Cancelled) => Err(ActionError::Agent(
            "the fetch was stopped: the agent was halted".into(),
        )),
        Err(other) => Err(ActionError::System(other.to_string())),
    }
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
    partner_core::isolate::on_big_stack(partner_core::isolate::BIG_STACK, move || {
        htmd::convert(&body)
    })
    .map_err(|panic| format!("could not read {url}: the converter failed ({panic})"))?
    .map_err(|e| format!("could not turn {url} into markdown: {e}"))
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
fn fetch(cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
    let (exec, agent) = (cx.exec, cx.ctx.agent.as_str());
    let store = &exec.fetch_pages().pages;
    if action.op == Some(ActionOp::Continue) && action.target.is_none() {
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
    let get = GuardedGet {
        url,
        query: None,
        network: exec.engine().policy().network.clone(),
        timeout: config.timeout,
    };
    let fetched = fetch_url(get, limit_of(config.max_bytes), cx.cancel)?;
    let Fetched {
        url,
        status,
        content_type,
        body,
        truncated,
    } = fetched;
    if !status.is_success() {
        return Err(format!("{url} answered {status}").into());
    }
    let textual = content_type.is_empty()
        || content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("xml")
        || content_type.contains("javascript");
    if !textual {
        return Err(format!("{url} is not text ({content_type}), so I can't read it").into());
    }
    let html = content_type.contains("html")
        || (content_type.is_empty() && body.trim_start().starts_with('<'));
    let mut text = if html && action.op != Some(ActionOp::Html) {
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

/// A byte limit from the configuration, as a size this machine can hold.
fn limit_of(max_bytes: u64) -> usize {
    usize::try_from(max_bytes).unwrap_or(usize::MAX)
}

/// `/web query`.
fn web(cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
    let exec = cx.exec;
    let config = exec.config().web.as_ref().ok_or(
        "web search is not configured for this constellation; ask the partner to set a search endpoint",
    )?;
    let query = action
        .content
        .as_deref()
        .ok_or("/web needs something to search for")?;
    // The partner configured the endpoint, so its own host may be local (a
    // SearXNG on this machine); redirects elsewhere are checked as usual.
    let mut network: Network = exec.engine().policy().network.clone();
    if let Ok(url) = reqwest::Url::parse(&config.endpoint)
        && let Some(host) = url.host_str()
    {
        network.allow_hosts.push(match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        });
    }
    let get = GuardedGet {
        url: config.endpoint.clone(),
        query: Some(("q".into(), query.to_string())),
        network,
        timeout: exec.config().fetch.timeout,
    };
    let fetched = fetch_url(get, limit_of(exec.config().fetch.max_bytes), cx.cancel).map_err(
        |e| match e {
            ActionError::Agent(m) => {
                ActionError::Agent(format!("the web search endpoint did not answer: {m}"))
            }
            system => system,
        },
    )?;
    if !fetched.status.is_success() {
        return Err(format!("the web search endpoint answered {}", fetched.status).into());
    }
    let body = fetched.body;
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
    let url = reqwest::Url::parse(&url).ok()?;
    Some((url.host_str()?.to_string(), url.port()))
}

/// `/fetch`: a web page.
pub(super) struct Fetch;

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
        fetch(cx, action)
    }
}

/// `/web`: a web search.
pub(super) struct Web;

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
        web(cx, action)
    }
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
