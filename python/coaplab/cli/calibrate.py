"""``coaplab calibrate``: published vs. simulated for the reference figures."""

from __future__ import annotations

import argparse
import sys

from ..errors import CoaplabError
from .common import positive_int, sub_parser

NAME = "calibrate"


def add_parser(sub) -> argparse.ArgumentParser:
    cal = sub_parser(sub, NAME, "published vs. simulated for the reference figures",
              "  coaplab calibrate\n  coaplab calibrate --format json > calibration.jsonl\n"
              "  coaplab calibrate --reference my-published.toml --jobs 2 --format csv")
    cal.add_argument("--reference", metavar="PATH", help="published.toml (default: the packaged copy)")
    cal.add_argument("--jobs", type=positive_int, default=None, help="parallel runs (default: number of cores)")
    cal.add_argument("--format", choices=("markdown", "json", "csv"), default="markdown",
                     help="markdown table (default), JSON Lines (one object per figure, column and statistic) or CSV")
    return cal


def main(args) -> int:
    from ..suites.calibration import compare, load_reference, render  # lazy: per command (start-up)

    try:
        figures = load_reference(args.reference)
    except (OSError, KeyError, ValueError) as e:
        raise CoaplabError(f"--reference: cannot use {args.reference!r}: {e}") from None
    sys.stdout.write(render(compare(figures, jobs=args.jobs), args.format))
    return 0
