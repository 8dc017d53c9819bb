"""The ``coaplab`` command (docs/design.md §7.2). User errors print one line and exit 2.

One module per command (``run.py``, ``report.py``, ...), each with its ``NAME``,
``add_parser(sub)`` (the subcommand's options and help) and ``main(args)`` (its exit code);
:data:`COMMANDS` lists them in the order ``coaplab --help`` shows them, and is the only place
that names them all (CONTRIBUTING.md, "Adding a CLI command")."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from .. import __version__
from ..errors import CoaplabError
from . import (
    advise,
    bench,
    calibrate,
    check_algorithm,
    compare,
    completion,
    crossval,
    emulate,
    examples,
    export,
    plot,
    replay,
    report,
    reproduce,
    run,
    scorecard,
    setup,
    status,
)
from .common import Parser

COMMANDS = (run, export, status, replay, check_algorithm, calibrate, report, compare, plot, reproduce, completion,
            bench, scorecard, advise, emulate, crossval, setup, examples)


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="coaplab", description="A laboratory for CoAP congestion control.",
        epilog="examples:\n  coaplab run examples/quick.toml\n  coaplab report --out out/report\n"
               "  coaplab plot --kind fct --x link.buffer_bytes --hue coap.cc --out fig.pdf\n"
               "  coaplab COMMAND --help      (every command's options, with examples)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"coaplab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    # `coaplab completion` writes the script of this whole parser, which only this module builds.
    p.set_defaults(root_parser=p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return {c.NAME: c for c in COMMANDS}[args.command].main(args)
    except CoaplabError as e:
        print(f"coaplab: error: {e}", file=sys.stderr)
        return getattr(e, "exit_code", 2)
    except BrokenPipeError:  # `coaplab ... | head`: the reader left; not an error of ours
        # Before `except Exception` (BrokenPipeError is one). Later writes (the final flush
        # at exit) go to /dev/null instead of raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        _interrupted()
    except Exception as e:
        from ..execute.store import is_interrupt  # lazy: per command (start-up)

        # Ctrl-C during a database query comes back as DuckDB's own error; one landing in a
        # write (pandas, inside the store's transaction) can surface as the error its clean-up
        # raised, with the interrupt as its context: both are the user's Ctrl-C.
        if not any(is_interrupt(c) or isinstance(c, KeyboardInterrupt) for c in _chain(e)):
            raise
        _interrupted()


def _chain(error: BaseException) -> list[BaseException]:
    """`error` and the exceptions it was raised from or while handling (bounded: no cycles)."""
    seen: list[BaseException] = []
    cur: BaseException | None = error
    while cur is not None and cur not in seen and len(seen) < 32:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def _interrupted() -> NoReturn:
    print("coaplab: interrupted", file=sys.stderr)
    if "coaplab.execute.supervise" in sys.modules:  # the plug-ins' worker processes end with us
        sys.modules["coaplab.execute.supervise"].stop_all()
    # Exit now: the runs still in progress were cancelled and are not stored (the results
    # database is closed); waiting for their threads would delay the exit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)
