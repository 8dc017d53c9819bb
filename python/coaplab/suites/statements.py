"""The studies' statements as verdicts: `coaplab reproduce` checks the statements the package's
data files document (``[[figure.check]]`` in `coaplab/data/cooja-2013.toml` and
`cocoa-2016.toml`) against a target's configurations and prints, for each, *holds*, *holds in
part* or *does not hold* with the measured quantities behind it.

A statement's check names claims; each claim compares one metric across the target's
algorithms over a range of offered loads (the data file's header lists the kinds). The
statement holds when every claim holds, holds in part when some do, does not hold when none
does, and is *not measured* when the target has no configuration a claim needs.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from itertools import pairwise
from typing import Any

from ..errors import CoaplabError

#: The data files whose figures carry statements and their checks.
STATEMENT_FILES = ("cooja-2013.toml", "cocoa-2016.toml")
#: metric name → (what it is, unit, value of a summary).
METRICS: dict[str, tuple[str, str]] = {
    "carried": ("carried load", "kbit/s"),
    "queue_drops": ("MAC queue drops", "per run"),
    "app_drops": ("application drops", "per run"),
    "unnecessary": ("unnecessary retransmissions", "per run"),
}
HOLDS, IN_PART, FAILS, UNMEASURED = "holds", "holds in part", "does not hold", "not measured"


def metric_value(s: dict[str, Any], metric: str) -> float | None:
    """A summary's value of a statement metric (per run for the counters)."""
    mesh = s.get("mesh") or {}
    reps = s.get("replications") or 1
    if metric == "carried":
        return mesh.get("carried_kbps")
    if metric == "queue_drops":
        return None if mesh.get("mac_queue_drops") is None else mesh["mac_queue_drops"] / reps
    if metric == "app_drops":
        return None if mesh.get("app_drops") is None else mesh["app_drops"] / reps
    if metric == "unnecessary":
        v = s.get("unnecessary_retransmissions_total")
        return None if v is None else v / reps
    raise CoaplabError(f"statement check: unknown metric {metric!r}; known: {', '.join(METRICS)}")


def load_statement_figures(texts: list[str] | None = None) -> list[dict[str, Any]]:
    """Every figure with statements and checks in the packaged data files (or in ``texts``)."""
    if texts is None:
        texts = [resources.files("coaplab").joinpath(f"data/{name}").read_text(encoding="utf-8")
                 for name in STATEMENT_FILES]
    return [f for t in texts for f in tomllib.loads(t).get("figure", []) if f.get("check")]


def _lookup(config: dict[str, Any], dotted: str) -> Any:
    v: Any = config
    for part in dotted.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    return v


def _pair_key(s: dict[str, Any]) -> tuple:
    """What pairs one algorithm's configuration with another's: the swept values but the algorithm."""
    return tuple(sorted((k, str(v)) for k, v in (s.get("swept") or {}).items() if k != "coap.cc"))


def _points(summaries: list[dict[str, Any]], claim: dict[str, Any], where: dict[str, Any],
            algorithm: str) -> list[tuple[float, float, tuple]]:
    """(offered load, metric, pairing key) of `algorithm`'s configurations in the claim's load
    range, by load."""
    lo, hi = claim.get("min_offered", float("-inf")), claim.get("max_offered", float("inf"))
    metric = claim.get("metric", "carried")
    out = []
    for s in summaries:
        if s["config"]["coap"]["cc"] != algorithm or any(_lookup(s["config"], k) != v for k, v in where.items()):
            continue
        offered = (s.get("mesh") or {}).get("offered_kbps", 0.0)
        value = metric_value(s, metric)
        if lo <= offered <= hi and value is not None:
            out.append((offered, value, _pair_key(s)))
    return sorted(out)


def _series(points: list[tuple[float, float, tuple]], digits: int) -> str:
    return " / ".join(f"{v:.{digits}f}" for _, v, _ in points)


def check_claim(summaries: list[dict[str, Any]], claim: dict[str, Any],
                where: dict[str, Any]) -> tuple[bool | None, str]:
    """Whether one claim holds (None: not measured) and the measured quantities, as text."""
    kind, metric = claim["kind"], claim.get("metric", "carried")
    name, unit = METRICS.get(metric, (metric, ""))
    digits = 2 if metric == "carried" else 0
    algorithms = claim["algorithms"]
    series = {a: _points(summaries, claim, where, a) for a in algorithms}
    if claim.get("than"):
        series[claim["than"]] = _points(summaries, claim, where, claim["than"])
    if any(not pts for pts in series.values()):
        return None, f"{name}: no configuration of {', '.join(a for a, p in series.items() if not p)} in range"
    loads = " / ".join(f"{o:.1f}" for o, _, _ in next(iter(series.values())))
    shown = "; ".join(f"{a} {_series(p, digits)}" for a, p in series.items())
    text = f"{name} ({unit}) at {loads} kbit/s offered: {shown}"
    if kind == "equals_offered":
        worst = max(abs(v / o - 1) for pts in series.values() for o, v, _ in pts if o)
        return worst <= claim["tolerance"], f"{text} (carried/offered off by ≤ {worst * 100:.1f} %)"
    if kind in ("below", "above"):
        ref = {key: v for _, v, key in series[claim["than"]]}
        margin = claim.get("margin", 0.0)
        ok = True
        for a in algorithms:
            for o, v, key in series[a]:
                r = ref.get(key)
                if r is None:
                    return None, f"{text} ({claim['than']} not run where {a} ran at {o:.1f} kbit/s)"
                ok &= v <= r * (1 - margin) if kind == "below" else v >= r * (1 + margin)
        need = f" by ≥ {margin * 100:.0f} %" if margin else ""
        return ok, f"{text} ({', '.join(algorithms)} {kind} {claim['than']}{need}?)"
    if kind == "close":
        by_load: dict[tuple, list[float]] = {}
        for pts in series.values():
            for _, v, key in pts:
                by_load.setdefault(key, []).append(v)
        spread = max((max(vs) - min(vs)) / max(vs) if max(vs) else 0.0 for vs in by_load.values())
        return spread <= claim["tolerance"], f"{text} (spread ≤ {spread * 100:.1f} %)"
    if kind == "positive":
        return all(v > 0 for pts in series.values() for _, v, _ in pts), text
    ok, notes = True, []
    for a in algorithms:
        pts = series[a]
        values = [v for _, v, _ in pts]
        if kind == "grows":
            rising = all(b > c for c, b in pairwise(values))
            factor = values[-1] / values[0] if values[0] else float("inf")
            ok &= rising and factor >= claim.get("factor", 1.0)
            notes.append(f"{a} ×{factor:.1f}{'' if rising else ', not rising throughout'}")
        elif kind == "levels":
            change = max((abs(b / c - 1) for c, b in pairwise(values) if c), default=0.0)
            ok &= change <= claim["tolerance"]
            notes.append(f"{a} changes ≤ {change * 100:.1f} % between loads")
        elif kind == "linear":
            r2, slope = _fit([(o, v) for o, v, _ in pts])
            ok &= slope > 0 and r2 >= claim["r2"]
            notes.append(f"{a} R² {r2:.3f}, slope {slope:.1f} per kbit/s")
        else:
            raise CoaplabError(f"statement check: unknown claim kind {kind!r}")
    return ok, f"{text} ({'; '.join(notes)})"


def _fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """R² and slope of the least-squares line through the points."""
    n = len(points)
    if n < 3:
        return 0.0, 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    syy = sum((y - my) ** 2 for _, y in points)
    if sxx == 0 or syy == 0:
        return 0.0, 0.0
    return sxy * sxy / (sxx * syy), sxy / sxx


def statement_verdicts(target: str, summaries: list[dict[str, Any]],
                       figures: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One row per checked statement of the figures that name `target`: ``figure``,
    ``statement`` (its text), ``verdict`` and ``measured`` (the claims' quantities, with
    ``[yes]`` / ``[no]`` / ``[—]`` before each)."""
    out = []
    for fig in load_statement_figures() if figures is None else figures:
        if target not in fig.get("targets", ()):
            continue
        for check in fig["check"]:
            results = [check_claim(summaries, c, check.get("where", {})) for c in check["claims"]]
            measured = [ok for ok, _ in results if ok is not None]
            if len(measured) < len(results) and not any(measured):
                verdict = UNMEASURED
            elif all(measured) and len(measured) == len(results):
                verdict = HOLDS
            elif any(measured):
                verdict = IN_PART
            else:
                verdict = FAILS
            out.append({"figure": fig["id"], "statement": fig["statements"][check["statement"]], "verdict": verdict,
                        "measured": "; ".join(f"[{_mark(ok)}] {t}" for ok, t in results),
                        "claims": [{"holds": ok, "measured": t} for ok, t in results]})
    return out


def _mark(ok: bool | None) -> str:
    return "—" if ok is None else "yes" if ok else "no"


def statements_text(rows: list[dict[str, Any]]) -> str:
    """The verdicts as text: one block per statement, its claims' measurements under it."""
    lines = []
    for r in rows:
        lines.append(f"  {r['verdict'].upper():<14} {r['figure']}: {r['statement']}")
        lines.extend(f"  {'':<14}   [{_mark(c['holds'])}] {c['measured']}" for c in r["claims"])
    return "\n".join(lines) + "\n"
