"""`coaplab reproduce`: the published experiments on this testbed, shipped as scenario files
(`coaplab/scenarios/*.toml`), run and shown side by side with the published figures
(`coaplab/data/published.toml`) wherever one exists."""

from __future__ import annotations

from importlib import resources
from typing import Any

from .calibration import load_reference
from .errors import CoaplabError
from .runner import Result, run_scenario
from .scenario import load_scenario
from .stats import PERCENTILE_KEYS


def _scenario_dir():
    return resources.files("coaplab").joinpath("scenarios")


def available() -> dict[str, str]:
    """Built-in experiment name → its one-line description (the file's first comment)."""
    out = {}
    for entry in sorted(_scenario_dir().iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            first = entry.read_text(encoding="utf-8").splitlines()[0]
            out[entry.name[: -len(".toml")]] = first.lstrip("# ").strip()
    return out


def load(name: str):
    names = available()
    if name not in names:
        raise CoaplabError(f"reproduce: unknown experiment {name!r}; available: {', '.join(names)} (see --list)")
    with resources.as_file(_scenario_dir().joinpath(f"{name}.toml")) as path:
        return load_scenario(path)


def mesh_lines(s: dict[str, Any]) -> list[str]:
    """Multi-hop radio networks (docs/networks.md): offered and carried load, the MAC's
    losses, and the exchange times by hop distance; nothing for other networks."""
    m = s.get("mesh")
    if not m:
        return []
    out = [f"  offered {m['offered_kbps']:.2f} kbit/s, carried {m['carried_kbps']:.2f} kbit/s;"
           f" app drops {m['app_drops']}, MAC queue drops {m['mac_queue_drops']},"
           f" collisions {m['collisions']}, link-layer retransmissions {m['retransmissions']},"
           f" CSMA failures {m['channel_access_failures']}"]
    for h, b in m["by_hops"].items():
        ex = b.get("mean_exchange_s") or {}
        if ex.get("p50") is not None:
            out.append(f"    {h} hops: {b['clients']} clients, exchange time (client means) p50 {ex['p50']:.3f} s,"
                       f" max {ex['max']:.3f} s; {b['exchanges_completed']} completed, {b['exchanges_failed']} failed")
    return out


def published_for(config: dict[str, Any], figures: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, float]]]:
    """The published FCT figures whose scenario matches `config`: (figure id, column, stats)."""
    w, link, coap = config["workload"], config["link"], config["coap"]
    out = []
    for fig in figures:
        sc = fig["scenario"]
        if sc["workload"] != w["kind"] or sc["clients"] != w["clients"] or sc.get("errors", "none") != link["errors"]:
            continue
        if "exchanges" in sc and sc["exchanges"] != w["exchanges"]:
            continue
        for column, stats in fig["fct_s"].items():
            if column == coap["cc"] and sc.get("buffer_bytes") == link["buffer_bytes"] and sc.get("transport") == coap["transport"]:
                out.append((fig["id"], column, stats))
            elif column == f"{coap['transport']}/{coap['cc']}@{link['buffer_bytes']}":
                out.append((fig["id"], column, stats))
    return out


def side_by_side(result: Result, figures: list[dict[str, Any]]) -> str:
    """A table per configuration: published vs. simulated FCT with the relative difference,
    or the simulated percentiles where nothing was published."""
    lines = []
    for s in result.summaries:
        swept = ", ".join(f"{k}={v}" for k, v in s.get("swept", {}).items())
        lines.append(f"{s['name']}  {swept}")
        lines.extend(mesh_lines(s))
        matches = published_for(s["config"], figures)
        if not matches:
            lines.append("  no published figure; simulated FCT s: " + "  ".join(
                f"{k} {s['fct_s'][k]:.3f}" for k in PERCENTILE_KEYS if s["fct_s"][k] is not None))
        for fig_id, column, stats in matches:
            lines.append(f"  {fig_id} [{column}]")
            lines.append(f"    {'stat':<5} {'published':>10} {'simulated':>10} {'diff':>8}")
            for k, pub in stats.items():
                sim = s["fct_s"][k]
                lines.append(f"    {k:<5} {pub:>10.3f} {sim:>10.3f} {(sim / pub - 1) * 100:>+7.2f}%")
        lines.append("")
    return "\n".join(lines)


def reproduce(names: list[str], jobs: int | None = None, db: str | None = None, progress: bool = False,
              cluster: str | None = None) -> str:
    figures = load_reference()
    out = []
    for name in names:
        scenario = load(name)
        result = run_scenario(scenario, jobs=jobs, db=db, progress=progress, cluster=cluster)
        out.append(side_by_side(result, figures))
    return "\n".join(out)
