"""``coaplab crossval``: run a scenario in the simulator and in emulation; metrics side by side
(the options are ``coaplab emulate``'s)."""

from __future__ import annotations

import argparse
import json
import sys

from .emulate import add_emulation_parser, emulation_options

NAME = "crossval"


def add_parser(sub) -> argparse.ArgumentParser:
    return add_emulation_parser(sub, NAME, "run a scenario in the simulator and in emulation; metrics side by side")


def main(args) -> int:
    from ..stacks.crossval import crossval, crossval_table  # lazy: per command (start-up)

    pairs = crossval(args.scenario, **emulation_options(args))
    if args.format == "json":
        sys.stdout.write(json.dumps([{"simulated": a, "emulated": b} for a, b in pairs], sort_keys=True) + "\n")
    else:
        sys.stdout.write(crossval_table(pairs))
    return 0 if all(b["emulation"]["invalid_runs"] == 0 for _, b in pairs) else 1
