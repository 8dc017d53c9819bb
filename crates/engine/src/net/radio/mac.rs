//! Unslotted CSMA/CA with acknowledgements and retransmissions (IEEE 802.15.4-2006
//! §7.5.1.4, §7.5.6.4), as a sans-IO state machine: it is told what happened with `now` and
//! a random source, and answers with when its next step is due.
//!
//! For each frame: NB = 0, BE = macMinBE; wait a random number of unit backoff periods in
//! [0, 2^BE − 1]; assess the channel (CCA); if busy, NB += 1, BE = min(BE + 1, macMaxBE) and,
//! while NB <= macMaxCSMABackoffs, back off again, else report a channel-access failure; if
//! clear, turn the radio round (RX → TX) and transmit; then wait up to macAckWaitDuration for
//! the acknowledgement. Without it the frame is retransmitted (the whole procedure again) up
//! to macMaxFrameRetries times, then reported as failed.

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

/// The MAC's parameters (defaults: IEEE 802.15.4-2006 Table 86 and §6.4.1 at 2.4 GHz).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacParams {
    pub min_be: u8,
    pub max_be: u8,
    pub max_csma_backoffs: u8,
    pub max_frame_retries: u8,
    /// aUnitBackoffPeriod: 20 symbols of 16 µs = 320 µs.
    pub unit_backoff: Duration,
    /// CCA: 8 symbols = 128 µs.
    pub cca: Duration,
    /// aTurnaroundTime: 12 symbols = 192 µs.
    pub turnaround: Duration,
    /// macAckWaitDuration: 54 symbols = 864 µs, from the end of the frame.
    pub ack_wait: Duration,
}

impl Default for MacParams {
    fn default() -> Self {
        MacParams {
            min_be: 3,
            max_be: 5,
            max_csma_backoffs: 4,
            max_frame_retries: 3,
            unit_backoff: Duration::from_micros(320),
            cca: Duration::from_micros(128),
            turnaround: Duration::from_micros(192),
            ack_wait: Duration::from_micros(864),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacState {
    Idle,
    /// Backing off; the CCA ends at the scheduled time.
    Backoff,
    /// Turning round and transmitting.
    Transmitting,
    WaitAck,
}

/// What a finished CCA leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcaDecision {
    /// The channel was clear: the frame goes on the air at `at` (after the turnaround).
    Transmit { at: Instant },
    /// The channel was busy: the next CCA ends at `cca_end`.
    Backoff { cca_end: Instant },
    /// macMaxCSMABackoffs exceeded: channel-access failure.
    Fail,
}

/// One node's CSMA/CA state for the frame at the head of its queue.
#[derive(Clone, Copy, Debug)]
pub struct Csma {
    pub state: MacState,
    /// NB: busy CCAs of this attempt.
    pub nb: u8,
    /// BE: the backoff exponent.
    pub be: u8,
    /// Retransmissions of this frame so far.
    pub retries: u8,
}

impl Default for Csma {
    fn default() -> Self {
        Csma {
            state: MacState::Idle,
            nb: 0,
            be: 0,
            retries: 0,
        }
    }
}

impl Csma {
    /// A new frame's channel access starts at `now`; returns when its first CCA ends.
    pub fn begin(&mut self, now: Instant, p: &MacParams, rng: &mut dyn Rng) -> Instant {
        self.retries = 0;
        self.attempt(now, p, rng)
    }

    /// NB = 0, BE = macMinBE, first backoff.
    fn attempt(&mut self, now: Instant, p: &MacParams, rng: &mut dyn Rng) -> Instant {
        self.nb = 0;
        self.be = p.min_be;
        self.backoff(now, p, rng)
    }

    /// A random backoff of [0, 2^BE − 1] unit periods, then the CCA: returns its end.
    fn backoff(&mut self, now: Instant, p: &MacParams, rng: &mut dyn Rng) -> Instant {
        self.state = MacState::Backoff;
        let slots = (u128::from(rng.next_u64()) << self.be >> 64) as u64;
        now + p.unit_backoff.mul(slots) + p.cca
    }

    /// The CCA ended at `now` and found the channel `busy`.
    pub fn on_cca(
        &mut self,
        now: Instant,
        busy: bool,
        p: &MacParams,
        rng: &mut dyn Rng,
    ) -> CcaDecision {
        if !busy {
            self.state = MacState::Transmitting;
            return CcaDecision::Transmit {
                at: now + p.turnaround,
            };
        }
        self.nb += 1;
        self.be = (self.be + 1).min(p.max_be);
        if self.nb > p.max_csma_backoffs {
            self.state = MacState::Idle;
            return CcaDecision::Fail;
        }
        CcaDecision::Backoff {
            cca_end: self.backoff(now, p, rng),
        }
    }

    /// The frame left the air at `now`: returns when waiting for its acknowledgement ends.
    pub fn on_tx_end(&mut self, now: Instant, p: &MacParams) -> Instant {
        self.state = MacState::WaitAck;
        now + p.ack_wait
    }

    /// The acknowledgement arrived: the frame is done.
    pub fn on_ack(&mut self) {
        self.state = MacState::Idle;
    }

    /// No acknowledgement by the deadline: `Some(cca_end)` of the retransmission's first CCA,
    /// or `None` when macMaxFrameRetries retransmissions were already made (the frame failed).
    pub fn on_ack_timeout(
        &mut self,
        now: Instant,
        p: &MacParams,
        rng: &mut dyn Rng,
    ) -> Option<Instant> {
        if self.retries >= p.max_frame_retries {
            self.state = MacState::Idle;
            return None;
        }
        self.retries += 1;
        Some(self.attempt(now, p, rng))
    }
}
