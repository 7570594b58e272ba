//! What a scenario asks of its results: `[thresholds]`, `[montecarlo]`, `[slo]` and
//! `[analysis]`.

/// One `[thresholds]` entry: `metric` must satisfy `op value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The metric, named as the sweep names it (`<table>.<column>`, ...).
    pub metric: String,
    /// The comparison the metric must satisfy.
    pub op: Comparison,
    /// The limit it is compared with.
    pub value: f64,
}

/// A threshold's comparison: `<`, `<=`, `>` or `>=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterOrEqual,
}

impl Comparison {
    /// Each comparison with its symbol, two-character symbols first (parsed in this order).
    pub const ALL: [(&'static str, Comparison); 4] = [
        ("<=", Comparison::LessOrEqual),
        (">=", Comparison::GreaterOrEqual),
        ("<", Comparison::Less),
        (">", Comparison::Greater),
    ];

    /// The symbol as written (`<=`).
    pub fn symbol(self) -> &'static str {
        Comparison::ALL
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("?", |(s, _)| s)
    }

    /// Whether `x` compared with `limit` satisfies this comparison.
    pub fn holds(self, x: f64, limit: f64) -> bool {
        match self {
            Comparison::Less => x < limit,
            Comparison::LessOrEqual => x <= limit,
            Comparison::Greater => x > limit,
            Comparison::GreaterOrEqual => x >= limit,
        }
    }
}

impl Threshold {
    /// Parses a condition such as `< 300` or `>=99.5`.
    pub fn parse(metric: &str, condition: &str) -> Result<Threshold, String> {
        let c = condition.trim();
        let (op, rest) = Comparison::ALL
            .iter()
            .find_map(|(sym, op)| c.strip_prefix(sym).map(|rest| (*op, rest)))
            .ok_or_else(|| {
                format!("expected a comparison and a number, e.g. \"< 300\" or \">= 99\" (got \"{condition}\"); comparisons: `<`, `<=`, `>`, `>=`")
            })?;
        let value: f64 = rest
            .trim()
            .parse()
            .map_err(|_| format!("`{}` is not a number (in \"{condition}\")", rest.trim()))?;
        if !value.is_finite() {
            return Err(format!(
                "the limit must be a finite number (got \"{condition}\")"
            ));
        }
        Ok(Threshold {
            metric: metric.to_string(),
            op,
            value,
        })
    }

    /// `< 300`, as written back.
    pub fn condition(&self) -> String {
        format!(
            "{} {}",
            self.op.symbol(),
            crate::format::format_number(self.value)
        )
    }
}

/// `[montecarlo]`: the defaults `resim sweep` runs with (its flags override them).
#[derive(Debug, Clone, PartialEq)]
pub struct MonteCarlo {
    /// `replications`: the default for `--replications` (None: 100).
    pub replications: Option<u64>,
    /// Two-sided confidence level of the intervals, in (0, 1).
    pub confidence: f64,
    /// Metrics shown in the printed sweep report (every metric is in the CSV files).
    pub report: Vec<String>,
    /// `axis=value` entries naming the row paired differences are taken against.
    pub baseline: Vec<String>,
    /// `windows`: `summary.csv`, `paired.csv` and `summary_wide.csv` hold the
    /// per-window metrics of the time series too (`replications.csv` always does).
    pub windows: bool,
}

/// `[slo]`: figures the analyses convert with; all optional.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Slo {
    /// End-to-end threshold in ms: a plan's answer counts only within it.
    pub threshold_ms: Option<f64>,
    /// Peak read requests per second, for Little's law (held slots = rps x mean latency).
    pub peak_read_rps: Option<f64>,
    /// Peak requests per second at the edge, for the deadline field's bytes per second.
    pub peak_edge_rps: Option<f64>,
    /// Response size in bytes, the deadline field's bytes are compared with.
    pub response_bytes: Option<f64>,
    /// Bytes a propagated deadline adds to each sub-call.
    pub deadline_field_bytes: Option<f64>,
}

/// `[analysis]`: options of the analyses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Analysis {
    /// The monthly error budget and the incidents that use it.
    pub error_budget: Option<ErrorBudget>,
    /// Members active in production: adds `projected_ceiling` to `limiters.csv`.
    pub active_members: Option<u64>,
    /// A ladder step is truly acceptable when successful / sent >= this.
    pub acceptance: Option<f64>,
    /// One rule `p95<=t` per value: accepts ladder steps whose p95 wait <= t rounds.
    pub p95_rules_rounds: Vec<f64>,
    /// Adds the rule `throughput`: accepts the ladder steps before saturation.
    pub throughput_rule: bool,
    /// Recovery: windows whose mean goodput must reach the fraction (default 5).
    pub recovery_windows: u32,
    /// Recovery: the share of the goodput before the fault (default 0.9).
    pub recovery_fraction: f64,
}

/// `[analysis] error_budget`.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorBudget {
    /// The monthly error budget, in minutes.
    pub budget_minutes: f64,
    /// (minutes, times per month)
    pub incidents: Vec<(f64, f64)>,
}
