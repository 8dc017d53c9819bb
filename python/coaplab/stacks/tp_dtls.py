"""libcoap over DTLS 1.2 with a pre-shared key (``coap.security = "dtls1.2"``, docs/emulation.md
"DTLS").

libcoap's OpenSSL builds (Debian ``libcoap3-bin``: ``coap-client-openssl``, ``coap-server-openssl``)
speak DTLS: the server with ``-k KEY -h HINT`` (it also listens for DTLS on its port + 1, 5684,
RFC 7252 §12.7's ``coaps`` port), the client with ``-k KEY -u IDENTITY coaps://…``. The cipher suite
is what libcoap and OpenSSL negotiate (libcoap 4.3.1's ``coap_openssl.c`` offers OpenSSL's PSK
suites; measured: TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256, RFC 7905), not settable from
either command line. Only libcoap against libcoap runs secured: coaplab's endpoints, aiocoap and
Californium's driver speak plain CoAP, and everything else is refused in one line.
"""

from __future__ import annotations

import shutil
from typing import Any

from ..errors import CoaplabError

#: The identity the clients send and the key both ends hold (RFC 4279 §2); any value does, the
#: emulated link carries no one else's traffic. 16 bytes, the simulator's assumed identity length
#: (docs/model.md "Security").
PSK_IDENTITY = "coaplab-client-1"
PSK_KEY = "coaplab-psk-0001"
#: The server's PSK identity hint (RFC 4279 §2: ServerKeyExchange carries it).
PSK_HINT = "coaplab"
#: RFC 7252 §12.7: the default port of ``coaps`` (coap-server listens on its port + 1).
DTLS_PORT = 5684


def security(cfg: dict[str, Any]) -> str:
    """The scenario's ``coap.security`` (absent from a resolved configuration when ``none``)."""
    return str(cfg["coap"].get("security") or "none")


def check(cfg: dict[str, Any], client: str, server: str) -> None:
    """Refuses, in one line, a secured scenario that emulation cannot run."""
    mode = security(cfg)
    if mode == "none":
        return
    if mode != "dtls1.2" or (client, server) != ("libcoap", "libcoap"):
        raise CoaplabError(f"coap.security: {mode!r} with --client {client} --server {server} is not emulated; allowed: "
                           "'dtls1.2' with --client libcoap --server libcoap (libcoap's OpenSSL build), or 'none'")
    c = cfg["coap"]
    if c.get("dtls_suite", "psk") != "psk" or c.get("dtls_connection_id"):
        raise CoaplabError("coap.dtls_suite / coap.dtls_connection_id: emulated DTLS runs libcoap with a PSK and no "
                           "Connection ID; allowed: dtls_suite = 'psk', dtls_connection_id = false")
    tool("client"), tool("server")


def tool(role: str) -> str:
    """libcoap's OpenSSL ``coap-client`` / ``coap-server`` (the DTLS-capable build)."""
    found = shutil.which(f"coap-{role}-openssl")
    if found is None:
        raise CoaplabError(f"coap.security: 'dtls1.2' needs libcoap's coap-{role}-openssl, which is missing; "
                           "apt-get install libcoap3-bin")
    return found


def client_args() -> list[str]:
    """``coap-client-openssl``'s PSK options."""
    return ["-k", PSK_KEY, "-u", PSK_IDENTITY]


def server_args() -> list[str]:
    """``coap-server-openssl``'s PSK options."""
    return ["-k", PSK_KEY, "-h", PSK_HINT]
