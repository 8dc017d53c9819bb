//! A lone device and two devices on a cell, subframe by subframe, with the expected times
//! worked out by hand from the numerology (`numerology.rs`) in the comments. The NB-IoT anchor
//! carrier's unusable downlink subframes are 0 and 5 of every frame and 9 of even frames
//! (frame = ms / 10).

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{Duration, Instant};

use super::carrier::Carrier;
use super::numerology::{m1, nb1, nb2, Numerology};
use super::procedures::{peak_downlink_kbps, ProcCounters, Procs, Radio};
use super::{Cell, CellOutcome, CellParams};
use crate::net::event::{NetEvent, Scheduler};

#[derive(Default)]
pub(super) struct Q(Vec<(Instant, NetEvent)>);

impl Scheduler for Q {
    fn schedule_net(&mut self, at: Instant, event: NetEvent) {
        self.0.push((at, event));
    }
}

pub(super) fn params(levels: Vec<u8>) -> CellParams {
    CellParams {
        num: nb1(),
        levels,
        resume: false,
        rai: false,
        psm: false,
        t3324: Duration::from_secs(60),
        t3412: Duration::from_secs(3240),
        idle_cycle_ms: 2560,
        inactivity: Duration::from_secs(20),
        cdrx_cycle_ms: 2048,
        drx_inactivity_ms: 400,
        nat_timeout: None,
        bler: [0.0; 3],
        ra_attempts_per_level: 4,
        ra_backoff_ms: 256,
    }
}

/// Runs the cell's events due by `until` in time order; the packets that left the cell, with
/// when.
pub(super) fn run(cell: &mut Cell, q: &mut Q, until: Instant, exits: &mut Vec<(u32, u64)>) {
    loop {
        let Some(i) = (0..q.0.len())
            .filter(|&i| q.0[i].0 <= until)
            .min_by_key(|&i| (q.0[i].0, i))
        else {
            return;
        };
        let (t, ev) = q.0.remove(i);
        let NetEvent::Cell(_, ev) = ev else {
            panic!("not a cell event")
        };
        if let CellOutcome::Exit(p) = cell.handle(t, ev, q) {
            exits.push((p, t.nanos() / 1_000_000));
        }
    }
}

fn ms(t: u64) -> Instant {
    Instant::from_millis(t)
}

/// One device at level 0 sends 100 IP bytes at t = 0 from idle (data over NAS, in Msg5):
///
/// - NPRACH: first level-0 occasion 8 ms (offset 8, period 640); 2 × 6.4 = 12.8 → 13
///   subframes: 8–21.
/// - Msg2: window from 21 + 4 = 25; 25 is NPSS → DCI (1 sf) at 26; NPDSCH from 26 + 1 + 4 =
///   31: the 56-bit RAR in row I_TBS 10's 144-bit block, 1 sf: 31–32.
/// - Msg3: 32 + 12 = 44, 88 bits → 144 bits × 1 RU of 1 ms (12 tones): 44–45.
/// - Msg4: from 45 + 3 = 48: DCI 48; NPDSCH from 53: 160 bits → 328-bit block, 2 sf: 53–55;
///   HARQ-ACK from 55 + 12 = 67, 2 ms × 2 repetitions: 67–71; then 71 + 3 = 74.
/// - Msg5: 800 + 40 (L2) + 160 (RRC/NAS) = 1000 bits → one 1000-bit block of 6 RUs: DCI 74,
///   NPUSCH from 75 + 8 = 83: 83–89. The packet leaves the cell at 89 ms.
///
/// The response (60 IP bytes) reaches the cell at 269 ms; the device is still awake (last
/// activity 89 + 3 = 92, DRX sleep from 92 + 400 = 492). 480 + 40 = 520 bits → the 680-bit
/// block, 4 sf. DCI: 269 (frame 26, even: NSSS) and 270 (NPBCH) unusable → 271; NPDSCH from
/// 276: 276–279 usable (279 is subframe 9 of odd frame 27) → ends 280: delivered at 280.
/// Then without traffic the inactivity timer (20 s) releases it from the end of its HARQ-ACK
/// (280 + 12 = 292, 4 sf: 296, + 3 = 299): at 20.299 s.
#[test]
fn a_lone_device_at_level_0_subframe_by_subframe() {
    let mut cell = Cell::new(params(vec![0]), 0, Xoshiro256pp::seed_from_u64(1));
    let mut q = Q::default();
    let mut exits = Vec::new();
    assert_eq!(
        cell.enter(ms(0), 7, 100, Some(0), None, &mut q),
        CellOutcome::Nothing
    );
    run(&mut cell, &mut q, ms(269), &mut exits);
    assert_eq!(exits, vec![(7, 89)]);
    cell.enter(ms(269), 8, 60, None, Some(0), &mut q);
    run(&mut cell, &mut q, ms(100_000), &mut exits);
    assert_eq!(exits, vec![(7, 89), (8, 280)]);
    let c = cell.counters();
    assert_eq!(
        (c.ra_attempts, c.rrc_setups, c.releases_inactivity),
        (1, 1, 1)
    );
    assert_eq!(c.releases_rai, 0);
}

/// A lone level-0 device's first exchange: a 100-byte request at 0 (it leaves at 89 ms) and
/// its 60-byte response at 269 (delivered at 280), the cell run to `until` ms.
fn one_exchange(p: CellParams, until: u64) -> (Cell, Q, Vec<(u32, u64)>) {
    let mut cell = Cell::new(p, 0, Xoshiro256pp::seed_from_u64(1));
    let mut q = Q::default();
    let mut exits = Vec::new();
    cell.enter(ms(0), 7, 100, Some(0), None, &mut q);
    run(&mut cell, &mut q, ms(269), &mut exits);
    cell.enter(ms(269), 8, 60, None, Some(0), &mut q);
    run(&mut cell, &mut q, ms(until), &mut exits);
    (cell, q, exits)
}

/// One ping of a connected NB-IoT device at level 0, step by step (the calibration figure
/// `ping-good-coverage-nbiot`, docs/networks.md "Calibration"). The device connected for a
/// first 100-byte packet at 0 (the lone-device times above: free at 299 ms); the next
/// 100-byte request comes at 1000 ms, connected. Rel-13/14 NB-IoT has no scheduling request:
/// a connected device with new data and no grant starts random access (TS 36.321 §5.4.4,
/// §5.4.5), its Msg3 carrying the C-RNTI and a BSR MAC CE, and the eNB's grant addressed to
/// the C-RNTI ends contention resolution (TS 36.321 §5.1.5) — no Msg4, no Msg5 header:
///
/// - NPRACH: the next occasion k·640 + 8 at or after 1000 (TS 36.211 §10.1.6.1,
///   `nprach-Periodicity` 640 ms of the field SIB2-NB): 2·640 + 8 = 1288; 13 subframes:
///   1288–1301. 1280 is a multiple of the 20-ms broadcast pattern, so the RAR and Msg3 repeat
///   the lone device's times + 1280: Msg2 DCI 1306, NPDSCH 1311–1312; Msg3 1324–1325.
/// - Grant from 1325 + 3 = 1328: DCI 1328; NPUSCH from 1329 + 8 = 1337 (TS 36.213 §16.5.1,
///   k0 = 8): 800 + 40 (L2) = 840 bits → I_TBS 10's 872-bit block, 5 RUs of 1 ms on 12
///   tones: 1337–1342. The request leaves the cell at 1342.
/// - Core and path, 2 × (40 + 50) = 180 ms: the 60-byte response reaches the cell at 1522.
///   520 bits → the 680-bit block, 4 subframes: DCI 1522 (frame 152, subframe 2); NPDSCH from
///   1527 on 1527, 1528, 1531, 1532 (1529: NSSS of even frame 152, 1530: NPBCH): delivered at
///   1533.
///
/// RTT 1533 − 1000 = 533 ms: 288 ms waiting for the NPRACH occasion, 54 ms of random access,
/// Msg3, grant and NPUSCH, 180 ms of core and path, 11 ms of downlink. With the shortest
/// period TS 36.331 allows (`nprach-Periodicity-r13` ms40) the occasion is 25·40 + 8 = 1008:
/// everything 280 ms earlier (1280 − 1000 = 280 is again a multiple of 20): the request
/// leaves at 1062, the response comes at 1242: DCI 1242, NPDSCH 1247, 1248, 1251, 1252 (1249
/// NSSS of even frame 124, 1250 NPBCH): delivered at 1253, RTT 253 ms — still above the
/// published 185–207 ms with the 180 ms of core and path: the radio alone takes 73 ms.
#[test]
fn a_connected_ping_at_level_0_step_by_step() {
    for (period, exit, delivered) in [(640, 1342, 1533), (40, 1062, 1253)] {
        let mut p = params(vec![0]);
        p.num.prach_period[0] = period;
        let (mut cell, mut q, mut exits) = one_exchange(p, 1000);
        assert_eq!(exits, vec![(7, 89), (8, 280)], "period {period}");
        cell.enter(ms(1000), 9, 100, Some(0), None, &mut q);
        run(&mut cell, &mut q, ms(exit + 180), &mut exits);
        assert_eq!(exits[2], (9, exit), "period {period}");
        cell.enter(ms(exit + 180), 10, 60, None, Some(0), &mut q);
        run(&mut cell, &mut q, ms(100_000), &mut exits);
        assert_eq!(exits[3], (10, delivered), "period {period}");
        let c = cell.counters();
        assert_eq!((c.ra_attempts, c.rrc_setups), (2, 1), "period {period}");
    }
}

/// Two uplink packets of a connected NB-IoT device: the second in the buffer status report
/// of the first. The device of the ping above (connected by a first packet at 0, its
/// response at 269); at 1000 ms two 100-byte packets enter together. The first goes as the
/// ping's request: random access at 1288, the grant's DCI on 1328 (ends 1329: the device
/// builds the MAC PDU then, its BSR MAC CE reporting the second packet, TS 36.321 §5.4.5),
/// NPUSCH 1337–1342: it leaves at 1342; the device is free at 1342 + 3 = 1345. The eNB
/// grants the reported data without a new random access: DCI at the first valid NB-IoT
/// downlink subframe from 1345 — 1345 is NPSS (subframe 5) — so 1346, ending 1347; NPUSCH
/// from 1347 + 8 = 1355 (TS 36.213 §16.5.1, k0 = 8), 5 RUs of 1 ms: 1355–1360, it leaves at
/// 1360. A packet entering at 1330, after the PDU was built, was not reported: it needs its
/// own random access at the next occasion from 1345, 3·640 + 8 = 1928; 1920 is a multiple
/// of the 20-ms broadcast pattern, so it repeats the ping's sequence + 640: NPUSCH 1977–1982,
/// it leaves at 1982.
#[test]
fn a_packet_in_the_buffer_status_report_is_granted_without_random_access() {
    for (second_at, second_exit, ra, bsr) in [(1000, 1360, 2, 1), (1330, 1982, 3, 0)] {
        let (mut cell, mut q, mut exits) = one_exchange(params(vec![0]), 1000);
        cell.enter(ms(1000), 9, 100, Some(0), None, &mut q);
        run(&mut cell, &mut q, ms(second_at), &mut exits);
        cell.enter(ms(second_at), 10, 100, Some(0), None, &mut q);
        run(&mut cell, &mut q, ms(10_000), &mut exits);
        assert_eq!(
            exits[2..],
            [(9, 1342), (10, second_exit)],
            "second packet at {second_at}"
        );
        let c = cell.counters();
        assert_eq!(
            (c.ra_attempts, c.bsr_grants),
            (ra, bsr),
            "second packet at {second_at}"
        );
    }
}

/// A downlink packet at 100 ms to an idle device (device 0: paging occasion in subframe 9 of
/// frame 0 of each 2.56-s cycle, 2569 ms): paging DCI at 2571 (2569 is NSSS of even frame
/// 256, 2570 NPBCH), NPDSCH 2576. Random access waits for the next occasion: 3208 (5·640 +
/// 8). 3200 is a multiple of the 20-ms broadcast pattern, so the set-up repeats the
/// lone-device times + 3200: Msg4 HARQ-ACK ends 3271, Msg5 grantable from 3274. Msg5 (the
/// service request, 160 bits → 328-bit block, 2 RUs): DCI 3274, NPUSCH 3283–3285, + 3 = 3288.
/// The data (520 bits → 680-bit block, 4 sf): DCI 3288, NPDSCH 3293, 3294, 3296, 3297 (3295
/// NPSS): delivered at 3298 ms.
#[test]
fn a_downlink_to_an_idle_device_waits_for_paging_and_set_up() {
    let mut cell = Cell::new(params(vec![0]), 0, Xoshiro256pp::seed_from_u64(1));
    let mut q = Q::default();
    let mut exits = Vec::new();
    cell.enter(ms(100), 8, 60, None, Some(0), &mut q);
    run(&mut cell, &mut q, ms(10_000), &mut exits);
    assert_eq!(exits, vec![(8, 3298)]);
    assert_eq!(
        (cell.counters().pagings, cell.counters().rrc_setups),
        (1, 1)
    );
}

/// LTE-M (Cat-M1) at level 0, 100 bytes from idle at t = 0: PRACH at 1 (period 10, offset 1),
/// 1 ms; RAR window from 2 + 3 = 5: MPDCCH 5, PDSCH 7 (n + 2); Msg3 at 8 + 5 = 13; Msg4 from
/// 14 + 1 = 15: MPDCCH 15, PDSCH 17, HARQ-ACK 18 + 3 = 21, then 22 + 1 = 23; Msg5: 1000 bits in
/// 936-bit blocks (I_TBS 9, 6 PRBs, one subframe): MPDCCH 23, PUSCH 27 (n + 4), + 1 = 29;
/// MPDCCH 29, PUSCH 33: the packet leaves at 34 ms.
#[test]
fn a_lone_ltem_device_at_level_0() {
    let mut p = params(vec![0]);
    p.num = m1();
    let mut cell = Cell::new(p, 0, Xoshiro256pp::seed_from_u64(1));
    let mut q = Q::default();
    let mut exits = Vec::new();
    cell.enter(ms(0), 7, 100, Some(0), None, &mut q);
    run(&mut cell, &mut q, ms(1000), &mut exits);
    assert_eq!(exits, vec![(7, 34)]);
}

/// The same device at level 1 (e.g. 144 dB): offset 64, 8 repetitions = 51.2 → 52 sf:
/// 64–116. Msg2 window from 120 (NPBCH) → DCI of 4 sf on 121, 122, 123, 126 (124: SIB1-NB of
/// even frame 12, 125 NPSS): end 127; NPDSCH from 131: 56 bits → I_TBS 4's 56-bit block, 1 sf
/// × 4 repetitions on 131–134 (odd frame 13): end 135. Msg3 from 147: 88 bits → 120 bits, 2
/// RUs of 4 ms (3 tones) × 4 repetitions = 32 sf: 147–179. Msg4 from 182: DCI 182, 183, 186,
/// 187 (184 SIB1-NB, 185 NPSS): end 188; NPDSCH from 192: 208-bit block, 3 sf × 4 = 12 valid
/// subframes: 192–194, 196–199, 201–203, 206, 207 (195 NPSS, 199 is subframe 9 of odd frame
/// 19, 200 NPBCH, 204 SIB1-NB of even frame 20, 205 NPSS): end 208; HARQ-ACK from 220: 2 ms ×
/// 8 = 16: 220–236; then 239. Msg5: 1000 bits → 680 (10 RUs × 4 ms × 4 = 160 sf) + 320 → 328
/// bits (5 RUs: 80 sf). Block 1: DCI 239, 241–243 (240 NPBCH), NPUSCH 252–412; block 2: DCI
/// from 415 (NPSS): 416–419, NPUSCH from 428: 428–508. The packet leaves at 508 ms (503
/// without SIB1-NB's subframes).
#[test]
fn a_lone_device_at_level_1_subframe_by_subframe() {
    let mut cell = Cell::new(params(vec![1]), 0, Xoshiro256pp::seed_from_u64(1));
    let mut q = Q::default();
    let mut exits = Vec::new();
    cell.enter(ms(0), 7, 100, Some(0), None, &mut q);
    run(&mut cell, &mut q, ms(1000), &mut exits);
    assert_eq!(exits, vec![(7, 508)]);
}

/// Level 2 (164 dB): the exchange is much slower than at level 0 — its preamble alone is
/// 32 × 6.4 = 204.8 → 205 sf from the 128-ms offset: Msg2 cannot start before 128 + 205 + 4
/// = 337 ms, and every message repeats 32–64 times. A 100-byte report leaves after more than
/// 2 s (the DCI of 64 usable subframes alone spans 64 × 20 / 15 ≈ 85 ms each time), but within
/// the 10 s of 3GPP's exception-report target (TR 45.820 §7.3).
#[test]
fn a_device_at_level_2_is_slow_but_within_ten_seconds() {
    let mut cell = Cell::new(params(vec![2]), 0, Xoshiro256pp::seed_from_u64(1));
    let mut q = Q::default();
    let mut exits = Vec::new();
    cell.enter(ms(0), 7, 100, Some(0), None, &mut q);
    run(&mut cell, &mut q, ms(20_000), &mut exits);
    let (_, t) = exits[0];
    println!("a 100-byte report at level 2 leaves the cell at {t} ms");
    assert!(t > 2000 && t < 10_000, "{t}");
}

/// Release assistance: the connection ends right after the response's HARQ-ACK (299 ms in the
/// level-0 test above) instead of 20 s later: the release message (DCI at 299, usable:
/// subframe 9 of odd frame 29; 160 bits → 2 sf from 304: 306 and 307 (304 SIB1-NB of even
/// frame 30, 305 NPSS), ends 308; HARQ-ACK 320–324, + 3 = 327) puts the device in idle at
/// 327 ms.
#[test]
fn release_assistance_ends_the_connection_after_the_response() {
    let mut p = params(vec![0]);
    p.rai = true;
    let (cell, _, exits) = one_exchange(p, 100_000);
    assert_eq!(exits, vec![(7, 89), (8, 280)]);
    let c = cell.counters();
    assert_eq!((c.releases_rai, c.releases_inactivity), (1, 0));
    let t = cell.state_times(ms(1000))[0];
    use crate::energy::RadioState;
    // Connected 0–327 ms, idle from then (no paging occasion before 1 s: the device's is at
    // 9 ms of each 2.56-s cycle, and 2569 > 1000).
    assert_eq!(
        t.get(RadioState::IdleDrx),
        Duration::from_millis(1000 - 327)
    );
    assert_eq!(t.total(), Duration::from_secs(1));
}

/// Two level-0 devices send at t = 0: device 0 gets the sequence of the lone-device test
/// (leaves at 89 ms); device 1 is scheduled around it: its RAR DCI waits for 27 (26 is
/// taken), RAR 32–33, Msg3 45–46, Msg4 DCI 51 (49 NSSS, 50 NPBCH), NPDSCH 56–58, HARQ-ACK
/// 70–74 on another subcarrier, Msg5 DCI 77, and its 12-tone NPUSCH from 86 waits for device
/// 0's (83–89): 89–95. Device 1 leaves at 95 ms instead of 89.
#[test]
fn two_devices_delay_each_other_on_the_carrier() {
    let mut cell = Cell::new(params(vec![0, 0]), 0, Xoshiro256pp::seed_from_u64(3));
    let mut q = Q::default();
    let mut exits = Vec::new();
    cell.enter(ms(0), 7, 100, Some(0), None, &mut q);
    cell.enter(ms(0), 8, 100, Some(1), None, &mut q);
    run(&mut cell, &mut q, ms(1000), &mut exits);
    // Precondition: the two preambles (one of 24 each) did not collide with this seed.
    assert_eq!(cell.counters().ra_collisions, 0);
    exits.sort();
    assert_eq!(exits, vec![(7, 89), (8, 95)]);
}

/// PSM: the uplink job ends at 92 ms (89 + 3), the inactivity timer releases the device at
/// 20.092 s: release DCI 20092, NPDSCH 20097–20099, HARQ-ACK 20111–20115, + 3: idle from
/// 20.118 s; with T3324 = 1 s in PSM from 21.118 s: 8.882 s of PSM by 30 s. A downlink packet
/// at 30 s is held in the core; it is delivered only after the device's next uplink (at 40 s), not at
/// any paging occasion in between.
#[test]
fn a_psm_device_is_unreachable_until_its_next_uplink() {
    let mut p = params(vec![0]);
    p.psm = true;
    p.t3324 = Duration::from_secs(1);
    let mut cell = Cell::new(p, 0, Xoshiro256pp::seed_from_u64(1));
    let mut q = Q::default();
    let mut exits = Vec::new();
    cell.enter(ms(0), 7, 100, Some(0), None, &mut q);
    run(&mut cell, &mut q, ms(30_000), &mut exits);
    cell.enter(ms(30_000), 8, 60, None, Some(0), &mut q);
    run(&mut cell, &mut q, ms(40_000), &mut exits);
    assert_eq!(exits, vec![(7, 89)]);
    assert_eq!(cell.counters().psm_buffered, 1);
    use crate::energy::RadioState;
    let t = cell.state_times(ms(30_000))[0];
    assert_eq!(
        t.get(RadioState::Psm),
        Duration::from_millis(30_000 - 21_118)
    );
    cell.enter(ms(40_000), 9, 100, Some(0), None, &mut q);
    run(&mut cell, &mut q, ms(100_000), &mut exits);
    assert_eq!(exits.len(), 3);
    assert_eq!(exits[1].0, 9);
    assert_eq!(exits[2].0, 8);
    assert!(exits[2].1 > exits[1].1);
}

/// NB1's downlink peak with one HARQ process (no repetitions, one HARQ-ACK of 2 ms): each
/// 680-bit block takes DCI 1 + gap 4 + NPDSCH 4 + gap 12 + ACK 2 + gap 3 = 26 ms: 680 / 26 =
/// 26.15 kbit/s, on a carrier without broadcast subframes. NB2's 2536-bit block on 10
/// subframes: 1 + 4 + 10 + 12 + 2 + 3 = 32 ms: 79.25 kbit/s.
#[test]
fn peak_downlink_rates_follow_from_the_timing() {
    assert!((peak_downlink_kbps(&nb1(), false, 100) - 680.0 / 26.0).abs() < 1e-9);
    assert!((peak_downlink_kbps(&nb2(), false, 100) - 2536.0 / 32.0).abs() < 1e-9);
}

fn procs_on<'a>(
    num: &'a Numerology,
    carrier: &'a mut Carrier,
    occasions: &'a mut std::collections::BTreeMap<(u64, u8), Vec<u32>>,
    rng: &'a mut Xoshiro256pp,
    counters: &'a mut ProcCounters,
) -> Procs<'a> {
    Procs {
        num,
        carrier,
        occasions,
        bler: [0.0; 3],
        ra_attempts_per_level: 4,
        ra_backoff_ms: 0,
        rng,
        counters,
        timeline: None,
    }
}

/// On the anchor carrier (subframes 0, 5 of every frame, 9 and — SIB1-NB, TS 36.213
/// §16.4.1.3 — 4 of even frames invalid), three 680-bit blocks from subframe 1 (subframe 0
/// booked), one HARQ-ACK repetition:
/// - block 1: DCI 1; NPDSCH from 1 + 1 + 4 = 6 on 6, 7, 8, 11 (9 NSSS, 10 NPBCH): ends 12;
///   HARQ-ACK 12 + 12 = 24 – 26; next DCI from 26 + 3 = 29;
/// - block 2: 29 (NSSS of even frame 2), 30 (NPBCH) → DCI 31; NPDSCH from 36 on 36–39 (frame
///   3 odd: 39 valid): ends 40; HARQ-ACK 52 – 54; next from 57;
/// - block 3: DCI 57; NPDSCH from 62 on 62, 63, 66, 67 (64: SIB1-NB of even frame 6, 65 NPSS):
///   ends 68 — delivered; HARQ-ACK 80 – 82; free at 85.
///
/// Without SIB1-NB block 3 takes 62, 63, 64, 66 (ends 67) and the device is free at 84.
#[test]
fn npdsch_is_postponed_past_sib1_nb_subframes() {
    let mut num = nb1();
    num.ack_reps = [1, 1, 1];
    let (mut occasions, mut counters) = (Default::default(), ProcCounters::default());
    let mut rng = Xoshiro256pp::seed_from_u64(0);
    let mut carrier = Carrier::new(12);
    carrier.book_dl(0, 1, |_| true);
    let mut p = procs_on(&num, &mut carrier, &mut occasions, &mut rng, &mut counters);
    assert_eq!(p.downlink(1, 3 * 680, 0, &mut Radio::default()), (68, 85));
    num.sib1_reps = 0;
    let mut carrier = Carrier::new(12);
    carrier.book_dl(0, 1, |_| true);
    let mut p = procs_on(&num, &mut carrier, &mut occasions, &mut rng, &mut counters);
    assert_eq!(p.downlink(1, 3 * 680, 0, &mut Radio::default()), (67, 84));
}

/// NB2's published one-HARQ peak, "about 72 kbit/s", derived by hand from the standard's
/// rule with the anchor's NPBCH (subframe 0), NPSS (5) and NSSS (9 of even frames) only —
/// the subframes the published derivations take (TS 36.211 §10.2.7–10.2.8, TS 36.213 §16.4):
/// from subframe 0, one HARQ-ACK repetition, 2536-bit blocks on 10 NPDSCH subframes:
/// - block 1: DCI 1 (0 is NPBCH); NPDSCH from 1 + 1 + 4 = 6 on 6, 7, 8, 11–14, 16–18 (9 NSSS,
///   10 NPBCH, 15 NPSS): ends 19; HARQ-ACK 19 + 12 = 31 – 33; next DCI from 33 + 3 = 36;
/// - block 2: DCI 36; NPDSCH from 41 on 41–44, 46–48, 51–53 (45 NPSS, 49 NSSS of even frame
///   4, 50 NPBCH): ends 54; HARQ-ACK 66 – 68; next from 71;
/// - block 3: DCI 71; NPDSCH from 76 on 76–79, 81–84, 86, 87 (frame 7 odd: 79 valid; 80
///   NPBCH, 85 NPSS): ends 88 — delivered; HARQ-ACK 100 – 102; free at 105.
///
/// 3 × 2536 bits / 105 ms = 72.46 kbit/s: the published ≈ 72 (± 2 %). With SIB1-NB (the
/// model's 16 repetitions) subframes 4 and 14 of even frames go too, and the rate is lower.
#[test]
fn nb2_peak_without_sib1_nb_is_the_published_72_kbps() {
    let mut num = nb2();
    num.sib1_reps = 0;
    num.ack_reps = [1, 1, 1];
    let (mut occasions, mut counters) = (Default::default(), ProcCounters::default());
    let mut rng = Xoshiro256pp::seed_from_u64(0);
    let mut carrier = Carrier::new(12);
    let mut p = procs_on(&num, &mut carrier, &mut occasions, &mut rng, &mut counters);
    assert_eq!(p.downlink(0, 3 * 2536, 0, &mut Radio::default()), (88, 105));
    let rate = peak_downlink_kbps(&num, true, 3);
    assert!((rate - 3.0 * 2536.0 / 105.0).abs() < 1e-9);
    assert!((rate / 72.0 - 1.0).abs() <= 0.02);
}

/// The peak rate on the anchor carrier, printed by `cargo test -p coaplab-engine --lib
/// peak_with -- --nocapture` (docs/networks.md "Calibration"). Only the DCI and NPDSCH
/// subframes skip the invalid ones; the gaps (n + 5, the HARQ-ACK's n + 13, the 3 subframes
/// after it) run on absolute subframes (TS 36.213 §16.4.1, §16.4.2), so the rate lies between
/// the bare timing's and three quarters of it.
#[test]
fn peak_with_broadcast_subframes_loses_the_postponed_subframes() {
    let nb1_rate = peak_downlink_kbps(&nb1(), true, 1000);
    let nb2_rate = peak_downlink_kbps(&nb2(), true, 1000);
    println!("nb1 downlink peak on the anchor carrier: {nb1_rate:.2} kbit/s");
    println!("nb2 downlink peak on the anchor carrier: {nb2_rate:.2} kbit/s");
    // How much SIB1-NB's repetitions (an assumed 16, `numerology.rs`) take: none, 4, 8, 16.
    for reps in [0, 4, 8, 16] {
        let rate = |num: Numerology| {
            peak_downlink_kbps(
                &Numerology {
                    sib1_reps: reps,
                    ..num
                },
                true,
                1000,
            )
        };
        println!(
            "  SIB1-NB repetitions {reps:2}: nb1 {:.2}, nb2 {:.2} kbit/s",
            rate(nb1()),
            rate(nb2())
        );
    }
    assert!(nb1_rate < 680.0 / 26.0 && nb1_rate > 680.0 / 26.0 * 0.75);
    assert!(nb2_rate < 2536.0 / 32.0 && nb2_rate > 2536.0 / 32.0 * 0.75);
}

/// The eNB's admission limit (`Cell::set_admission_backlog`): device 0's report at t = 0
/// books the carrier up to its Msg5 NPUSCH, which ends at 89 (the lone level-0 device above).
/// With a limit of 50 subframes, device 1's packet at 0 finds the carrier booked 89 − 0 = 89
/// ahead and is refused (and counted); at 39, 89 − 39 = 50 is not over the limit: admitted.
/// Without a limit (the other tests) nothing is refused.
#[test]
fn the_enb_refuses_packets_while_booked_past_its_admission_limit() {
    use crate::net::common::DropReason;
    let mut cell = Cell::new(params(vec![0, 0]), 0, Xoshiro256pp::seed_from_u64(1));
    cell.set_admission_backlog(Some(50));
    let mut q = Q::default();
    assert_eq!(
        cell.enter(ms(0), 7, 100, Some(0), None, &mut q),
        CellOutcome::Nothing
    );
    assert_eq!(
        cell.enter(ms(0), 8, 100, Some(1), None, &mut q),
        CellOutcome::Dropped(8, DropReason::Rejected)
    );
    assert_eq!(
        cell.enter(ms(39), 9, 100, Some(1), None, &mut q),
        CellOutcome::Nothing
    );
    let c = cell.counters();
    assert_eq!((c.admission_rejects, c.uplink_packets), (1, 2));
    // Without a limit the same packet at 0 is admitted.
    let mut open = Cell::new(params(vec![0, 0]), 0, Xoshiro256pp::seed_from_u64(1));
    open.enter(ms(0), 7, 100, Some(0), None, &mut q);
    assert_eq!(
        open.enter(ms(0), 8, 100, Some(1), None, &mut q),
        CellOutcome::Nothing
    );
    assert_eq!(open.counters().admission_rejects, 0);
}
