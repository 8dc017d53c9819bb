"""`coaplab scorecard TARGET`: is an algorithm congestion safe? (issue #24, docs/scorecard.md)

A fixed, versioned battery of the literature's scenarios (``data/scorecard-battery.toml``) runs
the target beside the reference algorithms through :func:`coaplab.execute.runner.run_scenario` (so the
runs are stored in the results database and a card resumes), then each criterion is graded
against its threshold from the summaries the runner returns. The card is a JSON object
(validated against ``data/scorecard.schema.json``) and, with ``out``, a one-page HTML file
drawn with :mod:`coaplab.present.figures` and the report's HTML helpers.
"""

from __future__ import annotations

import copy
import html
import json
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..analyse.stats import jain
from ..describe.capi import is_foreign
from ..describe.scenario import get_dotted, set_dotted
from ..errors import CoaplabError
from ..execute.runner import run_scenario
from ..execute.supervise import load_plugin, supervised
from ..execute.tidy import fmt_value, title
from ..files import atomic_write, output_in
from ..names import did_you_mean
from ..present import figures
from ..present.page import CSS, figure_html

#: The batteries `--battery` accepts: the full one (the studies' sizes) and the reduced one the
#: tests use (fewer clients, replications and configurations; the card says so).
BATTERIES = ("full", "quick")
#: The JSON card's format version (its schema is ``data/scorecard.schema.json``).
CARD_FORMAT = 1


class ScorecardError(CoaplabError):
    """Bad scorecard input (exit 2)."""


@dataclass
class Battery:
    """A battery as data: its version, reference algorithms, scenarios and criteria."""

    name: str
    version: int
    references: list[str]
    scenarios: list[dict[str, Any]]
    criteria: dict[str, dict[str, Any]]


def _data(name: str) -> str:
    return resources.files("coaplab").joinpath("data", name).read_text(encoding="utf-8")


def load_battery(name: str = "full") -> Battery:
    """The packaged battery; ``quick`` applies each scenario's ``[scenario.quick]`` overrides."""
    if name not in BATTERIES:
        raise ScorecardError(f"--battery: {name!r} is not a battery{did_you_mean(name, BATTERIES, quote=False)};"
                             f" allowed: {', '.join(BATTERIES)}")
    data = tomllib.loads(_data("scorecard-battery.toml"))
    scenarios = []
    for sc in data["scenario"]:
        sc = copy.deepcopy(sc)
        quick = sc.pop("quick", {})
        if name == "quick":
            sc["title"] = quick.get("title", sc["title"])  # what the reduced scenario runs
            for key, value in quick.get("config", {}).items():
                if "." in key:
                    set_dotted(sc["config"], key, value)
                else:  # a whole value (e.g. the list of groups) is replaced
                    sc["config"][key] = value
            sc.setdefault("sweep", {}).update(quick.get("sweep", {}))
        scenarios.append(sc)
    return Battery(name, int(data["version"]), list(data["references"]), scenarios, data["criterion"])


def check_target(target: str) -> str:
    """A registered algorithm, ``python:FILE:CLASS`` or ``c:LIB:NAME``; anything else is one line
    (exit 2)."""
    from .. import _core  # the extension: loaded only when a card is made

    if is_foreign(target):
        try:  # in a supervised worker process: a crash, exit or hang while loading is one line
            supervised(target, " while loading it", load_plugin, target)
        except ValueError as e:
            raise ScorecardError(str(e).splitlines()[0]) from None
        return target
    if target not in _core.algorithms():
        raise ScorecardError(f"TARGET: {target!r} is not a registered algorithm"
                             f"{did_you_mean(target, _core.algorithms(), quote=False)}; allowed: "
                             f"{', '.join(_core.algorithms())}, python:FILE:CLASS or c:LIB:NAME")
    return target


def _algorithms(target: str, battery: Battery) -> list[str]:
    return [target] + [r for r in battery.references if r != target]


def scenario_dict(sc: dict[str, Any], algorithms: list[str]) -> dict[str, Any]:
    """One battery scenario as a coaplab scenario: its configuration, its sweep, and the
    algorithms as the last (fastest) sweep key — the target group's for the mixed population."""
    out = copy.deepcopy(sc["config"])
    out["name"] = f"scorecard-v{{version}}-{sc['id']}"
    sweep = dict(sc.get("sweep", {}))
    sweep["group.target.coap.cc" if sc["id"] == "mixed" else "coap.cc"] = list(algorithms)
    out["sweep"] = sweep
    return out


def _cc(summary: dict[str, Any]) -> str:
    c = summary["config"]
    if c.get("group"):
        return next(g["coap"]["cc"] for g in c["group"] if g["name"] == "target")
    return c["coap"]["cc"]


def _others(summary: dict[str, Any]) -> tuple:
    """The swept values other than the algorithm: configurations with equal keys are compared."""
    return tuple((k, json.dumps(v)) for k, v in sorted(summary.get("swept", {}).items())
                 if k not in ("coap.cc", "group.target.coap.cc"))


def _p50(summary: dict[str, Any], key: str = "fct_s") -> float | None:
    v = summary.get(key) or {}
    return v.get("p50")


def _by_setting(summaries: list[dict[str, Any]]) -> dict[tuple, dict[str, dict[str, Any]]]:
    out: dict[tuple, dict[str, dict[str, Any]]] = {}
    for s in summaries:
        out.setdefault(_others(s), {})[_cc(s)] = s
    return out


def _bloated(summary: dict[str, Any]) -> bool:
    return summary["config"]["link"]["buffer_bytes"] >= BLOATED_BUFFER_BYTES


#: The study's "infinite" buffer (docs/validation.md, 400 clients): 1,410,000 B, far more than
#: the bandwidth-delay product (2,500 B); collapse is graded on it.
BLOATED_BUFFER_BYTES = 1_410_000


def _label(setting: tuple) -> str:
    return ", ".join(f"{k} = {json.loads(v)}" for k, v in setting) or "(one configuration)"


def _ratio_worst(rows: list[tuple[str, float | None, float | None]], larger_is_worse: bool) -> tuple[float | None, str]:
    """(setting, value, reference) rows → the worst ratio value / reference and where."""
    best: tuple[float | None, str] = (None, "")
    for where, v, ref in rows:
        if ref is None or v is None or ref <= 0:
            continue
        r = v / ref
        if best[0] is None or (r > best[0] if larger_is_worse else r < best[0]):
            best = (r, where)
    return best


def grade(battery: Battery, target: str, results: dict[str, list[dict[str, Any]]],
          overloaded: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, dict[str, Any]]:
    """Each criterion's measured value, threshold and grade from the scenarios' summaries.
    ``overloaded`` says which configurations of ``collapse`` / ``short-lived`` the collapse
    criteria compare (default: the bufferbloated ones; `coaplab advise` passes its own overload
    case, docs/advise.md)."""
    overloaded = overloaded or _bloated
    values: dict[str, tuple[float | None, str]] = {}
    fct_rows: list[tuple[str, float | None, float | None]] = []
    unn_rows: list[tuple[str, float | None, float | None]] = []
    for sid in ("collapse", "short-lived"):
        for setting, by_cc in _by_setting(results.get(sid, [])).items():
            if target not in by_cc or not overloaded(by_cc[target]):
                continue
            where = f"{sid}: {_label(setting)}"
            ref_fcts = [f for r in battery.references if r in by_cc and (f := _p50(by_cc[r])) is not None]
            fct_rows.append((where, _p50(by_cc[target]), min(ref_fcts) if ref_fcts else None))
            d = by_cc.get("default")
            du = _p50(d, "unnecessary_retransmissions_per_client") if d else None
            if du is not None and du >= 1:  # no collapse of default to avoid: nothing to compare
                unn_rows.append((where, _p50(by_cc[target], "unnecessary_retransmissions_per_client"), du))
    values["collapse_fct"] = _ratio_worst(fct_rows, True)
    values["collapse_unnecessary"] = _ratio_worst(unn_rows, True)

    def against_default(sid: str, metric, larger_is_worse: bool) -> tuple[float | None, str]:
        rows: list[tuple[str, float | None, float | None]] = []
        for setting, by_cc in _by_setting(results.get(sid, [])).items():
            if target in by_cc and "default" in by_cc:
                rows.append((f"{sid}: {_label(setting)}", metric(by_cc[target]), metric(by_cc["default"])))
        return _ratio_worst(rows, larger_is_worse)

    values["loss_recovery"] = against_default("errors", _p50, True)
    values["settling"] = against_default("burst", _settling, True)
    values["mesh_carried"] = against_default("mesh", lambda s: (s.get("mesh") or {}).get("carried_kbps"), False)
    values["mixed_safety"] = against_default("mixed", lambda s: _p50(s["groups"]["legacy"]), True)
    values["nstart_collapse"] = _nstart_collapse(target, results.get("nstart", []))
    values["observe_freshness"] = against_default("observe", lambda s: _observe(s, "notification_age_p95_s"), True)
    values["observe_delivery"] = against_default("observe", lambda s: _observe(s, "notification_delivered_fraction"), False)
    jains = [(s.get("jain_fairness"), f"{sid}: {_label(_others(s))}") for sid in battery.criteria["fairness"]["scenarios"]
             for s in results.get(sid, []) if _cc(s) == target]
    jains = [j for j in jains if j[0] is not None]
    values["fairness"] = min(jains) if jains else (None, "")
    out = {}
    for cid, crit in battery.criteria.items():
        v, where = values[cid]
        ok = v is not None and (v <= crit["threshold"] if crit["comparison"] == "<=" else v >= crit["threshold"])
        out[cid] = {"title": crit["title"], "kind": crit["kind"], "measured": v, "comparison": crit["comparison"], "threshold": crit["threshold"],
                    "grade": "pass" if ok else "fail", "where": where, "measures": crit["value"],
                    "scenarios": list(crit["scenarios"])}
    return out


def _nstart_collapse(target: str, summaries: list[dict[str, Any]]) -> tuple[float | None, str]:
    """The target's goodput (completed exchanges per second) with NSTART 4 over its own with
    NSTART 1: more offered load must not buy less useful work (docs/scorecard.md)."""
    goodput = {s["config"]["coap"]["nstart"]: s["throughput_exchanges_per_s"] for s in summaries if _cc(s) == target}
    if not goodput.get(1) or 4 not in goodput:
        return None, ""
    return goodput[4] / goodput[1], "nstart: coap.nstart = 4 against 1"


def _observe(summary: dict[str, Any], key: str) -> float | None:
    """An Observe figure of a summary (its ``observe`` block, docs/model.md "Observe")."""
    return (summary.get("observe") or {}).get(key)


def _settling(summary: dict[str, Any]) -> float | None:
    """Mean settling time. With ``workload.settling_cap_s`` the engine already reports a burst
    that did not settle as the cap (crates/engine/src/metrics.rs ``capped_settling``); a summary
    without any settling time counts as the cap."""
    v = summary.get("settling_time_s")
    return summary["config"]["workload"].get("settling_cap_s") if v is None else v


def run_battery(target: str, battery: Battery, db: str | Path | None, jobs: int | None, progress: bool
                ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str], int, float]:
    """Runs every scenario for the target and the references; returns the summaries by scenario,
    the scenario names, the runs executed now (the others came from the database) and the wall time."""
    start = time.monotonic()
    results: dict[str, list[dict[str, Any]]] = {}
    names: dict[str, str] = {}
    executed = 0
    algorithms = _algorithms(target, battery)
    for i, sc in enumerate(battery.scenarios, 1):
        scenario = scenario_dict(sc, algorithms)
        scenario["name"] = scenario["name"].format(version=battery.version)
        names[sc["id"]] = scenario["name"]
        if progress:
            print(f"coaplab scorecard {target}: scenario {i}/{len(battery.scenarios)} {sc['id']} "
                  f"({time.monotonic() - start:.0f} s elapsed)", file=sys.stderr, flush=True)
        result = run_scenario(scenario, jobs=jobs, progress=progress, db=db)
        if result.failures:
            name, cid, rep, err = result.failures[0]
            raise ScorecardError(f"{len(result.failures)} runs of {name} failed; the first ({cid} replication {rep}): {err}")
        for s in result.summaries:  # per-replication values, for the figures' whiskers
            runs = result.runs.get(s["config_id"], [])
            s["replication_values"] = {
                "jain_fairness": [j for r in runs if (j := jain([c["exchanges_completed"] for c in r["clients"]]))
                                  is not None],
                "settling_time_s": [r["settling_time_s"] for r in runs if r.get("settling_time_s") is not None]}
        results[sc["id"]] = result.summaries
        executed += result.executed
        if sc.get("tcp"):  # the study's CoAP over TCP, beside the UDP algorithms (not graded)
            tcp = copy.deepcopy(scenario)
            tcp["name"] += "-tcp"
            del tcp["sweep"]["coap.cc"]
            for key, value in sc["tcp"].items():
                set_dotted(tcp, key, value)
            result = run_scenario(tcp, jobs=jobs, progress=progress, db=db)
            results[sc["id"]] += result.summaries
            executed += result.executed
            names[sc["id"] + "-tcp"] = tcp["name"]
    return results, names, executed, time.monotonic() - start


def scorecard(target: str, battery_name: str = "full", db: str | Path | None = None, jobs: int | None = None,
              progress: bool = False) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The card of ``target`` (the JSON object) and the summaries it was graded on."""
    target = check_target(target)
    battery = load_battery(battery_name)
    results, names, executed, wall = run_battery(target, battery, db, jobs, progress)
    criteria = grade(battery, target, results)
    card = {
        "format": CARD_FORMAT,
        "target": target,
        "verdict": verdict(criteria),
        "battery": {"name": battery.name, "version": battery.version, "references": battery.references,
                    "reduced": battery.name != "full", "emulated": False},
        "criteria": criteria,
        "scenarios": [{"id": sc["id"], "title": sc["title"], "study": sc["study"], "name": names[sc["id"]],
                       "config_ids": [s["config_id"] for s in results[sc["id"]]],
                       **({"tcp_name": names[sc["id"] + "-tcp"]} if sc.get("tcp") else {})} for sc in battery.scenarios],
        "runs_executed": executed,
        "wall_s": wall,
    }
    return card, results


#: Stacks whose clients run the scenario's ``coap.cc``: coaplab's endpoint, and Californium's
#: congestion controls (coaplab.stacks.thirdparty.CALIFORNIUM_CC; it refuses the others in one line).
ALGORITHM_STACKS = ("coaplab", "californium")
#: The stacks an emulated card grades (coaplab.stacks.CLIENT_KINDS: the client plays the target).
STACKS = ("coaplab", "libcoap", "aiocoap", "californium")


def emulated_scorecard(stack: str, target: str | None = None, db: str | Path | None = None, progress: bool = False,
                       jobs: int | None = None) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The scaled emulated card of a real stack's clients (``coaplab`` and ``californium`` run
    ``target``, default ``default``; the others run their own timers) against the
    simulated references on the same configurations. Needs root (coaplab.stacks.emulate)."""
    # Lazy: subprocess and namespace set-up, only for emulated cards.
    from ..stacks import emulate

    if stack not in STACKS:
        raise ScorecardError(f"--stack: {stack!r}; allowed: {', '.join(STACKS)}")
    if stack not in ALGORITHM_STACKS and target not in (None, "default"):
        raise ScorecardError(f"--stack {stack}: the stack runs its own timers; drop TARGET (only --stack "
                             f"{' or '.join(ALGORITHM_STACKS)} takes an algorithm)")
    cc = check_target(target or "default")
    label = f"{stack}:{cc}" if stack in ALGORITHM_STACKS else stack
    data = tomllib.loads(_data("scorecard-battery.toml"))
    em = data["emulated"]
    full = load_battery("full")
    graded = list(em["criteria"])
    scale = em["scale"]
    battery = Battery("emulated", full.version, full.references, em["scenario"],
                      {k: v for k, v in full.criteria.items() if k in graded})
    emulate.check_environment()
    start = time.monotonic()
    results: dict[str, list[dict[str, Any]]] = {}
    names: dict[str, str] = {}
    executed = 0
    for sc in battery.scenarios:
        scenario = scenario_dict(sc, battery.references)
        scenario["name"] = f"scorecard-v{battery.version}-emulated-{sc['id']}"
        names[sc["id"]] = scenario["name"]
        sim = run_scenario(scenario, jobs=jobs, progress=progress, db=db)
        executed += sim.executed
        stack_scenario = copy.deepcopy(scenario)
        stack_scenario["sweep"]["coap.cc"] = [cc]
        emulated = emulate.emulate(stack_scenario, client=stack, server="coaplab", db=str(db) if db else None,
                                   replications=int(em["stack_replications"]), progress=progress)
        executed += sum(s["replications"] for s in emulated)
        for s in emulated:  # named apart from a simulated reference of the same algorithm
            s["config"] = copy.deepcopy(s["config"])
            s["config"]["coap"]["cc"] = label
            s["swept"] = {**s.get("swept", {}), "coap.cc": label}
        results[sc["id"]] = emulated + sim.summaries
    criteria = grade(battery, label, results)
    for c in criteria.values():
        c["scenarios"] = [x for x in c["scenarios"] if x in names]
    card = {
        "format": CARD_FORMAT,
        "target": label,
        "verdict": verdict(criteria),
        "battery": {"name": "emulated", "version": battery.version, "references": battery.references, "reduced": True,
                    "emulated": True, "scale": scale},
        "criteria": criteria,
        "scenarios": [{"id": sc["id"], "title": sc["title"], "study": sc["study"], "name": names[sc["id"]],
                       "config_ids": list(dict.fromkeys(s["config_id"] for s in results[sc["id"]]))}
                      for sc in battery.scenarios],
        "runs_executed": executed,
        "wall_s": time.monotonic() - start,
    }
    return card, results


def verdict(criteria: dict[str, dict[str, Any]]) -> str:
    """Safe when every safety criterion passes; the performance criteria do not decide it."""
    return "safe" if all(c["grade"] == "pass" for c in criteria.values() if c["kind"] == "safety") else "unsafe"


def validate(card: dict[str, Any]) -> None:
    """Raises if the card does not match the shipped schema (``jsonschema``: a test dependency)."""
    import jsonschema  # lazy: a test/developer dependency, not needed to make a card

    jsonschema.validate(card, json.loads(_data("scorecard.schema.json")))


def leaderboard(battery_name: str = "full", db: str | Path | None = None, jobs: int | None = None,
                progress: bool = False) -> list[dict[str, Any]]:
    """Every registered algorithm's card, ranked: safety criteria passed (most first), then all
    criteria passed, then the collapse FCT ratio (smallest first)."""
    from .. import _core  # the extension: loaded only when a card is made

    cards = [scorecard(a, battery_name, db, jobs, progress)[0] for a in _core.algorithms()]
    return sorted(cards, key=rank_key)


def rank_key(card: dict[str, Any]) -> tuple:
    """Safety criteria passed (most first), then all criteria passed, then the collapse FCT ratio."""
    cs = card["criteria"].values()
    safety = sum(c["grade"] == "pass" for c in cs if c["kind"] == "safety")
    passed = sum(c["grade"] == "pass" for c in cs)
    fct = card["criteria"]["collapse_fct"]["measured"]
    return (-safety, -passed, fct if fct is not None else float("inf"), card["target"])


def leaderboard_table(cards: list[dict[str, Any]]) -> str:
    """A Markdown table: rank, algorithm, verdict, criteria passed and each measured value."""
    crits = list(cards[0]["criteria"]) if cards else []
    head = "| rank | algorithm | verdict | passed | " + " | ".join(crits) + " |"
    lines = [head, "|" + "---|" * (4 + len(crits))]
    for i, card in enumerate(cards, 1):
        cs = card["criteria"]
        passed = sum(c["grade"] == "pass" for c in cs.values())
        cells = [f"{_num(cs[c]['measured'])} {'✓' if cs[c]['grade'] == 'pass' else '✗'}" for c in crits]
        lines.append(f"| {i} | `{card['target']}` | {card['verdict']} | {passed}/{len(cs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _num(v: Any) -> str:
    return "—" if v is None else f"{v:.4g}"


def text(card: dict[str, Any]) -> str:
    """The card as a few readable lines."""
    b = card["battery"]
    head = (f"{card['target']}: {card['verdict'].upper()} (battery {b['name']} v{b['version']}"
            f"{', reduced' if b['reduced'] else ''}; references {', '.join(b['references'])})")
    lines = [head]
    for cid, c in card["criteria"].items():
        lines.append(f"  {c['grade'].upper():4}  {c['kind']:<11} {cid:<21} {_num(c['measured']):>8} {c['comparison']} {c['threshold']:<5}"
                     f"  {c['where']}")
    return "\n".join(lines) + "\n"


_FIGURES = {
    "collapse": ("fct", "link.buffer_bytes", "coap.cc", "workload.kind"),
    "short-lived": ("fct", "workload.clients", "coap.cc", "link.buffer_bytes"),
    "errors": ("fct", "link.errors", "coap.cc", "workload.kind"),
    "burst": ("settling", "workload.burst_clients", "coap.cc", None),
    "gprs": ("jain", "workload.clients", "coap.cc", None),
    "mesh": ("load", None, "coap.cc", "coap.nstart"),
    "mixed": ("fct", "group", "group.target.coap.cc", None),
}


def _scenario_figure(sid: str, summaries: list[dict[str, Any]]) -> figures.Figure | None:
    kind, x, hue, col = _FIGURES.get(sid, ("fct", None, "coap.cc", None))
    swept = set().union(*(s.get("swept", {}).keys() for s in summaries)) | {"group"}
    x = x if x in swept else None
    col = col if col in swept else None
    if kind == "load":
        return figures.load_curves(summaries, hue=hue, col=col)
    if kind in ("settling", "jain"):
        return _bars(summaries, x, "settling_time_s" if kind == "settling" else "jain_fairness",
                     "settling time (s)" if kind == "settling" else "Jain's index")
    return figures.fct_boxes(summaries, x=x, hue=hue, col=col)


def _bars(summaries: list[dict[str, Any]], x: str | None, key: str, y_label: str) -> figures.Figure:
    """A bar per algorithm and ``x`` value of a scalar summary metric (the mean over
    replications), whiskers from the smallest to the largest replication, the legend above."""
    from matplotlib.patches import Patch  # loaded with the figures already
    fig = figures.new_figure("two", 2.8)
    ax = fig.add_subplot(1, 1, 1)
    ccs = list(dict.fromkeys(_cc(s) for s in summaries))
    xs = list(dict.fromkeys(get_dotted(s["config"], x) if x else "" for s in summaries))
    colours = figures.fill_colours(len(ccs))
    width = 0.8 / max(len(ccs), 1)
    whiskers = False
    for j, cc in enumerate(ccs):
        for i, xv in enumerate(xs):
            s = next((s for s in summaries if _cc(s) == cc and (not x or get_dotted(s["config"], x) == xv)), None)
            if s is None or (v := s.get(key)) is None:
                continue
            reps = (s.get("replication_values") or {}).get(key) or []
            err = [[v - min(reps, default=v)], [max(reps, default=v) - v]]
            whiskers |= len(reps) > 1
            ax.bar(i + j * width, v, width, color=colours[j], yerr=err if len(reps) > 1 else None,
                   error_kw={"elinewidth": 0.8, "capsize": 2.0})
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(xs))], [fmt_value(v) for v in xs])
    ax.set_xlabel(title(x) if x else "")
    ax.set_ylabel(y_label + ("\n(mean; whiskers min–max)" if whiskers else ""))
    figures.style_axes(ax)
    figures.add_legend(fig, [Patch(facecolor=c) for c in colours], ccs, "algorithm")
    return fig


def write_html(card: dict[str, Any], results: dict[str, list[dict[str, Any]]], out_dir: str | Path) -> Path:
    """The one-page, self-contained HTML card (figures inline as SVG)."""
    esc = html.escape
    b = card["battery"]
    rows = "".join(
        f"<tr><td class=l>{esc(c['title'])}</td><td class=l>{esc(c['kind'])}</td><td>{_num(c['measured'])}</td><td>{esc(c['comparison'])} "
        f"{c['threshold']}</td><td class=l><b style='color:{'#070' if c['grade'] == 'pass' else '#a00'}'>"
        f"{c['grade']}</b></td><td class=l>{esc(c['where'])}</td>"
        f"<td class=l><a href='#{esc(c['scenarios'][0])}'>{esc(', '.join(c['scenarios']))}</a></td></tr>"
        for c in card["criteria"].values())
    note = ""
    if b["reduced"] and not b["emulated"]:
        note = ("<p class=muted><b>Reduced battery</b> (<code>--battery quick</code>): fewer clients, replications "
                "and configurations than the studies; a quick check, not a verdict to publish.</p>")
    if b["emulated"]:
        note += f"<p class=muted><b>Emulated</b>: {esc(b.get('scale', ''))}</p>"
    sections = []
    for sc in card["scenarios"]:
        fig = _scenario_figure(sc["id"], results.get(sc["id"], [])) if results.get(sc["id"]) else None
        ids = ", ".join(f"<code>{esc(i)}</code>" for i in sc["config_ids"])
        tcp = f" and <code>{esc(sc['tcp_name'])}</code> (CoAP over TCP, shown, not graded)" if sc.get("tcp_name") else ""
        sections.append(f"<h2 id='{esc(sc['id'])}'>{esc(sc['title'])}</h2><p class=muted>From "
                        f"<code>{esc(sc['study'])}</code>; stored as <code>{esc(sc['name'])}</code>{tcp}: {ids}</p>"
                        + (figure_html(f"fig-{sc['id']}", sc["title"], fig) if fig is not None else ""))
    page = (f"<!doctype html><html><head><meta charset=utf-8><title>coaplab scorecard: {esc(card['target'])}</title>"
            f"<style>{CSS}h1 code{{font-size:1em}}</style></head><body><h1>Is <code>{esc(card['target'])}</code> congestion safe? "
            f"<span style='color:{'#070' if card['verdict'] == 'safe' else '#a00'}'>{card['verdict']}</span></h1>"
            f"<p>Battery <b>{esc(b['name'])}</b>, version <b>{b['version']}</b> (docs/scorecard.md); references: "
            f"{esc(', '.join(b['references']))}. Wall time {card['wall_s']:.0f} s.</p>{note}"
            "<p>The verdict is <i>safe</i> when every <i>safety</i> criterion passes; <i>performance</i> criteria "
            "show what the target costs its own clients.</p>"
            "<div class=table-box><table><tr><th class=l>criterion</th><th class=l>kind</th><th>measured</th><th>threshold</th><th class=l>grade</th>"
            f"<th class=l>worst configuration</th><th class=l>scenario</th></tr>{rows}</table></div>"
            + "".join(sections) + "</body></html>")
    path = output_in(out_dir, "index.html", "--out")
    with atomic_write(path, "w", encoding="utf-8") as f:  # replaces a link there, never writes through it
        f.write(page)
    return path
