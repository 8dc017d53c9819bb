"""``coaplab advise``: the CoAP settings a deployment should use, safely (docs/advise.md)."""

from __future__ import annotations

import argparse
import json
import sys

from ..files import output_in
from .common import DB_HELP, db_arg, positive_int, sub_parser

NAME = "advise"


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub_parser(sub, NAME, "tune a deployment's CoAP settings under the scorecard's safety criteria (docs/advise.md)",
                   "  coaplab advise examples/advise-star.toml --out out/advise\n"
                   "  coaplab advise examples/advise-star.toml --compare \"ack_timeout_s=15,cc=default\"\n"
                   "  coaplab advise examples/advise-gprs.toml --format json > answer.json")
    p.add_argument("deployment", metavar="DEPLOYMENT.toml",
                   help="a scenario file (any network) with an [advise] table: knobs, objectives, budget")
    p.add_argument("--compare", action="append", default=[], metavar="SETTING",
                   help="a stack's shipped setting to place beside the answer, e.g. \"ack_timeout_s=15,cc=default\" "
                        "(knobs not named take RFC 7252's defaults); repeatable")
    p.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or one JSON object")
    p.add_argument("--out", metavar="DIR", help="write DIR/index.html, DIR/front.svg and DIR/advise.json")
    p.add_argument("--jobs", type=positive_int, default=None, help="parallel runs (default: number of cores)")
    p.add_argument("--db", metavar="PATH", default=None, help=DB_HELP + "; a second call re-runs nothing stored there")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    return p


def main(args) -> int:
    from ..suites import advise, advise_report  # lazy: per command (start-up)

    db = db_arg(args)
    if args.out is not None:  # before any run: an --out that cannot be written is one line
        output_in(args.out, "index.html", "--out")
    progress = not args.no_progress
    ans, objectives = advise.advise(args.deployment, db=db, jobs=args.jobs, compare=tuple(args.compare),
                                    progress=progress)
    if args.out is not None:
        from ..files import atomic_write  # lazy: per command (start-up)

        path = advise_report.write_html(ans, objectives, args.out)
        with atomic_write(output_in(args.out, "advise.json", "--out"), "w", encoding="utf-8") as f:
            f.write(json.dumps(ans, indent=1) + "\n")
        if progress:
            print(f"coaplab: wrote {path}", file=sys.stderr)
    if args.format == "json":
        sys.stdout.write(json.dumps(ans) + "\n")
    else:
        sys.stdout.write(advise_report.text(ans, objectives))
    return 0 if ans["pareto_front"] else 1  # no safe candidate: the answer says so, exit 1
