//! How one attempt of a call ended: the words retry policies and budgets
//! count by.

/// Attempt outcomes a retry may follow, as a bit set of [`AttemptOutcome`]s.
pub type OutcomeSet = u8;

/// How one attempt ended (the `calls` table counts attempts by these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Answered successfully.
    Ok,
    /// Answered with a failure (a dependency's error, a service's dropped request).
    Error,
    /// No answer within the attempt's deadline.
    Timeout,
    /// Refused by a full server (503).
    Shed,
    /// Refused by a limiter (429).
    Rejected,
    /// Given up by the policy (a hedge loser) or from above.
    Cancelled,
}

impl AttemptOutcome {
    /// Names as written in `retry.on` and in the `calls` table's columns.
    pub const NAMES: [(&'static str, AttemptOutcome); 6] = [
        ("ok", AttemptOutcome::Ok),
        ("error", AttemptOutcome::Error),
        ("timeout", AttemptOutcome::Timeout),
        ("shed", AttemptOutcome::Shed),
        ("rejected", AttemptOutcome::Rejected),
        ("cancelled", AttemptOutcome::Cancelled),
    ];

    /// This outcome's bit in an [`OutcomeSet`].
    pub const fn bit(self) -> OutcomeSet {
        1 << (self as u8)
    }
}
