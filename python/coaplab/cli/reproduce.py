"""``coaplab reproduce``: re-run published experiments; published vs. simulated side by side."""

from __future__ import annotations

import argparse
import sys

from .common import DB_HELP, db_arg, need_distributed, positive_int, sub_parser

NAME = "reproduce"


def add_parser(sub) -> argparse.ArgumentParser:
    rep = sub_parser(sub, NAME, "re-run published experiments; published vs. simulated side by side",
              "  coaplab reproduce --list\n  coaplab reproduce udp-1client-continuous firmware\n"
              "  coaplab reproduce cooja-dumbbell --details\n"
              "  coaplab reproduce udp-continuous-matrix --format json > matrix.jsonl\n"
              "(docs/reproduce.md describes every experiment)")
    rep.add_argument("names", nargs="*", metavar="NAME", help="built-in experiments to run (see --list)")
    rep.add_argument("--list", action="store_true", help="list the built-in experiments")
    rep.add_argument("--jobs", type=positive_int, default=None, help="parallel runs (default: number of cores)")
    rep.add_argument("--cluster", metavar="WHERE", help="run on a Dask cluster (local:N, slurm:FILE.toml, pbs:FILE.toml, "
                     "ssh:HOST1,HOST2,… or tcp://host:8786; needs coaplab[cluster]; docs/cluster.md)")
    rep.add_argument("--db", metavar="PATH", default=None, help=DB_HELP)
    rep.add_argument("--no-db", action="store_true", help="do not store results")
    rep.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    rep.add_argument("--format", choices=("text", "json", "csv", "markdown"), default="text",
                     help="text: the verdicts, one row per published figure, then the statements (default); json: "
                          "JSON Lines, one object per verdict; csv; markdown: the verdict tables")
    rep.add_argument("--details", action="store_true",
                     help="after the verdicts, every configuration's simulated figures (text: a block per "
                          "configuration; json/csv: its percentiles)")
    return rep


def main(args) -> int:
    from ..suites.reproduce import available, reproduce  # lazy: per command (start-up)

    if args.list or not args.names:
        for name, desc in available().items():
            print(f"{name:<26} {desc}")
        if not args.list:
            print("coaplab reproduce NAME ...   runs them (see docs/reproduce.md)", file=sys.stderr)
        return 0
    if args.cluster is not None:
        need_distributed()
    db = None if args.no_db else db_arg(args)
    sys.stdout.write(reproduce(args.names, jobs=args.jobs, db=db, progress=not args.no_progress, cluster=args.cluster,
                               fmt=args.format, details=args.details))
    return 0
