//! One pass of a turn: stream the reply, parse it, run its actions, and
//! decide whether another pass carries their results.

use std::ops::ControlFlow::{self, Break, Continue};
use std::sync::Arc;

use super::prepare::Turn;
use super::report::{emit_report, wants_continuation};
use super::store::{store_message, try_store_message};
use super::{MAX_TOOL_CALLS, TurnOutcome, failed};
use crate::events::Event;
use crate::prompt::{self, budget};
use crate::provider::{ChatMessage, ChatRequest, PromptKind, StreamEvent, ToolCall};
use partner_dialect::ParsedTurn;
use partner_engine::exec::TurnReport;

/// Where a pass goes next: on, or to the end of the turn with its outcome.
pub(super) type Step<T = ()> = ControlFlow<TurnOutcome, T>;

/// What a pass's reply asks for.
struct Reading {
    parsed: ParsedTurn,
    /// The text the actions are run from (a proposal's own line when the
    /// reply had words but no action).
    run_text: String,
}

impl Turn {
    /// One pass: prompt, stream, parse, act, continue.
    pub(super) async fn pass(&mut self, pass: u32) -> Step {
        let kind = if pass > 1 {
            PromptKind::Continuation
        } else {
            self.kind
        };
        let (reply, calls) = self.stream(pass, kind).await?;
        let (reply, call_errors) = self.finish_reply(pass, reply, &calls).await;
        self.ctx.pass = pass;
        let reading = self.parse(&reply).await?;
        let report = self.act(reading).await?;
        self.carry_on(pass, reply, &report, call_errors).await
    }

    /// The outcome so far, to end the turn with.
    fn end(&mut self) -> TurnOutcome {
        std::mem::take(&mut self.outcome)
    }

    /// The turn was cancelled (the agent was halted).
    fn cancelled(&mut self) -> TurnOutcome {
        self.outcome.cancelled = true;
        self.end()
    }

    /// The turn ends on an error the partner is told of.
    fn crashed(&mut self, message: &str) -> TurnOutcome {
        let told = failed(&self.env, self.name.clone(), message.into());
        TurnOutcome {
            error: told.error,
            ..self.end()
        }
    }

    /// Sends this pass's prompt (storing the incoming message with the
    /// first) and reads the reply as it streams: its text, each token shown
    /// as it comes, and its tool calls.
    async fn stream(&mut self, pass: u32, kind: PromptKind) -> Step<(String, Vec<ToolCall>)> {
        let name = self.name.clone();
        self.env.emit(Event::TurnStarted {
            agent: name.clone(),
            kind,
            pass,
        });
        let (messages, fitted) = self.prompt.next_pass();
        // The incoming message is stored as it was sent, its changing
        // context included: the next turn's request then starts with this
        // one's bytes, and a server's cache reads none of it again.
        if pass == 1
            && let Some(sent) = messages.last()
            && let Err(message) =
                try_store_message(&self.env, &self.ctx, &self.from, &sent.content, self.now).await
        {
            return Break(failed(&self.env, name, message));
        }
        if let Some(fitted) = fitted {
            let budget = self.budget;
            self.env.emit(Event::PromptFitted {
                agent: name.clone(),
                tokens: fitted.tokens,
                budget,
                dropped_messages: fitted.dropped_messages,
                dropped_tokens: fitted.dropped_tokens,
                dropped_recalled: fitted.dropped_recalled,
                summary: format!(
                    "{name}'s prompt was fitted to its budget of {budget} tokens: {}",
                    fitted.summary(budget)
                ),
            });
        }
        let sent_estimate = budget::prompt_tokens(&self.prompt.system, &messages);
        let request = ChatRequest {
            agent: name.clone(),
            model: self.agent.model.clone(),
            kind,
            from: (kind == PromptKind::Response).then(|| self.sender.clone()),
            system: self.prompt.system.clone(),
            messages,
            max_tokens: self.max_tokens,
            sampling: self.agent.settings.sampling.clone(),
            tools: self.tools.clone(),
        };
        let rx = self.agent.provider.stream(request, self.cancel.clone());
        let read = self.read_stream(rx, sent_estimate).await;
        if *self.cancel.borrow() {
            return Break(self.cancelled());
        }
        match read {
            Ok(reply) => Continue(reply),
            Err(message) => {
                self.env.emit(Event::TurnFailed {
                    agent: name.clone(),
                    pass,
                    message: format!(
                        "{name}'s model call failed ({}): {message}",
                        self.agent.provider.describe(&self.agent.model)
                    ),
                });
                self.outcome.error = Some(message);
                Break(self.end())
            }
        }
    }

    /// The reply's text and tool calls as the model streams them, until
    /// it finishes, fails, grows past its bound or the turn is cancelled.
    async fn read_stream(
        &self,
        mut rx: tokio::sync::mpsc::Receiver<StreamEvent>,
        sent_estimate: usize,
    ) -> Result<(String, Vec<ToolCall>), String> {
        let mut cancel = self.cancel.clone();
        let mut reply = String::new();
        let mut calls = Vec::new();
        loop {
            tokio::select! {
                event = rx.recv() => match event {
                    Some(StreamEvent::Token(t)) => {
                        if reply.len() + t.len() > self.env.max_reply_bytes {
                            // Dropping the stream stops the provider.
                            return Err(format!(
                                "the reply grew past {} bytes, so it was cut off and none of its actions ran",
                                self.env.max_reply_bytes
                            ));
                        }
                        self.env.emit(Event::Token { agent: self.name.clone(), text: t.clone() });
                        reply.push_str(&t);
                    }
                    Some(StreamEvent::Tool(call)) => {
                        if calls.len() < MAX_TOOL_CALLS {
                            calls.push(call);
                        }
                    }
                    Some(StreamEvent::Usage { input, .. }) => {
                        self.agent.tokens.learn(input, sent_estimate);
                    }
                    Some(StreamEvent::Done) => return Ok((reply, calls)),
                    Some(StreamEvent::Error(e)) => return Err(e.to_string()),
                    None => return Err("the model stopped without finishing".to_string()),
                },
                _ = cancel.wait_for(|c| *c) => return Err("cancelled".to_string()),
            }
        }
    }

    /// The reply as stored and shown: tool calls become dialect lines at
    /// its end, so it says exactly what the model asked for; the calls
    /// that could not become lines, as errors for the model.
    async fn finish_reply(
        &self,
        pass: u32,
        mut reply: String,
        calls: &[ToolCall],
    ) -> (String, Vec<String>) {
        let mut call_errors = Vec::new();
        for call in calls {
            match crate::tools::call_to_line(call, &self.tools) {
                Ok(line) => {
                    if !reply.is_empty() && !reply.ends_with('\n') {
                        reply.push('\n');
                    }
                    reply.push_str(&line);
                    reply.push('\n');
                }
                Err(e) => call_errors.push(e),
            }
        }
        store_message(&self.env, &self.ctx, "assistant", &reply).await;
        self.env.emit(Event::ReplyFinished {
            agent: self.name.clone(),
            pass,
            text: reply.clone(),
        });
        (reply, call_errors)
    }

    /// The reply's actions, parsed off the async workers (echoes of the
    /// instructions set aside; words without an action proposed as one),
    /// each shown as parsed.
    async fn parse(&mut self, reply: &str) -> Step<Reading> {
        let executor = Arc::clone(&self.env.executor);
        let (text, parse_for) = (reply.to_string(), self.name.clone());
        let usable: Vec<String> = self
            .verbs
            .iter()
            .map(|v| v.verb.name().to_string())
            .collect();
        let instructions = self.instructions.clone();
        let Ok(parsed) = tokio::task::spawn_blocking(move || {
            executor
                .parser_for(&parse_for)
                .with_echoes(prompt::example_lines().map(str::to_string))
                .with_prompt_echoes(&instructions)
                .with_usable_verbs(usable)
                .parse(&text)
        })
        .await
        else {
            return Break(self.crashed("reading the reply crashed"));
        };
        for span in &parsed.echoes {
            self.env.emit(Event::EchoIgnored {
                agent: self.name.clone(),
                span: *span,
                text: span.slice(reply).trim().chars().take(500).collect(),
            });
        }
        let reading = match self.propose(reply, &parsed).await {
            Some((reading, action)) => {
                self.show_parsed(reply, &reading.parsed, Some(&action));
                reading
            }
            None => {
                self.show_parsed(reply, &parsed, None);
                Reading {
                    parsed,
                    run_text: reply.to_string(),
                }
            }
        };
        Continue(reading)
    }

    /// Words without an action may still mean one: the action proposed
    /// for them, which waits for the partner (`?ask`) whatever the policy
    /// says.
    async fn propose(&self, reply: &str, parsed: &ParsedTurn) -> Option<(Reading, String)> {
        if !parsed.actions.is_empty() || !parsed.errors.is_empty() {
            return None;
        }
        let action = self.env.proposer.get()?.propose(reply)?;
        let line = format!("{action} ?ask");
        let executor = Arc::clone(&self.env.executor);
        let (parse_for, text) = (self.name.clone(), line.clone());
        let p = tokio::task::spawn_blocking(move || executor.parser_for(&parse_for).parse(&text))
            .await
            .ok()?;
        let one = p.errors.is_empty() && p.actions.len() == 1;
        let reading = Reading {
            parsed: p,
            run_text: line,
        };
        one.then_some((reading, action))
    }

    /// Shows each parsed action (and the proposal it came from) and each
    /// line that could not be read.
    fn show_parsed(&self, reply: &str, parsed: &ParsedTurn, proposed: Option<&String>) {
        let name = &self.name;
        for action in &parsed.actions {
            for link in action.all_links() {
                let action_id = self.ctx.action_id(link).unwrap_or_default();
                self.env.emit(Event::ActionParsed {
                    agent: name.clone(),
                    action_id: action_id.clone(),
                    verb: link.verb.clone(),
                    op: link.op,
                    canonical: link.canonical().lines().next().unwrap_or("").to_string(),
                    // A proposal is not in the reply's text.
                    span: if proposed.is_some() {
                        partner_dialect::Span::new(reply.len(), reply.len())
                    } else {
                        link.span
                    },
                    cancelled: link.cancelled,
                });
                if let Some(action) = proposed {
                    self.env.emit(Event::ActionProposed {
                        agent: name.clone(),
                        action_id,
                        words: crate::proposals::words_shown(reply),
                        action: action.clone(),
                    });
                }
            }
        }
        for error in &parsed.errors {
            self.env.emit(Event::ParseFailed {
                agent: name.clone(),
                span: error.span,
                message: error.message(),
            });
        }
    }

    /// Runs the pass's actions off the async workers and reports each;
    /// the requests they left wait, and their authorities hear of them now.
    async fn act(&mut self, reading: Reading) -> Step<TurnReport> {
        let executor = Arc::clone(&self.env.executor);
        let mut run_ctx = self.ctx.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let report = executor.run_parsed(&mut run_ctx, &reading.run_text, &reading.parsed);
            (report, run_ctx)
        })
        .await;
        let Ok((report, ctx)) = joined else {
            return Break(self.crashed("running the actions crashed"));
        };
        self.ctx = ctx;
        let asked = self.outcome.requests.len();
        for r in &report.actions {
            emit_report(&self.env, r, &mut self.outcome.requests);
        }
        if self.outcome.requests.len() > asked {
            // Their authorities hear of them now, not when the turn ends.
            self.env.requests.notify_one();
        }
        Continue(report)
    }

    /// Whether the turn goes on: another pass carries the results when an
    /// action's result should be seen or part of the reply could not be
    /// read, up to the turn's cap.
    async fn carry_on(
        &mut self,
        pass: u32,
        reply: String,
        report: &TurnReport,
        call_errors: Vec<String>,
    ) -> Step {
        let mut errors = report
            .errors
            .iter()
            .map(|e| e.message())
            .chain(call_errors)
            .collect::<Vec<_>>();
        if *self.cancel.borrow() {
            return Break(self.cancelled());
        }
        if !wants_continuation(&report.actions) && errors.is_empty() {
            return Break(self.end());
        }
        if pass == self.env.max_passes {
            let message = format!(
                "{} stopped after {} passes in one turn",
                self.name, self.env.max_passes
            );
            return Break(self.crashed(&message));
        }
        let mut results = prompt::results_message(&report.actions);
        if !errors.is_empty() {
            errors.insert(0, "Some of your actions could not be read:".into());
            results = format!("{results}\n\n{}", errors.join("\n  "));
        }
        store_message(&self.env, &self.ctx, "user", &results).await;
        self.prompt.push(ChatMessage::assistant(reply));
        self.prompt.push(ChatMessage::user(results));
        Continue(())
    }
}
