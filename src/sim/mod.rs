//! The simulation: the scenario's actors on the engine's clock.
//!
//! # Shape
//!
//! One [`World`](world::World) per run holds the clock, the event queue, the
//! request and call slabs, and one state value per actor kind, every field
//! private to the [`world`] module. Each actor kind is a module that owns its
//! state (its fields are private to that module) and knows nothing of the
//! world: its state's methods take what they need (the instant, the records
//! of the request or call concerned, the model) and say what a step changes
//! (a request starts, waits or is shed; a call goes with this cap; a retry
//! is due). An actor's timers are its own: a step that sets or cancels one
//! is lent a [`context::Timers`] (the instant and the queue's schedule,
//! post and cancel, nothing else of the world), and the actor keeps the
//! keys. A step that needs what a fault changes now (a latency factor, a
//! slot count, `down`) is lent the faults, read-only, beside the timers: a
//! server or dependency handles its own pause and `slots` edges and starts
//! the work they let in. The world carries the rest out: each actor has a file of the same
//! name under `world/` (`world/server.rs`, `world/policy.rs`, ...) that puts
//! its events and the other actors' questions to it, lends it the timers,
//! gives the notes and hands the request or call on. The request and call
//! slabs are the world's own, their records changed by `request.rs` and
//! `call.rs`. Besides those files, [`world`] holds the run loop with the
//! dispatch (`world/mod.rs`), the routing of a request to its gateway and
//! handler (`world/gateway.rs`, `world/handler.rs`), and the lifecycle
//! fan-out (`world/fanout.rs`), the only way to the books and the request
//! tracer. The tests `world_keeps_every_field_private` and
//! `no_actor_knows_the_world` in `tests/it` name any field of `World` that
//! reaches past the world module and any actor's file that names `World`.
//!
//! | module | actor | reacts to |
//! |---|---|---|
//! | [`workload`] | the clients: what the next request is and when it leaves | `WorkloadNext`, `LadderSend`, an answer |
//! | [`request`] | a request's record through its life: sent, arrives, answered, given up | `AtService`, `ClientTimeout` |
//! | [`limiter`] | limiters in front of a service: each request's chain, the admission seam ([`limiter::Admission`]: admit, then hear once when the request's work leaves), the concurrency limits' side of the seam (`limiter/concurrency/`); the algorithms are kinds (`crate::kinds::rate`, `crate::kinds::concurrency`) | `LimiterResume`; a request's end (`respond`, `handler_released`) |
//! | [`plan`] | the deadline-budgeted fan-out handler: each branch's next call and its cap | a call's answer |
//! | [`server`] | slots, a bounded queue in its discipline's order, load shedding, replicas: what becomes of a request at each step | `ServerDone`, `QueueTimeout` |
//! | `server::queue` | queue disciplines (`fifo`, `lifo`, `adaptive_lifo`, `codel`): a waiter's order and queue timeout | (asked by the server) |
//! | [`balance`] | balancers: which of N replicas a caller picks, from a view it is given | (asked by the server) |
//! | [`call`] | one call's record from a caller to a callee, with its timeout | `CallArrive`, `CallTimeout` |
//! | [`policy`] | client policies: retries, hedges, breakers, throttles: whether a call goes, each attempt, whether and when another follows | `PolicyTimer`, `PolicyAttemptFailed` |
//! | [`dependency`] | a store or backend that calls wait on: whether a call starts and how long it takes | `DependencyDone` |
//! | [`dependency_replicas`] | which replica of a dependency a call goes to, and each replica's books | (asked by the call; hears a pick's end) |
//! | [`faults`] | what `[[faults]]` change, asked by the others | `FaultEdge` |
//! | [`notes`] | the lifecycle notes, and who hears each | (no events) |
//! | [`observe`] | the run's statistics, fed by lifecycle notes | (no events) |
//! | [`trace`] | `--trace N`: the life of the first N requests, as spans | (no events) |
//! | [`run_limits`] | the run's limits (`max_*` in `[scenario]`, the time series' and the tracer's rows): the bounds the loop derives, and each limit's message | (no events) |
//! | [`result`] | what one run measured ([`RunResult`]), the plain data the analyses read | (no events) |
//! | [`vocab`] | the words every actor shares: ids, `Caller`, `Event`, `Outcome` | (no events) |
//! | [`context`] | `Timers`: what an actor is lent to set and cancel its own timers | (no events) |
//!
//! The files stand in layers, each importing only those below it: this face
//! (the run functions and what the crate outside sees) on top, then
//! [`world`] (the loop, the dispatch, each actor's file and the notes'
//! fan-out), the books, the actors, the notes and their listeners, and
//! [`vocab`] at the ground. Actors import their words from `vocab`, never from
//! this face or the world.
//!
//! Every event has exactly one receiver ([`world::World::dispatch`]), and every
//! lifecycle step has one entry point: a request *arrives* at its service
//! (its middleware limiters, then its handler: `world/handler.rs`), *work
//! starts* and *work ends* in the actor doing it (server, dependency), a
//! *timer fires* in the actor that set it, an *answer returns* through the
//! call ([`call`], `world/call.rs`) to whoever called. Actors do not write
//! each other's counters, and nobody calls the listeners of a step around the
//! notes: each step of a request's or a call's life is one [`notes::Note`]
//! (`Sent`, `Responded`, `Answered`, `GaveUp`, `CallOpened`, `WorkEnded`,
//! ...), given once with `self.note(...)` in the world's file of the actor
//! where it happens. [`World::note`] hands
//! it to every listener that hears it, in a fixed order: the books
//! ([`observe::Observers`]: per request outcome, per ladder step, per
//! dependency), the time series, the request tracer ([`trace`]) and the
//! limiters' admissions (a request they let in is done). The notes and who
//! hears each: the [`notes`] module docs. The books and the tracer are
//! private to [`world`], so an actor cannot reach them around a note; it may
//! ask the fan-out a question (whether the books take their slow path, the
//! time series' call sites), and the test `lifecycle_notes` in `tests/it`
//! names any other way to a listener (a limiter's done notice, say).
//!
//! # Adding a listener
//!
//! A new book, or a policy or balancer that learns from each answer, hears the
//! notes; no actor changes.
//!
//! 1. Its state: a field of [`World`](world::World) (or of the books, for a
//!    figure of the run), a private field created in `World::new`.
//! 2. `src/sim/world/fanout.rs`: in [`World::note`], one call in the arm of each note
//!    it hears, placed where its order among the other listeners of that note
//!    matters (a listener that reads the request hears it before its slot is
//!    freed: every request note is given before), and its column in the
//!    module's table.
//! 3. A step nobody notes yet: a variant of `Note` carrying what the listeners
//!    need, given with `self.note(...)` in the world's file of the actor
//!    where the step happens.
//!
//! # Adding a handler kind
//!
//! 1. Add the variant to `model::Handler` (and its raw keys and validation in
//!    `scenario`).
//! 2. Write `src/sim/<kind>.rs`: its state struct (private fields) with the
//!    methods that take what they need (the instant, the request's record) and
//!    say what becomes of a request, knowing nothing of the world (as
//!    [`plan`] and [`server`] do). Then `src/sim/world/<kind>.rs`, the world's
//!    file that puts requests to it: an `arrive` reaction (the request passed
//!    its middleware) and an `abandon` reaction (its client gave up), which
//!    end each request with `World::respond`. Its state is a private field of
//!    `World`, created in `World::new` (`world/mod.rs`, with the file's `mod`
//!    line).
//! 3. Register it: one arm in each `match` of `world/handler.rs` (`handle`,
//!    `abandon`, `cancel_work`).
//!
//! A handler that calls others uses the call (`world/call.rs`): `World::call`
//! starts a call from a `Caller` to a `Target` with a time cap, and the answer
//! comes back through `World::call_resolved`, which routes it to the caller's
//! file under `world/`.
//!
//! # Adding a client policy
//!
//! A policy sits in the call, between the caller and the callee: `World::call` is
//! the one place a call begins, `call_answered` / `call_timeout` the places its
//! attempts end. A policy (retries, hedging, a breaker) decides there whether to
//! send another attempt or resolve the call for its caller; the caller and the
//! callee do not change. Give the policy its own module with its state per
//! (caller, policy, target), and keep the no-policy path free of extra work.
//! The policies live in [`policy`], one file per kind, registered in its
//! `mod.rs`; they know nothing of the world, and say what to do (send an
//! attempt, wait until a time, resolve the call), which `world/policy.rs`
//! carries out: a kind that adds a step adds its arm there.
//!
//! # Adding a retry budget
//!
//! A retry budget is a kind (`crate::kinds`), declared once:
//!
//! 1. Write `src/kinds/budget/<kind>.rs`: the type of its checked keys
//!    implementing `budget::Kind` (its `Decl`: name, keys, defaults and
//!    ranges; `from_keys` for the checks a range cannot say; `start`, the
//!    state a policy state begins with) and that state implementing
//!    `budget::Rule` (what it counts when a first try goes and an attempt
//!    ends, whether a retry may go and what it holds for it). Test the rule
//!    on the state alone.
//! 2. Add one line to the `kinds!` list in `src/kinds/budget/mod.rs`.
//!
//! Validation reads its keys from the declaration (the kind, types, ranges,
//! a key of another kind, the closest name to a misspelt one), the model
//! holds it as a `RetryBudget`, and [`policy`] runs its rule; none of them
//! changes. Its row in docs/scenarios.md is checked against the declaration.
//!
//! # Adding a limiter algorithm
//!
//! A limiter algorithm is a kind (`crate::kinds`), declared once, in one of
//! two families:
//!
//! - a rate algorithm: write `src/kinds/rate/<kind>.rs`, the type of its own
//!   checked keys implementing `rate::Kind` (its `Decl`, `from_keys`,
//!   `start`: a fresh bucket's state) and that state implementing
//!   `rate::Rule` (`earliest`: the first instant at or after `t` one more
//!   request may pass; `take`: what a pass changes; `forget`). Add one line
//!   to the `kinds!` list in `src/kinds/rate/mod.rs`.
//! - a concurrency algorithm: write `src/kinds/concurrency/<kind>.rs`, its
//!   keys implementing `concurrency::Kind` (`Decl`, `from_keys`,
//!   `max_limit`, `start`: its first limit and state) and the state
//!   implementing `concurrency::Rule` (`sample`: what a request's end does to
//!   the limit; `catch_up`: what time alone does). Add one line to the
//!   `kinds!` list in `src/kinds/concurrency/mod.rs`.
//!
//! Validation, the model (`LimiterRule`), the limiter actor and its
//! admission seam ([`limiter::Admission`]) do not change; test the rule on
//! its state alone. A new *family* (neither a rate nor a concurrency limit)
//! is a variant of `Admitter` in `src/sim/limiter/admitter.rs` with its
//! `Admission` impl: `try_admit(limiter, now)` decides a request, and
//! `on_done` hears once when a request it admitted is done (when that is:
//! the [`limiter`] module docs).
//!
//! A state that cannot know when room frees up (a concurrency limit) answers
//! `Pass` or `Reject`, never `Delay`: a throttle hold ends at an instant known
//! when the request arrives.
//!
//! # Adding a fault kind
//!
//! A fault kind is a kind (`crate::kinds`), declared once:
//!
//! 1. Write `src/kinds/fault/<kind>.rs`: the type of its checked keys
//!    implementing `fault::Kind` (its `Decl`; `ON`, what it acts on;
//!    `from_keys`; `effect`, what it does while it acts). A kind with one
//!    `value` key is one call of the `valued!` macro there.
//! 2. Add one line to the `kinds!` list in `src/kinds/fault/mod.rs`.
//!
//! Its window (`at_ms`, `for_ms`) and `target` are read for every kind;
//! validation, the model's `Fault`, [`faults`] and the actors do not change.
//! An `Effect` is a question the actors already ask at their hook points (how
//! long work starting now takes, how many slots, whether work fails or the
//! target is down, how fast a workload sends, when it pauses), with its rule
//! for overlapping faults in [`faults`]. A kind with a new effect adds its
//! variant there, its question in `Faults` and the actor's call to it. Its
//! row in docs/scenarios.md is checked against the declaration.
//!
//! # The server's files
//!
//! [`server`] is a folder, one job per file: `mod.rs` holds every instance of
//! the run and the per-request maps, `instance.rs` one instance's slots and
//! queue and a request's life there, `queue/` the queue disciplines,
//! `replicas.rs` which instance a request goes to, `faults.rs` what `down` and
//! `slots` faults do to an instance, `stats.rs` the figures per server and
//! per replica (a leaf the observers and the time series read). The world
//! carries out each step (`world/server.rs`).
//!
//! # Adding a queue discipline
//!
//! 1. Write `src/sim/server/queue/<kind>.rs`: a small type implementing
//!    `queue::Discipline` (`joined` returns a waiter's queue timeout, if it
//!    sheds on time; `newest_first` says which waiter a freed slot takes;
//!    `watches` is false when neither depends on the queue's history, so the
//!    server calls nothing per request), with a unit test of its order on the
//!    test driver `queue::drive`.
//! 2. Register it in `server/queue/mod.rs`: its `mod` line and one arm in
//!    `queue::of`, which builds an instance's discipline from its keys.
//! 3. Outside `server/queue/`, three files: `src/model/services.rs` (a `QueueOrder`
//!    variant and its name in `QueueOrder::NAMES`, which validation reads),
//!    `src/scenario/raw.rs` (the names in the `order` key's doc comment) and
//!    `docs/scenarios.md` (the `order` key). A discipline with keys of its own
//!    (as `codel`) also reads them in `src/scenario/validate/services.rs` into
//!    a field of `model::Server`.
//!
//! # Adding a balancer
//!
//! A balancer is a kind (`crate::kinds`), declared once:
//!
//! 1. Write `src/kinds/balance/<kind>.rs`: the type of its checked keys
//!    implementing `balance::Kind` (its `Decl`: name, keys, defaults and
//!    ranges; `from_keys` for the checks a range cannot say, given the
//!    replicas; `make`, its balancer over N replicas with its own random
//!    stream) and that balancer implementing `balance::Balance`: `pick` gets
//!    the replicas' outstanding counts as its caller sees them and returns
//!    an index; any state it needs, it owns (a new kind's draws come from the
//!    stream it is given, so existing kinds' draws stay as they are). A kind
//!    that learns from answers (`peak_ewma`) says so in `hears` and hears
//!    each request's end in `on_done`; `pick_at` gives it the clock. A kind
//!    with state per replica (weights, costs) overrides `pick_among`, the
//!    pick among the replicas outlier detection has not ejected
//!    ([`balance`]'s `outlier.rs`). With `max_conn` the picker's queue asks
//!    it `skips_full` (pick among the replicas with room, or queue when its
//!    pick is full) and `queue_first` (wait behind anyone queued); a kind
//!    that breaks ties by when counts changed says `reads_since`. Test its
//!    rule on a hand-made view.
//! 2. Add one line to the `kinds!` list in `src/kinds/balance/mod.rs`.
//!
//! Validation reads its keys from the declaration, `replicas.csv` names it,
//! and the pickers in [`balance`] make it; none of them changes. The keys
//! table in docs/scenarios.md is checked against the declarations.
//!
//! # Adding a table
//!
//! A table (one CSV file, printed in the report unless it is a chart's) reads
//! what a run measured. Counts, sums and time averages are kept as the run goes
//! (streaming: no per-event log), then analysed.
//!
//! 1. What the run must measure, if no statistic holds it yet: a field of the
//!    actor's own statistics (`server::stats`, `policy::CallStats`,
//!    `limiter::LimiterResults`, `result::WorkloadStats`), filled where that
//!    actor already notes the step, and carried out in [`RunResult`].
//! 2. `src/analysis/<table>.rs`: a `tables(results, &mut tables)` building the
//!    `Table` from every compare row's [`RunResult`] (never from the first row's
//!    model alone), with `results.table(...)` for its headers; if it reads
//!    percentiles of a large statistic, an `asks` beside it (see
//!    `analysis/asks.rs`) so that they are selected on every core first.
//! 3. Outside it, at most three files: `src/analysis/mod.rs` (its `mod` line
//!    and one call in `build`), `docs/scenarios.md` (the file, when it is
//!    written, its headers), and the statistics' file of step 1 if it needed a
//!    field. Report, CSV, HTML and sweep metrics follow from the `Table`.

mod ahead;
pub(crate) mod balance;
mod call;
mod call_sites;
mod context;
mod dependency;
mod dependency_replicas;
mod fast_paths;
mod faults;
pub mod latency;
pub mod limiter;
mod notes;
mod observe;
mod pauses;
mod plan;
mod policy;
mod request;
mod result;
mod run_limits;
mod server;
mod slots;
mod timers;
pub mod timeseries;
pub mod trace;
mod vocab;
mod workload;
mod world;

use crate::engine::Ticks;
use crate::error::Error;
use crate::model::Model;
pub use dependency_replicas::DependencyReplicaStats;
pub use limiter::LimiterResults;
pub use policy::CallStats;
pub use result::{DependencyStats, Outcomes, RunResult, StepStats, WorkloadStats};
pub use server::stats::{EjectionRow, ServerStats};
pub use timeseries::{DEFAULT_WINDOW_MS, MAX_SERIES_ROWS};
pub(crate) use vocab::FastMap;
pub use vocab::Outcome;
use world::World;

/// Runs `model`'s replication `replication` with the model's seed.
pub fn run(model: &Model, replication: u64) -> Result<RunResult, Error> {
    run_with(model, replication, false)
}

/// [`run`], with `draw_ahead`: the random streams worth it (latencies other than
/// constants and cycles, closed populations' think times, open workloads'
/// Poisson gaps) are drawn ahead by a helper thread on another core. The result
/// is the same either way; with a spare core it comes sooner (M2 about 15 %,
/// BENCHMARKS.md). The helper's CPU time is the draws it takes over; it is only
/// worth it when a core would otherwise sit idle.
pub fn run_with(model: &Model, replication: u64, draw_ahead: bool) -> Result<RunResult, Error> {
    let mut world = World::new(model, replication);
    if draw_ahead {
        world.draw_ahead();
    }
    world.start()?;
    world.run_loop()?;
    counted(model, world.finish_run())
}

/// A run with a warm-up that sent nothing at or after it has no figure to
/// give: every outcome would be 0. It fails, naming the key (a workload of
/// known length is refused before the run, `validate::faults::check_warmup`).
fn counted(model: &Model, result: RunResult) -> Result<RunResult, Error> {
    if model.warmup > Ticks::ZERO && result.outcomes.requests == 0 {
        return Err(Error::Limit(format!(
            "scenario `{}`: no request was sent at or after scenario.warmup_ms = {} ms (the last request left at {} ms), so every outcome figure would be 0: shorten the warm-up or lengthen the workload",
            model.name,
            crate::format::format_number(model.warmup.as_ms()),
            crate::format::format_number(result.last_exit_ms)
        )));
    }
    Ok(result)
}

/// What a run of `model` gives before any event: its books as the model shapes
/// them (per service, dependency, limiter, ladder step and fault), with no
/// request sent. The tables built from it have the columns and the rows the
/// scenario alone decides, which is what `resim check` knows of a run's
/// metrics without running it.
pub fn shape(model: &Model) -> RunResult {
    World::new(model, 0).finish_run()
}

/// [`run_with`], recording the life of the first `requests` requests the
/// workloads send (see [`trace`]), in at most about `max_events` spans and
/// instants (past them no further request is traced). The result is the same
/// as `run`'s.
pub fn run_traced(
    model: &Model,
    replication: u64,
    requests: u32,
    max_events: u64,
    draw_ahead: bool,
) -> Result<(RunResult, trace::Trace), Error> {
    let select = trace::Selection {
        first: requests,
        sample: None,
        max_spans: 0,
    };
    run_recorded(model, replication, select, max_events, draw_ahead)
}

/// [`run_with`], recording the requests `select` picks (see [`trace`]): the
/// first N (while `trace.json`'s `max_events` last), and with spans a share of
/// all of them. The result is the same as `run`'s.
pub fn run_recorded(
    model: &Model,
    replication: u64,
    select: trace::Selection,
    max_events: u64,
    draw_ahead: bool,
) -> Result<(RunResult, trace::Trace), Error> {
    let mut world = World::new(model, replication);
    if draw_ahead {
        world.draw_ahead();
    }
    world.trace_with(trace::Tracer::new(model, select, max_events));
    world.start()?;
    world.run_loop()?;
    let tracer = world.take_tracer().map(|t| t.finish()).unwrap_or_default();
    Ok((counted(model, world.finish_run())?, tracer))
}
