//! Calls into foreign code counted (a C library's functions here, a Python class's methods in
//! `crates/py`), so that a supervisor can tell a call that does not return: coaplab runs
//! `python:`/`c:` algorithms in a worker process whose watchdog reads [`counts`] and ends the
//! process when a call has been in progress, with no call started or ended, for longer than
//! the plug-in time limit (`python/coaplab/execute/supervise.py`, docs/algorithms.md).
//!
//! Two relaxed atomic increments per call; nothing else (no clock read on the decision path).

use std::sync::atomic::{AtomicU64, Ordering};

static STARTED: AtomicU64 = AtomicU64::new(0);
static ENDED: AtomicU64 = AtomicU64::new(0);

/// One call into foreign code, counted as started now and as ended when dropped.
#[must_use = "the call is counted as ended when this guard is dropped"]
pub struct Call(());

impl Call {
    /// Counts a call as started (it ends when the guard is dropped).
    #[inline]
    pub fn enter() -> Call {
        STARTED.fetch_add(1, Ordering::Relaxed);
        Call(())
    }
}

impl Drop for Call {
    #[inline]
    fn drop(&mut self) {
        ENDED.fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts a call as started without a guard (the Python front's own calls into a plug-in:
/// importing its file, constructing its class); [`leave`] ends it.
pub fn enter() {
    STARTED.fetch_add(1, Ordering::Relaxed);
}

/// Ends a call begun with [`enter`].
pub fn leave() {
    ENDED.fetch_add(1, Ordering::Relaxed);
}

/// (calls started, calls ended) in this process so far.
pub fn counts() -> (u64, u64) {
    (
        STARTED.load(Ordering::Relaxed),
        ENDED.load(Ordering::Relaxed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_in_progress_is_started_and_not_ended() {
        let (s0, e0) = counts();
        let call = Call::enter();
        let (s1, e1) = counts();
        assert!(s1 > s0);
        assert!(e1 >= e0);
        drop(call);
        let (s2, e2) = counts();
        assert!(s2 >= s1 && e2 > e0);
    }
}
