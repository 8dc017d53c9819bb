"""Differences with their uncertainty: between two studies (``coaplab compare --db A --db B``)
and between the configurations of one study that differ in one key (``--diff-by coap.cc``).

**What is compared.** Per configuration, the statistics its summary reports
(:func:`coaplab.analyse.stats.summarize`), recomputed from its runs — each declared once in
:mod:`coaplab.present.compare_metrics` (kind, unit, direction): the pooled median FCT
(``fct_s.p50``) and unnecessary retransmissions per client, the throughput, UDP's
retransmission ratio and mean RTT, energy, and the Observe, LwM2M and Q-Block workloads'
metrics where a study has them (docs/experiments.md "Differences").

A difference is always *second − first*: ``B − A`` between studies, and between two
configurations of one study the later one in the study's canonical order minus the earlier.

**Confidence interval of a difference.** A two-sample percentile bootstrap over replications
(Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13 for the percentile
interval and §8.3 for two independent samples): replications are the unit of resampling, as in
:mod:`coaplab.analyse.replstats` — clients of one replication share its queue and losses; replications
have independent random streams. Each of :data:`RESAMPLES` resamples draws R₁ of the first
configuration's replications with replacement and, independently, R₂ of the second's,
recomputes each statistic exactly as above over the pooled resampled runs (a replication drawn
twice counts twice), and takes the difference; the interval is the 2.5th–97.5th percentile
(linear interpolation, :func:`coaplab.analyse.stats.percentile`) of the 2000 differences. None when a
side has fewer than two replications with data (nothing to resample). The draws come from
numpy's PCG64 seeded with (:data:`SEED`, the configuration's id hashed, which side), so every
configuration's resamples are fixed and independent of which pairs are shown; numpy keeps the
PCG64 stream stable, and ``Generator.integers`` may only change with a numpy release that says so.

**Rank test.** The Mann–Whitney U test over replications (Mann & Whitney, *Ann. Math. Statist.*
18(1), 1947): each replication contributes one value — its median FCT over its clients, its
median unnecessary retransmissions per client, its throughput. ``u`` is the first sample's
statistic, U₁ = #{(x, y): x > y} + ½·#{(x, y): x = y} over the pairs of first-sample x and
second-sample y; the two-sided p-value is exact (the null distribution of U counted over every
arrangement of the ranks) when there are no ties and n₁ + n₂ ≤ :data:`EXACT_MAX_N`, and
otherwise the normal approximation with the tie correction of the variance and a continuity
correction of ½ (Lehmann, *Nonparametrics*, 1975, §1.4). scipy is not a coaplab dependency and
this is thirty lines, so it is computed here (:func:`mann_whitney_u`); ``method`` says which.

**Matching configurations across studies.** Two configurations are the same when their
resolved parameters (the stored configuration JSON, flattened to dotted keys) are equal. The
model version is not one of them — it is stored beside the configuration and only enters the
``config_id`` — so a study re-run under a new model version matches the old one. ``ignore``
names further keys to leave out (``link.buffer_bytes``, to compare a study at one buffer with
the same study at another; ``seed``; ``name``); two configurations of one study that become
indistinguishable that way are refused.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..analyse.quantile import percentile
from ..analyse.replstats import replication_stats
from ..errors import CoaplabError
from ..execute.store import EMULATED_MARK
from ..execute.tidy import differing_keys, flatten, fmt_value, label, load, short, title, varying
from ..files import atomic_write, new_dirs_removed_on_error, output_in
from ..names import did_you_mean
from .compare_metrics import (
    ALWAYS_COLUMNS,
    BY_KEY,
    METRIC_KEYS,
    METRICS,
    PAIR_METRICS,
    SHAPE,
    WORKLOAD_METRICS,
    replication_data,
)
from .page import CSS, esc, figure_html

#: Bootstrap resamples, seed and level (fixed: the intervals are part of a reproducible output).
RESAMPLES = 2000
SEED = 20260101
LEVEL = 0.95
#: The exact null distribution of U is used up to this many replications in all (and no ties).
EXACT_MAX_N = 40


# --------------------------------------------------------------------------- Mann–Whitney U


def _u_counts(m: int, n: int) -> list[int]:
    """The number of arrangements of m first-sample and n second-sample values (no ties) giving
    U₁ = 0, 1, …, m·n: the coefficients of the Gaussian binomial [m+n choose m]_q, by the
    recurrence c(m, n; u) = c(m−1, n; u−n) + c(m, n−1; u) (the largest value is first or second)."""
    table: dict[tuple[int, int], list[int]] = {}
    for i in range(m + 1):
        for j in range(n + 1):
            if i == 0 or j == 0:
                table[i, j] = [1]
                continue
            a, b = table[i - 1, j], table[i, j - 1]
            out = [0] * (i * j + 1)
            for u, c in enumerate(a):  # the largest value is a first-sample one: it beats all j
                out[u + j] += c
            for u, c in enumerate(b):
                out[u] += c
            table[i, j] = out
    return table[m, n]


def mann_whitney_u(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """The Mann–Whitney U test of samples ``x`` and ``y``: ``u`` (x's statistic, see the module
    doc), the two-sided ``p`` and the ``method`` (``exact`` or ``normal``); ``None`` values when
    a sample is empty."""
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        return {"u": None, "p": None, "method": None, "n": [m, n]}
    u = sum((1.0 if a > b else 0.5 if a == b else 0.0) for a in x for b in y)
    pooled = sorted(list(x) + list(y))
    ties = [pooled.count(v) for v in sorted(set(pooled))]
    N = m + n
    if all(t == 1 for t in ties) and N <= EXACT_MAX_N:
        counts = _u_counts(m, n)
        total = sum(counts)
        lo = min(u, m * n - u)  # the distribution is symmetric about m·n/2
        p = min(1.0, 2 * sum(counts[: int(lo) + 1]) / total)
        return {"u": u, "p": p, "method": "exact", "n": [m, n]}
    mean = m * n / 2
    var = m * n / 12 * ((N + 1) - sum(t ** 3 - t for t in ties) / (N * (N - 1)))
    if var <= 0:  # every value equal: no evidence either way
        return {"u": u, "p": 1.0, "method": "normal", "n": [m, n]}
    z = max(abs(u - mean) - 0.5, 0.0) / math.sqrt(var)
    return {"u": u, "p": min(1.0, math.erfc(z / math.sqrt(2))), "method": "normal", "n": [m, n]}


# --------------------------------------------------------------------------- per-configuration samples


class Sample:
    """One configuration's runs, prepared for the bootstrap: per metric the per-replication data
    (replications without data for it left out, as :mod:`coaplab.analyse.replstats` does for FCT)."""

    def __init__(self, runs: list[dict[str, Any]], seed_key: str):
        self.replications = len(runs)
        self.seed_key = seed_key
        self.data: dict[str, dict[str, Any]] = {}
        for metric in METRICS:
            if (d := replication_data(metric, runs)) is not None:
                self.data[metric.key] = d
        self._boot: dict[tuple[str, int], Any] = {}

    def estimate(self, key: str) -> float | None:
        d = self.data.get(key)
        if d is None:
            return None
        return float(self._stat(key, np.ones((1, d["r"]), dtype=np.int64))[0])

    def _stat(self, key: str, counts):
        """The statistic under each row of ``counts`` (resamples × replications: how often each
        replication is drawn)."""
        d = self.data[key]
        shape = SHAPE[BY_KEY[key].kind]
        if shape == "mean":
            return counts @ d["x"] / counts.sum(axis=1)
        if shape == "ratio":
            den = counts @ d["den"]
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(den > 0, (counts @ d["num"]) / np.where(den > 0, den, 1), np.nan)
        # The pooled median (linear interpolation between closest ranks, as stats.percentile) of
        # the multiset in which each replication's values appear as often as it was drawn.
        values = d["values"]
        if "cm" not in d:
            # cm[r, i]: how many of the first i + 1 pooled values are replication r's.
            cm = np.zeros((d["r"], len(values)), dtype=np.int64)
            cm[d["owner"], np.arange(len(values))] = 1
            d["cm"] = np.cumsum(cm, axis=1)
        cm = d["cm"]
        n = counts @ cm[:, -1]
        h = (n - 1) * 0.5
        lo = np.floor(h).astype(np.int64)
        hi = np.minimum(lo + 1, n - 1)

        def first_above(k):
            # The value of rank k (0-based) is the first whose cumulative count (counts · cm[:, i],
            # nondecreasing in i) exceeds k: a binary search per resample, all resamples at once.
            left = np.zeros(len(k), dtype=np.int64)
            right = np.full(len(k), len(values) - 1, dtype=np.int64)
            while np.any(left < right):
                mid = (left + right) // 2
                above = np.einsum("br,rb->b", counts, cm[:, mid]) > k
                right = np.where(above, mid, right)
                left = np.where(above, left, mid + 1)
            return left

        i_lo, i_hi = first_above(lo), first_above(hi)
        return values[i_lo] + (h - lo) * (values[i_hi] - values[i_lo])

    def boot(self, key: str, side: int):
        """The statistic over :data:`RESAMPLES` resamples of the replications (cached)."""
        if (key, side) not in self._boot:
            r = self.data[key]["r"]
            digest = int.from_bytes(hashlib.sha256(self.seed_key.encode()).digest()[:8], "little")
            rng = np.random.Generator(np.random.PCG64([SEED, digest, side, METRIC_KEYS.index(key)]))
            draws = rng.integers(0, r, size=(RESAMPLES, r))
            counts = np.zeros((RESAMPLES, r), dtype=np.int64)
            np.add.at(counts, (np.repeat(np.arange(RESAMPLES), r), draws.ravel()), 1)
            self._boot[key, side] = self._stat(key, counts)
        return self._boot[key, side]


def interval(sample: Sample, key: str, side: int = 0) -> list[float | None]:
    """The percentile bootstrap interval of one configuration's statistic (its resamples as
    drawn for :func:`difference`); ``[None, None]`` with fewer than two replications."""
    if key not in sample.data or sample.data[key]["r"] < 2:
        return [None, None]
    d = sample.boot(key, side)
    d = np.sort(d[~np.isnan(d)])
    tail = (1 - LEVEL) / 2
    return [float(percentile(d, tail)), float(percentile(d, 1 - tail))] if len(d) else [None, None]


def difference(a: Sample, b: Sample, keys: Iterable[str] = METRIC_KEYS, sides: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    """Per metric (present in both): ``{"first", "second", "difference", "low", "high"}`` (the
    percentile bootstrap interval of second − first; None with fewer than two replications on
    a side) and, for the ranked metrics, ``"rank_test"`` (:func:`mann_whitney_u` of the
    first's per-replication values against the second's)."""
    out: dict[str, Any] = {}
    for key in keys:
        ea, eb = a.estimate(key), b.estimate(key)
        if ea is None or eb is None:
            continue
        row: dict[str, Any] = {"first": ea, "second": eb, "difference": eb - ea, "low": None, "high": None}
        if a.data[key]["r"] >= 2 and b.data[key]["r"] >= 2:
            d = b.boot(key, sides[1]) - a.boot(key, sides[0])
            d = np.sort(d[~np.isnan(d)])
            if len(d):
                tail = (1 - LEVEL) / 2
                row["low"], row["high"] = float(percentile(d, tail)), float(percentile(d, 1 - tail))
        metric = BY_KEY[key]
        if metric.ranked:
            row["rank_test"] = mann_whitney_u(a.data[key]["per_replication"], b.data[key]["per_replication"])
        out[key] = row
    return out


# --------------------------------------------------------------------------- two studies


def match_key(config: dict[str, Any], ignore: Iterable[str] = (), config_id: str = "") -> str:
    """What identifies a configuration across studies: its flattened resolved parameters minus
    ``ignore``, as canonical JSON (the model version is not among them). An emulated
    configuration (``coaplab emulate`` / ``crossval`` store it under the simulated one's id plus
    the endpoints, with the same parameters) is also identified by its endpoints, so that it
    matches the same emulation in the other study and never the simulation."""
    skip = set(ignore)
    flat = {k: v for k, v in flatten(config).items() if k not in skip}
    if EMULATED_MARK in config_id:
        flat["emulated"] = config_id.split(EMULATED_MARK, 1)[1]
    return json.dumps(flat, sort_keys=True, default=str)


def check_dbs(dbs: Sequence[str | Path]) -> None:
    if len(dbs) != 2:
        raise CoaplabError(f"--db: given {len(dbs)} time(s); compare takes exactly two (--db A --db B), or one with "
                           "--diff-by KEY to compare configurations within it")
    a, b = (Path(p) for p in dbs)
    if a.exists() and b.exists() and a.resolve() == b.resolve():
        raise CoaplabError(f"--db: {str(dbs[0])!r} is given twice; compare two different results databases")


def compare_studies(db_a: str | Path, db_b: str | Path, ignore: Sequence[str] = (), where: str | None = None) -> dict[str, Any]:
    """Compares two results databases: ``{"a", "b", "ignore", "keys", "matched": [...],
    "only_a": [...], "only_b": [...]}``. Each matched entry has the configuration's ``name``,
    ``label`` (its values of the keys that vary among the matched configurations),
    ``config_id_a`` / ``config_id_b``, ``replications_a`` / ``replications_b`` and ``metrics``
    (:func:`difference`, ``first`` = A, ``second`` = B). ``only_a`` / ``only_b`` list the
    configurations found in one study only (``name``, ``config_id``, ``label``)."""
    check_dbs([db_a, db_b])
    sa, sb = load(db_a, where), load(db_b, where)
    known = set().union(*(f.keys() for f in sa.flat.values()), *(f.keys() for f in sb.flat.values()))
    for k in ignore:
        if k not in known:
            hint = did_you_mean(k, sorted(known), n=3, quote=False)
            raise CoaplabError(f"--ignore: {k!r} is not a configuration key of either study{hint}; keys are dotted, "
                               "as in scenario files: link.buffer_bytes, coap.cc, seed, name, ...")

    def index(study, which):
        out: dict[str, str] = {}
        for cid, c in study.configs.items():
            key = match_key(c, ignore, cid)
            if key in out:
                if not ignore:  # the same parameters under two ids: two model versions in one file
                    raise CoaplabError(f"--db: {which} ({study.source!r}) holds configurations {out[key]} and {cid} "
                                       "with the same parameters (stored under two model versions); compare a "
                                       "database written by one model version")
                raise CoaplabError(f"--ignore: in {which} ({study.source!r}) configurations {out[key]} and {cid} differ "
                                   f"only in {', '.join(ignore)}; ignore fewer keys")
            out[key] = cid
        return out

    ia, ib = index(sa, "A"), index(sb, "B")
    both = [k for k in ia if k in ib]
    # Labels: the keys that vary within a scenario (by name) across both studies, as in reports.
    by_name: dict[str, list[dict[str, Any]]] = {}
    for s in (sa, sb):
        for c in s.configs.values():
            by_name.setdefault(c["name"], []).append(c)
    name_keys = {n: [k for k in varying(cs) if k not in ignore] for n, cs in by_name.items()}
    keys = sorted({k for ks in name_keys.values() for k in ks})

    def lab(study, cid):
        ks = name_keys[study.configs[cid]["name"]]
        return label(study.flat[cid], ks) if ks else ""

    matched = []
    for k in both:
        ca, cb = ia[k], ib[k]
        a, b = Sample(sa.runs[ca], ca), Sample(sb.runs[cb], cb)
        matched.append({"name": sa.configs[ca]["name"], "label": lab(sa, ca), "config_id_a": ca, "config_id_b": cb,
                        "replications_a": a.replications, "replications_b": b.replications,
                        "metrics": difference(a, b, sides=(0, 1)),
                        "interval_a": {k: interval(a, k, 0) for k in a.data},
                        "interval_b": {k: interval(b, k, 1) for k in b.data}})
    only = {which: [{"name": s.configs[c]["name"], "config_id": c, "label": lab(s, c)} for k, c in idx.items() if k not in other]
            for which, s, idx, other in (("a", sa, ia, ib), ("b", sb, ib, ia))}
    kept = [[{k: v for k, v in f.items() if k not in ignore} for f in s.flat.values()] for s in (sa, sb)]
    differ = {} if matched or not sa.flat or not sb.flat else differing_keys(*kept)
    return {"a": str(db_a), "b": str(db_b), "ignore": list(ignore), "keys": keys, "matched": matched, "differ": differ,
            "only_a": only["a"], "only_b": only["b"], "resamples": RESAMPLES, "seed": SEED, "level": LEVEL}


# --------------------------------------------------------------------------- within one study


def check_key(configs: Iterable[dict[str, Any]], key: str) -> None:
    """Refuses, in one line, a ``--diff-by`` key that is not a key of these configurations."""
    known = set().union(*(flatten(c) for c in configs))
    if key not in known:
        hint = did_you_mean(key, sorted(known), n=3, quote=False)
        raise CoaplabError(f"--diff-by: {key!r} is not a configuration key{hint}; allowed: a dotted key such as "
                           "coap.cc, link.buffer_bytes, coap.nstart")


def pairwise(configs: dict[str, dict[str, Any]], runs: dict[str, list[dict[str, Any]]], key: str,
             keys: Sequence[str] = PAIR_METRICS) -> list[dict[str, Any]]:
    """Pairwise differences between the configurations (``{config_id: config}``, in the order
    given) that differ in ``key`` only: for each set of configurations equal in every other key
    (``fixed``: the values of the other varying keys), every pair ``first``, ``second`` of
    ``key`` values in order, with ``metrics`` (:func:`difference`, second − first)."""
    flats = {cid: flatten(c) for cid, c in configs.items()}
    check_key(configs.values(), key)
    others = [k for k in varying(configs.values()) if k != key]
    groups: dict[str, list[str]] = {}
    for cid in configs:
        rest = {k: v for k, v in flats[cid].items() if k != key}
        groups.setdefault(json.dumps(rest, sort_keys=True, default=str), []).append(cid)
    samples: dict[str, Sample] = {}
    out = []
    for cids in groups.values():
        for i, first in enumerate(cids):
            for second in cids[i + 1:]:
                for cid in (first, second):
                    if cid not in samples:
                        samples[cid] = Sample(runs[cid], cid)
                out.append({"key": key, "fixed": {k: flats[first].get(k) for k in others},
                            "first": flats[first].get(key), "second": flats[second].get(key),
                            "config_id_first": first, "config_id_second": second,
                            "replications": [samples[first].replications, samples[second].replications],
                            "metrics": difference(samples[first], samples[second], keys)})
    return out


def study_pairwise(study, key: str) -> list[dict[str, Any]]:
    """:func:`pairwise` over a :class:`coaplab.execute.tidy.Study`, scenario by scenario."""
    out = []
    by_name: dict[str, dict[str, dict[str, Any]]] = {}
    for cid, c in study.configs.items():
        by_name.setdefault(c["name"], {})[cid] = c
    check_key(study.configs.values(), key)
    for name, configs in by_name.items():
        for row in pairwise(configs, study.runs, key, PAIR_METRICS + WORKLOAD_METRICS):
            out.append({"name": name, **row})
    return out


# --------------------------------------------------------------------------- text


def _num(v: Any, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if v == 0:
            return "0"
        return f"{v:.{digits}g}" if abs(v) < 1e5 else f"{v:,.0f}"
    return str(v)


def _ci(row: dict[str, Any]) -> str:
    return f"[{_num(row['low'])}, {_num(row['high'])}]" if row["low"] is not None else "(1 replication)"


def _rank(row: dict[str, Any]) -> str:
    t = row.get("rank_test")
    if not t or t["u"] is None:
        return ""
    return f"U={t['u']:g} p={t['p']:.3g} ({t['method']})"


def _metric_lines(metrics: dict[str, Any], first: str, second: str) -> list[str]:
    label = {m.key: m.label for m in METRICS}
    out = [f"    {'metric':<36}{first:>12}{second:>12}{'difference':>12}  {int(LEVEL * 100)} % CI{'':<16}rank test"]
    for k, row in metrics.items():
        out.append(f"    {label[k]:<36}{_num(row['first']):>12}{_num(row['second']):>12}{_num(row['difference']):>12}"
                   f"  {_ci(row):<22}{_rank(row)}")
    return out


def _method_note() -> str:
    return (f"intervals: {int(LEVEL * 100)} % percentile bootstrap of the difference, replications resampled "
            f"independently on each side ({RESAMPLES} resamples, seed {SEED}); rank test: Mann-Whitney U over "
            "per-replication values (U of the first, two-sided p; exact without ties, else normal with tie correction)")


def no_match_hint(differ: dict[str, tuple[list, list]]) -> str:
    """No configuration matched: the keys in which the two studies differ, and the --ignore to try."""
    keys = ", ".join(f"{k} (A: {', '.join(map(fmt_value, a)) or 'unset'}; B: {', '.join(map(fmt_value, b)) or 'unset'})"
                     for k, (a, b) in differ.items())
    return f"no configuration matched: the studies differ in {keys}; to compare them anyway: " + \
        " ".join(f"--ignore {k}" for k in differ)


def compare_table(result: dict[str, Any]) -> str:
    """The text table of :func:`compare_studies`."""
    out = [f"A = {result['a']}", f"B = {result['b']}",
           "matched on the resolved configuration (model version not included)"
           + (f", ignoring {', '.join(result['ignore'])}" if result["ignore"] else "")
           + f": {len(result['matched'])} configurations; differences are B - A",
           _method_note(), ""]
    if result.get("differ"):  # nothing matched: say what keeps them apart
        out += [no_match_hint(result["differ"]), ""]
    for m in result["matched"]:
        ids = m["config_id_a"] if m["config_id_a"] == m["config_id_b"] else f"A {m['config_id_a']}, B {m['config_id_b']}"
        out.append(f"{m['name']}" + (f"  {m['label']}" if m["label"] else "") + f"  [{ids}]"
                   f"  replications A {m['replications_a']}, B {m['replications_b']}")
        out.extend(_metric_lines(m["metrics"], "A", "B"))
        out.append("")
    for which in ("a", "b"):
        rows = result[f"only_{which}"]
        if rows:
            out.append(f"only in {which.upper()} ({len(rows)}):")
            out.extend(f"  {r['name']}" + (f"  {r['label']}" if r["label"] else "") + f"  [{r['config_id']}]" for r in rows)
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def compare_json(result: dict[str, Any]) -> str:
    """JSON Lines: one ``{"kind": "match", …}`` object per matched configuration, then one
    ``{"kind": "only_a" | "only_b", …}`` per configuration found in one study only."""
    common = {"a": result["a"], "b": result["b"], "ignore": result["ignore"], "resamples": RESAMPLES, "seed": SEED,
              "level": LEVEL}
    lines = [json.dumps({"kind": "match", **common, **m}, sort_keys=True) for m in result["matched"]]
    for which in ("a", "b"):
        lines.extend(json.dumps({"kind": f"only_{which}", **common, **r}, sort_keys=True) for r in result[f"only_{which}"])
    return "\n".join(lines) + ("\n" if lines else "")


def _fixed_label(fixed: dict[str, Any]) -> str:
    return ", ".join(f"{short(k)}={fmt_value(v)}" for k, v in fixed.items())


def pairwise_table(rows: list[dict[str, Any]]) -> str:
    """The text block of :func:`study_pairwise` (``coaplab run --diff-by``)."""
    if not rows:
        return "differences: no two configurations differ in that key only\n"
    out = [f"differences by {rows[0]['key']} (second - first)", _method_note(), ""]
    for r in rows:
        fixed = _fixed_label(r["fixed"])
        out.append(f"{r['name']}" + (f"  {fixed}" if fixed else "")
                   + f": {fmt_value(r['first'])} -> {fmt_value(r['second'])}"
                   + f"  [{r['config_id_first']} -> {r['config_id_second']}]")
        out.extend(_metric_lines(r["metrics"], str(fmt_value(r["first"]))[:11], str(fmt_value(r["second"]))[:11]))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def pairwise_json(rows: list[dict[str, Any]]) -> str:
    """JSON Lines, one ``{"kind": "difference", …}`` object per pair."""
    return "".join(json.dumps({"kind": "difference", "resamples": RESAMPLES, "seed": SEED, "level": LEVEL, **r},
                              sort_keys=True, default=str) + "\n" for r in rows)


# --------------------------------------------------------------------------- figures

#: Written on every figure that draws intervals, so that a reader of the figure alone knows.
WHISKERS = (f"markers: median; whiskers: {int(LEVEL * 100)} % bootstrap CI over replications "
            f"({RESAMPLES} resamples)")


def median_intervals(summaries: Sequence[dict[str, Any]], x: str | None = None, hue: str | None = None,
                     col: str | None = None, width: str | float = "two", panel_height: float = 2.2):
    """The pooled median FCT of each configuration as a marker, with its 95 % bootstrap interval
    over replications as whiskers (the summaries' ``fct_replications``, from
    :func:`coaplab.analyse.replstats.replication_stats`), laid out by ``x``, ``hue`` and ``col`` as
    :func:`coaplab.present.figures.box_plot`. A configuration with one replication has a marker only.
    The figure says what the whiskers are."""
    import matplotlib  # lazy: matplotlib, for figures only
    from matplotlib.lines import Line2D  # lazy: matplotlib, for figures only

    from . import figures as F  # lazy: matplotlib, for figures only

    if not summaries:
        raise CoaplabError("no configurations to plot")
    rows, xs, hues, cols = F.place_rows(summaries, x, hue, col)
    col_vals = F.ordered_values(F.key_values(f, cols) for f, _ in rows)
    x_vals = F.ordered_values(F.key_values(f, xs) for f, _ in rows)
    hue_vals, colours, _ = F.hue_styles(rows, hues)
    ncols, nrows, height = F.panel_grid(len(col_vals), width, panel_height)
    fig = F.new_figure(width, height + 0.3 + (0.35 if len(hue_vals) > 1 else 0))
    markers = "osD^v<>p"
    with matplotlib.rc_context(F.RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        slot = 0.8 / len(hue_vals)
        for i, cv in enumerate(col_vals):
            ax = axes[i // ncols][i % ncols]
            F.style_axes(ax)
            for f, s in rows:
                if F.key_values(f, cols) != cv:
                    continue
                rs = s.get("fct_replications") or (replication_stats(s["runs"]) if s.get("runs") else None)
                med = (rs or {}).get("median") or {}
                if med.get("estimate") is None:
                    continue
                hv = F.key_values(f, hues)
                hi = hue_vals.index(hv)
                pos = x_vals.index(F.key_values(f, xs)) + (hi - (len(hue_vals) - 1) / 2) * slot
                err = None
                if med.get("low") is not None:
                    err = [[med["estimate"] - med["low"]], [med["high"] - med["estimate"]]]
                ax.errorbar([pos], [med["estimate"]], yerr=err, fmt=markers[hi % len(markers)], color=colours[hv],
                            markersize=4, capsize=2.5, elinewidth=0.9, markeredgecolor="#333333", markeredgewidth=0.4)
            ax.set_xticks(range(len(x_vals)), [F.key_label(xs, v) for v in x_vals] if xs else [""] * len(x_vals))
            ax.set_xlim(-0.5, len(x_vals) - 0.5)
            if xs and i >= len(col_vals) - ncols:
                ax.set_xlabel(F.dim_title(xs))
            if i % ncols == 0:
                ax.set_ylabel("median flow completion\ntime (s)")
            if cols:
                ax.set_title(F.panel_title(cols, cv))
        for j in range(len(col_vals), nrows * ncols):
            axes[j // ncols][j % ncols].set_visible(False)
        if len(hue_vals) > 1:
            handles = [Line2D([], [], linestyle="none", marker=markers[k % len(markers)], color=colours[v],
                              markeredgecolor="#333333", markeredgewidth=0.4) for k, v in enumerate(hue_vals)]
            F.add_legend(fig, handles, [F.key_label(hues, v) for v in hue_vals], F.dim_title(hues))
        fig.supxlabel(WHISKERS, fontsize=F.FONT_PT, color="#444444")
    return fig


def difference_plot(rows: Sequence[dict[str, Any]], labels: Sequence[str], metrics: Sequence[str] = PAIR_METRICS,
                    width: str | float = "two", what: str = "second − first"):
    """A forest plot: one panel per metric, one line per pair (``labels``), the difference as
    a marker and its bootstrap interval as whiskers, a vertical line at zero. ``rows`` are the
    ``metrics`` dicts of :func:`difference`. The figure says what the markers and whiskers are."""
    import matplotlib  # lazy: matplotlib, for figures only

    from . import figures as F  # lazy: matplotlib, for figures only

    metrics = [k for k in metrics if any(k in r for r in rows)]
    if not rows or not metrics:
        raise CoaplabError("no differences to plot")
    label = {m.key: m.label for m in METRICS}
    height = 0.7 + 0.22 * len(rows)
    fig = F.new_figure(width, height + 0.3)
    with matplotlib.rc_context(F.RC):
        axes = fig.subplots(1, len(metrics), sharey=True, squeeze=False)[0]
        ys = list(range(len(rows)))[::-1]
        for ax, key in zip(axes, metrics):
            F.style_axes(ax)
            ax.grid(True, axis="x")
            ax.grid(False, axis="y")
            ax.axvline(0.0, color="#888888", linewidth=0.8, zorder=0)
            for y, r in zip(ys, rows):
                d = r.get(key)
                if d is None:
                    continue
                err = None if d["low"] is None else [[d["difference"] - d["low"]], [d["high"] - d["difference"]]]
                covers = d["low"] is not None and d["low"] <= 0 <= d["high"]
                colour = F.OKABE_ITO[0] if covers or d["low"] is None else F.OKABE_ITO[3]
                ax.errorbar([d["difference"]], [y], xerr=err, fmt="o", color=colour, markersize=3.5, capsize=2,
                            elinewidth=0.9)
            ax.set_xlabel(f"{label[key]}\n{what}")
        axes[0].set_yticks(ys, list(labels))
        axes[0].set_ylim(-0.6, len(rows) - 0.4)
        fig.supxlabel(f"markers: difference of the statistics; whiskers: {int(LEVEL * 100)} % bootstrap CI over "
                      f"replications; vermilion: the CI excludes 0", fontsize=F.FONT_PT, color="#444444")
    return fig


# --------------------------------------------------------------------------- report


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "<td>—</td>"
    ci = f'<br><span class="muted">[{_num(row["low"])}, {_num(row["high"])}]</span>' if row["low"] is not None else ""
    t = row.get("rank_test")
    rank = (f'<br><span class="muted">U={t["u"]:g}, p={t["p"]:.3g}</span>' if t and t["u"] is not None else "")
    return f"<td>{_num(row['difference'])}{ci}{rank}</td>"


def _note(what: str) -> str:
    return (f'<p class="muted">{esc(what)} In brackets the {int(LEVEL * 100)} % confidence interval of the '
            f"difference: a percentile bootstrap over replications, each side resampled independently "
            f"({RESAMPLES} resamples, seed {SEED}; none with one replication). U and p: the Mann–Whitney U test "
            "over the per-replication values (U of the first, two-sided p; exact without ties, otherwise the "
            "normal approximation with tie correction). docs/experiments.md, \"Differences\".</p>")


def report_section(n: int, study, cids: list[str], summaries: dict[str, dict[str, Any]],
                   diff_by: str | None) -> tuple[str, list[str]]:
    """The report's part of one scenario: its median FCT with replication intervals, and the
    pairwise differences by ``diff_by`` (default: ``coap.cc`` when it varies) as a table and a
    forest plot. Returns the HTML and the figure ids."""
    html, ids = [], []
    sums = [summaries[c] for c in cids]
    if any(s["replications"] > 1 for s in sums):
        fid = f"median-ci-{n}"
        html.append(figure_html(fid, "Median flow completion time (pooled over clients and replications) with its 95 % "
                            "bootstrap confidence interval over replications as whiskers.", median_intervals(sums)))
        ids.append(fid)
    keys = varying(study.configs[c] for c in cids)
    key = diff_by if diff_by is not None else ("coap.cc" if "coap.cc" in keys else None)
    if key is None or key not in keys:
        return "".join(html), ids
    rows = pairwise({c: study.configs[c] for c in cids}, study.runs, key)
    if not rows:
        return "".join(html), ids
    labels = [(f"{_fixed_label(r['fixed'])}: " if r["fixed"] else "") + f"{fmt_value(r['first'])} → {fmt_value(r['second'])}"
              for r in rows]
    fid = f"differences-{n}"
    html.append(f"<h3>Differences by {esc(title(key))} (<code>{esc(key)}</code>)</h3>")
    if len(rows) <= 40:
        html.append(figure_html(fid, f"Pairwise differences by {key} (second − first) of the median FCT, the median "
                                 "unnecessary retransmissions per client and the throughput; whiskers: 95 % bootstrap "
                                 "CI over replications.", difference_plot([r["metrics"] for r in rows], labels)))
        ids.append(fid)
    others = list(rows[0]["fixed"])
    head = "".join(f'<th class="l">{esc(title(k))}</th>' for k in others)
    label = {m.key: m.label for m in METRICS}
    trs = []
    for r in rows:
        cells = "".join(f'<td class="l">{esc(fmt_value(r["fixed"][k]))}</td>' for k in others)
        trs.append(f"<tr>{cells}<td class=\"l\">{esc(fmt_value(r['first']))}</td><td class=\"l\">"
                   f"{esc(fmt_value(r['second']))}</td>" + "".join(_cell(r["metrics"].get(k)) for k in PAIR_METRICS)
                   + "</tr>")
    html.append(f'<div style="overflow-x:auto"><table data-table="differences-{n}"><tr>{head}'
                f'<th class="l">first ({esc(short(key))})</th><th class="l">second</th>'
                + "".join(f"<th>{esc(label[k])}<br>second − first</th>" for k in PAIR_METRICS)
                + f"</tr>{''.join(trs)}</table></div>")
    html.append(_note("Differences between configurations that differ only in "
                      f"{key}: the statistic of the second minus that of the first."))
    return "".join(html), ids


def build_comparison(dbs: Sequence[str | Path], ignore: Sequence[str] = (), where: str | None = None) -> tuple[str, list[str]]:
    """The HTML of ``coaplab report --db A --db B``: the two studies side by side — per matched
    configuration the median FCT of each with its interval, the differences B − A as a forest
    plot and a table — and the configurations found in one study only."""
    result = compare_studies(dbs[0], dbs[1], ignore, where)
    a, b = Path(dbs[0]).name, Path(dbs[1]).name
    body, ids = [], []
    matched = result["matched"]
    labels = [f"{m['name']}" + (f": {m['label']}" if m["label"] else "") for m in matched]
    if matched:
        fig = side_by_side(matched, labels, (a, b))
        body.append(figure_html("side-by-side", f"Median FCT per matched configuration, {a} and {b} side by side; "
                                            "whiskers: 95 % bootstrap CI over replications.", fig))
        ids.append("side-by-side")
        body.append(figure_html("differences", f"Differences {b} − {a} per matched configuration; whiskers: 95 % "
                                           "bootstrap CI over replications.",
                            difference_plot([m["metrics"] for m in matched], labels, METRIC_KEYS, what="B − A")))
        ids.append("differences")
    label = {m.key: m.label for m in METRICS}
    columns = [k for k in METRIC_KEYS if k in ALWAYS_COLUMNS or any(k in m["metrics"] for m in matched)]
    trs = []
    for m, lab in zip(matched, labels):
        trs.append(f'<tr><td class="l">{esc(lab)}</td><td class="l"><code>{esc(m["config_id_a"])}</code></td>'
                   f'<td class="l"><code>{esc(m["config_id_b"])}</code></td>'
                   + "".join(f"<td>{_num(m['metrics'][k]['first'])}</td><td>{_num(m['metrics'][k]['second'])}</td>"
                             + _cell(m["metrics"][k]) if k in m["metrics"] else "<td>—</td><td>—</td><td>—</td>"
                             for k in columns) + "</tr>")
    head = "".join(f"<th>{esc(label[k])}<br>A</th><th>B</th><th>B − A</th>" for k in columns)
    body.append('<h2>Matched configurations</h2><div style="overflow-x:auto"><table data-table="compare">'
                f'<tr><th class="l">configuration</th><th class="l">config_id A</th><th class="l">config_id B</th>{head}'
                f"</tr>{''.join(trs)}</table></div>")
    body.append(_note("A configuration of A and one of B match when their resolved parameters are equal (the model "
                      "version is not one of them)" + (f", ignoring {', '.join(result['ignore'])}" if result["ignore"] else "")
                      + "."))
    for which, name in (("a", a), ("b", b)):
        rows = result[f"only_{which}"]
        if rows:
            body.append(f"<h2>Only in {which.upper()} ({esc(name)}): {len(rows)}</h2><ul>"
                        + "".join(f"<li>{esc(r['name'])}{': ' + esc(r['label']) if r['label'] else ''} "
                                  f"<code>{esc(r['config_id'])}</code></li>" for r in rows) + "</ul>")
    doc = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>coaplab comparison</title>"
           f"<style>{CSS}</style></head><body><h1>coaplab comparison</h1>"
           f"<p>A = <code>{esc(a)}</code>, B = <code>{esc(b)}</code>: {len(matched)} matched configurations, "
           f"{len(result['only_a'])} only in A, {len(result['only_b'])} only in B.</p>" + "".join(body) + "</body></html>")
    return doc, ids


def write_comparison(dbs: Sequence[str | Path], out_dir: str | Path, ignore: Sequence[str] = (),
                     where: str | None = None) -> Path:
    with new_dirs_removed_on_error(out_dir):  # a refused database leaves no empty --out behind
        path = output_in(out_dir, "index.html", "--out")  # before the work: a path that cannot be written is one line
        doc, _ = build_comparison(dbs, ignore, where)
    with atomic_write(path, "w", encoding="utf-8") as f:
        f.write(doc)
    return path


def side_by_side(matched: Sequence[dict[str, Any]], labels: Sequence[str], names: tuple[str, str],
                 metric: str = "fct_median_s", width: str | float = "two"):
    """Each matched configuration's statistic in study A and in study B next to each other
    (markers) with the bootstrap interval of each (whiskers), one row per configuration."""
    import matplotlib  # lazy: matplotlib, for figures only
    from matplotlib.lines import Line2D  # lazy: matplotlib, for figures only

    from . import figures as F  # lazy: matplotlib, for figures only

    label = {m.key: m.label for m in METRICS}
    fig = F.new_figure(width, 0.9 + 0.26 * len(matched))
    with matplotlib.rc_context(F.RC):
        ax = fig.subplots()
        F.style_axes(ax)
        ax.grid(True, axis="x")
        ax.grid(False, axis="y")
        ys = list(range(len(matched)))[::-1]
        for y, m in zip(ys, matched):
            d = m["metrics"].get(metric)
            if d is None:
                continue
            for side, (key, off, colour, mk) in enumerate((("a", 0.15, F.OKABE_ITO[0], "o"),
                                                           ("b", -0.15, F.OKABE_ITO[1], "s"))):
                iv = m.get(f"interval_{key}", {}).get(metric)
                err = None if not iv or iv[0] is None else [[d["first" if key == "a" else "second"] - iv[0]],
                                                            [iv[1] - d["first" if key == "a" else "second"]]]
                ax.errorbar([d["first" if key == "a" else "second"]], [y + off], xerr=err, fmt=mk, color=colour,
                            markersize=3.5, capsize=2, elinewidth=0.9)
        ax.set_yticks(ys, list(labels))
        ax.set_ylim(-0.6, len(matched) - 0.4)
        ax.set_xlabel(label[metric])
        handles = [Line2D([], [], linestyle="none", marker=mk, color=c) for mk, c in (("o", F.OKABE_ITO[0]),
                                                                                      ("s", F.OKABE_ITO[1]))]
        F.add_legend(fig, handles, [f"A: {names[0]}", f"B: {names[1]}"], "")
        fig.supxlabel(WHISKERS, fontsize=F.FONT_PT, color="#444444")
    return fig
