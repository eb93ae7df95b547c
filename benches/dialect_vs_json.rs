//! Dialect parsing against the JSON tool calls it replaces, in one run.
//!
//! The corpus is realistic agent turns (prose with actions). The JSON side
//! is the same turns as OpenAI-style assistant messages: the prose as
//! `content` and every action as a `tool_calls` entry whose `arguments` is a
//! JSON string, built from the parsed actions so both carry the same
//! information. Timing the JSON side covers what a client does with a tool
//! call: parse the message, then parse each `arguments` string into a typed
//! value. After the run the bench prints the ratio of the medians.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group};
use partner::dialect::{BlockRegistry, ContextEdit, DialectParser, Due, ParsedAction, SegmentKind};
use serde::{Deserialize, Serialize};

const CORPUS: &str = include_str!("corpus/turns.txt");

#[derive(Serialize, Deserialize)]
struct AssistantMessage {
    role: String,
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
}

#[derive(Serialize, Deserialize)]
struct ToolCall {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    function: FunctionCall,
}

#[derive(Serialize, Deserialize)]
struct FunctionCall {
    name: String,
    arguments: String,
}

/// The typed arguments a tool-calling client would decode.
#[derive(Serialize, Deserialize)]
struct ToolArguments {
    #[serde(skip_serializing_if = "Option::is_none")]
    op: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permission: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    domain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    when: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    old: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    then: Vec<ToolArgumentsCall>,
}

#[derive(Serialize, Deserialize)]
struct ToolArgumentsCall {
    name: String,
    arguments: ToolArguments,
}

fn arguments_of(action: &ParsedAction) -> ToolArguments {
    ToolArguments {
        op: action.op.map(|o| o.as_str().to_string()),
        target: action.target.clone(),
        content: action.content.clone(),
        permission: action.marker.map(|m| m.sigil().to_string()),
        domain: action.domain().map(str::to_string),
        when: action.args.get::<Due>().map(|due| due.when.clone()),
        old: action
            .args
            .get::<ContextEdit>()
            .and_then(|edit| edit.old.clone()),
        then: action
            .chain
            .iter()
            .chain(&action.batch)
            .map(|link| ToolArgumentsCall {
                name: link.verb.name().to_string(),
                arguments: arguments_of(link),
            })
            .collect(),
    }
}

fn parser() -> DialectParser {
    let mut blocks = BlockRegistry::new();
    for label in ["project_notes", "meeting_notes"] {
        blocks.add(label, false);
    }
    for label in ["persona", "human"] {
        blocks.add(label, true);
    }
    DialectParser::new().with_blocks(blocks)
}

fn corpus() -> (Vec<&'static str>, Vec<String>, usize) {
    let parser = parser();
    let turns: Vec<&str> = CORPUS.split("\n=====\n").collect();
    let mut messages = Vec::new();
    let mut actions = 0;
    for turn in &turns {
        let parsed = parser.parse(turn);
        assert!(
            parsed.errors.is_empty(),
            "corpus turn fails: {turn}\n{:?}",
            parsed.errors
        );
        actions += parsed.actions.len();
        let prose: String = parsed
            .segments
            .iter()
            .filter(|s| s.kind == SegmentKind::Prose)
            .map(|s| s.span.slice(turn))
            .collect();
        let message = AssistantMessage {
            role: "assistant".into(),
            content: Some(prose),
            tool_calls: parsed
                .actions
                .iter()
                .enumerate()
                .map(|(i, a)| ToolCall {
                    id: format!("call_{i:04}"),
                    kind: "function".into(),
                    function: FunctionCall {
                        name: a.verb.name().to_string(),
                        arguments: serde_json::to_string(&arguments_of(a)).unwrap(),
                    },
                })
                .collect(),
        };
        messages.push(serde_json::to_string(&message).unwrap());
    }
    (turns, messages, actions)
}

fn bench(c: &mut Criterion) {
    let (turns, messages, actions) = corpus();
    let parser = parser();
    let mut group = c.benchmark_group("dialect_vs_json");
    group.throughput(Throughput::Elements(actions as u64));
    group.bench_function("dialect", |b| {
        b.iter(|| {
            for turn in &turns {
                black_box(parser.parse(black_box(turn)));
            }
        })
    });
    group.bench_function("json_tool_calls", |b| {
        b.iter(|| {
            for message in &messages {
                let parsed: AssistantMessage = serde_json::from_str(black_box(message)).unwrap();
                for call in &parsed.tool_calls {
                    let args: ToolArguments =
                        serde_json::from_str(&call.function.arguments).unwrap();
                    black_box(args);
                }
                black_box(parsed);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);

/// Reads the median of one benchmark from criterion's saved estimates.
fn median_ns(name: &str) -> Option<f64> {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| std::path::PathBuf::from("target"), Into::into);
    let path = dir
        .join("criterion/dialect_vs_json")
        .join(name)
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    let (turns, _, actions) = corpus();
    if let (Some(dialect), Some(json)) = (median_ns("dialect"), median_ns("json_tool_calls")) {
        println!(
            "corpus: {} turns, {} actions; median per action: dialect {:.0} ns, JSON tool call {:.0} ns; ratio dialect/JSON = {:.2}",
            turns.len(),
            actions,
            dialect / actions as f64,
            json / actions as f64,
            dialect / json
        );
    }
}
