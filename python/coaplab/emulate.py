"""Real stacks on the simulator's link: ``coaplab emulate`` and ``coaplab crossval``
(docs/emulation.md).

One emulated run = two network namespaces created for it (clients, server), one TUN device in
each owned by ``coaplab-emulator`` (the engine's network model on the wall clock), a server
endpoint in the server namespace and the clients in the client namespace. Endpoints are
coaplab's own (``coaplab-endpoint``: the simulator's CoAP client over real UDP sockets, CoAP over
the kernel's TCP) or third-party stacks (libcoap's ``coap-client`` and ``coap-server``, aiocoap, Californium; see
:mod:`coaplab.thirdparty`). Everything the run creates — namespaces, the devices in them,
processes — is removed when it ends, on an error, on SIGINT / SIGTERM and at exit.

Traffic stays inside the namespaces: the client namespace holds 10.0.0.1, 10.0.0.2, … and the
server namespace 192.0.2.1 (TEST-NET-1), each with a route to the other only through its TUN.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import platform
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import thirdparty
from .errors import CoaplabError
from .pcapseq import time_sequence_points
from .runner import engine_run, run_scenario
from .scenario import config_id, file_stem, load_scenario
from .stacks import CLIENT_KINDS, SERVER_KINDS
from .stats import PERCENTILE_KEYS, summarize
from .store import ResultsDB, sequence_points
from .thirdparty import LIBCOAP_MAX_RESOURCE, LIBCOAP_MAX_RESPONSE, californium_check, libcoap_tool

#: The TUN device's name inside each namespace.
TUN = "coaplab0"
#: Delivery lateness p99 beyond which a run is marked invalid (µs).
DEFAULT_LATE_US = 1000.0

_REPO = Path(__file__).resolve().parents[2]


def _log(msg: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"coaplab: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Environment checks and the Rust binaries

def check_environment() -> None:
    """Refuses (one line, exit 2 via CoaplabError) what emulation cannot run without."""
    if os.geteuid() != 0:
        raise CoaplabError("emulate: needs root (network namespaces and TUN devices); run as root or with sudo")
    if shutil.which("ip") is None:
        raise CoaplabError("emulate: the 'ip' command (iproute2) is missing; install iproute2")
    if not os.path.exists("/dev/net/tun"):
        raise CoaplabError("emulate: /dev/net/tun is missing; load the tun module (modprobe tun)")


def binaries(build: bool = True) -> tuple[Path, Path]:
    """``coaplab-emulator`` and ``coaplab-endpoint``: ``$COAPLAB_EMULATOR_DIR``, a checkout's
    ``target/release`` (built with ``cargo build --release -p coaplab-emulator`` when missing
    and cargo is there, as ``scripts/setup.sh`` does), the package's own ``bin/`` (what an
    installed wheel carries; in a checkout only a copy made for the wheel, hence second), or the
    PATH."""
    names = ("coaplab-emulator", "coaplab-endpoint")
    dirs = ([Path(d) for d in [os.environ.get("COAPLAB_EMULATOR_DIR")] if d]
            + [_REPO / "target" / "release", Path(__file__).resolve().parent / "bin"])
    for d in dirs:
        if all((d / n).is_file() for n in names):
            return d / names[0], d / names[1]
    found = [shutil.which(n) for n in names]
    if all(found):
        return Path(found[0]), Path(found[1])  # type: ignore[arg-type]
    if build and shutil.which("cargo") and (_REPO / "crates" / "emulator").is_dir():
        _log("building coaplab-emulator (cargo build --release -p coaplab-emulator) ...")
        r = subprocess.run(["cargo", "build", "--release", "-q", "-p", "coaplab-emulator"], cwd=_REPO, check=False)
        if r.returncode == 0:
            return binaries(build=False)
    raise CoaplabError("emulate: coaplab-emulator is not built; run `cargo build --release -p coaplab-emulator` "
                       "(scripts/setup.sh does) or set COAPLAB_EMULATOR_DIR")


def kernel() -> str:
    return f"{platform.system()} {platform.release()}"


# --------------------------------------------------------------------------------------------
# Cleanup of everything a run creates

_live_namespaces: set[str] = set()
_live_procs: set[subprocess.Popen] = set()


def _stop(p: subprocess.Popen, grace: float = 5.0) -> None:
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
        _stop(p, grace=2.0)
    for ns in list(_live_namespaces):
        _del_netns(ns)


atexit.register(cleanup)


#: Signals that end an emulation the way SIGTERM does (clean-up first): SIGHUP is what a closed
#: terminal or an ended SSH session sends, and its default action would kill us at once.
_TERMINATING = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


class _Signals:
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
            _log(f"removed namespace {stale} left behind by a killed coaplab process")
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
        # The model has no SACK, timestamps, F-RTO, TLP or RACK (docs/model.md); its receive
        # window never limits, so window scaling stays on (without it Linux's 64 KB window of
        # 256-byte segments and their buffer overhead slowed the 14100-byte-buffer firmware
        # transfer by 6 % instead of 2 %); metrics caching across connections would carry one
        # run's ssthresh into the next.
        return {
            "net.ipv4.tcp_congestion_control": self.congestion,
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
# One emulated run

@dataclass
class EmulatedRun:
    result: dict[str, Any]          # simulator-shaped result (stats.summarize understands it)
    emulator: dict[str, Any]        # the emulator's report (lateness, packets, real-time)
    valid: bool
    directory: Path | None          # the run's files, when the caller gave a directory to keep them


def _wait_ready(p: subprocess.Popen, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    assert p.stdout is not None
    os.set_blocking(p.stdout.fileno(), False)
    buf = b""
    while time.monotonic() < deadline:
        chunk = p.stdout.read()
        if chunk:
            buf += chunk
            if b"READY" in buf:
                return
        if p.poll() is not None:
            err = log.read_text(errors="replace").strip()
            raise CoaplabError(f"emulate: the emulator stopped at start: {err.splitlines()[-1] if err else p.returncode}")
        time.sleep(0.02)
    raise CoaplabError("emulate: the emulator did not become ready within 10 s")


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


def _popen(cmd: list[str], **kw) -> subprocess.Popen:
    # PR_SET_PDEATHSIG fires when the creating *thread* ends: only set it from the main thread,
    # which lives as long as the process.
    if sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread():
        parent = os.getpid()
        kw.setdefault("preexec_fn", lambda: _die_with_parent(parent))
    p = subprocess.Popen(cmd, **kw)
    _live_procs.add(p)
    return p


def _in_ns(ns: str, cmd: list[str]) -> list[str]:
    return ["ip", "netns", "exec", ns] + cmd


def _clients(cfg: dict[str, Any]) -> int:
    w = cfg["workload"]
    return w["background"] + (w.get("burst_clients") or 0) if w["kind"] == "burst" else w["clients"]


def check_supported(cfg: dict[str, Any], client: str, server: str) -> None:
    """Refuses what emulation does not run (yet), before anything is created."""
    if cfg.get("group"):
        raise CoaplabError("emulate: client groups ([[group]]) are not supported in emulation yet")
    if client not in CLIENT_KINDS:
        raise CoaplabError(f"--client: {client!r}; allowed: {', '.join(CLIENT_KINDS)}")
    if server not in SERVER_KINDS:
        raise CoaplabError(f"--server: {server!r}; allowed: {', '.join(SERVER_KINDS)}")
    w, transport = cfg["workload"], cfg["coap"]["transport"]
    if transport == "tcp" and (client, server) != ("coaplab", "coaplab"):
        raise CoaplabError("emulate: over TCP only coaplab's endpoints run so far (--client coaplab --server coaplab)")
    if transport == "tcp" and w["kind"] not in ("continuous", "firmware"):
        raise CoaplabError(f"workload.kind: {w['kind']!r} over TCP is not emulated yet; allowed: continuous, firmware")
    if server != "coaplab" and cfg["coap"]["cc"] == "fasor-rc":
        raise CoaplabError(f"coap.cc: 'fasor-rc' with --server {server} is not emulated: only coaplab's server echoes "
                           "FASOR's Rexmit-Cnt option; use --server coaplab or another algorithm")
    if server == "libcoap":
        if w["kind"] == "firmware" and w["resource_bytes"] > LIBCOAP_MAX_RESOURCE:
            raise CoaplabError(f"workload.resource_bytes: {w['resource_bytes']} with --server libcoap; allowed: at most "
                               f"{LIBCOAP_MAX_RESOURCE} (the resource is loaded into coap-server's memory)")
        if w["kind"] != "firmware" and w["response_bytes"] > LIBCOAP_MAX_RESPONSE:
            raise CoaplabError(f"workload.response_bytes: {w['response_bytes']} with --server libcoap; allowed: at most "
                               f"{LIBCOAP_MAX_RESPONSE} (libcoap answers larger bodies block-wise)")

        libcoap_tool("server"), libcoap_tool("client")  # both are needed: the client loads the server
    if "californium" in (client, server):
        californium_check(cfg, client, server)
    if client != "coaplab" and not (w["kind"] == "firmware" or (w["kind"] == "continuous" and w.get("duration_s") is None)):
        raise CoaplabError(f"workload.kind: {w['kind']!r} with --client {client} is not emulated yet; "
                           "allowed: firmware, continuous with exchanges")


def run_one(cfg: dict[str, Any], replication: int, *, client: str = "coaplab", server: str = "coaplab",
            out_dir: str | Path | None = None, max_seconds: float = 600.0, late_us: float = DEFAULT_LATE_US,
            tcp_congestion: str | None = None, quiet: bool = True) -> EmulatedRun:
    """Runs replication `replication` of the resolved configuration `cfg` on the emulated link.

    Every loop is bounded: the clients stop after `max_seconds`, the emulator 30 s later."""
    check_environment()
    check_supported(cfg, client, server)
    # Without an output directory the run's files (captures, reports, logs) live in a private
    # temporary directory that goes when the run does, error or not.
    own_work = out_dir is None
    work = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="coaplab-emulate-"))
    try:
        work.mkdir(parents=True, exist_ok=True)
        return _run_in(cfg, replication, work, client=client, server=server, max_seconds=max_seconds,
                       late_us=late_us, tcp_congestion=tcp_congestion, kept=not own_work)
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)


def _run_in(cfg: dict[str, Any], replication: int, work: Path, *, client: str, server: str,
            max_seconds: float, late_us: float, tcp_congestion: str | None, kept: bool) -> EmulatedRun:
    transport = cfg["coap"]["transport"]
    emu_bin, ep_bin = binaries()
    os.environ["COAPLAB_ENDPOINT"] = str(ep_bin)  # third-party client drivers ask it for start offsets
    cfg_path = work / "config.json"
    cfg_path.write_text(json.dumps(cfg))
    for stale in ("emulator.json", "clients.json", "server.json"):
        (work / stale).unlink(missing_ok=True)  # a reused --out directory: never read old reports
    n = _clients(cfg)
    ns = Namespaces()
    procs: list[subprocess.Popen] = []
    started = time.monotonic()
    try:
        ns.create()
        emu = _popen([str(emu_bin), "--config", str(cfg_path), "--replication", str(replication),
                      "--client-ns", f"/run/netns/{ns.client}", "--server-ns", f"/run/netns/{ns.server}",
                      "--tun", TUN, "--out", str(work), "--max-seconds", str(max_seconds + 30),
                      "--late-us", str(late_us), "--wait-start"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(work / "emulator.log", "wb"))  # noqa: SIM115 - the child writes it
        procs.append(emu)
        _wait_ready(emu, 10.0, work / "emulator.log")
        tcp = TcpSetup.from_config(cfg) if transport == "tcp" else None
        if tcp and tcp_congestion:
            tcp.congestion = tcp_congestion
        ns.configure(n, int(cfg["link"]["mtu"]), tcp)

        srv_cmd = (thirdparty.server_command(server, cfg, cfg_path, max_seconds + 20) if server != "coaplab"
                   else [str(ep_bin), f"{transport}-server", "--config", str(cfg_path), "--max-seconds", str(max_seconds + 20),
                         "--out", str(work / "server.json")])
        srv = _popen(_in_ns(ns.server, srv_cmd), stdout=subprocess.DEVNULL, stderr=open(work / "server.log", "wb"))  # noqa: SIM115 - the child writes it
        procs.append(srv)
        thirdparty.wait_listening(ns.server, transport, timeout=10.0)
        thirdparty.prepare_server(server, ns.server, cfg, work)
        # Time 0 for the emulator and the clients alike (CLOCK_MONOTONIC is system-wide): the
        # clients start at their simulated offsets from it, and the loss chains' state changes
        # fall at the same instants as in a simulated run.
        epoch = time.monotonic_ns() + int(thirdparty.start_lead_s(client) * 1e9)
        assert emu.stdin is not None
        emu.stdin.write(f"START {epoch}\n".encode())
        emu.stdin.flush()
        out_json = work / "clients.json"
        if client == "coaplab":
            cl_cmd = [str(ep_bin), f"{transport}-clients", "--config", str(cfg_path), "--replication",
                      str(replication), "--out", str(out_json), "--max-seconds", str(max_seconds), "--epoch-ns", str(epoch)]
        else:
            cl_cmd = thirdparty.client_command(client, cfg, replication, cfg_path, out_json, max_seconds, epoch)
        cl = _popen(_in_ns(ns.client, cl_cmd), stdout=subprocess.DEVNULL, stderr=open(work / "clients.log", "wb"))  # noqa: SIM115 - the child writes it
        procs.append(cl)
        try:
            cl.wait(timeout=max_seconds + 30)
        except subprocess.TimeoutExpired:
            _stop(cl)
        if cl.returncode not in (0, None):
            err = (work / "clients.log").read_text(errors="replace").strip().splitlines()
            raise CoaplabError(f"emulate: the {client} clients failed: {err[-1] if err else cl.returncode}")
        # Let the last packets in flight drain, then stop the emulator cleanly (its report).
        time.sleep(0.2)
        _stop(srv)
        _stop(emu, grace=10.0)
        if not (work / "emulator.json").exists():
            raise CoaplabError("emulate: the emulator wrote no report; see " + str(work / "emulator.log"))
        report = json.loads((work / "emulator.json").read_text())
        clients = json.loads(out_json.read_text())
        server_json = work / "server.json"
        if transport == "tcp" and server_json.exists():
            # The server sends the data: its sockets' retransmissions belong to the client's row.
            by_addr = {c["address"]: c.get("tcp_info") or {} for c in json.loads(server_json.read_text())["connections"]}
            for c in clients["clients"]:
                if c and c.get("address") in by_addr:
                    c["server_tcp_info"] = by_addr[c["address"]]
    finally:
        for p in reversed(procs):
            _stop(p, grace=3.0)
        ns.delete()
    result = _result(cfg, replication, clients, report, time.monotonic() - started)
    if transport == "tcp" and cfg.get("trace"):
        result["seq_traces"] = _emulated_seq_traces(work)
    result["emulation"] = {
        "client": client, "server": server, "kernel": kernel(), "transport": transport,
        "tcp_congestion": tcp.congestion if tcp else None,
        "lateness_us": report["lateness_us"], "valid": report["valid"], "realtime": report["realtime"],
        "directory": str(work) if kept else None,
    }
    return EmulatedRun(result=result, emulator=report, valid=bool(report["valid"]), directory=work if kept else None)


def _emulated_seq_traces(work: Path) -> list[dict[str, Any]]:
    """The time-sequence trace of client 0's first connection read from the run's captures, in
    the simulator's ``seq_traces`` shape (points ``[time_s, "down", event, seq, length]``), so
    that the results database, ``export`` and ``report`` treat it as a simulated trace. One
    connection: the captures are gone after the run unless ``--out`` keeps them."""
    try:
        pts = time_sequence_points(work, client_address(0))
    except CoaplabError:
        return []  # client 0 never connected: nothing to draw
    pts.sort(key=lambda p: p["time_s"])  # one time order, as the simulator records them
    return [{"client": 0, "connection": 0,
             "points": [[p["time_s"], "down", p["event"], p["seq"], p["length"]] for p in pts]}]


def _kernel_retrans(c: dict[str, Any]) -> int:
    """Segments the kernel retransmitted on a client's connection, both ends (TCP_INFO)."""
    return sum(int((c.get(k) or {}).get("total_retrans") or 0) for k in ("tcp_info", "server_tcp_info"))


def _result(cfg: dict[str, Any], replication: int, clients: dict[str, Any], report: dict[str, Any],
            wall: float) -> dict[str, Any]:
    """The run in the simulator's result shape (stats.summarize, the results database)."""
    rows: list[dict[str, Any]] = []
    hist: list[int] = []
    tcp = clients["transport"] == "tcp"
    for c in clients["clients"]:
        if not c:
            continue
        h = c.get("histogram") or []
        for k, v in enumerate(h):
            if k >= len(hist):
                hist.extend([0] * (k + 1 - len(hist)))
            hist[k] += v
        completed = int(c.get("completed") or 0)
        rows.append({
            "client": int(c["client"]), "fct_s": c.get("fct_s"), "first_request_s": c.get("first_request_s"),
            "last_end_s": c.get("last_end_s"), "exchanges_completed": completed,
            "exchanges_failed": int(c.get("failed") or 0) if not tcp else int(bool(c.get("failed"))),
            "retransmissions": int(c.get("retransmissions") or 0) + _kernel_retrans(c),
            # Which retransmissions were unnecessary needs the simulator's ground truth.
            "unnecessary_retransmissions": 0,
            "timeouts": int(c.get("timeouts") or 0), "duplicate_responses": int(c.get("duplicate_responses") or 0),
            **({"tcp": {"connections": 1, "segments_retransmitted": _kernel_retrans(c)}} if tcp else {}),
        })
    firsts = [r["first_request_s"] for r in rows if r["first_request_s"] is not None]
    lasts = [r["last_end_s"] for r in rows if r["last_end_s"] is not None]
    period = max(lasts) - min(firsts) if firsts and lasts else 0.0
    completed = sum(r["exchanges_completed"] for r in rows)
    p = dict(report["packets"])
    return {
        "seed": cfg["seed"], "replication": replication, "events": int(report["events"]),
        "sim_time_s": float(report["period_s"]), "measured_period_s": period,
        "throughput_exchanges_per_s": completed / period if period > 0 else 0.0, "settling_time_s": None,
        "retransmission_histogram": hist, "packets": p, "clients": rows,
        "tcp": ({"connections": len(rows), "segments_retransmitted": sum(r["tcp"]["segments_retransmitted"] for r in rows)}
                if tcp else None),
        "wall_s": wall,
    }


# --------------------------------------------------------------------------------------------
# Scenarios: emulate, crossval

#: What joins a simulated configuration's id to the endpoints in its emulated counterpart's.
EMULATED_MARK = "-emu-"


def emulation_id(config_id: str, client: str, server: str) -> str:
    """Identity of an emulated configuration in the results database: the simulated one's plus
    the endpoints, so that emulated and simulated runs never overwrite each other."""
    return f"{config_id}{EMULATED_MARK}{client}-{server}"


def progress_text(done: int, total: int, elapsed_s: float) -> str:
    """Where a sequence of emulated runs stands: ``run 3 of 12, 1 min 4 s elapsed, about 3 min 12 s
    left`` — the estimate from the mean wall time of the runs done so far (runs last in real
    time, so the past ones predict the rest well); none before the first has finished."""
    def clock(s: float) -> str:
        s = round(s)
        return f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s"

    text = f"run {done + 1} of {total}, {clock(elapsed_s)} elapsed"
    if done:
        text += f", about {clock(elapsed_s / done * (total - done))} left"
    return text


def emulate(scenario: str | Path | dict[str, Any], *, client: str = "coaplab", server: str = "coaplab",
            db: str | None = None, replications: int | None = None, out_dir: str | Path | None = None,
            max_seconds: float = 600.0, late_us: float = DEFAULT_LATE_US, progress: bool = True,
            tcp_congestion: str | None = None, on_run: Callable[[dict[str, Any], int, EmulatedRun], None] | None = None) -> list[dict[str, Any]]:
    """Emulates every configuration × replication of a scenario (one run at a time: the
    emulator needs the CPU) and returns one summary per configuration, as ``coaplab run`` does,
    with an ``emulation`` entry (endpoints, kernel, lateness, invalid runs)."""
    check_environment()
    sc = load_scenario(scenario)
    for cfg in sc.iter_configurations():
        check_supported(cfg, client, server)
    summaries = []
    with _Signals():
        store = None
        if db is not None:
            store = ResultsDB(db)
        try:
            configs = sc.configurations()
            total = sum(min(replications or c["replications"], c["replications"]) for c in configs)
            done, started = 0, time.monotonic()
            for cfg in configs:
                cid = config_id(cfg)
                reps = min(replications or cfg["replications"], cfg["replications"])
                runs, invalid, lateness, t0 = [], 0, [], time.monotonic()
                for r in range(reps):
                    _log(f"emulating {cfg['name']} [{cid}] replication {r + 1}/{reps} "
                         f"({client} clients, {server} server); "
                         f"{progress_text(done, total, time.monotonic() - started)}", quiet=not progress)
                    done += 1
                    d = Path(out_dir) / f"{cid}-r{r}" if out_dir else None
                    run = run_one(cfg, r, client=client, server=server, out_dir=d, max_seconds=max_seconds,
                                  late_us=late_us, tcp_congestion=tcp_congestion)
                    if not run.valid:
                        invalid += 1
                        _log(f"warning: replication {r}: delivery lateness p99 {run.emulator['lateness_us']['p99']:.0f} µs "
                             f"> {late_us:.0f} µs: run marked invalid", quiet=not progress)
                    lateness.append(run.emulator["lateness_us"])
                    runs.append(run.result)
                    if store is not None:
                        eid = emulation_id(cid, client, server) + (f"-{tcp_congestion}" if tcp_congestion else "")
                        store.add_configs([(eid, cfg)], "emulated")
                        store.delete_run(eid, r)
                        store.store([(eid, cfg, r, run.result, None, run.result["wall_s"])], "emulator", "emulated")
                        store.mark_emulated(eid, r, endpoint=f"{client}/{server}", kernel=kernel(),
                                            details=run.result["emulation"])
                    if on_run:
                        on_run(cfg, r, run)
                s = summarize(cfg, cid, runs, time.monotonic() - t0)
                s["swept"] = sc.swept_values(cfg)
                s["emulation"] = {
                    "client": client, "server": server, "kernel": kernel(), "invalid_runs": invalid,
                    "tcp_congestion": (tcp_congestion or "reno") if cfg["coap"]["transport"] == "tcp" else None,
                    "lateness_us_p99_max": max((x["p99"] for x in lateness), default=0.0),
                    "lateness_us_mean": (sum(x["mean"] for x in lateness) / len(lateness)) if lateness else 0.0,
                }
                summaries.append(s)
        finally:
            if store is not None:
                store.close()
            cleanup()
    return summaries


def _pct(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "-"
    if a == 0:
        return "0.0%" if b == 0 else "n/a"
    return f"{(b - a) / a * 100:+.1f}%"


def _f(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def emulation_table(summaries: list[dict[str, Any]]) -> str:
    out = []
    for s in summaries:
        c, e = s["config"], s["emulation"]
        swept = ", ".join(f"{k}={v}" for k, v in s.get("swept", {}).items())
        tcp = f", kernel TCP {e['tcp_congestion']}" if e.get("tcp_congestion") else ""
        out.append(f"{c['name']}  [{s['config_id']}] emulated ({e['client']} clients, {e['server']} server{tcp}, {e['kernel']})"
                   + (f"  {swept}" if swept else ""))
        out.append("  FCT s        " + "  ".join(f"{k:>8}" for k in PERCENTILE_KEYS))
        out.append("               " + "  ".join(f"{_f(s['fct_s'][k]):>8}" for k in PERCENTILE_KEYS))
        if s.get("tcp"):
            out.append(f"  TCP: {s['tcp']['connections']} connections, {s['tcp']['segments_retransmitted']} segments retransmitted (kernel)")
        elif e["client"] not in CLIENTS_WITH_RETRANSMISSIONS:
            out.append(f"  retransmissions per exchange  {UNKNOWN} ({e['client']} does not tell its retransmissions)")
        else:
            out.append("  retransmissions per exchange  " + ", ".join(f"{k}:{n}" for k, n in enumerate(s["retransmission_histogram"][:12])))
        p = s["packets"]
        out.append(f"  exchanges {s['exchanges_completed']} completed, {s['exchanges_failed']} failed;"
                   f" packets sent {p.get('sent', 0)}, dropped at buffer {p.get('dropped_buffer', 0)}, lost to errors {p.get('lost_link', 0)}")
        out.append(f"  lateness: mean {e['lateness_us_mean']:.0f} µs, worst p99 {e['lateness_us_p99_max']:.0f} µs;"
                   f" {e['invalid_runs']} of {s['replications']} runs invalid")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


#: Clients whose retransmissions per exchange are known: coaplab's endpoint counts them; a
#: third-party stack's own retransmissions are not visible from outside (`coaplab.tp_clients`).
CLIENTS_WITH_RETRANSMISSIONS = ("coaplab",)
#: Shown for what an emulated run could not measure (never 0, which would read as measured).
UNKNOWN = "n/a"


def crossval_rows(sim: dict[str, Any], emu: dict[str, Any]) -> list[tuple[str, Any, Any, str]]:
    """(metric, simulated, emulated, difference) for one configuration; the emulated value and
    the difference are "n/a" where the emulated client cannot tell (a third-party client's
    retransmissions)."""
    known = (emu.get("emulation") or {}).get("client", "coaplab") in CLIENTS_WITH_RETRANSMISSIONS

    rows: list[tuple[str, Any, Any, str]] = []
    for k in PERCENTILE_KEYS:
        a, b = sim["fct_s"][k], emu["fct_s"][k]
        rows.append((f"FCT {k} s", a, b, _pct(a, b)))
    if sim.get("tcp"):
        a, b = sim["tcp"]["segments_retransmitted"], emu["tcp"]["segments_retransmitted"]
        rows.append(("TCP segments retransmitted", a, b, f"{b - a:+d}"))
    else:
        a = sum(k * n for k, n in enumerate(sim["retransmission_histogram"]))
        if known:
            b = sum(k * n for k, n in enumerate(emu["retransmission_histogram"]))
            rows.append(("retransmissions (completed exchanges)", a, b, f"{b - a:+d}"))
        else:
            rows.append(("retransmissions (completed exchanges)", a, UNKNOWN, UNKNOWN))
    for key, label in (("exchanges_completed", "exchanges completed"), ("exchanges_failed", "exchanges failed")):
        rows.append((label, sim[key], emu[key], f"{emu[key] - sim[key]:+d}"))
    for key, label in (("sent", "packets sent"), ("dropped_buffer", "dropped at buffer"), ("lost_link", "lost to errors")):
        a, b = int(sim["packets"].get(key, 0)), int(emu["packets"].get(key, 0))
        rows.append((label, a, b, f"{b - a:+d}"))
    if not sim.get("tcp"):
        hs, he = sim["retransmission_histogram"], emu["retransmission_histogram"] if known else []
        for n in range(max(len(hs), len(he))):
            a = hs[n] if n < len(hs) else 0
            if not known:
                rows.append((f"exchanges with {n} retransmissions", a, UNKNOWN, UNKNOWN))
                continue
            b = he[n] if n < len(he) else 0
            rows.append((f"exchanges with {n} retransmissions", a, b, f"{b - a:+d}"))
    return rows


#: Printed by ``crossval`` for TCP configurations whose receivers follow different ACK rules.
ACK_RULE_NOTE = ("note: the model's receiver delays ACKs (every second segment, else 200 ms) and the kernel's "
                 "follows its own policy, so ACK counts and early slow start differ; for a like-for-like "
                 "comparison set [tcp] ack_every_segment = true (docs/emulation.md, \"Like for like\")")


def crossval(scenario: str | Path | dict[str, Any], *, client: str = "coaplab", server: str = "coaplab",
             db: str | None = None, replications: int | None = None, out_dir: str | Path | None = None,
             max_seconds: float = 600.0, late_us: float = DEFAULT_LATE_US, progress: bool = True,
             tcp_congestion: str | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Runs the scenario in the simulator and in emulation (same replications, same RNG
    streams); returns (simulated summary, emulated summary) per configuration."""
    check_environment()
    sc = load_scenario(scenario)
    for cfg in sc.iter_configurations():
        check_supported(cfg, client, server)
    raw = dict(sc.raw)
    if replications is not None:
        raw["replications"] = min(replications, int(raw.get("replications", 1)))
    if sc.sweep:
        raw["sweep"] = sc.sweep
    if progress and any(_like_for_like(c) is False for c in sc.iter_configurations()):
        _log(ACK_RULE_NOTE)
    sim = run_scenario(raw, progress=False, db=db).summaries
    emu = emulate(raw, client=client, server=server, db=db, out_dir=out_dir, max_seconds=max_seconds,
                  late_us=late_us, progress=progress, tcp_congestion=tcp_congestion)
    pairs = list(zip(sim, emu))
    if out_dir is not None:
        for s, e in pairs:
            if s["config"]["coap"]["transport"] == "tcp":
                name = "Linux" + (f" {tcp_congestion}" if tcp_congestion else "")
                path = crossval_time_sequence(s["config"], s["config_id"], out_dir, label=f"emulated ({name})")
                e["emulation"]["time_sequence_svg"] = str(path)
        crossval_report(pairs, out_dir)
    return pairs


def _like_for_like(cfg: dict[str, Any]) -> bool | None:
    """Whether the model's and the kernel's receivers follow one ACK rule; None over UDP."""
    return TcpSetup.from_config(cfg).like_for_like() if cfg["coap"]["transport"] == "tcp" else None


def _ack_rule(cfg: dict[str, Any]) -> str:
    """The crossval report's sentence on the receivers' ACK rules (TCP only)."""
    return {None: "",
            True: " ACK rule: both sides acknowledge every segment (like for like).",
            False: " ACK rule: the model delays ACKs, the kernel follows its own policy (not like for like)."}[_like_for_like(cfg)]


def crossval_report(pairs: list[tuple[dict[str, Any], dict[str, Any]]], out_dir: str | Path) -> Path:
    """Writes ``out_dir/crossval.md``: the report section of a cross-validation — per
    configuration, the metrics side by side (:func:`crossval_rows`) as a Markdown table, the
    emulator's lateness and validity, the endpoints and kernel, and for TCP the overlaid
    time-sequence graphs of replication 0 (linked relative to ``out_dir``)."""
    out = ["# Cross-validation: simulated vs emulated", ""]
    for sim, emu in pairs:
        e = emu["emulation"]
        swept = ", ".join(f"`{k}` = {v}" for k, v in emu.get("swept", {}).items())
        out += [f"## {sim['name']} `{sim['config_id']}`" + (f" — {swept}" if swept else ""), "",
                f"{e['client']} clients, {e['server']} server, {sim['replications']} replications; "
                f"emulator lateness mean {e['lateness_us_mean']:.0f} µs, worst p99 {e['lateness_us_p99_max']:.0f} µs; "
                f"{e['invalid_runs']} of {emu['replications']} emulated runs invalid; kernel {e['kernel']}."
                + _ack_rule(sim["config"]),
                "", "| metric | simulated | emulated | difference |", "|---|---:|---:|---:|"]
        out += [f"| {label} | {_f(a)} | {_f(b)} | {d} |" for label, a, b, d in crossval_rows(sim, emu)]
        if e.get("time_sequence_svg"):
            rel = Path(e["time_sequence_svg"]).name
            out += ["", f"![simulated and emulated time-sequence graphs, replication 0]({rel})"]
        out.append("")
    path = Path(out_dir) / "crossval.md"
    path.write_text("\n".join(out))
    return path


def simulated_time_sequence(cfg: dict[str, Any], replication: int = 0, client: int = 0,
                            connection: int = 0) -> list[dict[str, Any]]:
    """The simulator's server → client time-sequence points of one connection (the
    ``connection``-th of client ``client``) of one replication: the run again with
    ``trace = true`` (tracing records, it changes no result)."""
    out = json.loads(engine_run(json.dumps(dict(cfg, trace=True)), replication, None))
    mine = [t for t in out.get("seq_traces") or [] if t["client"] == client]
    if connection >= len(mine):
        raise CoaplabError(f"the simulated run has no connection {connection} of client {client}")

    return sequence_points(mine[connection])


def crossval_time_sequence(cfg: dict[str, Any], cid: str, out_dir: str | Path, replication: int = 0,
                           label: str = "emulated (Linux)") -> Path:
    """Writes ``out_dir/<scenario name>-<config_id>-rep<r>-time-sequence.svg``: the simulated and
    the emulated time-sequence graphs (server → client, client 0's first connection) of
    replication ``r`` of a TCP configuration on one axis, the emulated one read from the run's
    captures in ``out_dir/<config_id>-r<r>`` (:func:`coaplab.pcapseq.time_sequence_points`)."""
    from .figures import time_sequence_overlay  # lazy: matplotlib (compare imports this module)

    sim = simulated_time_sequence(cfg, replication)
    emu = time_sequence_points(Path(out_dir) / f"{cid}-r{replication}", client_address(0))
    caption = f"{cfg['name']} [{cid}], replication {replication}: server → client, connection 0"
    fig = time_sequence_overlay(sim, emu, caption, labels=("simulated", label))
    # The scenario name is user text: reduced as pcap / trace names are (no "/", no "."), so the
    # file stays inside out_dir.
    return fig.save(Path(out_dir) / f"{file_stem(cfg['name'])}-{cid}-rep{replication}-time-sequence.svg")


def crossval_table(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    out = []
    for sim, emu in pairs:
        e = emu["emulation"]
        swept = ", ".join(f"{k}={v}" for k, v in emu.get("swept", {}).items())
        out.append(f"{sim['name']}  [{sim['config_id']}]" + (f"  {swept}" if swept else "")
                   + f"  simulated vs emulated ({e['client']} clients, {e['server']} server), {sim['replications']} replications")
        out.append(f"  {'metric':<38} {'simulated':>12} {'emulated':>12} {'difference':>11}")
        for label, a, b, d in crossval_rows(sim, emu):
            out.append(f"  {label:<38} {_f(a):>12} {_f(b):>12} {d:>11}")
        out.append(f"  lateness: mean {e['lateness_us_mean']:.0f} µs, worst p99 {e['lateness_us_p99_max']:.0f} µs;"
                   f" {e['invalid_runs']} of {emu['replications']} emulated runs invalid")
        if e.get("time_sequence_svg"):
            out.append(f"  time-sequence graphs (replication 0, simulated and emulated): {e['time_sequence_svg']}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
