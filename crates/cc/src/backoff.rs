//! Backoff rules: what `T_{i+1}` is, given `T_i`.

use crate::exchange::{Exchange, Sample, SampleKind};
use crate::time::{Duration, Instant};

/// Binary exponential backoff, RFC 7252 §4.2: `T_{i+1} = min(2·T_i, cap)`.
pub fn binary(timer: Duration, cap: Duration) -> Duration {
    timer.mul(2).min(cap)
}

/// CoCoA's variable backoff factor (draft-ietf-core-cocoa-03 §4.2), truncated at `cap`.
///
/// SPEC §3.1 resolves the draft's ambiguity: the factor is chosen **on the current timer at
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

/// Karn's rule with retention of the backed-off timer, shared by `linux-rto` and
/// `peakhopper-rto` (SPEC §3.1): a response after `k = 0` is a strong sample — `feed` the
/// estimator and forget any retained timer; after `k ≥ 1` the sample is ambiguous and the
/// exchange's backed-off `T_k` is kept for new exchanges until the next strong sample.
pub(crate) fn karn_response(
    now: Instant,
    ex: &Exchange,
    retained: &mut Option<Duration>,
    feed: impl FnOnce(Duration),
) -> Sample {
    let rtt = now - ex.started;
    if ex.retransmissions == 0 {
        feed(rtt);
        *retained = None;
        Sample::new(SampleKind::Strong, rtt)
    } else {
        *retained = Some(ex.timer);
        Sample::new(SampleKind::Ambiguous, rtt)
    }
}
