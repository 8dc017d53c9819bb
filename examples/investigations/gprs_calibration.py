"""The CoCoA study's GPRS figures (Betzler et al. 2016, Table II) from timer traces.

Runs a GPRS scenario (by default the shipped `cocoa2016-gprs-continuous`) with `--trace`,
reads the per-replication trace CSVs (docs/experiments.md: columns client, time_s, event,
exchange, timer_s, rto_s, sample_s, sample_kind) and prints, per configuration, the study's
statistics next to its published figures (`coaplab/data/cocoa-2016.toml`):

- mean RTT: the mean of every strong RTT sample (`event = response`, `sample_kind = strong`)
  of every client of every replication (and the same for weak samples);
- mean initial RTO: the mean of the timer armed at each exchange's first transmission
  (`event = start`, `timer_s`) — what Table II calls the initial RTO;
- retransmission ratio: retransmissions / all CON transmissions = retransmit / (start + retransmit);
- throughput: responses per second of the run's duration (`workload.duration_s`), summed over
  the clients, averaged over replications;
- the RTT's sample-to-sample variation: each client's strong samples in time order, the ratio
  RTT_{k+1} / RTT_k of consecutive ones — its share above 1.5 (a jump that `basic-rto`'s RTO,
  the last RTT dithered ×[1, 1.5], cannot cover) and its 90th percentile — and the mean
  |RTT_{k+1} − RTT_k|;
- `--series FILE`: one client's RTT samples over time (client 0 of replication 0 of each
  configuration whose algorithm takes samples), one panel per configuration.

    .venv/bin/python examples/investigations/gprs_calibration.py [--clients 10,40] [--cc cocoa,default]
        [--replications 15] [--scenario PATH] [--set network.gprs_delay_ms=[100,300]] [--jobs 2]
        [--series rtt-series.png]

Without the database: each call runs what it asks for (about 10 s of CPU per 40-client run).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import sys
import tempfile
import tomllib
from importlib import resources
from pathlib import Path

from coaplab.execute.runner import run_scenario


def published() -> dict[str, dict[int, dict[str, float]]]:
    text = resources.files("coaplab").joinpath("data/cocoa-2016.toml").read_text(encoding="utf-8")
    fig = next(f for f in tomllib.loads(text)["figure"] if f["id"] == "cocoa-gprs-table2")
    return {cc: {int(k): v for k, v in rows.items()} for cc, rows in fig.items() if isinstance(rows, dict)
            and cc not in ("scenario",)}


def strong_series(path: Path) -> dict[str, list[tuple[float, float]]]:
    """Each client's strong RTT samples of one trace, (time s, RTT s), in time order."""
    out: dict[str, list[tuple[float, float]]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            if row["event"] == "response" and row["sample_s"] and row["sample_kind"] == "strong":
                out.setdefault(row["client"], []).append((float(row["time_s"]), float(row["sample_s"])))
    for xs in out.values():
        xs.sort()
    return out


def variation(paths: list[Path]) -> dict[str, float]:
    """Sample-to-sample variation of the strong RTT samples, per client, pooled."""
    ratios, deltas = [], []
    for p in paths:
        for xs in strong_series(p).values():
            for (_, a), (_, b) in itertools.pairwise(xs):
                ratios.append(b / a)
                deltas.append(abs(b - a))
    if not ratios:
        return {"ratio_above_1_5": float("nan"), "ratio_p90": float("nan"), "mean_abs_delta_s": float("nan")}
    ratios.sort()
    return {
        "ratio_above_1_5": sum(r > 1.5 for r in ratios) / len(ratios),
        "ratio_p90": ratios[int(0.9 * (len(ratios) - 1))],
        "mean_abs_delta_s": sum(deltas) / len(deltas),
    }


def plot_series(panels: list[tuple[str, list[tuple[float, float]]]], out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 1.8 * len(panels)), sharex=True, squeeze=False)
    for ax, (title, xs) in zip(axes[:, 0], panels):
        ax.plot([t for t, _ in xs], [1000 * r for _, r in xs], ".-", lw=0.6, ms=2)
        ax.set_title(title, fontsize=8)
        ax.set_ylabel("RTT, ms", fontsize=8)
    axes[-1, 0].set_xlabel("time, s")
    fig.tight_layout()
    fig.savefig(out)
    print(f"wrote {out}")


def trace_stats(paths: list[Path], duration_s: float) -> dict[str, float]:
    strong, weak, initial = [], [], []
    starts = retransmits = responses = 0
    for p in paths:
        with p.open(newline="") as f:
            for row in csv.DictReader(f):
                ev = row["event"]
                if ev == "start":
                    starts += 1
                    initial.append(float(row["timer_s"]))
                elif ev == "retransmit":
                    retransmits += 1
                elif ev == "response":
                    responses += 1
                    if row["sample_s"]:
                        (strong if row["sample_kind"] == "strong" else weak).append(float(row["sample_s"]))
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    return {
        **variation(paths),
        "mean_rtt_s": mean(strong),
        "mean_rtt_weak_s": mean(weak),
        "mean_initial_rto_s": mean(initial),
        "retransmission_ratio": retransmits / (starts + retransmits) if starts else float("nan"),
        "throughput_per_s": responses / duration_s / max(1, len(paths)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default=None, help="scenario file (default: cocoa2016-gprs-continuous)")
    ap.add_argument("--clients", default=None, help="comma-separated client counts (default: the scenario's)")
    ap.add_argument("--cc", default=None, help="comma-separated algorithms (default: the scenario's)")
    ap.add_argument("--replications", type=int, default=None)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="override a key, e.g. network.gprs_delay_ms=[100,300] (repeatable)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="one JSON object per configuration")
    ap.add_argument("--series", default=None, metavar="FILE",
                    help="plot client 0's RTT samples over time (replication 0) per configuration")
    a = ap.parse_args(argv)

    if a.scenario:
        raw = tomllib.loads(Path(a.scenario).read_text(encoding="utf-8"))
    else:
        raw = tomllib.loads(resources.files("coaplab").joinpath("scenarios/cocoa2016-gprs-continuous.toml")
                            .read_text(encoding="utf-8"))
    if a.replications:
        raw["replications"] = a.replications
    sweep = raw.setdefault("sweep", {})
    if a.clients:
        sweep["workload.clients"] = [int(x) for x in a.clients.split(",")]
    if a.cc:
        sweep["coap.cc"] = a.cc.split(",")
    for item in a.set:
        key, value = item.split("=", 1)
        section, name = key.split(".", 1)
        raw.setdefault(section, {})[name] = json.loads(value)

    pub = published()
    panels: list[tuple[str, list[tuple[float, float]]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        res = run_scenario(raw, jobs=a.jobs, trace_dir=tmp)
        for s in res.summaries:
            c = s["config"]
            cid = s["config_id"]
            files = sorted(Path(tmp).glob(f"*-{cid}-rep*-trace.csv"))
            w = c["workload"]
            st = trace_stats(files, w.get("duration_s") or 1.0)
            st.update(cc=c["coap"]["cc"], clients=w.get("clients"), replications=len(files),
                      throughput_summary=s.get("throughput_exchanges_per_s"))
            first = strong_series(files[0]).get("0", []) if files else []
            if a.series and first:
                panels.append((f"{st['cc']}, {st['clients']} clients: client 0, replication 0", first))
            ref = pub.get(st["cc"], {}).get(st["clients"] or -1, {})
            if a.json:
                print(json.dumps({**st, "published": ref}))
                continue
            line = (f"{st['cc']:>15} {st['clients']:>3} clients: RTT {1000 * st['mean_rtt_s']:6.0f} ms"
                    f" (weak {1000 * st['mean_rtt_weak_s']:6.0f}), initial RTO {1000 * st['mean_initial_rto_s']:6.0f} ms,"
                    f" retx ratio {st['retransmission_ratio']:.3f}, {st['throughput_per_s']:5.2f} exch/s,"
                    f" RTT k+1/k > 1.5: {st['ratio_above_1_5']:.3f}, p90 {st['ratio_p90']:.2f},"
                    f" mean |dRTT| {1000 * st['mean_abs_delta_s']:4.0f} ms")
            if ref:
                bits = []
                if "rtt_ms" in ref:
                    bits.append(f"RTT {ref['rtt_ms']} ({1000 * st['mean_rtt_s'] / ref['rtt_ms'] - 1:+.1%})")
                bits.append(f"RTO {ref['initial_rto_ms']} ({1000 * st['mean_initial_rto_s'] / ref['initial_rto_ms'] - 1:+.1%})")
                line += "  | study: " + ", ".join(bits)
            print(line, flush=True)
    if a.series and panels:
        plot_series(panels, a.series)
    return 0


if __name__ == "__main__":
    sys.exit(main())
