"""``coaplab export``: export the results database as parquet or csv files."""

from __future__ import annotations

import argparse

from .common import DB_HELP, WHERE_HELP, db_arg, sub_parser

NAME = "export"


def add_parser(sub) -> argparse.ArgumentParser:
    exp = sub_parser(sub, NAME, "export the results database as parquet or csv files",
                 "  coaplab export --out out/tables\n"
                 "  coaplab export --db study.duckdb --format csv --out out/csv --where \"coap.cc = 'cocoa'\"",
                 description="Export the results database: configs, runs, clients, traces, time_sequence (TCP "
                             "time-sequence traces) and cc_state (BBR's state: mode, BtlBw, RTprop, pacing rate, cwnd), "
                             "each starting with config_id and one column per configuration "
                             "parameter that varies across the exported configurations (dotted names such as coap.cc).")
    exp.add_argument("--db", metavar="PATH", default=None, help=DB_HELP)
    exp.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="file format (default: parquet)")
    exp.add_argument("--out", metavar="DIR", required=True, help="directory to write the tables into, e.g. out/tables")
    exp.add_argument("--where", metavar="CONDITION", help=WHERE_HELP)
    return exp


def main(args) -> int:

    from ..execute.tidy import export  # lazy: per command (start-up)

    for path in export(db_arg(args), args.out, args.format, where=args.where):
        print(path)
    return 0
