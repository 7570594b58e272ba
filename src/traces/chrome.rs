//! `resim run --trace N`: `trace.json` in Chrome's trace-event format, which
//! <https://ui.perfetto.dev> and `chrome://tracing` open.
//!
//! One process (`pid`) per compare row, named by the row's labels; within it one
//! row per traced request, named `#k ROUTE`. Spans are complete events (`"ph":
//! "X"`, `ts` and `dur` in microseconds of virtual time), cancellations and calls
//! that failed or were refused at once are instant events (`"ph": "i"`), row
//! names are metadata events (`"ph": "M"`). Each span's `args` end with its place
//! in the request's tree (see [`sim::trace`](crate::sim::trace)): `span_id`,
//! `parent_id` (absent for a root) and `outlived_id`; an instant's with the
//! `parent_id` of the span it happened in.
//!
//! Complete events on one thread must nest (the format's rule; Perfetto refuses
//! overlapping ones): a request's parallel calls, or work that runs on after its
//! caller gave up, overlap. So each request's spans are packed into as few lanes
//! as nest properly: lane 0 holds the request itself, and an overlapping span goes
//! to the first lane where it nests (a row `#k ROUTE (2)` just below). Every
//! event's order is fixed, so the file is deterministic.

use crate::engine::Ticks;
use crate::error::Error;
use crate::sim::trace::{Arg, Trace};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The file's name in the output folder.
pub const FILE: &str = "trace.json";

fn us(t: Ticks) -> Value {
    // ticks are nanoseconds: microseconds with three decimals, exactly
    json!(t.0 as f64 / 1000.0)
}

/// A span's or instant's details, then its place in the tree: `span_id`,
/// `parent_id` (absent for a root) and `outlived_id` (the span it outlived).
fn args(list: &[(&'static str, Arg)], ids: &[(&'static str, Option<u64>)]) -> Value {
    let mut m = Map::new();
    for (k, v) in list {
        let v = match v {
            Arg::Text(s) => Value::String(s.clone()),
            Arg::Int(i) => json!(i),
            Arg::Ms(x) => json!(x),
        };
        m.insert((*k).to_string(), v);
    }
    for (k, id) in ids {
        if let Some(id) = id {
            m.insert((*k).to_string(), json!(id));
        }
    }
    Value::Object(m)
}

fn metadata(name: &str, pid: usize, tid: u64, args: Value) -> Value {
    json!({"name": name, "ph": "M", "pid": pid, "tid": tid, "args": args})
}

/// Which of two spans with the same times holds the other (lower: outer).
fn rank(cat: &str) -> u8 {
    match cat {
        "request" => 0,
        "call" => 1,
        "attempt" => 2,
        "service" => 3,
        "queue" => 4,
        _ => 5,
    }
}

/// Assigns each span of one request a lane where it nests: returns the lane of
/// each span (by index into `spans`) and the number of lanes.
fn pack(spans: &[(Ticks, Ticks, u8)]) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    // earlier first; of two that start together the longer holds the shorter, and
    // of two equal ones the outer kind (a call holds its service)
    order.sort_by_key(|&i| (spans[i].0, std::cmp::Reverse(spans[i].1), spans[i].2, i));
    let mut lanes: Vec<Vec<Ticks>> = Vec::new();
    let mut lane_of = vec![0; spans.len()];
    for i in order {
        let (start, end, _) = spans[i];
        let mut placed = None;
        for (l, stack) in lanes.iter_mut().enumerate() {
            while stack.last().is_some_and(|&e| e <= start) {
                stack.pop();
            }
            if placed.is_none() && stack.last().is_none_or(|&e| e >= end) {
                stack.push(end);
                placed = Some(l);
            }
        }
        let l = placed.unwrap_or_else(|| {
            lanes.push(vec![end]);
            lanes.len() - 1
        });
        lane_of[i] = l;
    }
    (lane_of, lanes.len().max(1))
}

/// The trace file's text, written event by event: the bytes
/// `serde_json::to_vec_pretty` gives for the whole document, without holding
/// every event as a JSON value at once (about 4 KB each: 100,000 spans took
/// 700 MB).
struct Pretty {
    bytes: Vec<u8>,
    events: usize,
}

impl Pretty {
    fn new() -> Pretty {
        Pretty {
            bytes: b"{\n  \"traceEvents\": [".to_vec(),
            events: 0,
        }
    }

    /// Appends one element of `traceEvents`, indented as the whole document's
    /// pretty form indents it (a JSON string holds no raw line break, so
    /// indenting by line is exact).
    fn push(&mut self, event: Value) -> Result<(), Error> {
        let text = serde_json::to_string_pretty(&event)
            .map_err(|e| Error::Other(format!("{FILE}: {e}")))?;
        self.bytes
            .extend_from_slice(if self.events == 0 { b"\n" } else { b",\n" });
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.bytes.push(b'\n');
            }
            self.bytes.extend_from_slice(b"    ");
            self.bytes.extend_from_slice(line.as_bytes());
        }
        self.events += 1;
        Ok(())
    }

    fn finish(mut self, rest: &[(&str, Value)]) -> Result<Vec<u8>, Error> {
        self.bytes
            .extend_from_slice(if self.events == 0 { b"]" } else { b"\n  ]" });
        for (key, value) in rest {
            let text = serde_json::to_string_pretty(value)
                .map_err(|e| Error::Other(format!("{FILE}: {e}")))?;
            self.bytes
                .extend_from_slice(format!(",\n  {}: ", json!(key)).as_bytes());
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    self.bytes.extend_from_slice(b"\n  ");
                }
                self.bytes.extend_from_slice(line.as_bytes());
            }
        }
        self.bytes.extend_from_slice(b"\n}\n");
        Ok(self.bytes)
    }
}

/// The trace file of a run: one `(process name, trace)` per compare row.
pub fn render(rows: &[(String, Trace)]) -> Result<Vec<u8>, Error> {
    let mut events = Pretty::new();
    let mut tid: u64 = 0;
    for (row, (label, trace)) in rows.iter().enumerate() {
        let pid = row + 1;
        events.push(metadata("process_name", pid, 0, json!({"name": label})))?;
        events.push(metadata(
            "process_sort_index",
            pid,
            0,
            json!({"sort_index": pid}),
        ))?;
        let ids = Renumber::of(trace);
        let tracks = trace.tracks.len();
        let by_track = indices(tracks, trace.spans.iter().map(|s| s.track));
        let instants = indices(tracks, trace.instants.iter().map(|e| e.track));
        for (track, name) in trace.tracks.iter().enumerate() {
            // a request recorded for the spans only (`--spans`) is not drawn
            if trace.selected.get(track).is_some_and(|s| !s.trace) {
                continue;
            }
            let track = Track {
                trace,
                pid,
                name,
                spans: &by_track[track],
                instants: &instants[track],
                ids: &ids,
            };
            tid = track.write(&mut events, tid)?;
        }
    }
    events.finish(&[
        ("displayTimeUnit", json!("ms")),
        (
            "otherData",
            json!({"clock": "virtual time of the simulation (ts, dur in microseconds)"}),
        ),
    ])
}

/// The index of each item of a track (`tracks` tracks), in order.
fn indices(tracks: usize, of: impl Iterator<Item = u32>) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); tracks];
    for (i, track) in of.enumerate() {
        if let Some(v) = out.get_mut(track as usize) {
            v.push(i);
        }
    }
    out
}

/// Span ids as a run without `--spans` numbers them: requests recorded for the
/// spans only opened bars too, so the drawn ones are numbered again 1, 2, ...
/// in the order they opened (none when every request is drawn).
struct Renumber(Option<HashMap<u64, u64>>);

impl Renumber {
    fn of(trace: &Trace) -> Renumber {
        let drawn = |track: u32| trace.selected.get(track as usize).is_none_or(|s| s.trace);
        if (0..trace.tracks.len()).all(|t| drawn(t as u32)) {
            return Renumber(None);
        }
        let mut ids: Vec<u64> = trace
            .spans
            .iter()
            .filter(|s| drawn(s.track))
            .map(|s| s.id)
            .collect();
        ids.sort_unstable();
        Renumber(Some(
            ids.iter()
                .enumerate()
                .map(|(k, &id)| (id, k as u64 + 1))
                .collect(),
        ))
    }

    fn id(&self, old: Option<u64>) -> Option<u64> {
        match (&self.0, old) {
            (Some(map), Some(o)) => map.get(&o).copied().or(Some(o)),
            _ => old,
        }
    }
}

/// One request's track of a compare row (process `pid`): its spans and
/// instants (indices into the trace's).
struct Track<'a> {
    trace: &'a Trace,
    pid: usize,
    name: &'a str,
    spans: &'a [usize],
    instants: &'a [usize],
    ids: &'a Renumber,
}

impl Track<'_> {
    /// Writes the track's rows (a lane each where its spans overlap, thread
    /// ids after `tid`) and events; returns the last thread id taken.
    fn write(&self, events: &mut Pretty, mut tid: u64) -> Result<u64, Error> {
        let (trace, pid, name, spans) = (self.trace, self.pid, self.name, self.spans);
        let id = |old: Option<u64>| self.ids.id(old);
        let times: Vec<(Ticks, Ticks, u8)> = spans
            .iter()
            .map(|&i| {
                let s = &trace.spans[i];
                (s.start, s.end, rank(s.cat))
            })
            .collect();
        let (lane_of, lanes) = pack(&times);
        let first = tid + 1;
        for lane in 0..lanes {
            tid += 1;
            let row_name = if lane == 0 {
                name.to_string()
            } else {
                format!("{name} ({})", lane + 1)
            };
            events.push(metadata("thread_name", pid, tid, json!({"name": row_name})))?;
            events.push(metadata(
                "thread_sort_index",
                pid,
                tid,
                json!({"sort_index": tid}),
            ))?;
        }
        let mut track_events: Vec<(Ticks, std::cmp::Reverse<Ticks>, u8, u64, Value)> = Vec::new();
        for (k, &i) in spans.iter().enumerate() {
            let s = &trace.spans[i];
            let t = first + lane_of[k] as u64;
            let e = json!({
                "name": s.name, "cat": s.cat, "ph": "X",
                "ts": us(s.start), "dur": us(s.end - s.start),
                "pid": pid, "tid": t,
                "args": args(&s.args, &[
                    ("span_id", id(Some(s.id))),
                    ("parent_id", id(s.parent)),
                    ("outlived_id", id(s.outlived)),
                ]),
            });
            let dur = std::cmp::Reverse(s.end - s.start);
            track_events.push((s.start, dur, times[k].2, t, e));
        }
        for &i in self.instants {
            let e = &trace.instants[i];
            let v = json!({
                "name": e.name, "cat": e.cat, "ph": "i", "s": "t",
                "ts": us(e.at), "pid": pid, "tid": first,
                "args": args(&e.args, &[("parent_id", id(e.parent))]),
            });
            track_events.push((e.at, std::cmp::Reverse(Ticks::ZERO), 9, first, v));
        }
        // stable: ties keep the order the events happened in
        track_events.sort_by_key(|(start, dur, rank, t, _)| (*t, *start, *dur, *rank));
        for (.., v) in track_events {
            events.push(v)?;
        }
        Ok(tid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written event by event, the file is the whole document's pretty form
    /// byte for byte.
    #[test]
    fn the_file_written_by_event_is_the_documents_pretty_form() {
        let events = vec![
            json!({"name": "a \"quoted\"\nline", "ph": "M", "args": {"x": [1, 2], "e": {}}}),
            json!({"name": "b", "args": {}, "list": []}),
        ];
        let mut p = Pretty::new();
        for e in &events {
            p.push(e.clone()).unwrap();
        }
        let rest = [
            ("displayTimeUnit", json!("ms")),
            ("otherData", json!({"clock": "c", "n": {"deep": [1]}})),
        ];
        let streamed = p.finish(&rest).unwrap();
        let doc = json!({
            "traceEvents": events,
            "displayTimeUnit": "ms",
            "otherData": {"clock": "c", "n": {"deep": [1]}},
        });
        let mut whole = serde_json::to_vec_pretty(&doc).unwrap();
        whole.push(b'\n');
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            String::from_utf8(whole).unwrap()
        );
        let empty = Pretty::new().finish(&rest[..1]).unwrap();
        let mut whole =
            serde_json::to_vec_pretty(&json!({"traceEvents": [], "displayTimeUnit": "ms"}))
                .unwrap();
        whole.push(b'\n');
        assert_eq!(empty, whole);
    }

    fn t(ms: u64) -> Ticks {
        Ticks(ms * 1_000_000)
    }

    #[test]
    fn nested_spans_share_a_lane_and_overlapping_ones_do_not() {
        // request 0-100; two parallel calls 10-50 and 20-60; work 30-40 in the first;
        // a service 0-10 before them
        let spans = [
            (t(0), t(100), 0),
            (t(10), t(50), 1),
            (t(20), t(60), 1),
            (t(30), t(40), 4),
            (t(0), t(10), 2),
        ];
        let (lane, n) = pack(&spans);
        assert_eq!(lane, [0, 0, 1, 0, 0]);
        assert_eq!(n, 2);
        // work that outlives the request goes below it
        let (lane, n) = pack(&[(t(0), t(50), 0), (t(40), t(90), 4)]);
        assert_eq!((lane, n), (vec![0, 1], 2));
        // equal times: one lane, whichever order they ended in
        let (lane, n) = pack(&[(t(5), t(20), 2), (t(5), t(20), 1)]);
        assert_eq!((lane, n), (vec![0, 0], 1));
    }
}
