"""``coaplab emulate``: run a scenario over real network stacks on the emulated link (root;
docs/emulation.md); its options are ``coaplab crossval``'s too."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from .._core import tcp_controllers
from ..errors import CoaplabError
from ..stacks import CLIENT_KINDS, SERVER_KINDS  # not .emulate: its imports would slow every command
from .common import db_arg, positive_int

NAME = "emulate"

#: The kernel's TCP congestion controls that ``--tcp-congestion`` offers: the TCP model's
#: controllers (the engine's registry), by Linux's names (New Reno is ``reno`` there).
KERNEL_CONGESTION = tuple("reno" if c == "newreno" else c for c in tcp_controllers())


def add_parser(sub) -> argparse.ArgumentParser:
    return add_emulation_parser(sub, NAME, "run a scenario over real network stacks on the emulated link (root; docs/emulation.md)")


def add_emulation_parser(sub, name: str, help_: str) -> argparse.ArgumentParser:
    """The parser of ``emulate`` or ``crossval`` (the same options)."""
    em = sub.add_parser(name, help=help_)
    em.add_argument("scenario", metavar="SCENARIO.toml")
    em.add_argument("--client", choices=CLIENT_KINDS, default="coaplab",
                    help="which stack plays the clients (default: coaplab's own)")
    em.add_argument("--server", choices=SERVER_KINDS, default="coaplab",
                    help="which stack plays the server (default: coaplab's own)")
    em.add_argument("--replications", type=positive_int, default=None,
                    help="run at most this many replications of each configuration")
    em.add_argument("--max-seconds", type=positive_int, default=600,
                    help="stop a run's clients after this many seconds (default 600)")
    em.add_argument("--late-us", type=positive_int, default=1000,
                    help="mark a run invalid when its delivery lateness p99 exceeds this (µs, default 1000)")
    em.add_argument("--tcp-congestion", choices=KERNEL_CONGESTION, default=None,
                    help="the kernel's TCP congestion control (default: reno, the model's New Reno)")
    em.add_argument("--out", metavar="DIR", help="keep each run's pcaps, packet fates and logs in DIR (crossval, TCP: also the simulated and emulated time-sequence graphs of replication 0 as DIR/<name>-<config_id>-rep0-time-sequence.svg; crossval: the report section DIR/crossval.md)")
    em.add_argument("--tp-workload", choices=("observe", "q-block"), default=None,
                    help="a workload only third-party stacks run (emulate; docs/emulation.md \"Observe, libcoap\")")
    em.add_argument("--format", choices=("table", "json"), default="table")
    em.add_argument("--db", metavar="PATH", default=None, help="results database (default: ./coaplab.duckdb)")
    em.add_argument("--no-db", action="store_true", help="do not store results")
    em.add_argument("--no-progress", action="store_true")
    return em


def emulation_options(args) -> dict[str, Any]:
    """The keyword arguments of :func:`coaplab.stacks.emulate.emulate` / ``crossval`` from the
    command line, after refusing --db with --no-db."""
    if args.no_db and args.db is not None:
        raise CoaplabError("--db and --no-db exclude each other")
    db = None if args.no_db else os.path.abspath(db_arg(args))
    out = None if args.out is None else out_directory(args.out)
    return {"client": args.client, "server": args.server, "db": db, "replications": args.replications, "out_dir": out,
            "max_seconds": float(args.max_seconds), "late_us": float(args.late_us), "progress": not args.no_progress,
            "tcp_congestion": args.tcp_congestion, **({"tp_workload": args.tp_workload} if args.tp_workload else {})}


#: The longest file name component Linux file systems take (NAME_MAX), bytes.
NAME_MAX = 255


def out_directory(path: str) -> str:
    """``--out DIR`` resolved to an absolute path, before anything runs: refused in one line
    when it names an existing file, or has a component longer than the file system allows."""
    if not path.strip():
        raise CoaplabError(f"--out: {path!r} is not allowed; expected a directory, e.g. --out out/emulated")
    longest = max(os.fsencode(path).split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        raise CoaplabError(f"--out: a path component of {len(longest)} bytes; allowed: at most {NAME_MAX} bytes each")
    if os.path.exists(path) and not os.path.isdir(path):
        raise CoaplabError(f"--out: {path!r} is not a directory; expected a directory (made if missing)")
    return os.path.abspath(path)


def main(args) -> int:
    from ..stacks.emulate import emulate, emulation_table  # lazy: per command (start-up)

    summaries = emulate(args.scenario, **emulation_options(args))
    sys.stdout.write(json.dumps(summaries, sort_keys=True) + "\n" if args.format == "json" else emulation_table(summaries))
    return 0 if all(s["emulation"]["invalid_runs"] == 0 for s in summaries) else 1
