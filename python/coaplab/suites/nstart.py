"""The NSTART study (docs/validation.md "NSTART"): which NSTART is congestion safe for each
algorithm on each network. `coaplab reproduce nstart` runs the `nstart-*` scenario files with
every built-in UDP algorithm and prints, per network configuration, each algorithm's goodput
at NSTART 2, 4 and 8 against its own at NSTART 1 and the NSTART from which it collapses.

Collapse is RFC 2914 §3.1's congestion collapse: more offered load, less useful work — the
network busy with packets that are dropped or unnecessary. Raising NSTART only raises the load
a client offers, so an algorithm is *unsafe from* the smallest NSTART whose goodput falls more
than :data:`COLLAPSE_MARGIN` below its goodput at NSTART 1 with 95 % confidence (the bootstrap
interval of the ratio of the replications' mean goodputs lies below 1 − the margin). Goodput is the delivered useful
work: exchanges completed per second (`throughput_exchanges_per_s`) on the star, GPRS and the
NB-IoT and LTE-M cells; on a mesh, whose periodic clients offer a fixed load, the distinct
requests carried (`mesh.carried_kbps`). On a cell the table adds the uplink packets per
completed exchange (1 + the copies): a cell carries a roughly fixed packet rate, and the
copies' share of it is the goodput lost."""

from __future__ import annotations

import tomllib
from collections import defaultdict
from importlib import resources
from typing import Any

from ..analyse.intervals import ratio_of_means_interval
from ..describe.scenario import UDP_ALGORITHMS, Scenario, load_scenario

#: The study's scenario files (python/coaplab/scenarios/), in the order they run.
PARTS = ("nstart-star", "nstart-gprs", "nstart-cooja", "nstart-nbiot", "nstart-ltem")
#: The NSTART values the files sweep.
NSTARTS = (1, 2, 4, 8)
#: A fall in goodput below NSTART 1's that counts as collapse: 5 %, so that a difference the
#: replications barely resolve is not called a collapse.
COLLAPSE_MARGIN = 0.05


def scenario(part: str) -> Scenario:
    """The study's scenario file ``part`` with every built-in UDP algorithm swept as
    `coap.cc` (learned from the engine, so a new algorithm joins the study)."""
    raw = tomllib.loads(resources.files("coaplab").joinpath("scenarios", f"{part}.toml").read_text(encoding="utf-8"))
    sweep = dict(raw.pop("sweep", {}))
    raw["sweep"] = {"coap.cc": list(UDP_ALGORITHMS), **sweep}
    return load_scenario(raw)


def goodput(s: dict[str, Any]) -> float:
    """A summary's or a run's goodput (see the module's documentation)."""
    mesh = s.get("mesh")
    return mesh["carried_kbps"] if mesh else s["throughput_exchanges_per_s"]


def rows(summaries: list[dict[str, Any]], runs: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per (network configuration, algorithm): goodput at NSTART 1, at each NSTART the
    ratio to it with its 95 % interval (``runs``: each configuration's replications) and the
    unnecessary retransmissions per completed exchange (on a cell also the uplink packets per
    completed exchange), and ``unsafe_from`` (the smallest NSTART that collapses; None: none)."""
    groups: dict[tuple, dict[int, dict[str, Any]]] = defaultdict(dict)
    for s in summaries:
        swept = dict(s.get("swept", {}))
        rest = tuple(sorted((k, v) for k, v in swept.items() if k not in ("coap.nstart", "coap.cc")))
        groups[(s["name"], rest, s["config"]["coap"]["cc"])][s["config"]["coap"]["nstart"]] = s
    out = []
    for (name, rest, cc), by_n in groups.items():
        if 1 not in by_n:
            continue
        base = goodput(by_n[1])
        base_reps = [goodput(r) for r in runs.get(by_n[1]["config_id"], [])]
        row: dict[str, Any] = {"experiment": name, **dict(rest), "coap.cc": cc, "goodput_nstart_1": base}
        unsafe = None
        for n in sorted(by_n):
            g = goodput(by_n[n])
            interval = ratio_of_means_interval([goodput(r) for r in runs.get(by_n[n]["config_id"], [])], base_reps)
            done = by_n[n]["exchanges_completed"]
            row[f"relative_{n}"] = g / base if base > 0 else None
            row[f"relative_{n}_ci"] = interval
            row[f"unnecessary_per_exchange_{n}"] = (by_n[n]["unnecessary_retransmissions_total"] / done
                                                    if done else None)
            if by_n[n].get("cell"):  # a cell carries a packet rate: the copies' share of it (docs/validation.md)
                row[f"uplink_per_exchange_{n}"] = by_n[n]["cell"]["uplink_packets"] / done if done else None
            high = interval[1] if interval else row[f"relative_{n}"]
            if unsafe is None and n > 1 and high is not None and high < 1 - COLLAPSE_MARGIN:
                unsafe = n
        row["unsafe_from"] = unsafe
        out.append(row)
    return out


def text(summaries: list[dict[str, Any]], runs: dict[str, list[dict[str, Any]]]) -> str:
    """The study's table for one scenario file's summaries and runs."""
    table = rows(summaries, runs)
    lines = [(f"  goodput at NSTART n / at NSTART 1 [95 % interval]; unsafe from: the first NSTART whose interval"
              f" lies below {1 - COLLAPSE_MARGIN:.2f}; unnecessary retransmissions per exchange at NSTART 1 → 8")]
    by_config: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in table:
        key = tuple((k, v) for k, v in r.items() if "." in k and k != "coap.cc")
        by_config[key].append(r)

    def rel(r: dict[str, Any], n: int) -> str:
        v, ci = r.get(f"relative_{n}"), r.get(f"relative_{n}_ci")
        return "-" if v is None else f"{v:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{v:.2f}"

    for key, rs in by_config.items():
        unit = "kbit/s carried" if rs[0]["experiment"].endswith("cooja") else "exch/s"
        lines.append("  " + (", ".join(f"{k}={v}" for k, v in key) or "one configuration") + f"  (goodput: {unit})")
        lines.append(f"    {'algorithm':<27} {'NSTART 1':>8}  " + "  ".join(f"{f'NSTART {n}':<17}" for n in NSTARTS[1:])
                     + f"  {'unsafe from':>11}  unnecessary/exch")
        cell = any("uplink_per_exchange_1" in r for r in rs)
        if cell:
            lines[-1] += "  uplink packets/exch"
        for r in rs:
            unn = _one_to_eight(r, "unnecessary_per_exchange")
            lines.append(f"    {r['coap.cc']:<27} {r['goodput_nstart_1']:>8.3f}  "
                         + "  ".join(f"{rel(r, n):<17}" for n in NSTARTS[1:])
                         + f"  {r['unsafe_from'] or 'none':>11}  "
                         + (f"{unn:<16}  {_one_to_eight(r, 'uplink_per_exchange')}" if cell else unn))
    return "\n".join(lines) + "\n"


def _one_to_eight(r: dict[str, Any], key: str) -> str:
    """A row's per-exchange figure ``key`` at NSTART 1 → 8 ("-" where there is none)."""
    return " → ".join("-" if r.get(f"{key}_{n}") is None else f"{r[f'{key}_{n}']:.2f}" for n in (1, 8))
