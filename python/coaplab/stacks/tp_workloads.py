"""Third-party workloads that only real stacks run for now (``coaplab emulate --tp-workload``,
docs/emulation.md "Observe, libcoap", "Q-Block, libcoap").

- ``observe``: each client is a libcoap observer (RFC 7641): ``coap-client -s D`` registers on
  libcoap's ``coap-server`` built-in ``/time`` resource, which notifies every second (the
  server's main loop calls ``coap_resource_notify_observers`` once per second, examples/
  coap-server.c 4.3.1), for D = ``workload.duration_s`` seconds. The server runs with ``-N``:
  NON notifications, with a CON one whenever five NONs went out since the last CON
  (``coap_notify_observers`` in src/resource.c 4.3.1: NON while ``non_cnt < COAP_OBS_MAX_NON``,
  5, include/coap3/coap_subscribe_internal.h; a CON resets the count). The notifications are
  read from the captures (:func:`coaplab.stacks.pcapcoap.observe_summary`).
- ``q-block``: RFC 9177's Q-Block1 / Q-Block2. Refused: libcoap 4.3.1 (Debian's
  ``libcoap3-bin``) has no Q-Block — it came with 4.3.2 (libcoap commit a350e370, "RFC9177: Add
  in Q-Block support", July 2023); 4.3.1's ``coap-client -L`` takes 4 and 8 on its command line
  but its block.h defines only COAP_BLOCK_USE_LIBCOAP (1) and COAP_BLOCK_SINGLE_BODY (2), and
  ``-L 5 -N`` was measured to send plain Block1 / Block2.

Their simulated counterparts are ``workload.kind = "observe"`` and ``coap.block_mode = "q-block"``
(docs/model.md); docs/emulation.md "Observe, libcoap" sets libcoap's Observe beside the former.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from typing import Any

from ..errors import CoaplabError

TP_WORKLOADS = ("observe", "q-block")
#: libcoap's built-in observable resource (examples/coap-server.c 4.3.1: ``/time``).
OBSERVE_PATH = "time"
#: Seconds a ``coap-client -s D`` process is given beyond D to deregister and exit.
OBSERVE_GRACE_S = 5.0


def check(cfg: dict[str, Any], client: str, server: str, tp_workload: str | None) -> None:
    """Refuses, in one line, a third-party workload that cannot run."""
    if tp_workload is None:
        return
    if tp_workload not in TP_WORKLOADS:
        raise CoaplabError(f"--tp-workload: {tp_workload!r}; allowed: {', '.join(TP_WORKLOADS)}")
    if tp_workload == "q-block":
        raise CoaplabError("--tp-workload: 'q-block' is not emulated: libcoap 4.3.1 (libcoap3-bin) has no Q-Block "
                           "(RFC 9177 came with libcoap 4.3.2); allowed: observe")
    if (client, server) != ("libcoap", "libcoap"):
        raise CoaplabError(f"--tp-workload: 'observe' with --client {client} --server {server}; allowed: "
                           "--client libcoap --server libcoap (libcoap's observer of its server's /time)")
    w = cfg["workload"]
    if cfg["coap"]["transport"] != "udp" or w["kind"] != "continuous" or not w.get("duration_s"):
        raise CoaplabError("--tp-workload: 'observe' observes for workload.duration_s seconds; allowed: a "
                           "continuous workload over UDP with duration_s (the clients are the observers)")
    if cfg["coap"].get("security"):
        raise CoaplabError("--tp-workload: 'observe' runs plain CoAP; allowed: coap.security = 'none'")


def server_args(tp_workload: str | None) -> list[str]:
    """Extra options of ``coap-server`` for the workload."""
    return ["-N"] if tp_workload == "observe" else []


def observer(binary: str, address: str, server: str, cfg: dict[str, Any], start: float, t0: float,
             deadline: float) -> tuple[float | None, float | None, bool]:
    """One observer: waits for its start offset, then runs ``coap-client -s D`` (bounded by the
    deadline). Returns (start, end, exited cleanly) on the monotonic clock."""
    time.sleep(max(0.0, t0 + start - time.monotonic()))
    duration = float(cfg["workload"]["duration_s"])
    left = deadline - time.monotonic()
    if left <= 1:
        return None, None, False
    d = min(duration, left - 1)
    began = time.monotonic()
    cmd = [binary, "-a", address, "-s", str(int(d)), "-B", str(int(d + OBSERVE_GRACE_S)), "-o", "/dev/null",
           f"coap://{server}/{OBSERVE_PATH}"]
    try:
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=d + 2 * OBSERVE_GRACE_S,
                           check=False)
        ok = r.returncode == 0
    except subprocess.TimeoutExpired:
        ok = False
    return began, time.monotonic(), ok


def libcoap_client_binary() -> str:
    for name in ("coap-client", "coap-client-notls", "coap-client-openssl", "coap-client-gnutls"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("tp_clients: libcoap's coap-client is missing (apt-get install libcoap3-bin)")
