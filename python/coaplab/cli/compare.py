"""``coaplab compare``: compare two studies, or the configurations of one, with confidence intervals."""

from __future__ import annotations

import argparse
import sys

from ..errors import CoaplabError
from .common import WHERE_HELP, db_path, sub_parser

NAME = "compare"


def add_parser(sub) -> argparse.ArgumentParser:
    cmp_ = sub_parser(sub, NAME, "compare two studies, or the configurations of one, with confidence intervals",
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
    cmp_.add_argument("--where", metavar="CONDITION", help=WHERE_HELP)
    cmp_.add_argument("--format", choices=("table", "json"), default="table",
                      help="table (default) or JSON Lines (one object per matched configuration or pair)")
    return cmp_


def main(args) -> int:
    from ..present import compare  # lazy: per command (start-up)

    if args.diff_by is not None:
        if len(args.db) != 1:
            raise CoaplabError(f"--diff-by: compares the configurations of one database; given {len(args.db)} --db")
        if args.ignore:
            raise CoaplabError("--ignore: only with two --db (it says which keys to leave out when matching them)")
        from ..execute.tidy import load  # lazy: per command (start-up)

        rows = compare.study_pairwise(load(db_path(args.db[0]), args.where), args.diff_by)
        sys.stdout.write(compare.pairwise_json(rows) if args.format == "json" else compare.pairwise_table(rows))
        return 0
    compare.check_dbs([db_path(d) for d in args.db])
    result = compare.compare_studies(args.db[0], args.db[1], ignore=args.ignore, where=args.where)
    sys.stdout.write(compare.compare_json(result) if args.format == "json" else compare.compare_table(result))
    if args.format == "json" and result["differ"]:
        print(f"coaplab: {compare.no_match_hint(result['differ'])}", file=sys.stderr)
    return 0
