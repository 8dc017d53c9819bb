"""The DTLS rows of ``coaplab crossval`` (docs/emulation.md "DTLS"): the simulator's
``coap.security = "dtls1.2"`` counters (docs/model.md "Security") beside what the emulator's
captures show of libcoap over DTLS (:func:`coaplab.stacks.pcapcoap.dtls_summary`)."""

from __future__ import annotations

from typing import Any

#: Shown where the simulator reports no such figure (as ``coaplab.stacks.emulate.UNKNOWN``).
UNKNOWN = "n/a"

#: Bytes a DTLS 1.2 record adds to a message under the suites libcoap and OpenSSL negotiate:
#: the 13-byte record header (RFC 6347 §4.1) and the 16-byte Poly1305 tag; ChaCha20-Poly1305
#: has no explicit nonce in DTLS 1.2 (RFC 7905 §2). The simulator's CCM-8 suite: 13 + 8 + 8 = 29
#: too (docs/model.md "Security").
RECORD_OVERHEAD = {"TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256": 13 + 16}


def _diff(a: float | None, b: float | None) -> str:
    if a is None or b is None or a == 0:
        return "n/a"
    return f"{(b - a) / a * 100:+.1f} %"


def dtls_rows(sim: dict[str, Any] | None, emu: list[dict[str, Any] | None] | None,
              completed: int) -> list[tuple[str, Any, Any, str]]:
    """(metric, simulated, emulated, difference) rows; [] unless both sides ran DTLS. The bytes
    per exchange are, as the simulator's, per completed exchange (`completed`, over every
    replication)."""
    runs = [r for r in emu or [] if r]
    if not sim or not runs:
        return []
    handshakes = sum(r["handshakes"] for r in runs)
    hs_bytes = sum(r["handshake_bytes"] for r in runs)
    sim_each = sim["handshake_bytes"] / sim["handshakes"] if sim["handshakes"] else None
    emu_each = hs_bytes / handshakes if handshakes else None
    times = [r["handshake_s_p50"] for r in runs if r["handshake_s_p50"] is not None]
    emu_time = sum(times) / len(times) if times else None
    overhead = RECORD_OVERHEAD.get(runs[0]["cipher_suite"] or "")
    per_exchange = ((hs_bytes + overhead * sum(r["app_records"] for r in runs)) / completed
                    if overhead is not None and completed else None)
    rtts = [r["rtt_s_p50"] for r in runs if r["rtt_s_p50"] is not None]
    return [
        ("DTLS handshakes", sim["handshakes"], handshakes, f"{handshakes - sim['handshakes']:+d}"),
        ("DTLS handshake IP B each", sim_each, emu_each, _diff(sim_each, emu_each)),
        ("DTLS handshake s (to 1st request)", sim["time_to_first_request_s"], emu_time,
         _diff(sim["time_to_first_request_s"], emu_time)),
        ("DTLS B per exchange (hs + records)", sim["bytes_per_exchange"], per_exchange,
         _diff(sim["bytes_per_exchange"], per_exchange)),
        # The simulator reports no per-exchange time apart from the FCT (from the first request).
        ("DTLS exchange s p50 (request → response)", UNKNOWN, sum(rtts) / len(rtts) if rtts else None, UNKNOWN),
    ]
