"""The ``coaplab`` command (docs/design.md §7.2). User errors print one line and exit 2."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from .. import __version__
from ..errors import CoaplabError
from ..files import output_file
from ..describe.replay import MAX_MAX_RETRANSMIT, load_script, replay
from ..stacks import CLIENT_KINDS, SERVER_KINDS  # not .emulate: its imports would slow every command


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


_DB_HELP = "results database (default: ./coaplab.duckdb)"
_WHERE_HELP = ("keep the configurations for which this SQL condition on dotted configuration keys holds, "
               "e.g. \"coap.cc in ('cocoa','fasor') and link.buffer_bytes > 2500\"")
_DIFF_BY_HELP = ("after the summaries, the pairwise differences between configurations that differ only in this "
                 "dotted key (e.g. coap.cc): median FCT, unnecessary retransmissions per client and throughput, each "
                 "with a 95 %% bootstrap CI over replications and a Mann-Whitney U test (docs/experiments.md, "
                 "'Differences')")
_KEY_HELP = "a dotted configuration key (link.buffer_bytes, coap.cc, coap.nstart, ...) or group"


def _sub(sub, name: str, help: str, examples: str, description: str | None = None) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with worked examples."""
    return sub.add_parser(name, help=help, description=description or help[0].upper() + help[1:] + ".",
                          epilog="examples:\n" + examples, formatter_class=argparse.RawDescriptionHelpFormatter)


def _int_list(text: str) -> list[int]:
    """An argparse type: a comma-separated list of integers >= 1."""
    out = []
    for part in text.split(","):
        try:
            v = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r} in {text!r} is not an integer; "
                                             "expected a comma-separated list of integers >= 1") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{v} in {text!r} is out of range; expected integers >= 1")
        out.append(v)
    return out


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (what is wrong and what is allowed, as
    argparse words it, plus where the full usage is) and exit code 2 — argparse's default
    prints the whole usage block first. Subcommand parsers inherit this class."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="coaplab", description="A laboratory for CoAP congestion control.",
        epilog="examples:\n  coaplab run examples/quick.toml\n  coaplab report --out out/report\n"
               "  coaplab plot --kind fct --x link.buffer_bytes --hue coap.cc --out fig.pdf\n"
               "  coaplab COMMAND --help      (every command's options, with examples)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"coaplab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = _sub(sub, "run", "run a scenario file (sweep x replications) and print summaries",
               "  coaplab run examples/quick.toml\n"
               "  coaplab run examples/bufferbloat.toml --jobs 2 --format json > summaries.jsonl\n"
               "  coaplab run examples/tcp-firmware.toml --trace out/traces --pcap out/pcap\n"
               "  coaplab run examples/bufferbloat.toml --cluster local:4   (needs coaplab[cluster])")
    run.add_argument("scenario", metavar="SCENARIO.toml", help="the scenario file, e.g. examples/quick.toml")
    run.add_argument("--jobs", type=_positive_int, default=None, help="parallel runs, e.g. --jobs 2 (default: number of cores)")
    run.add_argument("--format", choices=("table", "json"), default="table",
                     help="table: one readable block per configuration (default); json: JSON Lines, one object per configuration")
    run.add_argument("--pcap", metavar="DIR", help="write one pcap per replication into DIR, e.g. --pcap out/pcap "
                     "(stored runs without one are run again: results are identical); the estimated size is "
                     "printed first, and past 200 MB nothing is written without --yes or --max-output-mb")
    run.add_argument("--trace", metavar="DIR", help="write traces, one CSV per replication, into DIR: per-client timer / RTO traces (UDP) "
                     "or per-connection time-sequence traces (TCP), with a second CSV per replication of BBR's state "
                     "(mode, BtlBw, RTprop, pacing rate, cwnd) (stored runs without one are run again)")
    run.add_argument("--max-output-mb", type=float, metavar="MB", default=None,
                     help="--pcap: the largest estimated output written without asking (default: 200)")
    run.add_argument("--yes", action="store_true", help="--pcap: write the pcaps however large the estimate")
    run.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    run.add_argument("--db", metavar="PATH", default=None,
                     help="results database: every finished run is stored at once, stored runs are skipped (default: ./coaplab.duckdb)")
    run.add_argument("--no-db", action="store_true", help="do not store results")
    run.add_argument("--cluster", metavar="ADDRESS",
                     help="run on a Dask cluster: a scheduler address (tcp://host:8786) or local:N (needs pip install 'coaplab[cluster]')")
    run.add_argument("--diff-by", metavar="KEY", help=_DIFF_BY_HELP)

    exp = _sub(sub, "export", "export the results database as parquet or csv files",
               "  coaplab export --out out/tables\n"
               "  coaplab export --db study.duckdb --format csv --out out/csv --where \"coap.cc = 'cocoa'\"",
               description="Export the results database: configs, runs, clients, traces, time_sequence (TCP "
                           "time-sequence traces) and cc_state (BBR's state: mode, BtlBw, RTprop, pacing rate, cwnd), "
                           "each starting with config_id and one column per configuration "
                           "parameter that varies across the exported configurations (dotted names such as coap.cc).")
    exp.add_argument("--db", metavar="PATH", default=None, help=_DB_HELP)
    exp.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="file format (default: parquet)")
    exp.add_argument("--out", metavar="DIR", required=True, help="directory to write the tables into, e.g. out/tables")
    exp.add_argument("--where", metavar="CONDITION", help=_WHERE_HELP)

    st = _sub(sub, "status", "what a results database holds, also while a sweep writes it",
              "  coaplab status\n  coaplab status --db study.duckdb --format json",
              description="Per scenario name: configurations, runs stored / failed / total (the replications of the "
                          "stored configurations) and the time of the last commit. It reads the database while a "
                          "sweep is running (docs/experiments.md, 'Reading while a sweep runs').")
    st.add_argument("--db", metavar="PATH", default=None, help=_DB_HELP)
    st.add_argument("--format", choices=("table", "json"), default="table", help="table (default) or JSON Lines")

    rp = _sub(sub, "replay", "replay algorithms on a script of exchanges",
              "  coaplab replay cocoa script.json\n"
              "  coaplab replay --compare default,cocoa,fasor script.json --dither on --seed 3\n"
              "  coaplab replay --algorithm-file my.py:MyAlgo script.json --compare cocoa")
    rp.add_argument("algorithm", nargs="?", metavar="ALGORITHM", help="the algorithm to replay, e.g. cocoa (see docs/algorithms.md), "
                    "python:FILE:CLASS or c:LIB:NAME (docs/c-api.md)")
    rp.add_argument("script", metavar="SCRIPT.json", help="the script of exchanges (JSON)")
    rp.add_argument("--compare", metavar="A,B,...", help="replay several algorithms and print them side by side, e.g. --compare default,cocoa")
    rp.add_argument("--dither", choices=("on", "off"), default="off", help="randomise initial timers as RFC 7252 does (default: off)")
    rp.add_argument("--seed", type=_non_negative_int, default=0, help="seed of the dithering, e.g. --seed 3 (default: 0)")
    rp.add_argument("--max-retransmit", type=_non_negative_int, default=4, help="MAX_RETRANSMIT (default: 4, RFC 7252's)")
    rp.add_argument("--format", choices=("json", "table"), default=None, help="json for one algorithm, table for --compare (defaults)")
    rp.add_argument("--algorithm-file", metavar="FILE:CLASS",
                    help="replay an algorithm written in Python (a coaplab.Algorithm subclass), e.g. my.py:MyAlgo; "
                         "with --compare, it is shown first")

    ca = _sub(sub, "check-algorithm", "check an algorithm written in Python or C against a property suite",
              "  coaplab check-algorithm my.py:MyAlgo\n"
              "  coaplab check-algorithm examples/algorithms/cocoa_py.py:CocoaPy --compare cocoa\n"
              "  coaplab check-algorithm c:./libmycc.so:mycc")
    ca.add_argument("spec", metavar="FILE:CLASS", help="the file and its coaplab.Algorithm subclass, e.g. my.py:MyAlgo, "
                    "or c:LIB:NAME, a shared library implementing the C API (docs/c-api.md)")
    ca.add_argument("--compare", metavar="ALGORITHM", help="also require identical replay output to this built-in algorithm, e.g. cocoa")
    ca.add_argument("--scripts", type=_positive_int, default=50, help="generated scripts (default: 50)")
    ca.add_argument("--seed", type=_non_negative_int, default=0, help="seed of the generated scripts and dithering (default: 0)")
    ca.add_argument("--max-retransmit", type=_non_negative_int, default=4, help="MAX_RETRANSMIT (default: 4, RFC 7252's)")
    ca.add_argument("--cap", type=float, default=60.0, help="largest timer allowed, s (default: 60, the shared cap)")

    cal = _sub(sub, "calibrate", "published vs. simulated for the reference figures",
               "  coaplab calibrate\n  coaplab calibrate --format json > calibration.jsonl\n"
               "  coaplab calibrate --reference my-published.toml --jobs 2 --format csv")
    cal.add_argument("--reference", metavar="PATH", help="published.toml (default: the packaged copy)")
    cal.add_argument("--jobs", type=_positive_int, default=None, help="parallel runs (default: number of cores)")
    cal.add_argument("--format", choices=("markdown", "json", "csv"), default="markdown",
                     help="markdown table (default), JSON Lines (one object per figure, column and statistic) or CSV")

    rp2 = _sub(sub, "report", "a self-contained HTML report from the results database",
               "  coaplab report --out out/report\n"
               "  coaplab report --db study.duckdb --out out/report --where \"workload.clients = 400\"")
    rp2.add_argument("--db", metavar="PATH", action="append", default=None,
                     help=_DB_HELP + "; twice (--db A --db B): the two studies side by side (as coaplab compare)")
    rp2.add_argument("--out", metavar="DIR", required=True, help="directory for index.html, e.g. out/report")
    rp2.add_argument("--where", metavar="CONDITION", help=_WHERE_HELP)
    rp2.add_argument("--diff-by", metavar="KEY", help="one database: the key of each scenario's pairwise differences "
                     "(default: coap.cc where it varies)")
    rp2.add_argument("--ignore", metavar="KEY", action="append", default=[],
                     help="two databases: leave this key out when matching configurations (repeatable)")

    cmp_ = _sub(sub, "compare", "compare two studies, or the configurations of one, with confidence intervals",
                "  coaplab compare --db before.duckdb --db after.duckdb\n"
                "  coaplab compare --db small.duckdb --db large.duckdb --ignore link.buffer_bytes --format json\n"
                "  coaplab compare --db study.duckdb --diff-by coap.cc",
                description="Two databases (--db A --db B): configurations are matched by their resolved parameters "
                            "(the model version is not one of them; --ignore leaves out more keys); per matched "
                            "configuration and metric (median FCT, median unnecessary retransmissions per client, "
                            "throughput, UDP: retransmission ratio and mean RTT) both values, the difference B - A "
                            "and its 95 % bootstrap confidence interval over replications, with the configurations "
                            "found in one database only. One database with --diff-by KEY: the pairwise differences "
                            "between its configurations that differ only in KEY, with intervals and a Mann-Whitney "
                            "U test (docs/experiments.md, 'Differences').")
    cmp_.add_argument("--db", metavar="PATH", action="append", default=[], help="a results database (give two, or one with --diff-by)")
    cmp_.add_argument("--ignore", metavar="KEY", action="append", default=[],
                      help="leave this dotted key out when matching configurations, e.g. link.buffer_bytes (repeatable)")
    cmp_.add_argument("--diff-by", metavar="KEY", help="one database: differences between configurations differing only in KEY")
    cmp_.add_argument("--where", metavar="CONDITION", help=_WHERE_HELP)
    cmp_.add_argument("--format", choices=("table", "json"), default="table",
                      help="table (default) or JSON Lines (one object per matched configuration or pair)")

    plot = _sub(sub, "plot", "draw one figure from the results database (PNG, PDF or SVG)",
                "  coaplab plot --kind fct --x link.buffer_bytes --hue coap.cc --col coap.nstart --out fig.pdf\n"
                "  coaplab plot --db study.duckdb --kind histogram --where \"coap.cc in ('cocoa','fasor')\" --out hist.png\n"
                "  coaplab plot --kind time-sequence --config 44c8b1475d569923 --replication 0 --out ts.svg\n"
                "  coaplab plot --kind rto --config 42b0cb9c2ca47e1c --client 3 --width one --out rto.pdf\n"
                "  coaplab plot --kind queue --replication 0 --out queue.svg",
                description="Draw one figure from the results database. fct / unnecessary: box plots (whiskers "
                            "p10/p90, box p25/p75, median line) per configuration; histogram: retransmissions per "
                            "exchange; retransmission-ratio: retransmissions / CON transmissions per configuration "
                            "(UDP); completed-pmf: the distribution of completed exchanges per client; "
                            "median-ci: the median FCT per configuration with its 95 % bootstrap interval over replications as whiskers; "
                            "time-sequence: one TCP connection (runs with trace = true; with BBR a second "
                            "panel shows cwnd, the BDP estimate, pacing rate x RTprop and the modes); rto: one UDP "
                            "client's timer and RTO estimate (runs with trace = true); queue / throughput: one run's "
                            "bottleneck buffer occupancy / each direction's delivered throughput over time (runs "
                            "with trace = true on a star or gprs network).")
    plot.add_argument("--db", metavar="PATH", default=None, help=_DB_HELP)
    plot.add_argument("--kind", choices=("fct", "unnecessary", "histogram", "retransmission-ratio", "completed-pmf",
                                         "time-sequence", "rto", "queue", "throughput", "load", "mac-drops",
                                         "drop-causes", "median-ci"),
                      default="fct",
                      help="what to draw (default: fct)")
    plot.add_argument("--out", metavar="FILE", required=True, help="the figure file; the extension picks the format: .png, .pdf or .svg")
    plot.add_argument("--x", metavar="KEY", help="x axis: " + _KEY_HELP + " (default: chosen from the keys that vary)")
    plot.add_argument("--hue", metavar="KEY", help="colour: " + _KEY_HELP)
    plot.add_argument("--col", metavar="KEY", help="one panel per value: " + _KEY_HELP)
    plot.add_argument("--where", metavar="CONDITION", help=_WHERE_HELP)
    plot.add_argument("--width", default="two", metavar="one|two|INCHES",
                      help="figure width: one (3.5 in, one paper column), two (7.16 in, default) or inches, e.g. 5")
    plot.add_argument("--config", metavar="CONFIG_ID", help="time-sequence / rto / queue / throughput: the configuration (default: the first traced one)")
    plot.add_argument("--replication", type=_non_negative_int, default=None, help="time-sequence / rto / queue / throughput: the replication (default: the first traced)")
    plot.add_argument("--client", type=_non_negative_int, default=None, help="rto: the client (default: the first traced)")
    plot.add_argument("--connection", type=_non_negative_int, default=None,
                      help="time-sequence: the connection number (default: the busiest)")
    plot.add_argument("--direction", choices=("down", "up"), default="down",
                      help="time-sequence: down = server to client (default, the bottleneck), up = client to server")

    rep = _sub(sub, "reproduce", "re-run published experiments; published vs. simulated side by side",
               "  coaplab reproduce --list\n  coaplab reproduce udp-1client-continuous firmware\n"
               "  coaplab reproduce udp-continuous-matrix --format json > matrix.jsonl\n"
               "(docs/reproduce.md describes every experiment)")
    rep.add_argument("names", nargs="*", metavar="NAME", help="built-in experiments to run (see --list)")
    rep.add_argument("--list", action="store_true", help="list the built-in experiments")
    rep.add_argument("--jobs", type=_positive_int, default=None, help="parallel runs (default: number of cores)")
    rep.add_argument("--cluster", metavar="ADDRESS", help="run on a Dask cluster (tcp://host:8786 or local:N; needs coaplab[cluster])")
    rep.add_argument("--db", metavar="PATH", default=None, help=_DB_HELP)
    rep.add_argument("--no-db", action="store_true", help="do not store results")
    rep.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    rep.add_argument("--format", choices=("text", "json", "csv", "markdown"), default="text",
                     help="text: a block per configuration (default); json: JSON Lines, one object per configuration "
                          "and statistic; csv; markdown: a table")

    comp = _sub(sub, "completion", "print a shell completion script",
                "  coaplab completion bash > ~/.local/share/bash-completion/completions/coaplab\n"
                "  coaplab completion zsh > ~/.zfunc/_coaplab")
    comp.add_argument("shell", choices=("bash", "zsh", "tcsh"), help="the shell")

    bench = _sub(sub, "bench", "benchmark the simulator (events/s, simulated s per wall s, peak memory)",
                 "  coaplab bench                           # 400 random UDP clients, infinite buffer, 20 replications\n"
                 "  coaplab bench --transport tcp\n"
                 "  coaplab bench --suite --suite-clients 400,4000 --repetitions 7   # CPU time vs a bare heap\n")
    bench.add_argument("--jobs", type=_positive_int, default=2, help="parallel runs (default 2)")
    bench.add_argument("--replications", type=_positive_int, default=20, help="replications (default 20)")
    bench.add_argument("--clients", type=_positive_int, default=400, help="clients (default 400)")
    bench.add_argument("--transport", choices=("udp", "tcp"), default=None,
                       help="udp: cocoa (default); tcp: CoAP over TCP with New Reno; with --suite: only this one")
    bench.add_argument("--suite", action="store_true",
                       help="the scaling suite: UDP and TCP, 1 to 10000 continuous clients, CPU time per event "
                            "against a bare binary-heap loop (needs the source checkout and cargo; docs/performance.md)")
    bench.add_argument("--suite-clients", type=_int_list, metavar="N,N,...", default=None,
                       help="--suite: client counts (default 1,10,100,400,1000,4000,10000)")
    bench.add_argument("--repetitions", type=_positive_int, default=5,
                       help="--suite: interleaved repetitions per configuration (min and median are printed)")
    bench.add_argument("--exchanges", type=_positive_int, default=None,
                       help="--suite: exchanges per client (default max(50, 100000 / clients))")
    sc = _sub(sub, "scorecard", "grade an algorithm's congestion safety on the literature's battery (docs/scorecard.md)",
              "  coaplab scorecard cocoa-fb2 --out out/card\n"
              "  coaplab scorecard python:my.py:MyAlgo --format json\n"
              "  coaplab scorecard c:./libmine.so:mine --format json\n"
              "  coaplab scorecard --all --battery quick\n"
              "  coaplab scorecard coaplab --stack coaplab --out out/card   (root; emulated)")
    sc.add_argument("target", nargs="?", metavar="TARGET",
                    help="a registered algorithm (e.g. cocoa), python:FILE:CLASS, c:LIB:NAME (a C implementation "
                         "behind the C API, docs/c-api.md), or with --stack the stack's algorithm")
    sc.add_argument("--all", action="store_true", help="grade every registered algorithm and print the leaderboard")
    sc.add_argument("--battery", choices=("full", "quick"), default="full",
                    help="full: the studies' sizes (default); quick: reduced (fewer clients and replications; the card says so)")
    sc.add_argument("--stack", choices=CLIENT_KINDS, default=None,
                    help="grade a real stack over the emulated link (root; a scaled battery)")
    sc.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or one JSON object (--all: JSON Lines)")
    sc.add_argument("--out", metavar="DIR", help="write the one-page HTML card into DIR/index.html")
    sc.add_argument("--jobs", type=_positive_int, default=None, help="parallel runs (default: number of cores)")
    sc.add_argument("--db", metavar="PATH", default=None, help=_DB_HELP + "; a card resumes from the runs stored there")
    sc.add_argument("--no-db", action="store_true", help="do not store results")
    sc.add_argument("--no-progress", action="store_true", help="no progress output on stderr")

    for name, help_ in (("emulate", "run a scenario over real network stacks on the emulated link (root; docs/emulation.md)"),
                        ("crossval", "run a scenario in the simulator and in emulation; metrics side by side")):
        em = sub.add_parser(name, help=help_)
        em.add_argument("scenario", metavar="SCENARIO.toml")
        em.add_argument("--client", choices=CLIENT_KINDS, default="coaplab",
                        help="which stack plays the clients (default: coaplab's own)")
        em.add_argument("--server", choices=SERVER_KINDS, default="coaplab",
                        help="which stack plays the server (default: coaplab's own)")
        em.add_argument("--replications", type=_positive_int, default=None,
                        help="run at most this many replications of each configuration")
        em.add_argument("--max-seconds", type=_positive_int, default=600,
                        help="stop a run's clients after this many seconds (default 600)")
        em.add_argument("--late-us", type=_positive_int, default=1000,
                        help="mark a run invalid when its delivery lateness p99 exceeds this (µs, default 1000)")
        em.add_argument("--tcp-congestion", choices=("reno", "bbr", "cubic"), default=None,
                        help="the kernel's TCP congestion control (default: reno, the model's New Reno)")
        em.add_argument("--out", metavar="DIR", help="keep each run's pcaps, packet fates and logs in DIR (crossval, TCP: also the simulated and emulated time-sequence graphs of replication 0 as DIR/<name>-<config_id>-rep0-time-sequence.svg; crossval: the report section DIR/crossval.md)")
        em.add_argument("--format", choices=("table", "json"), default="table")
        em.add_argument("--db", metavar="PATH", default=None, help="results database (default: ./coaplab.duckdb)")
        em.add_argument("--no-db", action="store_true", help="do not store results")
        em.add_argument("--no-progress", action="store_true")
    return p


def _cmd_scorecard(args) -> int:
    from ..suites import scorecard

    if args.db is not None and args.no_db:
        raise CoaplabError("--db and --no-db exclude each other")
    db = None if args.no_db else _db(args)
    progress = not args.no_progress
    if args.all:
        if args.target is not None or args.stack is not None:
            raise CoaplabError("--all grades every registered algorithm; drop TARGET and --stack")
        cards = scorecard.leaderboard(args.battery, db=db, jobs=args.jobs, progress=progress)
        if args.format == "json":
            sys.stdout.write("".join(json.dumps(c) + "\n" for c in cards))
        else:
            sys.stdout.write(scorecard.leaderboard_table(cards))
        return 0
    if args.target is None and args.stack is None:
        raise CoaplabError("scorecard: TARGET is required (a registered algorithm, python:FILE:CLASS or c:LIB:NAME), or --all")
    if args.stack is not None:
        if args.battery != "full":
            raise CoaplabError("--battery: not with --stack (an emulated card has its own scaled battery)")
        card, results = scorecard.emulated_scorecard(args.stack, args.target, db=db, progress=progress)
    else:
        card, results = scorecard.scorecard(args.target, args.battery, db=db, jobs=args.jobs, progress=progress)
    if args.out is not None:
        path = scorecard.write_html(card, results, args.out)
        if progress:
            print(f"coaplab: wrote {path}", file=sys.stderr)
    sys.stdout.write(json.dumps(card) + "\n" if args.format == "json" else scorecard.text(card))
    return 0


def _cmd_emulate(args) -> int:
    from ..stacks.crossval import crossval, crossval_table  # lazy: per command (start-up)
    from ..stacks.emulate import emulate, emulation_table  # lazy: per command (start-up)

    if args.no_db and args.db is not None:
        raise CoaplabError("--db and --no-db exclude each other")
    db = None if args.no_db else _db(args)
    kw = {"client": args.client, "server": args.server, "db": db, "replications": args.replications, "out_dir": args.out,
              "max_seconds": float(args.max_seconds), "late_us": float(args.late_us), "progress": not args.no_progress,
              "tcp_congestion": args.tcp_congestion}
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
    from ..present.output import json_lines, table  # lazy: per command (start-up)
    from ..execute.runner import run_scenario  # lazy: per command (start-up)


    if args.no_db and args.db is not None:
        raise CoaplabError("--db and --no-db exclude each other")
    if args.cluster is not None and args.jobs is not None:
        raise CoaplabError("--jobs and --cluster exclude each other (the cluster decides the parallelism)")
    if args.cluster is not None:
        _need_distributed()
    if args.max_output_mb is not None and not args.max_output_mb > 0:
        raise CoaplabError(f"--max-output-mb: {args.max_output_mb:g} is out of range; expected a size in MB > 0")
    if (args.max_output_mb is not None or args.yes) and args.pcap is None:
        raise CoaplabError("--max-output-mb and --yes belong to --pcap; add --pcap DIR or drop them")
    from ..execute.runner import MAX_OUTPUT_MB  # lazy: per command (start-up)

    limit = None if args.yes else (args.max_output_mb or MAX_OUTPUT_MB)
    db = None if args.no_db else _db(args)
    scenario = args.scenario
    if args.diff_by is not None:  # a bad key is refused before anything runs
        from ..analyse.compare import check_key  # lazy: per command (start-up)
        from ..describe.scenario import load_scenario  # lazy: per command (start-up)

        scenario = load_scenario(args.scenario)
        check_key(scenario.configurations(), args.diff_by)
    result = run_scenario(scenario, jobs=args.jobs, progress=not args.no_progress, pcap_dir=args.pcap,
                          trace_dir=args.trace, db=db, cluster=args.cluster, max_output_mb=limit)
    total = sum(c["replications"] for c in result.scenario.configurations())
    if db is not None and result.executed < total and not args.no_progress:
        print(f"coaplab: {total - result.executed} of {total} runs were already stored in {db}; ran {result.executed}",
              file=sys.stderr)
    if result.rerun:
        files = " and ".join(f for f, d in (("pcap", args.pcap), ("trace", args.trace)) if d is not None)
        print(f"coaplab: re-ran {result.rerun} stored runs to write their {files} files; every re-run result equals "
              "the stored one", file=sys.stderr)
    if result.summaries:
        if args.format == "json":
            sys.stdout.write(json_lines(result.summaries) + "\n")
        else:
            from ..analyse.replstats import replication_stats  # lazy: per command (start-up)

            shown = [s if "fct_replications" in s or s["replications"] < 2
                     else {**s, "fct_replications": replication_stats(result.runs[s["config_id"]])} for s in result.summaries]
            sys.stdout.write(table(shown))
        if args.diff_by is not None:
            from ..analyse.compare import pairwise_json, pairwise_table  # lazy: per command (start-up)

            rows = result.differences(args.diff_by)
            sys.stdout.write(pairwise_json(rows) if args.format == "json" else "\n" + pairwise_table(rows))
    if result.failures:
        stored = ("stored as failed; re-run the command to retry them" if db is not None
                  else "not stored: --no-db")
        print(f"coaplab: {len(result.failures)} of {total} runs failed ({stored}):", file=sys.stderr)
        for name, cid, rep, err in result.failures[:20]:
            print(f"  {name} [{cid}] replication {rep}: {err}", file=sys.stderr)
        if len(result.failures) > 20:
            print(f"  ... and {len(result.failures) - 20} more", file=sys.stderr)
        return 1
    return 0


def _db(args) -> str:
    """The results database a command uses: --db, or ./coaplab.duckdb when it is not given. An
    empty --db is refused (it would otherwise silently mean the default)."""
    return _db_path(args.db)


def _db_path(path: str | None) -> str:
    """One --db value (`_db`; commands that take --db twice check each)."""
    from ..execute.store import DEFAULT_DB  # lazy: per command (start-up)

    if path is None:
        return DEFAULT_DB
    if not path.strip():
        raise CoaplabError(f"--db: {path!r} is not allowed; expected a database file name, e.g. --db study.duckdb")
    return path


def _need_distributed() -> None:
    if importlib.util.find_spec("distributed") is None:
        raise CoaplabError("--cluster needs Dask distributed, an optional extra: pip install 'coaplab[cluster]'")


def _cmd_status(args) -> int:
    from ..execute.store import status  # lazy: per command (start-up)

    db = _db(args)
    rows = status(db)
    if args.format == "json":
        for r in rows:
            print(json.dumps({**r, "last_commit": None if r["last_commit"] is None else str(r["last_commit"])}))
        return 0
    if not rows:
        print(f"{db}: no configurations stored yet")
        return 0
    width = max(len("scenario"), *(len(r["scenario"]) for r in rows))
    print(f"{'scenario':<{width}}  configurations  stored  failed   total  last commit")
    for r in rows:
        last = "-" if r["last_commit"] is None else str(r["last_commit"])[:19]
        print(f"{r['scenario']:<{width}}  {r['configurations']:>14}  {r['stored']:>6}  {r['failed']:>6}  {r['total']:>6}  {last}")
    return 0


def _cmd_export(args) -> int:

    from ..execute.tidy import export  # lazy: per command (start-up)

    for path in export(_db(args), args.out, args.format, where=args.where):
        print(path)
    return 0


def _width(text: str):
    if text in ("one", "two"):
        return text
    try:
        w = float(text)
    except ValueError:
        w = -1.0
    if not 1.0 <= w <= 30.0:
        raise CoaplabError(f"--width: {text!r} is not allowed; expected one, two or a width in inches from 1 to 30")
    return w


def _cmd_plot(args) -> int:
    from ..present import figures  # lazy: per command (start-up)
    from ..execute.tidy import load  # lazy: per command (start-up)

    width = _width(args.width)
    if Path(args.out).suffix.lower() not in (".png", ".pdf", ".svg"):
        raise CoaplabError(f"--out: {args.out!r} has no known figure extension; allowed: .png, .pdf, .svg")

    output_file(args.out, "--out")  # before reading the database: a path that cannot be written is one line
    db = _db(args)
    if args.kind in ("load", "mac-drops"):  # meshes: carried load / MAC queue drops vs offered load
        for opt in ("config", "replication", "client", "connection", "x"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: not for --kind {args.kind} (its x axis is the offered load)")
        metric = "carried_kbps" if args.kind == "load" else "mac_queue_drops"
        fig = figures.load_curves(load(db, args.where).summaries(), metric, hue=args.hue, col=args.col, width=width)
    elif args.kind == "drop-causes":  # meshes: MAC drops by cause vs offered load
        for opt in ("config", "replication", "client", "connection", "x", "hue"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: not for --kind drop-causes (x: offered load, lines: coap.cc, rows: cause)")
        fig = figures.drop_cause_curves(load(db, args.where).summaries(), col=args.col, width=width)
    elif args.kind in ("fct", "unnecessary", "histogram", "retransmission-ratio", "completed-pmf", "median-ci"):
        for opt in ("config", "replication", "client", "connection"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: only for --kind time-sequence or rto")
        study = load(db, args.where)
        draw: Callable[..., Any]
        if args.kind == "median-ci":  # markers at the median FCT, whiskers its replication interval
            from ..analyse.compare import median_intervals  # lazy: per command (start-up)

            draw = median_intervals
        else:
            draws: dict[str, Callable[..., Any]] = {
                "fct": figures.fct_boxes, "unnecessary": figures.unnecessary_boxes,
                "histogram": figures.retransmission_histogram,
                "retransmission-ratio": figures.retransmission_ratio_bars, "completed-pmf": figures.completed_pmf}
            draw = draws[args.kind]
        fig = draw(study.summaries(), x=args.x, hue=args.hue, col=args.col, width=width)
    else:
        for opt in ("x", "hue", "col"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: only for --kind fct, unnecessary, histogram, retransmission-ratio, "
                                   "completed-pmf or median-ci")
        fig = _trace_figure(db, args, width)
    print(fig.save(args.out))
    return 0


def _cc_state(trace: dict, direction: str) -> list[dict]:
    """The congestion-controller state rows (BBR) of one stored connection trace and direction."""
    from ..execute.store import CC_STATE_COLUMNS, cc_state_rows  # lazy: per command (start-up)

    rows = cc_state_rows({"seq_traces": [trace]})
    return [dict(zip(CC_STATE_COLUMNS, r)) for r in rows if r[3] == direction]


def _trace_figure(db: str, args, width):
    from ..present import figures  # lazy: per command (start-up)
    from ..execute.store import ResultsDB, sequence_points  # lazy: per command (start-up)
    from ..execute.tidy import label, load, varying  # lazy: per command (start-up)

    study = load(db, args.where)
    if args.config is not None and args.config not in study.configs:
        raise CoaplabError(f"--config: {args.config!r} is not a configuration with finished runs in {db!r}"
                           + (" matching --where" if args.where else ""))
    cids = [args.config] if args.config else list(study.configs)

    def what(cid):
        name = study.configs[cid]["name"]
        keys = varying(c for c in study.configs.values() if c["name"] == name)
        return f"{name}: {label(study.flat[cid], keys)}" if keys else name

    if args.kind in ("queue", "throughput"):
        for opt in ("client", "connection"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: not for --kind {args.kind} (it draws both directions of one run)")
        return _series_figure(study, cids, what, args, width)
    if args.kind == "time-sequence":
        if args.client is not None:
            raise CoaplabError("--client: only for --kind rto (time-sequence graphs pick a --connection)")
        for cid in cids:
            for run in study.runs[cid]:
                if args.replication is not None and run["replication"] != args.replication:
                    continue
                traces = run.get("seq_traces") or []
                if args.connection is not None:
                    traces = [t for t in traces if t["connection"] == args.connection]
                if not traces:
                    continue
                t = max(traces, key=lambda t: sum(p[4] for p in t["points"] if p[1] == args.direction and p[2] == "send"))
                pts = sequence_points(t, args.direction)
                if pts:
                    caption = f"{what(cid)}, replication {run['replication']}, connection {t['connection']} ({args.direction})"
                    return figures.time_sequence(pts, caption, width=width, cc_state=_cc_state(t, args.direction))
        raise CoaplabError("no time-sequence trace matches: run a TCP scenario with trace = true"
                           + "".join(f", {o} {getattr(args, o)}" for o in ("config", "replication", "connection")
                                     if getattr(args, o) is not None))
    if args.connection is not None:
        raise CoaplabError("--connection: only for --kind time-sequence (rto traces pick a --client)")
    with ResultsDB(db, read_only=True) as rdb:
        for cid in cids:
            sql = ("SELECT replication, client FROM traces WHERE config_id = ?"
                   + (" AND replication = ?" if args.replication is not None else "")
                   + (" AND client = ?" if args.client is not None else "") + " ORDER BY replication, client LIMIT 1")
            params = [cid] + [v for v in (args.replication, args.client) if v is not None]
            first = rdb.con.execute(sql, params).fetchone()
            if first is None:
                continue
            rows = rdb.con.execute(
                "SELECT time_s, event, exchange, timer_s, rto_s, sample_s, sample_kind FROM traces "
                "WHERE config_id = ? AND replication = ? AND client = ? ORDER BY time_s", [cid, *first]).fetchall()
            pts = [dict(zip(("time_s", "event", "exchange", "timer_s", "rto_s", "sample_s", "sample_kind"), r)) for r in rows]
            return figures.rto_trace(pts, f"{what(cid)}, replication {first[0]}, client {first[1]}", width=width)
    raise CoaplabError("no timer trace matches: run a UDP scenario with trace = true"
                       + "".join(f", {o} {getattr(args, o)}" for o in ("config", "replication", "client")
                                 if getattr(args, o) is not None))


def _series_figure(study, cids, what, args, width):
    """``--kind queue|throughput``: the first traced run matching --config / --replication."""
    from ..present import figures  # lazy: per command (start-up)
    from ..execute.store import queue_points, series_note, throughput_points  # lazy: per command (start-up)

    queue = args.kind == "queue"
    for cid in cids:
        for run in study.runs[cid]:
            if args.replication is not None and run["replication"] != args.replication:
                continue
            if not run.get("timeseries"):
                continue
            caption = f"{what(cid)}, replication {run['replication']}{series_note(run)}"
            if queue:
                return figures.queue_occupancy(queue_points(run), caption, width=width, end_s=run["sim_time_s"])
            return figures.throughput_series(throughput_points(run), caption, width=width, end_s=run["sim_time_s"])
    raise CoaplabError(f"no {args.kind} time series matches: run a scenario on a star or gprs network with trace = true"
                       + "".join(f", {o} {getattr(args, o)}" for o in ("config", "replication")
                                 if getattr(args, o) is not None))


def _cmd_completion(args) -> int:
    import shtab  # lazy: per command (start-up)

    sys.stdout.write(shtab.complete(_parser(), shell=args.shell))
    return 0


def _cmd_replay(args) -> int:
    from ..present.output import replay_table  # lazy: per command (start-up)

    first = []
    if args.algorithm_file is not None:
        if args.algorithm is not None:
            raise CoaplabError("replay: give either ALGORITHM or --algorithm-file FILE:CLASS, not both")
        first = ["python:" + args.algorithm_file]
    if args.compare:
        if args.algorithm is not None:
            raise CoaplabError("replay: give either ALGORITHM or --compare A,B,..., not both")
        names = first + [n.strip() for n in args.compare.split(",") if n.strip()]
        if len(names) == len(first):
            raise CoaplabError(f"--compare: {args.compare!r} names no algorithm; expected a comma-separated list, "
                               "e.g. --compare default,cocoa")
    elif first:
        names = first
    elif args.algorithm is None:
        raise CoaplabError("replay: ALGORITHM is required (or --compare A,B,... or --algorithm-file FILE:CLASS)")
    else:
        names = [args.algorithm]
    _check_max_retransmit(args.max_retransmit)
    script = load_script(args.script)
    results = {n: replay(n, script, dither=args.dither == "on", seed=args.seed, max_retransmit=args.max_retransmit) for n in names}
    fmt = args.format or ("table" if len(names) > 1 else "json")
    if fmt == "table":
        sys.stdout.write(replay_table(results))
    else:
        out = results[names[0]] if len(names) == 1 else results
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    return 0


def _check_max_retransmit(value: int) -> None:
    """--max-retransmit: the option's own range, checked before any algorithm runs (so that a
    value out of range is not reported as the algorithm's failure)."""
    if value > MAX_MAX_RETRANSMIT:
        raise CoaplabError(f"--max-retransmit: {value} is out of range; expected an integer from 0 to {MAX_MAX_RETRANSMIT}")


def _cmd_check_algorithm(args) -> int:
    from ..describe.algorithm import check_algorithm  # lazy: per command (start-up)

    if not (args.cap > 0 and args.cap < 1e9):
        raise CoaplabError(f"--cap: {args.cap} is out of range; allowed a number of seconds > 0 and < 1e9")
    _check_max_retransmit(args.max_retransmit)
    try:
        failures = check_algorithm(args.spec, args.compare, scripts=args.scripts, seed=args.seed,
                                   max_retransmit=args.max_retransmit, cap=args.cap)
    except ValueError as e:
        raise CoaplabError(str(e).splitlines()[0]) from None
    for line in failures:
        print(f"FAIL {line}")
    if failures:
        return 1
    checked = "no exceptions, timers within bounds, determinism" + (f", equal to {args.compare}" if args.compare else "")
    print(f"ok: {args.spec} passed on {args.scripts} generated scripts, dither off and on ({checked})")
    return 0


def _cmd_bench(args) -> int:
    from ..suites.bench import SUITE_CLIENTS, bench, suite  # lazy: per command (start-up)

    if args.suite:
        transports = ("udp", "tcp") if args.transport is None else (args.transport,)
        sys.stdout.write(suite(transports, args.suite_clients or SUITE_CLIENTS, args.repetitions, args.exchanges))
        return 0
    if args.suite_clients is not None or args.exchanges is not None:
        raise CoaplabError("--suite-clients and --exchanges belong to --suite; add --suite or drop them")
    sys.stdout.write(bench(jobs=args.jobs, replications=args.replications, clients=args.clients,
                           transport=args.transport or "udp"))
    return 0


def _cmd_calibrate(args) -> int:
    from ..suites.calibration import compare, load_reference, render  # lazy: per command (start-up)

    try:
        figures = load_reference(args.reference)
    except (OSError, KeyError, ValueError) as e:
        raise CoaplabError(f"--reference: cannot use {args.reference!r}: {e}") from None
    sys.stdout.write(render(compare(figures, jobs=args.jobs), args.format))
    return 0


def _cmd_reproduce(args) -> int:
    from ..suites.reproduce import available, reproduce  # lazy: per command (start-up)


    if args.list or not args.names:
        for name, desc in available().items():
            print(f"{name:<26} {desc}")
        if not args.list:
            print("coaplab reproduce NAME ...   runs them (see docs/reproduce.md)", file=sys.stderr)
        return 0
    if args.cluster is not None:
        _need_distributed()
    db = None if args.no_db else _db(args)
    sys.stdout.write(reproduce(args.names, jobs=args.jobs, db=db, progress=not args.no_progress, cluster=args.cluster,
                               fmt=args.format))
    return 0


def _cmd_report(args) -> int:
    from ..present.report import write  # lazy: per command (start-up)

    dbs = [_db_path(d) for d in args.db] if args.db else [_db_path(None)]
    if len(dbs) > 2:
        raise CoaplabError(f"--db: given {len(dbs)} times; a report takes one database, or two side by side")
    if len(dbs) == 2:
        from ..analyse.compare import _check_dbs, write_comparison  # lazy: per command (start-up)

        if args.diff_by is not None:
            raise CoaplabError("--diff-by: only with one --db (two databases are compared configuration by configuration)")
        _check_dbs(dbs)
        print(write_comparison(dbs, args.out, ignore=args.ignore, where=args.where))
        return 0
    if args.ignore:
        raise CoaplabError("--ignore: only with two --db (it says which keys to leave out when matching them)")
    print(write(dbs[0], args.out, where=args.where, diff_by=args.diff_by))
    return 0


def _cmd_compare(args) -> int:
    from ..analyse import compare  # lazy: per command (start-up)

    if args.diff_by is not None:
        if len(args.db) != 1:
            raise CoaplabError(f"--diff-by: compares the configurations of one database; given {len(args.db)} --db")
        if args.ignore:
            raise CoaplabError("--ignore: only with two --db (it says which keys to leave out when matching them)")
        from ..execute.tidy import load  # lazy: per command (start-up)

        rows = compare.study_pairwise(load(_db_path(args.db[0]), args.where), args.diff_by)
        sys.stdout.write(compare.pairwise_json(rows) if args.format == "json" else compare.pairwise_table(rows))
        return 0
    compare._check_dbs([_db_path(d) for d in args.db])
    result = compare.compare_studies(args.db[0], args.db[1], ignore=args.ignore, where=args.where)
    sys.stdout.write(compare.compare_json(result) if args.format == "json" else compare.compare_table(result))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {"run": _cmd_run, "replay": _cmd_replay, "bench": _cmd_bench, "calibrate": _cmd_calibrate,
                "export": _cmd_export, "status": _cmd_status, "reproduce": _cmd_reproduce, "report": _cmd_report,
                "plot": _cmd_plot, "completion": _cmd_completion, "compare": _cmd_compare,
                "check-algorithm": _cmd_check_algorithm, "emulate": _cmd_emulate, "crossval": _cmd_emulate,
                "scorecard": _cmd_scorecard}[args.command](args)
    except CoaplabError as e:
        print(f"coaplab: error: {e}", file=sys.stderr)
        return getattr(e, "exit_code", 2)
    except BrokenPipeError:  # `coaplab ... | head`: the reader left; not an error of ours
        # Before `except Exception` (BrokenPipeError is one). Later writes (the final flush
        # at exit) go to /dev/null instead of raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        _interrupted()
    except Exception as e:
        from ..execute.store import is_interrupt  # lazy: per command (start-up)

        if not is_interrupt(e):  # Ctrl-C during a database query comes back as this
            raise
        _interrupted()


def _interrupted() -> NoReturn:
    print("coaplab: interrupted", file=sys.stderr)
    # Exit now: the runs still in progress were cancelled and are not stored (the results
    # database is closed); waiting for their threads would delay the exit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
