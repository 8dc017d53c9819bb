//! # coaplab-emulator — the simulator's network on real packets
//!
//! Two binaries (docs/emulation.md):
//! - `coaplab-emulator` owns a TUN device in a client network namespace and one in a server
//!   namespace, and moves every IP packet between them through the scenario's network — the
//!   engine's own `net::network` built by `net::topology` (drop-tail buffer, serializer,
//!   propagation, Gilbert–Elliott loss after serialization, router ↔ server path delay, the
//!   same RNG streams) — driven by the wall clock.
//! - `coaplab-endpoint` runs coaplab's CoAP endpoints over real sockets: the engine's sans-IO
//!   CoAP client (timers from `coaplab-cc`) over UDP, and CoAP over kernel TCP (RFC 8323).
//!
//! This file holds what both share: the monotonic clock, a reactor (epoll + an absolute
//! timerfd deadline + a short busy-wait), real-time scheduling, TUN devices in namespaces, and
//! a tiny argument parser.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use coaplab_cc::Instant;
use coaplab_engine::net::network::{NetEvent, Scheduler};

/// Monotonic clock, nanoseconds.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall clock (UNIX epoch), nanoseconds: for pcap timestamps.
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Waits for readable file descriptors or an absolute monotonic deadline. Far deadlines
/// sleep on a timerfd armed `busy_ns` early (TFD_TIMER_ABSTIME: no drift from relative
/// timeouts); the last `busy_ns` are spent polling, so the wake-up is not at the mercy of the
/// scheduler's timer slack.
pub struct Reactor {
    ep: RawFd,
    tfd: RawFd,
    busy_ns: u64,
    armed: u64,
}

const TIMER_TOKEN: u64 = u64::MAX;

impl Reactor {
    pub fn new(busy_ns: u64) -> io::Result<Self> {
        // SAFETY: plain syscalls; the descriptors are owned by the reactor.
        unsafe {
            let ep = cvt(libc::epoll_create1(libc::EPOLL_CLOEXEC))?;
            let tfd = cvt(libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            ))?;
            let r = Reactor {
                ep,
                tfd,
                busy_ns,
                armed: 0,
            };
            r.add(tfd, TIMER_TOKEN)?;
            Ok(r)
        }
    }

    /// Watches `fd` for input; `token` comes back from [`Reactor::wait`].
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: valid epoll descriptor and event.
        cvt(unsafe { libc::epoll_ctl(self.ep, libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    /// Returns when a watched descriptor is readable (its tokens in `ready`), when `deadline`
    /// (monotonic ns) has come, after at most `max_sleep_ns`, or on a signal.
    pub fn wait(&mut self, deadline: Option<u64>, max_sleep_ns: u64, ready: &mut Vec<u64>) {
        ready.clear();
        let now = mono_ns();
        let deadline = deadline.unwrap_or(u64::MAX).min(now + max_sleep_ns);
        if deadline <= now {
            self.poll(0, ready);
            return;
        }
        if deadline - now > self.busy_ns {
            let wake = deadline - self.busy_ns;
            if wake != self.armed {
                self.arm(wake);
            }
            self.poll(-1, ready);
            if !ready.is_empty() || mono_ns() + self.busy_ns < deadline {
                return; // input, or an early return (signal)
            }
        }
        // Busy phase: poll without sleeping until input or the deadline.
        while mono_ns() < deadline {
            self.poll(0, ready);
            if !ready.is_empty() || stop_requested() {
                return;
            }
            std::hint::spin_loop();
        }
    }

    fn arm(&mut self, at_ns: u64) {
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: valid timerfd and itimerspec.
        unsafe {
            libc::timerfd_settime(
                self.tfd,
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        self.armed = at_ns;
    }

    fn poll(&mut self, timeout_ms: i32, ready: &mut Vec<u64>) {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 16];
        // SAFETY: `evs` has room for 16 events.
        let n = unsafe { libc::epoll_wait(self.ep, evs.as_mut_ptr(), 16, timeout_ms) };
        for ev in evs.iter().take(n.max(0) as usize) {
            if ev.u64 == TIMER_TOKEN {
                let mut buf = [0u8; 8];
                // SAFETY: reading the 8-byte expiration count of the timerfd.
                unsafe { libc::read(self.tfd, buf.as_mut_ptr().cast(), 8) };
                self.armed = 0;
            } else {
                ready.push(ev.u64);
            }
        }
    }
}

impl Drop for Reactor {
    fn drop(&mut self) {
        // SAFETY: the reactor owns both descriptors.
        unsafe {
            libc::close(self.tfd);
            libc::close(self.ep);
        }
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Installs SIGINT / SIGTERM handlers that only set the stop flag (the loops check it and
/// finish cleanly: reports written, descriptors closed).
pub fn install_stop_handlers() {
    // SAFETY: the handler only stores to an atomic (async-signal-safe).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = 0; // no SA_RESTART: blocking calls return EINTR
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    }
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// What real-time setup achieved.
#[derive(Clone, Debug, Default)]
pub struct RealTime {
    pub sched_fifo: bool,
    pub mlockall: bool,
    pub warnings: Vec<String>,
}

/// SCHED_FIFO at `priority` and all memory locked, where allowed; warnings otherwise.
pub fn go_realtime(priority: i32) -> RealTime {
    let mut rt = RealTime::default();
    // SAFETY: plain syscalls on the calling process.
    unsafe {
        let param = libc::sched_param {
            sched_priority: priority,
        };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 {
            rt.sched_fifo = true;
        } else {
            rt.warnings.push(format!(
                "SCHED_FIFO not allowed ({}): running at normal priority, expect more lateness",
                io::Error::last_os_error()
            ));
        }
        if libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) == 0 {
            rt.mlockall = true;
        } else {
            rt.warnings.push(format!(
                "mlockall not allowed ({}): page faults may delay packets",
                io::Error::last_os_error()
            ));
        }
    }
    rt
}

/// Opens a TUN device `name` (IFF_TUN | IFF_NO_PI: reads and writes are bare IP packets)
/// inside the network namespace `netns` (a path such as `/run/netns/NAME`); the calling
/// thread returns to its own namespace afterwards. The device lives as long as the file.
pub fn open_tun_in(netns: &str, name: &str) -> io::Result<File> {
    let own = File::open("/proc/thread-self/ns/net")?;
    let target = File::open(netns)
        .map_err(|e| io::Error::new(e.kind(), format!("network namespace {netns}: {e}")))?;
    // SAFETY: setns on descriptors we own; we switch back below in every case.
    cvt(unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) })?;
    let tun = open_tun(name);
    // SAFETY: as above.
    let back = cvt(unsafe { libc::setns(own.as_raw_fd(), libc::CLONE_NEWNET) });
    back?;
    tun
}

fn open_tun(name: &str) -> io::Result<File> {
    const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("interface name '{name}': 1 to 15 bytes"),
        ));
    }
    // SAFETY: open/ioctl with a properly sized, zeroed ifreq.
    unsafe {
        let fd = libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        );
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("/dev/net/tun: {e}")));
        }
        let file = File::from_raw_fd(fd);
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
            *d = s as libc::c_char;
        }
        ifr.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
        cvt(libc::ioctl(fd, TUNSETIFF as _, &mut ifr))?;
        Ok(file)
    }
}

/// Reads one packet from a non-blocking descriptor; `None` when nothing is waiting.
pub fn read_packet(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: `buf` is valid for `buf.len()` bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(n as usize))
}

/// Writes one packet (a TUN write is one whole packet).
pub fn write_packet(fd: RawFd, pkt: &[u8]) -> io::Result<()> {
    // SAFETY: `pkt` is valid for its length.
    let n = unsafe { libc::write(fd, pkt.as_ptr().cast(), pkt.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `--key value` arguments (and bare `--flag`s, value "true").
pub struct Args {
    pub command: Option<String>,
    map: HashMap<String, String>,
}

impl Args {
    pub fn parse(with_command: bool) -> Result<Args, String> {
        let mut it = std::env::args().skip(1).peekable();
        let command = if with_command { it.next() } else { None };
        let mut map = HashMap::new();
        while let Some(a) = it.next() {
            let Some(key) = a.strip_prefix("--") else {
                return Err(format!(
                    "unexpected argument '{a}'; options are --key value"
                ));
            };
            let value = match it.peek() {
                Some(v) if !v.starts_with("--") => it.next().unwrap_or_default(),
                _ => "true".to_string(),
            };
            map.insert(key.to_string(), value);
        }
        Ok(Args { command, map })
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(String::as_str)
    }

    pub fn req(&self, key: &str) -> Result<&str, String> {
        self.get(key).ok_or_else(|| format!("--{key} is required"))
    }

    pub fn num<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, String> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{key}: '{v}' is not a number")),
        }
    }
}

/// The `q`-quantile (nearest rank) of sorted values.
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Address of client `i` in the client namespace: 10.0.0.1, 10.0.0.2, … (10.0.0.0/16).
pub fn client_addr(i: u32) -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::from(0x0A00_0000u32 + i + 1)
}

/// The client an IPv4 packet belongs to: its source address on the uplink (`upstream`), its
/// destination on the downlink, when that is `client_addr(i)` with `i < clients`.
pub fn client_of(ipv4: &[u8], upstream: bool, clients: usize) -> Option<usize> {
    // RFC 791 §3.1: source address at bytes 12..16, destination at 16..20.
    let at = if upstream { 12 } else { 16 };
    let addr: [u8; 4] = ipv4.get(at..at + 4)?.try_into().ok()?;
    let i = u32::from_be_bytes(addr).checked_sub(u32::from(client_addr(0)))? as usize;
    (i < clients).then_some(i)
}

/// The server's address in the server namespace (TEST-NET-1, as in the simulator's pcap).
pub const SERVER_ADDR: std::net::Ipv4Addr = std::net::Ipv4Addr::new(192, 0, 2, 1);
pub const COAP_PORT: u16 = 5683;
/// The clients' UDP / TCP source port, as in the simulator's pcap.
pub const CLIENT_PORT: u16 = 49152;

/// The network's events in time order (ties: scheduling order, as the simulator's queue), in
/// nanoseconds since the run's start.
#[derive(Default)]
pub struct NetQueue {
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    events: Vec<Option<NetEvent>>,
    free: Vec<usize>,
    seq: u64,
}

impl Scheduler for NetQueue {
    fn schedule_net(&mut self, at: Instant, event: NetEvent) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.events[s] = Some(event);
                s
            }
            None => {
                self.events.push(Some(event));
                self.events.len() - 1
            }
        };
        self.seq += 1;
        self.heap.push(Reverse((at.nanos(), self.seq, slot)));
    }
}

impl NetQueue {
    /// When the earliest event is due (ns since the run's start).
    pub fn next_at(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((at, _, _))| *at)
    }
    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(u64, NetEvent)> {
        let Reverse((at, _, slot)) = self.heap.pop()?;
        self.free.push(slot);
        Some((at, self.events[slot].take().expect("scheduled event")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_in_time_order_ties_in_scheduling_order() {
        let mut q = NetQueue::default();
        q.schedule_net(Instant::from_nanos(30), NetEvent::TxDone(0));
        q.schedule_net(Instant::from_nanos(10), NetEvent::TxDone(1));
        q.schedule_net(Instant::from_nanos(30), NetEvent::TxDone(2));
        q.schedule_net(Instant::from_nanos(20), NetEvent::TxDone(3));
        assert_eq!(q.next_at(), Some(10));
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|(at, e)| match e {
                NetEvent::TxDone(i) => (at, i),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![(10, 1), (20, 3), (30, 0), (30, 2)]);
        // Slots are reused: a new event after draining is still found.
        q.schedule_net(Instant::from_nanos(5), NetEvent::TxDone(9));
        assert_eq!(q.pop().map(|(at, _)| at), Some(5));
    }

    #[test]
    fn nearest_rank_quantiles() {
        // 10 values 1..=10: p50 = rank ceil(5) = 5 → 5; p99 = rank ceil(9.9) = 10 → 10.
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(quantile(&v, 0.5), 5);
        assert_eq!(quantile(&v, 0.99), 10);
        assert_eq!(quantile(&v, 0.0), 1);
        assert_eq!(quantile(&[], 0.5), 0);
    }

    #[test]
    fn packets_map_to_their_client() {
        // A 20-byte IPv4 header: source 10.0.0.3 (bytes 12..16), destination 192.0.2.1.
        let mut h = [0u8; 20];
        h[0] = 0x45;
        h[12..16].copy_from_slice(&[10, 0, 0, 3]);
        h[16..20].copy_from_slice(&[192, 0, 2, 1]);
        // 10.0.0.3 = client_addr(2) (10.0.0.1 is client 0).
        assert_eq!(client_of(&h, true, 3), Some(2));
        assert_eq!(client_of(&h, true, 2), None); // only clients 0 and 1 exist
        assert_eq!(client_of(&h, false, 3), None); // 192.0.2.1 is the server
        h[16..20].copy_from_slice(&[10, 0, 1, 44]); // 10.0.1.44 = client 299 (see below)
        assert_eq!(client_of(&h, false, 300), Some(299));
        assert_eq!(client_of(&h[..15], true, 3), None); // truncated header
    }

    #[test]
    fn client_addresses() {
        assert_eq!(client_addr(0).to_string(), "10.0.0.1");
        // 10.0.0.0 + 300 = 10.0.1.44 (300 = 256 + 44).
        assert_eq!(client_addr(299).to_string(), "10.0.1.44");
    }
}
