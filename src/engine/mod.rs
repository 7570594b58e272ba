//! The discrete-event core: a virtual clock in integer ticks, an event queue with
//! FIFO ties and cancellation, and seeded random streams.
//!
//! Nothing here knows about scenario files, CSV or the command line. A simulation
//! owns an [`EventQueue`] of its own event type, pops the next event, advances its
//! clock to the event's time and reacts, scheduling further events:
//!
//! ```
//! use resim::engine::{EventQueue, Lane, Ticks};
//! let mut q = EventQueue::new();
//! let reply = q.schedule(Ticks::from_ms(5.0), Lane::Normal, "reply");
//! q.schedule(Ticks::from_ms(5.0), Lane::Deadline, "timeout");
//! q.schedule(Ticks::from_ms(1.0), Lane::Normal, "early");
//! assert_eq!(q.pop().map(|(_, e)| e), Some("early"));
//! assert_eq!(q.pop().map(|(_, e)| e), Some("reply")); // a reply at the deadline is in time
//! assert!(!q.cancel(reply)); // already delivered
//! ```

mod queue;
mod rng;
mod time;

pub use queue::{EventKey, EventQueue, Lane, Payload, RemovalQueue, Scheduler};
pub use rng::{Stream, stream};
pub use time::Ticks;
