"""Published vs. simulated for the reference figures (SPEC §8, `reference/published.toml`).

Each figure names the scenario parameters that differ from the defaults; every algorithm
column becomes one configuration, run with the literature's MAX_RETRANSMIT = 20.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from .runner import run_scenario

#: The literature's experiments use MAX_RETRANSMIT 20 so that no exchange fails (SPEC §3).
LITERATURE_MAX_RETRANSMIT = 20


def load_reference(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The figures of `published.toml` (the packaged copy unless `path` is given)."""
    if path is None:
        text = resources.files("coaplab").joinpath("data/published.toml").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return tomllib.loads(text)["figure"]


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


def compare(figures: list[dict[str, Any]], jobs: int | None = None) -> list[dict[str, Any]]:
    """One row per (figure, column, statistic): published, simulated, relative difference."""
    rows = []
    for fig in figures:
        for column, published in fig["fct_s"].items():
            scenario = figure_scenario(fig, column)
            summary = run_scenario(scenario, jobs=jobs).summaries[0] if scenario else None
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
    from .output import rows_csv, rows_json

    return {"markdown": markdown, "json": rows_json, "csv": rows_csv}[fmt](rows)


def markdown(rows: list[dict[str, Any]]) -> str:
    out = ["| figure | algorithm | statistic | published (s) | simulated (s) | difference |", "|---|---|---|---|---|---|"]
    for r in rows:
        sim = f"{r['simulated']:.3f}" if r["simulated"] is not None else "—"
        diff = f"{r['diff'] * 100:+.2f} %" if r["diff"] is not None else "—"
        approx = " (approx.)" if r["approximate"] else ""
        out.append(f"| {r['figure']}{approx} | {r['column']} | {r['stat']} | {r['published']:.3f} | {sim} | {diff} |")
    return "\n".join(out) + "\n"
