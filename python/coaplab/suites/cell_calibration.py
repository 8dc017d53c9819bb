"""`coaplab reproduce cell-calibration`: the NB-IoT / LTE-M cell model against its published
calibration figures (`coaplab/data/cellular.toml`; docs/networks.md "Calibration"), one verdict
row per figure in the shape of :mod:`coaplab.suites.verdicts` — published, simulated,
difference, tolerance (or bound), verdict, unit.

Each figure's ``measure`` says how the model gives it: the engine's downlink peak rate
(``_core.cell_peak_downlink_kbps``), a report's latency from idle over many arrival times
(``_core.cell_report_latency_ms``), the mean round trip of a small run, or the battery life of
a shipped scenario (``coaplab/scenarios/<target>.toml``, one replication). All of it runs in
well under a minute.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable
from importlib import resources
from typing import Any

from .. import _core
from ..describe.scenario import load_scenario
from ..errors import CoaplabError
from ..execute.runner import run_scenario
from .verdicts import MET, MISSED, NOT_SIMULATED, judge

TARGET = "cell-calibration"
DESCRIPTION = ("The NB-IoT / LTE-M cell model against its published calibration figures: peak rates, ping "
               "times, the exception report and the battery target at 164 dB (docs/networks.md \"Calibration\")")
#: The rules a figure may carry besides a tolerance.
BOUNDS = ("at most", "at least")
MEASURES = ("peak", "rtt", "report", "battery")


def load_cell_figures(text: str | None = None) -> list[dict[str, Any]]:
    """The figures of `coaplab/data/cellular.toml` (or of ``text``), each checked for its rule."""
    if text is None:
        text = resources.files("coaplab").joinpath("data/cellular.toml").read_text(encoding="utf-8")
    figures = tomllib.loads(text).get("figure", [])
    for f in figures:
        kind = (f.get("measure") or {}).get("kind")
        if kind not in MEASURES:
            raise CoaplabError(f"cellular.toml: figure {f.get('id')!r}: measure kind {kind!r}; allowed: "
                               f"{', '.join(MEASURES)}")
        if not isinstance(f["measure"].get("sib1", True), bool):
            raise CoaplabError(f"cellular.toml: figure {f.get('id')!r}: sib1 {f['measure']['sib1']!r}; allowed: "
                               "true, false")
        if f.get("bound") is not None and f["bound"] not in BOUNDS:
            raise CoaplabError(f"cellular.toml: figure {f['id']!r}: bound {f['bound']!r}; allowed: {', '.join(BOUNDS)}")
        if "spread" in f:  # a published range: its middle, ± half of it
            spread = f["spread"]
            if len(spread) != 2 or not 0 < spread[0] <= spread[1]:
                raise CoaplabError(f"cellular.toml: figure {f['id']!r}: spread {spread!r}; allowed: [low, high] "
                                   "with 0 < low <= high")
            low, high = float(spread[0]), float(spread[1])
            f["published"], f["tolerance"] = (low + high) / 2, (high - low) / (high + low)
    return figures


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank `p`-th percentile (the smallest value with at least p % of the values at
    or below it)."""
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def _scenario_path(target: str):
    return resources.files("coaplab").joinpath("scenarios").joinpath(f"{target}.toml")


def simulate(fig: dict[str, Any], jobs: int | None = None) -> float | None:
    """The model's value of one figure (in the figure's unit), as its ``measure`` says."""
    m = fig["measure"]
    kind = m["kind"]
    if kind == "peak":
        return float(_core.cell_peak_downlink_kbps(m["category"], bool(m["broadcast"]), sib1=m.get("sib1", True)))
    if kind == "report":
        net = json.dumps(m["network"])
        return percentile([_core.cell_report_latency_ms(net, int(m["ip_bytes"]), seed)
                           for seed in range(int(m["draws"]))], float(m["percentile"]))
    if kind == "rtt":
        s = run_scenario(dict(m["scenario"]), jobs=jobs).summaries[0]
        return None if s.get("mean_rtt_s") is None else s["mean_rtt_s"] * 1000.0
    # battery: the shipped scenario, one replication.
    with resources.as_file(_scenario_path(m["target"])) as path:
        scenario = load_scenario(path)
    scenario.raw["replications"] = 1
    s = run_scenario(scenario, jobs=jobs).summaries[0]
    return (s.get("energy") or {}).get("battery_life_years")


def _configuration(m: dict[str, Any]) -> str:
    """What the model ran for a figure, in a few words."""
    if m["kind"] == "peak":
        if not m["broadcast"]:
            return f"{m['category']}, no broadcast subframes"
        return f"{m['category']}, anchor carrier{'' if m.get('sib1', True) else ' w/o SIB1-NB'}"
    if m["kind"] == "rtt":
        net = m["scenario"]["network"]
        return f"{net['kind']} {net['coupling_loss_db']:g} dB, {'from idle' if net.get('rai') else 'connected'}"
    if m["kind"] == "report":
        return f"{m['network']['kind']} {m['network']['coupling_loss_db']:g} dB, {m['ip_bytes']} B from idle"
    return m["target"]


def _stat(m: dict[str, Any]) -> str:
    return {"peak": "peak rate", "rtt": "mean RTT", "battery": "battery life"}.get(m["kind"], f"p{m.get('percentile')}")


def verdict_row(fig: dict[str, Any], simulated: float | None) -> dict[str, Any]:
    """One verdict row (the keys of :func:`coaplab.suites.verdicts.fct_rows`' rows, plus
    ``bound``): the difference ``simulated / published − 1``; met within the tolerance, or on
    the right side of the bound."""
    pub = float(fig["published"])
    diff = None if simulated is None else simulated / pub - 1.0
    bound = fig.get("bound")
    tol = fig.get("tolerance")
    if bound is None:
        verdict = judge(diff, None if tol is None else float(tol))
    elif simulated is None:
        verdict = NOT_SIMULATED
    else:
        verdict = MET if (simulated <= pub if bound == "at most" else simulated >= pub) else MISSED
    return {"experiment": TARGET, "name": TARGET, "config_id": None, "figure": fig["id"],
            "column": _configuration(fig["measure"]), "stat": _stat(fig["measure"]), "published": pub, "simulated": simulated,
            "ci_low": None, "ci_high": None, "diff": diff, "tolerance": None if bound else tol, "bound": bound,
            "verdict": verdict, "unit": fig["unit"]}


def cell_calibration_rows(jobs: int | None = None, figures: list[dict[str, Any]] | None = None,
                          measure: Callable[[dict[str, Any]], float | None] | None = None) -> list[dict[str, Any]]:
    """Every figure's verdict row; ``measure`` replaces :func:`simulate` (tests doctor values with it)."""
    figures = load_cell_figures() if figures is None else figures
    measure = measure or (lambda f: simulate(f, jobs))
    return [verdict_row(f, measure(f)) for f in figures]


def battery_rows(target: str, summaries: list[dict[str, Any]],
                 figures: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The battery figures whose preset is `target`, judged on a run of it (every replication
    the run made): what `coaplab reproduce nbiot-battery-164-tr45820` prints first."""
    figures = load_cell_figures() if figures is None else figures
    out = []
    for f in figures:
        if f["measure"]["kind"] == "battery" and f["measure"]["target"] == target:
            for s in summaries:
                out.append(verdict_row(f, (s.get("energy") or {}).get("battery_life_years")))
    return out
