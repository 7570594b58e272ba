//! How the page writes a number: rounded to the figures a reader compares. The
//! CSV files and the printed report keep their own formatting (every digit the
//! CSV has); only `report.html`'s tables go through [`rounded`].

use crate::table::{Cell, Table};

/// The significant figures of an ordinary number on the page.
const FIGURES: i32 = 4;

/// The most decimals a share is given (a share one in 10^9 from 100 %).
const SHARE_DECIMALS: i32 = 9;

/// `x` as the page shows it.
///
/// - A whole number as a whole number (`35668`, `10`).
/// - A share (`share`: a `_pct` column, a percentile) with two decimals, and
///   more when it is within 1 of 0 or of 100: then the distance to the nearer
///   of the two keeps two significant figures (`99.9913` stays `99.9913`, 0.0087
///   from 100; `99.1` is `99.10`; `0.0012` stays `0.0012`; `99.989972` is
///   `99.990`), trailing zeros past the second decimal dropped only when the
///   share is exactly what is left (`99.99`, not `99.990`). So a share that is
///   not 100 never reads as 100, nor one above 0 as 0, nor one near a
///   percentile as that percentile.
/// - Any other number with 4 significant figures, but never fewer than its
///   integer digits (`167.557091` is `167.6`, `95.503534` is `95.50`,
///   `0.000123456` is `0.0001235`, `12345.678` is `12346`); below 10^-6 in
///   scientific form (`1.235e-7`).
///
/// Not finite: empty, as in the CSV.
pub(crate) fn rounded(x: f64, share: bool) -> String {
    if !x.is_finite() {
        return String::new();
    }
    if (x.fract() == 0.0 && x.abs() < 1e15) || x.abs() >= 1e15 {
        return crate::format::format_number(x);
    }
    if share {
        return share_text(x);
    }
    let magnitude = x.abs().log10().floor() as i32;
    if magnitude < -6 {
        return format!("{x:.*e}", (FIGURES - 1) as usize);
    }
    let mut decimals = (FIGURES - 1 - magnitude).max(0);
    let mut text = fixed(x, decimals);
    // rounding up can add a digit (9.99995 to 10.000): one decimal fewer then
    if decimals > 0
        && text
            .trim_start_matches('-')
            .split('.')
            .next()
            .is_some_and(|int| int.len() as i32 > magnitude.max(0) + 1)
    {
        decimals -= 1;
        text = fixed(x, decimals);
    }
    text
}

/// A share: see [`rounded`].
fn share_text(x: f64) -> String {
    let gap = x.abs().min((100.0 - x).abs());
    let decimals = if gap > 0.0 && gap < 1.0 {
        (1 - gap.log10().floor() as i32).clamp(2, SHARE_DECIMALS)
    } else {
        2
    };
    let text = fixed(x, decimals);
    // a share that is what it reads (99.99, a percentile) without its zeros;
    // one near it (99.989972) keeps them: "99.990" is not "99.99"
    match text.split_once('.') {
        Some((int, frac)) if frac.len() > 2 => {
            let kept = frac.trim_end_matches('0');
            let kept = if kept.len() < 2 { &frac[..2] } else { kept };
            let short = format!("{int}.{kept}");
            if short.parse::<f64>() == Ok(x) {
                short
            } else {
                text
            }
        }
        _ => text,
    }
}

/// `x` with `decimals` decimals, without a sign when nothing of it is left.
fn fixed(x: f64, decimals: i32) -> String {
    let text = format!("{x:.*}", decimals.max(0) as usize);
    if text.starts_with('-') && text[1..].chars().all(|c| c == '0' || c == '.') {
        text[1..].to_string()
    } else {
        text
    }
}

/// Whether the column `header` holds shares in percent: a `_pct` column or a
/// percentile.
pub(crate) fn share_column(header: &str) -> bool {
    header.ends_with("_pct") || header == "percentile"
}

/// Per column of `t`, whether it holds shares ([`share_column`]).
pub(crate) fn share_columns(t: &Table) -> Vec<bool> {
    t.headers.iter().map(|h| share_column(h)).collect()
}

/// Whether the row's numbers are shares because it is a line of a metric that
/// is one (a sweep's `outcomes.answered_pct` line): `metric` is the table's
/// `metric` column, if any.
pub(crate) fn share_row(row: &[Cell], metric: Option<usize>) -> bool {
    metric.is_some_and(|m| matches!(&row[m], Cell::Text(name) if share_column(name.rsplit('.').next().unwrap_or(name))))
}

/// A cell as the page shows it: numbers [`rounded`], the rest as in the CSV.
pub(crate) fn cell_text(c: &Cell, share: bool) -> String {
    match c {
        Cell::Num(x) => rounded(*x, share),
        _ => c.render(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_numbers_keep_four_figures_and_every_integer_digit() {
        for (x, want) in [
            (167.557091, "167.6"),
            (95.503534, "95.50"),
            (0.000123456, "0.0001235"),
            (12345.678, "12346"),
            (-12345.678, "-12346"),
            (6.666667, "6.667"),
            (2.5, "2.500"),
            (0.5, "0.5000"),
            (-0.25, "-0.2500"),
            (9.99996, "10.00"),
            (99.99996, "100.0"),
            (999.96, "1000"),
            (0.000000123456, "1.235e-7"),
        ] {
            assert_eq!(rounded(x, false), want, "{x}");
        }
    }

    #[test]
    fn whole_numbers_stay_whole_and_non_finite_ones_are_empty() {
        assert_eq!(rounded(35668.0, false), "35668");
        assert_eq!(rounded(10.0, true), "10");
        assert_eq!(rounded(100.0, true), "100");
        assert_eq!(rounded(0.0, true), "0");
        assert_eq!(rounded(-0.0, false), "0");
        assert_eq!(rounded(f64::NAN, false), "");
        assert_eq!(rounded(f64::INFINITY, true), "");
        assert_eq!(rounded(1e20, false), crate::format::format_number(1e20));
    }

    #[test]
    fn a_share_near_100_or_0_shows_its_distance_to_two_figures() {
        for (x, want) in [
            (95.503534, "95.50"),
            (33.333333, "33.33"),
            (99.100034, "99.10"),
            (99.587866, "99.59"),
            (99.875, "99.88"),
            (99.9913, "99.9913"),
            (99.99, "99.99"),
            (99.989972, "99.990"),
            (99.9, "99.90"),
            (97.5, "97.50"),
            (99.9999999, "99.9999999"),
            (99.9999999999, "100.000000000"),
            (0.0012, "0.0012"),
            (0.5, "0.50"),
            (0.123456, "0.12"),
            (0.0123456, "0.012"),
            (-0.001, "-0.001"),
            (-0.00101, "-0.0010"),
            (100.004, "100.004"),
            (250.1234, "250.12"),
            (1.859008, "1.86"),
        ] {
            assert_eq!(rounded(x, true), want, "{x}");
        }
    }

    #[test]
    fn shares_are_told_by_the_column_or_the_metric() {
        assert!(share_column("answered_pct") && share_column("percentile"));
        assert!(!share_column("p99_ms") && !share_column("pct_of"));
        let metric = Some(0);
        let line = |m: &str| vec![Cell::Text(m.into()), Cell::Num(99.5)];
        assert!(share_row(&line("outcomes.answered_pct"), metric));
        assert!(share_row(&line("calls.\"a.b\".retry_pct"), metric));
        assert!(!share_row(&line("outcomes.p99_ms"), metric));
        assert!(!share_row(&line("outcomes.answered_pct"), None));
        assert_eq!(cell_text(&Cell::Int(7), true), "7");
        assert_eq!(cell_text(&Cell::Empty, false), "");
        assert_eq!(cell_text(&Cell::Num(95.503534), false), "95.50");
    }
}
