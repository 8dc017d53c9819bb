"""Third-party CoAP clients in the client namespace (run by ``coaplab emulate --client KIND``):
``python -m coaplab.stacks.tp_clients KIND CONFIG.json REPLICATION OUT.json MAX_SECONDS [EPOCH_NS [TP_WORKLOAD]]``
(TP_WORKLOAD ``observe``: :mod:`coaplab.stacks.tp_workloads`).

Each client starts at the instant a simulated run of that replication starts it (the start
offsets come from ``coaplab-endpoint setups``), binds its own address (10.0.0.1, 10.0.0.2, …)
and performs its workload: ``continuous`` = `exchanges` GETs one after the other; ``firmware``
= one block-wise GET of the whole resource (the stack does the Block2 exchanges; each block
counts as one exchange, as in the simulator). FCT = first request → last response. libcoap's and
aiocoap's own retransmissions are not visible from outside, so only completions and times are
recorded for them; Californium's driver reports each exchange's retransmissions and timeout.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..shipped import binary_dirs
from . import tp_dtls, tp_workloads
from .thirdparty import californium_cc, californium_java, californium_parameters

SERVER = "192.0.2.1"
URI = f"coap://{SERVER}/sensors"


def client_address(i: int) -> str:
    v = 0x0A000000 + i + 1
    return ".".join(str((v >> s) & 255) for s in (24, 16, 8, 0))


def _plan(cfg: dict[str, Any]) -> tuple[int, int, int]:
    """(requests per client, exchanges each request counts for, expected payload bytes)."""
    w = cfg["workload"]
    if w["kind"] == "firmware":
        block = 1 << (w["block_szx"] + 4)
        return 1, max(1, -(-w["resource_bytes"] // block)), w["resource_bytes"]
    if w["kind"] == "continuous" and w.get("duration_s") is None:
        return w["exchanges"], 1, w["response_bytes"]
    raise SystemExit(f"tp_clients: workload.kind {w['kind']!r} (or continuous with duration_s) is not supported "
                     "with third-party clients; allowed: continuous with exchanges, firmware")


def _libcoap_binary() -> str:
    for name in ("coap-client", "coap-client-notls", "coap-client-openssl", "coap-client-gnutls"):
        if shutil.which(name):
            return name
    raise SystemExit("tp_clients: libcoap's coap-client is missing (apt-get install libcoap3-bin)")


def _libcoap_client(i: int, cfg: dict[str, Any], start: float, t0: float, deadline: float, out: dict[str, Any]) -> None:
    """One client: coap-client processes one after the other (one per request)."""
    binary = _libcoap_binary()
    n, per, size = _plan(cfg)
    w = cfg["workload"]
    block = ["-b", str(1 << (w["block_szx"] + 4))] if w["kind"] == "firmware" else []
    uri = URI
    if tp_dtls.security(cfg) == "dtls1.2":
        # DTLS 1.2 PSK (docs/emulation.md "DTLS"): each process makes its own handshake.
        binary, uri = tp_dtls.tool("client"), f"coaps://{SERVER}:{tp_dtls.DTLS_PORT}/sensors"
        block = [*block, *tp_dtls.client_args()]
    time.sleep(max(0.0, t0 + start - time.monotonic()))
    first = last = None
    completed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        body = Path(d) / "body"
        for _ in range(n):
            left = deadline - time.monotonic()
            if left <= 1:
                break
            now = time.monotonic()
            first = first if first is not None else now
            r = subprocess.run([binary, "-m", "get", "-a", client_address(i), "-B", str(int(left)), "-o", str(body),
                                *block, uri], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=left + 5, check=False)
            ok = r.returncode == 0 and body.exists() and body.stat().st_size == size
            if ok:
                completed += per
                last = time.monotonic()
            else:
                failed += per
            if body.exists():
                body.unlink()
    out.update(_row(i, first, last, completed, failed, t0))


def _row(i: int, first: float | None, last: float | None, completed: int, failed: int, t0: float) -> dict[str, Any]:
    return {
        "client": i, "address": client_address(i),
        "first_request_s": None if first is None else first - t0,
        "last_end_s": None if last is None else last - t0,
        "fct_s": None if first is None or last is None else last - first,
        "completed": completed, "failed": failed, "retransmissions": 0, "timeouts": 0,
        "duplicate_responses": 0, "histogram": [],
    }


async def _aiocoap_clients(cfg: dict[str, Any], starts: list[float], t0: float, deadline: float) -> list[dict[str, Any]]:
    import aiocoap  # lazy: optional extra
    from aiocoap import resource  # lazy: optional extra
    from aiocoap.numbers.constants import TransportTuning  # lazy: optional extra
    from aiocoap.optiontypes import BlockOption  # lazy: optional extra

    c = cfg["coap"]

    class Tuning(TransportTuning):
        ACK_TIMEOUT = c["ack_timeout_s"]
        ACK_RANDOM_FACTOR = c["ack_random_factor"]
        MAX_RETRANSMIT = c["max_retransmit"]
        NSTART = c["nstart"]

    n, per, size = _plan(cfg)

    async def one(i: int) -> dict[str, Any]:
        # A server context bound to the client's own address sends its requests from it.
        ctx = await aiocoap.Context.create_server_context(resource.Site(), bind=(client_address(i), 49152),
                                                         transports=["udp6"])
        await asyncio.sleep(max(0.0, t0 + starts[i] - time.monotonic()))
        first = last = None
        completed = failed = 0
        try:
            for _ in range(n):
                left = deadline - time.monotonic()
                if left <= 1:
                    break
                now = time.monotonic()
                first = first if first is not None else now
                msg = aiocoap.Message(code=aiocoap.GET, uri=URI, transport_tuning=Tuning())
                if cfg["workload"]["kind"] == "firmware":
                    # Ask for the scenario's block size from the first block (RFC 7959 §2.4):
                    # a server free to choose (libcoap's: 1024 B) would otherwise pick its own.
                    msg.opt.block2 = BlockOption.BlockwiseTuple(0, False, cfg["workload"]["block_szx"])
                try:
                    resp = await asyncio.wait_for(ctx.request(msg).response, timeout=left)
                    ok = resp.code.is_successful() and len(resp.payload) == size
                except Exception:  # noqa: BLE001 - any failure of the request: the exchange did not complete
                    ok = False
                if ok:
                    completed += per
                    last = time.monotonic()
                else:
                    failed += per
        finally:
            await ctx.shutdown()
        return _row(i, first, last, completed, failed, t0)

    return list(await asyncio.gather(*(one(i) for i in range(len(starts)))))


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG = 1)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


def _californium_clients(cfg: dict[str, Any], starts: list[float], epoch_ns: int, max_seconds: float) -> list[dict[str, Any]]:
    """All clients in one JVM (coaplab's driver, :func:`coaplab.stacks.thirdparty.californium_java`),
    one Californium endpoint per client. The driver walks Block2 itself, so each block is one
    exchange with its own retransmission count; it prints one line per exchange,
    ``EX client start_s end_s ok retransmissions timed_out``, gathered here into the rows."""
    n, per, _size = _plan(cfg)
    w = cfg["workload"]
    args = [*californium_java(), "client", *californium_parameters(cfg, californium_cc(cfg, "client")),
            f"epoch_ns={epoch_ns}", f"max_s={max_seconds}", f"exchanges={n}",
            "addresses=" + ",".join(client_address(i) for i in range(len(starts))),
            "starts=" + ",".join(f"{s:.9f}" for s in starts)]
    if w["kind"] == "firmware":
        args += [f"block_szx={w['block_szx']}", f"resource_bytes={w['resource_bytes']}"]
    left = epoch_ns / 1e9 + max_seconds - time.monotonic()
    # Its stderr (when the endpoints were up, Californium's own messages) goes to clients.log.
    # The JVM must not outlive this process: the kernel kills it when we die
    # (PR_SET_PDEATHSIG), and our SIGTERM / SIGINT / SIGHUP end it first.
    jvm = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, preexec_fn=_die_with_parent)  # noqa: PLW1509 - no thread runs yet

    def end(signum: int, _frame: Any) -> None:
        jvm.kill()
        jvm.wait()
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, end)
    try:
        stdout, _ = jvm.communicate(timeout=max(1.0, left) + 15)
    except subprocess.TimeoutExpired:
        jvm.kill()
        stdout, _ = jvm.communicate()
    if jvm.returncode != 0:
        raise SystemExit(f"tp_clients: Californium's driver failed with exit status {jvm.returncode}")
    r = subprocess.CompletedProcess(args, jvm.returncode, stdout)
    t0 = epoch_ns / 1e9
    rows = []
    for i in range(len(starts)):
        ex = [line.split() for line in r.stdout.splitlines() if line.startswith("EX ") and int(line.split()[1]) == i]
        done = [e for e in ex if e[4] == "1"]
        first = min((float(e[2]) for e in ex), default=None)
        last = max((float(e[3]) for e in done), default=None)
        row = _row(i, None if first is None else t0 + first, None if last is None else t0 + last, len(done),
                   n * per - len(done), t0)
        hist: list[int] = []
        for e in done:
            k = int(e[5])
            hist.extend([0] * (k + 1 - len(hist)))
            hist[k] += 1
        row.update(retransmissions=sum(int(e[5]) for e in ex), timeouts=sum(int(e[6]) for e in ex), histogram=hist)
        rows.append(row)
    return rows


def main(argv: list[str]) -> int:
    kind, cfg_path, replication, out, max_seconds = argv[0], argv[1], int(argv[2]), argv[3], float(argv[4])
    # Time 0 shared with the emulator (CLOCK_MONOTONIC ns, as time.monotonic_ns on Linux).
    epoch = int(argv[5]) / 1e9 if len(argv) > 5 else time.monotonic()
    cfg = json.loads(Path(cfg_path).read_text())
    # Set by the emulation (the binary it runs); else where it looks (coaplab.shipped).
    endpoint = os.environ.get("COAPLAB_ENDPOINT") or next(
        (str(d / "coaplab-endpoint") for d in binary_dirs() if (d / "coaplab-endpoint").is_file()), "coaplab-endpoint")
    setups = json.loads(subprocess.run([endpoint, "setups", "--config", cfg_path, "--replication", str(replication)],
                                       capture_output=True, text=True, check=True).stdout)
    starts = [s["start_s"] for s in setups]
    t0 = epoch
    deadline = t0 + max_seconds
    rows: list[dict[str, Any]]
    tp_workload = argv[6] if len(argv) > 6 else None
    if tp_workload == "observe":  # libcoap observers (coaplab.stacks.tp_workloads)
        rows = [{} for _ in starts]

        def observe(i: int) -> None:
            began, ended, ok = tp_workloads.observer(tp_workloads.libcoap_client_binary(), client_address(i), SERVER, cfg,
                                                     starts[i], t0, deadline)
            rows[i] = _row(i, began, ended if ok else None, int(ok), int(not ok), t0)

        threads = [threading.Thread(target=observe, args=(i,)) for i in range(len(starts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    elif kind == "libcoap":
        rows = [{} for _ in starts]
        threads = [threading.Thread(target=_libcoap_client, args=(i, cfg, starts[i], t0, deadline, rows[i]))
                   for i in range(len(starts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    elif kind == "aiocoap":
        rows = asyncio.run(_aiocoap_clients(cfg, starts, t0, deadline))
    elif kind == "californium":
        rows = _californium_clients(cfg, starts, int(argv[5]) if len(argv) > 5 else round(t0 * 1e9), max_seconds)
    else:
        raise SystemExit(f"tp_clients: {kind!r}; allowed: libcoap, aiocoap, californium")
    Path(out).write_text(json.dumps({"transport": "udp", "clients": rows, "stack": kind,
                                     "duration_s": time.monotonic() - t0}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
