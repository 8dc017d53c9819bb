"""Third-party CoAP stacks as emulation endpoints (docs/emulation.md, "Third-party endpoints").

- libcoap's ``coap-client`` (Debian ``libcoap3-bin``) as the clients: one process per
  exchange (a plain GET, or the whole block-wise firmware transfer with ``-b``), driven by
  :mod:`coaplab.stacks.tp_clients`, which times each one and records it like coaplab's clients.
  From ``coap-client``'s command line only the local address (``-a``), the block size
  (``-b``) and the wait (``-B``) are settable; libcoap sets its transmission parameters only
  through its API (``coap_session_set_ack_timeout`` …), so they stay libcoap's defaults
  (ACK_TIMEOUT 2 s, ACK_RANDOM_FACTOR 1.5, MAX_RETRANSMIT 4, NSTART 1).
- libcoap's ``coap-server`` (same package) as the server: started with ``-d`` (resources
  created by a PUT), then loaded over the server namespace's loopback with the workload's
  resource at ``/sensors`` (``coap-client -m put``) and checked by reading it back, before the
  clients start. It answers in the block size the client asks for (RFC 7959); its command line
  sets no transmission parameter (they only matter for its own CON messages: none here,
  responses are piggybacked ACKs).
- aiocoap (PyPI ``aiocoap``, the ``emulate`` extra) as the clients or the server; its
  transmission parameters (ACK_TIMEOUT, ACK_RANDOM_FACTOR, MAX_RETRANSMIT, NSTART) are set
  from the scenario's ``[coap]`` section through ``aiocoap.numbers.TransportTuning``.
- Californium (Eclipse, Java; ``org.eclipse.californium:californium-core``, the version pinned
  in ``java/californium/pom.xml``) as the clients or the server, through coaplab's small driver
  ``java/californium/src/main/java/coaplab/CaliforniumDriver.java``, built by ``coaplab setup
  californium`` into the user cache (or, in a checkout, by ``scripts/setup.sh`` into
  ``target/californium/``: :mod:`coaplab.stacks.californium_setup`). Its transmission parameters are set from
  ``[coap]`` (``CoapConfig.ACK_TIMEOUT``, ``ACK_INIT_RANDOM``, ``MAX_RETRANSMIT``, ``NSTART``)
  and ``coap.cc`` picks ``CoapConfig.CONGESTION_CONTROL_ALGORITHM`` (:data:`CALIFORNIUM_CC`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import CoaplabError
from . import tp_dtls
from .californium_setup import DRIVER_JAR, INSTALL_HINT, cache_build_dir, driver_dir, stale_driver

SERVER = "192.0.2.1"

#: ``coap.cc`` → Californium's ``CoapConfig.CongestionControlMode`` (CoapConfig.java, 3.14.0).
#: The drafts' names and the simulator's models of Californium's code (``…@californium``,
#: crates/cc/src/californium.rs) both map to Californium's implementation, so that one scenario
#: cross-validates either against the same stack. ``default`` is RFC 7252's fixed timer:
#: Californium's plain ReliabilityLayer (NULL: no congestion control).
CALIFORNIUM_CC = {
    "default": "NULL",
    "cocoa": "COCOA", "cocoa@californium": "COCOA",
    "cocoa-s": "COCOA_STRONG", "cocoa-s@californium": "COCOA_STRONG",
    "basic-rto": "BASIC_RTO", "basic-rto@californium": "BASIC_RTO",
    "linux-rto": "LINUX_RTO", "linux-rto@californium": "LINUX_RTO",
    "peakhopper-rto": "PEAKHOPPER_RTO", "peakhopper-rto@californium": "PEAKHOPPER_RTO",
}
#: Californium's ``CongestionControlMode`` → the simulator's model of that code
#: (crates/cc/src/californium.rs); ``NULL`` is RFC 7252's fixed timer.
CALIFORNIUM_MODEL = {"NULL": "default", "COCOA": "cocoa@californium", "COCOA_STRONG": "cocoa-s@californium",
                     "BASIC_RTO": "basic-rto@californium", "LINUX_RTO": "linux-rto@californium",
                     "PEAKHOPPER_RTO": "peakhopper-rto@californium"}

#: What a third-party client stack runs whatever ``coap.cc`` says (None: it follows
#: ``coap.cc``). libcoap's ``coap-client`` and aiocoap implement only RFC 7252's retransmission
#: (the first timeout uniform in [ACK_TIMEOUT, ACK_TIMEOUT · ACK_RANDOM_FACTOR], doubled at each
#: retransmission: libcoap's ``coap_net.c``, aiocoap 0.4's ``messagemanager.py`` and
#: ``numbers/constants.py``), i.e. the simulator's ``default``.
FIXED_ALGORITHM = {"libcoap": "default", "aiocoap": "default"}


def stack_algorithm(client: str, cc: str) -> str | None:
    """The simulator's name of the algorithm the ``client`` stack actually runs for ``coap.cc =
    cc`` (coaplab's own clients run ``cc`` itself); None where the stack has no counterpart
    (Californium refuses such names, :func:`californium_cc`)."""
    if client in FIXED_ALGORITHM:
        return FIXED_ALGORITHM[client]
    if client == "californium":
        mode = CALIFORNIUM_CC.get(cc)
        return CALIFORNIUM_MODEL[mode] if mode is not None else None
    return cc


def algorithm_mismatch(client: str, cc: str) -> str | None:
    """``"<client> runs X, the simulator runs Y"`` when the ``client`` stack does not run the
    algorithm the simulator runs for ``coap.cc = cc`` (a cross-validation would compare two
    algorithms); None when both run the same."""
    runs = stack_algorithm(client, cc)
    if runs is None or runs == cc:
        return None
    what = {"default": "RFC 7252's fixed timers (default)"}.get(runs, runs)
    if client == "californium":
        what = f"Californium's {CALIFORNIUM_CC[cc]} ({runs})"
    return f"{client} runs {what}, the simulator runs {cc}"


#: How long before time 0 the clients' process is started when it is a JVM: Californium's
#: endpoints must be up before the first simulated start offset (a cold JVM loading
#: Californium takes ~1 s on a loaded 2-core machine).
CALIFORNIUM_START_LEAD_S = 3.0


def californium_cc(cfg: dict[str, Any], role: str) -> str:
    """Californium's name for the scenario's ``coap.cc``; refuses (one line) one it does not have."""
    cc = cfg["coap"]["cc"]
    if cc not in CALIFORNIUM_CC:
        allowed = ", ".join(CALIFORNIUM_CC)
        raise CoaplabError(f"coap.cc: {cc!r} with --{role} californium; allowed: {allowed}")
    return CALIFORNIUM_CC[cc]


def californium_java() -> list[str]:
    """The JVM command line of the driver; refuses (one line) when Java or the build is missing."""
    java = shutil.which("java")
    if java is None:
        raise CoaplabError(f"emulate: Californium needs Java, which is missing; {INSTALL_HINT}, "
                           "then coaplab setup californium")
    built = driver_dir()
    if built is None and (stale := stale_driver()) is not None:
        raise CoaplabError(f"emulate: Californium's driver {stale} is older than its sources; "
                           "run coaplab setup californium to rebuild it")
    if built is None:
        raise CoaplabError(f"emulate: Californium's driver is not built ({cache_build_dir() / DRIVER_JAR} is missing); "
                           "run coaplab setup californium (needs Maven and a JDK: "
                           f"{INSTALL_HINT})")
    # Small heap, serial GC, C1 only: tens of endpoints, and the emulator wants the CPU.
    return [java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
            "-cp", f"{built / DRIVER_JAR}:{built / 'lib'}/*", "coaplab.CaliforniumDriver"]


def californium_parameters(cfg: dict[str, Any], cc: str) -> list[str]:
    c = cfg["coap"]
    return [f"ack_timeout_s={c['ack_timeout_s']}", f"ack_random_factor={c['ack_random_factor']}",
            f"max_retransmit={c['max_retransmit']}", f"nstart={c['nstart']}", f"cc={cc}"]


#: The numbers of Californium's ``TransmissionCountOption`` (FASOR's Rexmit-Cnt; 0xfdfc, 0xfe04),
#: under which the engine sends the transmission number, count + 1, in one byte (``CALIFORNIUM_REXMIT_CNT`` in
#: crates/engine/src/coap/messages.rs, docs/emulation.md "FASOR's Rexmit-Cnt and Californium").
CALIFORNIUM_REXMIT_CNT = (0xFDFC, 0xFE04)

#: Largest firmware resource the Californium server serves (held in its memory as one array).
CALIFORNIUM_MAX_RESOURCE = 1 << 24


def californium_check(cfg: dict[str, Any], client: str, server: str) -> None:
    """Refuses, before anything is created, what the Californium endpoints cannot run."""
    if client == "californium":
        californium_cc(cfg, "client")
        # CoapConfig.MAX_RETRANSMIT is defined with a minimum of 1 (Californium refuses 0).
        if cfg["coap"]["max_retransmit"] < 1:
            raise CoaplabError(f"coap.max_retransmit: {cfg['coap']['max_retransmit']} with --client californium; "
                               "allowed: at least 1 (Californium's CoapConfig.MAX_RETRANSMIT minimum)")
    w = cfg["workload"]
    number = cfg["coap"].get("rexmit_cnt_option")
    if server == "californium" and cfg["coap"]["cc"] == "fasor-rc" and number not in CALIFORNIUM_REXMIT_CNT:
        raise CoaplabError(f"coap.rexmit_cnt_option: {number or 65000} with coap.cc = 'fasor-rc' and --server californium; "
                           f"allowed: {' or '.join(map(str, CALIFORNIUM_REXMIT_CNT))} (Californium's TransmissionCountOption, "
                           "which counts transmissions from 1 in one byte)")
    if server == "californium" and w["kind"] == "firmware" and w["resource_bytes"] > CALIFORNIUM_MAX_RESOURCE:
        raise CoaplabError(f"workload.resource_bytes: {w['resource_bytes']} with --server californium; allowed: at most "
                           f"{CALIFORNIUM_MAX_RESOURCE} (the resource is held in the server's memory)")
    californium_java()


def start_lead_s(client: str) -> float:
    """Seconds between starting the clients' process and time 0 (the emulator's START)."""
    return CALIFORNIUM_START_LEAD_S if client == "californium" else 0.2


def _have_aiocoap() -> None:
    try:
        import aiocoap  # noqa: F401 - a probe: is the optional extra installed?
    except ImportError:
        raise CoaplabError("emulate: aiocoap is not installed; pip install 'coaplab[emulate]' (or aiocoap)") from None


def libcoap_tool(tool: str) -> str:
    """libcoap's ``coap-client`` / ``coap-server``: Debian installs them as ``coap-<tool>-notls``,
    ``-openssl`` or ``-gnutls`` (any does: plain CoAP over UDP)."""
    for name in (f"coap-{tool}", f"coap-{tool}-notls", f"coap-{tool}-openssl", f"coap-{tool}-gnutls"):
        found = shutil.which(name)
        if found:
            return found
    raise CoaplabError(f"emulate: libcoap's coap-{tool} is missing; apt-get install libcoap3-bin")


#: Largest firmware resource the libcoap server is loaded with (held in coap-server's memory,
#: loaded by a PUT before the run).
LIBCOAP_MAX_RESOURCE = 1 << 24
#: Largest `response_bytes` libcoap sends in one response: above its 1152-byte PDU it answers
#: block-wise (1024-byte blocks) although the request asked for no block (measured with 4.3.1).
LIBCOAP_MAX_RESPONSE = 1024


def resource(cfg: dict[str, Any]) -> bytes:
    """The body a third-party server serves at ``/sensors``: the firmware resource or the
    continuous workload's response (a fixed pattern; only its size matters)."""
    w = cfg["workload"]
    size = w["resource_bytes"] if w["kind"] == "firmware" else w["response_bytes"]
    return bytes((i * 7 + 1) & 0xFF for i in range(size))


def client_command(kind: str, cfg: dict[str, Any], replication: int, cfg_path: Path, out: Path,
                   max_seconds: float, epoch_ns: int) -> list[str]:
    """The command that runs `kind`'s clients in the client namespace."""
    if kind == "libcoap":
        if not any(shutil.which(n) for n in ("coap-client", "coap-client-notls", "coap-client-openssl", "coap-client-gnutls")):
            raise CoaplabError("emulate: libcoap's coap-client is missing; apt-get install libcoap3-bin")
    elif kind == "aiocoap":
        _have_aiocoap()
    elif kind == "californium":
        californium_cc(cfg, "client"), californium_java()
    return [sys.executable, "-m", "coaplab.stacks.tp_clients", kind, str(cfg_path), str(replication), str(out), str(max_seconds),
            str(epoch_ns)]


def server_command(kind: str, cfg: dict[str, Any], cfg_path: Path, max_seconds: float) -> list[str]:
    """The command that runs `kind`'s server in the server namespace."""
    if kind == "aiocoap":
        _have_aiocoap()
        return [sys.executable, "-m", "coaplab.stacks.tp_server", str(cfg_path), str(max_seconds)]
    if kind == "libcoap":
        # `timeout` bounds its life (coap-server has no such option) and passes our SIGTERM on.
        # -d 4: up to 4 resources created by PUT (one is used); -A: our address only.
        if tp_dtls.security(cfg) == "dtls1.2":  # the OpenSSL build, with a PSK (docs/emulation.md "DTLS")
            return ["timeout", "-k", "2", str(int(max_seconds)), tp_dtls.tool("server"), "-A", SERVER, "-d", "4",
                    *tp_dtls.server_args()]
        return ["timeout", "-k", "2", str(int(max_seconds)), libcoap_tool("server"), "-A", SERVER, "-d", "4"]
    if kind == "californium":
        w = cfg["workload"]
        size = w["resource_bytes"] if w["kind"] == "firmware" else w["response_bytes"]
        # The server's own congestion control only times its CON messages (none: responses
        # are piggybacked ACKs), so it runs without one (NULL).
        # fasor-rc: the driver registers Rexmit-Cnt under the scenario's number and echoes it.
        rexmit = [f"rexmit_option={cfg['coap']['rexmit_cnt_option']}"] if cfg["coap"]["cc"] == "fasor-rc" else []
        return ["timeout", "-k", "2", str(int(max_seconds)), *californium_java(), "server",
                *californium_parameters(cfg, "NULL"), f"body_bytes={size}", f"max_s={max_seconds}", *rexmit]
    raise CoaplabError(f"--server: {kind!r}; allowed: coaplab, aiocoap, libcoap, californium")


def prepare_server(kind: str, ns: str, cfg: dict[str, Any], work: Path, timeout: float = 30.0) -> None:
    """Loads a server that cannot be given its resource on its command line (libcoap): PUTs
    the workload's resource to ``/sensors`` over the server namespace's own loopback (never
    through the emulated link), then reads it back block-wise and compares."""
    if kind != "libcoap":
        return
    body = work / "resource.bin"
    body.write_bytes(resource(cfg))
    back = work / "resource.check"
    back.unlink(missing_ok=True)
    client, uri = libcoap_tool("client"), f"coap://{SERVER}/sensors"
    for what, cmd in (("PUT", [client, "-m", "put", "-b", "1024", "-f", str(body), uri]),
                      ("GET", [client, "-m", "get", "-b", "1024", "-o", str(back), uri])):
        try:
            r = subprocess.run(["ip", "netns", "exec", ns] + cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise CoaplabError(f"emulate: loading libcoap's coap-server: the {what} of /sensors took over {timeout:.0f} s") from None
        if r.returncode != 0:
            err = (r.stderr or r.stdout).strip().splitlines()
            raise CoaplabError(f"emulate: loading libcoap's coap-server: the {what} of /sensors failed: "
                               f"{err[-1] if err else r.returncode}")
    got = back.read_bytes() if back.exists() else b""
    if got != body.read_bytes():
        raise CoaplabError(f"emulate: loading libcoap's coap-server: /sensors reads back {len(got)} bytes, "
                           f"not the {body.stat().st_size} put")


def wait_listening(ns: str, transport: str, timeout: float, port: int = 5683) -> None:
    """Waits until something listens on the server's CoAP port in namespace `ns` (reads the
    namespace's /proc/net/{udp,tcp}[6]: bound sockets, TCP in LISTEN)."""
    table = "udp" if transport == "udp" else "tcp"
    want = f":{port:04X}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = subprocess.run(["ip", "netns", "exec", ns, "cat", f"/proc/net/{table}", f"/proc/net/{table}6"],
                           capture_output=True, text=True, check=False)
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) > 3 and f[1].endswith(want) and (table == "udp" or f[3] == "0A"):
                return
        time.sleep(0.05)
    raise CoaplabError(f"emulate: the server did not listen on port {port} within {timeout:.0f} s")
