"""The simulator benchmark (issue: performance): prints figures, asserts nothing.

Default: 400 random clients, infinite (1 410 000 B) buffer, `cocoa`, 20 replications, 2 jobs —
the literature's heaviest UDP configuration. `transport="tcp"`: the same over TCP with New Reno
(a connection per batch).
"""

from __future__ import annotations

import resource
import time

from .runner import run_scenario


def bench_scenario(clients: int, replications: int, transport: str = "udp") -> dict:
    coap = {"cc": "cocoa", "max_retransmit": 20} if transport == "udp" else {"transport": "tcp", "cc": "newreno"}
    return {
        "name": f"bench-{clients}-random-{coap['cc']}-infinite",
        "seed": 1,
        "replications": replications,
        "link": {"buffer_bytes": 1410000},
        "workload": {"kind": "random", "clients": clients, "exchanges": 50},
        "coap": coap,
    }


def bench(jobs: int = 2, replications: int = 20, clients: int = 400, transport: str = "udp") -> str:
    scenario = bench_scenario(clients, replications, transport)
    t0 = time.perf_counter()
    result = run_scenario(scenario, jobs=jobs, progress=False)
    wall = time.perf_counter() - t0
    s = result.summaries[0]
    runs = result.runs[s["config_id"]]
    events = sum(r["events"] for r in runs)
    sim = sum(r["sim_time_s"] for r in runs)
    cpu = s["wall_s"]  # sum of the runs' own wall times = busy core-seconds
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        f"scenario            {scenario['name']}: {replications} replications, {jobs} jobs",
        f"wall time           {wall:.2f} s",
        f"events              {events}",
        f"events / s          {events / wall / 1e6:.2f} M (all jobs), {events / cpu / 1e6:.2f} M per core",
        f"simulated s / wall s {sim / wall:.0f} (simulated {sim:.0f} s in total)",
        f"peak memory (RSS)   {peak_mb:.0f} MB",
        f"median FCT          {s['fct_s']['p50']:.1f} s",
    ]
    return "\n".join(lines) + "\n"
