//! What each client asks for, and when it is finished (SPEC §5).

use coaplab_cc::rng::Rng;
use coaplab_cc::{Duration, Instant};

use crate::config::{WorkloadConfig, WorkloadKind};

/// The request a client sends next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextRequest {
    /// Block2 number for block-wise transfers (RFC 7959), `None` for plain GETs.
    pub block: Option<u32>,
    /// The first request of a new batch of a `random` client: all congestion-control state is
    /// reset before it (SPEC §5).
    pub new_batch: bool,
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
                })
            }
            Plan::Until { deadline } => (now < *deadline).then_some(NextRequest {
                block: None,
                new_batch: false,
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
                })
            }
            Plan::Periodic { pending, .. } => {
                if !std::mem::replace(pending, false) {
                    return None;
                }
                Some(NextRequest {
                    block: None,
                    new_batch: false,
                })
            }
            Plan::Blocks { next, total } => {
                if *next >= *total {
                    return None;
                }
                *next += 1;
                Some(NextRequest {
                    block: Some(*next - 1),
                    new_batch: false,
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
        }
    }
}

/// One client of a run: its plan and when it starts (SPEC §5).
#[derive(Clone, Debug)]
pub struct ClientSetup {
    pub plan: Plan,
    /// One of a burst workload's burst clients (they follow the background clients).
    pub in_burst: bool,
    /// Its offset drawn uniformly in `[0, start_spread_s]`.
    pub offset: Duration,
    /// `burst_at_s` for burst clients, else 0, plus the offset.
    pub start: Instant,
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
                WorkloadKind::Firmware => firmware.clone(),
                WorkloadKind::Periodic => Plan::Periodic {
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
            let offset = start_rng.uniform(Duration::ZERO, spread);
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
