//! RFC 9177 Q-Block1 / Q-Block2 transfers, sans-IO (docs/model.md "Q-Block"): a [`Sender`]
//! that puts a body's blocks on the wire as NON messages in sets of MAX_PAYLOADS with a pause
//! of NON_TIMEOUT between sets, and a [`Receiver`] that asks for missing blocks after
//! NON_RECEIVE_TIMEOUT without progress. Both take `now` and events and push actions; neither
//! reads a clock nor owns a socket. The same two machines serve Q-Block2 (the server sends, the
//! client receives and recovers with a GET listing the missing blocks, RFC 9177 §4.4) and
//! Q-Block1 (the client sends, the server receives and recovers with a 4.08 Request Entity
//! Incomplete listing them, §4.3, §5).

use coaplab_cc::{Duration, Instant};

/// MAX_PAYLOADS: payloads of one body sent back to back before the sender pauses (RFC 9177
/// §7.2, Table 3 "Congestion Control Parameters": 10).
pub const MAX_PAYLOADS: u32 = 10;
/// NON_MAX_RETRANSMIT: recovery requests (and tail probes) without progress before a transfer
/// fails (RFC 9177 §7.2: 4, MAX_RETRANSMIT of RFC 7252 §4.8).
pub const NON_MAX_RETRANSMIT: u32 = 4;
/// NON_TIMEOUT: the pause after each set of MAX_PAYLOADS payloads (RFC 9177 §7.2: 2 s,
/// ACK_TIMEOUT of RFC 7252 §4.8). coaplab uses it as is, not NON_TIMEOUT_RANDOM (§7.2, drawn
/// in [NON_TIMEOUT, NON_TIMEOUT × ACK_RANDOM_FACTOR]).
pub const NON_TIMEOUT: Duration = Duration::from_secs(2);
/// NON_RECEIVE_TIMEOUT: how long a receiver waits without a new payload before asking for the
/// missing ones; doubled after each unanswered request (RFC 9177 §7.2: 4 s, twice NON_TIMEOUT;
/// "Time-to-Wait = NON_RECEIVE_TIMEOUT * (2 ** (Re-Request-Count - 1))", as libcoap's
/// `coap_block_check_lg_crcv_timeouts`, `receive_timeout << retry`; RFC 9177 Figure 7).
pub const NON_RECEIVE_TIMEOUT: Duration = Duration::from_secs(4);
/// NON_PARTIAL_TIMEOUT: a partially received body is discarded this long after its last
/// payload (RFC 9177 §7.2: 247 s, RFC 7252 §4.8.2's EXCHANGE_LIFETIME with NON_TIMEOUT and
/// NON_MAX_RETRANSMIT: 2 s × (2^4 − 1) × 1.5 + 2 × 100 s + 2 s = 45 + 200 + 2 = 247 s).
pub const NON_PARTIAL_TIMEOUT: Duration = Duration::from_secs(247);
/// NON_PROBING_WAIT: the longest wait PROBING_RATE may impose before the next set (RFC 9177
/// §7.2: 45 + 200 s + NON_TIMEOUT_RANDOM (2-3 s) = between 247 and 248 s; coaplab takes the
/// lower end, 247 s).
pub const NON_PROBING_WAIT: Duration = Duration::from_secs(247);
/// PROBING_RATE's default, bytes per second (RFC 7252 §4.8: 1 byte/s; RFC 9177 §7.2 applies it,
/// RFC 7252 §4.7's rule, to a body sent to a peer that does not respond). The engine applies it only when `coap.probing_rate_bps`
/// is given, as for CON traffic.
pub const PROBING_RATE_BPS: f64 = 1.0;

/// The transfer's parameters (`coap.q_block_*`, `coap.probing_rate_bps`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub max_payloads: u32,
    pub non_timeout: Duration,
    pub non_receive_timeout: Duration,
    pub non_max_retransmit: u32,
    pub non_partial_timeout: Duration,
    pub non_probing_wait: Duration,
    /// PROBING_RATE, bytes/s; `None` = no limit.
    pub probing_rate_bps: Option<f64>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            max_payloads: MAX_PAYLOADS,
            non_timeout: NON_TIMEOUT,
            non_receive_timeout: NON_RECEIVE_TIMEOUT,
            non_max_retransmit: NON_MAX_RETRANSMIT,
            non_partial_timeout: NON_PARTIAL_TIMEOUT,
            non_probing_wait: NON_PROBING_WAIT,
            probing_rate_bps: None,
        }
    }
}

/// What a [`Sender`] asks its host to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendAction {
    /// Put block `n` on the wire (NON); `again` = a re-send after a recovery request or a
    /// tail probe.
    Block { n: u32, again: bool },
    /// Call [`Sender::on_timer`] at this time (replaces any earlier timer).
    Arm(Instant),
    /// The transfer failed: the receiver stayed silent through NON_MAX_RETRANSMIT tail probes.
    Failed,
}

/// The sending end of one body of `total` blocks (the server of Q-Block2, the client of
/// Q-Block1).
#[derive(Clone, Debug)]
pub struct Sender {
    p: Params,
    total: u32,
    /// The first block not yet sent.
    next: u32,
    /// Bytes on the wire of one block (for PROBING_RATE).
    block_bytes: u32,
    /// When the pending timer is due.
    due: Option<Instant>,
    /// Tail probes sent since the last word from the receiver.
    probes: u32,
    /// A word from the receiver since the last set.
    heard: bool,
    /// The last word from the receiver (or the start).
    last_word: Instant,
    /// Q-Block1: with every block sent and no final 2.04, send the last block again (the
    /// server's 4.08 or 2.04 follows it). Q-Block2: the client drives recovery, the server
    /// just stops.
    probe_tail: bool,
    pub finished: bool,
}

impl Sender {
    pub fn new(p: Params, total: u32, block_bytes: u32, probe_tail: bool) -> Self {
        Sender {
            probe_tail,
            p,
            total,
            next: 0,
            block_bytes,
            due: None,
            probes: 0,
            heard: false,
            last_word: Instant::ZERO,
            finished: false,
        }
    }

    /// Sends the first set (Q-Block2: on the client's request; Q-Block1: at the client's
    /// start).
    pub fn start(&mut self, now: Instant, out: &mut Vec<SendAction>) {
        self.heard = true;
        self.last_word = now;
        self.send_set(now, out);
    }

    /// Blocks `next..next + MAX_PAYLOADS` back to back, then the pause (RFC 9177 §7.2). While
    /// the receiver is silent and PROBING_RATE is set, the pause stretches to keep the set's
    /// bytes at that average rate, at most NON_PROBING_WAIT (§7.2).
    fn send_set(&mut self, now: Instant, out: &mut Vec<SendAction>) {
        let end = self
            .next
            .saturating_add(self.p.max_payloads)
            .min(self.total);
        for n in self.next..end {
            out.push(SendAction::Block { n, again: false });
        }
        let count = end - self.next;
        self.next = end;
        let mut pause = self.p.non_timeout;
        if let (Some(rate), false) = (self.p.probing_rate_bps, self.heard) {
            let bytes = f64::from(count) * f64::from(self.block_bytes);
            let wait = Duration::from_secs_f64(bytes / rate).min(self.p.non_probing_wait);
            pause = pause.max(wait);
        }
        self.heard = false;
        self.arm(now + pause, out);
    }

    fn arm(&mut self, at: Instant, out: &mut Vec<SendAction>) {
        self.due = Some(at);
        out.push(SendAction::Arm(at));
    }

    /// A timer armed by [`SendAction::Arm`] fired. Blocks left: the next set (the pause is
    /// over without a Continue, as libcoap's `coap_block_check_q_block1_xmit`). All sent and no
    /// final word: the last block again (a tail probe, the pause doubled each time); after
    /// NON_MAX_RETRANSMIT probes it waits quietly, and the transfer fails NON_PARTIAL_TIMEOUT
    /// after the receiver's last word (as long as a receiver keeps a partial body, §7.2).
    pub fn on_timer(&mut self, now: Instant, out: &mut Vec<SendAction>) {
        if self.finished || self.due.is_none_or(|d| now < d) {
            return;
        }
        self.due = None;
        if self.next < self.total {
            self.send_set(now, out);
        } else if !self.probe_tail {
            // Q-Block2: every block is out; the client asks for what it misses.
        } else if self.probes >= self.p.non_max_retransmit {
            let give_up = self.last_word + self.p.non_partial_timeout;
            if now >= give_up {
                self.finished = true;
                out.push(SendAction::Failed);
            } else {
                self.arm(give_up, out);
            }
        } else {
            self.probes += 1;
            out.push(SendAction::Block {
                n: self.total - 1,
                again: true,
            });
            self.arm(now + self.p.non_timeout.mul(1u64 << self.probes), out);
        }
    }

    /// The receiver has the whole set and asks for the next one (Q-Block1: 2.31 Continue;
    /// Q-Block2: a GET for the next block): the pause is cut short (RFC 9177 §7.2).
    pub fn on_continue(&mut self, now: Instant, next: u32, out: &mut Vec<SendAction>) {
        self.heard = true;
        self.last_word = now;
        self.probes = 0;
        if self.finished || next != self.next || self.next >= self.total {
            return;
        }
        self.send_set(now, out);
    }

    /// The receiver lists missing blocks (Q-Block1: 4.08; Q-Block2: a GET with their Q-Block2
    /// options): they are sent again at once; the set timer runs on.
    pub fn on_recovery(&mut self, now: Instant, missing: &[u32], out: &mut Vec<SendAction>) {
        self.heard = true;
        self.last_word = now;
        self.probes = 0;
        if self.finished {
            return;
        }
        for &n in missing.iter().filter(|&&n| n < self.total) {
            out.push(SendAction::Block { n, again: true });
        }
        // Blocks beyond what was sent so far were asked for early: they count as sent.
        if let Some(&high) = missing.iter().filter(|&&n| n < self.total).max() {
            self.next = self.next.max(high + 1);
        }
    }

    /// The receiver has the whole body (Q-Block1: 2.04; Q-Block2: nothing more is asked).
    pub fn on_final(&mut self) {
        self.finished = true;
        self.due = None;
    }
}

/// What a [`Receiver`] asks its host to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecvAction {
    /// The set ending at the block just received is complete: ask for the next one, starting
    /// at this block (Q-Block1: 2.31 Continue; Q-Block2: GET for it).
    Continue(u32),
    /// Ask for these missing blocks (Q-Block1: 4.08 with them as its payload; Q-Block2: a GET
    /// with one Q-Block2 option each).
    Recover(Vec<u32>),
    /// Every block is in (Q-Block1: the server answers 2.04).
    Complete,
    /// NON_MAX_RETRANSMIT recovery requests went unanswered: the partial body is dropped.
    Failed,
    /// Call [`Receiver::on_timer`] at this time (replaces any earlier timer).
    Arm(Instant),
}

/// The receiving end of one body of `total` blocks.
#[derive(Clone, Debug)]
pub struct Receiver {
    p: Params,
    got: Vec<bool>,
    count: u32,
    /// The last new payload, or the last recovery request (libcoap's `rec_blocks.last_seen`).
    last_seen: Instant,
    /// Recovery requests since the last new payload (libcoap's `rec_blocks.retry`).
    retry: u32,
    due: Option<Instant>,
    pub finished: bool,
}

impl Receiver {
    /// A receiver waiting from `now` (Q-Block2: the client's request; Q-Block1: the first
    /// payload, passed next to [`Receiver::on_block`]).
    pub fn new(p: Params, total: u32, now: Instant, out: &mut Vec<RecvAction>) -> Self {
        let mut r = Receiver {
            p,
            got: vec![false; total as usize],
            count: 0,
            last_seen: now,
            retry: 0,
            due: None,
            finished: false,
        };
        r.arm(out);
        r
    }

    fn total(&self) -> u32 {
        self.got.len() as u32
    }

    /// Whether every block is in.
    pub fn complete(&self) -> bool {
        self.count == self.total()
    }

    fn arm(&mut self, out: &mut Vec<RecvAction>) {
        // NON_RECEIVE_TIMEOUT << retry, as libcoap's `coap_block_check_lg_crcv_timeouts`.
        let at = self.last_seen + self.p.non_receive_timeout.mul(1u64 << self.retry.min(31));
        self.due = Some(at);
        out.push(RecvAction::Arm(at));
    }

    /// Block `n` arrived. Returns whether it was new.
    pub fn on_block(&mut self, now: Instant, n: u32, out: &mut Vec<RecvAction>) -> bool {
        if self.finished || n >= self.total() || self.got[n as usize] {
            return false;
        }
        // The highest block received before this one.
        let before = self.got.iter().rposition(|&b| b).map(|h| h as u32);
        self.got[n as usize] = true;
        self.count += 1;
        self.last_seen = now;
        self.retry = 0;
        if self.count == self.total() {
            self.finished = true;
            self.due = None;
            out.push(RecvAction::Complete);
            return true;
        }
        // The MAX_PAYLOADS'th block of a set with the whole body up to it in, and nothing of
        // a later set seen yet: ask for the next set (RFC 9177 §7.2; libcoap's
        // `check_all_blocks_in_for_payload_set`). A set completed by a re-sent block after the
        // next set arrived asks for nothing (RFC 9177 Figure 6: no 2.31 after block 9 re-sent).
        let m = self.p.max_payloads;
        if (n + 1).is_multiple_of(m)
            && before.is_none_or(|h| h < n)
            && self.got[..=n as usize].iter().all(|&b| b)
        {
            out.push(RecvAction::Continue(n + 1));
        }
        // The first payload of a later set with blocks of the earlier sets missing: ask for
        // those at once (RFC 9177 §7.2, "On receipt of a payload from the next
        // MAX_PAYLOADS_SET, the server SHOULD send a 4.08 ... indicating any missing payloads
        // from any previous MAX_PAYLOADS_SET", and the same for the Q-Block2 client; Figures 6
        // and 10). At most MAX_PAYLOADS of them, as at a timeout.
        if before.map_or(n / m > 0, |h| n / m > h / m) {
            let mut earlier: Vec<u32> = (0..n / m * m).filter(|&b| !self.got[b as usize]).collect();
            earlier.truncate(m as usize);
            if !earlier.is_empty() {
                out.push(RecvAction::Recover(earlier));
            }
        }
        self.arm(out);
        true
    }

    /// The blocks to ask for: the gaps below the highest block received, then the rest of that
    /// block's set, or, with no gap and that set complete, the next set (libcoap's
    /// `coap_block_check_lg_srcv_timeouts`); at most MAX_PAYLOADS of them.
    pub fn missing(&self) -> Vec<u32> {
        let m = self.p.max_payloads;
        let total = self.total();
        let high = self.got.iter().rposition(|&b| b).map(|h| h as u32);
        let set_end = |h: u32| ((h / m + 1) * m).min(total);
        let mut out: Vec<u32> = (0..high.map_or(0, |h| h + 1))
            .filter(|&n| !self.got[n as usize])
            .collect();
        let from = high.map_or(0, |h| h + 1);
        let end = match high {
            None => m.min(total),
            Some(h) if out.is_empty() && set_end(h) == h + 1 => (from + m).min(total),
            Some(h) => set_end(h),
        };
        out.extend(from..end);
        out.truncate(m as usize);
        out
    }

    /// A timer armed by [`RecvAction::Arm`] fired: without progress since, a recovery request
    /// for the missing blocks (the wait doubling); after NON_MAX_RETRANSMIT of them, or
    /// NON_PARTIAL_TIMEOUT after the last payload, the transfer fails.
    pub fn on_timer(&mut self, now: Instant, out: &mut Vec<RecvAction>) {
        if self.finished || self.due.is_none_or(|d| now < d) {
            return;
        }
        if self.retry >= self.p.non_max_retransmit
            || now.saturating_since(self.last_seen) >= self.p.non_partial_timeout
        {
            self.finished = true;
            self.due = None;
            out.push(RecvAction::Failed);
            return;
        }
        out.push(RecvAction::Recover(self.missing()));
        self.retry += 1;
        self.last_seen = now;
        self.arm(out);
    }
}

#[cfg(test)]
#[path = "qblock_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "qblock_figures_tests.rs"]
mod figures_tests;
