"""RFC 9177 Q-Block transfers pooled over replications (docs/model.md "Q-Block"): the engine's
``qblock`` counters summed, the transfer times pooled."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .quantile import percentile

COUNTERS = ("transfers_completed", "transfers_failed", "blocks_sent", "blocks_recovered",
            "recovery_requests", "continues", "bytes_up", "bytes_down")


def summarize_qblock(runs: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Sums of the counters and the pooled transfer times (None without Q-Block transfers)."""
    qs = [r["qblock"] for r in runs if r.get("qblock")]
    if not qs:
        return None
    out: dict[str, Any] = {"direction": qs[0]["direction"]}
    out.update({k: sum(q[k] for q in qs) for k in COUNTERS})
    times = sorted(t for q in qs for t in q["transfer_time_s"])
    out["transfer_time_s"] = {"p50": percentile(times, 0.5) if times else None,
                              "mean": sum(times) / len(times) if times else None,
                              "max": times[-1] if times else None}
    return out
