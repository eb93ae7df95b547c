//! `/fetch` (HTTP GET with a timeout and size cap, HTML converted to
//! markdown, long pages split for `/fetch continue`) and `/web` (a
//! configured search endpoint).

use std::collections::HashMap;
use std::io::Read;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::{Effect, Outcome};
use crate::dialect::{Op, ParsedAction};
use crate::exec::executor::Executor;

/// One agent's last fetched page: its URL, its pages and the next to show.
type FetchedPage = (String, Vec<String>, usize);

/// The rest of each agent's last fetched page, for `/fetch continue`.
#[derive(Debug, Default)]
pub(crate) struct FetchPages {
    pages: Mutex<HashMap<String, FetchedPage>>,
}

fn http(exec: &Executor) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(exec.config().fetch.timeout))
        .http_status_as_error(false)
        .user_agent(concat!("partner/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
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
pub(super) fn fetch(exec: &Executor, agent: &str, action: &ParsedAction) -> Outcome {
    let store = &exec.fetch_pages().pages;
    if action.op == Some(Op::Continue) && action.target.is_none() {
        let mut pages = store.lock().unwrap_or_else(|e| e.into_inner());
        let Some((url, list, next)) = pages.get_mut(agent) else {
            return Err("there is nothing to continue; /fetch a page first".into());
        };
        if *next >= list.len() {
            return Err(format!("that was the last page of {url}"));
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
    let mut response = http(exec)
        .get(&url)
        .call()
        .map_err(|e| format!("could not fetch {url}: {e}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url} answered {status}"));
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
        return Err(format!(
            "{url} is not text ({content_type}), so I can't read it"
        ));
    }
    let (body, truncated) = read_body(&mut response, config.max_bytes)?;
    let html = content_type.contains("html")
        || (content_type.is_empty() && body.trim_start().starts_with('<'));
    let mut text = if html && action.op != Some(Op::Html) {
        htmd::convert(&body).map_err(|e| format!("could not turn {url} into markdown: {e}"))?
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
pub(super) fn web(exec: &Executor, action: &ParsedAction) -> Outcome {
    let config = exec.config().web.as_ref().ok_or(
        "web search is not configured for this constellation; ask the partner to set a search endpoint",
    )?;
    let query = action
        .content
        .as_deref()
        .ok_or("/web needs something to search for")?;
    let mut response = http(exec)
        .get(&config.endpoint)
        .query("q", query)
        .call()
        .map_err(|e| format!("the web search endpoint did not answer: {e}"))?;
    if !response.status().is_success() {
        return Err(format!(
            "the web search endpoint answered {}",
            response.status()
        ));
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
