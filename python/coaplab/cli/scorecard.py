"""``coaplab scorecard``: grade an algorithm's congestion safety on the literature's battery (docs/scorecard.md)."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import CoaplabError
from ..files import output_in
from ..stacks import CLIENT_KINDS  # not .emulate: its imports would slow every command
from .common import DB_HELP, add_plugin_timeout, apply_plugin_timeout, db_arg, positive_int, sub_parser

NAME = "scorecard"


def add_parser(sub) -> argparse.ArgumentParser:
    sc = sub_parser(sub, NAME, "grade an algorithm's congestion safety on the literature's battery (docs/scorecard.md)",
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
    sc.add_argument("--jobs", type=positive_int, default=None, help="parallel runs (default: number of cores)")
    sc.add_argument("--db", metavar="PATH", default=None, help=DB_HELP + "; a card resumes from the runs stored there")
    sc.add_argument("--no-db", action="store_true", help="do not store results")
    sc.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    add_plugin_timeout(sc)
    return sc


def main(args) -> int:
    from ..suites import scorecard

    apply_plugin_timeout(args)
    if args.db is not None and args.no_db:
        raise CoaplabError("--db and --no-db exclude each other")
    db = None if args.no_db else db_arg(args)
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
    if args.out is not None:  # before the battery: an --out that cannot be written is one line
        output_in(args.out, "index.html", "--out")
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
