//! `[scenario]` run limits, `[slo]`, `[analysis]`, `[montecarlo]` and
//! `[thresholds]`.

use super::*;

pub(crate) const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;
const DEFAULT_MAX_SIM_TIME_MS: f64 = 365.0 * 24.0 * 3_600_000.0;
/// About half a gigabyte of request, call and event state.
const DEFAULT_MAX_IN_FLIGHT: u64 = 1_000_000;
/// About a second of a release build at one instant: far more than a burst of
/// `max_in_flight` requests at once needs.
const DEFAULT_MAX_EVENTS_PER_INSTANT: u64 = 10_000_000;

/// `[scenario]`'s runaway limits.
pub(super) fn limits(m: &RawMeta) -> R<RunLimits> {
    let limits = RunLimits {
        max_events: match m.max_events {
            Some(0) => return err("scenario.max_events", "must be >= 1 (got 0)"),
            Some(n) => n,
            None => DEFAULT_MAX_EVENTS,
        },
        max_in_flight: match m.max_in_flight {
            Some(0) => return err("scenario.max_in_flight", "must be >= 1 (got 0)"),
            Some(n) => n,
            None => DEFAULT_MAX_IN_FLIGHT,
        },
        max_events_per_instant: match m.max_events_per_instant {
            Some(0) => return err("scenario.max_events_per_instant", "must be >= 1 (got 0)"),
            Some(n) => n,
            None => DEFAULT_MAX_EVENTS_PER_INSTANT,
        },
        max_series_rows: crate::model::MAX_SERIES_ROWS,
        max_sim_time: positive_ticks(
            "scenario.max_sim_time_ms",
            m.max_sim_time_ms.unwrap_or(DEFAULT_MAX_SIM_TIME_MS),
        )?,
    };
    Ok(limits)
}

pub(super) fn slo(s: &RawSlo) -> R<Slo> {
    let opt = |name: &str, v: Option<f64>| -> R<Option<f64>> {
        v.map(|x| positive(&format!("slo.{name}"), x)).transpose()
    };
    // a plan's `slo` budget is this time on the virtual clock
    if let Some(ms) = opt("threshold_ms", s.threshold_ms)? {
        ticks("slo.threshold_ms", ms)?;
    }
    Ok(Slo {
        threshold_ms: opt("threshold_ms", s.threshold_ms)?,
        peak_read_rps: opt("peak_read_rps", s.peak_read_rps)?,
        peak_edge_rps: opt("peak_edge_rps", s.peak_edge_rps)?,
        response_bytes: opt("response_bytes", s.response_bytes)?,
        deadline_field_bytes: opt("deadline_field_bytes", s.deadline_field_bytes)?,
    })
}

/// `[montecarlo]`; metric names in `report` are checked by the sweep, which knows them.
pub(super) fn montecarlo(m: Option<&RawMonteCarlo>) -> R<MonteCarlo> {
    let Some(m) = m else {
        return Ok(MonteCarlo {
            replications: None,
            confidence: 0.95,
            report: Vec::new(),
            baseline: Vec::new(),
            windows: false,
        });
    };
    let confidence = m.confidence.unwrap_or(0.95);
    if !(confidence > 0.0 && confidence < 1.0) {
        return err(
            "montecarlo.confidence",
            format!("must be in (0, 1), e.g. 0.95 (got {})", num(confidence)),
        );
    }
    Ok(MonteCarlo {
        replications: m
            .replications
            .map(|n| count("montecarlo.replications", n, 1))
            .transpose()?,
        confidence,
        report: m.report.clone().unwrap_or_default(),
        baseline: m.baseline.clone().unwrap_or_default(),
        windows: m.windows.unwrap_or(false),
    })
}

pub(super) fn analysis(a: &RawAnalysis) -> R<Analysis> {
    let error_budget = match &a.error_budget {
        None => None,
        Some(e) => {
            let p = "analysis.error_budget";
            let budget_minutes = positive(&format!("{p}.budget_minutes"), e.budget_minutes)?;
            for (i, (m, n)) in e.incidents.iter().enumerate() {
                non_negative(&format!("{p}.incidents.{i}.0"), *m)?;
                non_negative(&format!("{p}.incidents.{i}.1"), *n)?;
            }
            Some(ErrorBudget {
                budget_minutes,
                incidents: e.incidents.clone(),
            })
        }
    };
    let acceptance = match a.acceptance {
        Some(x) if !(x > 0.0 && x <= 1.0) => {
            return err(
                "analysis.acceptance",
                format!("must be in (0, 1] (got {})", num(x)),
            );
        }
        x => x,
    };
    for (i, r) in a.p95_rules_rounds.iter().flatten().enumerate() {
        non_negative(&format!("analysis.p95_rules_rounds.{i}"), *r)?;
    }
    let recovery_fraction = a.recovery_fraction.unwrap_or(0.9);
    if !(recovery_fraction > 0.0 && recovery_fraction <= 1.0) {
        return err(
            "analysis.recovery_fraction",
            format!("must be in (0, 1] (got {})", num(recovery_fraction)),
        );
    }
    let recovery_windows = count_u32(
        "analysis.recovery_windows",
        a.recovery_windows.unwrap_or(5),
        1,
    )?;
    Ok(Analysis {
        recovery_windows,
        recovery_fraction,
        error_budget,
        active_members: a
            .active_members
            .map(|n| count("analysis.active_members", n, 1))
            .transpose()?,
        acceptance,
        p95_rules_rounds: a.p95_rules_rounds.clone().unwrap_or_default(),
        throughput_rule: a.throughput_rule.unwrap_or(false),
    })
}

/// `[thresholds]`: each condition parsed; metric names are checked by whoever
/// knows the metrics (the run or the sweep).
pub(super) fn thresholds(raw: &RawScenario) -> R<Vec<Threshold>> {
    raw.thresholds
        .iter()
        .map(|(metric, condition)| {
            Threshold::parse(metric, condition)
                .map_err(|m| ScenarioError::new(format!("thresholds.\"{metric}\""), m))
        })
        .collect()
}
