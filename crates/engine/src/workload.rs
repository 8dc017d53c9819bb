//! What each client asks for, and when it is finished (docs/design.md §5).

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

use crate::config::workload::{StartModel, WorkloadConfig, WorkloadKind};

/// The request a client sends next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextRequest {
    /// Block2 number for block-wise transfers (RFC 7959), `None` for plain GETs.
    pub block: Option<u32>,
    /// The first request of a new batch of a `random` client: all congestion-control state is
    /// reset before it (docs/design.md §5).
    pub new_batch: bool,
    /// An LwM2M device's uplink (`crate::coap::lwm2m::Uplink` as `u8`; 0 = none): the exchange
    /// reports its end ([`crate::coap::client::Action::Ended`]).
    pub tag: u8,
    /// The request's payload, bytes, when not the group's (LwM2M uplinks).
    pub payload: Option<u16>,
}

/// One client's remaining work.
#[derive(Clone, Debug)]
pub enum Plan {
    /// `continuous` by count, and burst clients: `remaining` back-to-back exchanges.
    Count { remaining: u32 },
    /// `continuous` with `duration_s`: new exchanges start until `deadline`.
    Until { deadline: Instant },
    /// `random`: batches of uniform size in `[min, max]`, state reset between batches.
    Batches {
        remaining: u32,
        batch_left: u32,
        min: u32,
        max: u32,
    },
    /// `firmware`: Block2 blocks `next..total` of one resource.
    Blocks { next: u32, total: u32 },
    /// `periodic`: a request is created at every tick of the client's period (the testbed
    /// schedules the ticks); `pending` is a created request not yet started.
    Periodic {
        pending: bool,
        period: Duration,
        deadline: Instant,
    },
    /// `observe`: one registration (a GET with Observe = 0) when `register` is set — at the
    /// start, and again when the observer re-registers (`coap::observe`) — before `deadline`.
    Observe { register: bool, deadline: Instant },
    /// `lwm2m`: the uplinks an LwM2M device asked for (`crate::coap::lwm2m::device`), in order;
    /// the device decides when it is done, so the plan is never exhausted by itself.
    Lwm2m {
        queue: std::collections::VecDeque<NextRequest>,
    },
}

impl Plan {
    /// The next request to start at `now`, if the workload has one. For `Batches`, a new batch
    /// only starts when `idle` (no exchange outstanding), so that the reset falls between
    /// batches.
    pub fn next_request(
        &mut self,
        now: Instant,
        idle: bool,
        rng: &mut dyn Rng,
    ) -> Option<NextRequest> {
        match self {
            Plan::Count { remaining } => {
                *remaining = remaining.checked_sub(1)?;
                Some(NextRequest {
                    block: None,
                    new_batch: false,
                    tag: 0,
                    payload: None,
                })
            }
            Plan::Until { deadline } => (now < *deadline).then_some(NextRequest {
                block: None,
                new_batch: false,
                tag: 0,
                payload: None,
            }),
            Plan::Batches {
                remaining,
                batch_left,
                min,
                max,
            } => {
                if *remaining == 0 {
                    return None;
                }
                let mut new_batch = false;
                if *batch_left == 0 {
                    if !idle {
                        return None;
                    }
                    let span = u64::from(*max - *min) + 1;
                    let size = *min + ((rng.next_u64() as u128 * span as u128) >> 64) as u32;
                    *batch_left = size.min(*remaining);
                    new_batch = true;
                }
                *batch_left -= 1;
                *remaining -= 1;
                Some(NextRequest {
                    block: None,
                    new_batch,
                    tag: 0,
                    payload: None,
                })
            }
            Plan::Periodic { pending, .. } => {
                if !std::mem::replace(pending, false) {
                    return None;
                }
                Some(NextRequest {
                    block: None,
                    new_batch: false,
                    tag: 0,
                    payload: None,
                })
            }
            Plan::Observe { register, deadline } => {
                if now >= *deadline || !std::mem::replace(register, false) {
                    return None;
                }
                Some(NextRequest {
                    block: None,
                    new_batch: false,
                    tag: 0,
                    payload: None,
                })
            }
            Plan::Lwm2m { queue } => queue.pop_front(),
            Plan::Blocks { next, total } => {
                if *next >= *total {
                    return None;
                }
                *next += 1;
                Some(NextRequest {
                    block: Some(*next - 1),
                    new_batch: false,
                    tag: 0,
                    payload: None,
                })
            }
        }
    }

    /// Whether more requests may come (used to know when a client is finished).
    pub fn exhausted(&self, now: Instant) -> bool {
        match self {
            Plan::Count { remaining } => *remaining == 0,
            Plan::Until { deadline } => now >= *deadline,
            Plan::Batches { remaining, .. } => *remaining == 0,
            Plan::Blocks { next, total } => next >= total,
            Plan::Periodic {
                pending, deadline, ..
            } => !*pending && now >= *deadline,
            Plan::Observe { deadline, .. } => now >= *deadline,
            Plan::Lwm2m { queue } => queue.is_empty(),
        }
    }
}

/// One client of a run: its plan and when it starts (docs/design.md §5).
#[derive(Clone, Debug)]
pub struct ClientSetup {
    pub plan: Plan,
    /// One of a burst workload's burst clients (they follow the background clients).
    pub in_burst: bool,
    /// Its start offset ([`start_offset`]).
    pub offset: Duration,
    /// `burst_at_s` for burst clients, else 0, plus the offset.
    pub start: Instant,
}

/// The start offset of the client at position `index` of its population (`spread` is
/// `start_spread_s`): `uniform`, a draw in `[0, spread]`; `sequential`, `index ·
/// start_interval_s` plus that draw (no draw when the spread is 0).
pub fn start_offset(
    w: &WorkloadConfig,
    index: u32,
    spread: Duration,
    rng: &mut dyn Rng,
) -> Duration {
    let jitter = rng.uniform(Duration::ZERO, spread);
    match w.start {
        StartModel::Uniform => jitter,
        // In whole nanoseconds: the interval once rounded, then multiplied exactly (at most
        // 1e4 s × 1e5 clients = 1e18 ns, within u64).
        StartModel::Sequential => {
            let step = Duration::from_secs_f64(w.start_interval_s).nanos();
            Duration::from_nanos(step * u64::from(index)) + jitter
        }
    }
}

/// How many clients workload `w` has (background and burst clients included).
pub fn client_count(w: &WorkloadConfig) -> u32 {
    match w.kind {
        WorkloadKind::Burst => w.background + w.burst_clients.unwrap_or(0),
        _ => w.clients,
    }
}

/// Every client of workload `w`, background clients first, with start offsets drawn from
/// `start_rng` in client order; `firmware` is the plan of a firmware client (the transports
/// fetch the resource differently). Also returns the number of background clients.
pub fn client_setups(
    w: &WorkloadConfig,
    firmware: Plan,
    start_rng: &mut dyn Rng,
) -> (Vec<ClientSetup>, u32) {
    let (background, burst) = match w.kind {
        WorkloadKind::Burst => (w.background, w.burst_clients.unwrap_or(0)),
        _ => (w.clients, 0),
    };
    // A periodic client's phase is uniform over one period (the last nanosecond excluded, so
    // that a client's first tick never falls on its second one).
    let spread = match w.kind {
        WorkloadKind::Periodic => Duration::from_secs_f64(w.period_s.unwrap_or(1.0))
            .saturating_sub(Duration::from_nanos(1)),
        _ => Duration::from_secs_f64(w.start_spread_s),
    };
    let setups = (0..background + burst)
        .map(|id| {
            let in_burst = id >= background;
            let plan = match w.kind {
                WorkloadKind::Continuous | WorkloadKind::Burst if !in_burst => match w.duration_s {
                    Some(d) => Plan::Until {
                        deadline: Instant::from_secs_f64(d),
                    },
                    None => Plan::Count {
                        remaining: w.exchanges,
                    },
                },
                WorkloadKind::Burst => Plan::Count {
                    remaining: w.burst_exchanges.unwrap_or(1),
                },
                WorkloadKind::Continuous => unreachable!("continuous clients are background"),
                WorkloadKind::Random => Plan::Batches {
                    remaining: w.exchanges,
                    batch_left: 0,
                    min: w.batch[0],
                    max: w.batch[1],
                },
                WorkloadKind::Firmware | WorkloadKind::Upload => firmware.clone(),
                WorkloadKind::Observe => Plan::Observe {
                    register: true,
                    deadline: Instant::from_secs_f64(w.duration_s.unwrap_or(0.0)),
                },
                WorkloadKind::Lwm2m => Plan::Lwm2m {
                    queue: Default::default(),
                },
                // `reporting`: the interval is drawn below.
                WorkloadKind::Periodic | WorkloadKind::Reporting => Plan::Periodic {
                    pending: false,
                    period: Duration::from_secs_f64(w.period_s.unwrap_or(1.0)),
                    deadline: Instant::from_secs_f64(w.duration_s.unwrap_or(0.0)),
                },
            };
            let base = if in_burst {
                Duration::from_secs_f64(w.burst_at_s.unwrap_or(0.0))
            } else {
                Duration::ZERO
            };
            // Position among its kind (background or burst clients): a sequential launch
            // starts each kind's clients one after another.
            let index = if in_burst { id - background } else { id };
            // A reporting device: its interval drawn first, then its first report at a phase
            // uniform within it (the last nanosecond excluded, as for `periodic`).
            let (plan, spread) = match (w.kind, plan) {
                (WorkloadKind::Reporting, Plan::Periodic { deadline, .. }) => {
                    let interval = crate::reporting::draw_interval(start_rng);
                    let plan = Plan::Periodic {
                        pending: false,
                        period: interval,
                        deadline,
                    };
                    (plan, interval.saturating_sub(Duration::from_nanos(1)))
                }
                (_, plan) => (plan, spread),
            };
            let offset = start_offset(w, index, spread, start_rng);
            ClientSetup {
                plan,
                in_burst,
                offset,
                start: Instant::ZERO + base + offset,
            }
        })
        .collect();
    (setups, background)
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::rng::Xoshiro256pp;

    #[test]
    fn batches_cover_all_exchanges_and_reset_only_when_idle() {
        let mut rng = Xoshiro256pp::seed_from_u64(1);
        let mut plan = Plan::Batches {
            remaining: 50,
            batch_left: 0,
            min: 1,
            max: 10,
        };
        let (mut sent, mut batches) = (0, 0);
        while let Some(r) = plan.next_request(Instant::ZERO, true, &mut rng) {
            sent += 1;
            batches += r.new_batch as u32;
        }
        assert_eq!(sent, 50);
        // Batch sizes are at most 10, so 50 exchanges need at least 5 batches.
        assert!(batches >= 5, "{batches}");
        let mut busy = Plan::Batches {
            remaining: 5,
            batch_left: 0,
            min: 1,
            max: 10,
        };
        assert_eq!(busy.next_request(Instant::ZERO, false, &mut rng), None);
    }

    /// Draws the top of every range: `(u64::MAX · (n + 1)) >> 64 = n` for a span of `n` ns.
    struct Top;
    impl Rng for Top {
        fn next_u64(&mut self) -> u64 {
            u64::MAX
        }
    }

    /// Fails the test if a random word is drawn.
    struct NoDraw;
    impl Rng for NoDraw {
        fn next_u64(&mut self) -> u64 {
            panic!("no random draw expected")
        }
    }

    fn workload(start: StartModel, spread: f64, interval: f64, clients: u32) -> WorkloadConfig {
        let mut w: WorkloadConfig = serde_json::from_str("{}").unwrap();
        (w.start, w.start_spread_s, w.start_interval_s, w.clients) =
            (start, spread, interval, clients);
        w
    }

    fn offsets_ns(w: &WorkloadConfig, rng: &mut dyn Rng) -> Vec<u64> {
        let firmware = Plan::Count { remaining: 1 };
        let (setups, _) = client_setups(w, firmware, rng);
        setups.iter().map(|s| s.offset.nanos()).collect()
    }

    #[test]
    fn sequential_without_jitter_launches_at_multiples_of_the_interval() {
        // 4 clients, 0.05 s apart, no spread: 0, 0.05, 0.10, 0.15 s, and with no spread
        // no random word is drawn (`NoDraw` panics if one is).
        let w = workload(StartModel::Sequential, 0.0, 0.05, 4);
        let mut rng = NoDraw;
        let got = offsets_ns(&w, &mut rng);
        assert_eq!(got, vec![0, 50_000_000, 100_000_000, 150_000_000]);
        // The interval is rounded to whole nanoseconds once and then multiplied exactly:
        // 1/3 s → 333_333_333 ns, client 3 at 999_999_999 ns (not 1 s).
        let w = workload(StartModel::Sequential, 0.0, 1.0 / 3.0, 4);
        assert_eq!(offsets_ns(&w, &mut rng)[3], 999_999_999);
    }

    #[test]
    fn sequential_adds_the_uniform_jitter_and_uniform_is_the_jitter_alone() {
        // `Top` draws the top of every range: each jitter is the whole spread, 0.01 s.
        // Sequential, 0.5 s apart: 0 + 0.01, 0.5 + 0.01, 1.0 + 0.01 s.
        let w = workload(StartModel::Sequential, 0.01, 0.5, 3);
        let got = offsets_ns(&w, &mut Top);
        assert_eq!(got, vec![10_000_000, 510_000_000, 1_010_000_000]);
        // Uniform ignores the interval: every client at the spread's top, 0.01 s.
        let w = workload(StartModel::Uniform, 0.01, 0.5, 3);
        let got = offsets_ns(&w, &mut Top);
        assert_eq!(got, vec![10_000_000; 3]);
        // LowerBound: the bottom of every range, so uniform starts everybody at 0.
        let got = offsets_ns(&w, &mut coaplab_cc::rng::LowerBound);
        assert_eq!(got, vec![0; 3]);
    }

    #[test]
    fn sequential_burst_clients_count_from_the_burst() {
        // 2 background clients, then 2 burst clients at 10 s, 1 s apart, no jitter:
        // background at 0 and 1 s; burst clients at 10 + 0 and 10 + 1 s.
        let mut w = workload(StartModel::Sequential, 0.0, 1.0, 0);
        w.kind = WorkloadKind::Burst;
        (w.background, w.burst_at_s, w.burst_clients) = (2, Some(10.0), Some(2));
        let (setups, background) = client_setups(
            &w,
            Plan::Count { remaining: 1 },
            &mut coaplab_cc::rng::LowerBound,
        );
        assert_eq!(background, 2);
        let starts: Vec<u64> = setups.iter().map(|s| s.start.nanos()).collect();
        let s = 1_000_000_000;
        assert_eq!(starts, vec![0, s, 10 * s, 11 * s]);
    }

    #[test]
    fn reporting_devices_draw_an_interval_and_a_phase_within_it() {
        let mut w = workload(StartModel::Uniform, 0.05, 0.0, 500);
        w.kind = WorkloadKind::Reporting;
        w.duration_s = Some(86_400.0);
        let mut rng = Xoshiro256pp::seed_from_u64(3);
        let (setups, _) = client_setups(&w, Plan::Count { remaining: 1 }, &mut rng);
        let allowed: Vec<u64> = crate::reporting::REPORT_INTERVALS
            .iter()
            .map(|&(s, _)| s * 1_000_000_000)
            .collect();
        for s in &setups {
            let Plan::Periodic {
                period, deadline, ..
            } = s.plan
            else {
                panic!("a reporting device runs a periodic plan")
            };
            assert!(allowed.contains(&period.nanos()), "{period:?}");
            // The phase lies within the interval (not the 0.05 s start spread).
            assert!(s.offset < period && s.start == Instant::ZERO + s.offset);
            assert_eq!(deadline, Instant::from_secs(86_400));
        }
        // 500 devices: the day-long interval (40 %) puts some first reports past 0.05 s.
        assert!(setups.iter().any(|s| s.offset > Duration::from_secs(3600)));
    }

    #[test]
    fn blocks_in_order_then_done() {
        let mut plan = Plan::Blocks { next: 0, total: 3 };
        let mut rng = coaplab_cc::rng::LowerBound;
        let got: Vec<_> = core::iter::from_fn(|| plan.next_request(Instant::ZERO, true, &mut rng))
            .map(|r| r.block)
            .collect();
        assert_eq!(got, vec![Some(0), Some(1), Some(2)]);
        assert!(plan.exhausted(Instant::ZERO));
    }
}
