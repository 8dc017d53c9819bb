"""The summary's Q-Block lines (docs/model.md "Q-Block")."""

from __future__ import annotations

from typing import Any


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def qblock_lines(q: dict[str, Any] | None) -> list[str]:
    """Transfers, their time, blocks sent and recovered, recovery requests, bytes on the wire."""
    if not q:
        return []
    t = q["transfer_time_s"]
    transfers = (f"  Q-Block ({q['direction']}): {q['transfers_completed']} transfers completed,"
                 f" {q['transfers_failed']} failed; transfer time p50 {_f(t['p50'])} s,"
                 f" mean {_f(t['mean'])} s, max {_f(t['max'])} s")
    blocks = (f"  Q-Block: {q['blocks_sent']} blocks sent, {q['blocks_recovered']} recovered after"
              f" {q['recovery_requests']} recovery requests, {q['continues']} continues;"
              f" {q['bytes_up']:,} B up, {q['bytes_down']:,} B down")
    return [transfers, blocks]
