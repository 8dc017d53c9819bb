"""Real stacks on the simulator's link: ``coaplab emulate`` (docs/emulation.md); ``coaplab
crossval`` is :mod:`coaplab.stacks.crossval`, the namespaces and processes :mod:`coaplab.stacks.namespaces`.

One emulated run = two network namespaces created for it (clients, server), one TUN device in
each owned by ``coaplab-emulator`` (the engine's network model on the wall clock), a server
endpoint in the server namespace and the clients in the client namespace. Endpoints are
coaplab's own (``coaplab-endpoint``: the simulator's CoAP client over real UDP sockets, CoAP over
the kernel's TCP) or third-party stacks (libcoap's ``coap-client`` and ``coap-server``, aiocoap, Californium; see
:mod:`coaplab.stacks.thirdparty`). Everything the run creates — namespaces, the devices in them,
processes — is removed when it ends, on an error, on SIGINT / SIGTERM and at exit.

Traffic stays inside the namespaces: the client namespace holds 10.0.0.1, 10.0.0.2, … and the
server namespace 192.0.2.1 (TEST-NET-1), each with a route to the other only through its TUN.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import shipped
from ..analyse.stats import PERCENTILE_KEYS, summarize
from ..describe.scenario import config_id, load_scenario
from ..errors import CoaplabError
from ..execute.store import EMULATED_MARK, ResultsDB
from ..execute.supervise import check_plugin  # noqa: F401 - its import: a scenario's plug-ins load in a worker
from . import CLIENT_KINDS, SERVER_KINDS, pcapcoap, thirdparty, tp_dtls, tp_workloads
from .namespaces import (
    TUN,
    Namespaces,
    Signals,
    TcpSetup,
    check_environment,
    check_kernel_congestion,
    cleanup,
    client_address,
    in_ns,
    kernel,
    log,
    popen,
    stop_process,
)
from .pcapseq import time_sequence_points
from .thirdparty import LIBCOAP_MAX_RESOURCE, LIBCOAP_MAX_RESPONSE, californium_check, libcoap_tool

#: Clients whose retransmissions per exchange are known: coaplab's endpoint counts them; a
#: third-party stack's own retransmissions are not visible from outside (`coaplab.stacks.tp_clients`).
CLIENTS_WITH_RETRANSMISSIONS = ("coaplab",)
#: Shown for what an emulated run could not measure (never 0, which would read as measured).
UNKNOWN = "n/a"


#: Delivery lateness p99 beyond which a run is marked invalid (µs).
DEFAULT_LATE_US = 1000.0


# --------------------------------------------------------------------------------------------
# Environment checks and the Rust binaries

def binaries(build: bool = True) -> tuple[Path, Path]:
    """``coaplab-emulator`` and ``coaplab-endpoint``: ``$COAPLAB_EMULATOR_DIR`` when set, else the
    installed package's own (``coaplab/_shipped/bin``, what every wheel carries), else a
    checkout's ``target/release`` (built with ``cargo build --release -p coaplab-emulator`` when
    missing and cargo is there, as ``scripts/setup.sh`` does): :func:`coaplab.shipped.binary_dirs`."""
    names = shipped.BINARIES
    override = os.environ.get("COAPLAB_EMULATOR_DIR")
    dirs = [Path(override)] if override else shipped.binary_dirs()
    for d in dirs:
        if all((d / n).is_file() for n in names):
            return d / names[0], d / names[1]
    if override:
        raise CoaplabError(f"emulate: COAPLAB_EMULATOR_DIR={override!r} holds no coaplab-emulator and "
                           "coaplab-endpoint; unset it or point it at a directory with both")
    if build and shutil.which("cargo") and shipped.in_checkout():
        log("building coaplab-emulator (cargo build --release -p coaplab-emulator) ...")
        r = subprocess.run(["cargo", "build", "--release", "-q", "-p", "coaplab-emulator"], cwd=shipped.REPO, check=False)
        if r.returncode == 0:
            return binaries(build=False)
    if shipped.in_checkout():
        raise CoaplabError("emulate: coaplab-emulator is not built; run `cargo build --release -p coaplab-emulator` "
                           "(scripts/setup.sh does)")
    raise CoaplabError("emulate: this coaplab has no coaplab-emulator (coaplab/_shipped/bin is missing); "
                       "reinstall it from a wheel, an sdist or a source tree (README.md, \"Install\")")


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


def _clients(cfg: dict[str, Any]) -> int:
    w = cfg["workload"]
    return w["background"] + (w.get("burst_clients") or 0) if w["kind"] == "burst" else w["clients"]


def check_supported(cfg: dict[str, Any], client: str, server: str, tcp_congestion: str | None = None,
                    tp_workload: str | None = None) -> None:
    """Refuses what emulation does not run (yet), before anything is created; over TCP also a
    kernel congestion control (``tcp_congestion``, else the scenario's) the kernel lacks."""
    if cfg.get("group"):
        raise CoaplabError("emulate: client groups ([[group]]) are not supported in emulation yet")
    cc = cfg["coap"]["cc"]
    if isinstance(cc, str) and cc.startswith(("python:", "c:")):
        raise CoaplabError(f"coap.cc: {cc!r} is not emulated: the emulator's endpoints run built-in algorithms only "
                           "(coaplab._core.algorithms()); run python:/c: algorithms in the simulator (coaplab run)")
    if client not in CLIENT_KINDS:
        raise CoaplabError(f"--client: {client!r}; allowed: {', '.join(CLIENT_KINDS)}")
    if server not in SERVER_KINDS:
        raise CoaplabError(f"--server: {server!r}; allowed: {', '.join(SERVER_KINDS)}")
    w, transport = cfg["workload"], cfg["coap"]["transport"]
    tp_dtls.check(cfg, client, server)  # coap.security: libcoap against libcoap only (docs/emulation.md "DTLS")
    tp_workloads.check(cfg, client, server, tp_workload)  # --tp-workload (docs/emulation.md "Observe, libcoap")
    if transport == "tcp" and (client, server) != ("coaplab", "coaplab"):
        raise CoaplabError("emulate: over TCP only coaplab's endpoints run so far (--client coaplab --server coaplab)")
    if transport == "tcp" and w["kind"] not in ("continuous", "firmware"):
        raise CoaplabError(f"workload.kind: {w['kind']!r} over TCP is not emulated yet; allowed: continuous, firmware")
    if transport == "tcp":
        check_kernel_congestion(tcp_congestion or TcpSetup.from_config(cfg).congestion)
    if server not in ("coaplab", "californium") and cfg["coap"]["cc"] == "fasor-rc":
        raise CoaplabError(f"coap.cc: 'fasor-rc' with --server {server} is not emulated: its server does not echo "
                           "FASOR's Rexmit-Cnt option; use --server coaplab or californium, or another algorithm")
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
    if w["kind"] == "reporting":
        raise CoaplabError("workload.kind: 'reporting' is not emulated yet (coaplab-endpoint makes no TR 45.820 "
                           "reports or exception reports); allowed: continuous, random, burst, firmware, periodic")
    if client != "coaplab" and tp_workload is None and not (w["kind"] == "firmware" or (w["kind"] == "continuous" and w.get("duration_s") is None)):
        raise CoaplabError(f"workload.kind: {w['kind']!r} with --client {client} is not emulated yet; "
                           "allowed: firmware, continuous with exchanges")


def check_span(cfg: dict[str, Any], max_seconds: float) -> None:
    """A workload that lasts ``workload.duration_s`` (``periodic``, ``continuous`` by duration)
    longer than ``--max-seconds`` is refused: its clients would be stopped before it ends."""
    span = cfg["workload"].get("duration_s")
    if span is not None and span > max_seconds:
        raise CoaplabError(f"workload.duration_s: {span:g} s is longer than --max-seconds {max_seconds:g}: the emulated "
                           "clients would stop before the workload ends; allowed: at most --max-seconds (raise it)")


def check_tcp_congestion(configs: list[dict[str, Any]], tcp_congestion: str | None) -> None:
    """``--tcp-congestion`` is the kernel's TCP congestion control: refused (one line) when no
    configuration runs over TCP, where it would be accepted and mean nothing."""
    if tcp_congestion and not any(c["coap"]["transport"] == "tcp" for c in configs):
        raise CoaplabError(f"--tcp-congestion {tcp_congestion}: the scenario runs no configuration over TCP; allowed "
                           "only with coap.transport = \"tcp\" (drop the option for a UDP scenario)")


#: A run's private temporary directory (no --out): this prefix, in the system's temporary
#: directory, holding OWNER_FILE, the PID of the coaplab process that made it. A killed
#: emulate (SIGKILL) cannot remove its own: the next one removes those whose owner is gone.
WORK_PREFIX = "coaplab-emulate-"
OWNER_FILE = "owner.pid"


def remove_stale_work_dirs(root: str | Path | None = None) -> list[Path]:
    """Removes the private directories (WORK_PREFIX) under ``root`` (default: the system's
    temporary directory) whose owning process is gone; returns them. Directories without an
    owner record, or whose owner lives, are left alone."""
    removed = []
    for d in Path(root or tempfile.gettempdir()).glob(WORK_PREFIX + "*"):
        try:
            pid = int((d / OWNER_FILE).read_text().strip())
        except (OSError, ValueError):
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
        except OSError:  # alive, another user's
            continue
    return removed


def private_work_dir() -> Path:
    """A new private directory for one run's files, its owner recorded (stale ones removed first)."""
    remove_stale_work_dirs()
    work = Path(tempfile.mkdtemp(prefix=WORK_PREFIX))
    (work / OWNER_FILE).write_text(f"{os.getpid()}\n")
    return work


def run_one(cfg: dict[str, Any], replication: int, *, client: str = "coaplab", server: str = "coaplab",
            out_dir: str | Path | None = None, max_seconds: float = 600.0, late_us: float = DEFAULT_LATE_US,
            tcp_congestion: str | None = None, quiet: bool = True, tp_workload: str | None = None) -> EmulatedRun:
    """Runs replication `replication` of the resolved configuration `cfg` on the emulated link.

    Every loop is bounded: the clients stop after `max_seconds`, the emulator 30 s later."""
    check_environment()
    check_supported(cfg, client, server, tcp_congestion, tp_workload)
    # Without an output directory the run's files (captures, reports, logs) live in a private
    # temporary directory that goes when the run does, error or not.
    own_work = out_dir is None
    work = Path(out_dir) if out_dir else private_work_dir()
    try:
        work.mkdir(parents=True, exist_ok=True)
        return _run_in(cfg, replication, work, client=client, server=server, max_seconds=max_seconds,
                       late_us=late_us, tcp_congestion=tcp_congestion, kept=not own_work, tp_workload=tp_workload)
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)


def _run_in(cfg: dict[str, Any], replication: int, work: Path, *, client: str, server: str,
            max_seconds: float, late_us: float, tcp_congestion: str | None, kept: bool,
            tp_workload: str | None = None) -> EmulatedRun:
    transport = cfg["coap"]["transport"]
    emu_bin, ep_bin = binaries()
    os.environ["COAPLAB_ENDPOINT"] = str(ep_bin)  # third-party client drivers ask it for start offsets
    cfg_path = work / "config.json"
    cfg_path.write_text(json.dumps(cfg))
    for stale in ("emulator.json", "clients.json", "server.json"):
        (work / stale).unlink(missing_ok=True)  # a reused --out directory: never read old reports
    n = _clients(cfg)
    ns = Namespaces()
    observed: list[str] = []
    procs: list[subprocess.Popen] = []
    started = time.monotonic()
    try:
        ns.create()
        emu = popen([str(emu_bin), "--config", str(cfg_path), "--replication", str(replication),
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

        # Per socket too (setsockopt TCP_CONGESTION, as root): the namespace's default may only
        # name what the host allows unprivileged sockets (TcpSetup.sysctls).
        per_socket = ["--tcp-congestion", tcp.congestion] if tcp else []
        srv_cmd = (thirdparty.server_command(server, cfg, cfg_path, max_seconds + 20) + tp_workloads.server_args(tp_workload)
                   if server != "coaplab"
                   else [str(ep_bin), f"{transport}-server", "--config", str(cfg_path), "--max-seconds", str(max_seconds + 20),
                         "--out", str(work / "server.json"), *per_socket])
        srv = popen(in_ns(ns.server, srv_cmd), stdout=subprocess.DEVNULL, stderr=open(work / "server.log", "wb"))  # noqa: SIM115 - the child writes it
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
                      str(replication), "--out", str(out_json), "--max-seconds", str(max_seconds), "--epoch-ns", str(epoch),
                      *per_socket]
        else:
            cl_cmd = thirdparty.client_command(client, cfg, replication, cfg_path, out_json, max_seconds, epoch)
            cl_cmd += [tp_workload] if tp_workload else []
        cl = popen(in_ns(ns.client, cl_cmd), stdout=subprocess.DEVNULL, stderr=open(work / "clients.log", "wb"))  # noqa: SIM115 - the child writes it
        procs.append(cl)
        try:
            cl.wait(timeout=max_seconds + 30)
        except subprocess.TimeoutExpired:
            stop_process(cl)
        if cl.returncode not in (0, None):
            err = (work / "clients.log").read_text(errors="replace").strip().splitlines()
            raise CoaplabError(f"emulate: the {client} clients failed: {err[-1] if err else cl.returncode}")
        # Let the last packets in flight drain, then stop the emulator cleanly (its report).
        time.sleep(0.2)
        stop_process(srv)
        stop_process(emu, grace=10.0)
        if not (work / "emulator.json").exists():
            raise CoaplabError("emulate: the emulator wrote no report; see " + str(work / "emulator.log"))
        report = json.loads((work / "emulator.json").read_text())
        clients = json.loads(out_json.read_text())
        server_json = work / "server.json"
        if transport == "tcp" and server_json.exists():
            # The server sends the data: its sockets' retransmissions belong to the client's row.
            by_addr = {c["address"]: c.get("tcp_info") or {} for c in json.loads(server_json.read_text())["connections"]}
            # What the kernel ran, read back from each server socket (getsockopt TCP_CONGESTION).
            observed = sorted({str(i["congestion"]) for i in by_addr.values() if i.get("congestion")})
            for c in clients["clients"]:
                if c and c.get("address") in by_addr:
                    c["server_tcp_info"] = by_addr[c["address"]]
    finally:
        for p in reversed(procs):
            stop_process(p, grace=3.0)
        ns.delete()
    # DTLS: the handshakes, exchanges and bytes read from the captures (docs/emulation.md "DTLS").
    dtls = pcapcoap.dtls_summary(work, thirdparty.SERVER, tp_dtls.DTLS_PORT) if tp_dtls.security(cfg) == "dtls1.2" else None
    observe = pcapcoap.observe_summary(work, thirdparty.SERVER, 5683) if tp_workload == "observe" else None
    result = _result(cfg, replication, clients, report, time.monotonic() - started)
    if transport == "tcp" and cfg.get("trace"):
        result["seq_traces"] = _emulated_seq_traces(work)
    result["emulation"] = {
        "client": client, "server": server, "kernel": kernel(), "transport": transport,
        "tcp_congestion": tcp.congestion if tcp else None,
        "tcp_congestion_sockets": observed if tcp else None,
        "lateness_us": report["lateness_us"], "valid": report["valid"], "realtime": report["realtime"],
        "directory": str(work) if kept else None,
    }
    if dtls is not None:
        result["emulation"]["dtls"] = dtls
    if observe is not None:
        result["emulation"]["observe"] = observe
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
        # A cell's counters, from the emulator's copy of the simulator's cell (docs/networks.md).
        **({"cell": report["cell"]} if report.get("cell") else {}),
    }


# --------------------------------------------------------------------------------------------
# Scenarios: emulate, crossval

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
            tcp_congestion: str | None = None, on_run: Callable[[dict[str, Any], int, EmulatedRun], None] | None = None,
            tp_workload: str | None = None) -> list[dict[str, Any]]:
    """Emulates every configuration × replication of a scenario (one run at a time: the
    emulator needs the CPU) and returns one summary per configuration, as ``coaplab run`` does,
    with an ``emulation`` entry (endpoints, kernel, lateness, invalid runs)."""
    check_environment()
    sc = load_scenario(scenario)
    for cfg in sc.iter_configurations():
        check_supported(cfg, client, server, tcp_congestion, tp_workload)
        check_span(cfg, max_seconds)
    check_tcp_congestion(sc.configurations(), tcp_congestion)
    summaries = []
    with Signals():
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
                    log(f"emulating {cfg['name']} [{cid}] replication {r + 1}/{reps} "
                         f"({client} clients, {server} server); "
                         f"{progress_text(done, total, time.monotonic() - started)}", quiet=not progress)
                    done += 1
                    d = Path(out_dir) / f"{cid}-r{r}" if out_dir else None
                    run = run_one(cfg, r, client=client, server=server, out_dir=d, max_seconds=max_seconds,
                                  late_us=late_us, tcp_congestion=tcp_congestion, tp_workload=tp_workload)
                    if not run.valid:
                        invalid += 1
                        log(f"warning: replication {r}: delivery lateness p99 {run.emulator['lateness_us']['p99']:.0f} µs "
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
                    "tcp_congestion": ((tcp_congestion or TcpSetup.from_config(cfg).congestion)
                                       if cfg["coap"]["transport"] == "tcp" else None),
                    # What the server's sockets ran, read back from the kernel in every run.
                    "tcp_congestion_sockets": (sorted({n for r in runs for n in r["emulation"].get("tcp_congestion_sockets") or []})
                                               if cfg["coap"]["transport"] == "tcp" else None),
                    "lateness_us_p99_max": max((x["p99"] for x in lateness), default=0.0),
                    "lateness_us_mean": (sum(x["mean"] for x in lateness) / len(lateness)) if lateness else 0.0,
                }
                for key in ("dtls", "observe"):  # per replication, from the captures
                    if any(key in r["emulation"] for r in runs):
                        s["emulation"][key] = [r["emulation"].get(key) for r in runs]
                summaries.append(s)
        finally:
            if store is not None:
                store.close()
            cleanup()
    return summaries


def percent_diff(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "-"
    if a == 0:
        return "0.0%" if b == 0 else "n/a"
    return f"{(b - a) / a * 100:+.1f}%"


def table_cell(v: Any) -> str:
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
        out.append("               " + "  ".join(f"{table_cell(s['fct_s'][k]):>8}" for k in PERCENTILE_KEYS))
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
        out.extend(pcapcoap.capture_lines(e))
        out.append("")
    return "\n".join(out).rstrip() + "\n"
