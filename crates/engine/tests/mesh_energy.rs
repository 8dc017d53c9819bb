//! Mesh energy (docs/energy.md, "Meshes"): each node's radio time per state from the 802.15.4
//! model — on the air, listening, off — and the run's energy figures. Every expected time is
//! computed by hand in the comment next to it from the frame timings of `tests/radio.rs`
//! (IEEE 802.15.4-2006: 32 µs a byte, CCA 128 µs, turnaround 192 µs, ACK 11 bytes = 352 µs)
//! and Contiki 2.6's `contikimac.c` (a channel check keeps the radio on 8 ticks of 1/32768 s).

mod common;

use common::mesh::{drive, request, Queue};

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{Duration, Instant};
use coaplab_engine::config::MacAddressing;
use coaplab_engine::energy::{RadioState, StateTimes};
use coaplab_engine::net::radio::mac::MacParams;
use coaplab_engine::net::radio::{Mesh, RadioParams};
use coaplab_engine::sim::slab::Slab;
use serde_json::json;

fn params(wake_period: Option<Duration>) -> RadioParams {
    RadioParams {
        range_m: 10.0,
        interference_m: 20.0,
        carrier_sense_m: 10.0,
        link_loss: 0.0,
        addressing: MacAddressing::Long,
        mac: MacParams {
            min_be: 0,
            max_be: 0,
            max_frame_retries: 3,
            ..MacParams::default()
        },
        queue_frames: 4,
        border_router_queue_frames: 6,
        wake_period,
        strobe_gap: Duration::from_micros(544),
        phase_lock: false,
        contiki: None,
    }
}

/// Two nodes 10 m apart, node 1 the root; one 95-byte request from node 0 to node 1 at 0.
fn one_frame(wake_period: Option<Duration>, phases: Option<Vec<Duration>>) -> Mesh {
    let mut mesh = Mesh::new(
        params(wake_period),
        vec![(0.0, 0.0), (10.0, 0.0)],
        1,
        0,
        (0..).map(Xoshiro256pp::seed_from_u64),
        Xoshiro256pp::seed_from_u64(99),
    )
    .unwrap();
    if let Some(p) = phases {
        mesh.wake_phases = p;
    }
    let mut packets = Slab::default();
    let r = request(95);
    let id = packets.insert(r);
    let mut q = Queue::default();
    mesh.enter(Instant::ZERO, id, &r, 0, 1, &mut q).unwrap();
    drive(&mut mesh, &packets, &mut q);
    mesh
}

fn us(t: &StateTimes, s: RadioState) -> f64 {
    t.get(s).nanos() as f64 / 1000.0
}

#[test]
fn always_on_one_frame_and_its_acknowledgement() {
    let mesh = one_frame(None, None);
    // The frame is on the air 320–3040 µs (tests/radio.rs one_frame_one_hop_on_an_idle_channel):
    // node 0 transmits 2720 µs; node 1 acknowledges after its turnaround, 3232–3584 µs: 352 µs.
    // NullRDC: the radio is on all the time, so over 10 ms node 0 listens 10 000 − 2720 =
    // 7280 µs and node 1 10 000 − 352 = 9648 µs; neither is ever off.
    let t = mesh.state_times(Instant::from_nanos(10_000_000));
    assert_eq!(us(&t[0], RadioState::Transmit), 2720.0);
    assert_eq!(us(&t[0], RadioState::Receive), 7280.0);
    assert_eq!(us(&t[1], RadioState::Transmit), 352.0);
    assert_eq!(us(&t[1], RadioState::Receive), 9648.0);
    assert_eq!(t[0].get(RadioState::Psm), Duration::ZERO);
}

#[test]
fn contikimac_strobe_receiver_and_checks() {
    let period = Duration::from_millis(125);
    let mesh = one_frame(
        Some(period),
        Some(vec![Duration::ZERO, Duration::from_millis(10)]),
    );
    // tests/radio.rs contikimac_strobes_until_the_receiver_wakes_up: the strobe is on the air
    // from 320 µs; 3 copies for nobody then the copy node 1 takes, 10 112–12 832 µs.
    // Node 0: on the air 12 832 − 320 = 12 512 µs, of which 3 gaps × 544 = 1632 µs listening:
    // transmitting 12 512 − 1632 = 10 880 µs (= 4 copies × 2720). Listening: the gaps 1632,
    // the acknowledgement awaited 192 + 352 = 544 µs, and its channel checks before 125 ms
    // (phase 0: the wake-up at 0 only) 1 × 244.140 µs: 2420.140 µs. Off: 125 000 − 10 880 −
    // 2420.140 = 111 699.860 µs.
    let t = mesh.state_times(Instant::from_nanos(125_000_000));
    assert_eq!(us(&t[0], RadioState::Transmit), 10_880.0);
    assert_eq!(us(&t[0], RadioState::Receive), 2420.140);
    assert_eq!(us(&t[0], RadioState::Psm), 111_699.860);
    // Node 1 (phase 10 ms): awake from its wake-up at 10 000 µs through the copy's end at
    // 12 832 µs: 2832 µs, plus its one channel check 244.140 µs: 3076.140 µs listening. Its
    // acknowledgement 13 024–13 376 µs: 352 µs transmitting. Off: 125 000 − 352 − 3076.140 =
    // 121 571.860 µs.
    assert_eq!(us(&t[1], RadioState::Transmit), 352.0);
    assert_eq!(us(&t[1], RadioState::Receive), 3076.140);
    assert_eq!(us(&t[1], RadioState::Psm), 121_571.860);
}

fn periodic_chain(
    rdc: &str,
    energy: Option<serde_json::Value>,
) -> coaplab_engine::metrics::RunResult {
    let mut patch = json!({
        "workload": {"kind": "periodic", "clients": 20, "period_s": 5.0, "duration_s": 30.0,
                     "request_bytes": 95, "response_bytes": 0},
        "network": {"kind": "chain", "rdc": rdc},
    });
    if let Some(e) = energy {
        patch["energy"] = e;
    }
    let cfg = common::config(patch);
    coaplab_engine::testbed::run(&cfg, 0, None).unwrap()
}

#[test]
fn a_mesh_run_reports_energy_and_a_star_run_does_not() {
    let on = periodic_chain("nullrdc", None);
    let e = on.energy.as_ref().expect("a mesh run has energy figures");
    // One entry per mesh node (the border router included).
    assert_eq!(e.devices, on.mesh.as_ref().unwrap().nodes);
    // NullRDC: every node's radio is on all the time, so the mean time per state adds up to
    // the run's length and none of it is off.
    let sum: f64 = e.state_time_s.0.iter().sum();
    assert!(
        (sum - on.sim_time_s).abs() < 1e-6,
        "{sum} vs {}",
        on.sim_time_s
    );
    assert_eq!(e.state_time_s.get(RadioState::Psm), 0.0);
    // The mean power lies between the CC2420's TX (52.2 mW) and RX (56.4 mW) powers.
    assert!(
        e.mean_power_mw > 52.2 && e.mean_power_mw <= 56.4,
        "{}",
        e.mean_power_mw
    );
    // 5 Wh at ≈ 56 mW: 5 × 3600 / 0.0564 s = 319 149 s ≈ 0.0101 years.
    let years = e.battery_life_years.unwrap();
    assert!((years - 5.0 * 3600.0 / (e.mean_power_mw / 1000.0) / 31_557_600.0).abs() < 1e-12);
    // Duty cycling turns the radios off most of the time: far below NullRDC's power.
    let dc = periodic_chain("contikimac", None);
    let d = dc.energy.as_ref().unwrap();
    assert!(
        d.state_time_s.get(RadioState::Psm) > 0.9 * dc.sim_time_s,
        "{:?}",
        d.state_time_s
    );
    assert!(d.mean_power_mw < e.mean_power_mw / 5.0);
    // The star records no state times: no energy figures (its results are unchanged).
    let star = coaplab_engine::testbed::run(&common::config(json!({})), 0, None).unwrap();
    assert!(star.energy.is_none());
}

#[test]
fn the_power_model_changes_energy_only() {
    let base = periodic_chain("contikimac", None);
    // Radio off powered down: 20 µA × 3 V = 60 µW instead of 1278 µW.
    let down = periodic_chain(
        "contikimac",
        Some(json!({"psm_uw": 60.0, "battery_wh": 10.0})),
    );
    assert_eq!(base.events, down.events);
    assert_eq!(base.sim_time_s, down.sim_time_s);
    let (a, b) = (base.energy.unwrap(), down.energy.unwrap());
    assert_eq!(a.state_time_s, b.state_time_s);
    // Off time × (1278 − 60) µW less power on average.
    let saved = a.state_time_s.get(RadioState::Psm) * (1.278 - 0.060) / base.sim_time_s;
    assert!((a.mean_power_mw - b.mean_power_mw - saved).abs() < 1e-9);
    assert_eq!(b.battery_wh, 10.0);
}

#[test]
fn bad_energy_keys_are_refused() {
    for bad in [
        r#"{"energy": {"tx_w": 1}}"#,
        r#"{"energy": {"battery_wh": "five"}}"#,
    ] {
        assert!(
            coaplab_engine::config::RunConfig::from_json(bad).is_err(),
            "{bad}"
        );
    }
}
