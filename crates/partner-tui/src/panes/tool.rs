//! How the trace shows a Pattern Lisp tool run: the tool and its
//! arguments, the states it read and returned (their size, and both in
//! Gram), and the memory writes it asked for — each of which follows in
//! the trace as the agent's own `/recall` action.

use ratatui::text::{Line, Span};

use crate::theme::Theme;
use partner_protocol::wire::TraceRecord;

fn nodes(count: &serde_json::Value) -> String {
    count
        .as_u64()
        .map_or_else(|| "?".to_string(), |n| n.to_string())
}

/// The lines describing a tool run (none for other records).
pub(super) fn detail(theme: &Theme, r: &TraceRecord) -> Vec<Line<'static>> {
    let tool = &r.data["tool"];
    let Some(name) = tool["name"].as_str() else {
        return Vec::new();
    };
    let label = |text: &str| Span::styled(format!("{text:<9}"), theme.style("ui.dim"));
    let text = |t: String| Span::styled(t, theme.style("ui.text"));
    let args = tool["args"].as_str().unwrap_or("");
    let mut lines = vec![Line::from(vec![
        label("tool"),
        text(if args.is_empty() {
            name.to_string()
        } else {
            format!("{name} {args}")
        }),
    ])];
    if let Some(why) = tool["unavailable"].as_str() {
        lines.push(Line::from(vec![label("problem"), text(why.to_string())]));
        return lines;
    }
    let writes: Vec<String> = tool["changes"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|c| {
                    c.get("Write")
                        .map(|w| format!("{} (patch)", w["label"].as_str().unwrap_or("?")))
                        .or_else(|| {
                            c.get("Create")
                                .map(|w| format!("{} (new)", w["label"].as_str().unwrap_or("?")))
                        })
                })
                .collect()
        })
        .unwrap_or_default();
    lines.push(Line::from(vec![
        label("state"),
        text(format!(
            "{} nodes in → {} out; writes: {}",
            nodes(&tool["input_nodes"]),
            nodes(&tool["output_nodes"]),
            if writes.is_empty() {
                "none".to_string()
            } else {
                writes.join(", ")
            }
        )),
    ]));
    for key in ["input", "output"] {
        if let Some(gram) = tool[key].as_str() {
            lines.push(Line::from(vec![label(key), text(gram.replace('\n', " "))]));
        }
    }
    lines
}
