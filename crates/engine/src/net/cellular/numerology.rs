//! The radio numerology of a cell category: how long each physical channel takes per coverage
//! level, the scheduling delays between channels, and the transport block sizes. NB-IoT (nb1,
//! nb2) and LTE-M (Cat-M1) share the cell's state machine (`cell.rs`); they differ only in
//! this table of parameters (docs/networks.md, "NB-IoT and LTE-M cells").
//!
//! All times are in subframes (1 ms, TS 36.211 §4.1 / §10.1.1).

/// Coverage levels (CE levels 0, 1, 2; TS 36.331 `rsrp-ThresholdsPrachInfoList`).
pub const LEVELS: usize = 3;

/// Transport block sizes of NB-IoT, bits, by I_TBS (rows 0–12) and resource index (columns:
/// N_SF = N_RU = 1, 2, 3, 4, 5, 6, 8, 10): TS 36.213 Table 16.5.1.2-2 (NPUSCH; 0 = not
/// allowed). Table 16.4.1.5.1-1 (NPDSCH) has the same entries up to the Rel-13 NPDSCH limit
/// of 680 bits, which is the only range the nb1 downlink uses.
pub const NB_TBS: [[u32; 8]; 13] = [
    [16, 32, 56, 88, 120, 152, 208, 256],
    [24, 56, 88, 144, 176, 208, 256, 344],
    [32, 72, 144, 176, 208, 256, 328, 424],
    [40, 104, 176, 208, 256, 328, 440, 568],
    [56, 120, 208, 256, 328, 408, 552, 680],
    [72, 144, 224, 328, 424, 504, 680, 872],
    [88, 176, 256, 392, 504, 600, 808, 1000],
    [104, 224, 328, 472, 584, 712, 1000, 0],
    [120, 256, 392, 536, 680, 808, 0, 0],
    [136, 296, 456, 616, 776, 936, 0, 0],
    [144, 328, 504, 680, 872, 1000, 0, 0],
    [176, 376, 584, 776, 1000, 0, 0, 0],
    [208, 440, 680, 1000, 0, 0, 0, 0],
];
/// Subframes (NPDSCH) or resource units (NPUSCH) of each column of [`NB_TBS`]
/// (TS 36.213 Table 16.4.1.3-1, Table 16.5.1.1-2).
pub const NB_UNITS: [u32; 8] = [1, 2, 3, 4, 5, 6, 8, 10];

/// LTE-M (6 PRBs): transport block size per subframe, bits, by I_TBS 0–10, the N_PRB = 6
/// column of TS 36.213 Table 7.1.7.2.1-1 (Cat-M1 caps a transport block at 1000 bits,
/// TS 36.306 §4.1A, so rows above 9 are not used).
pub const M1_TBS_6PRB: [u32; 11] = [152, 208, 256, 328, 408, 504, 600, 712, 808, 936, 1032];

/// How a category sizes transport blocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TbsTable {
    /// NB-IoT: one row of [`NB_TBS`] per level, transport blocks up to `max_bits`, spread over
    /// 1–10 subframes / resource units.
    NbIot,
    /// LTE-M: one subframe per transport block at the level's row of [`M1_TBS_6PRB`].
    LteM,
}

/// One category's numerology. Arrays are per coverage level 0, 1, 2.
#[derive(Clone, Debug, PartialEq)]
pub struct Numerology {
    pub name: &'static str,
    pub tbs: TbsTable,
    /// Largest downlink / uplink transport block, bits.
    pub max_dl_tbs: u32,
    pub max_ul_tbs: u32,
    /// I_TBS link adaptation picks per level, downlink and uplink.
    pub dl_itbs: [usize; LEVELS],
    pub ul_itbs: [usize; LEVELS],
    /// Random-access channel: period, start offset, repetitions per attempt, and the duration
    /// of one preamble repetition, µs.
    pub prach_period: [u64; LEVELS],
    pub prach_offset: [u64; LEVELS],
    pub prach_reps: [u64; LEVELS],
    pub preamble_us: u64,
    /// Preambles (NPRACH subcarriers) per level: two devices picking the same one in the same
    /// occasion collide.
    pub preambles: [u32; LEVELS],
    /// Control channel (NPDCCH / MPDCCH) search space Rmax, and the repetitions of one DCI.
    pub pdcch_rmax: [u64; LEVELS],
    pub dci_reps: [u64; LEVELS],
    /// Data channel repetitions, downlink and uplink, and HARQ-ACK repetitions.
    pub pdsch_reps: [u64; LEVELS],
    pub pusch_reps: [u64; LEVELS],
    pub ack_reps: [u64; LEVELS],
    /// Uplink subcarriers a device uses per level, out of `ul_lanes`, and the resource unit's
    /// duration with that many subcarriers, subframes.
    pub ul_tones: [u32; LEVELS],
    pub ru_sf: [u64; LEVELS],
    pub ul_lanes: u32,
    /// Subframes of one HARQ-ACK transmission.
    pub ack_sf: u64,
    /// Gaps, subframes: DCI end → downlink data; DCI end → uplink data; downlink data end →
    /// HARQ-ACK; after a HARQ-ACK (or uplink data) before the next DCI; preamble end → RAR
    /// window; RAR end → Msg3.
    pub gap_dci_dl: u64,
    pub gap_dci_ul: u64,
    pub gap_dl_ack: u64,
    pub gap_after_ul: u64,
    pub gap_rar: u64,
    pub gap_msg3: u64,
    /// Whether the downlink carrier loses subframes to synchronisation and broadcast (the
    /// NB-IoT anchor carrier; [`dl_valid`]).
    pub anchor: bool,
    /// SIB1-NB repetitions in its 2560-ms period (4, 8 or 16: `schedulingInfoSIB1` of the
    /// MIB-NB, TS 36.213 Table 16.4.1.3-3), and the physical cell id N_ID^cell, which picks
    /// the frames they start in (Table 16.4.1.3-4). Only read on the anchor carrier.
    pub sib1_reps: u64,
    pub cell_id: u64,
    /// Connected-mode uplink access: `Some(period)`: a scheduling request on the uplink
    /// control channel every `period` subframes (LTE-M PUCCH); `None`: random access (NB-IoT
    /// Rel-13/14 has no scheduling request, TS 36.321 §5.4.4).
    pub sr_period: Option<u64>,
    /// Largest coupling loss a device can be served at, dB (the category's maximum coupling
    /// loss).
    pub max_coupling_loss_db: f64,
    /// The eNB's transmit power per subcarrier (resource element), dBm.
    pub rs_power_dbm: f64,
}

/// NB-IoT Rel-13, category NB1.
pub fn nb1() -> Numerology {
    Numerology {
        name: "nb1",
        tbs: TbsTable::NbIot,
        // TS 36.306 §4.1C: Cat NB1 max TBS 680 bits downlink, 1000 bits uplink.
        max_dl_tbs: 680,
        max_ul_tbs: 1000,
        // Link adaptation (assumed, docs/networks.md): I_TBS 10 in good coverage (the row
        // whose 4-subframe entry is the 680-bit peak), 4 and 1 at levels 1 and 2.
        dl_itbs: [10, 4, 1],
        ul_itbs: [10, 4, 1],
        // TS 36.331 NPRACH-ConfigSIB-NB: nprach-Periodicity 640 ms at every level,
        // nprach-StartTime 8, 64, 128 ms, numRepetitionsPerPreambleAttempt 2, 8, 32 (a
        // commercial SIB2-NB; docs/networks.md).
        prach_period: [640, 640, 640],
        prach_offset: [8, 64, 128],
        prach_reps: [2, 8, 32],
        // TS 36.211 §10.1.6.1, preamble format 1: 4 symbol groups of CP 266.67 µs + 5 × 266.67
        // µs = 1.6 ms each: 6.4 ms per repetition.
        preamble_us: 6400,
        // 48 NPRACH subcarriers split 24 / 12 / 12 over the levels (nprach-NumSubcarriers).
        preambles: [24, 12, 12],
        // npdcch-NumRepetitions-RA / Rmax 8, 16, 128 (commercial SIB2-NB).
        pdcch_rmax: [8, 16, 128],
        // DCI subframe repetition field (TS 36.213 Table 16.6-1: Rmax/8 … Rmax): Rmax/8 at
        // level 0, Rmax/4 at 1, Rmax/2 at 2 (assumed link adaptation).
        dci_reps: [1, 4, 64],
        // NPDSCH / NPUSCH repetitions (TS 36.213 Table 16.4.1.3-2 / 16.5.1.1-3 values; assumed
        // link adaptation matching NPRACH's 2 / 8 / 32 ratio).
        pdsch_reps: [1, 4, 32],
        pusch_reps: [1, 4, 32],
        // Msg4 HARQ-ACK repetitions (ack-NACK-NumRepetitions-Msg4) 2, 8, 64 (SIB2-NB).
        ack_reps: [2, 8, 64],
        // TS 36.211 Table 10.1.2.3-1 (15 kHz): 12 subcarriers → 1 ms per RU, 3 → 4 ms, 1 → 8 ms.
        ul_tones: [12, 3, 1],
        ru_sf: [1, 4, 8],
        ul_lanes: 12,
        // NPUSCH format 2 (HARQ-ACK): one RU of 4 slots at 15 kHz = 2 ms (TS 36.211 §10.1.2.3).
        ack_sf: 2,
        // TS 36.213 §16.4.1: NPDSCH starts at least 5 subframes after the DCI's last subframe
        // n (n + 5): 4 subframes between. §16.5.1: NPUSCH after the end of subframe n + k0,
        // k0 ≥ 8 (Table 16.5.1-1: 8, 16, 32, 64): 8 subframes between.
        gap_dci_dl: 4,
        gap_dci_ul: 8,
        // §16.4.2: HARQ-ACK starts at n + 13 (k0 = 13) after NPDSCH ends in n: 12 between.
        gap_dl_ack: 12,
        // A device needs 3 subframes after its uplink before it monitors NPDCCH again
        // (the 26-ms peak cycle: 1 + 4 + 4 + 12 + 2 + 3).
        gap_after_ul: 3,
        // TS 36.321 §5.1.4: the RA response window starts 4 subframes after the preamble ends.
        gap_rar: 4,
        // TS 36.213 §16.3.3: Msg3 at n + k0, k0 = 12 (smallest of Table 16.3.3-1).
        gap_msg3: 12,
        anchor: true,
        // SIB1-NB with 16 repetitions (schedulingInfoSIB1 2, 5, 8 or 11, TS 36.213 Table
        // 16.4.1.3-3): assumed — the cell serves the 164-dB level 2, and SIB1-NB must reach
        // it, so it repeats the most the table allows. Cell id 0 (assumed): SIB1-NB starts in
        // even frames.
        sib1_reps: 16,
        cell_id: 0,
        sr_period: None,
        // TR 45.820 / TS 36.300 §23.21: NB-IoT's 164 dB maximum coupling loss.
        max_coupling_loss_db: 164.0,
        // 43 dBm standalone NB-IoT carrier (TR 45.820 §7.2 evaluation) over 12 subcarriers:
        // 43 − 10·log10(12) = 32.2 dBm per subcarrier.
        rs_power_dbm: 43.0 - 10.791_812_460_476_25,
    }
}

/// NB-IoT Rel-14, category NB2: larger transport blocks (TS 36.306 §4.1C: 2536 bits both
/// ways), one HARQ process modelled (the second is not), otherwise as NB1.
pub fn nb2() -> Numerology {
    Numerology {
        name: "nb2",
        max_dl_tbs: 2536,
        max_ul_tbs: 2536,
        ..nb1()
    }
}

/// LTE-M Cat-M1, 1.4 MHz narrowband of 6 PRBs, HD-FDD; levels 0 and 1 in CE mode A, level 2
/// in CE mode B.
pub fn m1() -> Numerology {
    Numerology {
        name: "m1",
        tbs: TbsTable::LteM,
        // TS 36.306 §4.1A: Cat-M1 1000 bits per transport block.
        max_dl_tbs: 1000,
        max_ul_tbs: 1000,
        dl_itbs: [9, 4, 1],
        ul_itbs: [9, 4, 1],
        // PRACH every 10 ms at level 0 (prach-ConfigurationIndex 3, TS 36.211 Table 5.7.1-2),
        // 40 and 80 ms at levels 1 and 2 (prach-StartingSubframe-r13), numRepetitionPerPreamble
        // Attempt 1, 8, 32 (assumed commercial configuration, docs/networks.md).
        prach_period: [10, 40, 80],
        prach_offset: [1, 1, 1],
        prach_reps: [1, 8, 32],
        // Preamble format 0: 1 ms (TS 36.211 Table 5.7.1-1).
        preamble_us: 1000,
        preambles: [48, 8, 8],
        // mpdcch-NumRepetition 2, 16, 64 (assumed); one DCI with Rmax/2 (Rmax/4 at 1).
        pdcch_rmax: [2, 16, 64],
        dci_reps: [1, 4, 32],
        pdsch_reps: [1, 4, 32],
        pusch_reps: [1, 4, 32],
        ack_reps: [1, 4, 32],
        ul_tones: [1, 1, 1],
        ru_sf: [1, 1, 1],
        ul_lanes: 1,
        // PUCCH format 1a: 1 subframe.
        ack_sf: 1,
        // TS 36.213 §7.1.11: PDSCH starts 2 subframes after the MPDCCH ends (n + 2); §8.0:
        // PUSCH at n + 4; §10.2: HARQ-ACK at n + 4; HD-FDD guard subframe (TS 36.211 §6.2.5).
        gap_dci_dl: 1,
        gap_dci_ul: 3,
        gap_dl_ack: 3,
        gap_after_ul: 1,
        // TS 36.321 §5.1.4: RA response window from the preamble end + 3 subframes.
        gap_rar: 3,
        // TS 36.213 §6.1.1: Msg3 at n + k1, k1 ≥ 6.
        gap_msg3: 5,
        anchor: false,
        sib1_reps: 0,
        cell_id: 0,
        // SR on PUCCH every 10 ms (sr-ConfigIndex, TS 36.213 Table 10.1.5-1; assumed).
        sr_period: Some(10),
        // TR 36.888 / TS 36.300: LTE-M's 155.7 dB maximum coupling loss (CE mode B).
        max_coupling_loss_db: 155.7,
        // 46 dBm over a 10 MHz LTE carrier's 600 subcarriers: 46 − 27.8 = 18.2 dBm.
        rs_power_dbm: 46.0 - 27.781_512_503_836_44,
    }
}

impl Numerology {
    /// The category of `name`, `None` if there is none.
    pub fn of(name: &str) -> Option<Numerology> {
        match name {
            "nb1" => Some(nb1()),
            "nb2" => Some(nb2()),
            "m1" => Some(m1()),
            _ => None,
        }
    }

    /// A transport block for up to `bits` at `level`, downlink or uplink: (its size in bits,
    /// its subframes on the air before repetitions).
    pub fn block(&self, bits: u32, level: usize, downlink: bool) -> (u32, u64) {
        let (itbs, max) = if downlink {
            (self.dl_itbs[level], self.max_dl_tbs)
        } else {
            (self.ul_itbs[level], self.max_ul_tbs)
        };
        match self.tbs {
            TbsTable::NbIot => {
                let unit = if downlink { 1 } else { self.ru_sf[level] };
                let row = &NB_TBS[itbs];
                // The smallest allocation that carries `bits`, else the largest allowed.
                let mut best = (0, 0);
                for (i, &t) in row.iter().enumerate() {
                    if t == 0 || t > max {
                        break;
                    }
                    best = (t, u64::from(NB_UNITS[i]) * unit);
                    if t >= bits {
                        break;
                    }
                }
                // nb2's 2536-bit blocks lie beyond Table 16.4.1.5.1-1's rows 0–12: Rel-14 row
                // 13, N_SF = 10 carries 2536 bits (TS 36.213 Table 16.4.1.5.1-1, Rel-14).
                if bits > best.0 && max >= 2536 && level == 0 {
                    return (2536, 10 * unit);
                }
                best
            }
            TbsTable::LteM => (M1_TBS_6PRB[itbs].min(max), 1),
        }
    }

    /// Whether downlink subframe `sf` (ms since time zero, frame = sf / 10) is a valid NB-IoT
    /// DL subframe, one that can carry NPDCCH / NPDSCH (TS 36.213 §16.4: not one with NPSS,
    /// NSSS, NPBCH or SIB1-NB; also TS 36.101 Table A.2.4-1, note 4): on the NB-IoT anchor
    /// carrier subframe 0 carries NPBCH, subframe 5 NPSS, subframe 9 of even frames NSSS
    /// (TS 36.211 §10.2.7, §10.2.8), and subframe 4 of SIB1-NB's frames SIB1-NB
    /// ([`Numerology::sib1_frame`]). SI messages (SIB2-NB …) are not modelled.
    pub fn dl_valid(&self, sf: u64) -> bool {
        if !self.anchor {
            return true;
        }
        let (frame, sub) = (sf / 10, sf % 10);
        !(sub == 0
            || sub == 5
            || (sub == 9 && frame % 2 == 0)
            || (sub == 4 && self.sib1_frame(frame)))
    }

    /// Whether frame `frame` carries SIB1-NB (in its subframe 4). TS 36.213 §16.4.1.3: each of
    /// the `sib1_reps` repetitions in the 256-frame (2560 ms) period is sent in subframe 4 of
    /// every other frame of 16 consecutive frames, the repetitions equally spaced over the
    /// period (256 / `sib1_reps` frames apart), the first one starting in the frame Table
    /// 16.4.1.3-4 gives: 4 repetitions: N_ID mod 4 = 0, 1, 2, 3 → frame 0, 16, 32, 48; 8:
    /// N_ID mod 2 = 0, 1 → 0, 16; 16: N_ID mod 2 = 0, 1 → 0, 1. With 16 repetitions the
    /// 16-frame blocks fill the period: every other frame.
    pub fn sib1_frame(&self, frame: u64) -> bool {
        let first = match self.sib1_reps {
            4 => (self.cell_id % 4) * 16,
            8 => (self.cell_id % 2) * 16,
            16 => self.cell_id % 2,
            _ => return false,
        };
        let spacing = 256 / self.sib1_reps;
        let f = (frame % 256 + 256 - first) % 256;
        f % spacing < 16 && f.is_multiple_of(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TS 36.213 Table 16.4.1.5.1-1, I_TBS 10: 680 bits in 4 subframes (the NB1 peak block);
    /// 100 bits in row 10 fit the first column (144 bits, 1 subframe). Uplink at level 2
    /// (I_TBS 1, single tone 8 ms per RU): 100 bits need 144 bits = 4 RUs = 32 ms.
    #[test]
    fn blocks_come_from_the_table_rows() {
        let n = nb1();
        assert_eq!(n.block(680, 0, true), (680, 4));
        assert_eq!(n.block(5000, 0, true), (680, 4));
        assert_eq!(n.block(100, 0, true), (144, 1));
        assert_eq!(n.block(100, 2, false), (144, 32));
        assert_eq!(nb2().block(5000, 0, true), (2536, 10));
        assert_eq!(m1().block(5000, 0, true), (936, 1));
    }

    /// Frames 0 and 1 with SIB1-NB's 16 repetitions in cell 0 (even frames): subframes 0
    /// (NPBCH), 4 (SIB1-NB, frame 0 even), 5 (NPSS), 9 (NSSS, frame 0 even), 10, 15 are taken;
    /// 14 and 19 (frame 1, odd) are free: 6 of 20. Without SIB1-NB, 5 of 20.
    #[test]
    fn the_anchor_carrier_loses_six_of_twenty_subframes() {
        let n = nb1();
        let taken: Vec<u64> = (0..20).filter(|&s| !n.dl_valid(s)).collect();
        assert_eq!(taken, vec![0, 4, 5, 9, 10, 15]);
        let no_sib1 = Numerology {
            sib1_reps: 0,
            ..nb1()
        };
        let taken: Vec<u64> = (0..20).filter(|&s| !no_sib1.dl_valid(s)).collect();
        assert_eq!(taken, vec![0, 5, 9, 10, 15]);
        assert!((0..20).all(|s| m1().dl_valid(s)));
    }

    /// TS 36.213 §16.4.1.3 / Table 16.4.1.3-4, by hand:
    /// - 16 repetitions, cell 1 (odd): frames 1, 3, …, 255 carry SIB1-NB, 0, 2, … do not; in
    ///   frame 257 (= 1 of the next period) again.
    /// - 8 repetitions, cell 1: start frame 16, 256 / 8 = 32 frames apart: frames 16, 18, …, 30
    ///   (16 frames from 16, every other one), not 32 (next block starts at 48), 48 yes.
    /// - 4 repetitions, cell 3: start frame 48, 64 apart: 48 … 62 and 112 … 126; not 64.
    #[test]
    fn sib1_nb_frames_follow_the_cell_id_and_repetitions() {
        let with = |reps, cell_id| Numerology {
            sib1_reps: reps,
            cell_id,
            ..nb1()
        };
        let n = with(16, 1);
        assert!(n.sib1_frame(1) && n.sib1_frame(255) && n.sib1_frame(257));
        assert!(!n.sib1_frame(0) && !n.sib1_frame(2) && !n.sib1_frame(256));
        let n = with(8, 1);
        let frames: Vec<u64> = (0..64).filter(|&f| n.sib1_frame(f)).collect();
        assert_eq!(
            frames,
            vec![16, 18, 20, 22, 24, 26, 28, 30, 48, 50, 52, 54, 56, 58, 60, 62]
        );
        let n = with(4, 3);
        let frames: Vec<u64> = (0..128).filter(|&f| n.sib1_frame(f)).collect();
        assert_eq!(
            frames,
            vec![48, 50, 52, 54, 56, 58, 60, 62, 112, 114, 116, 118, 120, 122, 124, 126]
        );
        // An unsupported repetition count (the MIB-NB's values 12–15 are spare) carries none.
        assert!(!with(5, 0).sib1_frame(0));
    }
}
