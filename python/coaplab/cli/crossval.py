"""``coaplab crossval``: run a scenario in the simulator and in emulation; metrics side by side
(the options are ``coaplab emulate``'s)."""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import CoaplabError
from .emulate import add_emulation_parser, emulation_options

NAME = "crossval"


def add_parser(sub) -> argparse.ArgumentParser:
    p = add_emulation_parser(sub, NAME, "run a scenario in the simulator and in emulation; metrics side by side")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="also run configurations whose coap.cc the client stack does not run (libcoap and aiocoap "
                        "run RFC 7252's fixed timers), each row labelled with what each side ran (default: refused)")
    return p


def main(args) -> int:
    from ..stacks.crossval import crossval, crossval_table  # lazy: per command (start-up)

    if args.tp_workload:
        raise CoaplabError(f"--tp-workload: {args.tp_workload!r} with crossval: the simulator has no such workload in this "
                           "version; allowed: coaplab emulate --tp-workload (docs/emulation.md \"Observe, libcoap\")")
    pairs = crossval(args.scenario, **emulation_options(args), allow_mismatch=args.allow_mismatch)
    if args.format == "json":
        sys.stdout.write(json.dumps([{"simulated": a, "emulated": b} for a, b in pairs], sort_keys=True) + "\n")
    else:
        sys.stdout.write(crossval_table(pairs))
    return 0 if all(b["emulation"]["invalid_runs"] == 0 for _, b in pairs) else 1
