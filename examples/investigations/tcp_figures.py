"""The TCP time-sequence graphs of docs/validation.md: a random client's connection start, and
the server's connection to a winner and to a loser among 100 continuous clients on the 2,500 B
buffer. Usage: python tcp_figures.py OUT_DIR (writes three SVGs, prints what they show)."""
import sys

import coaplab

out = sys.argv[1]
# A random client's first connection: client -> server direction, the first 2.6 s.
res = coaplab.run({"name": "tcp-random-start", "seed": 1, "replications": 1, "trace": True,
                   "workload": {"kind": "random", "clients": 1, "exchanges": 4},
                   "coap": {"transport": "tcp", "cc": "newreno"}}, db=None)
fig = res.plot_time_sequence(connection=0, direction="up")
fig.axes[0].set_xlim(0, 2.6)
fig.save(f"{out}/tcp-random-connection-start.svg")
# 100 continuous clients, 2500 B: the server's connection to a winner and to a loser.
res = coaplab.run({"name": "tcp-100-2500", "seed": 1, "replications": 1, "trace": True,
                   "link": {"buffer_bytes": 2500}, "workload": {"clients": 100, "exchanges": 50},
                   "coap": {"transport": "tcp", "cc": "newreno"}}, db=None)
cf = res.clients_frame().sort_values("fct_s")
ts = res.time_sequence_frame()
for name, row in (("winner", cf.iloc[len(cf) // 4]), ("loser", cf.iloc[-1])):
    conn = int(ts[ts.client == row.client].connection.iloc[0])
    res.plot_time_sequence(connection=conn, direction="down").save(f"{out}/tcp-100clients-2500-{name}.svg")
    print(name, "client", int(row.client), "connection", conn, "FCT", round(row.fct_s, 1),
          "RTOs", int(row.tcp_rto_expirations), "retransmitted", int(row.tcp_segments_retransmitted))
    d = ts[(ts.connection == conn) & (ts.direction == "down") & ts.event.isin(["send", "retransmit"]) & (ts.length > 0)]
    last = {}; waits = []
    for t, s in zip(d.time_s, d.seq):
        if s in last: waits.append(round(t - last[s], 2))
        last[s] = t
    print("  waits between copies of a segment (s):", waits)
