"""The answer of `coaplab advise` (docs/advise.md): the Pareto front of the safe candidates, the
recommended point and its paragraph, the text table, the JSON object (its schema is
``data/advise.schema.json``) and the one-page HTML answer with its figure."""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from typing import Any

from ..files import atomic_write, output_in
from ..present import figures
from ..present.page import CSS, figure_html

#: The JSON answer's format version (its schema is ``data/advise.schema.json``).
ANSWER_FORMAT = 1


@dataclass(frozen=True)
class Objective:
    """An objective: its name, whether larger is better, its unit and title."""

    name: str
    maximise: bool
    unit: str
    title: str


DELIVERED_OBJ = Objective("delivered", True, "", "delivered fraction of exchanges")


def _value(point: dict[str, Any], o: Objective) -> float | None:
    return (point["objectives"].get(o.name) or {}).get("value")


def _better_or_equal(a: float | None, b: float | None, o: Objective) -> bool:
    if a is None:
        return b is None
    if b is None:
        return True
    return a >= b if o.maximise else a <= b


def dominates(a: dict[str, Any], b: dict[str, Any], objectives: list[Objective]) -> bool:
    """``a`` is at least as good as ``b`` in every objective and better in one (a missing value
    — no exchange completed — is the worst)."""
    if not all(_better_or_equal(_value(a, o), _value(b, o), o) for o in objectives):
        return False
    return any(not _better_or_equal(_value(b, o), _value(a, o), o) for o in objectives)


def sort_key(point: dict[str, Any]) -> tuple:
    """The knobs' values in the knobs' order: names before numbers, smaller numbers first."""
    return tuple((0, v, 0.0) if isinstance(v, str) else (1, "", float(v)) for _, v in sorted(point["knobs"].items()))


def pareto_front(points: list[dict[str, Any]], objectives: list[Objective]) -> list[dict[str, Any]]:
    """The safe points no other safe point dominates, ordered by the first objective (best
    first), then by their knobs."""
    safe = [p for p in points if p["safe"]]
    front = [p for p in safe if not any(dominates(q, p, objectives) for q in safe if q is not p)]
    o = objectives[0]
    return sorted(front, key=lambda p: (_rank(_value(p, o), o), sort_key(p)))


def _rank(v: float | None, o: Objective) -> float:
    if v is None:
        return math.inf
    return -v if o.maximise else v


def recommend(front: list[dict[str, Any]], objectives: list[Objective], rfc: dict[str, Any] | None = None
              ) -> dict[str, Any] | None:
    """The front's knee: each objective scaled to [0, 1] over the front (0 = the front's best),
    the point nearest the ideal point (all 0). Ties go to the point that changes fewest of RFC
    7252's values (``rfc``'s knobs: change only what pays), then to the first by its knobs
    (:func:`sort_key`)."""
    base = rfc["knobs"] if rfc else {}

    def changes(p: dict[str, Any]) -> int:
        return sum(1 for k, v in p["knobs"].items() if k in base and base[k] != v)

    if not front:
        return None

    def scaled(p: dict[str, Any]) -> float:
        d = 0.0
        for o in objectives:
            vals = [v for q in front if (v := _value(q, o)) is not None]
            v = _value(p, o)
            if v is None or not vals:
                d += 1.0
                continue
            best, worst = (max(vals), min(vals)) if o.maximise else (min(vals), max(vals))
            d += ((v - best) / (worst - best)) ** 2 if worst != best else 0.0
        return d

    return min(front, key=lambda p: (round(scaled(p), 12), changes(p), sort_key(p)))


def fmt(v: float | None, o: Objective) -> str:
    if v is None:
        return "—"
    return f"{v:.4f}" if o.name == "delivered" else f"{v:.3g}"


def knobs_text(knobs: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v:g}" for k, v in knobs.items())


def paragraph(rec: dict[str, Any] | None, front: list[dict[str, Any]], rfc: dict[str, Any],
              objectives: list[Objective], overload: dict[str, Any]) -> str:
    """The recommendation in one paragraph: the knob values, what they give against RFC 7252's
    defaults, and what the front's extremes trade."""
    if rec is None:
        return ("No candidate passed the scorecard's safety criteria on this deployment's overload case "
                f"({overload['clients']} clients); widen the knobs' ranges or raise the budget. "
                "The evaluated candidates and the criterion each failed are listed.")
    parts = [f"Configure {knobs_text(rec['knobs'])}."]
    vs = []
    for o in objectives:
        a, b = _value(rec, o), _value(rfc, o)
        vs.append(f"{o.title} {fmt(a, o)} against {fmt(b, o)} with RFC 7252's defaults")
    parts.append("On this deployment it gives " + "; ".join(vs) + ".")
    parts.append(f"It passed every safety criterion of the scorecard on the deployment and on its overload case "
                 f"({overload['clients']} clients, ×{overload['factor']})"
                 + (", where RFC 7252's default retransmits spuriously" if overload["congested"] else
                    f", where RFC 7252's default delivers {fmt(d, DELIVERED_OBJ)} of its exchanges"
                    if (d := overload.get("default_delivered")) is not None and d < 1 else "") + ".")
    if len(front) > 1:
        ends = []
        for o in objectives:
            best = min(front, key=lambda p: (_rank(_value(p, o), o), sort_key(p)))
            if best is not rec:
                others = ", ".join(f"{p.title} {fmt(_value(best, p), p)}" for p in objectives if p is not o)
                ends.append(f"the best {o.title} ({fmt(_value(best, o), o)}) takes {knobs_text(best['knobs'])}, "
                            f"at {others}")
        if ends:
            parts.append("The trade along the front: " + "; ".join(ends) + ".")
    if not rfc["safe"]:
        parts.append(f"RFC 7252's defaults themselves failed {', '.join(rfc['failed'])} here.")
    return " ".join(parts)


def answer(meta: dict[str, Any], objectives: list[Objective], evaluated: list[dict[str, Any]], rfc: dict[str, Any],
           compare: list[dict[str, Any]], overload: dict[str, Any]) -> dict[str, Any]:
    """The JSON answer (``data/advise.schema.json``)."""
    pool = {json.dumps(p["knobs"], sort_keys=True): p for p in [*evaluated, rfc, *compare]}
    front = pareto_front(list(pool.values()), objectives)  # RFC 7252's and the compared settings compete too
    rec = recommend(front, objectives, rfc)
    return {
        "format": ANSWER_FORMAT,
        **meta,
        "objectives": [{"name": o.name, "direction": "maximise" if o.maximise else "minimise", "unit": o.unit,
                        "title": o.title} for o in objectives],
        "overload": overload,
        "pareto_front": front,
        "recommendation": {"knobs": dict(rec["knobs"]) if rec else None, "paragraph": paragraph(rec, front, rfc, objectives, overload),
                           "objectives": rec["objectives"] if rec else None},
        "rfc7252": rfc,
        "compare": compare,
        "evaluated": evaluated,
    }


def _cell(point: dict[str, Any], o: Objective) -> str:
    m = point["objectives"].get(o.name) or {}
    ci = m.get("ci")
    return fmt(m.get("value"), o) + (f" [{fmt(ci[0], o)}, {fmt(ci[1], o)}]" if ci else "")


def _rows(ans: dict[str, Any], objectives: list[Objective]) -> tuple[list[str], list[list[str]]]:
    knobs = list(ans["knobs"])
    head = ["", *[k.removeprefix("coap.") for k in knobs], *[f"{o.name} [95 % CI]" for o in objectives], "safety"]
    rows = []
    rec = ans["recommendation"]["knobs"]

    def row(label: str, p: dict[str, Any]) -> list[str]:
        vals = [str(p["knobs"].get(k, "")) if not isinstance(p["knobs"].get(k), float) else f"{p['knobs'][k]:g}" for k in knobs]
        safety = "safe" if p["safe"] else "fails " + ", ".join(p["failed"])
        return [label, *vals, *[_cell(p, o) for o in objectives], safety]

    for p in ans["pareto_front"]:
        rows.append(row("* front" if p["knobs"] == rec else "front", p))
    rows.append(row("RFC 7252", ans["rfc7252"]))
    for p in ans["compare"]:
        rows.append(row(p["label"], p))
    return head, rows


def text(ans: dict[str, Any], objectives: list[Objective]) -> str:
    """The terminal answer: the front (``*`` marks the recommendation), RFC 7252's defaults and
    the compared settings, then the paragraph."""
    head, rows = _rows(ans, objectives)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]]
    unsafe = [p for p in ans["evaluated"] if not p["safe"]]
    tail = (f"{len(ans['evaluated'])} candidates evaluated, {len(unsafe)} unsafe; overload case "
            f"{ans['overload']['clients']} clients (×{ans['overload']['factor']}); {ans['runs_executed']} runs now, "
            f"{ans['wall_s']:.0f} s.")
    return "\n".join([*lines, "", ans["recommendation"]["paragraph"], "", tail]) + "\n"


def figure(ans: dict[str, Any], objectives: list[Objective]) -> figures.Figure:
    """The first two objectives as axes: every candidate (unsafe ones as crosses), the front
    with its 95 % intervals joined by a line, RFC 7252's defaults and the compared settings labelled."""
    from matplotlib.lines import Line2D  # loaded with the figures already

    fig = figures.new_figure("two", 3.2)
    ax = fig.add_subplot(1, 1, 1)
    ox = objectives[0]
    oy = objectives[1] if len(objectives) > 1 else None

    def xy(p: dict[str, Any]) -> tuple[float, float] | tuple[None, None]:
        x, y = _value(p, ox), (_value(p, oy) if oy else 0.0)
        return (x, y) if x is not None and y is not None else (None, None)

    def err(p: dict[str, Any], o: Objective | None) -> list[list[float]] | None:
        if o is None:
            return None
        m = p["objectives"].get(o.name) or {}
        ci, v = m.get("ci"), m.get("value")
        return [[max(v - ci[0], 0.0)], [max(ci[1] - v, 0.0)]] if ci and v is not None else None

    pal = figures.OKABE_ITO
    for p in ans["evaluated"]:
        x, y = xy(p)
        if x is not None and y is not None:
            ax.plot([x], [y], "x" if not p["safe"] else "o", color="#999999", ms=3, mew=0.6, zorder=1)
    front = [p for p in ans["pareto_front"] if xy(p)[0] is not None]
    if front:
        pts = sorted((a, b) for p in front for a, b in [xy(p)] if a is not None and b is not None)
        ax.plot([a for a, _ in pts], [b for _, b in pts], "-", color=pal[0], lw=0.8, zorder=2)
    for p in front:
        x, y = xy(p)
        if x is None or y is None:
            continue
        ax.errorbar([x], [y], xerr=err(p, ox), yerr=err(p, oy), fmt="o", color=pal[0], ms=4, elinewidth=0.7,
                    capsize=1.5, zorder=3)
    rec = ans["recommendation"]["knobs"]
    marks = [(ans["rfc7252"], "RFC 7252", pal[1], "s")] + [(p, p["label"], pal[2 + i % 5], "D")
                                                            for i, p in enumerate(ans["compare"])]
    marks += [(p, "recommended", pal[3], "*") for p in front if p["knobs"] == rec]  # drawn last: on top
    handles = [Line2D([], [], ls="", marker="x", color="#999999"), Line2D([], [], ls="-", marker="o", color=pal[0])]
    labels = ["unsafe (fails a safety criterion)", "Pareto front (safe), 95 % CI"]
    for p, label, colour, marker in marks:
        x, y = xy(p)
        if x is None or y is None:
            continue
        ax.errorbar([x], [y], xerr=err(p, ox), yerr=err(p, oy), fmt=marker, color=colour, ms=9 if marker == "*" else 6,
                    elinewidth=0.7, capsize=1.5, zorder=5 if marker == "*" else 4, mfc=colour if p["safe"] else "none")
        handles.append(Line2D([], [], ls="", marker=marker, color=colour))
        labels.append(label + ("" if p["safe"] else " (unsafe)"))
    ax.set_xlabel(ox.title)
    ax.set_ylabel(oy.title if oy else "")
    figures.style_axes(ax)
    figures.add_legend(fig, handles, labels, "")
    return fig


def write_html(ans: dict[str, Any], objectives: list[Objective], out_dir: str) -> str:
    """``DIR/index.html`` (one page, the figure inline as SVG) and ``DIR/front.svg``."""
    esc = html.escape
    fig = figure(ans, objectives)
    svg = output_in(out_dir, "front.svg", "--out")
    fig.save(svg)
    head, rows = _rows(ans, objectives)
    table = ("<div class=table-box><table><tr>" + "".join(f"<th class=l>{esc(h)}</th>" for h in head) + "</tr>"
             + "".join("<tr>" + "".join(f"<td class=l>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
             + "</table></div>")
    unsafe = [p for p in ans["evaluated"] if not p["safe"]]
    urows = "".join(f"<tr><td class=l>{esc(knobs_text(p['knobs']))}</td><td class=l>{esc(', '.join(p['failed']))}</td>"
                    f"<td class=l>{esc('; '.join(_failure(p, c) for c in p['failed']))}</td></tr>" for p in unsafe)
    o = ans["overload"]
    page = (f"<!doctype html><html><head><meta charset=utf-8><title>coaplab advise: {esc(ans['name'])}</title>"
            f"<style>{CSS}</style></head><body><h1>What should <code>{esc(ans['name'])}</code> configure?</h1>"
            f"<p>{esc(ans['recommendation']['paragraph'])}</p>"
            f"<p class=muted>Deployment <code>{esc(ans['deployment'])}</code>; {len(ans['evaluated'])} candidates "
            f"({esc(ans['method'])}), {ans['replications']} replications each; overload case {o['clients']} clients "
            f"(×{o['factor']}); scorecard battery version {ans['battery_version']} (docs/scorecard.md); "
            f"{ans['runs_executed']} runs now, wall time {ans['wall_s']:.0f} s.</p>"
            + figure_html("fig-front", "The candidates on the first two objectives: the safe Pareto front with "
                          "95 % intervals over replications, RFC 7252's defaults and the compared settings.", fig)
            + f"<h2>Front, RFC 7252 and compared settings</h2>{table}"
            + (f"<h2>Unsafe candidates</h2><div class=table-box><table><tr><th class=l>knobs</th><th class=l>failed</th>"
               f"<th class=l>measured</th></tr>{urows}</table></div>" if unsafe else "")
            + "</body></html>")
    path = output_in(out_dir, "index.html", "--out")
    with atomic_write(path, "w", encoding="utf-8") as f:
        f.write(page)
    return str(path)


def _failure(p: dict[str, Any], cid: str) -> str:
    c = p["criteria"][cid]
    m = c["measured"]
    return f"{cid} {'—' if m is None else f'{m:.3g}'} (needs {c['comparison']} {c['threshold']:g}; {c['where']})"
