"""``coaplab replay``: replay algorithms on a script of exchanges."""

from __future__ import annotations

import argparse
import json
import sys

from ..describe.replay import load_script, replay
from ..errors import CoaplabError
from .common import add_plugin_timeout, apply_plugin_timeout, check_max_retransmit, non_negative_int, sub_parser

NAME = "replay"


def add_parser(sub) -> argparse.ArgumentParser:
    rp = sub_parser(sub, NAME, "replay algorithms on a script of exchanges",
                "  coaplab replay cocoa script.json\n"
                "  coaplab replay --compare default,cocoa,fasor script.json --dither on --seed 3\n"
                "  coaplab replay --algorithm-file my.py:MyAlgo script.json --compare cocoa")
    rp.add_argument("algorithm", nargs="?", metavar="ALGORITHM", help="the algorithm to replay, e.g. cocoa (see docs/algorithms.md), "
                    "python:FILE:CLASS or c:LIB:NAME (docs/c-api.md)")
    rp.add_argument("script", metavar="SCRIPT.json", help="the script of exchanges (JSON)")
    rp.add_argument("--compare", metavar="A,B,...", help="replay several algorithms and print them side by side, e.g. --compare default,cocoa")
    rp.add_argument("--dither", choices=("on", "off"), default="off", help="randomise initial timers as RFC 7252 does (default: off)")
    rp.add_argument("--seed", type=non_negative_int, default=0, help="seed of the dithering, e.g. --seed 3 (default: 0)")
    rp.add_argument("--max-retransmit", type=non_negative_int, default=4, help="MAX_RETRANSMIT (default: 4, RFC 7252's)")
    rp.add_argument("--format", choices=("json", "table"), default=None, help="json for one algorithm, table for --compare (defaults)")
    rp.add_argument("--algorithm-file", metavar="FILE:CLASS",
                    help="replay an algorithm written in Python (a coaplab.Algorithm subclass), e.g. my.py:MyAlgo; "
                         "with --compare, it is shown first")
    add_plugin_timeout(rp)
    return rp


def main(args) -> int:
    from ..execute.supervise import is_plugin, supervised  # lazy: per command (start-up)
    from ..present.output import replay_table  # lazy: per command (start-up)

    apply_plugin_timeout(args)

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
    check_max_retransmit(args.max_retransmit)
    script = load_script(args.script)
    # A python:/c: algorithm replays in a supervised worker process (a crash, exit or hang is one line).
    results = {n: (supervised(n, "", replay, n, script, args.dither == "on", args.seed, args.max_retransmit) if is_plugin(n)
                   else replay(n, script, dither=args.dither == "on", seed=args.seed, max_retransmit=args.max_retransmit))
               for n in names}
    fmt = args.format or ("table" if len(names) > 1 else "json")
    if fmt == "table":
        sys.stdout.write(replay_table(results))
    else:
        out = results[names[0]] if len(names) == 1 else results
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    return 0
