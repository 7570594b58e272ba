//! Drawing ahead: a latency stream whose draws depend on nothing but its own
//! sampler and random stream can be drawn on another core while the run loop
//! goes on. A helper thread fills chunks of draws; the actor reads them in order.
//! The values are the very ones the actor would have drawn itself (same sampler,
//! same stream, same order), so a run's results do not depend on whether it drew
//! ahead: only its wall time does.
//!
//! A stream is handed over only when its draws cannot depend on the run: the
//! sampler is its stream's only user, and nothing the run does changes the
//! sampler (faults stretch a draw after it is made). The types keep that rule:
//! an actor holds its latency stream only inside a [`Draws`], which owns it and
//! offers nothing but the next draw; handing one over moves the stream into the
//! helper's job. Only samplers whose draw costs clearly more than a read are
//! handed over ([`costly`]: lognormal, gamma, Weibull, Pareto and mixtures of
//! them); measured on the peer models, drawing cheaper ones (exponential
//! service times, an open workload's Exp(1) gaps) ahead cost CPU time and, on
//! the retry chain, wall time too.
//!
//! The seam: each actor kind that holds latency streams lists them (`draws()`
//! of servers, dependencies and workloads), `World::draw_ahead` offers them to
//! [`start`], and `crate::DrawAhead` is the user's choice (`--draw-ahead`).

use super::latency::Sampler;
use crate::engine::{Stream, Ticks};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, channel, sync_channel};
use std::thread::JoinHandle;

/// Draws per chunk: a chunk's hand-over (two channel operations) is spread over
/// this many reads.
const CHUNK: usize = 1024;
/// Chunks per stream, the one being read included: the helper stays this far
/// ahead.
const CHUNKS: usize = 32;
/// Draws per stream made by the run itself when it hands the stream over.
const FIRST: usize = 256;
/// The most streams handed over to the helper: each holds `CHUNKS` chunks
/// (256 KB) and costs the helper `CHUNKS` x `CHUNK` draws before it waits, so
/// 100,000 clients' streams took 25 GB and 40 s before the run could end. The
/// others stay with their actors (the results are the same either way).
const MAX_STREAMS: usize = 64;
/// The helper's sleep when no chunk came back since its last look.
const NAP: std::time::Duration = std::time::Duration::from_micros(1000);

/// Where an actor's latencies come from: its sampler on its own stream, drawn
/// here or ahead. The stream is inside and nothing but [`Draws::sample`] reaches
/// it, so a stream handed over cannot be drawn anywhere else.
// Each actor holds one for the whole run, in place (as it held its sampler and
// stream before): boxing the large variant would add a pointer to every draw
// made here, which is what sweeps do.
pub(crate) struct Draws(Latencies);

#[allow(clippy::large_enum_variant)]
enum Latencies {
    /// Drawn by the actor, when it needs one.
    Here {
        /// The latency model.
        sampler: Sampler,
        /// Its stream.
        rng: Stream,
    },
    /// Drawn ahead by the helper thread.
    Ahead(Feed),
}

impl Draws {
    /// The actor's own sampler on its own stream.
    pub fn here(sampler: Sampler, rng: Stream) -> Draws {
        Draws(Latencies::Here { sampler, rng })
    }

    /// The next latency.
    #[inline]
    pub fn sample(&mut self) -> Ticks {
        match &mut self.0 {
            Latencies::Here { sampler, rng } => sampler.sample(rng),
            Latencies::Ahead(feed) => Ticks(feed.next()),
        }
    }
}

/// Whether a sampler's draw costs clearly more than reading a value back:
/// those that take a logarithm, an exponential or a normal draw (lognormal,
/// gamma, Weibull, Pareto, a mixture of any). A constant or a cycle costs
/// less to draw than to read back, and an exponential (a ziggurat lookup), a
/// uniform or an empirical draw (one uniform each) about as much, so drawing
/// them ahead only adds the helper's time to the run's.
fn costly(sampler: &Sampler) -> bool {
    match sampler {
        Sampler::Constant(_)
        | Sampler::Cycle { .. }
        | Sampler::Exponential(_)
        | Sampler::Uniform { .. }
        | Sampler::Empirical(_)
        | Sampler::Tail(_) => false,
        Sampler::Mixture(parts) => parts.iter().any(|(_, p)| costly(p)),
        _ => true,
    }
}

/// What the helper draws for one stream: its sampler on its stream, as words.
struct Job(Sampler, Stream);

impl Job {
    #[inline]
    fn draw(&mut self) -> u64 {
        self.0.sample(&mut self.1).0
    }
}

impl Draws {
    /// Worth drawing ahead: drawn here, by a sampler whose draw costs clearly
    /// more than a read and its share of the helper's hand-over.
    fn worth_it(&self) -> bool {
        matches!(&self.0, Latencies::Here { sampler, .. } if costly(sampler))
    }

    /// Takes the stream (one `worth_it`) over, leaving `feed` in its place.
    fn take(&mut self, feed: Feed) -> (Job, &mut Feed) {
        match std::mem::replace(&mut self.0, Latencies::Ahead(feed)) {
            Latencies::Here { sampler, rng } => match &mut self.0 {
                Latencies::Ahead(feed) => (Job(sampler, rng), feed),
                Latencies::Here { .. } => unreachable!("the feed was just put there"),
            },
            Latencies::Ahead(_) => unreachable!("a stream drawn ahead is not handed over"),
        }
    }
}

/// The reading end of one stream drawn ahead.
pub(crate) struct Feed {
    /// The chunk being read.
    chunk: Vec<u64>,
    /// The next value's place in it.
    pos: usize,
    /// This stream's number at the helper.
    id: usize,
    /// Filled chunks, in draw order.
    full: Receiver<Vec<u64>>,
    /// Read chunks, back to the helper to be filled again.
    empty: SyncSender<(usize, Vec<u64>)>,
}

impl Feed {
    #[inline]
    fn next(&mut self) -> u64 {
        match self.chunk.get(self.pos) {
            Some(&v) => {
                self.pos += 1;
                v
            }
            None => self.refill(),
        }
    }

    /// The chunk is read: back it goes, and the next one (drawn by now, as a
    /// rule) is taken.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) -> u64 {
        let read = std::mem::take(&mut self.chunk);
        if read.len() == CHUNK {
            // (a helper that stopped takes nothing back; the first, short
            // chunk, drawn by the run itself, is not the helper's)
            let _ = self.empty.send((self.id, read));
        }
        self.chunk = self
            .full
            .recv()
            .expect("the helper draws until the run is over");
        self.pos = 1;
        self.chunk[0]
    }
}

/// The helper thread. Dropping it stops the thread and waits for it: the feeds
/// must not be read after that.
pub(crate) struct Helper {
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            // out of its nap at once
            t.thread().unpark();
            // the thread never panics short of a bug, which the run reports itself
            let _ = t.join();
        }
    }
}

/// Hands the streams worth it over to a new helper thread, which draws ahead
/// until their feeds are dropped. None when none is worth it, or when no thread
/// can be started (the streams then stay where they were).
pub(crate) fn start<'a>(streams: impl IntoIterator<Item = &'a mut Draws>) -> Option<Helper> {
    let streams: Vec<&mut Draws> = streams
        .into_iter()
        .filter(|d| d.worth_it())
        .take(MAX_STREAMS)
        .collect();
    if streams.is_empty() {
        return None;
    }
    type Jobs = (Vec<(Job, SyncSender<Vec<u64>>)>, Vec<Vec<u64>>);
    let (jobs_tx, jobs_rx) = channel::<Jobs>();
    // room for every chunk there is: a read chunk's return never waits, and a
    // bounded channel allocates nothing per message (an unbounded one does, a
    // block every 31)
    let (empty_tx, empty_rx) = sync_channel(streams.len() * CHUNKS);
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    // the thread first, so that nothing is taken over if it cannot start
    let thread = std::thread::Builder::new()
        .name("resim-draws".into())
        .spawn(move || {
            if let Ok((jobs, chunks)) = jobs_rx.recv() {
                draw(jobs, chunks, &empty_rx, &stopped);
            }
        })
        .ok()?;
    let jobs: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(id, h)| {
            let (full_tx, full_rx) = sync_channel(CHUNKS);
            let feed = Feed {
                chunk: Vec::new(),
                pos: 0,
                id,
                full: full_rx,
                empty: empty_tx.clone(),
            };
            let (mut job, feed) = h.take(feed);
            // the first draws are made here, so that the run starts without
            // waiting for the thread to start (and a short run never waits)
            feed.chunk = (0..FIRST).map(|_| job.draw()).collect();
            (job, full_tx)
        })
        .collect();
    // Every chunk the helper will use, allocated here: a run allocates the
    // same whatever its length, and however far the helper got before it ended.
    let chunks = (0..jobs.len() * CHUNKS)
        .map(|_| Vec::with_capacity(CHUNK))
        .collect();
    // the thread waits for exactly this
    let _ = jobs_tx.send((jobs, chunks));
    Some(Helper {
        thread: Some(thread),
        stop,
    })
}

/// The helper's work: every stream's chunks filled in turn, then each read chunk
/// filled again as it comes back. Ends when told to stop or the feeds are gone.
fn draw(
    mut jobs: Vec<(Job, SyncSender<Vec<u64>>)>,
    mut chunks: Vec<Vec<u64>>,
    empty: &Receiver<(usize, Vec<u64>)>,
    stop: &AtomicBool,
) {
    let fill = |(job, full): &mut (Job, SyncSender<Vec<u64>>), mut chunk: Vec<u64>| {
        chunk.clear();
        chunk.extend((0..CHUNK).map(|_| job.draw()));
        // at most CHUNKS chunks of a stream exist, so this never waits
        full.send(chunk).is_ok()
    };
    for _ in 0..CHUNKS {
        for job in &mut jobs {
            let chunk = chunks.pop().unwrap_or_default();
            if stop.load(Ordering::Relaxed) || !fill(job, chunk) {
                return;
            }
        }
    }
    // Between rounds the helper naps on a timer (1 ms). The run loop never
    // wakes it: a read chunk goes back with no system call, and the chunks
    // still ahead (CHUNKS - 1 per stream: M1 reads its one stream's 31 in
    // about 2.5 ms) last longer than a nap. Few wake-ups matter when the other
    // core is not free after all, since each may take the run loop's core from
    // it. Measured on M3: a helper blocked on the channel, woken by each
    // returned chunk, made it 3 % slower instead of 6 % faster; one spinning
    // between looks was as fast as this but kept its core busy (0.62 s of CPU
    // against 0.37 s); one napping 100 us with 8 chunks ahead made it 15 %
    // slower than drawing here while another process kept the second core
    // busy, this one 0-4 % (M1, M2, M3).
    while !stop.load(Ordering::Relaxed) {
        let mut filled = false;
        loop {
            match empty.try_recv() {
                Ok((id, chunk)) => {
                    if !fill(&mut jobs[id], chunk) {
                        return;
                    }
                    filled = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        if !filled {
            std::thread::park_timeout(NAP);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;
    use crate::model::Latency;

    fn lognormal() -> Latency {
        Latency::LogNormal {
            mu: 2.0,
            sigma: 0.5,
        }
    }

    /// Drawn ahead, a stream gives the values its actor would have drawn, in
    /// order, across many chunks.
    #[test]
    fn drawn_ahead_the_values_are_the_ones_drawn_here() {
        let n = 5 * CHUNKS * CHUNK + 7;
        let mut rng = stream(3, 0, "dependency:a");
        let mut here = Draws::here(Sampler::new(&lognormal(), &mut rng), rng.clone());
        let mut ahead = Draws::here(Sampler::new(&lognormal(), &mut rng), rng);
        let helper = start([&mut ahead]);
        assert!(helper.is_some());
        assert!(matches!(ahead.0, Latencies::Ahead(_)));
        for i in 0..n {
            assert_eq!(ahead.sample(), here.sample(), "latency draw {i}");
        }
        drop(helper);
    }

    /// At most `MAX_STREAMS` streams go to the helper, the first offered; the
    /// others stay with their actors, and every stream still gives its values.
    #[test]
    fn past_max_streams_the_others_stay_here() {
        let n = MAX_STREAMS + 3;
        let mut offered: Vec<Draws> = (0..n)
            .map(|i| {
                let mut rng = stream(5, 0, &format!("dependency:{i}"));
                Draws::here(Sampler::new(&lognormal(), &mut rng), rng)
            })
            .collect();
        let mut here: Vec<Draws> = (0..n)
            .map(|i| {
                let mut rng = stream(5, 0, &format!("dependency:{i}"));
                Draws::here(Sampler::new(&lognormal(), &mut rng), rng)
            })
            .collect();
        let helper = start(offered.iter_mut());
        assert!(helper.is_some());
        for (i, d) in offered.iter().enumerate() {
            assert_eq!(
                matches!(d.0, Latencies::Ahead(_)),
                i < MAX_STREAMS,
                "stream {i}"
            );
        }
        for _ in 0..CHUNK + 1 {
            for (a, h) in offered.iter_mut().zip(&mut here) {
                assert_eq!(a.sample(), h.sample());
            }
        }
        drop(helper);
    }

    /// Cheap samplers stay with their actor (no thread for them), and a
    /// helper stops when dropped while its feeds are still there.
    #[test]
    fn cheap_streams_stay_and_a_dropped_helper_stops() {
        let mut rng = stream(4, 0, "server:s");
        let mut constant = Draws::here(
            Sampler::new(&Latency::Constant(Ticks(5)), &mut rng),
            rng.clone(),
        );
        let mut exponential = Draws::here(
            Sampler::new(&Latency::Exponential { mean_ms: 2.0 }, &mut rng),
            rng.clone(),
        );
        assert!(start([&mut constant, &mut exponential]).is_none());
        assert!(matches!(constant.0, Latencies::Here { .. }));
        assert_eq!(constant.sample(), Ticks(5));

        let mut drawn = Draws::here(Sampler::new(&lognormal(), &mut rng), rng);
        let helper = start([&mut constant, &mut drawn]);
        assert!(matches!(constant.0, Latencies::Here { .. }));
        assert!(matches!(drawn.0, Latencies::Ahead(_)));
        drawn.sample();
        // joins the thread, which must end although `drawn` still holds its feed
        drop(helper);
    }
}
