//! The congestion-controller trait and what a controller is told (leaf: it names no
//! controller). The trait has the shape of quinn-proto's `congestion::Controller` (`on_ack`,
//! `on_congestion_event`, `on_rto`, `window`, a pacing rate and a state snapshot for traces),
//! extended with what Linux's `tcp_congestion_ops` offers a rate-based controller: delivery-rate
//! samples (`cong_control`), application-limited marking and the restart after idle
//! (`CA_EVENT_TX_START`). The connection drives every controller through it alone.

use std::any::Any;
use std::fmt::Debug;

use coaplab_cc::{Duration, Instant};

use super::super::seq::Seq;

/// The sender's congestion state (Linux `icsk_ca_state`, the ones this model has).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    /// Fast recovery (3 duplicate ACKs).
    Recovery,
    /// After a retransmission timeout, until everything sent before it is acknowledged.
    Loss,
}

/// One ACK's delivery-rate sample (Linux `struct rate_sample`, net/ipv4/tcp_rate.c), bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    /// Bytes delivered over `interval` (`rs->delivered`).
    pub delivered: u64,
    /// `rs->interval_us`; `None` = not a valid sample.
    pub interval: Option<Duration>,
    /// `tp->delivered` when the acknowledged segment was sent (`rs->prior_delivered`).
    pub prior_delivered: u64,
    /// Bytes in flight before this ACK (`rs->prior_in_flight`).
    pub prior_in_flight: u32,
    /// Bytes newly acknowledged or (duplicate ACK) counted as received (`rs->acked_sacked`).
    pub acked_sacked: u32,
    /// Segments newly marked lost (`rs->losses`).
    pub losses: u32,
    /// RTT of the newest acknowledged, never retransmitted segment (`rs->rtt_us`).
    pub rtt: Option<Duration>,
    /// Sent while the application had nothing more to send (`rs->is_app_limited`).
    pub is_app_limited: bool,
}

/// What the connection knows when an ACK has been processed.
#[derive(Clone, Copy, Debug)]
pub struct AckContext {
    pub now: Instant,
    /// `tp->delivered` after this ACK.
    pub delivered: u64,
    /// `tp->delivered_mstamp`: when `delivered` last grew.
    pub delivered_at: Instant,
    /// Bytes in flight after this ACK (`tcp_packets_in_flight`).
    pub inflight: u32,
    pub ca_state: CaState,
    /// `tp->lost`: bytes ever marked lost (fast retransmit, partial ACK, timeout).
    pub lost: u64,
}

/// An ACK of new data outside fast recovery, as a controller sees it.
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    pub now: Instant,
    /// Bytes of new data acknowledged.
    pub bytes: u32,
    /// This ACK's RTT sample (none under Karn's rule): Linux's `ack_sample.rtt_us`.
    pub rtt: Option<Duration>,
    /// The send sequence after the ACK (`snd_una`, `snd_nxt`), for round tracking.
    pub snd_una: Seq,
    pub snd_nxt: Seq,
}

/// The controller's state at one instant, for the `cc_state` trace rows. Fields a
/// controller does not have are 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Snapshot {
    /// Its phase (BBR's mode; CUBIC's `slow_start` / `avoidance`).
    pub mode: &'static str,
    /// Its bandwidth estimate, bytes per second (BBR's BtlBw).
    pub bandwidth: u64,
    /// Its minimum-RTT estimate (BBR's RTprop, CUBIC's `delay_min`).
    pub min_rtt: Option<Duration>,
    /// Its pacing rate, bytes per second.
    pub pacing_rate: u64,
    pub cwnd: u32,
}

/// A TCP congestion controller (ns-3's `TcpCongestionOps`, Linux's `tcp_congestion_ops`).
/// Windows are in bytes.
pub trait Controller: Debug + Send + Any {
    /// The connection is established at `now` with effective MSS `mss` and the handshake's
    /// RTT sample, if any; `seed` drives the controller's random choices (Linux `init`).
    fn on_established(&mut self, mss: u32, now: Instant, rtt: Option<Duration>, seed: u64) {
        let _ = (mss, now, rtt, seed);
    }
    /// The initial window after a retransmitted SYN / SYN-ACK (RFC 5681 §3.1); by default
    /// [`Controller::set_window`] (BBR, whose `set_window` does nothing, keeps its own).
    fn set_initial_window(&mut self, bytes: u32) {
        self.set_window(bytes);
    }
    /// Congestion window, bytes.
    fn window(&self) -> u32;
    /// Slow-start threshold, bytes (`u32::MAX`, Linux's `TCP_INFINITE_SSTHRESH`, if unused).
    fn ssthresh(&self) -> u32 {
        u32::MAX
    }
    /// Sets `cwnd` directly: RFC 6582 fast recovery's inflation and deflation. Controllers
    /// that set their own window on every ACK ([`Controller::uses_rate_samples`]) ignore it.
    fn set_window(&mut self, bytes: u32);
    /// New data was acknowledged outside fast recovery.
    fn on_ack(&mut self, ack: &Ack);
    /// Loss detected by duplicate ACKs with `flight` bytes outstanding: returns the new
    /// `ssthresh` (Linux `ssthresh()`), from which fast recovery sets the window.
    fn on_congestion_event(&mut self, now: Instant, flight: u32) -> u32;
    /// Retransmission timeout with `flight` bytes outstanding; `repeated` when the timed-out
    /// segment was already resent by the timer. `cx` is the sender's state after the timeout
    /// marked everything lost.
    fn on_rto(&mut self, flight: u32, repeated: bool, cx: &AckContext);
    /// Pacing rate, bytes per second, if the controller paces. A controller that paces
    /// returns `Some` from the start: the connection asks once, when it is built, whether it
    /// paces and whether it [`Controller::uses_rate_samples`].
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Whether the controller sets its window from Linux's delivery-rate samples
    /// ([`Controller::on_rate_sample`]) and sees Linux's sender accounting (in flight
    /// without the lost head, Reno SACK emulation, lost segments resent only under cwnd)
    /// instead of RFC 6582's window arithmetic.
    fn uses_rate_samples(&self) -> bool {
        false
    }
    /// One delivery-rate sample (`cong_control`); returns whether the connection must mark
    /// itself application-limited.
    fn on_rate_sample(&mut self, rs: &RateSample, cx: &AckContext) -> bool {
        let _ = (rs, cx);
        false
    }
    /// Sending again after an application-limited idle period (`CA_EVENT_TX_START`).
    fn on_restart_from_idle(&mut self) {}
    /// The state for traces, if the controller has any beyond its window.
    fn snapshot(&self) -> Option<Snapshot> {
        None
    }
    fn clone_box(&self) -> Box<dyn Controller>;
    /// For tests that inspect one controller's internals.
    fn as_any(&self) -> &dyn Any;
}

impl Clone for Box<dyn Controller> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// What a controller is built from: the TCP parameters it needs
/// (`TcpConfig::controller_params` copies them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControllerParams {
    /// Maximum segment size, bytes (before the peer's option lowers it).
    pub mss: u32,
    /// Initial window, segments (`TcpConfig::initial_window_segments`).
    pub initial_window_segments: u32,
    /// Slow start's growth limit per ACK, segments
    /// (`TcpConfig::slow_start_limit_segments`).
    pub slow_start_limit_segments: Option<u32>,
}

/// One registered controller: what `coap.cc` names and how to build it. The configuration
/// carries the entry itself (`TcpConfig::congestion`, tcp/config.rs), resolved once when the
/// scenario is read.
#[derive(Debug)]
pub struct ControllerEntry {
    /// The `coap.cc` value that selects it with `coap.transport = "tcp"`.
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub build: fn(&ControllerParams) -> Box<dyn Controller>,
}

impl ControllerEntry {
    /// A new controller with parameters `p`.
    pub fn build(&self, p: &ControllerParams) -> Box<dyn Controller> {
        (self.build)(p)
    }
}

/// Entries are equal when their names are (names are unique in the registry).
impl PartialEq for ControllerEntry {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for ControllerEntry {}
