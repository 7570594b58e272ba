//! Signs of life on stderr for long work: a bar that appears only when the work
//! takes more than a second and stderr is a terminal (never when piped, never on
//! stdout), and an ETA that stays quiet until it has enough to go on.

use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long work runs before its bar appears.
pub const DELAY: Duration = Duration::from_secs(1);

/// The `{steady_eta}` template key: elapsed x remaining / done, the average rate
/// since the start (steady, unlike a rate from the last few ticks, which is
/// dominated by start-up), shown only once 2 % of the work, and at least 2
/// seconds, are behind it; `eta --` before.
pub fn steady_eta(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = w.write_str(&eta_text(
        state.pos(),
        state.len().unwrap_or(0),
        state.elapsed(),
    ));
}

fn eta_text(pos: u64, len: u64, elapsed: Duration) -> String {
    if pos == 0 || pos * 50 < len || elapsed < Duration::from_secs(2) {
        return "eta --".into();
    }
    let left = elapsed.as_secs_f64() * (len.saturating_sub(pos)) as f64 / pos as f64;
    format!("eta {}", HumanDuration(Duration::from_secs_f64(left)))
}

/// A bar over `len` units that is drawn on stderr only if `visible` and the work
/// is still running after [`DELAY`]. Drop or [`Delayed::finish`] clears it.
pub struct Delayed {
    bar: ProgressBar,
    done: Arc<AtomicBool>,
    waiter: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Delayed {
    pub fn new(len: u64, visible: bool, template: &str) -> Delayed {
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.with_key("steady_eta", steady_eta));
        }
        let done = Arc::new(AtomicBool::new(false));
        let waiter = visible.then(|| {
            let (bar, done) = (bar.clone(), done.clone());
            std::thread::spawn(move || {
                let start = Instant::now();
                while start.elapsed() < DELAY {
                    if done.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                if !done.load(Ordering::Relaxed) {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    bar.enable_steady_tick(Duration::from_millis(200));
                }
            })
        });
        Delayed {
            bar,
            done,
            waiter: Mutex::new(waiter),
        }
    }

    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    pub fn finish(&self) {
        self.done.store(true, Ordering::Relaxed);
        if let Ok(mut w) = self.waiter.lock()
            && let Some(h) = w.take()
        {
            let _ = h.join();
        }
        self.bar.finish_and_clear();
    }
}

impl Drop for Delayed {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eta(pos: u64, len: u64, secs: u64) -> String {
        eta_text(pos, len, Duration::from_secs(secs))
    }

    #[test]
    fn the_eta_waits_for_enough_work_and_then_extrapolates_the_average() {
        assert_eq!(eta(1, 1000, 1), "eta --");
        assert_eq!(eta(10, 1000, 5), "eta --", "1 % is not enough");
        // 10 % in 2 s: 18 s to go
        assert_eq!(eta(100, 1000, 2), "eta 18 seconds");
    }
}
