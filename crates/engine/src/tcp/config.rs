//! TCP model parameters (docs/design.md §4.2). The defaults are the tuned Linux hosts of the literature.

use coaplab_cc::Duration;

use super::congestion::controller::{Controller, ControllerEntry, ControllerParams};
use super::congestion::registry::default_controller;

/// When a less-than-full segment may be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nagle {
    /// Always at once (`TCP_NODELAY`).
    Off,
    /// RFC 896 / RFC 1122 §4.2.3.4 as written: it waits while any data is unacknowledged.
    Classic,
    /// Minshall's refinement, which Linux implements (`tcp_nagle_check` /
    /// `tcp_minshall_check`, net/ipv4/tcp_output.c): it waits while an earlier *small*
    /// segment is unacknowledged. docs/design.md §4.2 says "a small segment waits while unacknowledged
    /// data is in flight" and also that the model matches the literature's Linux hosts; the
    /// two differ only when a small segment follows full ones (the tail of a large message),
    /// where Linux sends it at once. We follow Linux: the tail of the 102400-byte firmware
    /// response would otherwise wait a whole extra round trip (≈ 0.6 s).
    Minshall,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpConfig {
    /// Maximum segment size announced and used, bytes. Default 256: the 296 B MTU minus IPv4
    /// (20) and TCP (20) headers (docs/design.md §2).
    pub mss: u32,
    /// Initial window, segments. Default 4 (RFC 3390 for a 256 B MSS: min(4·MSS, max(2·MSS,
    /// 4380)) = 1024 B = 4 segments; docs/design.md §4.2).
    pub initial_window_segments: u32,
    /// Slow start: the most `cwnd` may grow per ACK, in MSS — RFC 5681 §3.1 `cwnd += min(N,
    /// SMSS)` is `Some(1)`, RFC 3465's `L` is `Some(2)`; `None` adds every acknowledged byte
    /// as Linux does (`tcp_slow_start`: `cwnd = min(cwnd + acked, ssthresh)`). Default `None`.
    pub slow_start_limit_segments: Option<u32>,
    /// Initial RTO, also for SYN and SYN-ACK (docs/design.md §4.2; RFC 6298 §2.1 says 1 s). Default 2 s.
    pub initial_rto: Duration,
    /// RTO cap (Linux `TCP_RTO_MAX`). Default 120 s.
    pub max_rto: Duration,
    /// SYN retransmissions before the connection attempt fails (Linux `tcp_syn_retries`,
    /// tuned). Default 40.
    pub syn_retries: u32,
    /// SYN-ACK retransmissions (Linux `tcp_synack_retries`, tuned). Default 41.
    pub synack_retries: u32,
    /// Retransmissions by timeout of the same data before the connection fails (RFC 1122
    /// §4.2.3.5's R2 as a count; Linux `net.ipv4.tcp_retries2`, default 15, which
    /// `tcp_write_timeout()` in net/ipv4/tcp_timer.c converts to the time those retries take
    /// with exponential backoff, ≈ 924.6 s with a 200 ms base RTO). Default 15.
    pub max_retries: u32,
    /// Delayed-ACK timer (RFC 1122 §4.2.3.2, constant as docs/design.md §4.2 says). Default 200 ms.
    pub delayed_ack: Duration,
    /// Nagle's algorithm. Default [`Nagle::Minshall`], as Linux implements it.
    pub nagle: Nagle,
    /// Limited Transmit (RFC 3042). Default on.
    pub limited_transmit: bool,
    /// The congestion controller drives `cwnd`: an entry of
    /// [`super::congestion::CONTROLLERS`], resolved from its name once, when the scenario is
    /// read. Default `newreno`, the literature's hosts.
    pub congestion: &'static ControllerEntry,
    /// The host's timer tick rate (Linux `HZ`): retransmission timers (data, SYN, SYN-ACK)
    /// fire on the timer wheel's granularity ([`super::timer`]). 0 = exact timers.
    /// Default 250 (the common distribution kernel configuration).
    pub hz: u32,
    /// Acknowledge every in-order data segment at once instead of every second full one
    /// (the delayed-ACK timer then never runs). Default off.
    pub ack_every_segment: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 256,
            initial_window_segments: 4,
            slow_start_limit_segments: None,
            initial_rto: Duration::from_secs(2),
            max_rto: Duration::from_secs(120),
            syn_retries: 40,
            synack_retries: 41,
            max_retries: 15,
            delayed_ack: Duration::from_millis(200),
            nagle: Nagle::Minshall,
            limited_transmit: true,
            congestion: default_controller(),
            hz: 250,
            ack_every_segment: false,
        }
    }
}

impl TcpConfig {
    /// What the congestion controller is built from.
    pub fn controller_params(&self) -> ControllerParams {
        ControllerParams {
            mss: self.mss,
            initial_window_segments: self.initial_window_segments,
            slow_start_limit_segments: self.slow_start_limit_segments,
        }
    }

    /// A new congestion controller of the configured kind.
    pub fn build_controller(&self) -> Box<dyn Controller> {
        self.congestion.build(&self.controller_params())
    }
}
