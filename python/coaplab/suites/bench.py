"""The simulator benchmark (issue: performance): prints figures, asserts nothing.

Default: 400 random clients, infinite (1 410 000 B) buffer, `cocoa`, 20 replications, 2 jobs —
the literature's heaviest UDP configuration. `transport="tcp"`: the same over TCP with New Reno
(a connection per batch).
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from ..describe.scenario import Scenario, load_scenario
from ..errors import CoaplabError
from ..execute.runner import run_scenario

SUITE_CLIENTS = (1, 10, 100, 400, 1000, 4000, 10000)


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


def bench(jobs: int = 2, replications: int = 20, clients: int = 400, transport: str = "udp",
          scenario: Scenario | None = None) -> str:
    """The benchmark's figures for the default configuration, or for ``scenario`` (a loaded
    scenario of one configuration, e.g. the massive cell of docs/performance.md)."""
    if scenario is None:
        scenario = load_scenario(bench_scenario(clients, replications, transport))
    if scenario.count != 1:
        raise CoaplabError(f"bench: the scenario sweeps {scenario.count} configurations; bench one (drop its [sweep])")
    replications = scenario.raw.get("replications", 1)
    t0, c0 = time.perf_counter(), time.process_time()
    result = run_scenario(scenario, jobs=jobs, progress=False)
    wall, cpu_s = time.perf_counter() - t0, time.process_time() - c0
    s = result.summaries[0]
    runs = result.runs[s["config_id"]]
    events = sum(r["events"] for r in runs)
    sim = sum(r["sim_time_s"] for r in runs)
    cpu = s["wall_s"]  # sum of the runs' own wall times = busy core-seconds
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        f"scenario            {scenario.name}: {replications} replications, {jobs} jobs",
        f"wall time           {wall:.2f} s",
        f"events              {events}",
        f"events / s          {events / wall / 1e6:.2f} M (all jobs), {events / cpu / 1e6:.2f} M per core",
        f"events / CPU-second {events / cpu_s / 1e6:.2f} M (process CPU time, every thread: {cpu_s:.2f} s)",
        f"simulated s / wall s {sim / wall:.0f} (simulated {sim:.0f} s in total)",
        f"peak memory (RSS)   {peak_mb:.0f} MB",
        "median FCT          " + ("-" if s["fct_s"]["p50"] is None else f"{s['fct_s']['p50']:.1f} s"),
    ]
    return "\n".join(lines) + "\n"


def suite_command(transports: Sequence[str] = ("udp", "tcp"), clients: Sequence[int] = SUITE_CLIENTS,
                  repetitions: int = 5, exchanges: int | None = None) -> list[str]:
    """The cargo command line of the suite (``crates/engine/examples/bench_suite.rs``)."""
    cmd = ["run", "--release", "-q", "-p", "coaplab-engine", "--example", "bench_suite", "--",
           "--transports", ",".join(transports), "--clients", ",".join(str(c) for c in clients),
           "--repetitions", str(repetitions)]
    if exchanges is not None:
        cmd += ["--exchanges", str(exchanges)]
    return cmd


def suite(transports: Sequence[str] = ("udp", "tcp"), clients: Sequence[int] = SUITE_CLIENTS,
          repetitions: int = 5, exchanges: int | None = None) -> str:
    """The scaling suite: per transport and client count, the simulator's CPU time per event
    against a bare binary-heap loop of the same queue length (the limit), peak RSS.

    It is a Rust example (CPU time of the running thread, interleaved repetitions, a child process
    per configuration); this builds it with cargo in release mode and returns its output.
    """
    root = Path(__file__).resolve().parents[3]
    if not (root / "crates" / "engine" / "examples" / "bench_suite.rs").is_file():
        raise CoaplabError("bench --suite needs the source checkout: crates/engine/examples/bench_suite.rs "
                           f"not found under {root}")
    cargo = shutil.which("cargo")
    if cargo is None:
        raise CoaplabError("bench --suite needs cargo (the Rust toolchain) on PATH to build "
                           "crates/engine/examples/bench_suite.rs")
    proc = subprocess.run([cargo, *suite_command(transports, clients, repetitions, exchanges)], cwd=root,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise CoaplabError(f"bench --suite: the benchmark did not run (cargo exit {proc.returncode}): {last}")
    return proc.stdout
