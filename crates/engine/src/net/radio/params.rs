//! The mesh's parameters, its MACs' and its duty cycling's: plain data, a leaf that the mesh,
//! the MAC registry and each MAC read (`net/topology/mesh.rs` builds them from the scenario).

use coaplab_cc::Duration;

use super::config::MacAddressing;

/// The mesh's parameters.
#[derive(Clone, Debug)]
pub struct RadioParams {
    pub range_m: f64,
    pub interference_m: f64,
    pub carrier_sense_m: f64,
    pub link_loss: f64,
    pub addressing: MacAddressing,
    pub mac: MacParams,
    pub queue_frames: u32,
    pub border_router_queue_frames: u32,
    /// ContikiMAC-style duty cycling: every node wakes up once per this period (at its own
    /// phase) to check the channel; `None`: the radio is always on (NullRDC).
    pub wake_period: Option<Duration>,
    /// Gap between two strobed copies of a frame (room for the acknowledgement).
    pub strobe_gap: Duration,
    /// ContikiMAC's phase optimisation (Contiki's `WITH_PHASE_OPTIMIZATION`): a sender that
    /// had a frame acknowledged records when, and later waits until `GUARD_TIME`
    /// (`rdc/contikimac.rs`) before the receiver's next expected wake-up to strobe
    /// (docs/networks.md).
    pub phase_lock: bool,
    /// `network.mac = "contiki"`: Contiki 2.6's CSMA driver (`mac/contiki.rs`) instead of the
    /// IEEE 802.15.4 CSMA/CA of `mac/ieee802154.rs`; `queue_frames` is then its buffer pool.
    pub contiki: Option<ContikiParams>,
}

/// The IEEE 802.15.4 MAC's parameters (defaults: IEEE 802.15.4-2006 Table 86 and §6.4.1 at
/// 2.4 GHz); the CCA, turnaround and acknowledgement timings are the radio's, whatever MAC
/// drives it.
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

/// The Contiki profile's parameters (`mac/contiki.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContikiParams {
    /// One clock tick (1 / `CLOCK_SECOND`).
    pub tick: Duration,
    /// The time base T in ticks (`default_timebase()`), at least 1.
    pub timebase_ticks: u32,
    pub max_neighbor_queues: usize,
    pub max_transmissions: u8,
    /// The sender waits for acknowledgements (`NULLRDC_802154_AUTOACK`, or ContikiMAC).
    pub wait_ack: bool,
    pub ack_wait: Duration,
    pub after_ack_wait: Duration,
    pub reassembly_timeout: Duration,
    /// The CPU's time from a packet's hand-off to the stack to its first frame's CCA (the
    /// MSP430 reading the frame, 6LoWPAN and uIP, CSMA's zero-time ctimer, loading the
    /// CC2420's TX FIFO; see `mac/contiki.rs` `PROCESSING_US`).
    pub processing: Duration,
    /// `contiki_cpu_time = "frame_length"`: the CPU's time is this fixed part plus the SPI
    /// copies of the frames' bytes (`config.rs` `SPI_BYTE_US`); `None`: `processing`, one
    /// constant.
    pub cpu_fixed: Option<Duration>,
    /// `contiki_clock_ticks`: CSMA's timers expire on the clock's ticks (`etimer`), not at the
    /// exact time.
    pub tick_timers: bool,
    /// `contiki_pending_packet`: a send while a received frame waits in the CC2420's RX FIFO
    /// is refused with `MAC_TX_COLLISION` (`nullrdc.c` / `contikimac.c` `send_packet`).
    pub pending_refusal: bool,
    /// `contiki_rpl_etx`: RPL's parents follow the link ETX the MAC's outcomes measure
    /// (`neighbor-info.c`, `rpl-of-etx.c`; `net/radio/rpl_etx.rs`).
    pub rpl_etx: bool,
}

impl ContikiParams {
    /// T.
    pub fn timebase(&self) -> Duration {
        self.tick.mul(u64::from(self.timebase_ticks))
    }

    /// When a timer set at `now` for `ticks` clock ticks expires. With `tick_timers`, as
    /// Contiki's `etimer` does: `timer_set` records the current tick count (`clock_time()`,
    /// the ticks whole at `now`) and the clock interrupt (`cpu/msp430/f1xxx/clock.c`) polls
    /// the timer at the tick where `clock_time() - start >= interval`, so the timer fires on
    /// the tick grid, `ticks` ticks after the tick `now` falls in. Else at `now + ticks`.
    pub fn timer_at(&self, now: coaplab_cc::Instant, ticks: u64) -> coaplab_cc::Instant {
        let d = self.tick.mul(ticks);
        if !self.tick_timers || self.tick.nanos() == 0 {
            return now + d;
        }
        let t = self.tick.nanos();
        coaplab_cc::Instant::from_nanos(now.nanos() / t * t) + d
    }
}
