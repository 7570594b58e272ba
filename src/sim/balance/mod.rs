//! Balancing: how a caller of a replicated target picks one of its replicas.
//!
//! The balancer kinds (one module each, a small type implementing
//! [`Balance`], made from the scenario's [`Balancer`](crate::kinds::balance::Balancer))
//! are in `crate::kinds::balance`; this module holds what surrounds them.
//! [`Picker`] (`view.rs`) holds a target's balancing: one balancer reading the
//! replicas' own counts (`view = "global"`), or one per caller with the
//! caller's own counts (`view = "caller"`), and hears when each pick is over.
//! With `outlier_detection` each view also holds a [`Detector`]
//! (`outlier.rs`): it hears whether each pick failed ([`Picker::heard`]) and
//! keeps the replicas it ejected out of the view's picks. With `max_conn`
//! the picker also holds the queue in front of the replicas
//! ([`ProxyQueue`], `queue.rs`): a full replica is passed over, and a
//! request no replica has room for waits there.

mod callers;
mod outlier;
mod queue;
mod view;

pub(crate) use crate::kinds::balance::Balance;
pub(crate) use callers::{caller_name, instance_key};
pub(crate) use outlier::{Detector, Ejection};
pub(crate) use queue::{Placed, ProxyQueue};
pub(crate) use view::Picker;
