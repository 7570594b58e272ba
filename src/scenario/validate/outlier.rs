//! `[services.NAME.outlier_detection]` and
//! `[dependencies.NAME.outlier_detection]`: Envoy's consecutive-failure
//! ejection of a replicated target's replicas.

use super::*;

/// The shortest `interval_ms`: Envoy's resolution.
pub const MIN_INTERVAL_MS: f64 = 1.0;

/// The outlier detection at `path` of a target (`what`: a service or a
/// dependency) with `replicas` instances (None when the table is absent).
pub(super) fn outlier(
    path: &str,
    raw: Option<&RawOutlier>,
    (what, replicas): (&str, u32),
) -> R<Option<Outlier>> {
    let Some(o) = raw else {
        return Ok(None);
    };
    if replicas < 2 {
        return err(
            path,
            format!(
                "ejects replicas, and the {what} has {replicas}: set `replicas` to 2 or more, or remove the table"
            ),
        );
    }
    let consecutive_failures = match o.consecutive_failures {
        Some(n) => count_u32(&format!("{path}.consecutive_failures"), n, 1)?,
        None => 5,
    };
    let interval_ms = o.interval_ms.unwrap_or(10_000.0);
    let interval = positive_ticks(&format!("{path}.interval_ms"), interval_ms)?;
    // Envoy counts the sweep period in whole milliseconds (interval_ms_ of
    // DetectorConfig::DetectorConfig, source/common/upstream/
    // outlier_detection_impl.cc, read with PROTOBUF_GET_MS_OR_DEFAULT): a
    // shorter one has no meaning there, and here a sweep (and a count of
    // picks per replica) per nanosecond would take the memory of the machine.
    if interval_ms < MIN_INTERVAL_MS {
        return err(
            format!("{path}.interval_ms"),
            format!(
                "{} is below {MIN_INTERVAL_MS} ms, the shortest sweep period (Envoy counts it in whole milliseconds)",
                num(interval_ms)
            ),
        );
    }
    let base_ejection = positive_ticks(
        &format!("{path}.base_ejection_ms"),
        o.base_ejection_ms.unwrap_or(30_000.0),
    )?;
    let pct_path = format!("{path}.max_ejection_pct");
    let max_ejection_pct = finite(&pct_path, o.max_ejection_pct.unwrap_or(10.0))?;
    if !(0.0..=100.0).contains(&max_ejection_pct) {
        return err(
            pct_path,
            format!(
                "{} is not a share of the replicas: must be between 0 and 100",
                num(max_ejection_pct)
            ),
        );
    }
    // Envoy: `max_ejection_time` defaults to the larger of 300 s and
    // `base_ejection_time`, and one below `base_ejection_time` is refused
    // (source/common/upstream/outlier_detection_impl.cc, DetectorConfig and
    // DetectorImpl::create).
    let max_ejection = match o.max_ejection_ms {
        None => Ticks::from_ms(300_000.0).max(base_ejection),
        Some(v) => {
            let key = format!("{path}.max_ejection_ms");
            let t = positive_ticks(&key, v)?;
            if t < base_ejection {
                return err_vs(
                    key,
                    format!("{path}.base_ejection_ms"),
                    format!(
                        "must be >= base_ejection_ms = {} (got {}): an ejection lasts at least one base",
                        num(base_ejection.as_ms()),
                        num(v)
                    ),
                );
            }
            t
        }
    };
    Ok(Some(Outlier {
        consecutive_failures,
        interval,
        base_ejection,
        max_ejection,
        max_ejection_pct,
        always_eject_one: o.always_eject_one_host.unwrap_or(false),
    }))
}
