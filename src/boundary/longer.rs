//! The run's length in a boundary search. A recovery metric is judged on the
//! windows in which the workloads send: `recovery.stuck` is "not recovered
//! while the workloads still sent", so a longer run gives the system longer
//! to recover and can move the crossing. The search therefore runs again with
//! every workload's `duration_ms` doubled (the faults where they were), and
//! the report puts both crossings side by side, or says why it could not.

use super::Curve;
use toml::Value;

/// The search at twice the run's length, or why there is none.
#[derive(Debug, Clone)]
pub enum Longer {
    /// Run again with these keys (each workload's `duration_ms`) at these
    /// values (twice the file's).
    Searched {
        keys: Vec<(String, f64)>,
        curves: Vec<Curve>,
    },
    /// Not run, and why.
    Skipped(String),
}

impl Longer {
    /// The doubled keys as `KEY = VALUE, ...` (empty when skipped).
    pub fn keys_text(&self) -> String {
        match self {
            Longer::Searched { keys, .. } => (keys.iter())
                .map(|(k, v)| format!("{k} = {}", crate::format::format_number(*v)))
                .collect::<Vec<_>>()
                .join(", "),
            Longer::Skipped(_) => String::new(),
        }
    }
}

/// Whether `metric` depends on how long the run sends: the recovery metrics.
pub fn depends_on_length(metric: &str) -> bool {
    metric.starts_with("recovery.")
}

/// What `metric` means, when a plain reading of its name could mislead.
pub fn meaning(metric: &str) -> Option<String> {
    let column = metric.rsplit('.').next().unwrap_or(metric);
    let fault = if metric.split('.').count() > 2 {
        "that fault"
    } else {
        "the fault"
    };
    let text = match column {
        "stuck" => format!(
            "{metric} is the share of replications in which goodput did not come back after {fault} \
             (analysis.recovery_windows whole windows at analysis.recovery_fraction of the goodput before it) \
             while the workloads still sent: a run that sends longer after {fault} gives it longer to recover"
        ),
        "recovery_ms" | "recovered_at_ms" => format!(
            "{metric} is empty in a replication that did not recover while the workloads still sent, \
             so its mean is over the replications that did"
        ),
        "min_goodput_per_s" => format!(
            "{metric} is the lowest goodput of a window from {fault}'s start until it recovered, \
             or until the workloads stopped sending"
        ),
        _ => return None,
    };
    Some(text)
}

/// Each workload's `duration_ms` in `doc` (the file with `--set` applied),
/// doubled; or why the run's length cannot be doubled that way. `axes`: the
/// searched keys (one of them may be the run's length itself).
pub fn doubled(doc: &toml::Table, axes: &[&str]) -> Result<Vec<(String, f64)>, String> {
    let mut workloads: Vec<(String, &toml::Table)> = Vec::new();
    if let Some(Value::Table(w)) = doc.get("workload") {
        workloads.push(("workload".into(), w));
    }
    if let Some(Value::Table(all)) = doc.get("workloads") {
        for (name, w) in all {
            if let Value::Table(w) = w {
                workloads.push((format!("workloads.{name}"), w));
            }
        }
    }
    let mut keys = Vec::new();
    for (path, w) in workloads {
        let kind = w.get("type").and_then(Value::as_str).unwrap_or("");
        if !matches!(kind, "open" | "closed") {
            return Err(format!(
                "`{path}` ({kind}) sends a set of requests, not for a time: its run has no duration_ms to double"
            ));
        }
        if w.contains_key("requests") {
            return Err(format!(
                "`{path}` is bounded by `requests`: double them (--set {path}.requests=...) to see the crossing in a longer run"
            ));
        }
        let key = format!("{path}.duration_ms");
        let Some(d) = w
            .get("duration_ms")
            .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
        else {
            return Err(format!("`{path}` has no duration_ms"));
        };
        if axes.contains(&key.as_str()) {
            return Err(format!("the search's axis is the run's length ({key})"));
        }
        keys.push((key, 2.0 * d));
    }
    if keys.is_empty() {
        return Err("the scenario has no workload".into());
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn each_workloads_duration_is_doubled_or_the_reason_is_given() {
        let one = doc("[workload]\ntype = \"open\"\nrate_rps = 5\nduration_ms = 60000\n");
        assert_eq!(
            doubled(&one, &["workload.rate_rps"]),
            Ok(vec![("workload.duration_ms".into(), 120_000.0)])
        );
        let axis = doubled(&one, &["workload.duration_ms"]).unwrap_err();
        assert!(axis.contains("axis is the run's length"), "{axis}");
        let two = doc(
            "[workloads.a]\ntype = \"closed\"\nusers = 2\nduration_ms = 1000\n\
             [workloads.b]\ntype = \"open\"\nrate_rps = 1\nrequests = 10\n",
        );
        let why = doubled(&two, &[]).unwrap_err();
        assert!(
            why.contains("`workloads.b` is bounded by `requests`"),
            "{why}"
        );
        let seq = doc("[workload]\ntype = \"sequence\"\nrequests = 4\n");
        assert!(doubled(&seq, &[]).unwrap_err().contains("(sequence)"));
    }

    #[test]
    fn recovery_metrics_say_what_they_mean() {
        assert!(depends_on_length("recovery.stuck"));
        assert!(!depends_on_length("outcomes.answered_pct"));
        let m = meaning("recovery.fault_1.stuck").unwrap();
        assert!(m.contains("while the workloads still sent") && m.contains("that fault"));
        assert_eq!(meaning("outcomes.answered_pct"), None);
    }
}
