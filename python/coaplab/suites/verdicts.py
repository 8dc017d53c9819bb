"""Verdicts first: for every published figure a `coaplab reproduce` target matches, one row —
published, simulated with its 95 % bootstrap interval over replications, the difference, the
tolerance the data file states (``tolerance`` in `coaplab/data/published.toml` and
`cocoa-2016.toml`; docs/validation.md "Today's figures at a glance"), the verdict and the
unit.

- FCT percentiles (s): difference ``simulated / published − 1``, met when its magnitude is
  within the tolerance;
- retransmission histograms: published and simulated as % of exchanges per retransmission
  count, the total-variation distance, met when at most the tolerance; no interval;
- the CoCoA study's Table II (ms): as FCT figures, the interval from the per-replication sums.

A figure without a tolerance gets "—" and the verdict "no tolerance set"; a statistic the
runs could not give (no completed exchange) "not simulated".
"""

from __future__ import annotations

from typing import Any

from ..analyse.intervals import percentile_intervals, ratio_interval
from ..analyse.stats import PERCENTILE_LEVELS
from ..execute.runner import RunResult
from .calibration import COCOA_GPRS_FIGURE, cocoa_table2_rows, load_cocoa2016, shares_text, tv_distance

MET, MISSED, NO_TOLERANCE, NOT_SIMULATED = "met", "missed", "no tolerance set", "not simulated"
#: Table II's statistics: label → (numerator, denominator) of the per-replication sums.
TABLE2_SUMS = {"mean RTT": ("rtt_strong_sum_s", "rtt_strong_samples"),
               "mean initial RTO": ("initial_rto_sum_s", "initial_rto_count")}


def tolerance_of(fig: dict[str, Any], column: str) -> float | None:
    """The figure's tolerance for `column`: one number for the figure, or a table by column."""
    tol = fig.get("tolerance")
    if isinstance(tol, dict):
        tol = tol.get(column)
    return None if tol is None else float(tol)


def judge(distance: float | None, tolerance: float | None) -> str:
    """The verdict for a difference's magnitude (or a distance) against a tolerance."""
    if distance is None:
        return NOT_SIMULATED
    if tolerance is None:
        return NO_TOLERANCE
    return MET if abs(distance) <= tolerance + 1e-12 else MISSED


def as_published(config: dict[str, Any]) -> bool:
    """Whether `config` runs as the published star studies ran: on the star, one exchange
    outstanding per client (RFC 7252's NSTART 1), CON traffic without a PROBING_RATE. Other
    configurations are never set beside their figures, whatever else matches."""
    coap, network = config["coap"], config.get("network") or {}
    return (network.get("kind", "star") == "star" and coap.get("nstart", 1) == 1
            and not coap.get("non_rate_per_s") and coap.get("probing_rate_bps") is None)


def published_for(config: dict[str, Any], figures: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, float]]]:
    """The published FCT figures whose scenario matches `config`: (figure id, column, stats)."""
    w, link, coap = config["workload"], config["link"], config["coap"]
    out: list[tuple[str, str, dict[str, float]]] = []
    if not as_published(config):
        return out
    for fig in figures:
        sc = fig["scenario"]
        if "fct_s" not in fig:
            continue
        if sc["workload"] != w["kind"] or sc["clients"] != w["clients"] or sc.get("errors", "none") != link["errors"]:
            continue
        if "exchanges" in sc and sc["exchanges"] != w["exchanges"]:
            continue
        for column, stats in fig["fct_s"].items():
            if column == coap["cc"] and sc.get("buffer_bytes") == link["buffer_bytes"] and sc.get("transport") == coap["transport"] or column == f"{coap['transport']}/{coap['cc']}@{link['buffer_bytes']}":
                out.append((fig["id"], column, stats))
    return out


def published_histograms_for(config: dict[str, Any], figures: list[dict[str, Any]]) -> list[tuple[str, str, list[int]]]:
    """The published retransmission histograms whose scenario and row (``"algorithm/workload"``)
    match `config`: (figure id, row, counts by retransmissions)."""
    w, link, coap = config["workload"], config["link"], config["coap"]
    out: list[tuple[str, str, list[int]]] = []
    if not as_published(config):
        return out
    for fig in figures:
        sc = fig["scenario"]
        if (sc["clients"] != w["clients"] or sc.get("errors", "none") != link["errors"]
                or sc.get("buffer_bytes") != link["buffer_bytes"] or sc.get("transport", "udp") != coap["transport"]
                or ("exchanges" in sc and sc["exchanges"] != w["exchanges"])):
            continue
        row = f"{coap['cc']}/{w['kind']}"
        if row in fig.get("retransmission_histogram", {}):
            out.append((fig["id"], row, fig["retransmission_histogram"][row]))
    return out


def fct_rows(experiment: str, result: RunResult, figures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The verdict rows of every published FCT figure and histogram the result's configurations match."""
    by_id = {f["id"]: f for f in figures}
    out = []
    for s in result.summaries:
        base = {"experiment": experiment, "name": s["name"], "config_id": s["config_id"], **s.get("swept", {})}
        runs = result.runs.get(s["config_id"], [])
        for fig_id, column, stats in published_for(s["config"], figures):
            levels = {k: PERCENTILE_LEVELS[k] for k in stats if k in PERCENTILE_LEVELS}
            cis = percentile_intervals(runs, levels) if runs else {}
            tol = tolerance_of(by_id[fig_id], column)
            for k, pub in stats.items():
                sim = s["fct_s"].get(k)
                diff = (sim / pub - 1.0) if sim is not None else None
                ci = cis.get(k)
                out.append({**base, "figure": fig_id, "column": column, "stat": k, "published": pub,
                            "simulated": sim, "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
                            "diff": diff, "tolerance": tol, "verdict": judge(diff, tol), "unit": "s"})
        for fig_id, row, published in published_histograms_for(s["config"], figures):
            tv = tv_distance(published, s["retransmission_histogram"]) if sum(s["retransmission_histogram"]) else None
            tol = tolerance_of(by_id[fig_id], row)
            out.append({**base, "figure": fig_id, "column": row, "stat": "TV distance", "published": list(published),
                        "simulated": list(s["retransmission_histogram"]), "ci_low": None, "ci_high": None, "diff": tv,
                        "tolerance": tol, "verdict": judge(tv, tol),
                        "unit": f"% of exchanges by retransmissions 0 … {len(published) - 2}, ≥ {len(published) - 1}"})
    return out


def table2_rows(experiment: str, result: RunResult) -> list[dict[str, Any]]:
    """The CoCoA study's Table II as verdict rows (ms), the interval over replications."""
    figures = load_cocoa2016()
    fig = next(f for f in figures if f["id"] == COCOA_GPRS_FIGURE)
    tol = tolerance_of(fig, "")
    by_key = {(s["config"]["coap"]["cc"], s["config"]["workload"]["clients"]): s for s in result.summaries}
    out = []
    for r in cocoa_table2_rows(result.summaries, figures):
        s = by_key.get((r["column"], r["clients"]))
        ci = None
        if s is not None and r["stat"] in TABLE2_SUMS:
            ci = ratio_interval(result.runs.get(s["config_id"], []), *TABLE2_SUMS[r["stat"]])
        out.append({"experiment": experiment, **r, "column": f"{r['column']}, {r['clients']} clients",
                    "ci_low": ci[0] * 1000 if ci else None, "ci_high": ci[1] * 1000 if ci else None,
                    "tolerance": tol, "verdict": judge(r["diff"], tol), "unit": "ms"})
    return out


def _num(v: float | None, unit: str) -> str:
    if v is None:
        return "—"
    return f"{v:.0f}" if unit == "ms" else f"{v:.3f}"


def cells(r: dict[str, Any]) -> dict[str, str]:
    """A verdict row's printed cells: published, simulated [CI], difference, tolerance."""
    unit = r["unit"]
    tv = r["stat"] == "TV distance"  # published and simulated are histograms: shown as % per bin
    bins = len(r["published"]) if tv else 0
    sim = shares_text(r["simulated"], bins) if tv else _num(r["simulated"], unit)
    if r.get("ci_low") is not None:
        sim += f" [{_num(r['ci_low'], unit)}, {_num(r['ci_high'], unit)}]"
    if r["diff"] is None:
        diff = "—"
    else:
        diff = f"{r['diff']:.3f}" if tv else f"{r['diff'] * 100:+.3f} %"
    tol = r["tolerance"]
    tol_s = "—" if tol is None else (f"≤ {tol:.2f}" if tv else f"±{tol * 100:g} %")
    if r.get("bound"):  # a bound (cell calibration, `coaplab.suites.cell_calibration`): "at most" / "at least"
        tol_s = r["bound"]
    return {"published": shares_text(r["published"], bins) if tv else _num(r["published"], unit), "simulated": sim, "diff": diff,
            "tolerance": tol_s}


def count_line(rows: list[dict[str, Any]]) -> str:
    met = sum(r["verdict"] == MET for r in rows)
    judged = sum(r["verdict"] in (MET, MISSED) for r in rows)
    unjudged = len(rows) - judged
    return (f"  {met} of {judged} figures within tolerance" + (f"; {unjudged} without a tolerance" if unjudged else ""))


HEADER = ("figure", "configuration", "stat", "published", "simulated [95 % CI]", "difference", "tolerance",
          "verdict", "unit")


def verdicts_text(rows: list[dict[str, Any]]) -> str:
    """The verdict rows as an aligned text table, with a count of the figures met."""
    table = [HEADER] + [(r["figure"], r["column"], r["stat"], c["published"], c["simulated"], c["diff"],
                         c["tolerance"], r["verdict"], r["unit"]) for r in rows for c in (cells(r),)]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(HEADER))]
    lines = ["  " + "  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() for row in table]
    return "\n".join(lines + [count_line(rows)]) + "\n"


def verdicts_markdown(rows: list[dict[str, Any]], statements: list[dict[str, Any]]) -> str:
    """The verdict rows (only those with a published figure) and the statements' verdicts."""
    out = []
    if rows:
        out += ["| experiment | " + " | ".join(HEADER) + " |", "|" + "---|" * (len(HEADER) + 1)]
        for r in rows:
            c = cells(r)
            out.append(f"| {r['experiment']} | {r['figure']} | {r['column']} | {r['stat']} | {c['published']} | "
                       f"{c['simulated']} | {c['diff']} | {c['tolerance']} | {r['verdict']} | {r['unit']} |")
    if statements:
        if out:
            out.append("")
        out += ["| experiment | statement | verdict | measured |", "|---|---|---|---|"]
        for r in statements:
            out.append(f"| {r['experiment']} | {r['figure']}: {r['statement']} | {r['verdict']} | "
                       f"{r['measured'].replace('|', '/')} |")
    if not out:
        out.append("(no published figure or statement for these experiments)")
    return "\n".join(out) + "\n"
