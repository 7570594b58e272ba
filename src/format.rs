//! How numbers are written, in report tables, CSV files and axis labels alike.
//! A module of its own so that `scenario` (axis labels) and `report` (tables)
//! both use it without one reaching into the other.

/// Whole numbers without decimals; others with at least two and at most six,
/// trailing zeros trimmed.
pub fn format_number(x: f64) -> String {
    let mut text = String::with_capacity(24);
    push_number(&mut text, x);
    text
}

/// A confidence level as a percentage: `0.95` -> `95 %`.
pub fn percent(confidence: f64) -> String {
    format!("{} %", format_number(confidence * 100.0))
}

/// Appends [`format_number`]`(x)` to `out`, without a `String` of its own (a
/// sweep writes 10^6 numbers and more).
pub fn push_number(out: &mut String, x: f64) {
    if !x.is_finite() {
        return;
    }
    // whole numbers (most counts) without the fixed-precision formatting, which
    // is the slow part of a sweep's replications.csv; the same text either way
    if x.fract() == 0.0 && x.abs() < 1e15 {
        let whole = x as i64;
        if whole < 0 {
            out.push('-');
        }
        push_digits(out, whole.unsigned_abs());
        return;
    }
    if six_decimals(out, x) {
        return;
    }
    out.push_str(&general(x));
}

/// The general path of [`format_number`]: `{:.6}`, trimmed; a number of 10^15 or
/// more in scientific form (the shortest that reads back as the same number:
/// `1e308`, not 309 digits).
fn general(x: f64) -> String {
    if x.abs() >= 1e15 {
        return format!("{x:e}");
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

/// Appends [`format_number`] of a number that is not whole, for
/// 2^-40 <= |x| < 2^32, computed from the exact value in integers instead of the
/// general fixed-precision formatting (several times cheaper: every mean in a
/// sweep's 10^5 rows passes here). `x = m * 2^-shift` exactly, so
/// `|x| * 10^6 = m * 10^6 / 2^shift` (below 2^73), rounded half to even as
/// `{:.6}` rounds; then the trailing zeros trimmed to at least two decimals.
/// False (nothing written) outside that range.
fn six_decimals(text: &mut String, x: f64) -> bool {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as u32;
    // the biased exponent: 2^-40 <= |x| < 2^32 (no subnormals, infinities or NaN)
    if !(1023 - 40..1023 + 32).contains(&exponent) {
        return false;
    }
    let mantissa = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    let shift = 1075 - exponent; // 22..=92
    let scaled = mantissa * 1_000_000;
    let mut micros = scaled >> shift;
    let rest = scaled & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if rest > half || (rest == half && micros & 1 == 1) {
        micros += 1;
    }
    // below 2^32 * 10^6 + 1: fits in u64
    let micros = micros as u64;
    let (int, mut frac) = (micros / 1_000_000, micros % 1_000_000);
    if x < 0.0 && micros != 0 {
        text.push('-');
    }
    push_digits(text, int);
    if frac == 0 {
        return true;
    }
    // six digits, trailing zeros dropped down to two
    let mut digits = 6;
    while digits > 2 && frac % 10 == 0 {
        frac /= 10;
        digits -= 1;
    }
    text.push('.');
    let mut scale = 10u64.pow(digits - 1);
    while scale > 0 {
        text.push(char::from(b'0' + (frac / scale % 10) as u8));
        scale /= 10;
    }
    true
}

/// Appends the decimal digits of `n`.
fn push_digits(text: &mut String, n: u64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut n = n;
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    text.extend(buf[at..].iter().map(|&b| char::from(b)));
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

    /// What format_number wrote before its integer fast path: the general
    /// fixed-precision formatting, trimmed (nothing for a non-finite number).
    fn reference(x: f64) -> String {
        if x.is_finite() {
            general(x)
        } else {
            String::new()
        }
    }

    /// The integer path writes what the general formatting writes: ties at the
    /// seventh decimal (odd multiples of 2^-7 round half to even), values at the
    /// ends of its range and around them, and a million pseudo-random numbers of
    /// every magnitude and of the shapes a report has (means of small integers).
    #[test]
    fn six_decimals_are_the_general_formatting() {
        let mut cases: Vec<f64> = Vec::new();
        for k in 0..4096 {
            cases.push(f64::from(k) / 128.0);
            cases.push(f64::from(2 * k + 1) / 2048.0 + 17.0);
            cases.push(f64::from(k) / 3.0);
            cases.push(f64::from(k) * 0.1);
            cases.push(f64::from(k) * 1e-6 + 5e-7);
        }
        for e in -45..=35 {
            let p = 2f64.powi(e);
            cases.extend([p, p * 1.000_000_1, p * 0.999_999_9, p * 1.5]);
            cases.extend([p.next_up(), p.next_down()]);
        }
        cases.extend([
            4294967295.9999995,
            4294967295.999999,
            0.000_000_5,
            1.000_000_5,
        ]);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..1_000_000 {
            let r = next();
            let x = match r % 4 {
                // any bit pattern of a magnitude around the fast range
                0 => f64::from_bits(((r >> 2) % (1 << 52)) | ((980 + (r >> 54) % 80) << 52)),
                // a mean of integers
                1 => ((r >> 8) % 1_000_000) as f64 / ((r >> 40) % 1000 + 1) as f64,
                // six decimals and a half, give or take a bit
                2 => ((r >> 8) % 10_000_000_000) as f64 / 1e6 + 5e-7,
                _ => ((r >> 8) % 100_000_000) as f64 * 1e-9,
            };
            cases.push(if r & (1 << 7) == 0 { x } else { -x });
        }
        for x in cases {
            assert_eq!(format_number(x), reference(x), "{x:e} ({:#x})", x.to_bits());
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
        assert_eq!(format_number(1e308), "1e308");
        assert_eq!(format_number(-1.5e15), "-1.5e15");
    }
}
