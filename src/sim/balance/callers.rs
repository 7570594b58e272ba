//! The callers of a caller view (`view = "caller"`), as keys: a workload's
//! index, or a calling service instance; and each one's name, for its stream.

use crate::model::{Model, ServiceId};

/// A caller's key: a workload's index, or a service instance (this bit, the
/// service above bit 32, the replica from 0 below).
const INSTANCE: u64 = 1 << 63;

/// The key of `service`'s instance `replica` (from 0) as a caller.
#[inline]
pub(crate) fn instance_key(service: ServiceId, replica: usize) -> u64 {
    INSTANCE | (service as u64) << 32 | replica as u64
}

/// The name of caller `key` in its stream: the workload's name, or the
/// service's (`NAME#i` for its replica i > 1, as faults name replicas).
pub(crate) fn caller_name(model: &Model, key: u64) -> String {
    if key & INSTANCE == 0 {
        return model
            .workloads
            .get(key as usize)
            .map_or_else(|| key.to_string(), |w| w.name.clone());
    }
    let service = ((key & !INSTANCE) >> 32) as usize;
    let replica = key as u32;
    let name = &model.services[service].name;
    if replica == 0 {
        name.clone()
    } else {
        format!("{name}#{}", replica + 1)
    }
}
