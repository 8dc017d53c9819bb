//! Delivery-rate estimation as Linux implements it (net/ipv4/tcp_rate.c;
//! draft-cheng-iccrg-delivery-rate-estimation): every segment sent records how much had been
//! delivered and when, and every ACK turns the newest acknowledged segment's record into a
//! [`RateSample`] — bytes delivered over the longer of the send and the ACK intervals. The
//! connection records every transmission and gives a sample per ACK to any controller that
//! uses them (`Controller::uses_rate_samples`, `congestion/controller.rs`).

use coaplab_cc::{Duration, Instant};

use super::congestion::controller::RateSample;

/// Linux's per-segment `tx` fields (`tcp_rate_skb_sent`): the delivery-rate snapshot of a
/// segment at its last transmission.
#[derive(Clone, Copy, Debug)]
pub struct TxRate {
    /// Last transmission time (`skb_mstamp`).
    pub at: Instant,
    /// `tp->first_tx_mstamp` then.
    pub first_tx: Instant,
    /// `tp->delivered_mstamp` then.
    pub delivered_at: Instant,
    /// `tp->delivered` then.
    pub delivered: u64,
    /// `tp->app_limited` was set.
    pub app_limited: bool,
}

impl TxRate {
    /// Linux `tcp_rate_skb_delivered`: of the newly acknowledged segments, the sample comes
    /// from the most recently sent (largest `tx.delivered`, the first such); `snap` holds the
    /// choice so far.
    pub fn pick(self, snap: &mut Option<TxRate>) {
        if snap.is_none_or(|p| p.delivered == 0 || self.delivered > p.delivered) {
            *snap = Some(self);
        }
    }
}

/// The sender's delivery-rate state (Linux `tp->delivered`, `delivered_mstamp`,
/// `first_tx_mstamp`, `app_limited`), bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeliveryRate {
    /// `tp->delivered`: bytes delivered (acknowledged or reported by duplicate ACKs).
    pub delivered: u64,
    /// `tp->delivered_mstamp`: when `delivered` last grew.
    pub delivered_at: Instant,
    /// `tp->first_tx_mstamp`: the start of the current sending interval.
    pub first_tx_at: Instant,
    /// `tp->app_limited`: nonzero while application-limited, the `delivered` count past
    /// which the limit ends.
    pub app_limited: u64,
}

impl DeliveryRate {
    /// Linux `tcp_rate_skb_sent`: the snapshot of a segment sent now; `idle` when nothing is
    /// in flight (the sending interval starts now).
    pub fn on_send(&mut self, now: Instant, idle: bool) -> TxRate {
        if idle {
            self.first_tx_at = now;
            self.delivered_at = now;
        }
        TxRate {
            at: now,
            first_tx: self.first_tx_at,
            delivered_at: self.delivered_at,
            delivered: self.delivered,
            app_limited: self.app_limited != 0,
        }
    }

    /// Marks the sender application-limited until what is in flight now (`inflight` bytes)
    /// has been delivered (`tcp_rate_check_app_limited`; also a controller's request).
    pub fn mark_app_limited(&mut self, inflight: u32) {
        self.app_limited = (self.delivered + u64::from(inflight)).max(1);
    }

    /// A duplicate ACK reported `newly` more bytes received beyond the hole.
    pub fn on_sacked(&mut self, now: Instant, newly: u32) {
        self.delivered += u64::from(newly);
        if newly > 0 {
            self.delivered_at = now;
        }
    }

    /// Linux `tcp_rate_gen`: an ACK of new data delivered `newly` bytes; `snap` is the
    /// record of the newest acknowledged segment ([`TxRate::pick`]), `min_rtt` the
    /// connection's smallest RTT sample. Completes `rs` (whose ACK-side fields the caller
    /// filled) with the delivery and its interval.
    pub fn on_ack(
        &mut self,
        now: Instant,
        newly: u32,
        snap: Option<TxRate>,
        min_rtt: Option<Duration>,
        rs: &mut RateSample,
    ) {
        self.delivered += u64::from(newly);
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        self.delivered_at = now;
        if let Some(p) = snap {
            rs.prior_delivered = p.delivered;
            rs.is_app_limited = p.app_limited;
            rs.delivered = self.delivered - p.delivered;
            self.first_tx_at = p.at;
            let send = p.at.saturating_since(p.first_tx);
            let ack_elapsed = now.saturating_since(p.delivered_at);
            let interval = send.max(ack_elapsed);
            // A sample shorter than the minimum RTT is not a valid one.
            rs.interval = Some(interval).filter(|i| min_rtt.is_none_or(|m| *i >= m));
        }
    }
}
