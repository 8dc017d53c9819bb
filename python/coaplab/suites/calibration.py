"""Published vs. simulated for the reference figures (`coaplab/data/published.toml`).

Each figure names the scenario parameters that differ from the defaults; every algorithm
column becomes one configuration, run with the literature's MAX_RETRANSMIT = 20. FCT figures
are compared percentile by percentile (relative difference); retransmission histograms
(``[figure.retransmission_histogram]``, one row per ``"algorithm/workload"``) by the total
variation distance between the published and the simulated distribution of exchanges over
retransmission counts.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from ..execute.runner import run_scenario
from ..files import read_regular_file
from ..present.output import rows_csv, rows_json

#: The literature's experiments use MAX_RETRANSMIT 20 so that no exchange fails (docs/design.md §3).
LITERATURE_MAX_RETRANSMIT = 20


def load_reference(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The figures of `published.toml` (the packaged copy unless `path` is given)."""
    if path is None:
        text = resources.files("coaplab").joinpath("data/published.toml").read_text(encoding="utf-8")
    else:
        text = read_regular_file(Path(path), 1024 * 1024, "reference").decode("utf-8")
    figures = tomllib.loads(text).get("figure")
    if not isinstance(figures, list) or not figures:
        raise ValueError("it has no [[figure]] tables; a reference file lists its figures as [[figure]] "
                         "tables, like the packaged published.toml")
    return figures


def tv_distance(p: Sequence[float], q: Sequence[float]) -> float:
    """Total variation distance between two histograms over the same bins (index = number of
    retransmissions): each is normalised to a distribution, the shorter is padded with zeros,
    and the result is half the L1 distance, ``0.5 · Σ |p_i/Σp − q_i/Σq|`` — 0 for equal shapes,
    1 for disjoint supports."""
    sp, sq = sum(p), sum(q)
    if sp <= 0 or sq <= 0 or min(list(p) + list(q), default=0) < 0:
        raise ValueError("tv_distance: histograms need non-negative counts and a positive total")
    n = max(len(p), len(q))
    p = list(p) + [0] * (n - len(p))
    q = list(q) + [0] * (n - len(q))
    return 0.5 * sum(abs(a / sp - b / sq) for a, b in zip(p, q))


def histogram_scenario(fig: dict[str, Any], row: str) -> dict[str, Any]:
    """The scenario for one row (``"cocoa/continuous"``: algorithm / workload kind) of a
    retransmission-histogram figure."""
    cc, kind = row.split("/")
    sc = fig["scenario"]
    workload = {"kind": kind, "clients": sc["clients"]}
    if "exchanges" in sc:
        workload["exchanges"] = sc["exchanges"]
    return {
        "name": f"{fig['id']}/{row}",
        "seed": 1,
        "replications": sc.get("replications", 20),
        "link": {"buffer_bytes": sc.get("buffer_bytes", 2500), "errors": sc.get("errors", "none")},
        "workload": workload,
        "coap": {"transport": sc.get("transport", "udp"), "cc": cc, "max_retransmit": LITERATURE_MAX_RETRANSMIT},
    }


def figure_scenario(fig: dict[str, Any], column: str) -> dict[str, Any] | None:
    """The scenario for one column of a figure (``"udp/cocoa@2500"``, ``"tcp/newreno@14100"`` or a
    plain algorithm name with the figure's own transport and buffer)."""
    sc = fig["scenario"]
    transport, cc, buffer = sc.get("transport"), column, sc.get("buffer_bytes", 2500)
    if "/" in column:  # "udp/default@2500"
        transport, rest = column.split("/", 1)
        cc, buffer = rest.split("@")
        buffer = int(buffer)
    transport = transport or "udp"
    workload = {"kind": sc["workload"], "clients": sc["clients"]}
    if "exchanges" in sc:
        workload["exchanges"] = sc["exchanges"]
    if "resource_bytes" in sc:
        workload["resource_bytes"] = sc["resource_bytes"]
    return {
        "name": f"{fig['id']}/{column}",
        "seed": 1,
        "replications": sc.get("replications", 20),
        "link": {"buffer_bytes": buffer, "errors": sc.get("errors", "none")},
        "workload": workload,
        "coap": {"transport": transport, "cc": cc}
        | ({"max_retransmit": LITERATURE_MAX_RETRANSMIT} if transport == "udp" else {}),
    }


def _with_workload(scenario: dict[str, Any], workload: dict[str, Any] | None) -> dict[str, Any]:
    if workload:
        scenario["workload"] = {**scenario["workload"], **workload}
    return scenario


def compare(figures: list[dict[str, Any]], jobs: int | None = None,
            workload: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per (figure, column, statistic): published, simulated, relative difference (for
    histogram rows: statistic "TV", the counts, and the total-variation distance). `workload`
    keys, if given, are set in every figure's scenario (e.g. a start model, for the
    sensitivity study of docs/validation.md)."""
    rows = []
    for fig in figures:
        for row, published in fig.get("retransmission_histogram", {}).items():
            scenario = _with_workload(histogram_scenario(fig, row), workload)
            hist = run_scenario(scenario, jobs=jobs).summaries[0]["retransmission_histogram"]
            rows.append({
                "figure": fig["id"], "column": row, "stat": "TV", "published": published, "simulated": hist,
                "diff": tv_distance(published, hist), "approximate": bool(fig.get("approximate")),
                "histogram": True,
            })
        for column, published in fig.get("fct_s", {}).items():
            column_scenario = figure_scenario(fig, column)
            summary = (run_scenario(_with_workload(column_scenario, workload), jobs=jobs).summaries[0]
                       if column_scenario else None)
            for stat, value in published.items():
                sim = summary["fct_s"][stat] if summary else None
                rows.append({
                    "figure": fig["id"], "column": column, "stat": stat, "published": value, "simulated": sim,
                    "diff": (sim / value - 1.0) if sim is not None else None,
                    "approximate": bool(fig.get("approximate")),
                })
    return rows


def render(rows: list[dict[str, Any]], fmt: str) -> str:
    """``markdown`` (the table below), ``json`` (JSON Lines) or ``csv``."""
    return {"markdown": markdown, "json": rows_json, "csv": rows_csv}[fmt](rows)


def shares_text(hist: list[int], bins: int) -> str:
    """A histogram as % of exchanges by retransmissions 0 … bins-2, the last bin ≥ bins-1."""
    total = sum(hist)
    cut = list(hist[: bins - 1]) + [sum(hist[bins - 1:])]
    cut += [0] * (bins - len(cut))
    return " / ".join(f"{100 * n / total:.1f}" for n in cut)


def markdown(rows: list[dict[str, Any]]) -> str:
    fct = [r for r in rows if not r.get("histogram")]
    hist = [r for r in rows if r.get("histogram")]
    out = []
    if fct:
        out += ["| figure | algorithm | statistic | published (s) | simulated (s) | difference |", "|---|---|---|---|---|---|"]
    for r in fct:
        sim = f"{r['simulated']:.3f}" if r["simulated"] is not None else "—"
        diff = f"{r['diff'] * 100:+.2f} %" if r["diff"] is not None else "—"
        approx = " (approx.)" if r["approximate"] else ""
        out.append(f"| {r['figure']}{approx} | {r['column']} | {r['stat']} | {r['published']:.3f} | {sim} | {diff} |")
    if hist:
        if out:
            out.append("")
        bins = max(len(r["published"]) for r in hist)
        label = f"exchanges by retransmissions 0 … {bins - 2}, ≥ {bins - 1} (%)"
        out += [f"| figure | algorithm/workload | published: {label} | simulated | TV distance |", "|---|---|---|---|---|"]
        for r in hist:
            out.append(f"| {r['figure']} | {r['column']} | {shares_text(r['published'], bins)} | "
                       f"{shares_text(r['simulated'], bins)} | {r['diff']:.3f} |")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- the CoCoA study

#: The `coaplab reproduce` target whose runs are compared with the CoCoA study's Table II.
COCOA_GPRS_TARGET = "cocoa2016-gprs-continuous"
# The same runs with Californium's implementations (crates/cc/src/californium.rs), as the study
# measured them.
COCOA_GPRS_CALIFORNIUM_TARGET = "cocoa2016-gprs-continuous-californium"
COCOA_GPRS_TARGETS = (COCOA_GPRS_TARGET, COCOA_GPRS_CALIFORNIUM_TARGET)
CALIFORNIUM_SUFFIX = "@californium"
#: The Table II figure in `coaplab/data/cocoa-2016.toml`.
COCOA_GPRS_FIGURE = "cocoa-gprs-table2"
#: Table II's quantities: (published key, ms; summary key, s; label).
COCOA_TABLE2_STATS = (("rtt_ms", "mean_rtt_s", "mean RTT"), ("initial_rto_ms", "mean_initial_rto_s", "mean initial RTO"))


def load_cocoa2016(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The figures of the CoCoA study (Betzler et al., "CoCoA: Congestion Control for CoAP",
    IEEE Communications Magazine 2016), `coaplab/data/cocoa-2016.toml` unless `path` is given."""
    if path is None:
        text = resources.files("coaplab").joinpath("data/cocoa-2016.toml").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return tomllib.loads(text)["figure"]


def cocoa_table2_rows(summaries: list[dict[str, Any]], figures: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Published vs. simulated for the CoCoA study's Table II (GPRS columns): for every summary
    whose algorithm and number of clients the table has (``cocoa``, ``default`` × 10–40), one row
    per published quantity — mean RTT (strong samples) and mean initial RTO — in ms, with the
    relative difference ``simulated / published − 1`` (None where nothing was simulated: a
    mean without samples). In the order of clients, then the table's algorithm order."""
    fig = next(f for f in (figures or load_cocoa2016()) if f["id"] == COCOA_GPRS_FIGURE)
    algorithms = [k for k, v in fig.items() if isinstance(v, dict) and k != "scenario"]
    out = []
    for s in summaries:
        cc, clients = s["config"]["coap"]["cc"], s["config"]["workload"]["clients"]
        # The study measured Californium's implementations: `cocoa@californium` is compared with
        # the table's `cocoa` column as the draft's `cocoa` is (docs/validation.md).
        published = fig.get(cc.removesuffix(CALIFORNIUM_SUFFIX), {}).get(str(clients))
        if published is None:
            continue
        for key, summary_key, label in COCOA_TABLE2_STATS:
            if key not in published:
                continue
            sim = s.get(summary_key)
            sim_ms = sim * 1000.0 if sim is not None else None
            out.append({"figure": COCOA_GPRS_FIGURE, "clients": clients, "column": cc, "stat": label,
                        "published": float(published[key]), "simulated": sim_ms,
                        "diff": (sim_ms / published[key] - 1.0) if sim_ms is not None else None})
    out.sort(key=lambda r: (r["clients"], algorithms.index(base) if (base := r["column"].removesuffix(CALIFORNIUM_SUFFIX))
                                            in algorithms else 99, r["column"]))
    return out


def cocoa_table2_text(rows: list[dict[str, Any]]) -> str:
    """The rows of :func:`cocoa_table2_rows` as a plain-text table."""
    lines = [f"{COCOA_GPRS_FIGURE}: Betzler et al. 2016, Table II (GPRS), published vs simulated",
             f"  {'clients':>7}  {'algorithm':<17}  {'statistic':<16}  {'published ms':>12}  {'simulated ms':>12}  {'diff':>8}"]
    for r in rows:
        sim = f"{r['simulated']:12.0f}" if r["simulated"] is not None else f"{'—':>12}"
        diff = f"{r['diff'] * 100:+7.1f}%" if r["diff"] is not None else f"{'—':>8}"
        lines.append(f"  {r['clients']:>7}  {r['column']:<17}  {r['stat']:<16}  {r['published']:12.0f}  {sim}  {diff}")
    if not rows:
        lines.append("  (no configuration matches the table's algorithms and numbers of clients)")
    return "\n".join(lines) + "\n"
