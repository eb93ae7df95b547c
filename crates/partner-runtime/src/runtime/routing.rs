//! What the runtime does with what comes back: a turn's end, what a sync
//! found in the database (decisions to route, requests to announce, messages,
//! halts, pulses), the timer's tick and the sweep's findings.

use super::*;

impl Runtime {
    pub(super) fn turn_done(&mut self, agent: &str, outcome: TurnOutcome) {
        let halted_now = self
            .slots
            .get(agent)
            .is_some_and(|s| s.state == RunState::Halted);
        if let Some(cause) = &outcome.error
            && !outcome.cancelled
        {
            let provider = self
                .slots
                .get(agent)
                .map(|s| s.info.provider.describe(&s.info.model));
            self.report(
                agent,
                super::notices::Failure {
                    kind: partner_protocol::TeamNoticeKind::TurnFailed,
                    cause: cause.clone(),
                    provider,
                },
            );
        }
        if let Some(slot) = self.slots.get_mut(agent) {
            slot.cancel = None;
            slot.answering = None;
            // What the turn left waiting; the sync that follows corrects it
            // with what was decided meanwhile.
            slot.waiting
                .extend(outcome.requests.iter().map(|r| r.id.clone()));
        }
        if !halted_now {
            let waiting = self.slots.get(agent).is_some_and(|s| !s.waiting.is_empty());
            self.set_state(
                agent,
                if waiting {
                    RunState::Waiting
                } else {
                    RunState::Idle
                },
            );
        }
        self.request_sync();
    }

    /// Starts a sync with the database, unless one runs (then another
    /// follows it).
    pub(super) fn request_sync(&mut self) {
        if self.syncing {
            self.sync_again = true;
            return;
        }
        self.syncing = true;
        self.sync_again = false;
        self.sync_started_at = self.writes_asked;
        // Only the agents run here: another daemon routes to its own.
        let agents: Vec<String> = self
            .slots
            .keys()
            .filter(|name| self.runs(name))
            .cloned()
            .collect();
        let everyone: Vec<String> = self.slots.keys().cloned().collect();
        let executor = Arc::clone(&self.env.executor);
        let learned_seen = self.learned_seen;
        let ours = self.ours();
        let team = self
            .leasing
            .as_ref()
            .map(|l| (l.host.clone(), self.notices_seen));
        self.work.spawn_blocking(move || {
            contained(Work::Sync, || {
                let mut synced = sync::sync(
                    &executor,
                    (&agents, &everyone),
                    learned_seen,
                    ours.as_deref(),
                );
                if let Some((host, after)) = team {
                    match super::notices::read(&executor, &host, after) {
                        Ok(heard) => synced.notices = Some(heard),
                        Err(e) => synced.errors.push(e),
                    }
                }
                Done::Synced(synced)
            })
        });
    }

    pub(super) fn work_done(&mut self, done: Done) {
        match done {
            Done::Synced(synced) => {
                self.syncing = false;
                self.synced(synced);
                if self.sync_again {
                    self.request_sync();
                }
            }
            Done::Swept(swept) => {
                self.sweeping = false;
                self.swept(swept);
            }
            Done::Decided => self.request_sync(),
            Done::Told => {}
            // Read back with what else waits, so the inbox is answered in
            // the order it was sent (a greeting before a first message).
            Done::Delivered(agent) if self.runs(&agent) => self.request_sync(),
            Done::Delivered(_) => {}
            Done::Leased(round, asked_at) => self.leased(round, asked_at),
            Done::Wrote(outcome) => {
                self.writing = false;
                self.next_write();
                match outcome {
                    Ok(Some(then)) => self.work_done(*then),
                    Ok(None) => {}
                    Err(message) => self.emit(Event::Error {
                        agent: None,
                        message,
                    }),
                }
            }
            Done::Failed(kind, panic) => {
                self.emit(Event::Error {
                    agent: None,
                    message: format!(
                        "the runtime's {kind:?} work stopped on an internal error ({panic}); it goes on"
                    ),
                });
                match kind {
                    Work::Sync => {
                        self.syncing = false;
                        if self.sync_again {
                            self.request_sync();
                        }
                    }
                    Work::Sweep => self.sweeping = false,
                    Work::Lease => self.leasing_busy = false,
                    Work::Tell => {}
                    Work::Write => {
                        self.writing = false;
                        self.next_write();
                    }
                }
            }
        }
    }

    pub(super) fn synced(&mut self, synced: Synced) {
        if let Some((seen, proposer)) = synced.learned {
            // What the partner taught (or forgot), in any process, is read
            // from the next reply on.
            self.learned_seen = Some(seen);
            self.env.proposer.set(proposer);
        }
        if let Some((notices, newest)) = synced.notices {
            self.heard(notices, newest);
        }
        for message in synced.errors {
            self.emit(Event::Error {
                agent: None,
                message,
            });
        }
        for decided in synced.decided {
            self.decided(decided);
        }
        for request in synced.announce {
            self.announce(&request);
        }
        // What waits, as the database has it.
        let names: Vec<String> = self.slots.keys().cloned().collect();
        for name in names {
            let waiting = synced.waiting.get(&name).cloned().unwrap_or_default();
            let Some(slot) = self.slots.get_mut(&name) else {
                continue;
            };
            slot.waiting = waiting;
            let next = match slot.state {
                RunState::Idle if !slot.waiting.is_empty() => Some(RunState::Waiting),
                RunState::Waiting if slot.waiting.is_empty() => Some(RunState::Idle),
                _ => None,
            };
            if let Some(next) = next {
                self.set_state(&name, next);
            }
        }
        for (name, waiting) in synced.inbox {
            self.forget_settled(&name, &waiting);
            for delivery in waiting {
                self.queue_delivery(delivery);
            }
        }
        // Halts and pulses read while our own writes were on their way may
        // predate them: the next sync (within a second) reads them again.
        if self.writes_since_sync() {
            return;
        }
        for (name, secs) in synced.pulses {
            let interval = Duration::from_secs(secs.max(0) as u64);
            if let Some(slot) = self.slots.get_mut(&name)
                && slot.pulse != interval
            {
                slot.pulse = interval;
                self.announce_state(&name);
            }
        }
        for (name, reason) in synced.halted {
            self.halt(&name, &reason);
        }
    }

    /// Tells everyone about a request waiting on an authority: the event,
    /// and the supervising agent it waits on (if it is one of ours).
    pub(super) fn announce(&mut self, request: &PendingRequest) {
        let info = ActionInfo::of_request(request);
        if request.authority_index > 0 {
            // It was escalated: say so, then that it waits on someone else.
            let by = request
                .authorities
                .get(request.authority_index - 1)
                .map(ToString::to_string)
                .unwrap_or_default();
            self.emit(Event::PermissionDecided {
                agent: request.agent.clone(),
                action_id: info.action_id.clone(),
                id: request.id.clone(),
                verb: info.verb.clone(),
                op: info.op,
                canonical: request.canonical.clone(),
                decision: DecisionKind::Escalate,
                by,
            });
        }
        self.emit(Event::PermissionRequested {
            agent: request.agent.clone(),
            action_id: info.action_id,
            id: request.id.clone(),
            verb: info.verb,
            op: info.op,
            canonical: request.canonical.clone(),
            waiting_on: request.waiting_on().clone(),
            reason: request.reason.clone(),
        });
        if let Authority::Agent(name) = request.waiting_on()
            && self.slots.contains_key(name)
        {
            let text = approval_request_message(request);
            let name = name.clone();
            self.push(
                &name,
                Trigger::Message {
                    thread: "approvals".into(),
                    from: "system".into(),
                    text,
                    delivery: None,
                    lineage: Vec::new(),
                },
            );
        }
    }

    /// Tells the agent that asked how its request was decided.
    pub(super) fn decided(&mut self, d: DecidedRequest) {
        let info = ActionInfo::of_request(&d.request);
        self.emit(Event::PermissionDecided {
            agent: d.request.agent.clone(),
            action_id: info.action_id,
            id: d.request.id.clone(),
            verb: info.verb,
            op: info.op,
            canonical: d.request.canonical.clone(),
            decision: d.decision,
            by: d.by.clone(),
        });
        let mut requests = Vec::new();
        emit_report(&self.env, &d.report, &mut requests);
        if d.report.status == ActionStatus::Pending {
            return;
        }
        let agent = d.request.agent.clone();
        let Some(slot) = self.slots.get_mut(&agent) else {
            return;
        };
        slot.waiting.remove(&d.request.id);
        if d.decision != DecisionKind::Cancel {
            let thread = if d.request.thread.is_empty() {
                "main".to_string()
            } else {
                d.request.thread.clone()
            };
            slot.mailbox.push_back(Trigger::Results {
                thread,
                reports: vec![d.report],
                lineage: d.request.on_behalf_of.clone(),
            });
        }
        if slot.state == RunState::Waiting && slot.waiting.is_empty() {
            self.set_state(&agent, RunState::Idle);
        }
    }

    pub(super) fn tick(&mut self) {
        let now = Instant::now();
        let due: Vec<(String, Duration)> = self
            .slots
            .iter()
            .filter(|(_, s)| {
                s.state == RunState::Idle
                    && s.mailbox.is_empty()
                    && !s.pulse.is_zero()
                    && s.idle_since + s.pulse <= now
            })
            .map(|(n, s)| (n.clone(), s.pulse))
            .collect();
        for (agent, interval) in due {
            self.emit(Event::PulseFired {
                agent: agent.clone(),
                reason: "idle".into(),
            });
            self.push(
                &agent,
                Trigger::Pulse {
                    interval,
                    reason: String::new(),
                },
            );
        }
        // Intentions and timeouts have their own schedule: they fire
        // whatever the agents are doing.
        if self.leasing.is_some() && now >= self.next_lease {
            self.next_lease = now + super::leases::RENEW;
            self.expire_unsure();
            self.lease_round();
        }
        if now >= self.next_sweep {
            self.next_sweep = now + SWEEP;
            if !self.sweeping {
                self.sweeping = true;
                let executor = Arc::clone(&self.env.executor);
                let wall = self.env.clock.now_ms();
                let ours = self.ours();
                self.work.spawn_blocking(move || {
                    contained(Work::Sweep, || {
                        Done::Swept(sync::sweep(&executor, wall, ours.as_deref()))
                    })
                });
            }
            self.request_sync();
        }
    }

    pub(super) fn swept(&mut self, swept: Swept) {
        for message in swept.errors {
            self.emit(Event::Error {
                agent: None,
                message,
            });
        }
        for (agent, id, what) in swept.due {
            if !self.slots.contains_key(&agent) {
                continue;
            }
            let reason = format!("intention #{id} is due: {what}");
            self.emit(Event::PulseFired {
                agent: agent.clone(),
                reason: reason.clone(),
            });
            let interval = self.slots.get(&agent).map_or(Duration::ZERO, |s| s.pulse);
            self.push(&agent, Trigger::Pulse { interval, reason });
        }
        if swept.expired > 0 {
            self.request_sync();
        }
    }
}

impl Runtime {
    /// A message in the inbox of an agent run here: a turn answers it,
    /// unless one is queued or running for it already.
    pub(super) fn queue_delivery(&mut self, delivery: Delivery) {
        if !self.runs(&delivery.agent) {
            return;
        }
        let Some(slot) = self.slots.get_mut(&delivery.agent) else {
            return;
        };
        if !slot.queued.insert(delivery.id) {
            return;
        }
        let from = match delivery.from.as_str() {
            "user" => "partner".to_string(),
            other => other.to_string(),
        };
        self.env.emit(Event::MessageReceived {
            agent: delivery.agent.clone(),
            from,
            text: delivery.content.clone(),
        });
        slot.mailbox.push_back(Trigger::Message {
            thread: delivery.thread,
            from: delivery.from,
            text: delivery.content,
            delivery: Some(delivery.id),
            lineage: delivery.lineage,
        });
        slot.idle_since = Instant::now();
    }

    /// Forgets the messages `agent` queued that no longer wait (answered,
    /// or dropped by a halt), as a sync read its inbox (`waiting`, the
    /// oldest first, at most a page of them).
    fn forget_settled(&mut self, agent: &str, waiting: &[Delivery]) {
        let Some(slot) = self.slots.get_mut(agent) else {
            return;
        };
        let in_hand: HashSet<i64> = slot
            .mailbox
            .iter()
            .filter_map(|t| match t {
                Trigger::Message { delivery, .. } => *delivery,
                _ => None,
            })
            .chain(slot.answering)
            .collect();
        let read: HashSet<i64> = waiting.iter().map(|d| d.id).collect();
        // Past a full page, what was not read may still wait.
        let beyond = (waiting.len() >= partner_store::memory::inbox::READ_AT_ONCE)
            .then(|| waiting.last().map_or(i64::MAX, |d| d.id));
        slot.queued.retain(|id| {
            in_hand.contains(id) || read.contains(id) || beyond.is_some_and(|b| *id > b)
        });
    }
}
