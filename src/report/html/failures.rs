//! The failed requests of `outcomes` on their own scale. The outcomes chart
//! stacks every request, so a failure of 0.2 % is a sliver no one sees; this
//! chart stacks only the ways of failing, as shares of each row's requests, in
//! the outcomes chart's colours, and writes each row's failed share and count
//! at its bar's end.

use super::charts::{self, Bar, BarChart};
use super::{OUTCOME_PARTS, Table, bar_label, format::rounded};
use crate::error::Error;

/// The chart, when some row failed a request (else `None`: nothing to show).
pub(super) fn failure_chart(t: &Table, axes: usize) -> Result<Option<String>, Error> {
    let Some(requests) = t.column("requests") else {
        return Ok(None);
    };
    // the ways of failing that happened: the outcomes chart's parts after
    // `answered`, in its order, so the colours match
    let kinds: Vec<(usize, &str)> = OUTCOME_PARTS[1..]
        .iter()
        .filter_map(|name| {
            let c = t.column(name)?;
            t.rows
                .iter()
                .any(|r| r[c].number().is_some_and(|v| v > 0.0))
                .then_some((c, *name))
        })
        .collect();
    if kinds.is_empty() {
        return Ok(None);
    }
    let keys: Vec<usize> = t.column("workload").into_iter().collect();
    let bars = t
        .rows
        .iter()
        .map(|r| {
            let n = r[requests].number().unwrap_or(0.0);
            let share = |v: f64| if n > 0.0 { v / n * 100.0 } else { 0.0 };
            let counts: Vec<f64> = kinds
                .iter()
                .map(|&(c, _)| r[c].number().unwrap_or(0.0))
                .collect();
            let failed: f64 = counts.iter().sum();
            Bar {
                label: bar_label(r, axes, &keys),
                parts: counts.iter().map(|&v| share(v)).collect(),
                end: Some(if failed > 0.0 {
                    format!(
                        "{} % ({})",
                        rounded(share(failed), true),
                        crate::format::format_number(failed)
                    )
                } else {
                    "none".into()
                }),
            }
        })
        .collect();
    let y_label: Vec<&str> = t.headers[..axes]
        .iter()
        .map(String::as_str)
        .chain(keys.iter().map(|&c| t.headers[c].as_str()))
        .collect();
    charts::bar_chart(&BarChart {
        title: "Failed requests on their own scale: the share of each row's requests per way of failing".into(),
        x_label: "% of the row's requests".into(),
        y_label: y_label.join(", "),
        parts: kinds.iter().map(|(_, n)| n.to_string()).collect(),
        bars,
        first_color: 1,
    })
    .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Cell;

    fn outcomes(rows: &[(&str, i64, i64, i64)]) -> Table {
        let headers = ["variant", "requests", "answered", "timed_out", "shed"];
        let mut t = Table::new("outcomes", "O", headers.map(String::from).to_vec());
        for &(v, n, timed_out, shed) in rows {
            let answered = n - timed_out - shed;
            t.push(vec![
                Cell::from(v),
                n.into(),
                answered.into(),
                timed_out.into(),
                shed.into(),
            ]);
        }
        t
    }

    #[test]
    fn small_failures_get_a_chart_of_their_own_with_their_share_written() {
        let t = outcomes(&[("a", 10_000, 20, 0), ("b", 10_000, 0, 0)]);
        let svg = failure_chart(&t, 1).unwrap().expect("a row failed");
        assert!(svg.contains("0.20 % (20)"), "{svg}");
        assert!(svg.contains(">none<") || svg.contains("\nnone\n"), "{svg}");
        assert!(svg.contains("timed_out") && !svg.contains(">shed<"));
        let none = outcomes(&[("a", 10, 0, 0)]);
        assert_eq!(failure_chart(&none, 1).unwrap(), None);
    }
}
