//! The bisection itself, knowing nothing of scenarios: it asks a point for more
//! replications and reads back an estimate with its interval. Which points it
//! evaluates depends only on the estimates, so the same replications give the
//! same points whatever the thread count.
//!
//! ```text
//! evaluate LO and HI -> same side: no crossing
//!   else bisect [a, b] (a and b on opposite sides of the target):
//!     m = middle; the interval at m includes the target -> more replications at m
//!     (doubling, up to the most allowed) -> still includes it: stop, m is the estimate
//!     else m replaces the end on its side; stop when b - a <= the tolerance
//! ```

use crate::sweep::stats::{Running, normal_quantile, t_quantile, wilson};

/// What a metric's values are, for the interval of their mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 0 / 1 per replication: Wilson's score interval.
    Proportion,
    /// A percentage: Student t cut to [0, 100].
    Percent,
    /// Any other number: Student t.
    Plain,
}

impl Kind {
    /// The `interval` cell of a point of this kind.
    pub fn interval(self) -> &'static str {
        match self {
            Kind::Proportion => "wilson",
            Kind::Percent => "t-clipped",
            Kind::Plain => "t",
        }
    }
}

/// Which side of the target a point's interval lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The whole interval is below the target.
    Below,
    /// The whole interval is above the target.
    Above,
    /// The interval holds the target: the replications cannot tell the side.
    Undecided,
    /// No replication gave the metric a value (a percentile of no requests):
    /// the metric is undefined there, on neither side.
    Empty,
}

impl Side {
    /// As written in `boundary.csv`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Below => "below",
            Side::Above => "above",
            Side::Undecided => "undecided",
            Side::Empty => "no_value",
        }
    }
}

/// The mean of a point's values and its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Replications run at the point.
    pub replications: u64,
    /// Replications that gave the metric a value.
    pub n: u64,
    /// The mean of those values (`None`: none had a value).
    pub mean: Option<f64>,
    /// The interval of the mean at the confidence level (`None` without values).
    pub interval: Option<(f64, f64)>,
}

/// The values of one point so far, replication by replication.
#[derive(Debug, Clone, Default)]
pub struct Values {
    values: Vec<Option<f64>>,
}

impl Values {
    /// Adds replication `values.len()`'s value.
    pub fn push(&mut self, v: Option<f64>) {
        self.values.push(v);
    }

    /// Replications so far.
    pub fn replications(&self) -> u64 {
        self.values.len() as u64
    }

    /// The estimate of the mean: Wilson's interval for a proportion, Student t
    /// (cut to [0, 100] for a percentage) otherwise, where one value (or values
    /// all the same) give the mean itself as a zero-width interval.
    pub fn estimate(&self, kind: Kind, confidence: f64) -> Estimate {
        let mut run = Running::default();
        for v in self.values.iter().flatten() {
            run.push(*v);
        }
        let n = run.n();
        let interval = run.mean().map(|mean| match kind {
            Kind::Proportion => {
                let ones = self.values.iter().flatten().filter(|v| **v >= 0.5).count() as u64;
                let z = normal_quantile(0.5 + confidence / 2.0);
                wilson(ones, n, z).unwrap_or((mean, mean))
            }
            Kind::Percent | Kind::Plain => {
                let (lo, hi) = if n < 2 {
                    (mean, mean)
                } else {
                    let t = t_quantile(0.5 + confidence / 2.0, (n - 1) as f64);
                    run.interval_with(t).unwrap_or((mean, mean))
                };
                if kind == Kind::Percent {
                    (lo.max(0.0), hi.min(100.0))
                } else {
                    (lo, hi)
                }
            }
        });
        Estimate {
            replications: self.replications(),
            n,
            mean: run.mean(),
            interval,
        }
    }
}

impl Estimate {
    /// The side of `target` the interval lies on.
    pub fn side(&self, target: f64) -> Side {
        if self.n == 0 {
            return Side::Empty;
        }
        match self.interval {
            Some((lo, _)) if lo > target => Side::Above,
            Some((_, hi)) if hi < target => Side::Below,
            _ => Side::Undecided,
        }
    }
}

/// One evaluated point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The axis value.
    pub value: f64,
    pub estimate: Estimate,
    pub side: Side,
}

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The bracket is within the tolerance.
    Tolerance,
    /// A point's interval held the target with the most replications allowed:
    /// the crossing is there, as far as the replications can tell.
    Undecided,
    /// `max_points` were evaluated before the bracket reached the tolerance.
    MaxPoints,
    /// The bracket cannot shrink (two neighbouring whole numbers).
    Adjacent,
    /// Both ends lie on the same side (or an end cannot be told): no bracket.
    NoCrossing,
    /// The metric has no value at a point (no replication gave one): where it
    /// crosses the target is undefined there.
    NoValue,
}

impl Status {
    /// As written in `crossing.csv` and the JSON document.
    pub fn name(self) -> &'static str {
        match self {
            Status::Tolerance => "tolerance",
            Status::Undecided => "undecided",
            Status::MaxPoints => "max_points",
            Status::Adjacent => "adjacent",
            Status::NoCrossing => "no_crossing",
            Status::NoValue => "no_value",
        }
    }
}

/// The result of one search along the axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    /// Every point evaluated, in order.
    pub points: Vec<Point>,
    pub status: Status,
    /// Where the metric crosses the target (`None`: no crossing).
    pub estimate: Option<f64>,
    /// The values known to lie on each side of the crossing, in increasing order.
    pub bracket: Option<(f64, f64)>,
}

/// How the search is run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    pub target: f64,
    pub lo: f64,
    pub hi: f64,
    /// Whole numbers only (an integer key).
    pub integer: bool,
    pub tolerance: Tolerance,
    pub replications: u64,
    pub max_replications: u64,
    pub max_points: u64,
    pub confidence: f64,
    pub kind: Kind,
}

/// The bracket width that stops the bisection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// In the key's units.
    Absolute(f64),
    /// A share of the bracket's middle value (`0.01`: 1 %).
    Relative(f64),
}

impl Tolerance {
    /// Parses `0.5` (absolute) or `1%` (relative).
    pub fn parse(text: &str) -> Result<Tolerance, String> {
        let t = text.trim();
        let (number, relative) = match t.strip_suffix('%') {
            Some(n) => (n.trim(), true),
            None => (t, false),
        };
        let x: f64 = number.parse().map_err(|_| {
            format!("--tolerance {text}: expected a number (in the key's units) or a percentage such as 1%")
        })?;
        if !x.is_finite() || x <= 0.0 {
            return Err(format!("--tolerance {text}: must be > 0"));
        }
        Ok(if relative {
            Tolerance::Relative(x / 100.0)
        } else {
            Tolerance::Absolute(x)
        })
    }

    fn reached(self, a: f64, b: f64) -> bool {
        let width = (b - a).abs();
        match self {
            Tolerance::Absolute(t) => width <= t,
            Tolerance::Relative(r) => width <= r * ((a + b) / 2.0).abs(),
        }
    }
}

/// A point of the axis, asked for replications `from..to` of its value; it
/// returns their values in replication order.
pub trait Evaluate {
    /// The metric's value in each replication `from..to` at axis value `x`.
    fn replications(
        &mut self,
        x: f64,
        from: u64,
        to: u64,
    ) -> Result<Vec<Option<f64>>, crate::error::Error>;
}

/// Evaluates `x`: `replications` first, doubled while the interval holds the
/// target, up to `max_replications`.
fn point(eval: &mut impl Evaluate, rules: &Rules, x: f64) -> Result<Point, crate::error::Error> {
    let mut values = Values::default();
    let mut want = rules.replications;
    loop {
        let from = values.replications();
        for v in eval.replications(x, from, want)? {
            values.push(v);
        }
        let estimate = values.estimate(rules.kind, rules.confidence);
        let side = estimate.side(rules.target);
        if side != Side::Undecided || want >= rules.max_replications {
            return Ok(Point {
                value: x,
                estimate,
                side,
            });
        }
        want = want.saturating_mul(2).min(rules.max_replications);
    }
}

/// Where the metric crosses `rules.target` between `rules.lo` and `rules.hi`.
pub fn bisect(eval: &mut impl Evaluate, rules: &Rules) -> Result<Crossing, crate::error::Error> {
    let mut points = Vec::new();
    let lo = point(eval, rules, rules.lo)?;
    let hi = point(eval, rules, rules.hi)?;
    points.push(lo.clone());
    points.push(hi.clone());
    if lo.side == Side::Empty || hi.side == Side::Empty {
        return Ok(Crossing {
            points,
            status: Status::NoValue,
            estimate: None,
            bracket: None,
        });
    }
    let decided = lo.side != Side::Undecided && hi.side != Side::Undecided;
    if !decided || lo.side == hi.side {
        return Ok(Crossing {
            points,
            status: Status::NoCrossing,
            estimate: None,
            bracket: None,
        });
    }
    let (mut a, mut b) = (lo, hi);
    loop {
        if rules.tolerance.reached(a.value, b.value) {
            return Ok(found(points, Status::Tolerance, &a, &b, rules.target));
        }
        if points.len() as u64 >= rules.max_points {
            return Ok(found(points, Status::MaxPoints, &a, &b, rules.target));
        }
        let mut m = a.value + (b.value - a.value) / 2.0;
        if rules.integer {
            m = m.floor();
        }
        if m <= a.value.min(b.value) || m >= a.value.max(b.value) {
            return Ok(found(points, Status::Adjacent, &a, &b, rules.target));
        }
        let p = point(eval, rules, m)?;
        points.push(p.clone());
        match p.side {
            Side::Empty => {
                let mut c = found(points, Status::NoValue, &a, &b, rules.target);
                c.estimate = None;
                return Ok(c);
            }
            Side::Undecided => {
                let mut c = found(points, Status::Undecided, &a, &b, rules.target);
                c.estimate = Some(m);
                return Ok(c);
            }
            side if side == a.side => a = p,
            _ => b = p,
        }
    }
}

/// The crossing bracketed by `a` and `b` (on opposite sides): the value where
/// the straight line through their means meets the target, kept inside the
/// bracket.
fn found(points: Vec<Point>, status: Status, a: &Point, b: &Point, target: f64) -> Crossing {
    let (lo, hi) = (a.value.min(b.value), a.value.max(b.value));
    let estimate = match (a.estimate.mean, b.estimate.mean) {
        (Some(ya), Some(yb)) if ya != yb => {
            a.value + (target - ya) / (yb - ya) * (b.value - a.value)
        }
        _ => (lo + hi) / 2.0,
    };
    Crossing {
        points,
        status,
        estimate: Some(estimate.clamp(lo, hi)),
        bracket: Some((lo, hi)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step at `edge`: 1 above it, 0 below (a crisp, noiseless boundary), and
    /// the values asked for, to check that replications are only ever added.
    struct Step {
        edge: f64,
        asked: Vec<(f64, u64, u64)>,
    }

    impl Evaluate for Step {
        fn replications(
            &mut self,
            x: f64,
            from: u64,
            to: u64,
        ) -> Result<Vec<Option<f64>>, crate::error::Error> {
            self.asked.push((x, from, to));
            Ok((from..to)
                .map(|_| Some(if x > self.edge { 1.0 } else { 0.0 }))
                .collect())
        }
    }

    fn rules() -> Rules {
        Rules {
            target: 0.5,
            lo: 0.0,
            hi: 100.0,
            integer: false,
            tolerance: Tolerance::Relative(0.01),
            replications: 20,
            max_replications: 80,
            max_points: 30,
            confidence: 0.95,
            kind: Kind::Proportion,
        }
    }

    /// A step whose metric has no value between `gap.0` and `gap.1`.
    struct Gap {
        gap: (f64, f64),
    }

    impl Evaluate for Gap {
        fn replications(
            &mut self,
            x: f64,
            from: u64,
            to: u64,
        ) -> Result<Vec<Option<f64>>, crate::error::Error> {
            let empty = x > self.gap.0 && x < self.gap.1;
            Ok((from..to)
                .map(|_| (!empty).then_some(if x > 25.0 { 1.0 } else { 0.0 }))
                .collect())
        }
    }

    #[test]
    fn a_point_without_values_is_no_value_not_a_crossing() {
        // empty in the middle: no estimate is claimed at the empty point
        let c = bisect(&mut Gap { gap: (40.0, 60.0) }, &rules()).unwrap();
        assert_eq!(c.status, Status::NoValue);
        assert_eq!(c.estimate, None);
        let last = c.points.last().unwrap();
        assert_eq!((last.value, last.side), (50.0, Side::Empty));
        assert_eq!(
            last.estimate.replications, 20,
            "no more replications for nothing"
        );
        // empty at an end: neither no crossing nor a crossing
        let c = bisect(&mut Gap { gap: (-1.0, 1.0) }, &rules()).unwrap();
        assert_eq!(c.status, Status::NoValue);
        assert_eq!(c.points[0].side, Side::Empty);
    }

    #[test]
    fn a_crisp_step_is_bracketed_within_the_tolerance() {
        let mut step = Step {
            edge: 25.0,
            asked: vec![],
        };
        let c = bisect(&mut step, &rules()).unwrap();
        assert_eq!(c.status, Status::Tolerance);
        let (lo, hi) = c.bracket.unwrap();
        assert!(lo <= 25.0 && 25.0 < hi, "{lo} {hi}");
        assert!(hi - lo <= 0.01 * (lo + hi) / 2.0);
        let e = c.estimate.unwrap();
        assert!((lo..=hi).contains(&e));
        // 100 -> 0.25 wide: 9 halvings after the two ends
        assert_eq!(c.points.len(), 11);
        // every point decided with its first 20 replications
        assert!(
            step.asked
                .iter()
                .all(|&(_, from, to)| from == 0 && to == 20)
        );
    }

    #[test]
    fn a_decreasing_metric_is_found_too() {
        struct Down;
        impl Evaluate for Down {
            fn replications(
                &mut self,
                x: f64,
                from: u64,
                to: u64,
            ) -> Result<Vec<Option<f64>>, crate::error::Error> {
                Ok((from..to).map(|_| Some(100.0 - x)).collect())
            }
        }
        let mut r = rules();
        r.kind = Kind::Plain;
        r.target = 30.0;
        r.tolerance = Tolerance::Absolute(0.5);
        let c = bisect(&mut Down, &r).unwrap();
        // a straight line: the interpolation lands on it exactly
        assert_eq!(c.estimate, Some(70.0));
        assert_eq!(c.status, Status::Tolerance);
    }

    #[test]
    fn no_crossing_is_said_with_both_ends() {
        let mut step = Step {
            edge: 500.0,
            asked: vec![],
        };
        let c = bisect(&mut step, &rules()).unwrap();
        assert_eq!(c.status, Status::NoCrossing);
        assert_eq!(c.estimate, None);
        assert_eq!(c.points.len(), 2);
        assert!(c.points.iter().all(|p| p.side == Side::Below));
    }

    /// A point whose share is exactly the target stays undecided: replications
    /// are doubled up to the most allowed, then the search stops there.
    #[test]
    fn an_undecided_point_gets_more_replications_then_stops() {
        struct Half;
        impl Evaluate for Half {
            fn replications(
                &mut self,
                x: f64,
                from: u64,
                to: u64,
            ) -> Result<Vec<Option<f64>>, crate::error::Error> {
                Ok((from..to)
                    .map(|r| {
                        Some(if x >= 60.0 || (x >= 40.0 && r % 2 == 0) {
                            1.0
                        } else {
                            0.0
                        })
                    })
                    .collect())
            }
        }
        let c = bisect(&mut Half, &rules()).unwrap();
        assert_eq!(c.status, Status::Undecided);
        assert_eq!(c.estimate, Some(50.0));
        assert_eq!(c.bracket, Some((0.0, 100.0)));
        let mid = &c.points[2];
        assert_eq!(mid.estimate.replications, 80);
        assert_eq!(mid.side, Side::Undecided);
    }

    #[test]
    fn integer_keys_stop_at_neighbours() {
        let mut step = Step {
            edge: 7.0,
            asked: vec![],
        };
        let mut r = rules();
        r.integer = true;
        r.hi = 20.0;
        r.tolerance = Tolerance::Absolute(0.1);
        let c = bisect(&mut step, &r).unwrap();
        assert_eq!(c.status, Status::Adjacent);
        assert_eq!(c.bracket, Some((7.0, 8.0)));
        assert!(c.points.iter().all(|p| p.value.fract() == 0.0));
    }

    #[test]
    fn the_point_budget_is_kept() {
        let mut step = Step {
            edge: 25.0,
            asked: vec![],
        };
        let mut r = rules();
        r.max_points = 5;
        let c = bisect(&mut step, &r).unwrap();
        assert_eq!(c.status, Status::MaxPoints);
        assert_eq!(c.points.len(), 5);
    }

    #[test]
    fn tolerances_parse_as_units_or_percent() {
        assert_eq!(Tolerance::parse("1%"), Ok(Tolerance::Relative(0.01)));
        assert_eq!(Tolerance::parse("0.5"), Ok(Tolerance::Absolute(0.5)));
        assert!(Tolerance::parse("0").is_err());
        assert!(Tolerance::parse("x%").is_err());
        assert!(Tolerance::parse("NaN").is_err());
    }

    #[test]
    fn intervals_follow_the_kind() {
        let mut v = Values::default();
        for x in [0.0, 0.0, 1.0, 0.0] {
            v.push(Some(x));
        }
        v.push(None);
        let e = v.estimate(Kind::Proportion, 0.95);
        assert_eq!((e.replications, e.n), (5, 4));
        let (lo, hi) = e.interval.unwrap();
        assert!(lo > 0.0 && hi < 1.0 && lo < 0.25 && hi > 0.25);
        let mut p = Values::default();
        for x in [99.0, 100.0, 100.0] {
            p.push(Some(x));
        }
        let (_, hi) = p.estimate(Kind::Percent, 0.95).interval.unwrap();
        assert_eq!(hi, 100.0);
        let mut one = Values::default();
        one.push(Some(3.0));
        assert_eq!(one.estimate(Kind::Plain, 0.95).interval, Some((3.0, 3.0)));
        assert_eq!(Values::default().estimate(Kind::Plain, 0.95).mean, None);
    }
}
