"""RFC 7641 Observe's measurements pooled over replications (docs/model.md "Observe"): the
engine reports them per run and per group (``observe``); counts are summed, the delivered
fraction is Σ delivered / Σ generated, the mean age Σ ages / Σ count (exact pooling), the
maximum the largest; a percentile cannot be pooled from per-replication percentiles, so
``notification_age_p50_s`` / ``p95`` / ``p99`` are the per-replication values averaged over
the replications (exact with one replication)."""

from __future__ import annotations

from typing import Any

#: Counters summed over replications.
OBSERVE_COUNTS = ("notifications_generated", "notifications_sent", "notifications_con", "notifications_non",
                  "notification_retransmissions", "notifications_delivered", "notifications_superseded",
                  "observers_removed", "reregistrations", "notification_age_count")
#: The ratios ``coaplab compare`` bootstraps (key, label, numerator, denominator: dotted paths
#: into a run's result), Σ numerator / Σ denominator over replications.
OBSERVE_RATIOS = (("notification_delivered_fraction", "observe delivered fraction",
                   "observe.notifications_delivered", "observe.notifications_generated"),
                  ("notification_age_mean_s", "mean notification age (s)",
                   "observe.notification_age_sum_s", "observe.notification_age_count"))
#: Per-replication percentiles, averaged over the replications that have them.
OBSERVE_PERCENTILES = ("notification_age_p50_s", "notification_age_p95_s", "notification_age_p99_s")


def pool_observe(parts: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The pooled ``observe`` summary of per-replication ``observe`` entries (of runs or of one
    group); None when none has one (workloads other than observe)."""
    have = [p for p in parts if p]
    if not have:
        return None
    out: dict[str, Any] = {k: sum(p[k] for p in have) for k in OBSERVE_COUNTS}
    generated, delivered = out["notifications_generated"], out["notifications_delivered"]
    out["notification_delivered_fraction"] = delivered / generated if generated else None
    age_sum = sum(p["notification_age_sum_s"] for p in have)
    out["notification_age_sum_s"] = age_sum
    count = out["notification_age_count"]
    out["notification_age_mean_s"] = age_sum / count if count else None
    for k in OBSERVE_PERCENTILES:
        xs = [p[k] for p in have if p.get(k) is not None]
        out[k] = sum(xs) / len(xs) if xs else None
    maxima = [p["notification_age_max_s"] for p in have if p.get("notification_age_max_s") is not None]
    out["notification_age_max_s"] = max(maxima) if maxima else None
    return out


def observe_line(o: dict[str, Any]) -> str:
    """One line of text for ``coaplab run`` / ``report`` (the names are the summary's keys)."""
    def f(x: float | None, digits: int = 3) -> str:
        return "-" if x is None else f"{x:.{digits}f}"
    return (f"observe: {o['notifications_delivered']} of {o['notifications_generated']} values delivered "
            f"(notification_delivered_fraction {f(o['notification_delivered_fraction'])}), "
            f"notifications_sent {o['notifications_sent']} ({o['notification_retransmissions']} retransmissions), "
            f"notifications_superseded {o['notifications_superseded']}, reregistrations {o['reregistrations']}; "
            f"notification_age_s mean {f(o['notification_age_mean_s'])}, p50 {f(o['notification_age_p50_s'])}, "
            f"p95 {f(o['notification_age_p95_s'])}, p99 {f(o['notification_age_p99_s'])}, "
            f"max {f(o['notification_age_max_s'])}")
