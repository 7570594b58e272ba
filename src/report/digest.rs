//! The digest of a run: what `resim run` prints by default and what
//! `report.html` opens with. A scenario's tables can run to thousands of lines;
//! the digest keeps the figures that answer its question:
//!
//! - the outcome of every compare row (and workload): requests, the answered
//!   share, the times within which half and 99 % of ALL requests got an answer,
//!   and how the others failed;
//! - the tables that answer the scenario's own question when it has them
//!   ([`ANSWERS`]: a ladder's findings and limit rules, a fault's recovery, a limiter's coverage,
//!   bursts, counts and rejections), whole;
//! - where the files are, and how to see every table (`--tables`).

use super::{Cell, Scope, Table};

/// Tables that answer a scenario's question, in the order the digest shows them.
pub const ANSWERS: [&str; 8] = [
    "findings",
    "limit_rules",
    "recovery",
    "coverage",
    "bursts",
    "limiters",
    "rejects",
    "false_drops",
];

/// The ways of failing of `outcomes`, as the digest names them.
const FAILURES: [(&str, &str); 7] = [
    ("dropped", "dropped"),
    ("timed_out", "timed out"),
    ("shed", "shed"),
    ("rejected", "rejected"),
    ("errors", "errors"),
    ("refused", "refused"),
    ("not_found", "not found"),
];

/// The outcome of every compare row, from `outcomes`: its axis and key columns,
/// then `requests`, `answered_pct`, `p50_all_ms`, `p99_all_ms` and the failures
/// by kind in words ("shed 1393, timed out 12", or "none"). None without an
/// `outcomes` table.
pub fn outcomes(tables: &[Table]) -> Option<Table> {
    let t = tables.iter().find(|t| t.name == "outcomes")?;
    let keys = match t.scope {
        Scope::PerCompareRow { axes, key } => axes + key,
        Scope::AcrossRows => 0,
    };
    let columns = ["requests", "answered_pct", "p50_all_ms", "p99_all_ms"];
    let at: Vec<Option<usize>> = columns.iter().map(|c| t.column(c)).collect();
    let failures: Vec<(usize, &str)> = FAILURES
        .iter()
        .filter_map(|(c, words)| Some((t.column(c)?, *words)))
        .collect();
    let headers = t.headers[..keys]
        .iter()
        .cloned()
        .chain(columns.iter().map(|c| c.to_string()))
        .chain(["failed".to_string()])
        .collect();
    let mut out = Table {
        name: "digest".into(),
        title: "Outcome per row: answered share, times within which 50 % and 99 % of ALL requests were answered, and how the rest failed".into(),
        headers,
        rows: Vec::new(),
        notes: Vec::new(),
        scope: t.scope,
        printed: true,
    };
    for row in &t.rows {
        let mut cells: Vec<Cell> = row[..keys].to_vec();
        cells.extend(at.iter().map(|c| c.map_or(Cell::Empty, |c| row[c].clone())));
        let failed: Vec<String> = failures
            .iter()
            .filter_map(|&(c, words)| match &row[c] {
                Cell::Int(n) if *n > 0 => Some(format!("{words} {n}")),
                _ => None,
            })
            .collect();
        cells.push(Cell::Text(if failed.is_empty() {
            "none".into()
        } else {
            failed.join(", ")
        }));
        out.rows.push(cells);
    }
    // beside the percentiles: those that rest on a thin tail
    out.notes.extend(
        t.notes
            .iter()
            .filter(|n| n.starts_with("thin tail:") && n.contains("p99_all_ms"))
            .cloned(),
    );
    if out.rows.iter().any(|r| r.contains(&Cell::Empty)) {
        out.notes.push(
            "an empty p50_all_ms / p99_all_ms: more than half / 1 % of the requests failed, so no such time exists"
                .into(),
        );
    }
    Some(out)
}

/// One line that sums a run up, for the index of a run of several scenarios:
/// its compare rows, the range of their answered shares and the ways requests
/// failed ("12 rows; answered 0 % to 100 %; failed: dropped, shed").
pub fn headline(tables: &[Table]) -> String {
    let Some(t) = outcomes(tables) else {
        return String::new();
    };
    let pct = t.column("answered_pct");
    let shares: Vec<f64> = t
        .rows
        .iter()
        .filter_map(|r| match pct.map(|c| &r[c]) {
            Some(Cell::Num(x)) => Some(*x),
            Some(Cell::Int(x)) => Some(*x as f64),
            _ => None,
        })
        .collect();
    let mut parts = vec![match t.rows.len() {
        1 => "1 row".to_string(),
        n => format!("{n} rows"),
    }];
    let lo = shares.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = shares.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() {
        // one decimal, none for a whole number: "28.6", "100"
        let f = |x: f64| {
            let s = format!("{x:.1}");
            s.strip_suffix(".0").map_or(s.clone(), String::from)
        };
        parts.push(if lo == hi {
            format!("answered {} %", f(lo))
        } else {
            format!("answered {} % to {} %", f(lo), f(hi))
        });
    }
    let failed = t.headers.len() - 1;
    let kinds: Vec<&str> = FAILURES
        .iter()
        .map(|(_, words)| *words)
        .filter(|words| {
            t.rows.iter().any(|r| match &r[failed] {
                Cell::Text(s) => s.split(", ").any(|p| p.starts_with(&format!("{words} "))),
                _ => false,
            })
        })
        .collect();
    parts.push(if kinds.is_empty() {
        "nothing failed".into()
    } else {
        format!("failed: {}", kinds.join(", "))
    });
    parts.join("; ")
}

/// The tables of [`ANSWERS`] the run has, in that order.
pub fn answers(tables: &[Table]) -> Vec<&Table> {
    ANSWERS
        .iter()
        .filter_map(|name| tables.iter().find(|t| t.name == *name && t.printed))
        .collect()
}

/// The digest as text: the outcome per row, the answering tables, and a line
/// on where everything else is (`files`: what the folder holds).
pub fn text(tables: &[Table], files: &str) -> String {
    let mut out = String::new();
    if let Some(t) = outcomes(tables) {
        out.push('\n');
        out.push_str(&t.render_text());
    }
    for t in answers(tables) {
        out.push('\n');
        out.push_str(&t.render_text());
    }
    let shown: Vec<&str> = answers(tables).iter().map(|t| t.name.as_str()).collect();
    let others: Vec<&str> = tables
        .iter()
        .filter(|t| t.name != "outcomes" && !shown.contains(&t.name.as_str()))
        .map(|t| t.name.as_str())
        .collect();
    // the files' line is not wrapped: where a path breaks would depend on the
    // folder's name, and two runs into two folders would print other lines
    out.push('\n');
    out.push_str(files);
    out.push_str(".\n");
    let line = if others.is_empty() {
        "Add --tables to print every table in full.".to_string()
    } else {
        format!(
            "Not shown here: outcomes in full, {} (add --tables to print every table).",
            others.join(", ")
        )
    };
    out.push_str(&super::wrap(&line, super::WIDTH));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes_table() -> Table {
        let mut t = Table::per_compare_row(
            "outcomes",
            "o",
            [
                "variant",
                "requests",
                "answered",
                "answered_pct",
                "dropped",
                "timed_out",
                "shed",
                "p50_all_ms",
                "p99_all_ms",
            ]
            .map(String::from)
            .to_vec(),
            1,
            0,
        );
        t.push(vec![
            "slow".into(),
            Cell::Int(100),
            Cell::Int(70),
            Cell::Num(70.0),
            Cell::Int(0),
            Cell::Int(25),
            Cell::Int(5),
            Cell::Num(12.5),
            Cell::Empty,
        ]);
        t.push(vec![
            "fast".into(),
            Cell::Int(100),
            Cell::Int(100),
            Cell::Num(100.0),
            Cell::Int(0),
            Cell::Int(0),
            Cell::Int(0),
            Cell::Num(2.0),
            Cell::Num(9.0),
        ]);
        t
    }

    #[test]
    fn the_digest_names_every_way_a_row_failed_and_nothing_else() {
        let d = outcomes(&[outcomes_table()]).unwrap();
        assert_eq!(
            d.headers,
            [
                "variant",
                "requests",
                "answered_pct",
                "p50_all_ms",
                "p99_all_ms",
                "failed"
            ]
        );
        assert_eq!(d.rows[0][5], Cell::Text("timed out 25, shed 5".into()));
        assert_eq!(d.rows[1][5], Cell::Text("none".into()));
        assert_eq!(d.notes.len(), 1, "the empty p99_all_ms is explained");
    }

    #[test]
    fn the_headline_gives_the_rows_the_answered_range_and_the_failures() {
        assert_eq!(
            headline(&[outcomes_table()]),
            "2 rows; answered 70 % to 100 %; failed: timed out, shed"
        );
    }

    #[test]
    fn the_digest_text_points_to_every_other_table() {
        let mut other = Table::new("run", "r", vec!["a".into()]);
        other.push(vec![Cell::Int(1)]);
        let text = text(&[outcomes_table(), other], "Files: out/x/");
        assert!(text.contains("timed out 25, shed 5"), "{text}");
        assert!(
            text.contains("Not shown here: outcomes in full, run (add --tables"),
            "{text}"
        );
    }

    #[test]
    fn the_files_line_is_never_wrapped_so_the_folder_name_cannot_move_line_breaks() {
        let long = format!(
            "Files: {}/ (3 CSV files); report: x/report.html",
            "d".repeat(150)
        );
        let text = text(&[outcomes_table()], &long);
        assert!(text.lines().any(|l| l == format!("{long}.")), "{text}");
    }
}
