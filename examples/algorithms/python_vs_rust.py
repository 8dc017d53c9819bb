"""How much slower an algorithm written in Python is than the same one in Rust, in the simulator.

Runs a 400-client scenario (continuous workload, medium errors, 2500 B buffer, 50 exchanges per
client) with the Rust `cocoa` and with `examples/algorithms/cocoa_py.py:CocoaPy`, checks that
the summaries are identical and prints the wall-clock times (best of --repeat) and their ratio:

    .venv/bin/python examples/algorithms/python_vs_rust.py [--jobs 1] [--replications 4] [--repeat 3]
"""

import argparse
import time
from pathlib import Path

import coaplab

HERE = Path(__file__).resolve().parent


def scenario(cc: str, replications: int) -> dict:
    return {"name": "python-vs-rust-400", "seed": 1, "replications": replications,
            "link": {"buffer_bytes": 2500, "errors": "medium"},
            "workload": {"kind": "continuous", "clients": 400, "exchanges": 50},
            "coap": {"cc": cc, "max_retransmit": 20}}


def timed(cc: str, jobs: int, replications: int, repeat: int) -> tuple[float, dict]:
    best, summary = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        [summary] = coaplab.run(scenario(cc, replications), jobs=jobs).summaries
        best = min(best, time.perf_counter() - t0)
    return best, {k: v for k, v in summary.items() if k not in ("config", "config_id", "swept", "wall_s")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--replications", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rust_s, rust = timed("cocoa", a.jobs, a.replications, a.repeat)
    py_s, py = timed(f"python:{HERE / 'cocoa_py.py'}:CocoaPy", a.jobs, a.replications, a.repeat)
    runs = a.replications
    print(f"400 clients x 50 exchanges, {runs} replications, jobs={a.jobs}, {rust['events'] / runs:.0f} events per run")
    print(f"rust cocoa      {rust_s:.3f} s ({rust_s / runs * 1000:.1f} ms per run)")
    print(f"python CocoaPy  {py_s:.3f} s ({py_s / runs * 1000:.1f} ms per run)")
    print(f"slowdown x{py_s / rust_s:.1f}; summaries identical: {py == rust}")


if __name__ == "__main__":
    main()
