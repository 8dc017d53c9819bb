"""LwM2M devices' measurements pooled over replications (docs/model.md "LwM2M devices"): each
run (and each population of it) reports its devices' raw times and counters; a configuration's
summary holds, under the ``lwm2m_*`` names, every time's mean / p50 / p95 / max over all
devices (or reads, pulls) of all replications, and the counters summed."""

from __future__ import annotations

from typing import Any

from .quantile import percentile

#: Raw times of a run's ``lwm2m`` entry → the summary's name.
TIMES = (("register_s", "lwm2m_register_s"), ("read_wait_s", "lwm2m_read_wait_s"), ("firmware_s", "lwm2m_firmware_s"))
#: Counters of a run's ``lwm2m`` entry → the summary's name.
COUNTERS = (("registrations_failed", "lwm2m_registrations_failed"), ("updates_sent", "lwm2m_updates_sent"),
            ("updates_failed", "lwm2m_updates_failed"), ("reads_failed", "lwm2m_reads_failed"),
            ("notifications_delivered", "lwm2m_notifications_delivered"), ("firmware_failed", "lwm2m_firmware_failed"))


def time_stats(values: list[float]) -> dict[str, float | None]:
    """mean, p50, p95, max of ``values`` (all None when empty), and how many there were."""
    xs = sorted(values)
    if not xs:
        return {"n": 0, "mean": None, "p50": None, "p95": None, "max": None}
    return {"n": len(xs), "mean": sum(xs) / len(xs), "p50": percentile(xs, 0.5), "p95": percentile(xs, 0.95), "max": xs[-1]}


def summarize_lwm2m(parts: list[dict[str, Any] | None]) -> dict[str, Any]:
    """The ``lwm2m_*`` summary fields over ``parts`` (each replication's ``lwm2m`` entry, of the
    run or of one population); empty when no part has one (other workloads)."""
    have = [p for p in parts if p]
    if not have:
        return {}
    out: dict[str, Any] = {name: time_stats([x for p in have for x in p[key]]) for key, name in TIMES}
    out.update({name: sum(p[key] for p in have) for key, name in COUNTERS})
    return out


def lwm2m_columns(entry: dict[str, Any] | None) -> dict[str, Any]:
    """One run's ``lwm2m`` entry as flat ``runs_frame()`` columns: each time's ``_n``, ``_mean``,
    ``_p50``, ``_p95``, ``_max`` and the counters (nothing for other workloads)."""
    out: dict[str, Any] = {}
    for name, v in summarize_lwm2m([entry]).items():
        if isinstance(v, dict):
            out.update({f"{name}_{k}": x for k, x in v.items()})
        else:
            out[name] = v
    return out
