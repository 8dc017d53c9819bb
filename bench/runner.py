"""The runner's cost: a 72-configuration × 100-replication matrix of small runs (7,200 runs,
bench/runner-matrix.toml) under `--jobs N` and Dask `--cluster local:N`, interleaved. Prints
figures, asserts nothing (docs/performance.md, "The runner"; docs/cluster.md, "Scaling").

    .venv/bin/python bench/runner.py                                   # --jobs 1, 2; local:1, 2; 3 rounds
    .venv/bin/python bench/runner.py --modes "--jobs 2" "--cluster local:2" --rounds 5
    .venv/bin/python bench/runner.py --model local:2                   # per-task costs of the cluster
    .venv/bin/python bench/runner.py --modes "--cluster local:2" "PYTHONPATH=/tmp/old/python --cluster local:2"

A mode's leading NAME=VALUE words are environment variables of its command (the last example runs
another checkout's Python package, for a before/after).

Each run is `python -m coaplab.cli run SCENARIO --no-db --no-progress --format json MODE` in a
child process; its CPU is user + sys of the whole process tree: this script makes itself the
child subreaper (prctl PR_SET_CHILD_SUBREAPER, man 2 prctl), so that processes orphaned by
their parent (a Dask LocalCluster's fork server and its workers) are reaped here too, and
getrusage(RUSAGE_CHILDREN) counts every process the command started. The modes run in turn,
round after round (interleaved: the shared machine's load falls on all alike); min and median
per mode are printed, and every mode's JSON Lines (without `wall_s`, the runs' own wall time)
is compared with the first mode's.

`--model ADDRESS` measures what the cost model of docs/cluster.md needs, on that cluster: the
start-up and shut-down of the cluster (CPU of this process and its descendants), the pickled
size of a task of B runs and of its result, and the CPU per task of K tasks of one short run
each less the runs' own CPU (the per-task overhead of scheduler, worker and coordinator).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import pickle
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "bench" / "runner-matrix.toml"
#: prctl(2) option: orphaned descendants are re-parented to this process (linux/prctl.h).
PR_SET_CHILD_SUBREAPER = 36


def _subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _reap_all() -> None:
    """Waits for every descendant re-parented here (the subreaper's orphans)."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def timed_command(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str, str]:
    """(wall s, CPU s of the process tree, stdout, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env={**os.environ, **(env or {})})
    _reap_all()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return wall, cpu, proc.stdout, proc.stderr


def _normal(jsonl: str) -> list[str]:
    out = []
    for line in jsonl.splitlines():
        s = json.loads(line)
        s.pop("wall_s", None)
        out.append(json.dumps(s, sort_keys=True))
    return out


def compare(modes: list[str], rounds: int, scenario: Path) -> None:
    samples: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
    reference: list[str] | None = None
    for r in range(rounds):
        for m in modes:
            words = m.split()
            env = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
            argv = [sys.executable, "-m", "coaplab.cli", "run", str(scenario), "--no-db", "--no-progress",
                    "--format", "json", *(w for w in words if not ("=" in w and not w.startswith("-")))]
            wall, cpu, out, err = timed_command(argv, env)
            same = "first" if reference is None else ("identical" if _normal(out) == reference else "DIFFERENT")
            reference = reference if reference is not None else _normal(out)
            samples[m].append((wall, cpu))
            print(f"round {r + 1} {m:18} wall {wall:6.2f} s  CPU {cpu:6.2f} s  results {same}  "
                  f"stderr {len(err.splitlines())} lines", flush=True)
            if err.strip():
                print("  stderr: " + err.strip().splitlines()[0][:200], flush=True)
    print(f"\n| mode | wall s min / median | CPU s min / median |  (rounds: {rounds}, load average "
          f"{os.getloadavg()[0]:.1f})")
    print("|---|---:|---:|")
    for m in modes:
        w = [s[0] for s in samples[m]]
        c = [s[1] for s in samples[m]]
        print(f"| `{m}` | {min(w):.2f} / {statistics.median(w):.2f} | {min(c):.2f} / {statistics.median(c):.2f} |")


def _tree_cpu() -> float:
    return sum(_split_cpu())


def _split_cpu() -> tuple[float, float]:
    """(CPU s of this process — the coordinator, and a local cluster's scheduler —, CPU s of its
    descendants: a local cluster's workers)."""
    import psutil

    me = psutil.Process()
    own = sum(me.cpu_times()[:2])
    kids = sum(me.cpu_times()[2:4])  # reaped children
    for p in me.children(recursive=True):
        try:
            kids += sum(p.cpu_times()[:2])
        except psutil.NoSuchProcess:
            pass
    return own, kids


def model(address: str, tasks: int, batch: int, works: list[float]) -> None:
    from coaplab import _core
    from coaplab.execute import cluster as C
    from coaplab.execute.runner import _timed, engine_run

    text = json.dumps(_resolved({"name": "m", "seed": 1, "replications": 1, "workload": {"clients": 1, "exchanges": 1}}))
    c0 = _tree_cpu()
    t0 = time.perf_counter()
    client, close = C.connect(address)
    workers = sum(client.nthreads().values())
    c1, t1 = _tree_cpu(), time.perf_counter()
    print(f"start-up of {address}: {workers} worker threads, {t1 - t0:.2f} s wall, {c1 - c0:.2f} s CPU "
          "(this process and its descendants)")
    one = [("cid", 0, text, None)]
    many = [("cid", r, text, None) for r in range(batch)]
    result = [_timed(engine_run, t) for t in many]
    print(f"pickled task of 1 run: {len(pickle.dumps((C.run_batch, _timed, engine_run, one, None)))} B; of {batch} "
          f"runs of one configuration: {len(pickle.dumps((C.run_batch, _timed, engine_run, many, None)))} B; "
          f"result of 1 run: {len(pickle.dumps(result[:1]))} B, of {batch}: {len(pickle.dumps(result))} B")
    r0 = time.process_time()
    for _ in range(200):
        _core.run_one(text, 0, None)
    run_cpu = (time.process_time() - r0) / 200
    client.submit(C.run_batch, _timed, engine_run, one, None, pure=False).result()  # warm the workers
    i0, w0 = _split_cpu(), time.perf_counter()
    time.sleep(5.0)
    i1, w1 = _split_cpu(), time.perf_counter()
    print(f"idle: {(i1[0] - i0[0]) / (w1 - w0) * 1e3:.1f} ms CPU per s in this process (coordinator and a local "
          f"scheduler), {(i1[1] - i0[1]) / (w1 - w0) * 1e3:.1f} ms per s in the workers")
    c2, t2 = _split_cpu(), time.perf_counter()
    futures = [client.submit(C.run_batch, _timed, engine_run, one, None, pure=False) for _ in range(tasks)]
    for f in futures:
        f.result()
    c3, t3 = _split_cpu(), time.perf_counter()
    own, kids = (c3[0] - c2[0]) / tasks, (c3[1] - c2[1]) / tasks
    print(f"{tasks} tasks of one run: {t3 - t2:.2f} s wall; per task {(own + kids) * 1e3:.2f} ms CPU (this process "
          f"{own * 1e3:.2f}, the workers {kids * 1e3:.2f}), of which the run {run_cpu * 1e3:.3f} ms; "
          f"{(t3 - t2) / tasks * 1e3:.2f} ms wall per task")
    del futures
    c4, t4 = _tree_cpu(), time.perf_counter()
    close()
    print(f"shut-down: {time.perf_counter() - t4:.2f} s wall, {_tree_cpu() - c4:.2f} s CPU (the processes still "
          "alive when measured)")
    curve(works, t1 - t0, kids, own)


def curve(works: list[float], t_up: float, c_w: float, c_s: float) -> None:
    """T(n) = T_up + max((W + k·c_w) / n, k·c_s) + T_tail, k = W / TASK_TARGET_S + 2·n (one-run probes,
    2 per worker) + the guided tail's min(2·n·ln(TASK_TARGET_S / MIN_TASK_S) ≈ 6·n, W / MIN_TASK_S) tasks,
    T_tail = min(TASK_TARGET_S, W / (2·n)); T_up held at the measured start-up (workers start in
    parallel on their nodes)."""
    from coaplab.execute.cluster import MIN_TASK_S, TASK_TARGET_S

    print(f"\nmodel: T_up {t_up:.2f} s, c_w {c_w * 1e3:.2f} ms, c_s {c_s * 1e3:.2f} ms per task; the scheduler "
          f"saturates near n = {TASK_TARGET_S / c_s:.0f} workers with tasks of {TASK_TARGET_S:g} s")
    ns = [1, 2, 4, 8, 16, 32, 64]
    print("| W (runs' own time) | " + " | ".join(f"n = {n}" for n in ns) + " |")
    print("|---|" + "---:|" * len(ns))
    for w in works:
        cells = []
        for n in ns:
            k = w / TASK_TARGET_S + 2 * n + min(2 * n * math.log(TASK_TARGET_S / MIN_TASK_S), w / MIN_TASK_S)
            t = t_up + max((w + k * c_w) / n, k * c_s) + min(TASK_TARGET_S, w / (2 * n))
            cells.append(f"{t:,.1f} s (×{w / t:.1f})" if t < 100 else f"{t:,.0f} s (×{w / t:.1f})")
        print(f"| {w:g} s | " + " | ".join(cells) + " |")


def _resolved(scenario: dict) -> dict:
    from coaplab.describe.scenario import load_scenario

    return load_scenario(scenario).configurations()[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", nargs="+", default=["--jobs 1", "--jobs 2", "--cluster local:1", "--cluster local:2"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scenario", type=Path, default=SCENARIO)
    ap.add_argument("--model", metavar="ADDRESS", help="measure the per-task cost model on this cluster instead")
    ap.add_argument("--tasks", type=int, default=1000, help="--model: tasks of one run each (default 1000)")
    ap.add_argument("--batch", type=int, default=100, help="--model: runs in the batch whose size is shown")
    ap.add_argument("--work", type=float, nargs="+", default=[0.94, 60.0, 3600.0],
                    help="--model: the runs' own time W (s) of the studies to model (default: the matrix's 0.94 s, "
                         "a minute, an hour)")
    args = ap.parse_args(argv)
    if args.model:
        model(args.model, args.tasks, args.batch, args.work)
        return 0
    _subreaper()
    compare(args.modes, args.rounds, args.scenario)
    return 0


if __name__ == "__main__":
    sys.exit(main())
