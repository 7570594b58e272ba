//! The outlier detection's sweep period (`interval`) of Envoy and Istio, which
//! resim refuses below 1 ms (see `scenario::validate::outlier`): Envoy reads it
//! in whole milliseconds (`interval_ms_` of `DetectorConfig::DetectorConfig`,
//! source/common/upstream/outlier_detection_impl.cc, through
//! `PROTOBUF_GET_MS_OR_DEFAULT`), so a shorter one is 0 ms there, a timer
//! that fires without pause; the import refuses it naming the field.

use super::duration::{Syntax, ms};
use super::spec::Read;
use crate::error::Error;
use crate::scenario::validate::MIN_OUTLIER_INTERVAL_MS;

/// The `interval` of outlier detection `o` in milliseconds (10 s unset).
pub fn interval(o: &Read<'_>, syntax: Syntax) -> Result<f64, Error> {
    let Some(node) = o.get("interval") else {
        return Ok(10_000.0);
    };
    let v = ms(&node, syntax)?;
    if v < MIN_OUTLIER_INTERVAL_MS {
        return Err(node.err(format!(
            "{} ms is below Envoy's resolution of {MIN_OUTLIER_INTERVAL_MS} ms (Envoy reads the sweep period in whole milliseconds, so this is 0 ms there: a sweep without pause)",
            crate::error::num(v)
        )));
    }
    Ok(v)
}
