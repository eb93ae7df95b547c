//! The runtime's answers to its handle's commands: messages, decisions
//! (each a task of its own), pulses, halts and resumes, status.

use super::*;
use partner_protocol::report::ActionReport;
use partner_store::memory::inbox::Settled;

impl Runtime {
    pub(super) fn command(&mut self, command: Command) {
        match command {
            Command::Message { agent, text, ack } => self.message(agent, text, ack),
            Command::Decide {
                id,
                decision,
                by,
                reply,
            } => self.decide(id, decision, by, reply),
            Command::SetPulse {
                agent,
                interval,
                ack,
            } => self.set_pulse(agent, interval, ack),
            Command::PulseNow { agent, ack } if !self.runs(&agent) => {
                let host = self.slots.get(&agent).and_then(|s| s.host.clone());
                let _ = acked(
                    ack,
                    Err(format!(
                        "{agent} runs on {}: pulse it through that daemon",
                        host.as_deref().unwrap_or("another daemon")
                    )),
                );
            }
            Command::PulseNow { agent, ack } => {
                let interval = self.slots.get(&agent).map_or(Duration::ZERO, |s| s.pulse);
                self.emit(Event::PulseFired {
                    agent: agent.clone(),
                    reason: "the partner".into(),
                });
                self.push(
                    &agent,
                    Trigger::Pulse {
                        interval,
                        reason: "the partner asked".into(),
                    },
                );
                let _ = acked(ack, Ok(()));
            }
            Command::Halt { agent, reason, ack } => {
                self.halt(&agent, &reason);
                let now = self.env.clock.now_ms();
                self.write(move |ex| {
                    let stored = ex
                        .store()
                        .transaction(|tx| tx.set_halted(&agent, true, Some(&reason), now))
                        .map_err(|e| format!("could not store that {agent} is halted: {e}"));
                    acked(ack, stored)
                });
            }
            Command::Resume { agent, ack } => self.resume(agent, ack),
            Command::Status { reply } => {
                let _ = reply.send(self.status());
            }
            Command::Sync => self.request_sync(),
            Command::Shutdown => {}
        }
    }

    /// The partner's message to `agent`: kept in its inbox (acknowledged
    /// once committed), then answered by whoever runs the agent — here at
    /// once, or the daemon of the team that holds it.
    fn message(&mut self, agent: String, text: String, ack: Ack) {
        if !self.slots.contains_key(&agent) {
            let message = format!("there is no agent named {agent}");
            self.emit(Event::Error {
                agent: None,
                message: message.clone(),
            });
            let _ = acked(ack, Err(message));
            return;
        }
        if !self.runs(&agent) {
            // Shown here, where it was sent; the daemon that runs the
            // agent shows it too as it takes it up.
            self.emit(Event::MessageReceived {
                agent: agent.clone(),
                from: "partner".into(),
                text: text.clone(),
            });
        }
        self.write_then(move |ex| match super::listen::deliver(ex, &agent, &text) {
            Ok(()) => {
                let _ = acked(ack, Ok(()));
                Ok(Some(Done::Delivered(agent)))
            }
            Err(e) => acked(ack, Err(e)).map(|()| None),
        });
    }

    /// The partner's decision, on a task of its own: a slow effect (a
    /// fetch to a server that does not answer) holds up nothing else, and
    /// halting the agent that asked cancels it.
    fn decide(
        &mut self,
        id: String,
        decision: Decision,
        by: Authority,
        reply: oneshot::Sender<Result<ActionReport, String>>,
    ) {
        let executor = Arc::clone(&self.env.executor);
        let effects = Arc::clone(&self.effects);
        self.work.spawn_blocking(move || {
            let cancel = executor.requester_of(&id).and_then(|agent| {
                effects
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&agent)
                    .map(watch::Sender::subscribe)
            });
            let answer = partner_core::isolate::contain(|| {
                executor
                    .decide(&id, decision, &by, cancel)
                    .map_err(|e| e.to_string())
            })
            .unwrap_or_else(|panic| {
                Err(format!(
                    "deciding {id} stopped on an internal error: {panic}"
                ))
            });
            let _ = reply.send(answer);
            Done::Decided
        });
    }

    /// A new pulse interval for `agent`, stored.
    fn set_pulse(&mut self, agent: String, interval: Duration, ack: Ack) {
        // Whatever path it came by, an interval is at most the longest
        // span partner accepts (no time arithmetic overflows).
        let interval = interval.min(partner_core::clock::MAX_SPAN);
        if let Some(slot) = self.slots.get_mut(&agent) {
            slot.pulse = interval;
            slot.idle_since = Instant::now();
        }
        self.announce_state(&agent);
        let now = self.env.clock.now_ms();
        self.write(move |ex| {
            let secs = interval.as_secs() as i64;
            let stored = ex
                .store()
                .transaction(|tx| tx.set_pulse(&agent, secs, now))
                .map_err(|e| format!("could not store {agent}'s pulse: {e}"));
            acked(ack, stored)
        });
    }

    /// A halted agent may run again; stored.
    fn resume(&mut self, agent: String, ack: Ack) {
        if let Some(slot) = self.slots.get(&agent)
            && slot.state == RunState::Halted
        {
            self.effects
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(agent.clone(), watch::channel(false).0);
            let next = if slot.waiting.is_empty() {
                RunState::Idle
            } else {
                RunState::Waiting
            };
            self.set_state(&agent, next);
        }
        self.write(move |ex| acked(ack, ex.resume(&agent).map_err(|e| e.to_string())));
    }

    /// Every agent's state, and its next pulse when idle with one.
    fn status(&self) -> Vec<AgentStatus> {
        let now = Instant::now();
        self.slots
            .iter()
            .map(|(name, s)| AgentStatus {
                name: name.clone(),
                state: s.state,
                next_pulse: (s.state == RunState::Idle && !s.pulse.is_zero())
                    .then(|| (s.idle_since + s.pulse).saturating_duration_since(now)),
                waiting: s.waiting.iter().cloned().collect(),
                host: s.host.clone(),
            })
            .collect()
    }

    pub(super) fn halt(&mut self, agent: &str, reason: &str) {
        let Some(slot) = self.slots.get_mut(agent) else {
            return;
        };
        // Halted or run by another daemon (which reads the halt from the
        // store at its next sweep): nothing runs here to stop.
        if matches!(slot.state, RunState::Halted | RunState::Elsewhere) {
            return;
        }
        if let Some(cancel) = slot.cancel.take() {
            let _ = cancel.send(true);
        }
        if let Some(effects) = self
            .effects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(agent)
        {
            let _ = effects.send(true);
        }
        slot.mailbox.clear();
        // What it was sent and had not answered is dropped with the
        // halt, in the store too (a daemon taking it over later does not
        // answer it either); what is sent from now on waits for a resume.
        let dropped: Vec<i64> = slot.queued.iter().copied().collect();
        self.report(
            agent,
            super::notices::Failure {
                kind: partner_protocol::TeamNoticeKind::Halted,
                cause: reason.to_string(),
                provider: None,
            },
        );
        self.set_state(agent, RunState::Halted);
        self.emit(Event::AgentHalted {
            agent: agent.to_string(),
            reason: reason.to_string(),
        });
        if !dropped.is_empty() {
            let now = self.env.clock.now_ms();
            self.write(move |ex| {
                ex.store()
                    .transaction(|tx| {
                        for id in &dropped {
                            tx.settle(*id, Settled::Halted, now)?;
                        }
                        Ok(())
                    })
                    .map_err(|e: partner_store::memory::MemoryError| {
                        format!("could not drop the messages the halt left unanswered: {e}")
                    })
            });
        }
    }
}
