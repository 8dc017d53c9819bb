"""``coaplab status``: what a results database holds, also while a sweep writes it."""

from __future__ import annotations

import argparse
import json

from .common import DB_HELP, db_arg, sub_parser

NAME = "status"


def add_parser(sub) -> argparse.ArgumentParser:
    st = sub_parser(sub, NAME, "what a results database holds, also while a sweep writes it",
                "  coaplab status\n  coaplab status --db study.duckdb --format json",
                description="Per scenario name: configurations, runs stored / failed / total (the replications of the "
                            "stored configurations) and the time of the last commit. It reads the database while a "
                            "sweep is running (docs/experiments.md, 'Reading while a sweep runs').")
    st.add_argument("--db", metavar="PATH", default=None, help=DB_HELP)
    st.add_argument("--format", choices=("table", "json"), default="table", help="table (default) or JSON Lines")
    return st


def main(args) -> int:
    from ..execute.store import status  # lazy: per command (start-up)

    db = db_arg(args)
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
