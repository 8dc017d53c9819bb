"""``coaplab check-algorithm``: check an algorithm written in Python or C against a property suite."""

from __future__ import annotations

import argparse

from ..errors import CoaplabError
from .common import (
    add_plugin_timeout,
    apply_plugin_timeout,
    check_max_retransmit,
    non_negative_int,
    positive_int,
    sub_parser,
)

NAME = "check-algorithm"


def add_parser(sub) -> argparse.ArgumentParser:
    ca = sub_parser(sub, NAME, "check an algorithm written in Python or C against a property suite",
       "  coaplab check-algorithm my.py:MyAlgo\n"
       "  coaplab check-algorithm examples/algorithms/cocoa_py.py:CocoaPy --compare cocoa\n"
       "  coaplab check-algorithm c:./libmycc.so:mycc")
    ca.add_argument("spec", metavar="FILE:CLASS", help="the file and its coaplab.Algorithm subclass, e.g. my.py:MyAlgo, "
                    "or c:LIB:NAME, a shared library implementing the C API (docs/c-api.md)")
    ca.add_argument("--compare", metavar="ALGORITHM", help="also require identical replay output to this built-in algorithm, e.g. cocoa")
    ca.add_argument("--scripts", type=positive_int, default=50, help="generated scripts (default: 50; at most 100000)")
    ca.add_argument("--seed", type=non_negative_int, default=0, help="seed of the generated scripts and dithering (default: 0)")
    ca.add_argument("--max-retransmit", type=non_negative_int, default=4, help="MAX_RETRANSMIT (default: 4, RFC 7252's)")
    ca.add_argument("--cap", type=float, default=60.0, help="largest timer allowed, s (default: 60, the shared cap)")
    add_plugin_timeout(ca)
    return ca


def main(args) -> int:
    from ..describe.algorithm_check import MAX_SCRIPTS, check_algorithm, subject_name  # lazy: per command (start-up)
    from ..execute.supervise import supervised  # lazy: per command (start-up)

    apply_plugin_timeout(args)
    if args.scripts > MAX_SCRIPTS:
        raise CoaplabError(f"--scripts: {args.scripts} is out of range; expected an integer from 1 to {MAX_SCRIPTS}")
    if args.seed > 2**64 - args.scripts:  # script i replays with seed + i, a 64-bit seed
        raise CoaplabError(f"--seed: {args.seed} is out of range; expected an integer from 0 to 2^64 - SCRIPTS "
                           f"({2**64 - args.scripts} with --scripts {args.scripts})")
    if not (args.cap > 0 and args.cap < 1e9):
        raise CoaplabError(f"--cap: {args.cap} is out of range; allowed a number of seconds > 0 and < 1e9")
    check_max_retransmit(args.max_retransmit)
    try:
        # In a supervised worker process: a crash, exit or hang of the algorithm is one line.
        failures = supervised(subject_name(args.spec), "", check_algorithm, args.spec, args.compare, args.scripts,
                              args.seed, args.max_retransmit, args.cap)
    except ValueError as e:
        raise CoaplabError(str(e).splitlines()[0]) from None
    for line in failures:
        print(f"FAIL {line}")
    if failures:
        return 1
    checked = "no exceptions, timers within bounds, determinism" + (f", equal to {args.compare}" if args.compare else "")
    print(f"ok: {args.spec} passed on {args.scripts} generated scripts, dither off and on ({checked})")
    return 0
