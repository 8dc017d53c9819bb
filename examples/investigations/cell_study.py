"""The seeds' star studies on NB-IoT and LTE-M cells (docs/validation.md "Cells: which of the
seeds' conclusions hold"): runs the shipped scenarios of ``coaplab reproduce cell-study-400`` and
``cell-firmware`` and prints the tables of that section (markdown), one row per configuration.
Usage: python examples/investigations/cell_study.py [--jobs N] [--db PATH]
(≈ 1–3 min with --jobs 2; --db stores the runs, so a second call only prints)."""

import argparse
from importlib import resources

import coaplab

ap = argparse.ArgumentParser()
ap.add_argument("--jobs", type=int, default=2)
ap.add_argument("--db", default=None)
args = ap.parse_args()


def run(name):
    path = resources.files("coaplab").joinpath("scenarios", f"{name}.toml")
    with resources.as_file(path) as p:
        return coaplab.run(p, jobs=args.jobs, db=args.db)


def cell(s, per=1.0):
    """RA attempts / collisions, HARQ retransmissions, energy per exchange (× ``per`` exchanges),
    time per state of a device."""
    c, e = s["cell"], s["energy"]
    st = e["state_time_s"]
    ra = f"{c['ra_attempts']:,} / {c['ra_collisions']:,}"
    states = " / ".join(f"{st[k]:.1f}" for k in ("tx", "rx", "connected_idle", "idle_drx"))
    return f"{ra} | {c['harq_retransmissions']:,} | {e['j_per_exchange'] * per:.3f} | {states}"


def swept(s, *keys):
    return " | ".join(str(s["swept"].get(k, "")) for k in keys)


print("### 400 clients (UDP: retransmission ratio, unnecessary per client; TCP: RTO expirations, unnecessary "
      "per client)\n")
print("| cell | workload | algorithm | FCT p50 / p95 (s) | failed | throughput (exch/s) | retransmission ratio or "
      "RTOs per client | unnecessary per client | RA attempts / collisions | HARQ retx | J per exchange | "
      "tx / rx / connected idle / idle DRX per device (s) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in ("cell-study-400-udp", "cell-study-400-tcp", "cell-study-400-ltem-udp", "cell-study-400-ltem-tcp"):
    res = run(name)
    for s in res.summaries:
        kind = s["config"]["network"]["kind"]
        n = s["config"]["workload"]["clients"] * s["replications"]
        ratio = (f"{s['retransmission_ratio']:.3f}" if s.get("retransmission_ratio") is not None
                 else f"{s['tcp']['rto_expirations'] / n:.1f} RTOs")
        unn = (s["tcp"]["unnecessary_retransmissions"] if s.get("tcp") else s["unnecessary_retransmissions_total"]) / n
        print(f"| {kind} | {swept(s, 'workload.kind', 'coap.cc')} | {s['fct_s']['p50']:.1f} / {s['fct_s']['p95']:.1f} | "
              f"{s['exchanges_failed']} | {s['throughput_exchanges_per_s']:.2f} | {ratio} | {unn:.1f} | {cell(s)} |")

print("\n### Firmware, 102 400 B (goodput = 819.2 kbit / FCT p50)\n")
print("| cell | transport | devices | algorithm | FCT p50 / p95 (s) | goodput (kbit/s) | retransmissions "
      "(unnecessary) | RA attempts / collisions | HARQ retx | J per transfer | "
      "tx / rx / connected idle / idle DRX per device (s) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for name in ("cell-firmware-udp", "cell-firmware-tcp", "cell-firmware-nb2"):
    res = run(name)
    for s in res.summaries:
        net = s["config"]["network"]
        kind = net["kind"] + (f" {net['category']}" if net.get("category") else "")
        transport = s["config"]["coap"]["transport"]
        transfers = s["config"]["workload"]["clients"] * s["replications"]  # one per device
        if s.get("tcp"):
            rexmit = f"{s['tcp']['segments_retransmitted']} ({s['tcp']['unnecessary_retransmissions']})"
        else:
            hist = s["retransmission_histogram"]
            rexmit = f"{sum(k * v for k, v in enumerate(hist))} ({s['unnecessary_retransmissions_total']})"
        print(f"| {kind} | {transport} | {swept(s, 'workload.clients', 'coap.cc')} | "
              f"{s['fct_s']['p50']:.1f} / {s['fct_s']['p95']:.1f} | {819.2 / s['fct_s']['p50']:.2f} | {rexmit} | "
              f"{cell(s, s['exchanges_completed'] / transfers)} |")

