//! The queue as the console reads it: each waiting request with the
//! memory change it would make (a diff) and the command it would run,
//! judged here — where the executor would run it — never on the console's
//! machine.

use partner_engine::exec::Executor;
use partner_gate::sandbox;
use partner_gate::{Scene, assess_in};
use partner_policy::PendingRequest;
use partner_protocol::Answer;
use partner_protocol::views::{self, CommandPreview, DATA_BUDGET, Queue};
use partner_store::memory::blocks;

/// The memory change a request would make, as a diff (memory writes only):
/// the verb registry says which block it writes and what it would leave.
fn preview(executor: &Executor, request: &PendingRequest) -> Option<String> {
    let action = executor.request_action(request)?;
    let handler = executor.registry().handler(&action.verb)?;
    let write = handler.traits(&action).writes_block?;
    let block = executor
        .store()
        .read(|tx| tx.block(&request.agent, &write.label))
        .ok()??;
    let new = handler.preview(&action, &block)?;
    Some(blocks::diff(
        &write.label,
        &block.value,
        &new,
        block.version,
        block.version + 1,
    ))
}

/// Where a request's command would run: the working directory its
/// handler recorded, with this process's home and the partner's own
/// files protected.
fn scene_of(executor: &Executor, r: &PendingRequest) -> Scene {
    let dir = r.action.workdir.as_deref().map(std::path::Path::new);
    executor
        .shell_scene(dir)
        .unwrap_or_else(|_| Scene::current())
}

/// A request's command judged here, where the executor would run it: its
/// risk, and how it would run — as the process that asked said in the
/// request's reason (`sandbox: …`, `PARTLY SANDBOXED (…)`, `NOT
/// SANDBOXED: …` or `NOT RUNNABLE HERE: …`, written before any ` | `
/// proposal), this process's walls only for a reason without.
fn judge_command(executor: &Executor, r: &PendingRequest, line: String) -> CommandPreview {
    let scene = scene_of(executor, r);
    let head = r.reason.split(" | ").next().unwrap_or("");
    let sandbox = sandbox::read_description(head).unwrap_or_else(|| {
        let described = sandbox::describe(&line, &scene);
        sandbox::read_description(&described).unwrap_or(Err(described))
    });
    CommandPreview {
        assessment: assess_in(&line, &scene),
        line,
        sandbox,
    }
}

/// One request with what it would change and run, and what it asks
/// field by field.
type Entry = (
    PendingRequest,
    Option<String>,
    Option<CommandPreview>,
    Vec<(String, String)>,
);

/// The waiting requests, oldest first, as many as fit one answer.
pub fn answer(executor: &Executor) -> Result<Answer, String> {
    let pending = executor
        .pending()
        .map_err(|e| format!("could not read the queue: {e}"))?;
    let entries: Vec<Entry> = pending
        .into_iter()
        .map(|r| {
            let diff = preview(executor, &r);
            let command = executor
                .request_command(&r)
                .map(|line| judge_command(executor, &r, line));
            let fields = executor.request_fields(&r);
            (r, diff, command, fields)
        })
        .collect();
    let fitted = views::fit_list(entries, DATA_BUDGET);
    let mut queue = Queue {
        left_out: fitted.left_out,
        ..Queue::default()
    };
    for (request, diff, command, fields) in fitted.items {
        if !fields.is_empty() {
            queue.previews.fields.insert(request.id.clone(), fields);
        }
        if let Some(diff) = diff {
            queue.previews.diffs.insert(request.id.clone(), diff);
        }
        if let Some(command) = command {
            queue.previews.commands.insert(request.id.clone(), command);
        }
        queue.requests.push(request);
    }
    let message = format!("{} waiting", queue.requests.len());
    Ok(Answer {
        message,
        data: partner_protocol::Returned::Queue(queue),
    })
}
