//! One TCP connection endpoint (RFC 9293), sans-IO: told segments and timeouts with `now`,
//! asked for segments to send ([`Connection::poll_transmit`]) and for its next deadline
//! ([`Connection::poll_timeout`]). It owns no bytes: the application writes lengths into
//! the send stream and reads how far the receive stream has arrived; the harness attaches
//! payload bytes when it needs them (captures).
//!
//! The pieces: a [`Controller`] (cwnd growth, built from the configuration's registry entry,
//! [`TcpConfig::congestion`]), [`Recovery`] (dup-ACK loss recovery), [`RttEstimator`] (RTO),
//! [`Receiver`] (reassembly and delayed ACKs), [`DeliveryRate`] (rate samples for controllers
//! that use them), pacing (`pacing.rs`). The connection names no controller: it asks the
//! trait what a controller wants (rate samples and Linux's sender accounting, pacing).
//! Sending is in `send.rs`.

#[cfg(test)]
mod layout_tests;
mod pacing;
mod send;

use coaplab_cc::Instant;

use super::config::{Nagle, TcpConfig};
use super::congestion::controller::{Ack, AckContext, CaState, Controller, RateSample};
use super::delivery_rate::{DeliveryRate, TxRate};
use super::receiver::{DataArrival, Receiver};
use super::recovery::{DupAck, NewAck, Recovery, DUPACK_THRESHOLD};
use super::rtt::RttEstimator;
use super::segment::Segment;
use super::seq::Seq;
use super::timer::wheel_expiry;
use crate::sim::inline_fifo::InlineFifo;
use pacing::Pacing;

/// RFC 9293 §3.7.1: the MSS assumed when the peer sends no MSS option.
pub const DEFAULT_MSS: u32 = 536;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    SynSent,
    SynReceived,
    Established,
    /// Closed without the application asking: SYN or SYN-ACK retries exhausted, data
    /// retransmissions exhausted ([`TcpConfig::max_retries`]) or reset by the peer. Like a
    /// closed port it answers every segment but a RST with a RST (RFC 9293 §3.10.7.1).
    Failed,
}

/// What the application learns from the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnEvent {
    /// The handshake completed.
    Connected,
    /// The connection failed: SYN (or SYN-ACK) retries or data retries were exhausted, or
    /// the peer reset it ([`Connection::failure`] says which).
    Failed,
}

/// Why a connection is in [`State::Failed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// SYN (`syn_retries`) or SYN-ACK (`synack_retries`) retransmissions exhausted.
    Handshake,
    /// Data retransmissions by timeout exhausted (`max_retries`).
    Retries,
    /// An acceptable RST arrived (RFC 9293 §3.10.7.3–4).
    Reset,
}

/// Per-connection counters (docs/design.md §6). `repr(C)`, the counters most segments write
/// first (`segments_sent`, `data_segments_sent`, `rtt_samples`): they share the
/// [`Connection`]'s last hot line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct ConnStats {
    /// Every segment sent, pure ACKs included.
    pub segments_sent: u64,
    /// Segments carrying payload or FIN.
    pub data_segments_sent: u64,
    pub rtt_samples: u64,
    /// Retransmitted payload/FIN segments (any cause).
    pub retransmissions: u64,
    pub rto_expirations: u64,
    /// Pure ACKs repeating the previous segment's acknowledgement number (duplicate ACKs as
    /// the peer and tshark see them).
    pub duplicate_acks_sent: u64,
    pub syn_retransmissions: u64,
    pub synack_retransmissions: u64,
    /// Fast retransmits entering recovery (RFC 5681 §3.2); partial-ACK retransmissions are
    /// counted in `partial_ack_retransmissions`.
    pub fast_retransmits: u64,
    pub partial_ack_retransmissions: u64,
    /// RSTs sent in answer to segments reaching the failed connection.
    pub resets_sent: u64,
    /// Acceptable RSTs received (the connection was reset).
    pub resets_received: u64,
}

/// A sent, not yet acknowledged range of sequence space (the retransmission queue).
#[derive(Clone, Copy, Debug)]
struct Sent {
    seq: Seq,
    /// Sequence length (payload + SYN + FIN).
    len: u32,
    syn: bool,
    fin: bool,
    /// First transmission time (RTT samples are measured from it).
    sent_at: Instant,
    /// Karn's rule: no RTT sample once this range was sent again.
    retransmitted: bool,
    /// Delivery-rate snapshot at its last transmission (Linux `tcp_rate_skb_sent`).
    rate: TxRate,
}

/// Linux `tcp_max_reordering`: the largest `tp->reordering`, segments.
const MAX_REORDERING: u32 = 300;

/// One connection end. `repr(C, align(64))`: the fields are laid out in the order written,
/// line by line (x86-64's 64-byte cache lines), the ones a segment or a timeout at this end
/// reads or writes first and those of failures, of rate-based controllers and the
/// configuration last, so that with thousands of connections an event touches fewer cold lines
/// (docs/performance.md, "TCP at scale: the connection's hot and cold fields"; the offsets are
/// checked in `layout_tests.rs`).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Connection {
    // ---- Hot: read or written by (nearly) every segment and timeout at this end. ----
    // Line 0: the state, the flags, the sequence numbers and counters.
    state: State,
    fin_queued: bool,
    /// What the controller is, asked once (it does not change): it sets its window from
    /// delivery-rate samples and sees Linux's sender accounting
    /// ([`Controller::uses_rate_samples`]).
    rate_based: bool,
    /// The SYN / SYN-ACK is due (first time or again).
    syn_due: bool,
    /// Retransmit the first unacknowledged segment (fast retransmit, partial ACK).
    head_due: bool,
    /// The handshake's final ACK is due as a pure ACK before any data (client side).
    pure_ack_first: bool,
    connected_event: bool,
    failed_event: bool,
    /// `cfg.nagle`, `cfg.hz` and `cfg.max_retries`, copied here because every small segment,
    /// every (re)armed retransmission timer and every timeout reads them; `cfg` itself is at
    /// the cold end.
    nagle: Nagle,
    hz: u32,
    max_retries: u32,
    /// Effective MSS: min(ours, the peer's option).
    mss: u32,
    iss: Seq,
    snd_una: Seq,
    snd_nxt: Seq,
    /// One past the highest sequence number ever sent (differs from `snd_nxt` while
    /// retransmitting after a timeout).
    snd_max: Seq,
    /// End of the last less-than-full segment sent (Linux `snd_sml`, for Nagle).
    snd_sml: Seq,
    /// One past the last byte the application wrote.
    write_end: Seq,
    /// New data sent beyond `cwnd` on RFC 3042's allowance since the last ACK of new data.
    limited_transmit_bytes: u32,
    /// Timeouts of the same data in a row (RFC 5681: `ssthresh` only shrinks on the first).
    consecutive_rtos: u32,
    /// Bytes the duplicate ACKs say arrived beyond the hole (Linux's Reno SACK emulation,
    /// `sacked_out`): not in the network any more.
    sacked_out: u32,
    /// SYN (SYN-ACK) retransmissions so far: a timeout in the handshake reads it.
    handshake_retries: u32,
    // Line 1: the timer and the sequence options, the controller.
    rto_at: Option<Instant>,
    last_ack_sent: Option<Seq>,
    /// After a timeout, until everything sent before it is acknowledged (`TCP_CA_Loss`).
    loss_until: Option<Seq>,
    /// Smallest RTT sample (Linux `tcp_min_rtt`; its 300 s window never expires in a run).
    min_rtt: Option<coaplab_cc::Duration>,
    cc: Box<dyn Controller>,
    // Line 2: loss recovery and the delivery rate; line 3: the RTT estimator.
    recovery: Recovery,
    /// Delivery-rate estimation: its samples feed controllers that use them.
    rate: DeliveryRate,
    rtt: RttEstimator,
    // Lines 4–5: the receiver, pacing, `lost` and the retransmission queue's `head`.
    rcv: Option<Receiver>,
    /// Pacing, for a controller that paces.
    pacing: Pacing,
    /// Bytes ever marked lost (Linux `tp->lost`, in the [`AckContext`]): the head at
    /// a fast retransmit or a partial ACK, everything in flight at a timeout.
    lost: u64,
    /// Linux `tp->reordering` (rate-based controllers' connections): duplicate ACKs that
    /// trigger fast retransmit, `tcp_reordering` (3) until its Reno reordering detection
    /// raises it. (Rarely read: here it fills line 5, which costs no line.)
    reordering: u32,
    failure: Option<Failure>,
    /// The retransmission queue; two ranges inline (a CoAP exchange has one or two in
    /// flight per direction), more on the heap. [`InlineFifo`] is `repr(C)`, its `head` first;
    /// `smallvec` puts the inline items before its length word. So `head` ends line 5, the
    /// first range is line 6, the second line 7 and the length word starts line 8, with the
    /// counters.
    rtx: InlineFifo<[Sent; 2]>,
    /// Line 8: the counters every segment writes come first ([`ConnStats`] is `repr(C)`).
    pub stats: ConnStats,
    // ---- Cold: failures, set-up. ----
    /// A RST answering a segment that reached the failed connection.
    rst_due: Option<Segment>,
    /// Seed of the controller's random choices ([`Connection::seed_congestion`]).
    cc_seed: u64,
    cfg: TcpConfig,
}

impl Connection {
    fn new(cfg: TcpConfig, state: State, iss: Seq) -> Self {
        let cc = cfg.build_controller();
        Connection {
            rate_based: cc.uses_rate_samples(),
            pacing: Pacing::new(cc.pacing_rate().is_some()),
            cc,
            cfg,
            nagle: cfg.nagle,
            hz: cfg.hz,
            max_retries: cfg.max_retries,
            state,
            mss: cfg.mss,
            iss,
            snd_una: iss,
            snd_nxt: iss,
            snd_max: iss,
            snd_sml: iss,
            write_end: iss + 1,
            fin_queued: false,
            rtx: InlineFifo::new(),
            recovery: Recovery::new(cfg.mss, cfg.limited_transmit, iss),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.max_rto),
            rto_at: None,
            consecutive_rtos: 0,
            handshake_retries: 0,
            syn_due: true,
            head_due: false,
            limited_transmit_bytes: 0,
            rcv: None,
            last_ack_sent: None,
            pure_ack_first: false,
            connected_event: false,
            failed_event: false,
            failure: None,
            rst_due: None,
            rate: DeliveryRate::default(),
            sacked_out: 0,
            reordering: DUPACK_THRESHOLD,
            lost: 0,
            min_rtt: None,
            loss_until: None,
            cc_seed: 0,
            stats: ConnStats::default(),
        }
    }

    /// Active open: a SYN with initial sequence number `iss` is due.
    pub fn connect(cfg: TcpConfig, iss: Seq) -> Self {
        Connection::new(cfg, State::SynSent, iss)
    }

    /// Passive open on the peer's `syn`: a SYN-ACK is due.
    pub fn accept(cfg: TcpConfig, iss: Seq, syn: &Segment) -> Self {
        let mut c = Connection::new(cfg, State::SynReceived, iss);
        c.mss = cfg.mss.min(syn.mss.map_or(DEFAULT_MSS, u32::from));
        c.rcv = Some(
            Receiver::new(syn.seq, c.mss, cfg.delayed_ack).ack_every_segment(cfg.ack_every_segment),
        );
        c
    }

    /// The seed of the congestion controller's random choices (given to
    /// [`Controller::on_established`]).
    pub fn seed_congestion(&mut self, seed: u64) {
        self.cc_seed = seed;
    }

    /// The congestion controller (its window, pacing rate and trace snapshot).
    pub fn controller(&self) -> &dyn Controller {
        &*self.cc
    }

    /// Bytes in the network: sent, not acknowledged, not reported by duplicate ACKs
    /// (Linux `tcp_packets_in_flight` without SACK).
    fn pipe(&self) -> u32 {
        (self.snd_nxt - self.snd_una).saturating_sub(self.sacked_out)
    }

    /// Length of the first unacknowledged range (the head), 0 if none.
    fn head_len(&self) -> u64 {
        self.rtx.first().map_or(0, |s| u64::from(s.len))
    }

    /// Linux `tcp_packets_in_flight` (include/net/tcp.h: `packets_out − (sacked_out +
    /// lost_out) + retrans_out`), bytes, as Linux's sender sees it without SACK: the head a
    /// duplicate-ACK threshold or a partial ACK marked lost (`tcp_newreno_mark_lost`,
    /// net/ipv4/tcp_recovery.c) is out of the network until it is retransmitted. After a
    /// timeout everything from `snd_nxt` on is marked lost, which `pipe` already leaves out.
    fn packets_in_flight(&self) -> u32 {
        let lost = match self.rtx.first() {
            Some(s) if self.head_due => s.len,
            _ => 0,
        };
        self.pipe().saturating_sub(lost)
    }

    /// Linux `tcp_rate_check_app_limited` (called when the application writes): less than a
    /// segment left to send, not cwnd-limited, nothing lost waiting → app-limited until
    /// what is in flight now has been delivered.
    fn check_app_limited(&mut self) {
        let next = self.snd_nxt.max(self.iss + 1);
        let unsent = if next < self.write_end {
            self.write_end - next
        } else {
            0
        };
        let pipe = self.packets_in_flight();
        let nothing_lost_waiting = self.snd_nxt == self.snd_max && !self.head_due;
        if unsent < self.mss && pipe < self.cc.window() && nothing_lost_waiting {
            self.rate.mark_app_limited(pipe);
        }
    }

    /// Linux `tcp_rate_skb_sent`: the delivery-rate snapshot of a segment sent now.
    fn rate_on_send(&mut self, now: Instant) -> TxRate {
        // Nothing in flight: the sending interval starts now.
        self.rate.on_send(now, self.snd_una == self.snd_max)
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn mss(&self) -> u32 {
        self.mss
    }
    pub fn cwnd(&self) -> u32 {
        self.cc.window()
    }
    pub fn ssthresh(&self) -> u32 {
        self.cc.ssthresh()
    }
    pub fn rto(&self) -> coaplab_cc::Duration {
        self.rtt.rto()
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn in_recovery(&self) -> bool {
        self.recovery.in_recovery()
    }
    pub fn iss(&self) -> Seq {
        self.iss
    }
    pub fn snd_una(&self) -> Seq {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> Seq {
        self.snd_nxt
    }
    pub fn receiver(&self) -> Option<&Receiver> {
        self.rcv.as_ref()
    }
    /// Why the connection failed, once it has.
    pub fn failure(&self) -> Option<Failure> {
        self.failure
    }

    /// When the retransmission timer armed now with the current RTO fires: on the host's
    /// timer wheel ([`super::timer::wheel_expiry`]), exactly with `hz = 0`.
    fn rto_deadline(&self, now: Instant) -> Instant {
        wheel_expiry(self.hz, now, self.rtt.rto())
    }

    /// Enters [`State::Failed`]: no timer, nothing more to send but RSTs.
    fn fail(&mut self, why: Failure) {
        self.state = State::Failed;
        self.failure = Some(why);
        self.failed_event = true;
        self.rto_at = None;
        self.syn_due = false;
        self.head_due = false;
    }

    /// RFC 9293 §3.10.7.3–4 with RFC 5961 §3.2: a RST resets the connection if, in SYN-SENT,
    /// it acknowledges our SYN, else if its sequence number is exactly the next one expected
    /// (a RST elsewhere in the window would call for a challenge ACK; the model's peers
    /// only send exact ones, so it is ignored like one outside the window).
    fn on_reset(&mut self, seg: &Segment) {
        let acceptable = match self.state {
            State::Failed => false,
            State::SynSent => seg.ack == Some(self.iss + 1),
            State::SynReceived | State::Established => {
                self.rcv.as_ref().is_some_and(|r| r.rcv_nxt() == seg.seq)
            }
        };
        if acceptable {
            self.stats.resets_received += 1;
            self.fail(Failure::Reset);
        }
    }

    /// Appends `len` bytes to the send stream (they are sent as the windows allow).
    pub fn write(&mut self, len: u32) {
        debug_assert!(!self.fin_queued, "write after close");
        if self.state == State::Established {
            self.check_app_limited();
        }
        self.write_end = self.write_end + len;
    }

    /// Closes the sending direction: a FIN follows the written data. Does not block.
    pub fn close(&mut self) {
        self.fin_queued = true;
    }

    /// In-order bytes received from the peer.
    pub fn delivered(&self) -> u64 {
        self.rcv.as_ref().map_or(0, Receiver::delivered)
    }

    /// The peer closed its direction (its FIN arrived in order).
    pub fn peer_closed(&self) -> bool {
        self.rcv.as_ref().is_some_and(Receiver::fin_received)
    }

    /// Everything sent (FIN included, if closed) was acknowledged.
    pub fn all_acknowledged(&self) -> bool {
        self.snd_una == self.snd_max && self.snd_max == self.final_seq()
    }

    fn final_seq(&self) -> Seq {
        self.write_end + u32::from(self.fin_queued)
    }

    pub fn poll_event(&mut self) -> Option<ConnEvent> {
        if std::mem::take(&mut self.connected_event) {
            return Some(ConnEvent::Connected);
        }
        if std::mem::take(&mut self.failed_event) {
            return Some(ConnEvent::Failed);
        }
        None
    }

    /// The earliest instant [`Connection::handle_timeout`] has work to do.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let delack = self.rcv.as_ref().and_then(Receiver::delack_deadline);
        match (self.rto_at, delack) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Pacing: the instant the segment pacing holds back may leave (the harness calls
    /// [`Connection::poll_transmit`] then), `None` when nothing waits for it.
    pub fn poll_pacing(&self) -> Option<Instant> {
        self.pacing.poll()
    }

    /// Fires the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(r) = self.rcv.as_mut() {
            r.on_timeout(now);
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.rto_at = None;
            self.on_rto(now);
        }
    }

    /// Handles an incoming segment; returns how its data related to what was received before
    /// (`None` for segments without data or FIN).
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment) -> Option<DataArrival> {
        if seg.rst {
            self.on_reset(seg);
            return None;
        }
        match self.state {
            State::Failed => {
                // The connection is gone: answer as a closed port does (RFC 9293 §3.10.7.1).
                self.rst_due = Segment::reset_for(seg);
                return None;
            }
            State::SynSent => {
                if !(seg.syn && seg.ack == Some(self.iss + 1)) {
                    return None;
                }
                self.mss = self.cfg.mss.min(seg.mss.map_or(DEFAULT_MSS, u32::from));
                self.rcv = Some(
                    Receiver::new(seg.seq, self.mss, self.cfg.delayed_ack)
                        .ack_every_segment(self.cfg.ack_every_segment),
                );
                self.on_ack(now, self.iss + 1, seg);
                self.establish(now);
                // Linux `tcp_rcv_synsent_state_process`: the SYN-ACK is acknowledged at once
                // by a pure ACK (`tcp_send_ack`), before the application learns the
                // connection is up; what it then writes goes out in segments of its own.
                self.pure_ack_first = true;
                return None;
            }
            State::SynReceived => {
                if seg.syn {
                    // The client retransmitted its SYN: our SYN-ACK was lost (or is late).
                    self.syn_due = true;
                    return None;
                }
                if seg.ack.is_some_and(|a| a > self.iss) {
                    // The handshake's RTT sample first (Linux `tcp_synack_rtt_meas`), then
                    // the controller's `on_established` (Linux `init`) sees it.
                    self.on_ack(now, seg.ack.expect("checked"), seg);
                    self.establish(now);
                } else {
                    return None;
                }
            }
            State::Established => {
                if seg.syn {
                    // A retransmitted SYN-ACK: our ACK of it was lost.
                    if let Some(r) = self.rcv.as_mut() {
                        r.on_duplicate_syn();
                    }
                    return None;
                }
            }
        }
        if let Some(ack) = seg.ack {
            self.on_ack(now, ack, seg);
        }
        if seg.len > 0 || seg.fin {
            let rcv = self.rcv.as_mut()?;
            return Some(rcv.on_segment(now, seg));
        }
        None
    }

    fn establish(&mut self, now: Instant) {
        self.state = State::Established;
        self.connected_event = true;
        if self.handshake_retries > 0 {
            // RFC 5681 §3.1: after a lost SYN or SYN-ACK the initial window is one segment.
            self.cc.set_initial_window(self.mss);
        }
        self.cc
            .on_established(self.mss, now, self.min_rtt, self.cc_seed);
    }

    fn on_ack(&mut self, now: Instant, ack: Seq, seg: &Segment) {
        if ack > self.snd_max {
            return; // acknowledges something never sent (RFC 9293 §3.10.7.4): ignore
        }
        if ack > self.snd_una {
            self.on_new_ack(now, ack);
        } else if ack == self.snd_una
            && seg.is_pure_ack()
            && self.snd_max > self.snd_una
            && self.state == State::Established
        {
            // RFC 5681 §2 duplicate ACK. §3.2 step 2: data sent by Limited Transmit is not
            // part of the FlightSize that sets ssthresh.
            let flight = (self.snd_nxt - self.snd_una).saturating_sub(self.limited_transmit_bytes);
            let prior_in_flight = self.packets_in_flight();
            let mut losses = 0;
            let sacked_before = self.sacked_out;
            if self.rate_based {
                self.add_reno_sack();
            }
            match self
                .recovery
                .on_dup_ack(now, ack, flight, self.snd_max, &mut *self.cc)
            {
                DupAck::FastRetransmit => {
                    self.stats.fast_retransmits += 1;
                    self.head_due = true;
                    self.lost += self.head_len();
                    losses = 1;
                }
                DupAck::None | DupAck::LimitedTransmit | DupAck::Inflated => {}
            }
            if self.rate_based {
                let newly = self.sacked_out.saturating_sub(sacked_before);
                self.rate.on_sacked(now, newly);
                let rs = RateSample {
                    prior_in_flight,
                    acked_sacked: newly,
                    losses,
                    ..RateSample::default()
                };
                self.on_rate_sample(now, &rs);
            }
        }
    }

    /// Linux's Reno SACK emulation for a duplicate ACK (rate-based controllers'
    /// connections), before loss detection: `tcp_add_reno_sack` counts one more segment received beyond the hole —
    /// after a timeout only once new data went out beyond what was sent before it
    /// (`tcp_process_loss`; until then a duplicate ACK answers a resent segment the receiver
    /// already had). `tcp_limit_reno_sacked` keeps the count below the segments sent minus the
    /// holes (`lost_out`, at least one); a duplicate ACK beyond that is taken for reordering
    /// (`tcp_check_reno_reordering`): `tp->reordering`, the duplicate ACKs fast retransmit
    /// needs, becomes the number of segments sent (at most `tcp_max_reordering`, 300). Then
    /// the recovery's count and threshold are Linux's (`tcp_time_to_recover`: fast
    /// retransmit once `sacked_out` ≥ `reordering`).
    fn add_reno_sack(&mut self) {
        let mss = self.mss.max(1);
        if self.loss_until.is_none_or(|r| self.snd_max > r) {
            let packets_out = self.snd_max - self.snd_una;
            let holes = self
                .loss_until
                .map_or(mss, |r| (r - self.snd_una).max(mss))
                .min(packets_out);
            self.sacked_out += mss;
            if self.sacked_out + holes > packets_out {
                self.sacked_out = packets_out - holes;
                self.reordering = packets_out.div_ceil(mss).min(MAX_REORDERING);
            }
        }
        self.recovery
            .set_linux_count(self.sacked_out.div_ceil(mss), self.reordering);
    }

    /// The sender's congestion state for a rate-based controller (Linux `icsk_ca_state`).
    fn ca_state(&self) -> CaState {
        if self.loss_until.is_some() {
            CaState::Loss
        } else if self.recovery.in_recovery() {
            CaState::Recovery
        } else {
            CaState::Open
        }
    }

    /// One delivery-rate sample to the controller (Linux `tcp_cong_control` →
    /// `cong_control`); it may ask to mark the connection app-limited.
    fn on_rate_sample(&mut self, now: Instant, rs: &RateSample) {
        let cx = AckContext {
            now,
            delivered: self.rate.delivered,
            delivered_at: self.rate.delivered_at,
            inflight: self.packets_in_flight(),
            ca_state: self.ca_state(),
            lost: self.lost,
        };
        if self.cc.on_rate_sample(rs, &cx) {
            self.rate.mark_app_limited(cx.inflight);
        }
    }

    fn on_new_ack(&mut self, now: Instant, ack: Seq) {
        let acked = ack - self.snd_una;
        let prior_in_flight = self.packets_in_flight();
        let mut control = 0; // SYN/FIN sequence numbers among the acknowledged
        let mut oldest: Option<Instant> = None;
        let mut newest: Option<Instant> = None;
        let mut any_retransmitted = false;
        // Linux `tcp_rate_skb_delivered`: the snapshot of the most recently sent newly
        // acknowledged segment.
        let mut snap: Option<TxRate> = None;
        while let Some(s) = self.rtx.first_mut() {
            let end = s.seq + s.len;
            if end <= ack {
                control += u32::from(s.syn) + u32::from(s.fin);
                oldest.get_or_insert(s.sent_at);
                newest = Some(s.rate.at);
                any_retransmitted |= s.retransmitted;
                s.rate.pick(&mut snap);
                self.rtx.pop_front();
            } else {
                if s.seq < ack {
                    // Part of a range acknowledged (the peer's boundaries differ): trim it.
                    oldest.get_or_insert(s.sent_at);
                    newest = Some(s.rate.at);
                    any_retransmitted |= s.retransmitted;
                    s.rate.pick(&mut snap);
                    s.len = end - ack;
                    s.seq = ack;
                    s.syn = false;
                }
                break;
            }
        }
        self.snd_una = ack;
        // After a timeout the peer may acknowledge beyond what was resent (it had the data).
        self.snd_nxt = self.snd_nxt.max(ack);
        // Linux `tcp_clean_rtx_queue`: a sample from the oldest newly acknowledged range,
        // none if any newly acknowledged range was retransmitted (Karn).
        if let (Some(sent_at), false) = (oldest, any_retransmitted) {
            let sample = now - sent_at;
            self.rtt.on_sample(sample, self.snd_una, self.snd_nxt);
            self.stats.rtt_samples += 1;
            self.min_rtt = Some(self.min_rtt.map_or(sample, |m| m.min(sample)));
        }
        self.consecutive_rtos = 0;
        self.limited_transmit_bytes = 0;
        let data_acked = acked - control;
        let mut losses = 0;
        if self.state == State::Established && data_acked > 0 {
            let flight = self.snd_nxt - self.snd_una;
            let a = Ack {
                now,
                bytes: data_acked,
                // `ca_rtt_us`: from the newest acknowledged segment, none after a
                // retransmission (Karn).
                rtt: newest.filter(|_| !any_retransmitted).map(|t| now - t),
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
            };
            if self.recovery.on_new_ack(&a, flight, &mut *self.cc) == NewAck::Partial {
                self.stats.partial_ack_retransmissions += 1;
                self.head_due = true;
                self.lost += self.head_len();
                losses = 1;
            }
        }
        if self.loss_until.is_some_and(|r| ack >= r) {
            self.loss_until = None; // everything sent before the timeout is acknowledged
        }
        if self.state == State::Established && data_acked > 0 && self.rate_based {
            // Linux `tcp_remove_reno_sacks`: the ACK fills the hole (one segment); the rest
            // was reported by duplicate ACKs already.
            let newly = data_acked
                .saturating_sub(self.sacked_out)
                .max(data_acked.min(self.mss));
            self.sacked_out = self
                .sacked_out
                .saturating_sub(data_acked.saturating_sub(self.mss));
            if !self.recovery.in_recovery() {
                self.sacked_out = 0;
            }
            // Linux `tcp_rate_gen`.
            let mut rs = RateSample {
                prior_in_flight,
                acked_sacked: newly,
                losses,
                // `ca_rtt_us`: from the newest acknowledged segment, none after a
                // retransmission (Karn).
                rtt: newest.filter(|_| !any_retransmitted).map(|t| now - t),
                ..RateSample::default()
            };
            self.rate.on_ack(now, newly, snap, self.min_rtt, &mut rs);
            self.on_rate_sample(now, &rs);
        }
        // RFC 6298 §5.2–5.3: stop the timer when all is acknowledged, else restart it.
        self.rto_at = (self.snd_una != self.snd_max).then(|| self.rto_deadline(now));
    }

    fn on_rto(&mut self, now: Instant) {
        self.stats.rto_expirations += 1;
        match self.state {
            State::SynSent | State::SynReceived => {
                let limit = if self.state == State::SynSent {
                    self.cfg.syn_retries
                } else {
                    self.cfg.synack_retries
                };
                if self.handshake_retries >= limit {
                    self.fail(Failure::Handshake);
                    return;
                }
                self.handshake_retries += 1;
                self.rtt.on_expiry();
                self.syn_due = true;
            }
            State::Established => {
                if self.snd_una == self.snd_max {
                    return;
                }
                // RFC 1122 §4.2.3.5's R2, as a count of retransmissions (Linux
                // `tcp_retries2`, checked by `tcp_write_timeout()` before each retransmission
                // by timeout): after `max_retries` of them for the same data, give up.
                if self.consecutive_rtos >= self.max_retries {
                    self.fail(Failure::Retries);
                    return;
                }
                // RFC 5681 §3.1 (eq. 4 with FlightSize = all outstanding data), RFC 6582
                // §4.2 (`recover`), RFC 6298 §5.5 (back off), then go back to `snd_una`:
                // without SACK every unacknowledged range is resent as the window reopens.
                let flight = self.snd_max - self.snd_una;
                // `tcp_timeout_mark_lost`: `tp->lost` counts every segment in flight (all
                // but a head already marked lost and not yet resent).
                self.lost += u64::from(self.packets_in_flight() + self.sacked_out);
                let cx = AckContext {
                    now,
                    delivered: self.rate.delivered,
                    delivered_at: self.rate.delivered_at,
                    inflight: 0,
                    ca_state: CaState::Loss,
                    lost: self.lost,
                };
                self.cc.on_rto(flight, self.consecutive_rtos > 0, &cx);
                // `tcp_enter_loss`: every unacknowledged segment is lost, the duplicate ACK
                // count forgotten, until `snd_max` is acknowledged.
                self.sacked_out = 0;
                self.loss_until = Some(self.snd_max);
                self.consecutive_rtos += 1;
                self.recovery.on_rto(self.snd_max);
                self.rtt.on_expiry();
                self.snd_nxt = self.snd_una;
                self.head_due = false;
                self.limited_transmit_bytes = 0;
            }
            State::Failed => {}
        }
    }
}
