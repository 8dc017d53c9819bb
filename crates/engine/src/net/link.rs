//! One direction of the constrained link (docs/design.md §2): a [`DropTailQueue`] in front of a
//! serializer of `rate` bit/s, then propagation for the one-way delay. Wireless errors are
//! applied **after** serialization: a lost packet still consumed its serialization time.

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

use crate::net::loss::LossProcess;
use crate::net::queue::DropTailQueue;
use crate::net::series::LinkSeries;

/// What decides how long each packet occupies a link instead of its rate, told `now` (sans
/// IO): a GPRS uplink's radio (`net::gprs::GprsUplink`). The link keeps its buffer and loss.
/// A trait here, implemented by the model, so that the link does not depend on it.
pub trait Medium {
    /// How long a packet of `ip_bytes` starting on the link at `now` occupies it.
    fn service_time(&mut self, now: Instant, ip_bytes: u32) -> Duration;
    /// A packet went the other way at `now` and costs this link time (its acknowledgement);
    /// `busy`: a packet is on the link.
    fn on_downlink_packet(&mut self, now: Instant, busy: bool);
    /// The link fell idle at `now` (no packet waiting).
    fn on_idle(&mut self, now: Instant);
    /// The packet on the link finished at `done`, with `queued_packets` packets of
    /// `queued_bytes` behind it: when the far end of the link has it whole (a GPRS uplink
    /// holds a packet back until its blocks in error were resent, and reassembles in order).
    fn release_at(&mut self, done: Instant, queued_packets: usize, queued_bytes: u64) -> Instant {
        let _ = (queued_packets, queued_bytes);
        done
    }
}

/// Parameters of one link direction.
#[derive(Clone, Debug)]
pub struct LinkParams {
    /// Serialization rate, bit/s.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Buffer limit in bytes (`None` = unlimited).
    pub buffer_bytes: Option<u64>,
    /// Link-layer bytes added to each IP packet when serializing (docs/design.md §2: 0 by default).
    pub overhead_bytes: u32,
}

/// What happened to a packet handed to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Tail-dropped at the buffer.
    Dropped,
    /// Waiting behind other packets.
    Queued,
    /// The link was idle: serialization started; call `on_tx_done` at this time.
    Transmitting { done_at: Instant },
}

/// The end of one packet's serialization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxDone<T> {
    pub packet: T,
    /// Arrival at the far end after propagation, unless lost to a link error.
    pub delivered_at: Option<Instant>,
    /// The next queued packet started serializing: call `on_tx_done` again at this time.
    pub next_done_at: Option<Instant>,
}

/// Counters of one direction (docs/design.md §6 "Packets").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets serialized (put on the wire), lost or not.
    pub sent: u64,
    pub bytes: u64,
    pub dropped_buffer: u64,
    pub lost_link: u64,
    /// Total serialization time.
    pub busy: Duration,
    /// Total time dequeued packets waited in the buffer.
    pub queue_wait: Duration,
    /// When the first packet started serializing (None: the link never sent).
    pub first_start: Option<Instant>,
    /// When the last packet started finishes serializing: the link is idle from then on.
    pub last_end: Option<Instant>,
}

pub struct Link<T> {
    params: LinkParams,
    queue: DropTailQueue<T>,
    loss: LossProcess,
    /// The packet being serialized and its IP size.
    on_wire: Option<(T, u32)>,
    /// A GPRS uplink's radio (`net::gprs`): when set, it says how long each packet occupies
    /// the link instead of `rate_bps`.
    radio: Option<Box<dyn Medium>>,
    pub stats: LinkStats,
    /// Queue occupancy and delivered bytes over time, only when traced ([`Link::record_series`]).
    series: Option<Box<LinkSeries>>,
}

impl LinkParams {
    /// Checks the parameters: a rate of 0 bit/s (e.g. `0.0004 kbit/s`, which rounds to 0)
    /// would never finish serializing a packet.
    pub fn validate(&self) -> Result<(), String> {
        if self.rate_bps == 0 {
            return Err(
                "rate: 0 bit/s (after rounding to whole bit/s); allowed: >= 1 bit/s (0.001 kbit/s)"
                    .into(),
            );
        }
        Ok(())
    }
}

impl<T: Copy> Link<T> {
    /// A link with checked parameters ([`LinkParams::validate`]).
    pub fn try_new(params: LinkParams, loss: LossProcess) -> Result<Self, String> {
        params.validate()?;
        Ok(Link::new(params, loss))
    }

    /// A link without checking the parameters: a rate of 0 bit/s is taken as 1 bit/s (never a
    /// division by zero). Prefer [`Link::try_new`].
    pub fn new(mut params: LinkParams, loss: LossProcess) -> Self {
        params.rate_bps = params.rate_bps.max(1);
        let queue = DropTailQueue::new(params.buffer_bytes);
        Link {
            params,
            queue,
            loss,
            on_wire: None,
            radio: None,
            stats: LinkStats::default(),
            series: None,
        }
    }

    /// A link whose packets' times come from `radio` instead of `rate_bps` (a GPRS uplink:
    /// the buffer and loss of a link, the radio model of `net::gprs`).
    pub fn with_medium(params: LinkParams, loss: LossProcess, radio: Box<dyn Medium>) -> Self {
        Link {
            radio: Some(radio),
            ..Link::new(params, loss)
        }
    }

    /// Records the link's time series from now on (`trace = true`; `net::series`).
    pub fn record_series(&mut self) {
        self.series = Some(Box::default());
    }

    /// The recorded time series, if [`Link::record_series`] was called.
    pub fn series(&self) -> Option<&LinkSeries> {
        self.series.as_deref()
    }

    /// A downlink packet reached the GPRS modem at `now`: its acknowledgement takes uplink
    /// blocks (`net::gprs`). Nothing on other links.
    pub fn on_downlink_packet(&mut self, now: Instant) {
        let busy = self.on_wire.is_some();
        if let Some(r) = &mut self.radio {
            r.on_downlink_packet(now, busy);
        }
    }

    /// Serialization time of an IP packet of `ip_bytes`: `(ip_bytes + overhead)·8 / rate`,
    /// rounded **up** to the nanosecond so that a link never runs faster than its rate.
    pub fn serialization_time(&self, ip_bytes: u32) -> Duration {
        let bits = u64::from(ip_bytes + self.params.overhead_bytes) * 8;
        let rate = self.params.rate_bps;
        // In 64-bit arithmetic when `bits · 10⁹` fits (a 128-bit division is a library
        // call), else in 128-bit: the same value.
        let ns = match bits.checked_mul(1_000_000_000) {
            Some(n) => n.div_ceil(rate),
            None => u64::try_from((u128::from(bits) * 1_000_000_000).div_ceil(u128::from(rate)))
                .unwrap_or(u64::MAX),
        };
        Duration::from_nanos(ns)
    }

    /// A packet of `ip_bytes` reaches the link's buffer at `now`.
    pub fn on_packet_arrival(&mut self, now: Instant, packet: T, ip_bytes: u32) -> Arrival {
        if self.on_wire.is_none() {
            return Arrival::Transmitting {
                done_at: self.start(now, packet, ip_bytes),
            };
        }
        if self.queue.push(now, packet, ip_bytes) {
            if let Some(s) = &mut self.series {
                s.on_queue(now, self.queue.bytes());
            }
            Arrival::Queued
        } else {
            self.stats.dropped_buffer += 1;
            Arrival::Dropped
        }
    }

    fn start(&mut self, now: Instant, packet: T, ip_bytes: u32) -> Instant {
        let tx = match &mut self.radio {
            Some(r) => r.service_time(now, ip_bytes),
            None => self.serialization_time(ip_bytes),
        };
        self.on_wire = Some((packet, ip_bytes));
        self.stats.sent += 1;
        self.stats.bytes += u64::from(ip_bytes);
        self.stats.busy += tx;
        self.stats.first_start.get_or_insert(now);
        self.stats.last_end = Some(now + tx);
        now + tx
    }

    /// The packet on the wire finished serializing at `now`. The loss process decides its fate;
    /// the next queued packet (if any) starts at once.
    pub fn on_tx_done(&mut self, now: Instant, rng: &mut dyn Rng) -> TxDone<T> {
        let (packet, ip_bytes) = self
            .on_wire
            .take()
            .expect("on_tx_done without a packet on the wire");
        let lost = self.loss.on_packet(now, rng);
        if lost {
            self.stats.lost_link += 1;
        }
        let (waiting, bytes) = (self.queue.len(), self.queue.bytes());
        let released = match &mut self.radio {
            Some(r) => r.release_at(now, waiting, bytes),
            None => now,
        };
        let next_done_at = self.queue.pop().map(|(next, size, enqueued)| {
            self.stats.queue_wait += now - enqueued;
            self.start(now, next, size)
        });
        if let Some(s) = &mut self.series {
            if !lost {
                s.on_delivered(now, ip_bytes);
            }
            if next_done_at.is_some() {
                s.on_queue(now, self.queue.bytes());
            }
        }
        if next_done_at.is_none() {
            if let Some(r) = &mut self.radio {
                r.on_idle(now);
            }
        }
        TxDone {
            packet,
            delivered_at: (!lost).then_some(released + self.params.delay),
            next_done_at,
        }
    }

    pub fn max_queue_bytes(&self) -> u64 {
        self.queue.max_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::rng::Xoshiro256pp;

    fn uplink(buffer: Option<u64>, loss: LossProcess) -> Link<u32> {
        let params = LinkParams {
            rate_bps: 60_000,
            delay: Duration::from_millis(200),
            buffer_bytes: buffer,
            overhead_bytes: 0,
        };
        Link::new(params, loss)
    }

    #[test]
    fn serialization_and_propagation_to_the_nanosecond() {
        let mut link = uplink(None, LossProcess::None);
        let mut rng = Xoshiro256pp::seed_from_u64(0);
        // 40 B at 60 kbit/s: 320 bit / 60 000 bit/s = 5.3333… ms → 5 333 334 ns (rounded up).
        let t0 = Instant::from_secs(1);
        let Arrival::Transmitting { done_at } = link.on_packet_arrival(t0, 1, 40) else {
            panic!()
        };
        assert_eq!(done_at, t0 + Duration::from_nanos(5_333_334));
        // A second 93 B packet arriving meanwhile waits: 744 bit / 60 000 = 12.4 ms exactly.
        assert_eq!(link.on_packet_arrival(t0, 2, 93), Arrival::Queued);
        let done = link.on_tx_done(done_at, &mut rng);
        // Delivered after 200 ms propagation: 1 s + 5 333 334 ns + 200 ms.
        assert_eq!(done.delivered_at, Some(Instant::from_nanos(1_205_333_334)));
        assert_eq!(
            done.next_done_at,
            Some(done_at + Duration::from_millis(12) + Duration::from_micros(400))
        );
        let done2 = link.on_tx_done(done.next_done_at.unwrap(), &mut rng);
        assert_eq!(done2.packet, 2);
        assert_eq!(done2.next_done_at, None);
        assert_eq!(link.stats.sent, 2);
        assert_eq!(link.stats.bytes, 133);
        assert_eq!(link.stats.queue_wait, Duration::from_nanos(5_333_334));
    }

    #[test]
    fn a_two_packet_run_gives_the_exact_occupancy_steps() {
        use crate::net::series::THROUGHPUT_BIN;
        let mut link = uplink(None, LossProcess::None);
        link.record_series();
        let mut rng = Xoshiro256pp::seed_from_u64(0);
        // Packet 1 (40 B) reaches the idle link at 1.090 s and goes on the wire at once: the
        // buffer stays empty, nothing is recorded. It serializes for 320 bit / 60 000 bit/s =
        // 5 333 334 ns (rounded up), until 1.095 333 334 s.
        let t0 = Instant::from_millis(1_090);
        let Arrival::Transmitting { done_at } = link.on_packet_arrival(t0, 1, 40) else {
            panic!()
        };
        // Packet 2 (93 B) arrives 1 ms later and waits: 93 B in the buffer from 1.091 s.
        let t1 = Instant::from_millis(1_091);
        assert_eq!(link.on_packet_arrival(t1, 2, 93), Arrival::Queued);
        // Packet 1 done at 1.095 333 334 s: packet 2 leaves the buffer for the wire (0 B) and
        // serializes 744 bit / 60 000 bit/s = 12.4 ms, until 1.107 733 334 s.
        let done = link.on_tx_done(done_at, &mut rng);
        let end = done.next_done_at.unwrap();
        assert_eq!(end, Instant::from_nanos(1_107_733_334));
        link.on_tx_done(end, &mut rng);
        let s = link.series().unwrap();
        assert_eq!(
            s.queue,
            vec![(t1, 93), (Instant::from_nanos(1_095_333_334), 0)]
        );
        // Delivered per 100 ms bin: packet 1 ended in [1.0, 1.1) s (bin 10), packet 2 in
        // [1.1, 1.2) s (bin 11).
        assert_eq!(THROUGHPUT_BIN, Duration::from_millis(100));
        let mut want = vec![0u64; 12];
        (want[10], want[11]) = (40, 93);
        assert_eq!(s.delivered, want);
        assert_eq!(s.truncated_at, None);
    }

    #[test]
    fn an_untraced_link_records_nothing() {
        let mut link = uplink(None, LossProcess::None);
        link.on_packet_arrival(Instant::ZERO, 1, 40);
        link.on_packet_arrival(Instant::ZERO, 2, 40);
        assert!(link.series().is_none());
    }

    #[test]
    fn the_packet_on_the_wire_does_not_count_toward_the_buffer() {
        let mut link = uplink(Some(200), LossProcess::None);
        let t = Instant::ZERO;
        assert!(matches!(
            link.on_packet_arrival(t, 0, 150),
            Arrival::Transmitting { .. }
        ));
        // Buffer holds 200 B: two 100 B packets fit although 150 B are on the wire.
        assert_eq!(link.on_packet_arrival(t, 1, 100), Arrival::Queued);
        assert_eq!(link.on_packet_arrival(t, 2, 100), Arrival::Queued);
        assert_eq!(link.on_packet_arrival(t, 3, 1), Arrival::Dropped);
        assert_eq!(link.stats.dropped_buffer, 1);
    }

    #[test]
    fn a_lost_packet_still_occupies_the_link() {
        let mut link = uplink(None, LossProcess::Bernoulli(1.0));
        let mut rng = Xoshiro256pp::seed_from_u64(0);
        let Arrival::Transmitting { done_at } = link.on_packet_arrival(Instant::ZERO, 1, 40) else {
            panic!()
        };
        assert_eq!(
            link.on_packet_arrival(Instant::ZERO, 2, 40),
            Arrival::Queued
        );
        let done = link.on_tx_done(done_at, &mut rng);
        assert_eq!(done.delivered_at, None);
        // The second packet could only start when the lost one's 5 333 334 ns were over.
        assert_eq!(done.next_done_at, Some(Instant::from_nanos(2 * 5_333_334)));
        assert_eq!((link.stats.sent, link.stats.lost_link), (2, 1));
    }

    #[test]
    fn a_zero_rate_is_an_error_not_a_division_by_zero() {
        // downlink_kbps = 1e-4 → 0.1 bit/s → rounds to 0.
        let params = LinkParams {
            rate_bps: (1e-4f64 * 1000.0).round() as u64,
            delay: Duration::from_millis(400),
            buffer_bytes: None,
            overhead_bytes: 0,
        };
        let e = Link::<u32>::try_new(params.clone(), LossProcess::None)
            .err()
            .unwrap();
        assert!(e.starts_with("rate: 0 bit/s"), "{e}");
        // Unchecked: 1 bit/s, so 40 B take 320 s.
        let link = Link::<u32>::new(params, LossProcess::None);
        assert_eq!(link.serialization_time(40), Duration::from_secs(320));
        assert!(Link::<u32>::try_new(
            LinkParams {
                rate_bps: 1,
                delay: Duration::ZERO,
                buffer_bytes: None,
                overhead_bytes: 0
            },
            LossProcess::None
        )
        .is_ok());
    }
}
