//! The message sequences of one device on the carrier, subframe by subframe: random access
//! (Msg1, Msg2), connection set-up or resume (Msg3, Msg4 with its HARQ-ACK, Msg5), the
//! connected device's uplink access (random access on NB-IoT, a scheduling request on LTE-M),
//! and data blocks with HARQ. Each step books the carrier (`carrier.rs`) at the earliest
//! subframe its timing allows and returns when it ends; the device's transmit and receive
//! subframes are added to `Radio`.

use coaplab_cc::rng::{Rng, Xoshiro256pp};

use super::carrier::Carrier;
use super::numerology::{Numerology, LEVELS};
use super::timeline::{Activity, Timeline};

/// Bits of the messages whose size the model needs: Msg2 (the RAR: MAC subheader and a 6-byte
/// RAR, TS 36.321 §6.1.5, §6.2.3: 56 bits), Msg3 (88 bits: the NB-IoT Msg3 grant's TBS,
/// TS 36.213 Table 16.3.3-3; RRCConnectionRequest / ResumeRequest or, connected, C-RNTI and
/// BSR MAC CEs), Msg4 (RRCConnectionSetup / Resume, about 20 bytes with MAC headers: 160
/// bits), and the RRC/NAS header Msg5 adds to the data (RRCConnectionSetupComplete with the
/// NAS service request or ESM data transport: about 20 bytes).
pub const MSG2_BITS: u32 = 56;
/// A paging message with one paging record (S-TMSI), about 5 bytes: 40 bits.
pub const PAGING_BITS: u32 = 40;
pub const MSG3_BITS: u32 = 88;
pub const MSG4_BITS: u32 = 160;
pub const MSG5_HEADER_BITS: u32 = 160;
/// Bits a packet gains below IP on the radio: MAC subheader 2 + RLC header 2 + PDCP header 1
/// bytes (TS 36.321 §6.1.2, TS 36.322 §6.2.1, TS 36.323 §6.2).
pub const L2_OVERHEAD_BITS: u32 = 5 * 8;

/// A device's transmit and receive subframes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Radio {
    pub tx: u64,
    pub rx: u64,
}

/// Counters the procedures update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcCounters {
    pub ra_attempts: u64,
    pub ra_collisions: u64,
    pub ra_level_ups: u64,
    pub harq_retransmissions: u64,
}

/// What the procedures need: the numerology, the carrier, the preambles taken per
/// random-access occasion, block error rates, the random stream.
pub struct Procs<'a> {
    pub num: &'a Numerology,
    pub carrier: &'a mut Carrier,
    /// Preambles chosen so far per (occasion subframe, level).
    pub occasions: &'a mut std::collections::BTreeMap<(u64, u8), Vec<u32>>,
    pub bler: [f64; LEVELS],
    pub ra_attempts_per_level: u32,
    pub ra_backoff_ms: u64,
    pub rng: &'a mut Xoshiro256pp,
    pub counters: &'a mut ProcCounters,
    /// The traced device's timeline, when these procedures are its (`timeline.rs`).
    pub timeline: Option<&'a mut Timeline>,
}

impl Procs<'_> {
    fn mark(&mut self, start: u64, end: u64, what: Activity) {
        if let Some(t) = self.timeline.as_mut() {
            t.span(start, end, what);
        }
    }

    fn fails(&mut self, level: usize) -> bool {
        let p = self.bler[level];
        p > 0.0 && self.rng.unit_f64() < p
    }

    /// One DCI (NPDCCH / MPDCCH, `dci_reps` subframes) at or after `t`: its end.
    fn dci(&mut self, t: u64, level: usize, r: &mut Radio) -> u64 {
        let n = self.num.dci_reps[level];
        let num = self.num;
        let (start, end) = self.carrier.book_dl(t, n, |s| num.dl_valid(s));
        r.rx += n;
        self.mark(start, end, Activity::Rx);
        end
    }

    /// A downlink data block of `sf` subframes × the level's repetitions at or after `t`.
    fn pdsch(&mut self, t: u64, sf: u64, level: usize, r: &mut Radio) -> u64 {
        let n = sf * self.num.pdsch_reps[level];
        let num = self.num;
        let (start, end) = self.carrier.book_dl(t, n, |s| num.dl_valid(s));
        r.rx += n;
        self.mark(start, end, Activity::Rx);
        end
    }

    /// An uplink transmission of `sf` subframes (before repetitions) at or after `t`.
    fn pusch(&mut self, t: u64, sf: u64, level: usize, r: &mut Radio) -> u64 {
        let n = sf * self.num.pusch_reps[level];
        let (start, end) = self.carrier.book_ul(t, n, self.num.ul_tones[level]);
        r.tx += n;
        self.mark(start, end, Activity::Tx);
        end
    }

    /// A HARQ-ACK at or after `t` (`ack_sf` × the level's ACK repetitions).
    fn ack(&mut self, t: u64, level: usize, r: &mut Radio) -> u64 {
        let n = self.num.ack_sf * self.num.ack_reps[level];
        let (start, end) = self.carrier.book_ul(t, n, 1);
        r.tx += n;
        self.mark(start, end, Activity::Tx);
        end
    }

    /// Random access from subframe `t` at `level`: preamble attempts on the level's
    /// occasions (a collision when another device took the same preamble in the occasion;
    /// then a random back-off, and after `ra_attempts_per_level` attempts the next level),
    /// then Msg2 (the RAR's DCI and NPDSCH, TS 36.321 §5.1.4). Returns (the level that got
    /// through, Msg2's end). The device listens from each preamble's end to its RAR.
    pub fn random_access(&mut self, mut t: u64, level: usize, r: &mut Radio) -> (usize, u64) {
        let mut level = level;
        let mut attempts = 0;
        loop {
            let (period, offset) = (self.num.prach_period[level], self.num.prach_offset[level]);
            // The first occasion k·period + offset at or after t.
            let occasion = if t <= offset {
                offset
            } else {
                (t - offset).div_ceil(period) * period + offset
            };
            let preamble = (self.num.prach_reps[level] * self.num.preamble_us).div_ceil(1000);
            let end = occasion + preamble;
            r.tx += preamble;
            self.mark(occasion, end, Activity::Tx);
            self.counters.ra_attempts += 1;
            let pick = (self.rng.next_u64() % u64::from(self.num.preambles[level])) as u32;
            let taken = self.occasions.entry((occasion, level as u8)).or_default();
            let collided = taken.contains(&pick);
            taken.push(pick);
            // Msg2: its DCI from the response window's start, then the RAR.
            let window = end + self.num.gap_rar;
            let dci = self.dci(window, level, r);
            let (_, sf) = self.num.block(MSG2_BITS, level, true);
            let msg2 = self.pdsch(dci + self.num.gap_dci_dl, sf, level, r);
            r.rx += (msg2 - window)
                .saturating_sub(sf * self.num.pdsch_reps[level] + self.num.dci_reps[level]);
            // The device listens through the response window.
            self.mark(window, msg2, Activity::Rx);
            if !collided {
                return (level, msg2);
            }
            // Both devices get the RAR; the later one loses contention resolution. Back off.
            self.counters.ra_collisions += 1;
            attempts += 1;
            if attempts >= self.ra_attempts_per_level && level + 1 < LEVELS {
                level += 1;
                attempts = 0;
                self.counters.ra_level_ups += 1;
            }
            let backoff = if self.ra_backoff_ms > 0 {
                self.rng.next_u64() % (self.ra_backoff_ms + 1)
            } else {
                0
            };
            t = msg2 + backoff;
        }
    }

    /// A paging message at or after `t` (its DCI and NPDSCH: a paging record of 40 bits,
    /// TS 36.331 Paging-NB; no HARQ-ACK): its end.
    pub fn paging(&mut self, t: u64, level: usize, r: &mut Radio) -> u64 {
        let dci = self.dci(t, level, r);
        let (_, sf) = self.num.block(PAGING_BITS, level, true);
        self.pdsch(dci + self.num.gap_dci_dl, sf, level, r)
    }

    /// Msg3 (with HARQ retransmissions) after Msg2 ended at `msg2`: its end.
    fn msg3(&mut self, msg2: u64, level: usize, r: &mut Radio) -> u64 {
        let (_, sf) = self.num.block(MSG3_BITS, level, false);
        let mut end = self.pusch(msg2 + self.num.gap_msg3, sf, level, r);
        while self.fails(level) {
            self.counters.harq_retransmissions += 1;
            let dci = self.dci(end + self.num.gap_after_ul, level, r);
            end = self.pusch(dci + self.num.gap_dci_ul, sf, level, r);
        }
        end
    }

    /// Connection set-up or resume from idle at `t`: random access, Msg3, Msg4 and its
    /// HARQ-ACK. Returns (level, the subframe from which Msg5 may be granted).
    pub fn connect(&mut self, t: u64, level: usize, r: &mut Radio) -> (usize, u64) {
        let (level, msg2) = self.random_access(t, level, r);
        let msg3 = self.msg3(msg2, level, r);
        let start = msg3 + self.num.gap_after_ul;
        let (_, sf) = self.num.block(MSG4_BITS, level, true);
        let end = self.dl_block(start, sf, level, r);
        (level, end)
    }

    /// A connected device's uplink access from `t`: LTE-M a scheduling request on the next
    /// occasion of its period; NB-IoT random access with Msg3 carrying the C-RNTI and the
    /// buffer status. Returns when a data grant may follow.
    pub fn uplink_access(&mut self, t: u64, level: usize, r: &mut Radio) -> u64 {
        match self.num.sr_period {
            Some(p) => {
                let sr = t.div_ceil(p) * p;
                let (start, end) = self.carrier.book_ul(sr, 1, 1);
                r.tx += 1;
                self.mark(start, end, Activity::Tx);
                // The eNB decodes the request and grants within 3 subframes (n + 4).
                end + 3
            }
            None => {
                let (level2, msg2) = self.random_access(t, level, r);
                self.msg3(msg2, level2, r) + self.num.gap_after_ul
            }
        }
    }

    /// One downlink transport block of `sf` subframes with HARQ: DCI, data, HARQ-ACK,
    /// repeated while the block fails. Returns the end of the last ACK + the turnaround.
    fn dl_block(&mut self, t: u64, sf: u64, level: usize, r: &mut Radio) -> u64 {
        let mut t = t;
        loop {
            let dci = self.dci(t, level, r);
            let data = self.pdsch(dci + self.num.gap_dci_dl, sf, level, r);
            let ack = self.ack(data + self.num.gap_dl_ack, level, r);
            t = ack + self.num.gap_after_ul;
            if !self.fails(level) {
                return t;
            }
            self.counters.harq_retransmissions += 1;
        }
    }

    /// `bits` of downlink data from `t`: transport blocks one after the other (one HARQ
    /// process). Returns (when the last block was decoded: the data is delivered; when the
    /// device is free again).
    pub fn downlink(&mut self, t: u64, bits: u32, level: usize, r: &mut Radio) -> (u64, u64) {
        let (mut t, mut left, mut delivered) = (t, bits.max(1), t);
        while left > 0 {
            let (tbs, sf) = self.num.block(left, level, true);
            loop {
                let dci = self.dci(t, level, r);
                let data = self.pdsch(dci + self.num.gap_dci_dl, sf, level, r);
                let ack = self.ack(data + self.num.gap_dl_ack, level, r);
                t = ack + self.num.gap_after_ul;
                delivered = data;
                if !self.fails(level) {
                    break;
                }
                self.counters.harq_retransmissions += 1;
            }
            left = left.saturating_sub(tbs);
        }
        (delivered, t)
    }

    /// `bits` of uplink data from `t` (a grant may follow from `t`): per transport block a
    /// DCI granting it and the NPUSCH / PUSCH, again while it fails. Returns (when the last
    /// block was decoded; when the device is free again).
    pub fn uplink(&mut self, t: u64, bits: u32, level: usize, r: &mut Radio) -> (u64, u64) {
        let end = self.uplink_granted(t, bits, level, r);
        (end.delivered, end.free)
    }

    /// [`Procs::uplink`], and when the device built its last MAC PDU: at the end of the DCI
    /// that granted the last block (the buffer status it reports is the buffer then).
    pub fn uplink_granted(&mut self, t: u64, bits: u32, level: usize, r: &mut Radio) -> UplinkEnd {
        let (mut t, mut left, mut delivered, mut built) = (t, bits.max(1), t, t);
        while left > 0 {
            let (tbs, sf) = self.num.block(left, level, false);
            loop {
                let dci = self.dci(t, level, r);
                built = dci;
                let end = self.pusch(dci + self.num.gap_dci_ul, sf, level, r);
                t = end + self.num.gap_after_ul;
                delivered = end;
                if !self.fails(level) {
                    break;
                }
                self.counters.harq_retransmissions += 1;
            }
            left = left.saturating_sub(tbs);
        }
        UplinkEnd {
            delivered,
            free: t,
            built,
        }
    }
}

/// The end of an uplink transfer ([`Procs::uplink_granted`]), subframes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UplinkEnd {
    /// The last block was decoded: the data leaves the cell.
    pub delivered: u64,
    /// The device is free again.
    pub free: u64,
    /// The device built its last MAC PDU (the end of the DCI granting the last block).
    pub built: u64,
}

/// The downlink peak rate of one device at level 0 with one HARQ process, kbit/s (bits per
/// ms): `blocks` of the category's largest transport block back to back on an otherwise idle
/// carrier from subframe 0, no block errors, one HARQ-ACK repetition (the dedicated
/// `ack-NACK-NumRepetitions` r1, TS 36.331, as the published peak rates assume; the model's
/// default is the Msg4 value). `broadcast`: on the anchor carrier, with its NPBCH, NPSS, NSSS
/// and SIB1-NB subframes ([`Numerology::dl_valid`]); else on a carrier without them.
/// `coaplab reproduce cell-calibration` prints it beside the published figures.
pub fn peak_downlink_kbps(num: &Numerology, broadcast: bool, blocks: u32) -> f64 {
    let mut num = num.clone();
    num.ack_reps = [1; LEVELS];
    num.anchor = num.anchor && broadcast;
    let mut carrier = Carrier::new(num.ul_lanes);
    let mut occasions = Default::default();
    let mut rng = Xoshiro256pp::seed_from_u64(0);
    let mut counters = ProcCounters::default();
    let mut procs = Procs {
        num: &num,
        carrier: &mut carrier,
        occasions: &mut occasions,
        bler: [0.0; LEVELS],
        ra_attempts_per_level: 1,
        ra_backoff_ms: 0,
        rng: &mut rng,
        counters: &mut counters,
        timeline: None,
    };
    let bits = num.max_dl_tbs * blocks.max(1);
    let (_, done) = procs.downlink(0, bits, 0, &mut Radio::default());
    f64::from(bits) / done as f64
}
