//! The cell element: N devices (one per network node) on one carrier, the eNB's scheduler, and
//! each device's RRC / power-saving state. Driven by the network's events
//! ([`CellEvent`] in `NetEvent::Cell`): a packet entering the cell starts its device's next
//! job when the device is free; the job's whole message sequence is booked on the carrier at
//! once (`procedures.rs`), and two events mark its end: the packet leaves the cell (it was
//! decoded) and the device is free again. Timers (inactivity, paging occasions, tracking area
//! updates) are events only while something waits on them: an idle device costs nothing.

use std::collections::{BTreeMap, VecDeque};

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{Duration, Instant};

use super::carrier::Carrier;
use super::numerology::{Numerology, LEVELS};
use super::power::{Account, Mode};
use super::procedures::{ProcCounters, Procs, Radio, L2_OVERHEAD_BITS, MSG5_HEADER_BITS};
use super::timeline::Timeline;
use super::types::{CellEvent, CellKind, CellOutcome};
use crate::energy::StateTimes;
use crate::metrics::{CellCounters, CellTimeline};
use crate::net::common::{DropReason, ElementId};
use crate::net::event::{NetEvent, Scheduler};
use crate::sim::slab::PacketId;

/// The cell's parameters (from `[network]`, `net/topology/cell.rs`).
#[derive(Clone, Debug)]
pub struct CellParams {
    pub num: Numerology,
    /// Each device's coverage level.
    pub levels: Vec<u8>,
    /// User plane with RRC resume (`access = "up"`) rather than data over NAS.
    pub resume: bool,
    pub rai: bool,
    pub psm: bool,
    pub t3324: Duration,
    pub t3412: Duration,
    /// Idle-mode paging cycle (eDRX's when set), ms.
    pub idle_cycle_ms: u64,
    pub inactivity: Duration,
    pub cdrx_cycle_ms: u64,
    pub drx_inactivity_ms: u64,
    /// `None`: no NAT.
    pub nat_timeout: Option<Duration>,
    pub bler: [f64; LEVELS],
    pub ra_attempts_per_level: u32,
    pub ra_backoff_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    /// An uplink packet: its id, bits, and the subframe it entered the device's buffer.
    Up(PacketId, u32, u64),
    Down(PacketId, u32),
    Tau,
}

#[derive(Clone, Debug)]
struct Device {
    level: u8,
    account: Account,
    busy: bool,
    gen: u32,
    /// Uplink packets waiting: id, bits, the subframe each entered the buffer.
    ul: VecDeque<(PacketId, u32, u64)>,
    dl: VecDeque<(PacketId, u32)>,
    /// Downlink packets held in the core while the device is in PSM.
    held: Vec<(PacketId, u32)>,
    tau_due: bool,
    /// Subframe of the device's last activity (connected).
    last_activity: u64,
    last_uplink: Option<Instant>,
    /// User plane: a suspended context to resume.
    suspended: bool,
    /// RAI: a request went up; release once a downlink packet came back.
    rai_armed: bool,
    rai_release: bool,
    /// When the device last went idle (T3412 runs from then).
    released_at: Instant,
    /// Connected: the subframe at which the device built its last uplink MAC PDU. A packet
    /// already in its buffer then was in that PDU's buffer status report (TS 36.321 §5.4.5),
    /// so the eNB grants it without a new scheduling request or random access. `None` after
    /// a release.
    bsr_at: Option<u64>,
}

/// The cell.
pub struct Cell {
    pub params: CellParams,
    devices: Vec<Device>,
    carrier: Carrier,
    occasions: BTreeMap<(u64, u8), Vec<u32>>,
    rng: Xoshiro256pp,
    proc_counters: ProcCounters,
    counters: CellCounters,
    /// This element's index (for its events).
    element: ElementId,
    /// The traced device's radio states over time (`timeline.rs`), when recorded.
    timeline: Option<Timeline>,
    /// The eNB's admission limit: a packet is refused while the carrier is booked further
    /// ahead than this many subframes (`None`: never; `set_admission_backlog`).
    admission_backlog: Option<u64>,
}

fn sf_of(t: Instant) -> u64 {
    t.nanos().div_ceil(1_000_000)
}

fn at(sf: u64) -> Instant {
    Instant::from_millis(sf)
}

impl Cell {
    pub fn new(params: CellParams, element: ElementId, rng: Xoshiro256pp) -> Cell {
        let devices = params
            .levels
            .iter()
            .map(|&level| Device {
                level,
                account: Account::new(Instant::ZERO, params.num.pdcch_rmax[level as usize]),
                busy: false,
                gen: 0,
                ul: VecDeque::new(),
                dl: VecDeque::new(),
                held: Vec::new(),
                tau_due: false,
                last_activity: 0,
                last_uplink: None,
                suspended: false,
                rai_armed: false,
                rai_release: false,
                released_at: Instant::ZERO,
                bsr_at: None,
            })
            .collect();
        Cell {
            carrier: Carrier::new(params.num.ul_lanes),
            params,
            devices,
            occasions: BTreeMap::new(),
            rng,
            proc_counters: ProcCounters::default(),
            counters: CellCounters::default(),
            element,
            timeline: None,
            admission_backlog: None,
        }
    }

    /// Sets the eNB's admission limit (`network.admission_backlog_s`, in subframes; `None`:
    /// every packet is admitted).
    pub fn set_admission_backlog(&mut self, subframes: Option<u64>) {
        self.admission_backlog = subframes;
    }

    /// Whether the eNB refuses new work at `now`: its scheduler has booked the carrier more
    /// than the admission limit ahead. An overloaded cell's backlog would otherwise grow
    /// without bound (in the model and on a real eNB alike); a real eNB sheds the load with
    /// RRC connection reject (TS 36.331 §5.3.3.8, RRCConnectionReject-NB with its wait time)
    /// and access barring (§5.3.3.11). The model refuses the packet at the cell's door,
    /// counted in `admission_rejects`; the application's retransmission is the next try.
    fn refuses(&self, now: Instant) -> bool {
        self.admission_backlog
            .is_some_and(|limit| self.carrier.horizon().saturating_sub(sf_of(now)) > limit)
    }

    pub fn len(&self) -> usize {
        self.devices.len()
    }

    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// Each device's coverage level.
    pub fn levels(&self) -> impl Iterator<Item = u8> + '_ {
        self.devices.iter().map(|d| d.level)
    }

    /// The counters so far.
    pub fn counters(&self) -> CellCounters {
        let p = self.proc_counters;
        CellCounters {
            ra_attempts: p.ra_attempts,
            ra_collisions: p.ra_collisions,
            ra_level_ups: p.ra_level_ups,
            harq_retransmissions: p.harq_retransmissions,
            ..self.counters
        }
    }

    /// Records device `d`'s radio states over time from now on (tracing, `timeline.rs`);
    /// nothing when the cell has no such device.
    pub fn record_timeline(&mut self, d: u32) {
        if (d as usize) < self.devices.len() {
            self.timeline = Some(Timeline::new(d));
        }
    }

    /// The recorded timeline up to `until`, if one is recorded.
    pub fn timeline(&self, until: Instant) -> Option<CellTimeline> {
        let t = self.timeline.as_ref()?;
        let mut account = self.devices[t.device as usize].account;
        account.settle(until, &self.idle_rx());
        Some(t.result((account.since(), account.mode.name()), until))
    }

    /// Notes device `d`'s mode in the timeline when `d` is the traced device.
    fn note_mode(&mut self, d: u32) {
        if let Some(t) = self.timeline.as_mut().filter(|t| t.device == d) {
            let a = &self.devices[d as usize].account;
            t.mode(a.since(), a.mode.name());
        }
    }

    /// Each device's time per radio state from time zero to `until`.
    pub fn state_times(&self, until: Instant) -> Vec<StateTimes> {
        self.devices
            .iter()
            .map(|d| d.account.times(until, &self.idle_rx()))
            .collect()
    }

    /// How a device's idle time costs receive time: a paging occasion every idle cycle,
    /// monitoring the level's NPDCCH search space (Rmax subframes).
    fn idle_rx(&self) -> super::power::IdleRx {
        super::power::IdleRx {
            cycle_ms: self.params.idle_cycle_ms,
            t3324: self.params.psm.then_some(self.params.t3324),
        }
    }

    fn schedule(
        &self,
        q: &mut impl Scheduler,
        t: Instant,
        kind: CellKind,
        d: u32,
        packet: PacketId,
    ) {
        let ev = CellEvent {
            kind,
            device: d,
            gen: self.devices[d as usize].gen,
            packet,
        };
        q.schedule_net(t, NetEvent::Cell(self.element, ev));
    }

    /// A packet of `ip_bytes` enters the cell at `now`: from device `up` (an uplink) or to
    /// device `down`.
    pub fn enter(
        &mut self,
        now: Instant,
        id: PacketId,
        ip_bytes: u32,
        up: Option<u32>,
        down: Option<u32>,
        q: &mut impl Scheduler,
    ) -> CellOutcome {
        let bits = ip_bytes * 8 + L2_OVERHEAD_BITS;
        if (up.is_some() || down.is_some()) && self.refuses(now) {
            self.counters.admission_rejects += 1;
            return CellOutcome::Dropped(id, DropReason::Rejected);
        }
        if let Some(d) = up {
            let dev = &mut self.devices[d as usize];
            dev.ul.push_back((id, bits, sf_of(now)));
            dev.last_uplink = Some(now);
            self.counters.uplink_packets += 1;
            if !dev.busy {
                self.start(now, d, q);
            }
            return CellOutcome::Nothing;
        }
        let Some(d) = down else {
            return CellOutcome::Exit(id);
        };
        let idle = self.idle_rx();
        let dev = &mut self.devices[d as usize];
        if let Some(timeout) = self.params.nat_timeout {
            if dev
                .last_uplink
                .is_none_or(|u| now.saturating_since(u) > timeout)
            {
                self.counters.nat_dropped += 1;
                return CellOutcome::Dropped(id, DropReason::Unreachable);
            }
        }
        self.counters.downlink_packets += 1;
        dev.account.settle(now, &idle);
        self.note_mode(d);
        let dev = &mut self.devices[d as usize];
        if dev.account.mode == Mode::Psm && !dev.busy {
            dev.held.push((id, bits));
            self.counters.psm_buffered += 1;
            if dev.held.len() == 1 {
                // The held packet waits for the device's next uplink, at the latest its next
                // periodic tracking area update (T3412 expiries after its release). TAUs with
                // nothing waiting are not simulated (docs/networks.md).
                let period = self.params.t3412.nanos().max(1);
                let since = now.saturating_since(dev.released_at).nanos();
                let k = since / period + 1;
                let tau = dev.released_at + Duration::from_nanos(k * period);
                self.schedule(q, tau, CellKind::Tau, d, 0);
            }
            return CellOutcome::Nothing;
        }
        dev.dl.push_back((id, bits));
        if !dev.busy {
            self.start(now, d, q);
        }
        CellOutcome::Nothing
    }

    /// Handles one of the cell's events.
    pub fn handle(&mut self, now: Instant, ev: CellEvent, q: &mut impl Scheduler) -> CellOutcome {
        let d = ev.device;
        match ev.kind {
            CellKind::Exit => return CellOutcome::Exit(ev.packet),
            CellKind::Done => {
                let dev = &mut self.devices[d as usize];
                dev.busy = false;
                dev.last_activity = sf_of(now);
                self.next(now, d, q);
            }
            CellKind::Page => {
                if ev.gen == self.devices[d as usize].gen {
                    self.run_job(now, d, q, true);
                }
            }
            CellKind::Inactivity => {
                let dev = &self.devices[d as usize];
                if ev.gen == dev.gen && !dev.busy && dev.account.mode == Mode::Connected {
                    self.counters.releases_inactivity += 1;
                    self.release(now, d);
                }
            }
            CellKind::Tau => {
                let dev = &mut self.devices[d as usize];
                if ev.gen == dev.gen && !dev.busy && dev.account.mode != Mode::Connected {
                    dev.tau_due = true;
                    self.start(now, d, q);
                }
            }
        }
        CellOutcome::Nothing
    }

    /// The device finished a job at `now`: its next one, or the release timers.
    fn next(&mut self, now: Instant, d: u32, q: &mut impl Scheduler) {
        let dev = &mut self.devices[d as usize];
        if !dev.ul.is_empty() || !dev.dl.is_empty() {
            self.start(now, d, q);
            return;
        }
        if dev.rai_release {
            dev.rai_release = false;
            self.counters.releases_rai += 1;
            self.release(now, d);
            return;
        }
        dev.gen += 1;
        let t = now + self.params.inactivity;
        self.schedule(q, t, CellKind::Inactivity, d, 0);
    }

    /// The eNB releases the device's connection at `now` (RRCConnectionRelease on the
    /// downlink); the device goes idle, and PSM after T3324 when it uses PSM.
    fn release(&mut self, now: Instant, d: u32) {
        let (idle, cycle, inact) = (
            self.idle_rx(),
            self.params.cdrx_cycle_ms,
            self.params.drx_inactivity_ms,
        );
        let level = self.devices[d as usize].level as usize;
        let mut r = Radio::default();
        let t = sf_of(now);
        let (_, end) = self
            .procs(Some(d))
            .downlink(t, super::procedures::MSG4_BITS, level, &mut r);
        let dev = &mut self.devices[d as usize];
        dev.account.cdrx_sleep(
            dev.last_activity + inact,
            t,
            cycle,
            self.params.num.pdcch_rmax[level],
        );
        dev.account.add(r);
        dev.account.switch(at(end), Mode::Idle, &idle);
        dev.suspended = self.params.resume;
        dev.gen += 1;
        dev.rai_armed = false;
        dev.bsr_at = None;
        dev.released_at = at(end);
        self.note_mode(d);
    }

    /// The procedures, recording into the timeline when they are the traced device `d`'s.
    fn procs(&mut self, d: Option<u32>) -> Procs<'_> {
        let timeline = self.timeline.as_mut().filter(|t| d == Some(t.device));
        Procs {
            num: &self.params.num,
            carrier: &mut self.carrier,
            occasions: &mut self.occasions,
            bler: self.params.bler,
            ra_attempts_per_level: self.params.ra_attempts_per_level,
            ra_backoff_ms: self.params.ra_backoff_ms,
            rng: &mut self.rng,
            counters: &mut self.proc_counters,
            timeline,
        }
    }

    /// The free device `d` starts its next job at `now`: at once, or (a downlink to an idle
    /// device) at its next paging occasion.
    fn start(&mut self, now: Instant, d: u32, q: &mut impl Scheduler) {
        let idle = self.idle_rx();
        let dev = &mut self.devices[d as usize];
        dev.account.settle(now, &idle);
        self.note_mode(d);
        let dev = &mut self.devices[d as usize];
        dev.busy = true;
        dev.gen += 1;
        let paging = dev.ul.is_empty() && !dev.tau_due && dev.account.mode == Mode::Idle;
        if paging {
            // TS 36.304 §7.1: the paging occasion of UE_ID = the device's index, one per
            // idle cycle, in subframe 9 of its frame.
            let cycle = self.params.idle_cycle_ms.max(10);
            let offset = (u64::from(d) % (cycle / 10)) * 10 + 9;
            let t = sf_of(now);
            let po = if t <= offset {
                offset
            } else {
                (t - offset).div_ceil(cycle) * cycle + offset
            };
            self.schedule(q, at(po), CellKind::Page, d, 0);
            return;
        }
        self.run_job(now, d, q, false);
    }

    /// Books device `d`'s next job from `now` and schedules its end.
    fn run_job(&mut self, now: Instant, d: u32, q: &mut impl Scheduler, paged: bool) {
        let t = sf_of(now);
        self.carrier.prune(t.saturating_sub(1));
        if self.occasions.len() > 1024 {
            self.occasions = self.occasions.split_off(&(t.saturating_sub(10_000), 0));
        }
        let idle = self.idle_rx();
        let (cycle, inact) = (self.params.cdrx_cycle_ms, self.params.drx_inactivity_ms);
        let rmax = self.params.num.pdcch_rmax;
        let dev = &mut self.devices[d as usize];
        let level = dev.level as usize;
        let job = if let Some(p) = dev.ul.pop_front() {
            Job::Up(p.0, p.1, p.2)
        } else if let Some(p) = dev.dl.pop_front() {
            Job::Down(p.0, p.1)
        } else if dev.tau_due {
            dev.tau_due = false;
            Job::Tau
        } else {
            dev.busy = false;
            return;
        };
        let connected = dev.account.mode == Mode::Connected;
        // In the last uplink PDU's buffer status report: granted without uplink access.
        let reported = match job {
            Job::Up(_, _, entered) => connected && dev.bsr_at.is_some_and(|b| entered <= b),
            _ => false,
        };
        let mut r = Radio::default();
        let mut t = t;
        if connected {
            // Asleep between C-DRX wake-ups: a downlink waits for the next one.
            let sleep = dev.last_activity + inact;
            if t > sleep {
                if matches!(job, Job::Down(..)) && cycle > 0 {
                    t = sleep + (t - sleep).div_ceil(cycle) * cycle;
                }
                dev.account.cdrx_sleep(sleep, t, cycle, rmax[level]);
            }
        } else {
            dev.account.switch(now, Mode::Connected, &idle);
            // Downlink packets held while in PSM come after this job.
            let held: Vec<_> = dev.held.drain(..).collect();
            dev.dl.extend(held);
            self.note_mode(d);
        }
        // Release assistance: the device says a request expects one response; the eNB
        // releases the connection once it was delivered and nothing else waits.
        if matches!(job, Job::Up(..)) && self.params.rai {
            self.devices[d as usize].rai_armed = true;
        }
        let resume = self.params.resume && self.devices[d as usize].suspended;
        let mut procs = self.procs(Some(d));
        let (mut level_now, mut grant_from) = (level, t);
        if !connected {
            if paged {
                // The paging message: its DCI and NPDSCH at the paging occasion.
                grant_from = procs.paging(t, level, &mut r);
            }
            let (l, from) = procs.connect(grant_from, level, &mut r);
            level_now = l;
            grant_from = from;
        }
        let mut built = None;
        let (exit, done, packet) = match job {
            Job::Up(p, bits, _) => {
                let from = if reported {
                    t
                } else if connected {
                    procs.uplink_access(t, level, &mut r)
                } else {
                    grant_from
                };
                let extra = if connected { 0 } else { MSG5_HEADER_BITS };
                let end = procs.uplink_granted(from, bits + extra, level_now, &mut r);
                built = Some(end.built);
                (end.delivered, end.free, Some(p))
            }
            Job::Down(p, bits) => {
                let from = if connected {
                    t
                } else {
                    // Msg5 (the service request) before the data.
                    procs
                        .uplink(grant_from, MSG5_HEADER_BITS, level_now, &mut r)
                        .1
                };
                let (exit, done) = procs.downlink(from, bits, level_now, &mut r);
                (exit, done, Some(p))
            }
            Job::Tau => {
                // Msg5 carrying the TAU request; the TAU accept on the downlink.
                let up = procs
                    .uplink(grant_from, MSG5_HEADER_BITS, level_now, &mut r)
                    .1;
                let (_, done) = procs.downlink(up, MSG5_HEADER_BITS, level_now, &mut r);
                (done, done, None)
            }
        };
        if !connected {
            if resume {
                self.counters.rrc_resumes += 1;
            } else {
                self.counters.rrc_setups += 1;
            }
        }
        if paged {
            self.counters.pagings += 1;
        }
        if job == Job::Tau {
            self.counters.tracking_area_updates += 1;
        }
        if reported {
            self.counters.bsr_grants += 1;
        }
        let dev = &mut self.devices[d as usize];
        dev.account.add(r);
        if built.is_some() {
            dev.bsr_at = built;
        }
        if matches!(job, Job::Down(..)) && dev.rai_armed && dev.ul.is_empty() {
            dev.rai_armed = false;
            dev.rai_release = true;
        }
        if job == Job::Tau && self.params.rai {
            dev.rai_release = true;
        }
        if let Some(p) = packet {
            self.schedule(q, at(exit), CellKind::Exit, d, p);
        }
        self.schedule(q, at(done), CellKind::Done, d, 0);
    }

    /// The time one packet of `ip_bytes` takes from an idle device at `level` through set-up
    /// and its uplink, alone on the carrier without block errors, ms (the run guard's bound).
    pub fn lone_uplink_ms(params: &CellParams, level: usize, ip_bytes: u32) -> u64 {
        let mut p = params.clone();
        p.levels = vec![level as u8];
        p.bler = [0.0; LEVELS];
        let mut cell = Cell::new(p, 0, Xoshiro256pp::seed_from_u64(0));
        let mut r = Radio::default();
        let mut procs = cell.procs(None);
        let (l, from) = procs.connect(0, level, &mut r);
        procs
            .uplink(
                from,
                ip_bytes * 8 + L2_OVERHEAD_BITS + MSG5_HEADER_BITS,
                l,
                &mut r,
            )
            .0
    }
}
