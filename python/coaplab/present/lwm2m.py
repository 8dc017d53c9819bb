"""The LwM2M lines of a summary (docs/model.md "LwM2M devices")."""

from __future__ import annotations

from typing import Any

from ..execute.tidy import fmt_value, title
from .page import esc

#: The report's columns: (summary field, its statistic or None for a counter, heading).
COLUMNS = (("lwm2m_register_s", "mean", "registration mean (s)"), ("lwm2m_register_s", "p95", "registration p95 (s)"),
           ("lwm2m_registrations_failed", None, "registrations failed"), ("lwm2m_updates_sent", None, "updates sent"),
           ("lwm2m_updates_failed", None, "updates failed"), ("lwm2m_read_wait_s", "mean", "read wait mean (s)"),
           ("lwm2m_read_wait_s", "p95", "read wait p95 (s)"), ("lwm2m_reads_failed", None, "reads failed"),
           ("lwm2m_notifications_delivered", None, "notifications"), ("lwm2m_firmware_s", "mean", "firmware mean (s)"),
           ("lwm2m_firmware_failed", None, "firmware failed"))


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


def _cell(s: dict[str, Any], field: str, stat: str | None) -> str:
    v = s[field] if stat is None else s[field][stat]
    return "–" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def lwm2m_table(n: int, flat: dict[str, dict[str, Any]], cids: list[str], keys: list[str],
                summaries: dict[str, dict[str, Any]]) -> str:
    """`coaplab report`'s LwM2M table: each LwM2M configuration's phases (nothing without one)."""
    have = [cid for cid in cids if "lwm2m_register_s" in summaries[cid]]
    if not have:
        return ""
    head = "".join(f'<th class="l">{esc(title(k))}</th>' for k in keys) + "".join(f"<th>{esc(h)}</th>" for _, _, h in COLUMNS)
    rows = "".join(
        "<tr>" + "".join(f'<td class="l">{esc(fmt_value(flat[cid].get(k)))}</td>' for k in keys)
        + "".join(f"<td>{_cell(summaries[cid], f, st)}</td>" for f, st, _ in COLUMNS) + "</tr>" for cid in have)
    return (f'<h3>LwM2M devices</h3><div class="table-box"><table data-table="lwm2m-{n}"><tr>{head}</tr>{rows}</table></div>'
            '<p class="muted">Over every device, read and pull of all replications; counters summed '
            '(docs/model.md "LwM2M devices").</p>')
