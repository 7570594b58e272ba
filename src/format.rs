//! How numbers are written, in report tables, CSV files and axis labels alike.
//! A module of its own so that `scenario` (axis labels) and `report` (tables)
//! both use it without one reaching into the other.

/// Whole numbers without decimals; others with at least two and at most six,
/// trailing zeros trimmed.
pub fn format_number(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    // whole numbers (most counts) without the fixed-precision formatting, which
    // is the slow part of a sweep's replications.csv; the same text either way
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return (x as i64).to_string();
    }
    let rounded = format!("{x:.6}");
    let trimmed = rounded.trim_end_matches('0');
    let (int, frac) = trimmed.split_once('.').unwrap_or((trimmed, ""));
    // "-0" only when nothing is left of the number (-0.0000001); -0.5 keeps its sign
    let int = if int == "-0" && frac.is_empty() {
        "0"
    } else {
        int
    };
    match frac.len() {
        0 => int.to_string(),
        1 => format!("{int}.{frac}0"),
        _ => format!("{int}.{frac}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole-number shortcut writes what the general path writes.
    #[test]
    fn whole_numbers_read_as_the_general_path_writes_them() {
        let general = |x: f64| {
            let rounded = format!("{x:.6}");
            let t = rounded
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string();
            if t == "-0" { "0".to_string() } else { t }
        };
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            48.0,
            1e6,
            -123456789.0,
            999_999_999_999_999.0,
            2f64.powi(49),
        ] {
            assert_eq!(format_number(x), general(x), "{x}");
        }
    }

    #[test]
    fn numbers_are_whole_or_have_at_least_two_decimals() {
        assert_eq!(format_number(48.0), "48");
        assert_eq!(format_number(46.1875), "46.1875");
        assert_eq!(format_number(45.8), "45.80");
        assert_eq!(format_number(68.571_428_571), "68.571429");
        assert_eq!(format_number(-0.000_000_1), "0");
        assert_eq!(format_number(-0.554_26), "-0.55426");
        assert_eq!(format_number(-0.5), "-0.50");
        assert_eq!(format_number(-2.0), "-2");
        assert_eq!(format_number(20555.6), "20555.60");
    }
}
