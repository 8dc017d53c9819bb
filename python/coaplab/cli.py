"""The ``coaplab`` command (SPEC §7.2). User errors print one line and exit 2."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from .errors import CoaplabError


def _int_at_least(lo: int):
    """An argparse type: an integer >= lo, with a message naming the bad value."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{v} is out of range; expected an integer >= {lo}")
        return v

    return parse


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="coaplab", description="A laboratory for CoAP congestion control.")
    p.add_argument("--version", action="version", version=f"coaplab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run a scenario file (sweep x replications) and print summaries")
    run.add_argument("scenario", metavar="SCENARIO.toml")
    run.add_argument("--jobs", type=_positive_int, default=None, help="parallel runs (default: number of cores)")
    run.add_argument("--format", choices=("table", "json"), default="table")
    run.add_argument("--pcap", metavar="DIR", help="write one pcap per replication into DIR")
    run.add_argument("--trace", metavar="DIR", help="write traces, one CSV per replication, into DIR: per-client timer / RTO traces (UDP) or per-connection time-sequence traces (TCP)")
    run.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    run.add_argument("--db", metavar="PATH", default=None,
                     help="results database: every finished run is stored at once, stored runs are skipped (default: ./coaplab.duckdb)")
    run.add_argument("--no-db", action="store_true", help="do not store results")
    run.add_argument("--cluster", metavar="ADDRESS", help="run on a Dask cluster: a scheduler address (tcp://host:8786) or local:N")

    exp = sub.add_parser("export", help="export the results database as parquet or csv files")
    exp.add_argument("--db", metavar="PATH", default=None, help="results database (default: ./coaplab.duckdb)")
    exp.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    exp.add_argument("--out", metavar="DIR", required=True)

    rp = sub.add_parser("replay", help="replay algorithms on a script of exchanges (SPEC §3.2)")
    rp.add_argument("algorithm", nargs="?", metavar="ALGORITHM")
    rp.add_argument("script", metavar="SCRIPT.json")
    rp.add_argument("--compare", metavar="A,B,...", help="replay several algorithms and print them side by side")
    rp.add_argument("--dither", choices=("on", "off"), default="off")
    rp.add_argument("--seed", type=_non_negative_int, default=0)
    rp.add_argument("--max-retransmit", type=_non_negative_int, default=4)
    rp.add_argument("--format", choices=("json", "table"), default=None, help="json for one algorithm, table for --compare (defaults)")

    cal = sub.add_parser("calibrate", help="published vs. simulated for the reference figures (markdown table)")
    cal.add_argument("--reference", metavar="PATH", help="published.toml (default: the packaged copy)")
    cal.add_argument("--jobs", type=_positive_int, default=None)

    rp2 = sub.add_parser("report", help="a self-contained HTML report from the results database")
    rp2.add_argument("--db", metavar="PATH", default=None, help="results database (default: ./coaplab.duckdb)")
    rp2.add_argument("--out", metavar="DIR", required=True)

    rep = sub.add_parser("reproduce", help="re-run published experiments; published vs. simulated side by side")
    rep.add_argument("names", nargs="*", metavar="NAME")
    rep.add_argument("--list", action="store_true", help="list the built-in experiments")
    rep.add_argument("--jobs", type=_positive_int, default=None)
    rep.add_argument("--cluster", metavar="ADDRESS")
    rep.add_argument("--db", metavar="PATH", default=None, help="results database (default: ./coaplab.duckdb)")
    rep.add_argument("--no-db", action="store_true")
    rep.add_argument("--no-progress", action="store_true")

    bench = sub.add_parser("bench", help="benchmark the simulator (events/s, simulated s per wall s, peak memory)")
    bench.add_argument("--jobs", type=_positive_int, default=2)
    bench.add_argument("--replications", type=_positive_int, default=20)
    bench.add_argument("--clients", type=_positive_int, default=400)
    bench.add_argument("--transport", choices=("udp", "tcp"), default="udp",
                       help="udp: cocoa (default); tcp: CoAP over TCP with New Reno")
    for name, help_ in (("emulate", "run a scenario over real network stacks on the emulated link (root; docs/emulation.md)"),
                        ("crossval", "run a scenario in the simulator and in emulation; metrics side by side")):
        em = sub.add_parser(name, help=help_)
        em.add_argument("scenario", metavar="SCENARIO.toml")
        em.add_argument("--client", choices=("coaplab", "libcoap", "aiocoap"), default="coaplab",
                        help="which stack plays the clients (default: coaplab's own)")
        em.add_argument("--server", choices=("coaplab", "aiocoap"), default="coaplab",
                        help="which stack plays the server (default: coaplab's own)")
        em.add_argument("--replications", type=_positive_int, default=None,
                        help="run at most this many replications of each configuration")
        em.add_argument("--max-seconds", type=_positive_int, default=600,
                        help="stop a run's clients after this many seconds (default 600)")
        em.add_argument("--late-us", type=_positive_int, default=1000,
                        help="mark a run invalid when its delivery lateness p99 exceeds this (µs, default 1000)")
        em.add_argument("--tcp-congestion", choices=("reno", "bbr", "cubic"), default=None,
                        help="the kernel's TCP congestion control (default: reno, the model's New Reno)")
        em.add_argument("--out", metavar="DIR", help="keep each run's pcaps, packet fates and logs in DIR")
        em.add_argument("--format", choices=("table", "json"), default="table")
        em.add_argument("--db", metavar="PATH", default=None, help="results database (default: ./coaplab.duckdb)")
        em.add_argument("--no-db", action="store_true", help="do not store results")
        em.add_argument("--no-progress", action="store_true")
    return p


def _cmd_emulate(args) -> int:
    from .emulate import crossval, crossval_table, emulate, emulation_table
    from .store import DEFAULT_DB

    if args.no_db and args.db is not None:
        raise CoaplabError("--db and --no-db exclude each other")
    db = None if args.no_db else (args.db or DEFAULT_DB)
    kw = dict(client=args.client, server=args.server, db=db, replications=args.replications, out_dir=args.out,
              max_seconds=float(args.max_seconds), late_us=float(args.late_us), progress=not args.no_progress,
              tcp_congestion=args.tcp_congestion)
    if args.command == "emulate":
        summaries = emulate(args.scenario, **kw)
        sys.stdout.write(json.dumps(summaries, sort_keys=True) + "\n" if args.format == "json" else emulation_table(summaries))
        return 0 if all(s["emulation"]["invalid_runs"] == 0 for s in summaries) else 1
    pairs = crossval(args.scenario, **kw)
    if args.format == "json":
        sys.stdout.write(json.dumps([{"simulated": a, "emulated": b} for a, b in pairs], sort_keys=True) + "\n")
    else:
        sys.stdout.write(crossval_table(pairs))
    return 0 if all(b["emulation"]["invalid_runs"] == 0 for _, b in pairs) else 1


def _cmd_run(args) -> int:
    from .output import json_lines, table
    from .runner import run_scenario
    from .store import DEFAULT_DB

    if args.no_db and args.db is not None:
        raise CoaplabError("--db and --no-db exclude each other")
    if args.cluster is not None and args.jobs is not None:
        raise CoaplabError("--jobs and --cluster exclude each other (the cluster decides the parallelism)")
    db = None if args.no_db else (args.db or DEFAULT_DB)
    result = run_scenario(args.scenario, jobs=args.jobs, progress=not args.no_progress, pcap_dir=args.pcap,
                          trace_dir=args.trace, db=db, cluster=args.cluster)
    total = sum(c["replications"] for c in result.scenario.configurations())
    if db is not None and result.executed < total and not args.no_progress:
        print(f"coaplab: {total - result.executed} of {total} runs were already stored in {db}; ran {result.executed}",
              file=sys.stderr)
    if result.summaries:
        sys.stdout.write(json_lines(result.summaries) + "\n" if args.format == "json" else table(result.summaries))
    if result.failures:
        print(f"coaplab: {len(result.failures)} of {total} runs failed (stored as failed; re-run the command to retry them):",
              file=sys.stderr)
        for name, cid, rep, err in result.failures[:20]:
            print(f"  {name} [{cid}] replication {rep}: {err}", file=sys.stderr)
        if len(result.failures) > 20:
            print(f"  ... and {len(result.failures) - 20} more", file=sys.stderr)
        return 1
    return 0


def _cmd_export(args) -> int:
    from .store import DEFAULT_DB, ResultsDB

    with ResultsDB(args.db or DEFAULT_DB, read_only=True) as db:
        for path in db.export(args.out, args.format):
            print(path)
    return 0


def _cmd_replay(args) -> int:
    from .output import replay_table
    from .replay import load_script, replay

    if args.compare:
        if args.algorithm is not None:
            raise CoaplabError("replay: give either ALGORITHM or --compare A,B,..., not both")
        names = [n.strip() for n in args.compare.split(",") if n.strip()]
    elif args.algorithm is None:
        raise CoaplabError("replay: ALGORITHM is required (or --compare A,B,...)")
    else:
        names = [args.algorithm]
    script = load_script(args.script)
    results = {n: replay(n, script, dither=args.dither == "on", seed=args.seed, max_retransmit=args.max_retransmit) for n in names}
    fmt = args.format or ("table" if args.compare else "json")
    if fmt == "table":
        sys.stdout.write(replay_table(results))
    else:
        out = results[names[0]] if len(names) == 1 else results
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    return 0


def _cmd_bench(args) -> int:
    from .bench import bench

    sys.stdout.write(bench(jobs=args.jobs, replications=args.replications, clients=args.clients,
                           transport=args.transport))
    return 0


def _cmd_calibrate(args) -> int:
    from .calibration import compare, load_reference, markdown

    try:
        figures = load_reference(args.reference)
    except (OSError, KeyError, ValueError) as e:
        raise CoaplabError(f"--reference: cannot use {args.reference!r}: {e}") from None
    sys.stdout.write(markdown(compare(figures, jobs=args.jobs)))
    return 0


def _cmd_reproduce(args) -> int:
    from .reproduce import available, reproduce
    from .store import DEFAULT_DB

    if args.list or not args.names:
        for name, desc in available().items():
            print(f"{name:<26} {desc}")
        if not args.list:
            print("coaplab reproduce NAME ...   runs them (see docs/reproduce.md)", file=sys.stderr)
        return 0
    db = None if args.no_db else (args.db or DEFAULT_DB)
    sys.stdout.write(reproduce(args.names, jobs=args.jobs, db=db, progress=not args.no_progress, cluster=args.cluster))
    return 0


def _cmd_report(args) -> int:
    from .report import write
    from .store import DEFAULT_DB

    print(write(args.db or DEFAULT_DB, args.out))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {"run": _cmd_run, "replay": _cmd_replay, "bench": _cmd_bench, "calibrate": _cmd_calibrate,
                "export": _cmd_export, "reproduce": _cmd_reproduce, "report": _cmd_report,
                "emulate": _cmd_emulate, "crossval": _cmd_emulate}[args.command](args)
    except CoaplabError as e:
        print(f"coaplab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("coaplab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
