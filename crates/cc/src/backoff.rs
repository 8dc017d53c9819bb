//! Backoff rules: what `T_{i+1}` is, given `T_i`.

use crate::time::Duration;

/// Binary exponential backoff, RFC 7252 §4.2: `T_{i+1} = min(2·T_i, cap)`.
pub fn binary(timer: Duration, cap: Duration) -> Duration {
    timer.mul(2).min(cap)
}

/// CoCoA's variable backoff factor (draft-ietf-core-cocoa-03 §4.2), truncated at `cap`.
///
/// docs/design.md §3.1 resolves the draft's ambiguity: the factor is chosen **on the current timer at
/// every retransmission** (not once from the initial RTO): `×3` if `T_i < 1 s`, `×1.5` if
/// `T_i > 3 s`, else `×2`. A 2–3 s timer therefore backs off ×2 once and ×1.5 from then on.
pub fn cocoa_vbf(timer: Duration, cap: Duration) -> Duration {
    let next = if timer < Duration::from_secs(1) {
        timer.mul(3)
    } else if timer > Duration::from_secs(3) {
        timer.mul_ratio(3, 2)
    } else {
        timer.mul(2)
    };
    next.min(cap)
}
