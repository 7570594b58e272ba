//! The race between candidates: every candidate runs the same replications
//! (the same seeds: common random numbers), so two candidates are compared
//! replication by replication. A candidate leaves the race when its
//! intervals show it infeasible (a constraint's whole interval on the wrong
//! side, in some compare row) or beaten (its objective worse than the best
//! feasible candidate's, by a paired interval). The candidates still in
//! doubt get their replications doubled, up to a cap; replications go where
//! a decision is close, none where it is settled.

use super::space::Point;
use crate::error::Error;
use crate::model::Threshold;
use crate::sweep::stats::{Running, t_quantile};

/// What the candidates are judged on.
#[derive(Debug, Clone)]
pub struct Goal {
    /// The metric to optimise.
    pub objective: String,
    /// Larger is better (`--maximize`).
    pub maximize: bool,
    /// Every compare row must meet each of these.
    pub constraints: Vec<Threshold>,
    pub over: Over,
    /// The two-sided level of every interval (`[montecarlo] confidence`).
    pub confidence: f64,
    /// Per metric (the objective, then each constraint's): the range its
    /// values lie in (a share's [0, 100]), where intervals are cut.
    pub clip: Vec<Option<(f64, f64)>>,
}

/// How the objective is taken over the compare rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Over {
    /// The worst row's mean.
    Worst,
    /// The mean of the rows' means.
    Mean,
}

/// Where a candidate stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Still racing, or kept (a tie the replications could not break).
    Alive,
    /// A constraint's interval lies wholly on its wrong side: why.
    Infeasible(String),
    /// Its objective is worse than this candidate's (paired interval).
    Beaten(usize),
    /// A metric had no value in some replication: which.
    NoValue(String),
}

/// One candidate: its point and every value its replications gave.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub point: Point,
    /// 0 for the start, k for the k-th round around the best.
    pub round: u32,
    /// `values[row][metric][replication]`: metric 0 the objective, then the
    /// constraints' in order.
    pub values: Vec<Vec<Vec<Option<f64>>>>,
    pub status: Status,
}

impl Candidate {
    /// Replications run.
    pub fn n(&self) -> u64 {
        self.values
            .first()
            .and_then(|r| r.first())
            .map_or(0, |v| v.len() as u64)
    }
}

/// A mean and its interval over `n` replications.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub n: u64,
}

impl Goal {
    /// The metrics read: the objective, then each constraint's.
    pub fn metrics(&self) -> Vec<String> {
        std::iter::once(self.objective.clone())
            .chain(self.constraints.iter().map(|c| c.metric.clone()))
            .collect()
    }

    /// The interval of the mean of `values` (None when one has no value):
    /// Wilson's for a flag, else Student t (the mean alone with values all
    /// the same, no bound with one value), cut to the metric's range.
    pub fn estimate(&self, metric: usize, values: &[Option<f64>]) -> Option<Estimate> {
        let mut r = Running::default();
        for v in values {
            r.push((*v)?);
        }
        let clip = self.clip.get(metric).copied().flatten();
        if clip == Some((0.0, 1.0)) {
            // a flag (0/1 per replication): the share's Wilson interval,
            // which stays inside [0, 1] and is not a point at 0 of n or n of n
            let n = r.n();
            let ones = values.iter().flatten().filter(|v| **v >= 0.5).count() as u64;
            let z = crate::sweep::stats::normal_quantile(0.5 + self.confidence / 2.0);
            let (lo, hi) = crate::sweep::stats::wilson(ones, n, z)?;
            return Some(Estimate {
                mean: r.mean()?,
                lo,
                hi,
                n,
            });
        }
        estimate_of(&r, self.confidence, clip)
    }

    /// A constraint's judgement on an estimate.
    pub fn judge(&self, c: &Threshold, e: &Estimate) -> Judgement {
        match (c.op.holds(e.lo, c.value), c.op.holds(e.hi, c.value)) {
            (true, true) => Judgement::Met,
            (false, false) => Judgement::Violated,
            _ => Judgement::Unsure,
        }
    }

    /// The objective's value as a cost (less is better) in `row`, replication `i`.
    fn cost(&self, c: &Candidate, row: usize, i: usize) -> Option<f64> {
        let v = c.values[row][0][i]?;
        Some(if self.maximize { -v } else { v })
    }

    /// The objective's point estimate as a cost: the worst row's mean, or
    /// the rows' mean. None: a replication gave it no value.
    pub fn objective_cost(&self, c: &Candidate) -> Option<f64> {
        let means = (0..c.values.len())
            .map(|r| {
                self.estimate(0, &c.values[r][0])
                    .map(|e| if self.maximize { -e.mean } else { e.mean })
            })
            .collect::<Option<Vec<f64>>>()?;
        match self.over {
            Over::Worst => means.into_iter().reduce(f64::max),
            Over::Mean => Some(means.iter().sum::<f64>() / means.len() as f64),
        }
    }

    /// Whether `c` is worse than `b` for sure: over the replications both ran,
    /// the paired differences of their costs lie wholly above 0. With the
    /// worst row: some row of `c` is worse than every row of `b` (then `c`'s
    /// worst row is worse than `b`'s).
    pub fn beaten(&self, c: &Candidate, b: &Candidate) -> bool {
        let n = c.n().min(b.n()) as usize;
        if n < 2 {
            return false;
        }
        let rows = c.values.len();
        let diff_above_zero = |f: &dyn Fn(usize) -> Option<f64>| -> bool {
            let mut r = Running::default();
            for i in 0..n {
                match f(i) {
                    Some(d) => r.push(d),
                    None => return false,
                }
            }
            estimate_of(&r, self.confidence, None).is_some_and(|e| e.lo > 0.0)
        };
        match self.over {
            Over::Mean => diff_above_zero(&|i| {
                let mut d = 0.0;
                for row in 0..rows {
                    d += self.cost(c, row, i)? - self.cost(b, row, i)?;
                }
                Some(d / rows as f64)
            }),
            Over::Worst => (0..rows).any(|s| {
                (0..rows)
                    .all(|r| diff_above_zero(&|i| Some(self.cost(c, s, i)? - self.cost(b, r, i)?)))
            }),
        }
    }

    /// Every constraint's judgement in every row (rows outer).
    pub fn judgements(&self, c: &Candidate) -> Vec<Vec<Option<(Estimate, Judgement)>>> {
        c.values
            .iter()
            .map(|row| {
                self.constraints
                    .iter()
                    .enumerate()
                    .map(|(k, t)| {
                        let e = self.estimate(k + 1, &row[k + 1])?;
                        Some((e, self.judge(t, &e)))
                    })
                    .collect()
            })
            .collect()
    }

    /// Whether every constraint is met for sure in every row.
    pub fn surely_feasible(&self, c: &Candidate) -> bool {
        self.judgements(c)
            .iter()
            .flatten()
            .all(|j| matches!(j, Some((_, Judgement::Met))))
    }

    /// Whether every constraint's mean meets it in every row.
    pub fn likely_feasible(&self, c: &Candidate) -> bool {
        self.judgements(c).iter().all(|row| {
            row.iter()
                .zip(&self.constraints)
                .all(|(j, t)| j.is_some_and(|(e, _)| t.op.holds(e.mean, t.value)))
        })
    }

    /// How far `c` is from meeting its constraints: the largest shortfall of
    /// a mean, relative to its limit (0 when every mean meets its limit).
    pub fn shortfall(&self, c: &Candidate) -> f64 {
        let mut worst: f64 = 0.0;
        for row in self.judgements(c) {
            for (j, t) in row.iter().zip(&self.constraints) {
                let Some((e, _)) = j else {
                    return f64::INFINITY;
                };
                if !t.op.holds(e.mean, t.value) {
                    worst = worst.max((e.mean - t.value).abs() / t.value.abs().max(1e-9));
                }
            }
        }
        worst
    }
}

/// A constraint's reading of an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// The whole interval meets it.
    Met,
    /// The whole interval fails it.
    Violated,
    /// The interval holds the limit.
    Unsure,
}

impl Judgement {
    /// As the files write it.
    pub fn word(self) -> &'static str {
        match self {
            Judgement::Met => "yes",
            Judgement::Violated => "no",
            Judgement::Unsure => "unsure",
        }
    }
}

/// The interval of a running mean at `confidence`, cut to `clip`.
pub fn estimate_of(r: &Running, confidence: f64, clip: Option<(f64, f64)>) -> Option<Estimate> {
    let mean = r.mean()?;
    let n = r.n();
    let (mut lo, mut hi) = if n < 2 {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        r.interval_with(t_quantile(0.5 + confidence / 2.0, (n - 1) as f64))
            .unwrap_or((mean, mean))
    };
    if let Some((a, b)) = clip {
        (lo, hi) = (lo.max(a), hi.min(b));
    }
    Some(Estimate { mean, lo, hi, n })
}

/// Replications of a candidate: `values[row][metric][replication - from]`.
pub type Runs = Vec<Vec<Vec<Option<f64>>>>;

/// Runs more replications of candidates.
pub trait Evaluate {
    /// Runs replications `from..to` of `point` in every row:
    /// `out[row][metric][replication - from]`.
    fn run(&mut self, index: usize, point: &Point, from: u64, to: u64) -> Result<Runs, Error>;

    /// Candidate `index` left the race: what was kept for it may go.
    fn forget(&mut self, _index: usize) {}

    /// Whether some run asked for has no value yet (a sharded tuning's
    /// runs come from every shard): the race stops at the end of the step
    /// and is run again from the start once they have.
    fn stop(&self) -> bool {
        false
    }
}

/// The race: the candidates, what they cost, and its limits.
pub struct Race<'g> {
    pub goal: &'g Goal,
    pub candidates: Vec<Candidate>,
    /// Runs spent (one replication of one compare row is one run).
    pub runs: u64,
    /// The compare rows a replication runs.
    pub rows: u64,
    /// Replications a new candidate starts with, and the most any gets.
    pub first: u64,
    pub most: u64,
    /// The most runs the race may spend.
    pub budget: u64,
    /// The budget stopped a step the race wanted.
    pub out_of_budget: bool,
}

impl Race<'_> {
    /// Runs replications up to `to` for candidate `i`.
    fn extend(&mut self, ev: &mut impl Evaluate, i: usize, to: u64) -> Result<(), Error> {
        let from = self.candidates[i].n();
        let more = ev.run(i, &self.candidates[i].point, from, to)?;
        let c = &mut self.candidates[i];
        if c.values.is_empty() {
            c.values = more;
        } else {
            for (row, add) in c.values.iter_mut().zip(more) {
                for (m, add) in row.iter_mut().zip(add) {
                    m.extend(add);
                }
            }
        }
        self.runs += (to - from) * self.rows;
        Ok(())
    }

    /// Adds `points` (round `round`) and runs their first replications, as
    /// many as the budget allows. False: the budget allowed none.
    pub fn add(
        &mut self,
        ev: &mut impl Evaluate,
        points: Vec<Point>,
        round: u32,
    ) -> Result<bool, Error> {
        let mut any = false;
        for point in points {
            if self.runs + self.first * self.rows > self.budget {
                self.out_of_budget = true;
                break;
            }
            self.candidates.push(Candidate {
                point,
                round,
                values: Vec::new(),
                status: Status::Alive,
            });
            let i = self.candidates.len() - 1;
            self.extend(ev, i, self.first)?;
            any = true;
        }
        Ok(any)
    }

    /// The best candidate surely feasible (its objective's point estimate),
    /// among those alive.
    pub fn incumbent(&self) -> Option<usize> {
        self.best(|g, c| g.surely_feasible(c))
    }

    /// The best alive candidate that `ok` accepts (the first of equals).
    pub fn best(&self, ok: impl Fn(&Goal, &Candidate) -> bool) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (i, c) in self.candidates.iter().enumerate() {
            if c.status != Status::Alive || !ok(self.goal, c) {
                continue;
            }
            if let Some(cost) = self.goal.objective_cost(c)
                && best.is_none_or(|(_, b)| cost < b)
            {
                best = Some((i, cost));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Drops the candidates whose intervals settle them: infeasible, without
    /// a value, or beaten by the incumbent.
    fn judge(&mut self) {
        let goal = self.goal;
        for c in &mut self.candidates {
            if c.status != Status::Alive {
                continue;
            }
            if let Some(why) = no_value(goal, c) {
                c.status = Status::NoValue(why);
            } else if let Some(why) = infeasible(goal, c) {
                c.status = Status::Infeasible(why);
            }
        }
        if let Some(b) = self.incumbent() {
            for i in 0..self.candidates.len() {
                if i != b
                    && self.candidates[i].status == Status::Alive
                    && goal.beaten(&self.candidates[i], &self.candidates[b])
                {
                    self.candidates[i].status = Status::Beaten(b);
                }
            }
        }
    }

    /// Races the alive candidates until each is settled, at its most
    /// replications, or the budget is spent.
    pub fn settle(&mut self, ev: &mut impl Evaluate) -> Result<(), Error> {
        loop {
            self.judge();
            let inc = self.incumbent();
            // in doubt: a candidate's feasibility, or whether it is worse
            // than the incumbent (everything alive that is not the incumbent)
            let mut more: Vec<usize> = (0..self.candidates.len())
                .filter(|&i| {
                    let c = &self.candidates[i];
                    c.status == Status::Alive && c.n() < self.most && Some(i) != inc
                })
                .collect();
            // the incumbent keeps pace: pairs are compared over the
            // replications both ran
            if let Some(b) = inc
                && !more.is_empty()
                && self.candidates[b].n() < self.most
            {
                more.insert(0, b);
            }
            if more.is_empty() {
                return Ok(());
            }
            let mut ran = false;
            for i in more {
                let n = self.candidates[i].n();
                let to = (n * 2).clamp(n + 1, self.most);
                if self.runs + (to - n) * self.rows > self.budget {
                    self.out_of_budget = true;
                    continue;
                }
                self.extend(ev, i, to)?;
                ran = true;
            }
            if !ran || ev.stop() {
                return Ok(());
            }
        }
    }
}

/// The first metric with no value in some replication, named.
fn no_value(goal: &Goal, c: &Candidate) -> Option<String> {
    for (r, row) in c.values.iter().enumerate() {
        for (m, values) in row.iter().enumerate() {
            let empty = values.iter().filter(|v| v.is_none()).count();
            if empty > 0 {
                let name = if m == 0 {
                    &goal.objective
                } else {
                    &goal.constraints[m - 1].metric
                };
                return Some(format!(
                    "`{name}` has no value in {empty} of {} replications (row {})",
                    values.len(),
                    r + 1
                ));
            }
        }
    }
    None
}

/// The first constraint whose whole interval fails it, with its row.
fn infeasible(goal: &Goal, c: &Candidate) -> Option<String> {
    for (r, row) in goal.judgements(c).iter().enumerate() {
        for (j, t) in row.iter().zip(&goal.constraints) {
            if let Some((e, Judgement::Violated)) = j {
                return Some(format!(
                    "{} {} {} fails in row {}: {} [{}, {}]",
                    t.metric,
                    t.op.symbol(),
                    crate::format::format_number(t.value),
                    r + 1,
                    crate::format::format_number(e.mean),
                    crate::format::format_number(e.lo),
                    crate::format::format_number(e.hi)
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml::Value;

    fn goal(constraints: &[&str]) -> Goal {
        Goal {
            objective: "y".into(),
            maximize: false,
            constraints: constraints
                .iter()
                .map(|c| Threshold::parse("c", c).expect("a condition"))
                .collect(),
            over: Over::Worst,
            confidence: 0.95,
            clip: vec![None; constraints.len() + 1],
        }
    }

    /// Candidates whose objective is `x` plus a replication's noise shared by
    /// all (common random numbers), and constraint value `x` plus noise.
    struct Line;
    impl Evaluate for Line {
        fn run(
            &mut self,
            _: usize,
            p: &Point,
            from: u64,
            to: u64,
        ) -> Result<Vec<Vec<Vec<Option<f64>>>>, Error> {
            let x = super::super::space::number(&p[0]);
            let noise = |i: u64| ((i * 7919) % 13) as f64 - 6.0;
            let y = (from..to).map(|i| Some(100.0 - x + noise(i))).collect();
            let c = (from..to).map(|i| Some(x + noise(i) * 0.1)).collect();
            Ok(vec![vec![y, c]])
        }
    }

    /// A candidate whose rows' objective values are `rows`.
    fn with_costs(rows: &[&[f64]]) -> Candidate {
        Candidate {
            point: Vec::new(),
            round: 0,
            values: rows
                .iter()
                .map(|v| vec![v.iter().map(|x| Some(*x)).collect()])
                .collect(),
            status: Status::Alive,
        }
    }

    fn race(goal: &Goal) -> Race<'_> {
        Race {
            goal,
            candidates: Vec::new(),
            runs: 0,
            rows: 1,
            first: 4,
            most: 32,
            budget: 10_000,
            out_of_budget: false,
        }
    }

    #[test]
    fn the_best_feasible_candidate_wins_and_the_others_are_settled() {
        let g = goal(&["<= 50"]);
        let mut r = race(&g);
        let pts = [10, 30, 49, 70, 90]
            .iter()
            .map(|x| vec![Value::Integer(*x)])
            .collect();
        r.add(&mut Line, pts, 0).unwrap();
        r.settle(&mut Line).unwrap();
        // less is better: 100 - x falls with x; x <= 50 keeps 49
        assert_eq!(r.incumbent(), Some(2));
        assert!(matches!(r.candidates[3].status, Status::Infeasible(_)));
        assert!(matches!(r.candidates[4].status, Status::Infeasible(_)));
        assert_eq!(r.candidates[0].status, Status::Beaten(2));
        assert_eq!(r.candidates[1].status, Status::Beaten(2));
        // common noise: 30 against 49 is settled with the first replications
        assert!(r.candidates.iter().all(|c| c.n() == 4));
        assert_eq!(r.runs, 5 * 4);
    }

    #[test]
    fn the_budget_stops_the_race() {
        let g = goal(&["<= 50"]);
        let mut r = race(&g);
        r.budget = 9;
        let pts = (0..5).map(|x| vec![Value::Integer(x)]).collect();
        assert!(r.add(&mut Line, pts, 0).unwrap());
        assert_eq!(r.candidates.len(), 2);
        assert!(r.out_of_budget);
        assert!(r.runs <= 9);
    }

    #[test]
    fn over_the_mean_a_bad_row_is_weighed_against_the_good_ones() {
        let mut g = goal(&[]);
        g.over = Over::Mean;
        let c = with_costs;
        let b = c(&[&[5.0, 6.0, 5.5], &[5.0, 6.0, 5.5]]);
        // one row far worse, the other far better: the mean is better
        let a = c(&[&[9.0, 10.0, 9.5], &[0.0, 0.5, 0.2]]);
        assert!(!g.beaten(&a, &b));
        assert!(g.beaten(&b, &a));
        assert!(g.objective_cost(&a).unwrap() < g.objective_cost(&b).unwrap());
        // the worst row says the opposite
        g.over = Over::Worst;
        assert!(g.beaten(&a, &b));
    }

    #[test]
    fn a_flag_gets_a_wilson_interval_inside_0_1() {
        let mut g = goal(&["<= 0.1"]);
        g.clip[1] = Some((0.0, 1.0));
        let e = g.estimate(1, &[Some(0.0); 10]).unwrap();
        assert_eq!((e.mean, e.lo), (0.0, 0.0));
        // 0 of 10: up to 0.28 at 95 %, so "at most 10 %" is not shown yet
        assert!((e.hi - 0.2775).abs() < 1e-3, "{e:?}");
        assert_eq!(g.judge(&g.constraints[0], &e), Judgement::Unsure);
        let e = g.estimate(1, &[Some(0.0); 40]).unwrap();
        assert_eq!(g.judge(&g.constraints[0], &e), Judgement::Met);
    }

    #[test]
    fn a_worst_row_is_beaten_only_when_some_row_is_worse_than_every_row() {
        let g = goal(&[]);
        let c = with_costs;
        let b = c(&[&[1.0, 2.0, 1.5], &[5.0, 6.0, 5.5]]);
        // its first row is better than b's worst: not beaten
        let a = c(&[&[4.0, 5.0, 4.5], &[3.0, 3.5, 3.2]]);
        assert!(!g.beaten(&a, &b));
        // its second row is worse than both of b's
        let w = c(&[&[0.0, 0.5, 0.2], &[9.0, 10.0, 9.6]]);
        assert!(g.beaten(&w, &b));
        assert!(!g.beaten(&b, &w));
    }
}
