"""Runs the same scenarios in ns-3 (bench/ns3/coaplab_star.cc against Debian's libns3-dev 3.37)
and in coaplab, prints the CPU time of each and checks that they agree on FCT.

    .venv/bin/python bench/ns3/compare.py                      # every scenario, 3 repeats
    .venv/bin/python bench/ns3/compare.py --scenarios tcp-inf,udp-50 --replications 10
    .venv/bin/python bench/ns3/compare.py --build-dir /tmp/ns3build   # keep the binary

Not part of the test suite (it needs ns-3: `apt-get install libns3-dev`). docs/performance.md
("Against ns-3") shows a measured table and the modelling differences between the two.

CPU time: each side runs in a child process, `repeats` times, interleaved (ns-3, coaplab,
then coaplab, ns-3, ...). Start-up is reported apart from the simulation, so that the ratios
compare like with like:
  * "ns-3 sim": the CPU time the ns-3 child measured around the simulation itself (topology
    set-up + Simulator::Run, every replication); "ns-3 start-up": the rest of the child's CPU
    time (os.wait4): loading ns-3's shared libraries, static initialisation, tear-down.
  * "coaplab run": `coaplab.run` of the scenario with one job (validation, runs, summary
    statistics) once warm — the least of `--warm` calls after the first; "coaplab first
    call": the first call in the fresh process; "coaplab start-up": the child's CPU time from
    its start to the end of that first call, less a warm call (the interpreter, the imports,
    first use); "coaplab engine": the same replications once more as bare `_core.run_one`
    calls (no validation, scheduling or statistics).
  * the ratios divide ns-3 sim by coaplab run and by coaplab engine (medians).
Min and median over the repeats.

Agreement (pooled FCT over every client of every replication; percentiles by linear
interpolation, as coaplab's stats.py):
  * TCP, one client, no loss: the median must agree within 1 % (both transfers are the same
    deterministic sequence of 401 segments; only the path-delay draws differ).
  * UDP, N clients: the mean of the per-replication medians must agree within
    max(3 standard errors of the difference, 0.5 %): the two use different random draws
    (start offsets, timer dithering, path delays), so they can only agree statistically; the
    standard error is sqrt(s_a²/R_a + s_b²/R_b) from the replications' medians; if the two
    agree, 3 SE gives a false FAIL with probability ≈ 0.3 % for normal medians (≈ 0.8 % with
    10 replications a side: Student's t, 18 degrees of freedom); the 0.5 % floor accepts
    differences that small when the spread between replications is tiny (the 50-client
    medians spread by a few ms).
  * TCP with a finite buffer (drops at the bottleneck): reported, not checked: ns-3 resets the
    retransmission timer on the first partial ACK only (RFC 6582 §3.2, RFC 3782's "Impatient"), where
    coaplab (like Linux) restarts it on every ACK of new data, so the long one-hole-per-round-trip
    recoveries end by an RTO in ns-3 and not in coaplab (docs/performance.md). The diagnostic
    `tcp-28200-no-rto` runs ns-3 with a 1000-s minimum RTO, where coaplab has no RTO
    either, and is checked like the loss-free TCP cases.
Exit status: 0 all checks pass, 1 a check failed, 2 bad arguments or ns-3 missing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "coaplab_star.cc"
NS3_HEADER = "ns3/core-module.h"
NS3_LIBS = ["-lns3-applications", "-lns3-internet", "-lns3-traffic-control", "-lns3-network",
            "-lns3-core"]
INSTALL_HINT = ("ns-3 not found (no {header} under {inc}, or no g++): install it with "
                "`sudo apt-get install -y libns3-dev g++` (Debian 12: ns-3 3.37), or pass "
                "--ns3-include/--ns3-lib")

TCP_TOLERANCE = 0.01
UDP_FLOOR = 0.005

# What coaplab's child runs: the resolved scenario with one job. process_time is the CPU time
# of every thread since the process started (CLOCK_PROCESS_CPUTIME_ID, ns resolution), so at
# the end of the first call it includes the interpreter's start-up and coaplab's imports.
COAPLAB_CHILD = r"""
import json, sys, time
cpu = time.process_time
import coaplab
cfg, warm_calls = json.loads(sys.argv[1]), int(sys.argv[2])
c0 = cpu()
res = coaplab.run(cfg, jobs=1, db=None)
c1 = cpu()
warm = []
for _ in range(warm_calls):
    w0 = cpu()
    coaplab.run(cfg, jobs=1, db=None)
    warm.append(cpu() - w0)
s = res.summaries[0]
# The engine alone: the same runs, one _core.run_one call per replication (no validation,
# scheduling or summary statistics).
from coaplab import _core
from coaplab.describe.scenario import load_scenario
text = json.dumps(load_scenario(cfg).configurations()[0])
c2 = cpu()
for rep in range(cfg["replications"]):
    _core.run_one(text, rep, None)
c3 = cpu()
print(json.dumps({"cpu_s": min(warm), "first_cpu_s": c1 - c0, "startup_cpu_s": c1 - min(warm),
                  "engine_cpu_s": c3 - c2, "events": s["events"], "fct_s": s["fct_s"],
                  "medians": s["fct_replications"]["median_per_replication"],
                  "failed": s["exchanges_failed"], "timeouts": s["timeouts_total"],
                  "tcp": s.get("tcp")}))
"""


@dataclass
class Scenario:
    name: str
    what: str
    ns3_args: list[str]
    coaplab: dict[str, Any]
    check: str  # "tcp", "udp" or "none"


def scenarios(replications: int, exchanges: int) -> list[Scenario]:
    def tcp(name: str, what: str, buffer: int, slow_start: str, check: str,
            ns3_extra: tuple[str, ...] = ()) -> Scenario:
        cfg: dict[str, Any] = {
            "name": f"ns3-{name}", "seed": 1, "replications": replications,
            "link": {"buffer_bytes": buffer},
            "workload": {"kind": "firmware", "clients": 1, "resource_bytes": 102400},
            "coap": {"transport": "tcp", "cc": "newreno"},
        }
        if slow_start == "rfc":
            cfg["tcp"] = {"slow_start_limit": 1}
        return Scenario(name, what, ["--transport=tcp", f"--buffer={buffer}",
                                     f"--slowStart={slow_start}", "--resource=102400", *ns3_extra], cfg, check)

    def udp(clients: int, buffer: int = 1410000) -> Scenario:
        name = f"udp-{clients}" + ("" if buffer == 1410000 else f"-{buffer}")
        cfg = {
            "name": f"ns3-{name}", "seed": 1, "replications": replications,
            "link": {"buffer_bytes": buffer},
            "workload": {"kind": "continuous", "clients": clients, "exchanges": exchanges},
            "coap": {"transport": "udp", "cc": "default"},
        }
        size = f"{buffer:,}".replace(",", " ")
        return Scenario(name, f"UDP default, {clients} continuous clients x {exchanges}, "
                        f"buffer {size} B",
                        ["--transport=udp", f"--clients={clients}", f"--exchanges={exchanges}",
                         f"--buffer={buffer}"], cfg, "udp")

    return [
        tcp("tcp-inf", "TCP firmware, 1 client, buffer 1 410 000 B (Linux slow start)", 1410000,
            "linux", "tcp"),
        tcp("tcp-inf-rfc", "the same, RFC 5681 slow start (coaplab slow_start_limit 1, "
            "ns-3 TcpNewReno)", 1410000, "rfc", "tcp"),
        udp(50),
        udp(400),
        udp(50, 2500),
        udp(400, 2500),
        tcp("tcp-2500", "TCP firmware, buffer 2500 B", 2500, "linux", "none"),
        tcp("tcp-14100", "TCP firmware, buffer 14 100 B", 14100, "linux", "none"),
        tcp("tcp-28200", "TCP firmware, buffer 28 200 B", 28200, "linux", "none"),
        tcp("tcp-28200-no-rto", "the same, ns-3's RTO out of the way (MinRto 1000 s; coaplab "
            "has no RTO in this case)", 28200, "linux", "tcp", ("--minRto=1000",)),
    ]


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        print(f"compare.py: {message}", file=sys.stderr)
        sys.exit(2)


def percentile(xs: list[float], q: float) -> float:
    """coaplab's stats.percentile: linear interpolation between closest ranks."""
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def run_child(cmd: list[str]) -> tuple[dict[str, Any], float]:
    """Runs `cmd`, returns its JSON output and the child's total CPU seconds (os.wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}: "
                               f"{err.read().decode(errors='replace')[-500:]}")
        return json.loads(out.read()), ru.ru_utime + ru.ru_stime


@dataclass
class Side:
    sim_cpu: list[float] = field(default_factory=list)  # ns-3: sim; coaplab: a warm coaplab.run
    engine_cpu: list[float] = field(default_factory=list)  # coaplab: _core.run_one only
    first_cpu: list[float] = field(default_factory=list)  # coaplab: the first coaplab.run
    startup_cpu: list[float] = field(default_factory=list)  # ns-3: process - sim; coaplab: see above
    proc_cpu: list[float] = field(default_factory=list)
    fct: dict[str, float] = field(default_factory=dict)  # p10 p50 p90
    medians: list[float] = field(default_factory=list)  # per replication
    events: int = 0
    extra: str = ""
    signature: Any = None  # results of the first repeat; later repeats must match


def record(side: Side, sim: float, proc: float, fct: dict[str, float], medians: list[float],
           events: int, extra: str, startup: float, engine: float | None = None,
           first: float | None = None) -> None:
    side.sim_cpu.append(sim)
    side.startup_cpu.append(startup)
    if engine is not None:
        side.engine_cpu.append(engine)
    if first is not None:
        side.first_cpu.append(first)
    side.proc_cpu.append(proc)
    sig = (round(fct["p50"], 9), events)
    if side.signature is None:
        side.signature, side.fct, side.medians, side.events, side.extra = sig, fct, medians, events, extra
    elif sig != side.signature:
        raise RuntimeError(f"a repeat gave other results ({sig} vs {side.signature}): not deterministic")


def run_ns3(binary: Path, sc: Scenario, replications: int, side: Side) -> None:
    out, proc = run_child([str(binary), *sc.ns3_args, "--seed=1", "--run=1",
                           f"--replications={replications}"])
    reps = out["replications"]
    pooled = sorted(x for r in reps for x in r["fct"])
    fct = {k: percentile(pooled, q) for k, q in (("p10", .1), ("p50", .5), ("p90", .9))}
    medians = [percentile(sorted(r["fct"]), .5) for r in reps]
    if sc.ns3_args[0] == "--transport=tcp":
        extra = (f"RTOs {sum(r['rto_expirations'] for r in reps)}, "
                 f"fast recoveries {sum(r['fast_recoveries'] for r in reps)}")
    else:
        extra = (f"retransmissions {sum(r['retransmissions'] for r in reps)}, "
                 f"failed {sum(r['failed'] for r in reps)}")
    record(side, out["cpu_s"], proc, fct, medians, out["events"], extra, startup=proc - out["cpu_s"])


def run_coaplab(sc: Scenario, side: Side, warm: int) -> None:
    out, proc = run_child([sys.executable, "-c", COAPLAB_CHILD, json.dumps(sc.coaplab), str(warm)])
    fct = {k: out["fct_s"][k] for k in ("p10", "p50", "p90")}
    if out.get("tcp"):
        t = out["tcp"]
        extra = f"RTOs {t['rto_expirations']}, fast recoveries {t['fast_retransmits']}"
    else:
        extra = f"retransmissions {out['timeouts'] - out['failed']}, failed {out['failed']}"
    record(side, out["cpu_s"], proc, fct, out["medians"], out["events"], extra, startup=out["startup_cpu_s"],
           engine=out["engine_cpu_s"], first=out["first_cpu_s"])


def verdict(sc: Scenario, a: Side, b: Side) -> tuple[str, str]:
    """(PASS/FAIL/info, tolerance text), a = ns-3, b = coaplab."""
    if sc.check == "none":
        return "info", "not checked (RTO rule)"
    if sc.check == "tcp":
        d = abs(a.fct["p50"] - b.fct["p50"]) / b.fct["p50"]
        return ("PASS" if d <= TCP_TOLERANCE else "FAIL"), f"p50 within {TCP_TOLERANCE:.0%}"
    ma, mb = statistics.fmean(a.medians), statistics.fmean(b.medians)
    ra, rb = len(a.medians), len(b.medians)
    sa = statistics.stdev(a.medians) if ra > 1 else 0.0
    sb = statistics.stdev(b.medians) if rb > 1 else 0.0
    se = math.sqrt(sa * sa / ra + sb * sb / rb)
    tol = max(3 * se, UDP_FLOOR * mb)
    return ("PASS" if abs(ma - mb) <= tol else "FAIL"), f"mean of medians ±{tol:.3f} s"


def find_ns3(args: argparse.Namespace) -> None:
    if not (Path(args.ns3_include) / NS3_HEADER).is_file() or shutil.which(args.cxx) is None:
        print(INSTALL_HINT.format(header=NS3_HEADER, inc=args.ns3_include), file=sys.stderr)
        sys.exit(2)


def build(args: argparse.Namespace, build_dir: Path) -> Path:
    binary = build_dir / "coaplab_star"
    if binary.exists() and binary.stat().st_mtime >= SOURCE.stat().st_mtime:
        return binary
    cmd = [args.cxx, "-O2", "-std=c++17", f"-I{args.ns3_include}", str(SOURCE), "-o", str(binary)]
    if args.ns3_lib:
        cmd += [f"-L{args.ns3_lib}", f"-Wl,-rpath,{args.ns3_lib}"]
    cmd += NS3_LIBS
    print("building:", " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        print(f"compare.py: building {SOURCE.name} failed:\n{r.stderr[-3000:]}", file=sys.stderr)
        sys.exit(2)
    return binary


def fmt_cpu(xs: list[float]) -> str:
    return f"{min(xs):.3g} / {statistics.median(xs):.3g}"


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    names = [s.name for s in scenarios(1, 1)]
    ap.add_argument("--scenarios", default=",".join(names),
                    help=f"comma-separated, from: {', '.join(names)} (default: all)")
    ap.add_argument("--replications", type=int, default=10, help="replications per scenario (default 10)")
    ap.add_argument("--exchanges", type=int, default=50, help="UDP exchanges per client (default 50)")
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats per side (default 3)")
    ap.add_argument("--warm", type=int, default=15,
                    help="warm coaplab.run calls after the first in each coaplab child; the least is "
                         "'coaplab run' (default 15: a process resamples its summaries' bootstrap in "
                         "plain Python until that has cost about numpy's import, then with numpy — "
                         "for 10 one-client replications after 11 calls; analyse/replstats.py)")
    ap.add_argument("--build-dir", help="where the ns-3 program is built (default: a temporary directory)")
    ap.add_argument("--ns3-include", default="/usr/include", help="directory holding ns3/*.h")
    ap.add_argument("--ns3-lib", default=None, help="directory of the libns3-*.so (default: the linker's)")
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    wanted = [n.strip() for n in args.scenarios.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in names]
    if unknown or not wanted:
        ap.error(f"--scenarios: {', '.join(unknown) or 'none given'} not known; allowed: {', '.join(names)}")
    for key, low in (("replications", 2), ("exchanges", 1), ("repeats", 1), ("warm", 1)):
        if getattr(args, key) < low:
            ap.error(f"--{key}: {getattr(args, key)} must be >= {low}")
    try:
        import coaplab  # noqa: F401
    except ImportError:
        ap.error("coaplab is not importable: run with the repository's .venv/bin/python "
                 "(bash scripts/setup.sh creates it)")
    find_ns3(args)

    tmp = None
    if args.build_dir:
        build_dir = Path(args.build_dir)
        build_dir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="coaplab-ns3-")
        build_dir = Path(tmp.name)
    try:
        binary = build(args, build_dir)
        chosen = [s for s in scenarios(args.replications, args.exchanges) if s.name in wanted]
        sides = {s.name: (Side(), Side()) for s in chosen}
        for k in range(args.repeats):
            for sc in chosen:
                ns3, cl = sides[sc.name]
                order = [lambda sc=sc, ns3=ns3: run_ns3(binary, sc, args.replications, ns3),
                         lambda sc=sc, cl=cl: run_coaplab(sc, cl, args.warm)]
                try:
                    for step in (order if k % 2 == 0 else order[::-1]):
                        step()
                except RuntimeError as e:
                    print(f"compare.py: {sc.name}: {e}", file=sys.stderr)
                    return 1
                print(f"repeat {k + 1}/{args.repeats}: {sc.name} done", file=sys.stderr)
    finally:
        if tmp is not None:
            tmp.cleanup()

    failed = False
    rows = []
    print(f"\n{args.replications} replications per scenario, {args.repeats} interleaved repeats; "
          "CPU s as min / median. Start-up apart: ns-3 = process - sim; coaplab = CPU from the "
          f"process's start to the end of the first coaplab.run, less a warm one (least of {args.warm}). "
          "ratio = ns-3 sim CPU / coaplab warm run CPU, and / coaplab engine CPU (medians)\n")
    print("| scenario | ns-3 start-up CPU s | ns-3 sim CPU s | coaplab start-up CPU s | coaplab first call CPU s "
          "| coaplab run CPU s | coaplab engine CPU s | ratio run | ratio engine | events ns-3 / coaplab |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for sc in chosen:
        a, b = sides[sc.name]
        med = statistics.median
        ratio = med(a.sim_cpu) / med(b.sim_cpu)
        ratio_engine = med(a.sim_cpu) / max(med(b.engine_cpu), 1e-6)
        print(f"| {sc.name} | {fmt_cpu(a.startup_cpu)} | {fmt_cpu(a.sim_cpu)} | {fmt_cpu(b.startup_cpu)} | "
              f"{fmt_cpu(b.first_cpu)} | {fmt_cpu(b.sim_cpu)} | {fmt_cpu(b.engine_cpu)} | {ratio:.1f} | "
              f"{ratio_engine:.1f} | {a.events:,} / {b.events:,} |")
    print("\n| scenario | FCT s ns-3 p10 / p50 / p90 | FCT s coaplab p10 / p50 / p90 | Δ p50 | "
          "tolerance | check | ns-3 | coaplab |")
    print("|---|---|---|---:|---|---|---|---|")
    for sc in chosen:
        a, b = sides[sc.name]
        v, tol = verdict(sc, a, b)
        failed |= v == "FAIL"
        d = (a.fct["p50"] - b.fct["p50"]) / b.fct["p50"]
        f = lambda s: " / ".join(f"{s.fct[k]:.3f}" for k in ("p10", "p50", "p90"))
        print(f"| {sc.name} | {f(a)} | {f(b)} | {d:+.2%} | {tol} | {v} | {a.extra} | {b.extra} |")
        rows.append({"scenario": sc.name, "what": sc.what, "check": v, "tolerance": tol,
                     "ns3": a.__dict__, "coaplab": b.__dict__,
                     "cpu_ratio": statistics.median(a.sim_cpu) / statistics.median(b.sim_cpu)})
    print()
    for sc in chosen:
        print(f"  {sc.name}: {sc.what}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
