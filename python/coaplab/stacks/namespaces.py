"""The network namespaces of an emulated run (docs/emulation.md): creating, addressing and
deleting them, the kernel TCP set up inside them from the scenario, the processes started in
them, and the clean-up of all of it on an error, on SIGINT / SIGTERM / SIGHUP and at exit.

A run has two namespaces (clients, server), each with one TUN device that ``coaplab-emulator``
owns. Traffic stays inside them: the client namespace holds 10.0.0.1, 10.0.0.2, … and the server
namespace 192.0.2.1 (TEST-NET-1), each with a route to the other only through its TUN.
:mod:`coaplab.stacks.emulate` runs emulations in them, :mod:`coaplab.stacks.crossval` compares them with the
simulator.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import platform
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CoaplabError

#: The TUN device's name inside each namespace.
TUN = "coaplab0"


def log(msg: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"coaplab: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Environment checks

def check_environment() -> None:
    """Refuses (one line, exit 2 via CoaplabError) what emulation cannot run without."""
    if os.geteuid() != 0:
        raise CoaplabError("emulate: needs root (network namespaces and TUN devices); run as root or with sudo")
    if shutil.which("ip") is None:
        raise CoaplabError("emulate: the 'ip' command (iproute2) is missing; install iproute2")
    if not os.path.exists("/dev/net/tun"):
        raise CoaplabError("emulate: /dev/net/tun is missing; load the tun module (modprobe tun)")


def kernel_congestion_list(which: str) -> list[str]:
    """``/proc/sys/net/ipv4/tcp_<which>_congestion_control`` (``available``: what the kernel
    has; ``allowed``: what unprivileged sockets and non-initial namespaces' defaults may pick)."""
    try:
        return Path(f"/proc/sys/net/ipv4/tcp_{which}_congestion_control").read_text().split()
    except OSError:
        return []


def check_kernel_congestion(name: str) -> None:
    """Refuses (one line) a kernel TCP congestion control the kernel does not have (root is
    :func:`check_environment`'s to check: it sets it per socket (setsockopt TCP_CONGESTION) and per route (congctl), so the host's
    ``tcp_allowed_congestion_control`` does not bind; a kernel without it does)."""
    available = kernel_congestion_list("available")
    if name not in available:
        raise CoaplabError(f"the kernel's TCP congestion control {name!r}: this kernel does not have it (tcp_available_congestion_control: "
                           f"{' '.join(available) or 'unreadable'}); load it as root (modprobe tcp_{name}) or pick one of those")


def kernel() -> str:
    return f"{platform.system()} {platform.release()}"


# --------------------------------------------------------------------------------------------
# Cleanup of everything a run creates

_live_namespaces: set[str] = set()
_live_procs: set[subprocess.Popen] = set()


def stop_process(p: subprocess.Popen, grace: float = 5.0) -> None:
    """Ends one process we started: SIGTERM, then SIGKILL after `grace` seconds."""
    if p.stdin is not None and not p.stdin.closed:
        try:
            p.stdin.close()  # the emulator may be waiting for START: EOF ends that wait
        except OSError:
            pass
    if p.poll() is None:
        try:
            p.terminate()
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=5)
        except ProcessLookupError:
            pass
    _live_procs.discard(p)


def _del_netns(name: str) -> None:
    subprocess.run(["ip", "netns", "del", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    _live_namespaces.discard(name)


def cleanup() -> None:
    """Stops every process and deletes every namespace this process created (idempotent)."""
    for p in list(_live_procs):
        stop_process(p, grace=2.0)
    for ns in list(_live_namespaces):
        _del_netns(ns)


atexit.register(cleanup)


#: Signals that end an emulation the way SIGTERM does (clean-up first): SIGHUP is what a closed
#: terminal or an ended SSH session sends, and its default action would kill us at once.
_TERMINATING = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


class Signals:
    """While active, SIGTERM and SIGHUP raise SystemExit (so that `finally` blocks clean up)
    and SIGINT raises KeyboardInterrupt (Python's default, restored in case it was changed)."""

    def __enter__(self):
        self._old = {s: signal.getsignal(s) for s in (signal.SIGINT, *_TERMINATING)}

        def term(signum, frame):
            raise SystemExit(128 + signum)

        for s in _TERMINATING:
            signal.signal(s, term)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return self

    def __exit__(self, *exc):
        for s, h in self._old.items():
            signal.signal(s, h)
        return False


def remove_stale_namespaces() -> list[str]:
    """Deletes namespaces an earlier coaplab process created and could not remove (it was
    killed with SIGKILL): names ``coaplab-<pid>-<hex>-{c,s}`` whose process is gone."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    removed = []
    for line in out.splitlines():
        m = re.fullmatch(r"(coaplab-(\d+)-[0-9a-f]{6}-[cs])", line.split()[0]) if line.split() else None
        if m and int(m.group(2)) != os.getpid() and not os.path.exists(f"/proc/{m.group(2)}"):
            subprocess.run(["ip", "netns", "del", m.group(1)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            removed.append(m.group(1))
    return removed


def _ip(*args: str, ns: str | None = None, check: bool = True) -> None:
    cmd = ["ip"] + (["-n", ns] if ns else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if check and r.returncode != 0:
        raise CoaplabError(f"emulate: `{' '.join(cmd)}` failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")


def _sysctl(ns: str, key: str, value: Any) -> None:
    r = subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}={value}"],
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise CoaplabError(f"emulate: cannot set {key}={value} in the namespace: {r.stderr.strip()}")


def client_address(i: int) -> str:
    """Client `i`'s address (as ``coaplab_emulator::client_addr``): 10.0.0.1, 10.0.0.2, …"""
    v = 0x0A000000 + i + 1
    return ".".join(str((v >> s) & 255) for s in (24, 16, 8, 0))


SERVER_ADDRESS = "192.0.2.1"


@dataclass
class Namespaces:
    """A client and a server namespace with a unique per-run prefix."""

    prefix: str = field(default_factory=lambda: f"coaplab-{os.getpid()}-{secrets.token_hex(3)}")

    @property
    def client(self) -> str:
        return f"{self.prefix}-c"

    @property
    def server(self) -> str:
        return f"{self.prefix}-s"

    def create(self) -> None:
        for stale in remove_stale_namespaces():
            log(f"removed namespace {stale} left behind by a killed coaplab process")
        for ns in (self.client, self.server):
            _ip("netns", "add", ns)
            _live_namespaces.add(ns)
            _ip("link", "set", "lo", "up", ns=ns)

    def configure(self, clients: int, mtu: int, tcp: TcpSetup | None) -> None:
        """Addresses, MTU, routes (with the TCP route options) and TCP sysctls, once the
        emulator has created the TUN devices."""
        c, s = self.client, self.server
        batch = "".join(f"address add {client_address(i)}/32 dev {TUN}\n" for i in range(clients))
        r = subprocess.run(["ip", "-n", c, "-batch", "-"], input=batch, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise CoaplabError(f"emulate: adding client addresses failed: {r.stderr.strip()}")
        _ip("link", "set", TUN, "mtu", str(mtu), "up", ns=c)
        _ip("address", "add", f"{SERVER_ADDRESS}/32", "dev", TUN, ns=s)
        _ip("link", "set", TUN, "mtu", str(mtu), "up", ns=s)
        opts = tcp.route_options() if tcp else []
        _ip("route", "add", "192.0.2.0/24", "dev", TUN, *opts, ns=c)
        _ip("route", "add", "10.0.0.0/16", "dev", TUN, *opts, ns=s)
        if tcp:
            for ns in (c, s):
                for k, v in tcp.sysctls().items():
                    _sysctl(ns, k, v)

    def delete(self) -> None:
        for ns in (self.client, self.server):
            _del_netns(ns)


@dataclass
class TcpSetup:
    """The namespaces' kernel TCP, configured from the scenario's ``[tcp]`` section as far as
    Linux lets it be set (docs/emulation.md lists what maps and what cannot)."""

    congestion: str = "reno"
    initial_window: int = 4
    syn_retries: int = 6
    synack_retries: int = 5
    delayed_ack_ms: float = 200.0
    ack_every_segment: bool = False
    mss: int = 256

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> TcpSetup:
        t = cfg.get("tcp") or {}
        cc = cfg["coap"]["cc"]
        return cls(
            congestion={"newreno": "reno"}.get(cc, cc),
            initial_window=int(t.get("initial_window", 4)),
            # Linux takes at most 127 retries; the model's 40 / 41 both exceed what a run lasts.
            syn_retries=min(int(t.get("syn_retries", 6)), 127),
            synack_retries=min(int(t.get("synack_retries", 5)), 255),
            delayed_ack_ms=float(t.get("delayed_ack_ms", 200.0)),
            ack_every_segment=bool(t.get("ack_every_segment", False)),
            mss=int(cfg["link"]["mtu"]) - 40,
        )

    def sysctls(self) -> dict[str, Any]:
        # The congestion control is set per route (congctl) and per socket (the endpoints'
        # setsockopt TCP_CONGESTION), not as the namespace's default: a namespace's default may
        # only name what the host's tcp_allowed_congestion_control lists (cubic is often not),
        # which root's per-socket choice does not need; the default is then only a fallback.
        # The model has no SACK, timestamps, F-RTO, TLP or RACK (docs/model.md); its receive
        # window never limits, so window scaling stays on (without it Linux's 64 KB window of
        # 256-byte segments and their buffer overhead slowed the 14100-byte-buffer firmware
        # transfer by 6 % instead of 2 %); metrics caching across connections would carry one
        # run's ssthresh into the next.
        out: dict[str, Any] = {}
        if self.congestion in kernel_congestion_list("allowed"):
            out["net.ipv4.tcp_congestion_control"] = self.congestion
        return out | {
            "net.ipv4.tcp_sack": 0,
            "net.ipv4.tcp_dsack": 0,
            "net.ipv4.tcp_timestamps": 0,
            "net.ipv4.tcp_window_scaling": 1,
            "net.ipv4.tcp_frto": 0,
            "net.ipv4.tcp_early_retrans": 0,
            "net.ipv4.tcp_recovery": 0,
            "net.ipv4.tcp_no_metrics_save": 1,
            "net.ipv4.tcp_syn_retries": self.syn_retries,
            "net.ipv4.tcp_synack_retries": self.synack_retries,
        }

    def like_for_like(self) -> bool:
        """Whether the kernel's receiver follows the model's ACK rule: only when both acknowledge
        every segment at once (route ``quickack 1``); Linux's own policy cannot be set to the
        model's default delayed ACK (docs/emulation.md)."""
        return self.delayed_ack_ms == 0 or self.ack_every_segment

    def route_options(self) -> list[str]:
        opts = ["initcwnd", str(self.initial_window), "advmss", str(self.mss), "congctl", self.congestion]
        # RTAX_QUICKACK makes tcp_in_quickack_mode() true for every segment (net/ipv4/tcp_input.c,
        # __tcp_ack_snd_check): Linux then acknowledges each segment at once, which is what the
        # model does with either setting. Without it the kernel's own policy (quick-ACK mode at
        # the start among other immediate-ACK rules, delayed ACKs otherwise) sits between the
        # model's two rules.
        if self.like_for_like():
            opts += ["quickack", "1"]
        return opts


# --------------------------------------------------------------------------------------------
# Processes started in the namespaces

#: prctl(2) option: the signal a process receives when its parent dies
#: (<linux/prctl.h> PR_SET_PDEATHSIG = 1).
PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Runs in the child between fork and exec: asks the kernel to SIGKILL it when coaplab dies
    (prctl(2), PR_SET_PDEATHSIG), so that after a SIGKILL of coaplab — which runs no clean-up —
    the emulator, servers and clients do not run on. The setting survives the exec of
    ``ip netns exec`` and of the command ip executes in its place."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the prctl: go now
        os._exit(1)


def popen(cmd: list[str], **kw) -> subprocess.Popen:
    # PR_SET_PDEATHSIG fires when the creating *thread* ends: only set it from the main thread,
    # which lives as long as the process.
    if sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread():
        parent = os.getpid()
        kw.setdefault("preexec_fn", lambda: _die_with_parent(parent))
    p = subprocess.Popen(cmd, **kw)
    _live_procs.add(p)
    return p


def in_ns(ns: str, cmd: list[str]) -> list[str]:
    return ["ip", "netns", "exec", ns] + cmd
