"""Winners and losers among CoAP-over-TCP clients on the 2,500 B buffer (docs/validation.md,
"TCP vs UDP at 100–400 continuous clients").

For each client, from the per-connection time-sequence trace (`trace = true`): how long its
segments waited for retransmission (the time between two transmissions of the same sequence
number, summed) and how many of its segments needed five or more retransmissions. Clients above
the 72nd FCT percentile are the "losers" (≈ 28 % of the clients sit in the upper mode at 100
clients). Usage: python tcp_winners_losers.py [CLIENTS] [HZ] [REPLICATIONS]
"""
import collections
import sys

import pandas as pd

import coaplab

clients = int(sys.argv[1]) if len(sys.argv) > 1 else 100
hz = int(sys.argv[2]) if len(sys.argv) > 2 else 250
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 4
res = coaplab.run({"name": "winners-losers", "replications": reps, "link": {"buffer_bytes": 2500},
                   "trace": True, "workload": {"clients": clients, "exchanges": 50},
                   "coap": {"transport": "tcp", "cc": "newreno"}, "tcp": {"hz": hz}}, db=None)
ts, cf = res.time_sequence_frame(), res.clients_frame()
data = ts[ts.event.isin(["send", "retransmit"]) & (ts.length > 0)]
rows = []
for (rep, client), g in data.groupby(["replication", "client"]):
    row = {"replication": rep, "client": client}
    for direction in ("up", "down"):
        last, waits, copies = {}, [], collections.Counter()
        for t, seq in zip(g.time_s[g.direction == direction], g.seq[g.direction == direction]):
            if seq in last:
                waits.append(t - last[seq])
            last[seq] = t
            copies[seq] += 1
        row[f"wait_{direction}_s"] = sum(waits)
        row[f"longest_wait_{direction}_s"] = max(waits, default=0.0)
        row[f"segments_5plus_retx_{direction}"] = sum(1 for n in copies.values() if n >= 6)
    rows.append(row)
per = pd.DataFrame(rows).merge(cf[["replication", "client", "fct_s", "tcp_rto_expirations"]],
                               on=["replication", "client"])
per["group"] = (per.fct_s > per.fct_s.quantile(0.72)).map({False: "winners", True: "losers"})
cols = ["fct_s", "tcp_rto_expirations", "wait_down_s", "longest_wait_down_s", "segments_5plus_retx_down",
        "wait_up_s"]
pd.set_option("display.width", 200)
print(f"{clients} clients, hz {hz}, {reps} replications: per-client means")
print(per.groupby("group")[cols].mean().round(2).to_string())
rank = lambda a, b: a.rank().corr(b.rank())
print(f"rank correlation of FCT with: downlink retransmission wait {rank(per.fct_s, per.wait_down_s):.3f}, "
      f"RTO expirations {rank(per.fct_s, per.tcp_rto_expirations):.3f}")
