"""Third-party CoAP stacks as emulation endpoints (docs/emulation.md, "Third-party endpoints").

- libcoap's ``coap-client`` (Debian ``libcoap3-bin``) as the clients: one process per
  exchange (a plain GET, or the whole block-wise firmware transfer with ``-b``), driven by
  :mod:`coaplab.tp_clients`, which times each one and records it like coaplab's clients.
  libcoap lets one set ACK_TIMEOUT (``-K``? no: only through its API) — from the command line
  only the block size (``-b``), the wait (``-B``) and NSTART-like concurrency are settable; its
  transmission parameters stay libcoap's defaults (ACK_TIMEOUT 2 s, ACK_RANDOM_FACTOR 1.5,
  MAX_RETRANSMIT 4) unless a test build changes them.
- aiocoap (PyPI ``aiocoap``, the ``emulate`` extra) as the clients or the server; its
  transmission parameters (ACK_TIMEOUT, ACK_RANDOM_FACTOR, MAX_RETRANSMIT, NSTART) are set
  from the scenario's ``[coap]`` section through ``aiocoap.numbers.TransportTuning``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .errors import CoaplabError


def _have_aiocoap() -> None:
    try:
        import aiocoap  # noqa: F401
    except ImportError:
        raise CoaplabError("emulate: aiocoap is not installed; pip install 'coaplab[emulate]' (or aiocoap)") from None


def client_command(kind: str, cfg: dict[str, Any], replication: int, cfg_path: Path, out: Path,
                   max_seconds: float, epoch_ns: int) -> list[str]:
    """The command that runs `kind`'s clients in the client namespace."""
    if kind == "libcoap":
        if not any(shutil.which(n) for n in ("coap-client", "coap-client-notls", "coap-client-openssl", "coap-client-gnutls")):
            raise CoaplabError("emulate: libcoap's coap-client is missing; apt-get install libcoap3-bin")
    elif kind == "aiocoap":
        _have_aiocoap()
    return [sys.executable, "-m", "coaplab.tp_clients", kind, str(cfg_path), str(replication), str(out), str(max_seconds),
            str(epoch_ns)]


def server_command(kind: str, cfg: dict[str, Any], cfg_path: Path, max_seconds: float) -> list[str]:
    """The command that runs `kind`'s server in the server namespace."""
    if kind == "aiocoap":
        _have_aiocoap()
        return [sys.executable, "-m", "coaplab.tp_server", str(cfg_path), str(max_seconds)]
    raise CoaplabError(f"--server: {kind!r}; allowed: coaplab, aiocoap")


def wait_listening(ns: str, transport: str, timeout: float, port: int = 5683) -> None:
    """Waits until something listens on the server's CoAP port in namespace `ns` (reads the
    namespace's /proc/net/{udp,tcp}[6]: bound sockets, TCP in LISTEN)."""
    table = "udp" if transport == "udp" else "tcp"
    want = f":{port:04X}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = subprocess.run(["ip", "netns", "exec", ns, "cat", f"/proc/net/{table}", f"/proc/net/{table}6"],
                           capture_output=True, text=True)
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) > 3 and f[1].endswith(want) and (table == "udp" or f[3] == "0A"):
                return
        time.sleep(0.05)
    raise CoaplabError(f"emulate: the server did not listen on port {port} within {timeout:.0f} s")
