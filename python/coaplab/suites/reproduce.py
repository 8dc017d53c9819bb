"""`coaplab reproduce`: the published experiments on this testbed, shipped as scenario files
(`coaplab/scenarios/*.toml`), run and shown side by side with the published figures
(`coaplab/data/published.toml`) wherever one exists."""

from __future__ import annotations

from importlib import resources
from typing import Any

from ..analyse.stats import PERCENTILE_KEYS, jain
from ..describe.scenario import load_scenario
from ..errors import CoaplabError
from ..execute.cluster import connect
from ..execute.runner import RunResult, run_scenario
from ..names import did_you_mean
from ..present.output import cell_lines, energy_lines, rows_csv, rows_json
from . import cell_calibration, nstart
from .calibration import (
    COCOA_GPRS_TARGETS,
    cocoa_table2_rows,
    cocoa_table2_text,
    load_reference,
    shares_text,
    tv_distance,
)
from .statements import statement_verdicts, statements_text
from .verdicts import (
    fct_rows,
    published_for,
    published_histograms_for,
    table2_rows,
    verdicts_markdown,
    verdicts_text,
)


def _scenario_dir():
    return resources.files("coaplab").joinpath("scenarios")


#: Targets that need more than one scenario file — UDP beside TCP (they cannot share a sweep:
#: their algorithms differ), or the NSTART study's networks: target name → (description,
#: scenario files run in order).
COMPARISONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "short-lived": (("Short-lived TCP vs UDP: 1-400 clients, continuous and random, 2500 B and unlimited buffer; "
                     "TCP with New Reno as the study ran it, and with CUBIC (coaplab's extension)"),
                    ("short-lived-udp", "short-lived-tcp", "short-lived-tcp-cubic")),
    "errors-10clients": ("10 clients under each error profile: UDP default/CoCoA vs TCP New Reno, continuous and random",
                         ("errors-10clients-udp", "errors-10clients-tcp")),
    "cell-study-400": (("The seeds' 400-client study on an NB-IoT and an LTE-M cell: UDP default / CoCoA / FASOR and TCP "
                        "New Reno / BBR, continuous and random (docs/validation.md \"Cells\")"),
                       ("cell-study-400-udp", "cell-study-400-tcp", "cell-study-400-ltem-udp", "cell-study-400-ltem-tcp")),
    "cell-firmware": (("The seeds' firmware transfer (102400 B) on an NB-IoT and an LTE-M cell: UDP Block2 default / "
                       "CoCoA / FASOR and TCP New Reno / BBR, 1 and 4 devices; NB2 over UDP (docs/validation.md \"Cells\")"),
                      ("cell-firmware-udp", "cell-firmware-tcp", "cell-firmware-nb2")),
    "nstart": (("The NSTART study: NSTART 1/2/4/8 x every built-in UDP algorithm on the star, GPRS, a Cooja mesh "
                "and an NB-IoT and an LTE-M cell (docs/validation.md \"NSTART\")"), nstart.PARTS),
}


def available() -> dict[str, str]:
    """Built-in experiment name → its one-line description (the file's first comment)."""
    out = {}
    for entry in sorted(_scenario_dir().iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            first = entry.read_text(encoding="utf-8").splitlines()[0]
            out[entry.name[: -len(".toml")]] = first.lstrip("# ").strip()
    for name, (description, _) in COMPARISONS.items():
        out[name] = description
    out[cell_calibration.TARGET] = cell_calibration.DESCRIPTION
    return dict(sorted(out.items()))


def load(name: str):
    names = available()
    if name not in names:
        raise CoaplabError(f"reproduce: unknown experiment {name!r}{did_you_mean(name, names, quote=False)};"
                           f" available: {', '.join(names)} (see --list)")
    with resources.as_file(_scenario_dir().joinpath(f"{name}.toml")) as path:
        return load_scenario(path)


def mesh_lines(s: dict[str, Any]) -> list[str]:
    """Multi-hop radio networks (docs/networks.md): offered and carried load, the MAC's
    losses, and the exchange times by hop distance; nothing for other networks."""
    m = s.get("mesh")
    if not m:
        return []
    out = [(f"  offered {m['offered_kbps']:.2f} kbit/s, carried {m['carried_kbps']:.2f} kbit/s;"
           f" app drops {m['app_drops']}, MAC queue drops {m['mac_queue_drops']},"
           f" collisions {m['collisions']}, link-layer retransmissions {m['retransmissions']},"
           f" CSMA failures {m['channel_access_failures']}")]
    if "node_drops" in m:  # the Contiki profile (network.mac = "contiki"): drops by cause
        out.append(f"    Contiki MAC: queue drops {m.get('neighbor_queue_drops', 0)} no neighbour queue +"
                   f" {m.get('buffer_drops', 0)} no buffer; retry limit {m['retry_failures']};"
                   f" collision drops {m.get('collision_drops', 0)}; reassembly drops {m.get('reassembly_drops', 0)};"
                   f" busy-channel retries {m.get('tx_collisions', 0)}")
    for h, b in m["by_hops"].items():
        ex = b.get("mean_exchange_s") or {}
        if ex.get("p50") is not None:
            out.append(f"    {h} hops: {b['clients']} clients, exchange time (client means) p50 {ex['p50']:.3f} s,"
                       f" max {ex['max']:.3f} s; {b['exchanges_completed']} completed, {b['exchanges_failed']} failed")
    return out


def study_metric_lines(s: dict[str, Any]) -> list[str]:
    """The CoCoA study's metrics of a UDP configuration (docs/model.md): what a target without
    a published figure prints beside its FCTs; nothing for TCP."""
    if s.get("retransmission_ratio") is None:
        return []

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v * 1000:.0f} ms"

    line = (f"  throughput {s['throughput_exchanges_per_s']:.2f} exch/s, retransmission ratio"
            f" {s['retransmission_ratio']:.3f}, mean RTT {ms(s.get('mean_rtt_s'))} (weak {ms(s.get('mean_rtt_weak_s'))}),"
            f" mean initial RTO {ms(s.get('mean_initial_rto_s'))}, Jain {s['jain_fairness']:.3f}")
    if s.get("settling_time_s") is not None:
        settled = s.get("settled_replications")
        line += f", settling {s['settling_time_s']:.1f} s"
        if settled is not None and settled < s["replications"]:
            line += f" ({s['replications'] - settled} of {s['replications']} replications not settled by the cap)"
    return [line]


def outside_client_lines(s: dict[str, Any], runs: list[dict[str, Any]]) -> list[str]:
    """Meshes whose clients run outside, one per sink (FlockLab as the CoCoA study wired it,
    docs/reproduce.md): exchanges and retransmissions, per-client completed exchanges and
    Jain's fairness index over them (mean over replications), and for burst workloads the
    settling time and the burst clients' own fairness. Nothing for other networks."""
    net = s["config"].get("network") or {}
    if not net.get("outside_clients_per_sink") or not runs:
        return []
    hist = s["retransmission_histogram"]
    exchanges = sum(hist)
    rexmits = sum(k * n for k, n in enumerate(hist))
    per_client = sorted(c["exchanges_completed"] for r in runs for c in r["clients"])
    median = per_client[len(per_client) // 2] if per_client else 0
    jain_s = "n/a" if s["jain_fairness"] is None else f"{s['jain_fairness']:.3f}"
    by_hops = "  ".join(
        f"{h}: {b['retransmissions'] / n:.2f}" for h, b in s["mesh"]["by_hops"].items()
        if (n := b["exchanges_completed"] + b["exchanges_failed"]))
    out = [(f"  exchanges {s['exchanges_completed']} completed, {s['exchanges_failed']} failed;"
           f" completed exchanges' CoAP retransmissions {rexmits} ({rexmits / exchanges if exchanges else 0:.3f} each);"
           f" unnecessary retransmissions {s['unnecessary_retransmissions_total']}, timeouts {s['timeouts_total']}"),
           f"  CoAP retransmissions per exchange (completed or failed) by hops: {by_hops}",
           (f"  completed per client (all replications): min {per_client[0] if per_client else 0},"
           f" median {median}, max {per_client[-1] if per_client else 0}; Jain {jain_s}")]
    w = s["config"]["workload"]
    if w["kind"] == "burst":
        first = w["background"]
        burst = [[c["exchanges_completed"] for c in r["clients"] if c["client"] >= first] for r in runs]
        jains = [j for b in burst if (j := jain(b)) is not None]
        done = sum(sum(b) for b in burst)
        total = len(runs) * w["burst_clients"] * w["burst_exchanges"]
        settle = s.get("settling_time_s")
        settle_s = "never (80 % not reached)" if settle is None else f"{settle:.3f} s"
        out.append(f"  burst: settling time {settle_s}; {done} of {total} burst exchanges completed;"
                   f" Jain over burst clients {sum(jains) / len(jains):.3f}" if jains else "  burst: no burst clients")
    return out


def side_by_side(result: RunResult, figures: list[dict[str, Any]]) -> str:
    """A table per configuration: published vs. simulated FCT with the relative difference,
    or the simulated percentiles where nothing was published."""
    lines = []
    for s in result.summaries:
        swept = ", ".join(f"{k}={v}" for k, v in s.get("swept", {}).items())
        lines.append(f"{s['name']}  {swept}")
        lines.extend(mesh_lines(s))
        lines.extend(cell_lines(s.get("cell")))
        lines.extend(energy_lines(s.get("energy"), "  "))
        lines.extend(outside_client_lines(s, result.runs.get(s["config_id"], [])))
        matches = published_for(s["config"], figures)
        histograms = published_histograms_for(s["config"], figures)
        if not matches and not histograms:
            lines.append("  no published figure; simulated FCT s: " + "  ".join(
                f"{k} {s['fct_s'][k]:.3f}" for k in PERCENTILE_KEYS if s["fct_s"][k] is not None))
            lines.extend(study_metric_lines(s))
        for fig_id, column, stats in matches:
            lines.append(f"  {fig_id} [{column}]")
            lines.append(f"    {'stat':<5} {'published':>10} {'simulated':>10} {'diff':>8}")
            for k, pub in stats.items():
                sim = s["fct_s"][k]
                lines.append(f"    {k:<5} {pub:>10.3f} {sim:>10.3f} {(sim / pub - 1) * 100:>+7.2f}%")
        for fig_id, row, published in histograms:
            hist, bins = s["retransmission_histogram"], len(published)
            lines.append(f"  {fig_id} [{row}]: exchanges by retransmissions 0 … {bins - 2}, ≥ {bins - 1} (%)")
            lines.append(f"    published  {shares_text(published, bins)}")
            lines.append(f"    simulated  {shares_text(hist, bins)}")
            lines.append(f"    total-variation distance {tv_distance(published, hist):.3f}")
        lines.append("")
    return "\n".join(lines)


def rows(experiment: str, result: RunResult, figures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (configuration, published figure column or none, statistic): the experiment,
    the configuration (name, config_id, swept values), figure, column, statistic, published
    (None where nothing was published), simulated and the relative difference."""
    out = []
    for s in result.summaries:
        base = {"experiment": experiment, "name": s["name"], "config_id": s["config_id"], **s.get("swept", {})}
        matches = published_for(s["config"], figures)
        if not matches:
            for k in PERCENTILE_KEYS:
                out.append({**base, "figure": None, "column": None, "stat": k, "published": None,
                            "simulated": s["fct_s"][k], "diff": None})
        for fig_id, column, stats in matches:
            for k, pub in stats.items():
                sim = s["fct_s"][k]
                out.append({**base, "figure": fig_id, "column": column, "stat": k, "published": pub, "simulated": sim,
                            "diff": (sim / pub - 1.0) if sim is not None else None})
    return out


def reproduce(names: list[str], jobs: int | None = None, db: str | None = None, progress: bool = False,
              cluster: Any = None, fmt: str = "text", details: bool = False) -> str:
    """Runs the named experiments and gives the verdicts first: for each, the published figures
    it matches (published, simulated with a 95 % interval, difference, tolerance, verdict, unit:
    :mod:`coaplab.suites.verdicts`) and the studies' statements it checks
    (:mod:`coaplab.suites.statements`). ``fmt`` text, json (JSON Lines), csv or markdown;
    ``details`` adds the per-configuration blocks (text) or the simulated percentiles of every
    configuration (json, csv: :func:`rows`; markdown holds only the verdicts)."""
    if isinstance(cluster, str):  # one cluster for every experiment, started once
        client, close = connect(cluster)
        try:
            return reproduce(names, jobs, db, progress, client, fmt, details)
        finally:
            close()
    figures = load_reference()
    out: list[str] = []
    verdict_rows: list[dict[str, Any]] = []
    statement_rows: list[dict[str, Any]] = []
    detail_rows: list[dict[str, Any]] = []
    for name in names:
        if name == cell_calibration.TARGET:  # computed figures, no scenario file of its own
            verdicts = cell_calibration.cell_calibration_rows(jobs)
            verdict_rows += verdicts
            if fmt == "text":
                out += [f"== {name}: verdicts ==", verdicts_text(verdicts)]
            continue
        for part in COMPARISONS[name][1] if name in COMPARISONS else (name,):
            scenario = nstart.scenario(part) if part in nstart.PARTS else load(part)
            result = run_scenario(scenario, jobs=jobs, db=db, progress=progress, cluster=cluster)
            verdicts = fct_rows(part, result, figures) + cell_calibration.battery_rows(part, result.summaries)
            if part in COCOA_GPRS_TARGETS:  # the CoCoA study's Table II: mean RTT and initial RTO
                verdicts += table2_rows(part, result)
            statements = [{"experiment": part, **r} for r in statement_verdicts(part, result.summaries)]
            verdict_rows += verdicts
            statement_rows += statements
            if fmt == "text":
                out.append(f"== {part}: verdicts ==")
                if verdicts:
                    out.append(verdicts_text(verdicts))
                if statements:
                    out.append(statements_text(statements))
                if part in nstart.PARTS:
                    out.append(nstart.text(result.summaries, result.runs))
                elif not verdicts and not statements:
                    out.append("  no published figure or statement for this experiment\n")
                if details:
                    out.append(f"== {part}: details ==")
                    out.append(side_by_side(result, figures))
                    if part in COCOA_GPRS_TARGETS:
                        out.append(cocoa_table2_text(cocoa_table2_rows(result.summaries)))
            else:
                detail_rows += nstart.rows(result.summaries, result.runs) if part in nstart.PARTS else []
                if details:
                    detail_rows += [r for r in rows(part, result, figures) if r["figure"] is None]
    if fmt == "text":
        if not details:
            out.append("(--details prints every configuration's simulated figures)")
        return "\n".join(out) + "\n"
    if fmt == "markdown":
        return verdicts_markdown(verdict_rows, statement_rows)
    table = verdict_rows + [{k: v for k, v in r.items() if k != "claims"} for r in statement_rows] + detail_rows
    return {"json": rows_json, "csv": rows_csv}[fmt](table)
