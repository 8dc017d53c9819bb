"""The LwM2M lines of a summary (docs/model.md "LwM2M devices")."""

from __future__ import annotations

from typing import Any


def _t(d: dict[str, Any]) -> str:
    if not d.get("n"):
        return "none"
    return f"mean {d['mean']:.3f} s, p50 {d['p50']:.3f}, p95 {d['p95']:.3f}, max {d['max']:.3f} (n {d['n']})"


def lwm2m_lines(s: dict[str, Any], indent: str) -> list[str]:
    """Registration, updates, reads, notifications and firmware of a summary (or a population's);
    nothing for other workloads."""
    if "lwm2m_register_s" not in s:
        return []
    return [f"{indent}LwM2M registration {_t(s['lwm2m_register_s'])}; {s['lwm2m_registrations_failed']} failed",
            (f"{indent}LwM2M updates {s['lwm2m_updates_sent']} sent, {s['lwm2m_updates_failed']} failed;"
             f" notifications {s['lwm2m_notifications_delivered']} delivered"),
            f"{indent}LwM2M reads wait {_t(s['lwm2m_read_wait_s'])}; {s['lwm2m_reads_failed']} failed",
            f"{indent}LwM2M firmware {_t(s['lwm2m_firmware_s'])}; {s['lwm2m_firmware_failed']} failed"]
