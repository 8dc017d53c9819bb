"""`coaplab report --db PATH --out DIR`: a self-contained HTML report (figures inline as SVG)
built from the results database.

Per scenario and (workload, clients, errors) group: FCT box plots (p10/p25/median/p75/p90, in
the style of the literature's figures) by buffer × algorithm, unnecessary retransmissions per
client, retransmission histograms, a throughput / fairness table, and RTO / timer traces where
runs recorded them; time-sequence graphs of TCP connections where TCP runs recorded traces.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from .errors import CoaplabError
from .stats import percentiles, sum_tcp
from .store import ResultsDB

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#637939"]
W, H, LEFT, BOTTOM, TOP = 760, 300, 64, 46, 24


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    import math

    mag = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * mag:
            return m * mag
    return 10 * mag


def _axes(y_max: float, y_label: str, y_min: float = 0.0) -> list[str]:
    out = [f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}" stroke="#333"/>',
           f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - 10}" y2="{H - BOTTOM}" stroke="#333"/>',
           f'<text x="14" y="{(H - BOTTOM + TOP) / 2}" transform="rotate(-90 14 {(H - BOTTOM + TOP) / 2})" '
           f'text-anchor="middle" font-size="12">{_esc(y_label)}</text>']
    for i in range(6):
        v = y_min + (y_max - y_min) * i / 5
        y = H - BOTTOM - (H - BOTTOM - TOP) * i / 5
        out.append(f'<line x1="{LEFT - 4}" y1="{y:.1f}" x2="{W - 10}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{v:g}</text>')
    return out


def _legend(names: list[str], colours: dict[str, str]) -> list[str]:
    out, x = [], LEFT
    for n in names:
        out.append(f'<rect x="{x}" y="4" width="10" height="10" fill="{colours[n]}"/>'
                   f'<text x="{x + 14}" y="13" font-size="11">{_esc(n)}</text>')
        x += 24 + 7 * len(n)
    return out


def box_plot(groups: list[tuple[str, list[tuple[str, dict[str, float | None]]]]], y_label: str,
             colours: dict[str, str]) -> str:
    """Box plots: per x group, one box per series (whiskers p10/p90, box p25/p75, median line)."""
    highs = [st["p90"] for _, series in groups for _, st in series if st.get("p90") is not None]
    lows = [st["p10"] for _, series in groups for _, st in series if st.get("p10") is not None]
    y_max = _nice_max(max(highs, default=1.0))
    # Zoom in, as the literature's FCT figures do, when all boxes sit high above zero.
    y_min = 0.0
    if lows and min(lows) > 0.5 * max(highs):
        import math

        step = _nice_max((max(highs) - min(lows)) / 5)
        y_min = step * math.floor(min(lows) / step)
        y_max = y_min + step * max(1, math.ceil((max(highs) - y_min) / step))
    scale = (H - BOTTOM - TOP) / (y_max - y_min)
    y = lambda v: H - BOTTOM - (v - y_min) * scale  # noqa: E731
    parts = _axes(y_max, y_label, y_min)
    names = sorted({n for _, series in groups for n, _ in series}, key=list(colours).index)
    parts += _legend(names, colours)
    gw = (W - LEFT - 20) / max(len(groups), 1)
    for gi, (label, series) in enumerate(groups):
        x0 = LEFT + gi * gw + 6
        bw = min(26.0, (gw - 12) / max(len(series), 1))
        parts.append(f'<text x="{x0 + (gw - 12) / 2:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" font-size="11">{_esc(label)}</text>')
        for si, (name, st) in enumerate(series):
            if st.get("p50") is None:
                continue
            cx = x0 + si * bw + bw / 2
            c = colours[name]
            parts.append(
                f'<g class="box"><title>{_esc(name)} {_esc(label)}: p10 {st["p10"]:.3g}, p25 {st["p25"]:.3g}, '
                f'median {st["p50"]:.3g}, p75 {st["p75"]:.3g}, p90 {st["p90"]:.3g}</title>'
                f'<line x1="{cx:.1f}" y1="{y(st["p10"]):.1f}" x2="{cx:.1f}" y2="{y(st["p90"]):.1f}" stroke="{c}"/>'
                f'<rect x="{cx - bw * 0.35:.1f}" y="{y(st["p75"]):.1f}" width="{bw * 0.7:.1f}" '
                f'height="{max(y(st["p25"]) - y(st["p75"]), 1):.1f}" fill="{c}" fill-opacity="0.35" stroke="{c}"/>'
                f'<line x1="{cx - bw * 0.35:.1f}" y1="{y(st["p50"]):.1f}" x2="{cx + bw * 0.35:.1f}" y2="{y(st["p50"]):.1f}" stroke="{c}" stroke-width="2"/></g>')
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">' + "".join(parts) + "</svg>"


def bar_chart(groups: list[tuple[str, list[tuple[str, list[float]]]]], y_label: str, colours: dict[str, str], bins: int = 6) -> str:
    """Retransmission histograms: per configuration (series), the share of exchanges needing
    0, 1, …, ≥ bins−1 retransmissions, grouped by x label."""
    parts = _axes(100.0, y_label)
    names = sorted({n for _, series in groups for n, _ in series}, key=list(colours).index)
    parts += _legend(names, colours)
    gw = (W - LEFT - 20) / max(len(groups), 1)
    scale = (H - BOTTOM - TOP) / 100.0
    for gi, (label, series) in enumerate(groups):
        x0 = LEFT + gi * gw + 6
        parts.append(f'<text x="{x0 + (gw - 12) / 2:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" font-size="11">{_esc(label)}</text>')
        slot = (gw - 12) / bins
        bw = slot / max(len(series), 1)
        for b in range(bins):
            parts.append(f'<text x="{x0 + b * slot + slot / 2:.1f}" y="{H - BOTTOM + 30}" text-anchor="middle" font-size="9">'
                         f'{b if b < bins - 1 else f"≥{b}"}</text>')
            for si, (name, hist) in enumerate(series):
                total = sum(hist) or 1
                share = 100.0 * (sum(hist[b:]) if b == bins - 1 else (hist[b] if b < len(hist) else 0)) / total
                h = share * scale
                parts.append(f'<rect x="{x0 + b * slot + si * bw:.1f}" y="{H - BOTTOM - h:.1f}" width="{max(bw - 1, 1):.1f}" '
                             f'height="{h:.1f}" fill="{colours[name]}"><title>{_esc(name)} {_esc(label)}: {share:.1f} % need {b}</title></rect>')
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">' + "".join(parts) + "</svg>"


def line_chart(series: list[tuple[str, list[tuple[float, float]]]], x_label: str, y_label: str) -> str:
    """Step lines of (time, value) series."""
    xs = [x for _, pts in series for x, _ in pts] or [1.0]
    ys = [v for _, pts in series for _, v in pts] or [1.0]
    x_max, y_max = _nice_max(max(xs)), _nice_max(max(ys))
    sx, sy = (W - LEFT - 20) / x_max, (H - BOTTOM - TOP) / y_max
    parts = _axes(y_max, y_label)
    parts.append(f'<text x="{(W + LEFT) / 2}" y="{H - 8}" text-anchor="middle" font-size="12">{_esc(x_label)}</text>')
    for i in range(6):
        v = x_max * i / 5
        parts.append(f'<text x="{LEFT + v * sx:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" font-size="11">{v:g}</text>')
    colours = {name: PALETTE[i % len(PALETTE)] for i, (name, _) in enumerate(series)}
    parts += _legend([n for n, _ in series], colours)
    for name, pts in series:
        # Timers and RTO estimates hold their value until the next event: draw steps.
        stepped = [p for i, (x, v) in enumerate(pts) for p in ([(x, pts[i - 1][1])] if i else []) + [(x, v)]]
        path = " ".join(f"{LEFT + x * sx:.1f},{H - BOTTOM - v * sy:.1f}" for x, v in stepped)
        parts.append(f'<polyline fill="none" stroke="{colours[name]}" stroke-width="1.2" points="{path}"/>')
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">' + "".join(parts) + "</svg>"


def time_sequence_svg(points, x_label: str = "time (s)") -> str:
    """A tcptrace-style time-sequence graph: every data segment a vertical tick spanning its
    bytes at its send time (blue new data, red retransmissions), drops as crosses, and the
    cumulative ACKs reaching the sender as a green step line. `points` are rows with
    ``time_s, event, seq, length`` attributes or keys."""
    def get(p, k):
        return p[k] if isinstance(p, dict) else getattr(p, k)
    pts = [(get(p, "time_s"), get(p, "event"), get(p, "seq"), get(p, "length")) for p in points]
    if not pts:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>'
    t0 = min(p[0] for p in pts)
    x_span = _nice_max(max(p[0] for p in pts) - t0)
    y_max = _nice_max(max(p[2] + p[3] for p in pts) / 1000.0)
    sx, sy = (W - LEFT - 20) / x_span, (H - BOTTOM - TOP) / y_max
    X = lambda t: LEFT + (t - t0) * sx  # noqa: E731
    Y = lambda b: H - BOTTOM - b / 1000.0 * sy  # noqa: E731
    parts = _axes(y_max, "sequence (kB)")
    parts.append(f'<text x="{(W + LEFT) / 2}" y="{H - 8}" text-anchor="middle" font-size="12">{_esc(x_label)} from {t0:.3f} s</text>')
    for i in range(6):
        v = x_span * i / 5
        parts.append(f'<text x="{LEFT + v * sx:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" font-size="11">{v:g}</text>')
    colours = {"send": "#1f77b4", "retransmit": "#d62728", "drop": "#000000", "ack": "#2ca02c"}
    parts += _legend(list(colours), colours)
    acks = []
    for t, ev, seq, length in pts:
        if ev == "ack":
            acks.append((X(t), Y(seq)))
        elif ev == "drop":
            x, y = X(t), Y(seq + length / 2)
            parts.append(f'<path d="M{x - 3:.1f},{y - 3:.1f}L{x + 3:.1f},{y + 3:.1f}M{x - 3:.1f},{y + 3:.1f}L{x + 3:.1f},{y - 3:.1f}" '
                         f'stroke="{colours["drop"]}" data-event="drop"/>')
        else:
            parts.append(f'<line x1="{X(t):.1f}" y1="{Y(seq):.1f}" x2="{X(t):.1f}" y2="{min(Y(seq + length), Y(seq) - 1):.1f}" '
                         f'stroke="{colours.get(ev, "#999")}" stroke-width="1.5" data-event="{_esc(ev)}"/>')
    if acks:
        stepped = [q for i, (x, y) in enumerate(acks) for q in ([(x, acks[i - 1][1])] if i else []) + [(x, y)]]
        parts.append(f'<polyline fill="none" stroke="{colours["ack"]}" stroke-width="1" points="'
                     + " ".join(f"{x:.1f},{y:.1f}" for x, y in stepped) + '" data-event="ack"/>')
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">' + "".join(parts) + "</svg>"


def time_sequence_plot(points, title: str = "") -> "Figure":
    """[`time_sequence_svg`] as a notebook [`Figure`]."""
    return Figure(time_sequence_svg(points))


class Figure:
    """An SVG figure: shown inline by Jupyter (`_repr_svg_`), or saved with `save(path)`."""

    def __init__(self, svg: str):
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.svg, encoding="utf-8")
        return path


def summary_box_plot(summaries: list[dict[str, Any]], metric: str = "fct_s", y_label: str = "FCT (s)") -> Figure:
    """Box plots of a percentile metric of run summaries, grouped by buffer, one box per
    algorithm (the report's figure, for notebooks)."""
    algorithms = sorted({s["config"]["coap"]["cc"] for s in summaries})
    colours = {a: PALETTE[i % len(PALETTE)] for i, a in enumerate(algorithms)}
    buffers = sorted({s["config"]["link"]["buffer_bytes"] for s in summaries})
    groups = [(f"{b} B", [(s["config"]["coap"]["cc"], s[metric]) for s in summaries if s["config"]["link"]["buffer_bytes"] == b])
              for b in buffers]
    return Figure(box_plot(groups, y_label, colours))


def _figure(fid: str, caption: str, svg: str) -> str:
    return f'<figure data-figure="{_esc(fid)}">{svg}<figcaption>{_esc(caption)}</figcaption></figure>'


def build(db_path: str | Path) -> tuple[str, list[str]]:
    """The report's HTML and the ids of its figures."""
    with ResultsDB(db_path, read_only=True) as db:
        configs = {r["config_id"]: json.loads(r["config"]) for r in db.frame("configs").to_dict("records")}
        runs = db.frame("runs")
        clients = db.frame("clients")
        traces = db.frame("traces")
    ok = runs[runs.status == "ok"]
    if ok.empty:
        raise CoaplabError(f"--db: {str(db_path)!r} holds no finished runs to report on")
    by_config: dict[str, dict[str, Any]] = {}
    for cid, group in ok.groupby("config_id"):
        results = [json.loads(r) for r in group.result]
        hist: list[int] = []
        for r in results:
            for k, n in enumerate(r["retransmission_histogram"]):
                hist.extend([0] * (k + 1 - len(hist)))
                hist[k] += n
        cl = clients[clients.config_id == cid]
        by_config[cid] = {
            "config": configs[cid], "replications": len(group),
            "fct": percentiles(cl.fct_s.dropna().tolist()),
            "unnecessary": percentiles(cl.unnecessary_retransmissions.astype(float).tolist()),
            "hist": hist,
            "throughput": float(group.throughput_exchanges_per_s.mean()),
            "jain": _jain_mean(results),
            "completed": int(group.exchanges_completed.sum()), "failed": int(group.exchanges_failed.sum()),
            "tcp": sum_tcp(results),
        }
    algorithms = sorted({c["config"]["coap"]["cc"] for c in by_config.values()})
    colours = {a: PALETTE[i % len(PALETTE)] for i, a in enumerate(algorithms)}

    # Panels: scenario name × workload kind × clients × errors; x groups: buffer; series: algorithm.
    panels: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for cid, c in by_config.items():
        cfg = c["config"]
        errors = cfg["link"]["errors"] if isinstance(cfg["link"]["errors"], str) else "custom"
        panels[(cfg["name"], cfg["workload"]["kind"], cfg["workload"]["clients"], errors, cfg["coap"]["transport"])].append(c)
    body, ids = [], []
    for n, (key, members) in enumerate(sorted(panels.items(), key=lambda kv: tuple(map(str, kv[0])))):
        name, kind, nclients, errors, transport = key
        title = f"{name}: {nclients} {kind} clients, errors {errors}, {transport}"
        buffers = sorted({m["config"]["link"]["buffer_bytes"] for m in members})
        def groups(metric):
            out = []
            for b in buffers:
                series = [(m["config"]["coap"]["cc"], m[metric]) for m in members if m["config"]["link"]["buffer_bytes"] == b]
                out.append((f"{b} B", sorted(series, key=lambda s: algorithms.index(s[0]))))
            return out
        body.append(f"<section><h2>{_esc(title)}</h2>")
        figures = [
            (f"fct-{n}", "Flow completion time per client (s): whiskers p10/p90, box p25/p75, line median",
             box_plot(groups("fct"), "FCT (s)", colours)),
            (f"unnecessary-{n}", "Unnecessary retransmissions per client: p10/p25/median/p75/p90",
             box_plot(groups("unnecessary"), "unnecessary retransmissions", colours)),
        ]
        if transport == "udp":  # over TCP, CoAP exchanges are not retransmitted (TCP counters below)
            figures.append((f"histogram-{n}", "Share of exchanges (%) by the number of retransmissions they needed",
                            bar_chart(groups("hist"), "% of exchanges", colours)))
        for fid, caption, svg in figures:
            body.append(_figure(fid, caption, svg))
            ids.append(fid)
        rows = "".join(
            f"<tr><td>{_esc(m['config']['coap']['cc'])}</td><td>{m['config']['link']['buffer_bytes']}</td>"
            f"<td>{m['replications']}</td><td>{m['completed']}</td><td>{m['failed']}</td>"
            f"<td>{m['throughput']:.3f}</td><td>{m['jain']:.4f}</td><td>{m['fct']['p50']:.3f}</td></tr>"
            for m in sorted(members, key=lambda m: (m["config"]["link"]["buffer_bytes"], algorithms.index(m["config"]["coap"]["cc"]))))
        body.append(f'<table data-table="throughput-{n}"><tr><th>algorithm</th><th>buffer (B)</th><th>replications</th>'
                    f"<th>exchanges completed</th><th>failed</th><th>throughput (exch/s)</th><th>Jain</th><th>median FCT (s)</th></tr>{rows}</table>")
        tcp_members = [m for m in members if m["tcp"]]
        if tcp_members:
            keys = [("connections", "connections"), ("data_segments_sent", "data segments"),
                    ("segments_retransmitted", "retransmitted"), ("unnecessary_retransmissions", "unnecessary"),
                    ("syn_retransmissions", "SYN retx"), ("synack_retransmissions", "SYN-ACK retx"),
                    ("csm_retransmissions", "CSM retx"), ("rto_expirations", "RTO expirations"),
                    ("fast_retransmits", "fast retransmits"), ("duplicate_acks", "duplicate ACKs")]
            head = "".join(f"<th>{_esc(label)}</th>" for _, label in keys)
            rows = "".join(
                f"<tr><td>{_esc(m['config']['coap']['cc'])}</td><td>{m['config']['link']['buffer_bytes']}</td>"
                + "".join(f"<td>{m['tcp'].get(k, 0)}</td>" for k, _ in keys) + "</tr>"
                for m in sorted(tcp_members, key=lambda m: m["config"]["link"]["buffer_bytes"]))
            body.append(f'<table data-table="tcp-{n}"><tr><th>controller</th><th>buffer (B)</th>{head}</tr>{rows}</table>'
                        "<p>TCP counters summed over all replications (both ends of every connection).</p>")
        body.append("</section>")

    if not traces.empty:
        body.append("<section><h2>RTO and timer traces</h2>")
        for n, ((cid, rep), tr) in enumerate(list(traces.groupby(["config_id", "replication"]))[:4]):
            first = tr[tr.client == tr.client.min()].sort_values("time_s")
            series = [("armed timer (s)", list(zip(first.time_s, first.timer_s))),
                      ("RTO base (s)", list(zip(first.time_s, first.rto_s)))]
            cfg = configs[cid]
            caption = f"{cfg['name']} {cfg['coap']['cc']}, replication {rep}, client {int(first.client.iloc[0])}"
            body.append(_figure(f"trace-{n}", caption, line_chart(series, "time (s)", "seconds")))
            ids.append(f"trace-{n}")
        body.append("</section>")
    seq_figs = _time_sequence_section(ok, configs)
    if seq_figs:
        body.append("<section><h2>TCP time-sequence graphs</h2>")
        for fid, caption, svg in seq_figs:
            body.append(_figure(fid, caption, svg))
            ids.append(fid)
        body.append("</section>")
    doc = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>coaplab report</title>"
        "<style>body{font-family:sans-serif;margin:2em;max-width:1100px}figure{margin:1em 0}"
        "figcaption{font-size:13px;color:#444}table{border-collapse:collapse;font-size:13px}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}</style></head><body>"
        f"<h1>coaplab report</h1><p>{len(by_config)} configurations, {len(ok)} runs from {_esc(Path(db_path).name)}.</p>"
        + "".join(body) + "</body></html>")
    return doc, ids


def _time_sequence_section(ok, configs, limit: int = 6) -> list[tuple[str, str, str]]:
    """Time-sequence graphs of the server → client direction (where the bottleneck is) for the
    first replication of up to `limit` TCP configurations that recorded traces."""
    out = []
    for cid, group in ok.groupby("config_id"):
        if configs[cid]["coap"]["transport"] != "tcp":
            continue
        first = group.sort_values("replication").iloc[0]
        result = json.loads(first.result)
        traces = result.get("seq_traces") or []
        # The connection that moved the most server → client bytes.
        best = max(traces, key=lambda t: max((p[3] + p[4] for p in t["points"] if p[1] == "down"), default=0), default=None)
        if best is None:
            continue
        pts = [{"time_s": p[0], "event": p[2], "seq": p[3], "length": p[4]} for p in best["points"] if p[1] == "down"]
        if not pts:
            continue
        cfg = configs[cid]
        caption = (f"{cfg['name']}: {cfg['coap']['transport']}/{cfg['coap']['cc']}, buffer {cfg['link']['buffer_bytes']} B, "
                   f"replication {int(first.replication)}, client {best['client']} connection {best['connection']}: "
                   "server → client segments (blue), retransmissions (red), drops (×), ACKs at the server (green)")
        out.append((f"timeseq-{len(out)}", caption, time_sequence_svg(pts)))
        if len(out) >= limit:
            break
    return out


def _jain_mean(results: list[dict[str, Any]]) -> float:
    from .stats import jain

    vals = [jain([c["exchanges_completed"] for c in r["clients"]]) for r in results]
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else float("nan")


def write(db_path: str | Path, out_dir: str | Path) -> Path:
    doc, _ = build(db_path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(doc, encoding="utf-8")
    return path
