"""`coaplab advise DEPLOYMENT.toml`: which CoAP settings should this deployment use? (docs/advise.md)

A deployment is a scenario file (any network kind) plus an ``[advise]`` table: the knobs to tune
(``coap.*`` keys: a fixed value, a list of values or a range), the objectives and a budget. Every
candidate setting is run on the deployment itself and graded by the scorecard's *safety*
criteria (:func:`coaplab.suites.scorecard.grade`, docs/scorecard.md) on the deployment's own
network: the deployment, its **overload case** (the population scaled up until RFC 7252's
fixed timers retransmit spuriously, the collapse regime the battery's 400-client star is in)
beside the scorecard's reference algorithms, and a mixed population (half the overload case on
the candidate, half on RFC 7252's ``default``). The search is Optuna's NSGA-II with the safety
criteria as its constraint (:func:`search`); a space no larger than the budget is evaluated
whole. Every run goes through :func:`coaplab.execute.runner.run_scenario` into the results
database, so a second call re-runs nothing it stored, and a larger budget continues the same
deterministic sequence of candidates. The answer (front, recommendation, page) is built by
:mod:`coaplab.suites.advise_report`.
"""

from __future__ import annotations

import copy
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core
from ..analyse.intervals import percentile_intervals, ratio_interval
from ..analyse.quantile import percentile
from ..describe.scenario import SCHEMA, UDP_ALGORITHMS, Scenario, load_scenario, resolve, set_dotted
from ..errors import CoaplabError
from ..execute.runner import run_scenario
from ..names import did_you_mean, quote_value
from . import advise_report
from .advise_report import Objective
from .scorecard import Battery, grade, load_battery


class AdviseError(CoaplabError):
    """A bad deployment or ``[advise]`` table (exit 2)."""


#: RFC 7252 §4.8's transmission parameters (ACK_TIMEOUT 2 s, ACK_RANDOM_FACTOR 1.5,
#: MAX_RETRANSMIT 4, NSTART 1) with its own retransmission scheme (§4.2: the registry's
#: ``default``): the point every answer is set beside.
RFC7252_DEFAULTS: dict[str, Any] = {"coap.cc": "default", "coap.ack_timeout_s": 2.0, "coap.ack_random_factor": 1.5,
                                    "coap.max_retransmit": 4, "coap.nstart": 1}
#: Default range of ``coap.ack_timeout_s`` (min, max, step), s: from RIOT's proposed 0.5 s
#: (RIOT-OS/RIOT#17712) to just above the 15 s nRF Connect SDK's LwM2M client settled on for
#: NB-IoT (nrfconnect/sdk-nrf#2498), around RFC 7252's 2 s.
DEFAULT_ACK_TIMEOUT_S = (0.5, 16.0, 0.5)
#: Default range of ``coap.ack_random_factor``: RFC 7252 §4.8 forbids values below 1.0; its
#: default 1.5 is inside; 2.0 doubles the dithering window.
DEFAULT_ACK_RANDOM_FACTOR = (1.0, 2.0, 0.25)
#: Default range of ``coap.max_retransmit``: around RFC 7252 §4.8's 4 (the congestion-collapse
#: studies use 20, docs/validation.md; 8 already gives up after 255 · ACK_TIMEOUT).
DEFAULT_MAX_RETRANSMIT = (1, 8, 1)
#: Default range of ``coap.nstart``: RFC 7252 §4.7's 1 up to 4, the Cooja study's (docs/validation.md).
DEFAULT_NSTART = (1, 4, 1)
#: ``coap.probing_rate_bps`` (RFC 7252 §4.7's PROBING_RATE, bytes/s; absent in the engine = no
#: limit, docs/algorithms.md "PROBING_RATE") is a default knob over these values: RFC 7252 §4.8's
#: 1 byte/s, and 10, 100 and 1000 bytes/s — the last beyond what a client sends unanswered in a
#: second (a 40-byte request then waits at most 40 ms after an unanswered one): no limit in effect.
PROBING_RATE_KEY = "probing_rate_bps"
PROBING_RATE_VALUES = (1.0, 10.0, 100.0, 1000.0)

#: Default budget: candidates evaluated (the 400-client star finishes within 10 minutes on a
#: shared 2-core machine, docs/advise.md), and replications per candidate and case (two at least:
#: the confidence intervals are over replications).
DEFAULT_EVALUATIONS = 30
DEFAULT_REPLICATIONS = 3
#: Replications of the cases graded for safety only (overload, mixed population, references):
#: the scorecard's reduced battery's 2 (docs/scorecard.md, "The reduced battery").
SAFETY_REPLICATIONS = 2
#: NSGA-II's population per generation (Deb et al. 2002; Optuna's NSGAIISampler): small, so that
#: a budget of a few dozen candidates runs several generations.
POPULATION = 8

#: The overload case: the population is multiplied by these factors in turn until RFC 7252's
#: ``default`` sends at least one unnecessary retransmission per client (median): the
#: bottleneck's queue then outlasts its timers, the condition under which the scorecard grades
#: ``collapse_unnecessary`` (docs/scorecard.md). The largest is used when none congests.
OVERLOAD_FACTORS = (2, 4, 8, 16)
#: ... or, when no factor makes it retransmit spuriously, until it delivers less than this share
#: of its exchanges: the bottleneck drops instead of queueing (a mesh's MAC queues). A tenth lost
#: is the scorecard's own line for a wasted mesh (``mesh_carried`` >= 0.9, docs/scorecard.md).
OVERLOAD_DELIVERED = 0.9
#: No overload case beyond this many clients (run time grows with them).
MAX_OVERLOAD_CLIENTS = 4000

#: How the candidate's summaries are labelled for the scorecard's grading (never an algorithm name).
TARGET = "candidate"


#: The built-in objectives: the 95th percentile over the clients (pooled over replications) of
#: each client's mean exchange latency (request → response, the engine's ``mean_exchange_s``),
#: and the delivered fraction (exchanges completed / exchanges ended).
LATENCY = Objective("latency_p95_s", False, "s", "exchange latency, p95 over clients (s)")
DELIVERED = advise_report.DELIVERED_OBJ
BUILTIN_OBJECTIVES = {o.name: o for o in (LATENCY, DELIVERED)}


def energy_objectives(summary: dict[str, Any]) -> dict[str, Objective]:
    """The numeric fields of the summary's ``energy`` table, as objectives ``energy.<key>``:
    a lifetime (a key with ``life`` in it) is maximised, anything else (energy, charge) minimised."""
    out = {}
    for key, v in (summary.get("energy") or {}).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[f"energy.{key}"] = Objective(f"energy.{key}", "life" in key, "", f"energy: {key}")
    return out


@dataclass(frozen=True)
class Knob:
    """One knob: a list of values (one value: fixed) or a numeric range [low, high] with a step
    (None: continuous)."""

    key: str
    values: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    step: float | None = None
    integer: bool = False

    @property
    def fixed(self) -> bool:
        return self.values is not None and len(self.values) == 1

    def grid(self) -> list[Any] | None:
        """Every value, when finitely many; None for a continuous range."""
        if self.values is not None:
            return list(self.values)
        if self.step is None:
            return None
        assert self.low is not None and self.high is not None
        n = math.floor((self.high - self.low) / self.step + 1e-9)
        vals = [self.low + i * self.step for i in range(n + 1)]
        return [round(v) for v in vals] if self.integer else [round(v, 9) for v in vals]

    def spec(self) -> Any:
        """The knob as the JSON answer states it."""
        if self.values is not None:
            return self.values[0] if self.fixed else list(self.values)
        return {"min": self.low, "max": self.high, **({"step": self.step} if self.step is not None else {})}


@dataclass
class Advice:
    """A checked deployment: the scenario without ``[advise]``, the knobs, objectives and budget."""

    scenario: Scenario
    knobs: dict[str, Knob]
    objectives: list[str]
    evaluations: int | None
    minutes: float | None
    replications: int
    seed: int
    name: str = field(default="")


ADVISE_KEYS = ("knobs", "objectives", "evaluations", "minutes", "replications", "seed")


def _coap_keys() -> list[str]:
    return [f"coap.{k}" for k in SCHEMA["coap"] if k != "transport"]


def check_value(key: str, value: Any, where: str) -> Any:
    """One knob value, checked as the scenario loader checks the key (one line on error)."""
    name = key.split(".", 1)[1]
    if name == "cc":
        if not isinstance(value, str) or value not in UDP_ALGORITHMS:
            raise AdviseError(f"{where}: {quote_value(value)} is not a UDP algorithm{did_you_mean(str(value), UDP_ALGORITHMS)}; "
                              "allowed: " + ", ".join(UDP_ALGORITHMS))
        return value
    try:
        return SCHEMA["coap"][name].check(where, value)
    except CoaplabError as e:
        raise AdviseError(str(e)) from None


def _is_integer_key(key: str) -> bool:
    name = key.split(".", 1)[1]
    default = SCHEMA["coap"][name].default
    return isinstance(default, int) and not isinstance(default, bool)


def default_knobs() -> dict[str, Knob]:
    """The knobs tuned when ``[advise.knobs]`` does not name them: every registered UDP algorithm
    (the engine's registry) and RFC 7252's transmission parameters; PROBING_RATE when the
    engine's schema has it."""
    knobs = {"coap.cc": Knob("coap.cc", values=tuple(_core.algorithms())),
             "coap.ack_timeout_s": Knob("coap.ack_timeout_s", None, *DEFAULT_ACK_TIMEOUT_S),
             "coap.ack_random_factor": Knob("coap.ack_random_factor", None, *DEFAULT_ACK_RANDOM_FACTOR),
             "coap.max_retransmit": Knob("coap.max_retransmit", None, *DEFAULT_MAX_RETRANSMIT, integer=True),
             "coap.nstart": Knob("coap.nstart", None, *DEFAULT_NSTART, integer=True)}
    if PROBING_RATE_KEY in SCHEMA["coap"]:
        key = f"coap.{PROBING_RATE_KEY}"
        knobs[key] = Knob(key, values=PROBING_RATE_VALUES)
    return knobs


def parse_knob(key: str, spec: Any) -> Knob:
    where = f"advise.knobs.{key}"
    if not key.startswith("coap.") or key not in _coap_keys():
        raise AdviseError(f"{where}: unknown knob{did_you_mean(key, _coap_keys())}; allowed: " + ", ".join(_coap_keys()))
    if isinstance(spec, list):
        if not spec:
            raise AdviseError(f"{where}: an empty list; expected at least one value")
        values = tuple(check_value(key, v, f"{where}[{i}]") for i, v in enumerate(spec))
        return Knob(key, values=tuple(dict.fromkeys(values)))
    if isinstance(spec, dict):
        unknown = [k for k in spec if k not in ("min", "max", "step")]
        if unknown or "min" not in spec or "max" not in spec:
            raise AdviseError(f"{where}: a range is a table with min, max and an optional step"
                              + (f" (unknown key {unknown[0]!r})" if unknown else ""))
        if key == "coap.cc":
            raise AdviseError(f"{where}: an algorithm is not a number; give a list of names")
        lo, hi = check_value(key, spec["min"], f"{where}.min"), check_value(key, spec["max"], f"{where}.max")
        if lo > hi:
            raise AdviseError(f"{where}: an empty range (min {lo:g} > max {hi:g}); expected min <= max")
        step = spec.get("step")
        integer = _is_integer_key(key)
        if step is not None and (isinstance(step, bool) or not isinstance(step, (int, float)) or not step > 0):
            raise AdviseError(f"{where}.step: {quote_value(step)} is not allowed; expected a number > 0")
        if integer:
            step = max(1, int(step or 1))
        return Knob(key, None, lo, hi, step, integer)
    return Knob(key, values=(check_value(key, spec, where),))


def _positive_int(table: dict[str, Any], key: str, lo: int) -> int | None:
    v = table.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise AdviseError(f"advise.{key}: {quote_value(v)} is not allowed; expected an integer >= {lo}")
    return v


def load_advice(source: str | Path | dict[str, Any]) -> Advice:
    """The deployment file (or dict) checked: its scenario, and its ``[advise]`` table with the
    defaults filled in. Every error is one line naming the key."""
    scenario = load_scenario(source)
    table = scenario.advise or {}
    for key in table:
        if key not in ADVISE_KEYS:
            raise AdviseError(f"advise.{key}: unknown key{did_you_mean(key, ADVISE_KEYS)}; allowed: " + ", ".join(ADVISE_KEYS))
    if scenario.sweep:
        raise AdviseError(f"sweep.{next(iter(scenario.sweep))}: a deployment has no [sweep]; advise chooses the "
                          "values of the [advise.knobs] itself")
    base = resolve(copy.deepcopy(scenario.raw))
    if base["coap"]["transport"] != "udp":
        raise AdviseError("coap.transport: advise tunes CoAP over UDP; expected \"udp\"")
    if base.get("group"):
        raise AdviseError("group: advise tunes one client population; a deployment has no [[group]]")
    knobs_raw = table.get("knobs", {})
    if not isinstance(knobs_raw, dict):
        raise AdviseError(f"advise.knobs: {quote_value(knobs_raw)} is not allowed; expected a table of "
                          "\"coap.<key>\" = value, [values] or {min, max, step}")
    knobs = default_knobs()
    for key, spec in knobs_raw.items():
        knobs[key] = parse_knob(key, spec)
    objectives = table.get("objectives")
    if objectives is not None:
        if not isinstance(objectives, list) or not objectives or not all(isinstance(o, str) for o in objectives):
            raise AdviseError(f"advise.objectives: {quote_value(objectives)} is not allowed; expected a non-empty "
                              "list of names: " + ", ".join(BUILTIN_OBJECTIVES) + " or energy.<key>")
        for o in objectives:
            if o not in BUILTIN_OBJECTIVES and not o.startswith("energy."):
                raise AdviseError(f"advise.objectives: {o!r} is not an objective{did_you_mean(o, BUILTIN_OBJECTIVES)}; "
                                  "allowed: " + ", ".join(BUILTIN_OBJECTIVES) + ", or energy.<key> of the summary")
        if len(set(objectives)) != len(objectives):
            raise AdviseError("advise.objectives: an objective is named twice; name each once")
    evaluations = _positive_int(table, "evaluations", 1)
    minutes = table.get("minutes")
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, (int, float))
                                or not math.isfinite(minutes) or minutes <= 0):
        raise AdviseError(f"advise.minutes: {quote_value(minutes)} is not allowed; expected a number of minutes > 0")
    if evaluations is None and minutes is None:
        evaluations = DEFAULT_EVALUATIONS
    replications = _positive_int(table, "replications", 2) or DEFAULT_REPLICATIONS
    seed = _positive_int(table, "seed", 0)
    return Advice(scenario, knobs, list(objectives) if objectives else [], evaluations,
                  None if minutes is None else float(minutes), replications,
                  base["seed"] if seed is None else seed, base["name"])


# ---------------------------------------------------------------------------------------------
# Evaluating a candidate


@dataclass
class Case:
    """One run of a case: its summary, its runs and how many of them ran now."""

    summary: dict[str, Any]
    runs: list[dict[str, Any]]
    executed: int


class Lab:
    """Runs the cases of a deployment (stored in ``db``) and grades candidates."""

    def __init__(self, advice: Advice, db: str | Path | None, jobs: int | None, battery: Battery | None = None):
        self.advice = advice
        self.db = db
        self.jobs = jobs
        self.battery = battery or load_battery("full")  # its references and thresholds (no run)
        self.base = copy.deepcopy(advice.scenario.raw)
        self.base["name"] = f"advise-{advice.name}"
        self.base["replications"] = advice.replications
        self.clients = resolve(copy.deepcopy(advice.scenario.raw))["workload"]["clients"]
        self.executed = 0
        self.overload: dict[str, Any] = {}
        self._refs: dict[str, Case] = {}
        self._mixed_base: Case | None = None

    def run(self, raw: dict[str, Any]) -> Case:
        return self.run_all(raw)[0]

    def run_all(self, raw: dict[str, Any]) -> list[Case]:
        """The configurations of ``raw`` (its sweep, if any, in one call: the runs of all of
        them share the ``--jobs`` workers), stored in the database."""
        result = run_scenario(raw, jobs=self.jobs, db=self.db)
        if result.failures:
            name, cid, rep, err = result.failures[0]
            raise AdviseError(f"{len(result.failures)} runs of {name} failed; the first ({cid} replication {rep}): {err}")
        self.executed += result.executed
        return [Case(s, result.runs[s["config_id"]], result.executed) for s in result.summaries]

    def with_knobs(self, knobs: dict[str, Any], clients: int | None = None) -> dict[str, Any]:
        raw = copy.deepcopy(self.base)
        for key, value in knobs.items():
            set_dotted(raw, key, value)
        if clients is not None:
            set_dotted(raw, "workload.clients", clients)
        return raw

    def find_overload(self, progress: bool) -> dict[str, Any]:
        """The overload case: the smallest factor of :data:`OVERLOAD_FACTORS` at which RFC 7252's
        ``default`` sends >= 1 unnecessary retransmission per client (median); failing that, the
        smallest at which it delivers less than :data:`OVERLOAD_DELIVERED` of its exchanges (a
        bottleneck that drops rather than queues: a mesh); failing that, the largest probed."""
        probed: list[dict[str, Any]] = []
        for f in OVERLOAD_FACTORS:
            n = self.clients * f
            if n > MAX_OVERLOAD_CLIENTS and probed:
                break
            case = self.run(self.safety_case(self.with_knobs({"coap.cc": "default"}, n)))
            unn = (case.summary.get("unnecessary_retransmissions_per_client") or {}).get("p50") or 0.0
            delivered = measure(case)[DELIVERED.name]["value"]
            probed.append({"factor": f, "clients": n, "congested": unn >= 1.0, "default_unnecessary_per_client": unn,
                           "default_delivered": delivered})
            if progress:
                print(f"coaplab advise: overload probe x{f} ({n} clients): default's median unnecessary "
                      f"retransmissions per client {unn:g}, delivered {_short(delivered)}", file=sys.stderr, flush=True)
            if unn >= 1.0 or n >= MAX_OVERLOAD_CLIENTS:
                break
        chosen = next((p for p in probed if p["congested"]), None) or next(
            (p for p in probed if p["default_delivered"] is not None and p["default_delivered"] < OVERLOAD_DELIVERED),
            probed[-1])
        self.overload = chosen
        return chosen

    @staticmethod
    def safety_case(raw: dict[str, Any]) -> dict[str, Any]:
        """A case graded for safety only (overload, mixed population, references): the quick
        battery's replications (docs/scorecard.md); the objectives' intervals come from the
        deployment's own replications."""
        raw["replications"] = SAFETY_REPLICATIONS
        return raw

    def _references(self) -> list[Case]:
        """The scorecard's reference algorithms on the overload case (the deployment's other
        settings), run once."""
        if not self._refs:
            raw = self.safety_case(self.with_knobs({}, self.overload["clients"]))
            raw["sweep"] = {"coap.cc": list(self.battery.references)}
            self._refs = dict(zip(self.battery.references, self.run_all(raw)))
        return [self._refs[r] for r in self.battery.references]

    def reference_fairness(self) -> float | None:
        """The best Jain's index of the reference algorithms on the overload case."""
        vals = [j for r in self._references() if (j := r.summary.get("jain_fairness")) is not None]
        return max(vals) if vals else None

    def mixed_raw(self, knobs: dict[str, Any]) -> dict[str, Any]:
        """Half the overload population on RFC 7252's default, half on the candidate (the
        scorecard's mixed population: groups ``legacy`` and ``target``)."""
        n = self.overload["clients"]
        raw = copy.deepcopy(self.base)
        raw.get("workload", {}).pop("clients", None)
        target_coap = {k.split(".", 1)[1]: v for k, v in knobs.items()}
        raw["group"] = [{"name": "legacy", "clients": n // 2, "coap": {"cc": "default"}},
                        {"name": "target", "clients": n - n // 2, "coap": target_coap}]
        return raw

    def evaluate(self, knobs: dict[str, Any]) -> dict[str, Any]:
        """One candidate: its objectives with their intervals on the deployment, and the
        scorecard's safety criteria on the deployment, its overload case and the mixed population."""
        executed = self.executed
        dep = self.run(self.with_knobs(knobs))
        over = self.run(self.safety_case(self.with_knobs(knobs, self.overload["clients"])))
        refs = self._references()
        mixed = self.run(self.safety_case(self.mixed_raw(knobs)))
        if self._mixed_base is None:
            self._mixed_base = self.run(self.safety_case(self.mixed_raw({"coap.cc": "default"})))
        results = {"short-lived": [_labelled(dep.summary)],
                   "collapse": [_labelled(over.summary)] + [_unswept(r.summary) for r in refs],
                   "mixed": [_labelled(mixed.summary), _unswept(self._mixed_base.summary)]}
        battery, ref_jain = self.battery, self.reference_fairness()
        fair = battery.criteria["fairness"]
        if ref_jain is not None and ref_jain < fair["threshold"]:
            # No reference reaches the index on the overload case: the network, not the
            # algorithm, starves clients there (a mesh's far nodes); fairness is graded on the
            # deployment only.
            battery = copy.deepcopy(battery)
            battery.criteria["fairness"]["scenarios"] = ["short-lived"]
        criteria = grade(battery, TARGET, results, overloaded=lambda s: True)
        if battery is not self.battery:
            criteria["fairness"]["where"] += (f" (the overload case is not graded: no reference algorithm reaches "
                                              f"{fair['threshold']:g} there, the best {ref_jain:.3f})")
        safety = {cid: {**{k: c[k] for k in ("title", "measured", "comparison", "threshold", "grade")},
                        "where": _case_names(c["where"])}
                  for cid, c in criteria.items() if c["kind"] == "safety"}
        if not self.overload["congested"] and safety.get("collapse_unnecessary", {}).get("measured") is None:
            # Nothing to compare: default never retransmitted spuriously, even scaled up.
            safety["collapse_unnecessary"].update(grade="n/a", where="default sends < 1 unnecessary retransmission "
                                                  "per client at the largest overload; nothing to compare")
        if (self.base.get("workload") or {}).get("kind") == "reporting" and "fairness" in safety:
            # TR 45.820's devices report at intervals from 30 min to a day by design: Jain's index
            # of completed exchanges per client measures the workload's mix, not the algorithm.
            safety["fairness"].update(grade="n/a", where="reporting devices report at different intervals by "
                                      "design (TR 45.820): the index measures the mix, not the algorithm")
        if "nstart_collapse" in safety:
            # The battery's NSTART criterion compares a target with NSTART 4 against itself with
            # NSTART 1; here NSTART is a knob, and the candidate's own NSTART is what the overload
            # case runs and the collapse criteria grade.
            safety["nstart_collapse"].update(grade="n/a", where="NSTART is a knob: the overload case runs the "
                                             "candidate's own NSTART, graded by the collapse criteria")
        failed = [cid for cid, c in safety.items() if c["grade"] == "fail"]
        return {"knobs": dict(knobs), "objectives": measure(dep), "safe": not failed, "failed": failed,
                "criteria": safety, "config_ids": {"deployment": dep.summary["config_id"],
                                                   "overload": over.summary["config_id"],
                                                   "mixed": mixed.summary["config_id"]},
                "runs_executed": self.executed - executed}


#: The battery's scenario ids the grading names, as this command's cases.
CASE_NAMES = {"short-lived: ": "deployment: ", "collapse: ": "overload case: ", "mixed: ": "mixed population: "}


def _case_names(where: str) -> str:
    for battery_id, case in CASE_NAMES.items():
        where = where.replace(battery_id, case)
    return where.replace(": (one configuration)", "")


def _unswept(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary as one configuration of its case: the grading compares the summaries of equal
    swept values, and each case here is one configuration whatever sweep ran it."""
    return {**summary, "swept": {}}


def _labelled(summary: dict[str, Any]) -> dict[str, Any]:
    """The candidate's summary under the label the grading looks for (its algorithm may be a
    reference's, e.g. ``default`` with another ACK_TIMEOUT)."""
    s = _unswept(summary)
    s["config"] = copy.deepcopy(summary["config"])
    if s["config"].get("group"):
        next(g for g in s["config"]["group"] if g["name"] == "target")["coap"]["cc"] = TARGET
    else:
        s["config"]["coap"]["cc"] = TARGET
    return s


def measure(case: Case) -> dict[str, dict[str, Any]]:
    """Every objective the case's summary gives: value and 95 % interval over replications."""
    runs = case.runs
    lat = [c["mean_exchange_s"] for r in runs for c in r["clients"] if c.get("mean_exchange_s") is not None]
    ci = percentile_intervals(runs, {"p95": 0.95}, key="mean_exchange_s").get("p95")
    out: dict[str, dict[str, Any]] = {
        LATENCY.name: {"value": percentile(sorted(lat), 0.95) if lat else None, "ci": list(ci) if ci else None}}
    ended = [{"done": sum(c["exchanges_completed"] for c in r["clients"]),
              "ended": sum(c["exchanges_completed"] + c["exchanges_failed"] for c in r["clients"])} for r in runs]
    total = sum(e["ended"] for e in ended)
    dci = ratio_interval(ended, "done", "ended")
    out[DELIVERED.name] = {"value": sum(e["done"] for e in ended) / total if total else None,
                           "ci": list(dci) if dci else None}
    for name in energy_objectives(case.summary):
        key = name.split(".", 1)[1]
        per = [{"v": float(r["energy"][key]), "one": 1.0} for r in runs if isinstance((r.get("energy") or {}).get(key), (int, float))]
        eci = ratio_interval(per, "v", "one")
        out[name] = {"value": case.summary["energy"][key], "ci": list(eci) if eci else None}
    return out


# ---------------------------------------------------------------------------------------------
# The search


def knob_key(knobs: dict[str, Any]) -> str:
    return json.dumps(knobs, sort_keys=True)


def _penalised(ev: dict[str, Any], objectives: list[Objective]) -> list[float]:
    """The objective values NSGA-II ranks (an objective the runs could not give — no exchange
    completed — counts as the worst possible)."""
    out = []
    for o in objectives:
        v = ev["objectives"].get(o.name, {}).get("value")
        out.append(v if v is not None else (-1e12 if o.maximise else 1e12))
    return out


def grid_size(advice: Advice) -> int | None:
    """How many candidates the knobs allow; None when a range is continuous."""
    n = 1
    for kn in advice.knobs.values():
        g = kn.grid()
        if g is None:
            return None
        n *= len(g)
    return n


def search(advice: Advice, objectives: list[Objective], evaluate: Callable[[dict[str, Any]], dict[str, Any]],
           progress: Callable[[int, int | None, dict[str, Any]], None]) -> list[dict[str, Any]]:
    """The candidates evaluated, in order. A space no larger than the budget is walked whole
    (in the knobs' order); otherwise Optuna's NSGA-II sampler (seeded by ``advice.seed``) asks
    for candidates one at a time and is told their objectives and, as its constraint, how many
    safety criteria they failed. The sequence depends only on the seed and the results, so a
    second call with the stored results asks the same candidates, and a larger budget extends it."""
    import itertools

    fixed = {k: kn.values[0] for k, kn in advice.knobs.items() if kn.fixed and kn.values is not None}
    free = {k: kn for k, kn in advice.knobs.items() if not kn.fixed}
    start = time.monotonic()
    budget = advice.evaluations
    deadline = None if advice.minutes is None else start + advice.minutes * 60.0

    def more(i: int) -> bool:
        return (budget is None or i < budget) and (deadline is None or time.monotonic() < deadline)

    done: dict[str, dict[str, Any]] = {}
    order: list[dict[str, Any]] = []

    def one(i: int, knobs: dict[str, Any]) -> dict[str, Any]:
        key = knob_key(knobs)
        if key not in done:
            done[key] = evaluate(knobs)
            order.append(done[key])
        progress(i + 1, budget, done[key])
        return done[key]

    size = grid_size(advice)
    if size is not None and (budget is None or size <= budget):
        grids = [kn.grid() or [] for kn in free.values()]
        for i, combo in enumerate(itertools.product(*grids)):
            if not more(i):
                break
            one(i, {**fixed, **dict(zip(free, combo))})
        return order

    import warnings

    import optuna  # lazy: the search's library, only for `coaplab advise` (start-up)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    dists: dict[str, Any] = {}
    for k, kn in free.items():
        if kn.values is not None:
            dists[k] = optuna.distributions.CategoricalDistribution(list(kn.values))
        elif kn.integer:
            dists[k] = optuna.distributions.IntDistribution(int(kn.low or 0), int(kn.high or 0), step=int(kn.step or 1))
        else:
            assert kn.low is not None and kn.high is not None
            hi = kn.high if kn.step is None else kn.low + math.floor((kn.high - kn.low) / kn.step + 1e-9) * kn.step
            dists[k] = optuna.distributions.FloatDistribution(kn.low, hi, step=kn.step)
    sampler = optuna.samplers.NSGAIISampler(population_size=POPULATION, seed=advice.seed)
    study = optuna.create_study(directions=["maximize" if o.maximise else "minimize" for o in objectives],
                                sampler=sampler)
    i = 0
    while more(i):
        trial = study.ask(dists)
        knobs = {**fixed}
        for k, kn in free.items():
            v = trial.params[k]
            knobs[k] = int(v) if kn.integer else (round(float(v), 9) if kn.values is None else v)
        ev = one(i, knobs)
        trial.set_constraint("safety", float(len(ev["failed"])))  # feasible: <= 0 (no criterion failed)
        study.tell(trial, _penalised(ev, objectives))
        i += 1
    return order


# ---------------------------------------------------------------------------------------------
# The whole answer


def parse_compare(text: str, knobs: dict[str, Knob]) -> dict[str, Any]:
    """``--compare "ack_timeout_s=15,cc=default"``: a stack's shipped setting, as knob values;
    ``coap.`` may be left out; knobs it does not name take RFC 7252's defaults (what a stack
    that names no other value ships)."""
    out: dict[str, Any] = {k: v for k, v in RFC7252_DEFAULTS.items() if k in knobs}
    for item in text.split(","):
        if "=" not in item:
            raise AdviseError(f"--compare: {item.strip()!r} in {text!r} is not KEY=VALUE; expected e.g. "
                              "\"ack_timeout_s=15,cc=default\"")
        key, value = (s.strip() for s in item.split("=", 1))
        key = key if key.startswith("coap.") else f"coap.{key}"
        if key not in _coap_keys():
            raise AdviseError(f"--compare: {key!r} is not a knob{did_you_mean(key, _coap_keys())}; allowed: "
                              + ", ".join(_coap_keys()))
        parsed: Any = value
        for conv in (int, float):
            try:
                parsed = conv(value)
                break
            except ValueError:
                continue
        out[key] = check_value(key, parsed, f"--compare {key}")
    return out


def choose_objectives(advice: Advice, available: dict[str, Any]) -> list[Objective]:
    """The objectives: the ``[advise]`` table's, or latency and delivered fraction plus, when the
    summary has ``energy.*`` fields, those per exchange and the battery's life."""
    energy = {n: o for n, o in {**BUILTIN_OBJECTIVES, **_energy_from(available)}.items()}
    if advice.objectives:
        for name in advice.objectives:
            if name not in energy:
                raise AdviseError(f"advise.objectives: {name!r} is not in this deployment's summary; available: "
                                  + ", ".join(energy))
        return [energy[n] for n in advice.objectives]
    extra = [o for n, o in energy.items() if n.startswith("energy.") and ("per_exchange" in n or "life" in n)]
    return [LATENCY, DELIVERED, *extra]


def _energy_from(measured: dict[str, Any]) -> dict[str, Objective]:
    return {n: Objective(n, "life" in n, "", f"energy: {n.split('.', 1)[1]}") for n in measured if n.startswith("energy.")}


def advise(source: str | Path | dict[str, Any], db: str | Path | None = None, jobs: int | None = None,
           compare: tuple[str, ...] = (), progress: bool = False) -> tuple[dict[str, Any], list[Objective]]:
    """The answer for a deployment (the JSON object of :func:`coaplab.suites.advise_report.answer`)
    and its objectives."""
    start = time.monotonic()
    advice = load_advice(source)
    compares = [(c, parse_compare(c, advice.knobs)) for c in compare]
    lab = Lab(advice, db, jobs)
    overload = lab.find_overload(progress)
    rfc = lab.evaluate({k: v for k, v in RFC7252_DEFAULTS.items() if k in advice.knobs})
    objectives = choose_objectives(advice, rfc["objectives"])

    def line(i: int, total: int | None, ev: dict[str, Any]) -> None:
        if not progress:
            return
        vals = ", ".join(f"{o.name} {_short((ev['objectives'].get(o.name) or {}).get('value'))}" for o in objectives)
        verdict = "safe" if ev["safe"] else "unsafe: " + ", ".join(ev["failed"])
        ran = f"{ev['runs_executed']} runs" if ev["runs_executed"] else "stored"
        print(f"coaplab advise: {i}/{total if total is not None else '?'} {_knobs_line(ev['knobs'])}: {verdict}; {vals} "
              f"[{ran}, {time.monotonic() - start:.0f} s]", file=sys.stderr, flush=True)

    compared = []
    for label, knobs in compares:
        ev = lab.evaluate(knobs)
        compared.append({"label": label, **ev})
    size = grid_size(advice)
    walked = size is not None and (advice.evaluations is None or size <= advice.evaluations)
    evaluated = search(advice, objectives, lab.evaluate, line)
    meta = {"deployment": advice.scenario.source, "name": advice.name,
            "knobs": {k: kn.spec() for k, kn in advice.knobs.items()},
            "budget": {"evaluations": advice.evaluations, "minutes": advice.minutes},
            "method": "the whole grid" if walked else f"NSGA-II (Optuna, population {POPULATION}, seed {advice.seed})",
            "replications": advice.replications, "seed": advice.seed,
            "battery_version": lab.battery.version, "references": list(lab.battery.references),
            "runs_executed": lab.executed, "wall_s": time.monotonic() - start}
    return advise_report.answer(meta, objectives, evaluated, rfc, compared, overload), objectives


def _short(v: float | None) -> str:
    return "—" if v is None else f"{v:.4g}"


def _knobs_line(knobs: dict[str, Any]) -> str:
    return " ".join(f"{k.removeprefix('coap.')}={v:g}" if isinstance(v, (int, float)) else f"{k.removeprefix('coap.')}={v}"
                    for k, v in knobs.items())
