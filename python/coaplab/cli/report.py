"""``coaplab report``: a self-contained HTML report from the results database."""

from __future__ import annotations

import argparse

from ..errors import CoaplabError
from .common import DB_HELP, WHERE_HELP, db_path, sub_parser

NAME = "report"


def add_parser(sub) -> argparse.ArgumentParser:
    rp2 = sub_parser(sub, NAME, "a self-contained HTML report from the results database",
                 "  coaplab report --out out/report\n"
                 "  coaplab report --db study.duckdb --out out/report --where \"workload.clients = 400\"")
    rp2.add_argument("--db", metavar="PATH", action="append", default=None,
                     help=DB_HELP + "; twice (--db A --db B): the two studies side by side (as coaplab compare)")
    rp2.add_argument("--out", metavar="DIR", required=True, help="directory for index.html, e.g. out/report")
    rp2.add_argument("--where", metavar="CONDITION", help=WHERE_HELP)
    rp2.add_argument("--diff-by", metavar="KEY", help="one database: the key of each scenario's pairwise differences "
                     "(default: coap.cc where it varies)")
    rp2.add_argument("--ignore", metavar="KEY", action="append", default=[],
                     help="two databases: leave this key out when matching configurations (repeatable)")
    return rp2


def main(args) -> int:
    from ..present.report import write  # lazy: per command (start-up)

    dbs = [db_path(d) for d in args.db] if args.db else [db_path(None)]
    if len(dbs) > 2:
        raise CoaplabError(f"--db: given {len(dbs)} times; a report takes one database, or two side by side")
    if len(dbs) == 2:
        from ..present.compare import check_dbs, write_comparison  # lazy: per command (start-up)

        if args.diff_by is not None:
            raise CoaplabError("--diff-by: only with one --db (two databases are compared configuration by configuration)")
        check_dbs(dbs)
        print(write_comparison(dbs, args.out, ignore=args.ignore, where=args.where))
        return 0
    if args.ignore:
        raise CoaplabError("--ignore: only with two --db (it says which keys to leave out when matching them)")
    print(write(dbs[0], args.out, where=args.where, diff_by=args.diff_by))
    return 0
