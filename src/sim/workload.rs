//! Workload actor: sends requests. Closed workloads (`sequence`, `script`, `probe`)
//! send the next request when the previous one has its answer; `open` sends on its
//! own clock, whatever the system does.
//!
//! The senders know nothing of the world: [`Workloads::turn`] says what a sender
//! sends at its turn and when it goes next, [`Workloads::answered`] when a closed
//! one goes after an answer, and the world sends and posts it (`world/workload.rs`).
//!
//! A `ladder` (IO22-IO25) raises the load step by step and tags every request with
//! its step. Closed (the seed's breaking-point test): each step sends `waves` waves,
//! a wave is c requests at the same instant, and the next wave leaves when every
//! request of the wave has its answer. Open (like k6's ramping-arrival-rate): step c
//! sends c x `rate_per_step_rps` requests per second, evenly spaced, for `hold_ms`,
//! whatever the server does, so it shows the waits a closed ladder hides
//! (coordinated omission). A ladder request succeeds when it is answered within
//! `timeout_ms` (a reply at the deadline is in time). Its client keeps waiting past
//! the timeout unless the target server has `abandon = true`: then the client gives
//! up at the timeout, which is the cancellation signal the server acts on.
//!
//! `script` sends its groups one after another, request i of a group on
//! `routes[i % len]`, `gap_ms` after the previous answer and never before the
//! group's `at_ms`. `probe` sends one request per (route, access) pair: every route
//! in declaration order (owned routes, then the workload's unowned ones), each
//! through every listed access path in order.

use super::ahead::Draws;
use super::context::Timers;
use super::latency::Sampler;
use super::vocab::{Event, Tag};
use crate::engine::{Stream, Ticks, stream};
use crate::error::Error;
use crate::model::{
    Access, Arrivals, Handler, Ladder, Model, NamedWorkload, RequestTemplate, RouteId, Workload,
};
use rand::RngExt;

/// Every sender of the run: one per workload, one per client of an open workload
/// with `clients = N`. A sender is addressed by its index (`WorkloadNext(i)`, a
/// request's `source`).
pub(crate) struct Workloads {
    senders: Vec<Sender>,
    /// The sender whose request is leaving now (read by `send` for the request's
    /// `source`, through [`Workloads::sending`]).
    current: u32,
    /// Per sender, the index of its workload (for the books).
    workload_of: Vec<u32>,
}

/// One sender: its state and its own random streams.
struct Sender {
    state: WorkloadState,
    start: Ticks,
    /// A closed population's think time, from its own stream.
    think: Option<Draws>,
}

impl Workloads {
    /// Closed populations' think times, for drawing ahead.
    pub fn draws(&mut self) -> impl Iterator<Item = &mut Draws> {
        self.senders.iter_mut().filter_map(|s| s.think.as_mut())
    }

    /// The workload (its index) of sender `source`; None for a request no
    /// sender made.
    #[inline]
    pub(super) fn of(&self, source: u32) -> Option<u32> {
        self.workload_of.get(source as usize).copied()
    }

    pub fn new(model: &Model, replication: u64, symbols: &mut super::vocab::Symbols) -> Workloads {
        let mut senders = Vec::new();
        let mut workload_of = Vec::new();
        for (w, named) in model.workloads.iter().enumerate() {
            let own = |name: &str| stream(model.seed, replication, name);
            for state in senders_of(named, symbols, own) {
                let think = match &named.workload {
                    Workload::Closed { think, .. } => {
                        let mut rng =
                            stream(model.seed, replication, &format!("{}/think", named.stream));
                        Some(Draws::here(Sampler::new(think, &mut rng), rng))
                    }
                    _ => None,
                };
                senders.push(Sender {
                    state,
                    start: named.start,
                    think,
                });
                workload_of.push(w as u32);
            }
        }
        Workloads {
            senders,
            current: 0,
            workload_of,
        }
    }
}

/// The senders of one workload, each given its own stream by `own` (from the
/// stream's name): an open workload's clients split its rate and requests (the
/// remainder to the first),
/// client i labelled `LABEL-i`.
fn senders_of(
    named: &NamedWorkload,
    symbols: &mut super::vocab::Symbols,
    own: impl Fn(&str) -> Stream,
) -> Vec<WorkloadState> {
    let w = &named.workload;
    match w {
        Workload::Open {
            clients,
            rate_rps,
            requests,
            duration,
            arrivals,
            timeout,
            template,
        } if *clients > 1 => {
            let n = *clients;
            let label = if template.client == "-" {
                named.name.as_str()
            } else {
                template.client.as_str()
            };
            (0..n)
                .map(|i| {
                    let client = symbols.intern(&format!("{label}-{}", i + 1));
                    let mut send = send_of(template, symbols);
                    send.client = client;
                    let left = requests.map(|r| r / n + u64::from(i < r % n));
                    let rng = own(&format!("{}/client-{}", named.stream, i + 1));
                    WorkloadState::Open {
                        send,
                        left,
                        until: duration.map(|d| named.start + d),
                        mean_gap_ms: 1000.0 * n as f64 / rate_rps,
                        arrivals: OpenArrivals::new(
                            *arrivals,
                            Even::new(named.start, rate_rps / n as f64),
                            rng,
                        ),
                        timeout: *timeout,
                    }
                })
                .collect()
        }
        _ => vec![WorkloadState::new(
            w,
            named.start,
            symbols,
            own(&named.stream),
        )],
    }
}

/// One request to send: route, access, client, member (interned).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Send {
    pub(super) route: RouteId,
    pub(super) access: Access,
    pub(super) client: u32,
    pub(super) member: u32,
}

pub(crate) enum WorkloadState {
    /// One request at a time, `left` more to send.
    Sequence { send: Send, left: u64 },
    /// Closed loop over a fixed list of requests, each with its pacing.
    Closed {
        items: Vec<(Send, Pace)>,
        next: usize,
    },
    /// A closed population: `users` requests out at a time, each user thinking
    /// between its answer and its next request.
    Population {
        send: Send,
        users: u64,
        left: Option<u64>,
        until: Option<Ticks>,
        timeout: Option<Ticks>,
    },
    Open {
        send: Send,
        left: Option<u64>,
        until: Option<Ticks>,
        mean_gap_ms: f64,
        arrivals: OpenArrivals,
        timeout: Option<Ticks>,
    },
    /// Closed ladder: `outstanding` requests of the current wave still wait.
    LadderWaves {
        send: Send,
        steps: Vec<u64>,
        waves: u64,
        /// The next wave to send: step index and wave within the step.
        step: usize,
        wave: u64,
        outstanding: u64,
        timeout: Ticks,
        give_up: bool,
        jitter: Ticks,
        /// The sender's stream, for the jitter.
        rng: Stream,
    },
    /// Open ladder: evenly spaced arrivals, step after step.
    LadderOpen {
        send: Send,
        /// Milliseconds between two arrivals, per step.
        gaps_ms: Vec<f64>,
        hold: Ticks,
        /// The next arrival: step index and its index within the step.
        step: usize,
        index: u64,
        timeout: Ticks,
        give_up: bool,
    },
}

/// When an open workload's next request leaves.
// held in place, as an actor holds its streams: boxing would add a pointer to
// every gap drawn
#[allow(clippy::large_enum_variant)]
pub(crate) enum OpenArrivals {
    /// Evenly spaced (`uniform`).
    Uniform(Even),
    /// Poisson: Exp(1) gaps from the sender's own stream, which draws nothing
    /// else.
    Poisson(Stream),
}

impl OpenArrivals {
    fn new(arrivals: Arrivals, even: Even, rng: Stream) -> OpenArrivals {
        match arrivals {
            Arrivals::Uniform => OpenArrivals::Uniform(even),
            Arrivals::Poisson => OpenArrivals::Poisson(rng),
        }
    }
}

/// Evenly spaced arrivals: the k-th send of a stretch at one rate leaves at
/// `origin + k / rate`, computed from k, never by adding rounded gaps (a gap of
/// 11.1111111 ms rounded to whole nanoseconds sent 13,501 requests in 150 s at
/// 90/s). An `arrival_factor` fault that changes the rate starts a new stretch
/// at the send where the new rate is first read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Even {
    /// The stretch's first send, in ms (unrounded).
    origin_ms: f64,
    /// Sends of the stretch so far, its first at k = 0.
    k: u64,
    /// The stretch's rate, per second.
    per_s: f64,
    /// The rate without faults, per second.
    base: f64,
}

impl Even {
    fn new(start: Ticks, per_s: f64) -> Even {
        Even {
            origin_ms: start.as_ms(),
            k: 0,
            per_s,
            base: per_s,
        }
    }

    /// The time of the stretch's k-th send, in ms.
    fn at_ms(&self, k: u64) -> f64 {
        // k x 1000 / rate, one rounding: k / 0.09 is not k x 1000 / 90
        self.origin_ms + k as f64 * 1000.0 / self.per_s
    }

    /// After the send now (the k-th), the time of the next at the rate times
    /// `factor` (an `arrival_factor` fault's; 1 without).
    fn next(&mut self, factor: f64) -> Ticks {
        let per_s = self.base * factor;
        if per_s != self.per_s {
            // a new rate: a new stretch from this send
            self.origin_ms = self.at_ms(self.k);
            (self.k, self.per_s) = (0, per_s);
        }
        self.k += 1;
        Ticks::from_ms(self.at_ms(self.k))
    }
}

/// When a closed-list request goes: `gap` after the previous answer (or the start),
/// and not before `at`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pace {
    gap: Ticks,
    at: Ticks,
}

impl Pace {
    fn after(self, answered: Ticks) -> Ticks {
        (answered + self.gap).max(self.at)
    }
}

fn send_of(t: &RequestTemplate, symbols: &mut super::vocab::Symbols) -> Send {
    Send {
        route: t.route,
        access: t.access,
        client: symbols.intern(&t.client),
        member: symbols.intern(&t.member),
    }
}

impl WorkloadState {
    fn new(
        w: &Workload,
        start: Ticks,
        symbols: &mut super::vocab::Symbols,
        rng: Stream,
    ) -> WorkloadState {
        match w {
            Workload::Closed {
                users,
                requests,
                duration,
                timeout,
                template,
                ..
            } => WorkloadState::Population {
                send: send_of(template, symbols),
                users: *users,
                left: *requests,
                until: duration.map(|d| start + d),
                timeout: *timeout,
            },
            Workload::Sequence { requests, template } => WorkloadState::Sequence {
                send: send_of(template, symbols),
                left: *requests,
            },
            Workload::Open {
                rate_rps,
                requests,
                duration,
                arrivals,
                timeout,
                template,
                ..
            } => WorkloadState::Open {
                send: send_of(template, symbols),
                left: *requests,
                until: duration.map(|d| start + d),
                mean_gap_ms: 1000.0 / rate_rps,
                arrivals: OpenArrivals::new(*arrivals, Even::new(start, *rate_rps), rng),
                timeout: *timeout,
            },
            Workload::Script { groups, access } => {
                let mut items = Vec::new();
                for g in groups {
                    let client = symbols.intern(&g.client);
                    let member = symbols.intern(&g.member);
                    for i in 0..g.count as usize {
                        let route = g.routes[i % g.routes.len()];
                        let pace = if i == 0 {
                            Pace {
                                gap: Ticks::ZERO,
                                at: g.at.unwrap_or_default(),
                            }
                        } else {
                            Pace {
                                gap: g.gap,
                                at: Ticks::ZERO,
                            }
                        };
                        items.push((
                            Send {
                                route,
                                access: *access,
                                client,
                                member,
                            },
                            pace,
                        ));
                    }
                }
                WorkloadState::Closed { items, next: 0 }
            }
            Workload::Probe {
                access,
                client,
                member,
                routes,
            } => {
                let client = symbols.intern(client);
                let member = symbols.intern(member);
                let items = (0..*routes)
                    .flat_map(|route| {
                        access.iter().map(move |&access| {
                            let send = Send {
                                route,
                                access,
                                client,
                                member,
                            };
                            (send, Pace::default())
                        })
                    })
                    .collect();
                WorkloadState::Closed { items, next: 0 }
            }
            Workload::Ladder(l) => ladder_state(l, send_of(&l.template, symbols), rng),
        }
    }
}

fn ladder_state(l: &Ladder, send: Send, rng: Stream) -> WorkloadState {
    match &l.open {
        None => WorkloadState::LadderWaves {
            send,
            steps: l.steps.clone(),
            waves: l.waves,
            step: 0,
            wave: 0,
            outstanding: 0,
            timeout: l.timeout,
            give_up: false,
            jitter: l.jitter,
            rng,
        },
        Some(open) => WorkloadState::LadderOpen {
            send,
            gaps_ms: l
                .steps
                .iter()
                .map(|&c| 1000.0 / (c as f64 * open.rate_per_step_rps))
                .collect(),
            hold: open.hold,
            step: 0,
            index: 0,
            timeout: l.timeout,
            give_up: false,
        },
    }
}

/// Ladder clients give up at the timeout only when the server they call drops
/// abandoned work (`abandon = true`); otherwise they wait for every answer, as the
/// seed's `Promise.all` does, and the timeout only judges success.
fn ladder_gives_up(model: &crate::model::Model, l: &Ladder) -> bool {
    let Some(service) = model.routes[l.template.route].service else {
        return false;
    };
    matches!(&model.services[service].handler, Handler::Server(s) if s.abandon)
}

/// A Poisson workload's gap before its next request: Exp(1) by rand_distr's
/// ziggurat, as the `exponential` latency model and the peer models draw it (a
/// table lookup and a multiply for most draws, where -ln(1 - u) was a libm call,
/// about a tenth of an M1 run's time).
fn poisson_gap_ms(mean_gap_ms: f64, gaps: &mut Stream) -> f64 {
    use rand_distr::{Distribution, Exp1};
    let exp1: f64 = Exp1.sample(gaps);
    exp1 * mean_gap_ms
}

/// What a sender does at its turn ([`Workloads::turn`]). The world carries it
/// out in the order written: the sends, then the next turn.
pub(crate) enum Turn {
    /// Nothing (the sender is done, or waits for an answer).
    Nothing,
    /// One request; then, with `then`, the sender's next turn at that time.
    One {
        send: Send,
        timeout: Option<Ticks>,
        then: Option<Ticks>,
    },
    /// `count` ladder requests now; then, with `then`, the ladder's next turn.
    Ladder {
        send: LadderSend,
        count: u64,
        then: Option<Ticks>,
    },
    /// A jittered ladder wave: one request of step `step` leaves at each time
    /// (a `LadderSend` event each).
    Jittered { step: u32, at: Vec<Ticks> },
}

/// One ladder request: what it sends, tagged with its step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LadderSend {
    pub(super) send: Send,
    pub(super) step: usize,
    timeout: Ticks,
    give_up: bool,
}

impl LadderSend {
    /// The labels the request carries: its step, and the timeout that judges it.
    pub(super) fn tag(&self) -> Tag {
        Tag {
            step: Some(self.step as u32),
            patience: Some(self.timeout),
        }
    }

    /// The time its client waits before giving up (None: for the answer).
    pub(super) fn client_timeout(&self) -> Option<Ticks> {
        self.give_up.then_some(self.timeout)
    }
}

impl Workloads {
    /// Posts each sender's first turn: checked against the run's event limit
    /// first (a ladder knows how many it sends).
    pub(super) fn first_turns(&mut self, t: &mut Timers, model: &Model) -> Result<(), Error> {
        if let Workload::Ladder(l) = &model.workload {
            let max = model.limits.max_events;
            let n = l.requests();
            if n > max {
                return Err(Error::Limit(format!(
                    "scenario `{}`: the ladder sends {n} requests, more than scenario.max_events = {max} (raise it in [scenario] if the run is meant to be this long)",
                    model.name
                )));
            }
            if let Some(sender) = self.senders.first_mut()
                && let WorkloadState::LadderWaves { give_up, .. }
                | WorkloadState::LadderOpen { give_up, .. } = &mut sender.state
            {
                *give_up = ladder_gives_up(model, l);
            }
        }
        for (i, sender) in self.senders.iter_mut().enumerate() {
            let start = sender.start;
            let first: Vec<Ticks> = match &mut sender.state {
                WorkloadState::Closed { items, .. } => items
                    .first()
                    .map(|(_, pace)| pace.after(start))
                    .into_iter()
                    .collect(),
                // A Poisson process's first arrival comes one gap after it starts
                // (sending at the start made a run of D send 1 + Poisson(lambda D)).
                WorkloadState::Open {
                    arrivals: OpenArrivals::Poisson(gaps),
                    mean_gap_ms,
                    until,
                    ..
                } => {
                    let (mean, until) = (*mean_gap_ms, *until);
                    let at = start + Ticks::from_ms(poisson_gap_ms(mean, gaps));
                    until
                        .is_none_or(|u| at < u)
                        .then_some(at)
                        .into_iter()
                        .collect()
                }
                WorkloadState::Population { users, .. } => vec![start; *users as usize],
                WorkloadState::Open { .. }
                | WorkloadState::Sequence { .. }
                | WorkloadState::LadderWaves { .. }
                | WorkloadState::LadderOpen { .. } => vec![start],
            };
            for at in first {
                t.post(at, Event::WorkloadNext(i as u32));
            }
        }
        Ok(())
    }

    /// The sender whose request is leaving now: the `source` of the request
    /// being sent.
    #[inline]
    pub(super) fn sending(&self) -> u32 {
        self.current
    }

    /// Sender `i`'s request leaves next.
    #[inline]
    pub(super) fn send_from(&mut self, i: u32) {
        self.current = i;
    }

    /// Sender `i`'s turn at `now`: what it sends, and when it goes next.
    /// `factor` multiplies an open workload's rate for the gap drawn now (an
    /// `arrival_factor` fault's; 1 without, and `plain`: there is none).
    #[inline]
    pub(super) fn turn(&mut self, i: usize, now: Ticks, plain: bool, factor: f64) -> Turn {
        let Some(sender) = self.senders.get_mut(i) else {
            return Turn::Nothing;
        };
        match &mut sender.state {
            WorkloadState::Sequence { send, left } => {
                if *left == 0 {
                    return Turn::Nothing;
                }
                *left -= 1;
                Turn::One {
                    send: *send,
                    timeout: None,
                    then: None,
                }
            }
            WorkloadState::Closed { items, next } => match items.get(*next) {
                Some(&(send, _)) => {
                    *next += 1;
                    Turn::One {
                        send,
                        timeout: None,
                        then: None,
                    }
                }
                None => Turn::Nothing,
            },
            WorkloadState::Population {
                send,
                left,
                until,
                timeout,
                ..
            } => {
                if until.is_some_and(|u| now >= u) || *left == Some(0) {
                    return Turn::Nothing;
                }
                if let Some(n) = left {
                    *n -= 1;
                }
                Turn::One {
                    send: *send,
                    timeout: *timeout,
                    then: None,
                }
            }
            WorkloadState::Open {
                send,
                left,
                until,
                mean_gap_ms,
                arrivals,
                timeout,
            } => {
                if let Some(n) = left {
                    if *n == 0 {
                        return Turn::Nothing;
                    }
                    *n -= 1;
                }
                let next_at = match arrivals {
                    OpenArrivals::Uniform(even) => even.next(factor),
                    OpenArrivals::Poisson(gaps) => {
                        let mean_gap_ms = if plain {
                            *mean_gap_ms
                        } else {
                            *mean_gap_ms / factor
                        };
                        now + Ticks::from_ms(poisson_gap_ms(mean_gap_ms, gaps))
                    }
                };
                let more = left.is_none_or(|n| n > 0) && until.is_none_or(|u| next_at < u);
                Turn::One {
                    send: *send,
                    timeout: *timeout,
                    then: more.then_some(next_at),
                }
            }
            WorkloadState::LadderWaves { .. } => self.ladder_wave(now),
            WorkloadState::LadderOpen { .. } => self.ladder_arrival(now),
        }
    }

    /// The ladder's state: a ladder is always the only workload.
    fn ladder(&mut self) -> Option<&mut WorkloadState> {
        Some(&mut self.senders.first_mut()?.state)
    }

    /// Closed ladder: the next wave, c requests at this instant.
    #[inline]
    fn ladder_wave(&mut self, now: Ticks) -> Turn {
        let Some(WorkloadState::LadderWaves {
            send,
            steps,
            waves,
            step,
            wave,
            outstanding,
            timeout,
            give_up,
            jitter,
            rng,
        }) = self.ladder()
        else {
            return Turn::Nothing;
        };
        let Some(&c) = steps.get(*step) else {
            return Turn::Nothing;
        };
        let this_step = *step;
        // Advance first: a request refused at once may end the wave while the
        // world sends it.
        *wave += 1;
        if *wave == *waves {
            *wave = 0;
            *step += 1;
        }
        *outstanding = c;
        if *jitter > Ticks::ZERO {
            // Every request of the wave is counted as outstanding now and leaves
            // at its own offset; the wave still ends when all have their answer.
            let jitter = *jitter;
            let at = (0..c)
                .map(|_| now + Ticks(rng.random_range(0..jitter.0)))
                .collect();
            return Turn::Jittered {
                step: this_step as u32,
                at,
            };
        }
        Turn::Ladder {
            send: LadderSend {
                send: *send,
                step: this_step,
                timeout: *timeout,
                give_up: *give_up,
            },
            count: c,
            then: None,
        }
    }

    /// A jittered closed-ladder request of step `step` leaves.
    pub(super) fn jittered(&mut self, step: usize) -> Option<LadderSend> {
        match self.ladder() {
            Some(WorkloadState::LadderWaves {
                send,
                timeout,
                give_up,
                ..
            }) => Some(LadderSend {
                send: *send,
                step,
                timeout: *timeout,
                give_up: *give_up,
            }),
            _ => None,
        }
    }

    /// Open ladder: one arrival, then the next one of this step or the next step.
    #[inline]
    fn ladder_arrival(&mut self, now: Ticks) -> Turn {
        let Some(WorkloadState::LadderOpen {
            send,
            gaps_ms,
            hold,
            step,
            index,
            timeout,
            give_up,
        }) = self.ladder()
        else {
            return Turn::Nothing;
        };
        let Some(&gap_ms) = gaps_ms.get(*step) else {
            return Turn::Nothing;
        };
        let this_step = *step;
        let step_start = Ticks(hold.0.saturating_mul(this_step as u64));
        let step_end = step_start + *hold;
        // each arrival timed from the step's start (rounded gaps do not drift),
        // never two at the same tick
        *index += 1;
        let mut next = (step_start + Ticks::from_ms(*index as f64 * gap_ms)).max(now + Ticks(1));
        if next >= step_end {
            *step += 1;
            *index = 0;
            next = step_end;
        }
        let more = *step < gaps_ms.len();
        Turn::Ladder {
            send: LadderSend {
                send: *send,
                step: this_step,
                timeout: *timeout,
                give_up: *give_up,
            },
            count: 1,
            then: more.then_some(next),
        }
    }

    /// A request of sender `source` is over for its client (its workload's
    /// books heard it from `Note::Done`): a closed workload's next turn is
    /// posted. Inlined into the answer's path, as the release build has
    /// always had it.
    #[inline]
    pub(super) fn answered(&mut self, t: &mut Timers, source: u32) {
        if let Some(at) = self.next_after_answer(source, t.now()) {
            t.post(at, Event::WorkloadNext(source));
        }
    }

    /// When sender `source`, whose request is over for its client at `now`,
    /// goes next (None: it does not).
    #[inline]
    fn next_after_answer(&mut self, source: u32, now: Ticks) -> Option<Ticks> {
        let sender = self.senders.get_mut(source as usize)?;
        match &mut sender.state {
            WorkloadState::LadderWaves {
                steps,
                step,
                outstanding,
                ..
            } => {
                *outstanding = outstanding.saturating_sub(1);
                (*outstanding == 0 && *step < steps.len()).then_some(now)
            }
            WorkloadState::Closed { items, next } => {
                items.get(*next).map(|&(_, pace)| pace.after(now))
            }
            WorkloadState::Sequence { left, .. } if *left > 0 => Some(now),
            WorkloadState::Population { left, until, .. }
                if *left != Some(0) && until.is_none_or(|u| now < u) =>
            {
                sender.think.as_mut().map(|think| now + think.sample())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{LoadOptions, load_str};
    use std::path::Path;

    fn run(workload: &str) -> crate::sim::result::RunResult {
        let text = format!(
            "[scenario]\nname = \"t\"\n[services.loan]\nroutes = [\"/loan\"]\n\
             [services.loan.handler]\ntype = \"server\"\nslots = 1\nqueue = 0\n\
             service = {{ constant = 1 }}\n[workload]\ntype = \"ladder\"\n{workload}\n"
        );
        let s = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        crate::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn open_ladder_steps_send_rate_times_hold_evenly_spaced() {
        // c = 1: 7 per second, every 142.86 ms from 0: 0..428.6 fit in 500 ms;
        // c = 3: every 47.62 ms: 11 fit
        let r = run(
            "arrivals = \"open\"\nsteps = [1, 3]\nrate_per_step_rps = 7\n\
                     hold_ms = 500\ntimeout_ms = 10",
        );
        let sent: Vec<u64> = r.steps.iter().map(|s| s.sent).collect();
        assert_eq!(sent, [4, 11]);
        // 1 ms of service, arrivals far apart: nothing waits or is shed
        assert!(
            r.steps
                .iter()
                .all(|s| s.rejected == 0 && s.successful == s.sent)
        );
        // the last arrival of the last step: 500 + 10 x 47.619 ms, served in 1 ms
        assert!((r.sim_time_ms - (500.0 + 10.0 * 1000.0 / 21.0 + 1.0)).abs() < 1e-5);
    }

    #[test]
    fn jittered_waves_spread_their_requests_and_still_wait_for_all() {
        // one slot, no queue, 1 ms of service: all at once, 2 of every 3 are shed;
        // spread over 1000 ms, collisions within 1 ms are rare
        let at_once = run("steps = [3]\nwaves = 20\ntimeout_ms = 10");
        let spread = run("steps = [3]\nwaves = 20\ntimeout_ms = 10\njitter_ms = 1000");
        assert_eq!(at_once.steps[0].sent, 60);
        assert_eq!(
            spread.steps[0].sent, 60,
            "every request of every wave leaves"
        );
        assert_eq!(at_once.steps[0].rejected, 40);
        assert!(
            spread.steps[0].rejected < 10,
            "{}",
            spread.steps[0].rejected
        );
        // 20 waves, each lasting until its last (jittered) request is answered
        assert!(spread.sim_time_ms > 20.0 * 500.0, "{}", spread.sim_time_ms);
        assert_eq!(spread.steps[0].processed + spread.steps[0].rejected, 60);
    }

    #[test]
    fn closed_ladder_waves_wait_for_every_answer() {
        // one slot, no queue, 1 ms: each wave of c has one answer and c - 1 shed,
        // and the next wave leaves when that answer is in
        let r = run("steps = [1, 3]\nwaves = 2\ntimeout_ms = 10");
        let rows: Vec<(u64, u64, u64)> = r
            .steps
            .iter()
            .map(|s| (s.sent, s.processed, s.rejected))
            .collect();
        assert_eq!(rows, [(2, 2, 0), (6, 2, 4)]);
        assert_eq!(r.sim_time_ms, 4.0);
    }
}
