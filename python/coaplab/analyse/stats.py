"""Pooled statistics over runs (docs/design.md §6): percentiles, Jain's index, per-configuration summary."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .lwm2m import summarize_lwm2m
from .observe import pool_observe
from .qblock import summarize_qblock
from .quantile import percentile
from .replstats import replication_stats

PERCENTILE_KEYS = ("min", "p10", "p25", "p50", "p75", "p90", "p95", "max")
PERCENTILE_LEVELS = {"min": 0.0, "p10": 0.10, "p25": 0.25, "p50": 0.50, "p75": 0.75, "p90": 0.90, "p95": 0.95, "max": 1.0}


def percentiles(values: Iterable[float]) -> dict[str, float | None]:
    """min, p10, p25, p50, p75, p90, p95, max of `values` (all None when empty)."""
    xs = sorted(values)
    if not xs:
        return {k: None for k in PERCENTILE_KEYS}
    return {k: percentile(xs, q) for k, q in PERCENTILE_LEVELS.items()}


def jain(values: Sequence[float]) -> float | None:
    """Jain's fairness index (Σx)² / (n·Σx²); None for no values; 1.0 when all are zero
    (every client got the same — nothing)."""
    n = len(values)
    if n == 0:
        return None
    sq = sum(x * x for x in values)
    if sq == 0:
        return 1.0
    return sum(values) ** 2 / (n * sq)


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def sum_tcp(runs: list[dict[str, Any]]) -> dict[str, int] | None:
    """TCP counters summed over replications; None for UDP runs."""
    if not any(r.get("tcp") for r in runs):
        return None
    out: dict[str, int] = {}
    for r in runs:
        for k, v in (r.get("tcp") or {}).items():
            out[k] = out.get(k, 0) + v
    return out


#: The CoCoA study's exchange metrics' raw sums and counts (docs/model.md "Metrics"), as each
#: UDP run and UDP group reports them.
EXCHANGE_SUMS = ("con_transmissions", "con_retransmissions", "rtt_strong_samples", "rtt_strong_sum_s",
                 "rtt_weak_samples", "rtt_weak_sum_s", "initial_rto_count", "initial_rto_sum_s")
#: The metrics derived from them: (summary key, numerator, denominator).
EXCHANGE_MEANS = (("retransmission_ratio", "con_retransmissions", "con_transmissions"),
                  ("mean_rtt_s", "rtt_strong_sum_s", "rtt_strong_samples"),
                  ("mean_rtt_weak_s", "rtt_weak_sum_s", "rtt_weak_samples"),
                  ("mean_initial_rto_s", "initial_rto_sum_s", "initial_rto_count"))


def exchange_metrics(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The CoCoA study's exchange metrics pooled over ``parts`` (per-replication results, or
    one client population's entry of each): the raw sums and counts added over every part that
    has them (UDP runs and groups), then each mean as Σ sums / Σ counts — the mean over all
    samples of all clients of all replications ("means over all exchanges of all clients",
    Betzler et al. 2016, Table II), never a mean of per-replication means. ``retransmission_ratio``
    is Σ retransmissions / Σ CON transmissions. Every value is None without a UDP part (TCP
    runs, stored runs from before these metrics) and each mean is None without a sample."""
    have = [p for p in parts if "con_transmissions" in p]
    sums = {k: sum(p[k] for p in have) for k in EXCHANGE_SUMS} if have else None
    out: dict[str, Any] = {k: (sums[num] / sums[den] if sums and sums[den] else None) for k, num, den in EXCHANGE_MEANS}
    out["exchange_sums"] = sums
    return out


def completed_per_client(clients: list[dict[str, Any]]) -> dict[str, Any]:
    """Completed exchanges per client over the client rows of all replications: percentiles,
    and the probability mass function as ``[[completed, clients], …]`` in ascending order of
    completed exchanges (the CoCoA study's Fig. 4 plots it)."""
    counts: dict[int, int] = {}
    for c in clients:
        counts[c["exchanges_completed"]] = counts.get(c["exchanges_completed"], 0) + 1
    return {"completed_per_client": percentiles(float(c["exchanges_completed"]) for c in clients),
            "completed_per_client_pmf": [[k, n] for k, n in sorted(counts.items())]}


def summarize(config: dict[str, Any], config_id: str, runs: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    """One configuration's summary (docs/design.md §7.2 JSON object) from its per-replication results."""
    clients = [c for r in runs for c in r["clients"]]
    hist: list[int] = []
    for r in runs:
        for k, n in enumerate(r["retransmission_histogram"]):
            if k >= len(hist):
                hist.extend([0] * (k + 1 - len(hist)))
            hist[k] += n
    packets: dict[str, float] = {}
    for r in runs:
        for key, v in r["packets"].items():
            packets[key] = packets.get(key, 0) + v
    # Ratios and means are averaged over replications, counts summed.
    for key in ("utilisation_uplink", "utilisation_downlink", "unnecessary_downlink_share", "mean_queue_delay_s"):
        if key in packets and runs:
            packets[key] /= len(runs)
    if runs:
        packets["max_queue_bytes"] = max(r["packets"]["max_queue_bytes"] for r in runs)
    settling = [r["settling_time_s"] for r in runs if r.get("settling_time_s") is not None]
    out = {
        "name": config["name"],
        "config_id": config_id,
        "config": config,
        "replications": len(runs),
        **client_metrics(clients),
        "retransmission_histogram": hist,
        "packets": packets,
        **exchange_metrics(runs),
        **completed_per_client(clients),
        "throughput_exchanges_per_s": _mean([r["throughput_exchanges_per_s"] for r in runs]),
        "jain_fairness": _mean([j for r in runs if (j := jain([c["exchanges_completed"] for c in r["clients"]])) is not None]),
        "settling_time_s": _mean(settling) if config["workload"]["kind"] == "burst" and settling else None,
        **_settled(runs),
        "tcp": sum_tcp(runs),
        "events": sum(r["events"] for r in runs),
        "sim_time_s": sum(r["sim_time_s"] for r in runs),
        "wall_s": wall_s,
        # Spread across replications and 95 % bootstrap intervals of the median and mean FCT.
        "fct_replications": replication_stats(runs),
        **summarize_lwm2m([r.get("lwm2m") for r in runs]),  # LwM2M devices only (docs/model.md)
    }
    if config.get("group"):
        out["groups"] = {g["name"]: summarize_group(g, i, runs) for i, g in enumerate(config["group"])}
    non = [r["non"] for r in runs if r.get("non")]
    if non:  # NON traffic only (docs/algorithms.md "NON traffic"): absent for CON-only runs
        sent, delivered = sum(n["sent"] for n in non), sum(n["delivered"] for n in non)
        out["non"] = {"sent": sent, "delivered": delivered, "delivery_ratio": delivered / sent if sent else None,
                      "rate_per_s": _mean([n["rate_per_s"] for n in non]), "rule_con": sum(n["rule_con"] for n in non)}
    observe = pool_observe([r.get("observe") for r in runs])
    if observe is not None:  # only workload.kind = "observe" (docs/model.md "Observe")
        out["observe"] = observe
    qblock = summarize_qblock(runs)
    if qblock is not None:  # only Q-Block transfers (docs/model.md "Q-Block")
        out["qblock"] = qblock
    mesh = summarize_mesh(runs)
    if mesh is not None:  # only runs on a multi-hop radio network (docs/networks.md)
        out["mesh"] = mesh
    energy = summarize_energy(runs)
    if energy is not None:  # only networks that record time per radio state (docs/energy.md)
        out["energy"] = energy
    cell = summarize_cell(runs)
    if cell is not None:  # only runs on an NB-IoT or LTE-M cell (docs/networks.md)
        out["cell"] = cell
    security = summarize_security(runs)
    if security is not None:  # only runs with coap.security (docs/model.md "Security")
        out["security"] = security
    return out


_SECURITY_COUNTERS = ("handshakes", "resumptions", "handshake_bytes", "flights_retransmitted", "failed_handshakes",
                      "requests_lost", "record_bytes", "requests_waited")


def summarize_security(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """coap.security's counters (None without security): summed over replications; the bytes per
    exchange and the wait for the first request averaged over them."""
    sec = [r["security"] for r in runs if r.get("security")]
    if not sec:
        return None
    out: dict[str, Any] = {k: sec[0][k] for k in ("mode", "suite", "connection_id") if k in sec[0]}
    out.update({k: sum(s[k] for s in sec) for k in _SECURITY_COUNTERS})
    out["bytes_per_exchange"] = _mean([s["bytes_per_exchange"] for s in sec])
    out["time_to_first_request_s"] = _mean([s["time_to_first_request_s"] for s in sec])
    waited = sum(s["requests_waited"] for s in sec)
    out["mean_handshake_wait_s"] = (sum(s["mean_handshake_wait_s"] * s["requests_waited"] for s in sec) / waited
                                    if waited else 0.0)
    return out


def summarize_cell(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The counters of runs on a cell (None for other networks): summed over replications; the
    devices per coverage level and their mean level averaged."""
    if not runs or not all(r.get("cell") for r in runs):
        return None
    out: dict[str, Any] = {}
    for r in runs:
        for k, v in r["cell"].items():
            if k in ("devices", "devices_per_level", "mean_coverage_level"):
                continue
            out[k] = out.get(k, 0) + v
    n = len(runs)
    out["devices"] = runs[0]["cell"]["devices"]
    out["devices_per_level"] = [sum(r["cell"]["devices_per_level"][i] for r in runs) / n for i in range(3)]
    out["mean_coverage_level"] = sum(r["cell"]["mean_coverage_level"] for r in runs) / n
    return out


def run_field(r: dict[str, Any], field: str) -> Any:
    """A run's metric field: a top-level key, or a dotted path into a nested one (``energy.mean_power_mw``)."""
    v: Any = r
    for part in field.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    return v


def summarize_energy(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The energy figures of runs whose network records each device's time per radio state
    (docs/energy.md; None for other networks): ``j_per_exchange`` = Σ energy / Σ completed
    exchanges over the replications, ``mean_power_mw`` and ``state_time_s`` (per state) averaged
    over replications, ``battery_life_years`` the battery over that mean power."""
    if not runs or not all(r.get("energy") for r in runs):
        return None
    es: list[dict[str, Any]] = [r["energy"] for r in runs]
    energy_j = sum(e["energy_j"] for e in es)
    completed = sum(e["exchanges_completed"] for e in es)
    power = sum(e["mean_power_mw"] for e in es) / len(es)
    # A battery lasts in inverse proportion to the power: the engine's life at one run's power,
    # scaled to the mean (so that the length of a year is the engine's, not a copy).
    first = es[0]
    life = (first["battery_life_years"] * first["mean_power_mw"] / power
            if power > 0 and first["battery_life_years"] is not None else None)
    return {
        "j_per_exchange": energy_j / completed if completed else None,
        "mean_power_mw": power,
        "state_time_s": {k: sum(e["state_time_s"][k] for e in es) / len(es) for k in first["state_time_s"]},
        "battery_life_years": life,
        "battery_wh": first["battery_wh"],
        "devices": first["devices"],
        "energy_j": energy_j,
    }


#: Mesh ratios averaged over replications; every other mesh counter is summed.
_MESH_MEANS = ("offered_kbps", "carried_kbps")


def summarize_mesh(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The mesh counters of runs on a multi-hop radio network (None for other networks):
    counters summed over replications, offered and carried load averaged, and FCT percentiles
    and completed exchanges by the number of radio hops between client and server."""
    if not runs or not all(r.get("mesh") for r in runs):
        return None
    out: dict[str, Any] = {}
    for r in runs:
        for k, v in r["mesh"].items():
            if k in ("client_hops", "client_mean_exchange_s", "nodes"):
                continue
            if k == "node_drops":  # Contiki profile: per node [queue overflow, retry limit, collision]
                prev = out.get(k) or [[0, 0, 0] for _ in v]
                out[k] = [[a + b for a, b in zip(p, q)] for p, q in zip(prev, v)]
                continue
            out[k] = out.get(k, 0) + v
    for k in _MESH_MEANS:
        out[k] /= len(runs)
    out["nodes"] = runs[0]["mesh"]["nodes"]
    by_hops: dict[int, list[dict[str, Any]]] = {}
    for r in runs:
        means = r["mesh"].get("client_mean_exchange_s") or [None] * len(r["clients"])
        for c, hops, mean in zip(r["clients"], r["mesh"]["client_hops"], means):
            by_hops.setdefault(hops, []).append({**c, "mean_exchange_s": mean})
    out["by_hops"] = {
        str(h): {
            "clients": len(cs) // len(runs),
            "fct_s": percentiles(c["fct_s"] for c in cs if c["fct_s"] is not None),
            # Periodic workloads: the clients' mean exchange times (first request → response).
            "mean_exchange_s": percentiles(c["mean_exchange_s"] for c in cs if c.get("mean_exchange_s") is not None),
            "exchanges_completed": sum(c["exchanges_completed"] for c in cs),
            "exchanges_failed": sum(c["exchanges_failed"] for c in cs),
            "retransmissions": sum(c["retransmissions"] for c in cs),
        }
        for h, cs in sorted(by_hops.items())
    }
    return out


def client_metrics(clients: list[dict[str, Any]]) -> dict[str, Any]:
    """The metrics pooled over client rows: FCT and unnecessary-retransmission percentiles,
    totals of unnecessary retransmissions, completed and failed exchanges, timeouts."""
    return {
        "fct_s": percentiles(c["fct_s"] for c in clients if c["fct_s"] is not None),
        "unnecessary_retransmissions_per_client": percentiles(float(c["unnecessary_retransmissions"]) for c in clients),
        "unnecessary_retransmissions_total": sum(c["unnecessary_retransmissions"] for c in clients),
        "exchanges_completed": sum(c["exchanges_completed"] for c in clients),
        "exchanges_failed": sum(c["exchanges_failed"] for c in clients),
        "timeouts_total": sum(c["timeouts"] for c in clients),
    }


def group_clients(run: dict[str, Any], index: int) -> list[dict[str, Any]]:
    """The client rows of population `index` in one run (its id range)."""
    g = run["groups"][index]
    lo, hi = g["first_client"], g["first_client"] + g["clients"]
    return [c for c in run["clients"] if lo <= c["client"] < hi]


def summarize_group(group: dict[str, Any], index: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One client population's summary: the per-client metrics of the configuration summary,
    over that population's clients only (docs/design.md "Client populations")."""
    per_run = [group_clients(r, index) for r in runs]
    clients = [c for cs in per_run for c in cs]
    hist: list[int] = []
    for r in runs:
        for k, n in enumerate(r["groups"][index]["retransmission_histogram"]):
            if k >= len(hist):
                hist.extend([0] * (k + 1 - len(hist)))
            hist[k] += n
    tcp = [r["groups"][index].get("tcp") for r in runs]
    settling = [s for r in runs if (s := r["groups"][index].get("settling_time_s")) is not None]
    return {
        "transport": group["coap"]["transport"],
        "cc": group["coap"]["cc"],
        "workload": group["workload"]["kind"],
        "clients": runs[0]["groups"][index]["clients"] if runs else 0,
        **client_metrics(clients),
        "retransmission_histogram": hist,
        **exchange_metrics([r["groups"][index] for r in runs]),
        **completed_per_client(clients),
        "throughput_exchanges_per_s": _mean([r["groups"][index]["throughput_exchanges_per_s"] for r in runs]),
        "jain_fairness": _mean([j for cs in per_run if (j := jain([c["exchanges_completed"] for c in cs])) is not None]),
        "settling_time_s": _mean(settling) if group["workload"]["kind"] == "burst" and settling else None,
        **_settled([r["groups"][index] for r in runs]),
        "tcp": sum_tcp([{"tcp": t} for t in tcp]),
        **({"observe": o} if (o := pool_observe([r["groups"][index].get("observe") for r in runs])) else {}),
        **summarize_lwm2m([r["groups"][index].get("lwm2m") for r in runs]),
    }


def _settled(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Burst workloads: in how many replications the burst settled (80 % of its exchanges
    completed, within ``workload.settling_cap_s`` when set); nothing for other workloads."""
    flags = [p["settled"] for p in parts if p.get("settled") is not None]
    return {"settled_replications": sum(flags)} if flags else {}
