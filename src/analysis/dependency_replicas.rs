//! Replicated dependencies: per replica, the calls its balancer sent it and
//! how each ended, then the dependency's own row (`all`) from the run's
//! dependency books, which the replicas' rows sum to. With outlier detection
//! (any dependency's) each row also says how often and how long the replica
//! was ejected (empty for a dependency without).

use super::Results;
use super::ejections;
use crate::table::{Cell, Table};

pub fn tables(results: &mut Results, out: &mut Vec<Table>) {
    let any = results
        .runs
        .iter()
        .any(|r| r.dependencies.iter().any(|d| !d.replicas.is_empty()));
    if any {
        out.push(replicas(results));
    }
    // the ejections' table, when no service's outlier detection made it
    if ejections::any_dependency(results) && !ejections::any_service(results) {
        out.push(ejections::table(results, true));
    }
}

/// The row's cells after the axis columns: the balancer, then the counts.
struct Row {
    calls: u64,
    no_time: u64,
    ok: u64,
    errors: u64,
    timed_out: u64,
    given_up: u64,
    answer_ms: f64,
    work_ms: f64,
    mean_busy: f64,
    /// With outlier detection: times ejected and time ejected.
    ejected: Option<(u64, f64)>,
}

impl Row {
    /// A replica's own row.
    fn replica(r: &crate::sim::DependencyReplicaStats, ejected: bool) -> Row {
        Row {
            calls: r.calls,
            no_time: 0,
            ok: r.ok,
            errors: r.errors,
            timed_out: r.timed_out,
            given_up: r.given_up,
            answer_ms: r.answer_ms,
            work_ms: r.work_ms,
            mean_busy: r.mean_busy,
            ejected: ejected.then_some((r.ejections, r.ejected_ms)),
        }
    }

    /// Adds a replica's endings, answer time and ejections to the dependency's
    /// row (its calls, work and busy time are its own books).
    fn add(&mut self, r: &Row) {
        self.ok += r.ok;
        self.errors += r.errors;
        self.timed_out += r.timed_out;
        self.given_up += r.given_up;
        self.answer_ms += r.answer_ms;
        if let (Some((n, ms)), Some((rn, rms))) = (&mut self.ejected, r.ejected) {
            *n += rn;
            *ms += rms;
        }
    }

    /// The row's figures from `balancer` on (its share of the `sent` calls;
    /// the ejection columns when `ejects`).
    fn cells(&self, sent: u64, ejects: bool) -> Vec<Cell> {
        let answered = self.ok + self.errors;
        let mut cells: Vec<Cell> = vec![
            self.calls.into(),
            (sent > 0)
                .then(|| (self.calls - self.no_time) as f64 / sent as f64 * 100.0)
                .into(),
            self.no_time.into(),
            self.ok.into(),
            self.errors.into(),
            self.timed_out.into(),
            self.given_up.into(),
            (answered > 0)
                .then(|| self.answer_ms / answered as f64)
                .into(),
            self.work_ms.into(),
            self.mean_busy.into(),
        ];
        if ejects {
            let (n, ms) = self.ejected.unzip();
            cells.extend([n.into(), ms.into()]);
        }
        cells
    }
}

fn replicas(results: &Results) -> Table {
    let ejects = ejections::any_dependency(results);
    let mut columns = vec![
        "balancer",
        "calls",
        "calls_pct",
        "no_time",
        "ok",
        "errors",
        "timed_out",
        "given_up",
        "mean_answer_ms",
        "work_ms",
        "mean_busy",
    ];
    if ejects {
        columns.extend(["ejections", "ejected_ms"]);
    }
    let mut t = results.table(
        "dependency_replicas",
        "Dependency replicas: the calls the balancer sent each replica and how they ended, then the dependency's own row",
        &["dependency", "replica"],
        &columns,
    );
    for (i, run) in results.runs.iter().enumerate() {
        let model = &results.scenario.rows[i].model;
        for (d, st) in run.dependencies.iter().enumerate() {
            if st.replicas.is_empty() {
                continue;
            }
            let dep = &model.dependencies[d];
            let sent: u64 = st.replicas.iter().map(|r| r.calls).sum();
            let cells = |replica: Cell, r: &Row| {
                let mut cells = results.axis_cells(i);
                cells.extend([
                    dep.name.as_str().into(),
                    replica,
                    dep.balancer.name().into(),
                ]);
                cells.extend(r.cells(sent, ejects));
                cells
            };
            let ejected = st.ejections.is_some();
            let mut total = Row {
                calls: st.calls,
                no_time: st.no_replica,
                ok: 0,
                errors: 0,
                timed_out: 0,
                given_up: 0,
                answer_ms: 0.0,
                work_ms: st.work_ms,
                mean_busy: st.mean_busy,
                ejected: ejected.then_some((0, 0.0)),
            };
            for (k, r) in st.replicas.iter().enumerate() {
                let row = Row::replica(r, ejected);
                total.add(&row);
                t.push(cells(Cell::from((k + 1) as u64), &row));
            }
            t.push(cells("all".into(), &total));
        }
    }
    t.notes.push(
        "calls = ok + errors + timed_out + given_up (+ no_time on the `all` row): every call the balancer sent a \
         replica ends once for its caller, a replica that is down answering its errors at once; no_time = calls made \
         with no time left, which fail at once and reach no replica; calls_pct = the replica's share of the calls \
         sent to a replica; mean_answer_ms = call to answer (ok or error); work_ms = time worked, abandoned work \
         included; mean_busy = time-average calls at work. The `all` row's calls, work_ms and mean_busy are the \
         dependency's own books (each call once, attempts of a policy each); the replicas' rows sum to it"
            .into(),
    );
    if ejects {
        t.notes.push(
            "ejections = times outlier detection took the replica out of its balancer's picks (every view's), \
             ejected_ms = time it spent out, to the run's end (warm-up included); the `all` row sums the \
             replicas'; empty for a dependency without outlier_detection"
                .into(),
        );
    }
    t
}
