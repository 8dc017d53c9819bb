//! Pacing for a controller that paces ([`Controller::pacing_rate`]): after a data segment of
//! `payload` bytes the next may leave `payload / rate` later (Linux's internal pacing,
//! `tcp_update_skb_after_send`, spaces segments by their payload; the rate is in payload
//! bytes too).

use coaplab_cc::{Duration, Instant};

use super::super::congestion::controller::Controller;

#[derive(Clone, Copy, Debug)]
pub(super) struct Pacing {
    /// The controller paces (asked once: a controller that paces does from the start).
    enabled: bool,
    /// The earliest the next data segment may leave.
    next: Option<Instant>,
    /// A segment is waiting for `next`.
    blocked: bool,
}

impl Pacing {
    pub(super) fn new(enabled: bool) -> Self {
        Pacing {
            enabled,
            next: None,
            blocked: false,
        }
    }

    /// A data segment of `payload` bytes went out at `now`.
    pub(super) fn on_sent(&mut self, now: Instant, payload: u32, cc: &dyn Controller) {
        // `enabled` first: without pacing (the common case) no virtual call.
        if let Some(rate) = self.enabled.then(|| cc.pacing_rate()).flatten() {
            let ns = u64::from(payload) * 1_000_000_000 / rate.max(1);
            self.next = Some(now + Duration::from_nanos(ns));
        }
        self.blocked = false;
    }

    /// Whether pacing holds data at `now` (until `next`); remembers that a segment waits.
    pub(super) fn holds(&mut self, now: Instant) -> bool {
        let held = self.enabled && self.next.is_some_and(|t| t > now);
        self.blocked |= held;
        held
    }

    /// Whether a segment was held back; clears it (the caller polls again, and pacing
    /// re-arms itself if it holds the segment back again).
    pub(super) fn take_blocked(&mut self) -> bool {
        std::mem::take(&mut self.blocked)
    }

    /// The instant the held-back segment may leave, `None` when nothing waits.
    pub(super) fn poll(&self) -> Option<Instant> {
        self.next.filter(|_| self.blocked)
    }
}
