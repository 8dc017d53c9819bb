"""The summary's Q-Block lines (docs/model.md "Q-Block")."""

from __future__ import annotations

from typing import Any

from ..execute.tidy import fmt_value, title
from .page import esc


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


#: The report's columns: (summary ``qblock`` field, its statistic or None for a counter, heading).
COLUMNS = (("direction", None, "direction"), ("transfers_completed", None, "transfers completed"),
           ("transfers_failed", None, "transfers failed"), ("transfer_time_s", "p50", "transfer p50 (s)"),
           ("transfer_time_s", "mean", "transfer mean (s)"), ("transfer_time_s", "max", "transfer max (s)"),
           ("blocks_sent", None, "blocks sent"), ("blocks_recovered", None, "blocks recovered"),
           ("recovery_requests", None, "recovery requests"), ("continues", None, "continues"),
           ("bytes_up", None, "bytes up"), ("bytes_down", None, "bytes down"))


def _cell(q: dict[str, Any], field: str, stat: str | None) -> str:
    v = q[field] if stat is None else q[field][stat]
    return "–" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def qblock_table(n: int, flat: dict[str, dict[str, Any]], cids: list[str], keys: list[str],
                 summaries: dict[str, dict[str, Any]]) -> str:
    """`coaplab report`'s Q-Block table: each Q-Block configuration's transfers (nothing without one)."""
    have = [cid for cid in cids if summaries[cid].get("qblock")]
    if not have:
        return ""
    head = "".join(f'<th class="l">{esc(title(k))}</th>' for k in keys) + "".join(f"<th>{esc(h)}</th>" for _, _, h in COLUMNS)
    rows = "".join(
        "<tr>" + "".join(f'<td class="l">{esc(fmt_value(flat[cid].get(k)))}</td>' for k in keys)
        + "".join(f"<td>{esc(_cell(summaries[cid]['qblock'], f, st))}</td>" for f, st, _ in COLUMNS) + "</tr>"
        for cid in have)
    return (f'<h3>Q-Block</h3><div class="table-box"><table data-table="qblock-{n}"><tr>{head}</tr>{rows}</table></div>'
            '<p class="muted">RFC 9177 transfers over all clients and replications: counters summed, transfer times '
            'pooled (docs/model.md "Q-Block").</p>')
