//! The fan-out: [`World::note`] hands each lifecycle note to every listener
//! that hears it (the table in [`super::super::notes`]), and the questions the
//! actors may ask the listeners. The books and the tracer are private to the
//! world: this file and the loop reach them, nothing else.

use super::super::call_sites::CallSites;
use super::super::notes::{Note, Over};
use super::super::trace::{Tracer, trace};
use super::super::vocab::Outcome;
use super::World;
use crate::engine::Ticks;

impl World<'_> {
    /// The request tracer `tracer` listens from now on (`--trace N`).
    pub(in crate::sim) fn trace_with(&mut self, tracer: Tracer) {
        self.trace = Some(Box::new(tracer));
    }

    /// The request tracer, which stops listening (None: none listened).
    pub(in crate::sim) fn take_tracer(&mut self) -> Option<Box<Tracer>> {
        self.trace.take()
    }

    /// Whether the request tracer listens (`--trace N`): a note only it hears
    /// need not be made otherwise.
    #[inline]
    pub(in crate::sim) fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// Hands `note` to every listener that hears it (the table in the module
    /// docs). Always inlined in an optimised build: each call site names one
    /// variant, so what is left is that variant's arm, as if written at the
    /// site (as a plain `#[inline]` it stayed a call with the whole match,
    /// 16-22 % more instructions on M1-M3). An unoptimised build keeps it a
    /// call: inlined there, every caller's stack frame holds every arm's
    /// locals, and a chain of 1000 calls cancelled down overflows a worker
    /// thread's stack. Over 100 lines because it is one arm per note (the
    /// module's table lists them), each a few listener calls in order; it
    /// stays one function for the inlining above.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(in crate::sim) fn note(&mut self, note: Note) {
        let now = self.now();
        match note {
            Note::Sent { req, route, owner } => {
                trace!(self, sent(req, route, owner));
                let workload = self.source_workload(self.sending_source());
                self.obs.request_sent(now, workload, route);
            }
            Note::Departed { req } => self.limiting_sent(req),
            Note::StepSent { step } => self.obs.step_sent(step),
            Note::CallRequestSent { req, call, service } => {
                trace!(self, call_request(req, call, service));
            }
            Note::Responded { req, outcome } => {
                trace!(self, responded(req, outcome));
                self.obs.handled(self.requests[req].step, outcome);
                // the work leaves the service: the admissions that let it in
                // hear it (and a client's open request is counted for its
                // member), before the request closes
                self.limiting_responded(req, outcome);
                if self.servers.listening {
                    let failed = outcome.is_failure() || self.limiting_5xx(outcome);
                    self.balance_over(req, failed);
                }
            }
            Note::Answered { outcome, response } => {
                self.obs.answered(now, outcome, response);
                self.obs.left(now, response);
            }
            Note::GaveUp { req, waited } => {
                self.obs.gave_up(now, waited);
                self.obs.left(now, waited);
                trace!(self, gave_up(req));
                if self.servers.listening {
                    self.balance_gave_up(req);
                }
            }
            Note::ClientCallOver {
                req,
                outcome,
                in_system,
            } => {
                trace!(self, client_call_over(req, outcome));
                if outcome == Outcome::TimedOut {
                    self.obs.gave_up(now, in_system);
                } else {
                    self.obs.answered(now, outcome, in_system);
                    self.limiting_outcome(req, outcome);
                }
                self.obs.left(now, in_system);
            }
            Note::CallerGone { req, cancel } => {
                trace!(self, caller_gone(req, cancel));
                if self.servers.listening {
                    self.balance_gave_up(req);
                }
            }
            Note::Done {
                step,
                source,
                outcome,
                in_time,
                response,
            } => {
                self.obs.done(step, outcome, in_time);
                let workload = self.source_workload(source);
                self.obs.client_done(now, workload, outcome, response);
            }
            Note::HandlerLeft { req } => {
                self.limiting_given_up(req);
                if self.servers.listening {
                    self.balance_left(req);
                }
            }
            Note::Started { req, waited } => self.obs.waited(self.requests[req].step, waited),
            Note::Served {
                req,
                outcome,
                arrived,
                started,
            } => trace!(self, served(req, outcome, arrived, started)),
            Note::Unqueued { req, arrived } => {
                trace!(self, server_unqueued(req, arrived));
                self.obs.abandoned(self.requests[req].step);
            }
            Note::LateWork { row, worked } => {
                if let Some(t) = self.obs.series() {
                    t.wasted(now, row, worked.as_ms());
                }
            }
            Note::CallMade { dep } => self.obs.call_made(dep),
            Note::AtDependency { dep } => self.obs.dependency_arrival(now, dep),
            Note::CallAtSite { service, target } => {
                if let Some(t) = self.obs.series() {
                    let site = t.sites().of_call(service, target);
                    t.call_made(now, site);
                }
            }
            Note::CallFailed { dep } => self.obs.call_failed(dep),
            Note::FailedAtOnce {
                caller,
                target,
                no_time,
            } => {
                if self.trace.is_some() {
                    let from = self.trace_opener(caller);
                    let why = if no_time { "no time left" } else { "down" };
                    trace!(self, call_failed_at_once(from, target, why));
                }
            }
            Note::CallOpened {
                call,
                caller,
                target,
            } => {
                if self.trace.is_some() {
                    let from = self.trace_opener(caller);
                    trace!(self, call_open(call, from, target));
                }
            }
            Note::CallEnded { call, ok } => {
                trace!(self, call_ended(call, if ok { "ok" } else { "error" }));
                if self.dependencies.replicated.is_some() {
                    self.dependency_pick_over(call, Over::Answered { ok });
                }
            }
            Note::CallTimedOut { call } => {
                trace!(self, call_ended(call, "timeout"));
                if self.dependencies.replicated.is_some() {
                    self.dependency_pick_over(call, Over::TimedOut);
                }
            }
            Note::CallAnswered { call, outcome } => trace!(self, call_answered(call, outcome)),
            Note::CallGivenUp { call, cancel } => {
                trace!(self, call_given_up(call, cancel));
                if self.dependencies.replicated.is_some() {
                    self.dependency_pick_over(call, Over::GivenUp);
                }
            }
            Note::Wasted { dep, wasted } => self.obs.wasted(now, dep, wasted),
            Note::WorkStarted { dep } => self.obs.work_started(dep),
            Note::WorkEnded { call, dep, start } => {
                self.obs.work_ended(now, dep, now - start);
                trace!(self, work_ended(call, start));
            }
            Note::AtReplica {
                dep,
                replica,
                change,
            } => {
                if let Some(t) = self.obs.series() {
                    t.dependency_replica(now, dep, replica, change);
                }
            }
            Note::DependencyLevels { dep, busy, waiting } => {
                let row = self.obs.dependency_row(dep);
                if let Some(t) = self.obs.series() {
                    t.levels(now, row, busy, waiting);
                }
            }
            Note::AttemptSent { workload } => self.obs.client_attempt_sent(now, workload),
            Note::PolicyOpened {
                pc,
                caller,
                target,
                policy,
            } => {
                if self.trace.is_some() {
                    let (from, client) = self.trace_caller(caller);
                    trace!(self, policy_open(pc, from, target, policy, client));
                }
            }
            Note::PolicyRefused {
                caller,
                target,
                policy,
                why,
            } => {
                if self.trace.is_some() {
                    let (from, client) = self.trace_caller(caller);
                    trace!(self, policy_refused(from, target, policy, client, why));
                }
            }
            Note::RetryRefused { pc } => trace!(self, retry_refused(pc)),
            Note::PolicyResolved { pc, outcome } => trace!(self, policy_resolved(pc, outcome)),
            Note::PolicyEnded { pc, cancel } => trace!(
                self,
                policy_ended(pc, if cancel { "cancelled" } else { "abandoned" })
            ),
        }
    }
}

/// The loop's two steps that reach every book at once: each actor's books are
/// handed to the listener that reads them.
impl World<'_> {
    /// The time series' current window ends at or before `now`: it closes the
    /// windows that ended, reading the servers' levels and the policies' call
    /// books, and returns the new window's end (the run loop calls it before
    /// handing on an event at `now`).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn series_roll(&mut self, now: Ticks) -> Ticks {
        let policies = &self.policies;
        let servers = self.servers.stats();
        self.obs
            .series_roll(now, servers, |sites| policies.site_books(sites))
    }

    /// `scenario.warmup_ms` ends now: the server and dependency books start
    /// again (the client-side books filter by send time instead).
    #[cold]
    pub(in crate::sim) fn warmup_over(&mut self) {
        let now = self.now();
        self.obs.warmup_over(now, self.servers.stats_mut());
        self.dependencies.restart(now);
    }
}

/// The questions an actor may ask the listeners, which it cannot reach.
impl World<'_> {
    /// Whether the books take their slow path (a warm-up or a time series):
    /// an actor asks before it works out what only they need.
    #[inline]
    pub(in crate::sim) fn books_slow_path(&self) -> bool {
        self.obs.slow_path()
    }

    /// The time series' call sites, when the run keeps one.
    pub(in crate::sim) fn series_sites(&self) -> Option<&CallSites> {
        self.obs.series_sites()
    }

    /// Keeps per-step books for `n` steps (tests that send tagged requests by
    /// hand).
    #[cfg(test)]
    pub(in crate::sim) fn track_steps(&mut self, n: usize) {
        self.obs.track_steps(n);
    }
}
