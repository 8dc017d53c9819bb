"""What the commands share: the argument types and help texts used by several, the results
database option, and the subcommand parser with worked examples."""

from __future__ import annotations

import argparse
import importlib.util

from ..describe.replay import MAX_MAX_RETRANSMIT
from ..errors import CoaplabError


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (what is wrong and what is allowed, as
    argparse words it, plus where the full usage is) and exit code 2 — argparse's default
    prints the whole usage block first. Subcommand parsers inherit this class."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def int_at_least(lo: int):
    """An argparse type: an integer >= lo, with a message naming the bad value."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{v} is out of range; expected an integer >= {lo}")
        return v

    return parse


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)


DB_HELP = "results database (default: ./coaplab.duckdb)"
WHERE_HELP = ("keep the configurations for which this SQL condition on dotted configuration keys holds, "
               "e.g. \"coap.cc in ('cocoa','fasor') and link.buffer_bytes > 2500\"")
DIFF_BY_HELP = ("after the summaries, the pairwise differences between configurations that differ only in this "
                 "dotted key (e.g. coap.cc): median FCT, unnecessary retransmissions per client and throughput, each "
                 "with a 95 %% bootstrap CI over replications and a Mann-Whitney U test (docs/experiments.md, "
                 "'Differences')")
KEY_HELP = "a dotted configuration key (link.buffer_bytes, coap.cc, coap.nstart, ...) or group"


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)


def int_list(text: str) -> list[int]:
    """An argparse type: a comma-separated list of integers >= 1."""
    out = []
    for part in text.split(","):
        try:
            v = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r} in {text!r} is not an integer; "
                                             "expected a comma-separated list of integers >= 1") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{v} in {text!r} is out of range; expected integers >= 1")
        out.append(v)
    return out


DB_HELP = "results database (default: ./coaplab.duckdb)"
WHERE_HELP = ("keep the configurations for which this SQL condition on dotted configuration keys holds, "
               "e.g. \"coap.cc in ('cocoa','fasor') and link.buffer_bytes > 2500\"")
DIFF_BY_HELP = ("after the summaries, the pairwise differences between configurations that differ only in this "
                 "dotted key (e.g. coap.cc): median FCT, unnecessary retransmissions per client and throughput, each "
                 "with a 95 %% bootstrap CI over replications and a Mann-Whitney U test (docs/experiments.md, "
                 "'Differences')")
KEY_HELP = "a dotted configuration key (link.buffer_bytes, coap.cc, coap.nstart, ...) or group"


def sub_parser(sub, name: str, help: str, examples: str, description: str | None = None) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with worked examples."""
    return sub.add_parser(name, help=help, description=description or help[0].upper() + help[1:] + ".",
                          epilog="examples:\n" + examples, formatter_class=argparse.RawDescriptionHelpFormatter)


def db_arg(args) -> str:
    """The results database a command uses: --db, or ./coaplab.duckdb when it is not given. An
    empty --db is refused (it would otherwise silently mean the default)."""
    return db_path(args.db)


def db_path(path: str | None) -> str:
    """One --db value (`db_arg`; commands that take --db twice check each)."""
    from ..execute.store import DEFAULT_DB  # lazy: per command (start-up)

    if path is None:
        return DEFAULT_DB
    if not path.strip():
        raise CoaplabError(f"--db: {path!r} is not allowed; expected a database file name, e.g. --db study.duckdb")
    from ..files import input_file  # lazy: per command (start-up)

    input_file(path, "--db", "database file", missing_ok=True)  # before any work: too long, a pipe, a directory
    return path


def add_plugin_timeout(p: argparse.ArgumentParser) -> None:
    """``--plugin-timeout S``: the per-call time limit of python:/c: algorithms."""
    p.add_argument("--plugin-timeout", type=float, metavar="S", default=None,
                   help="end a python:/c: algorithm whose call does not return within S seconds (default: 10; "
                        "plug-ins run in a supervised worker process, docs/algorithms.md)")


def apply_plugin_timeout(args) -> None:
    """Sets ``--plugin-timeout`` (when given) for the plug-ins this command runs."""
    if getattr(args, "plugin_timeout", None) is not None:
        from ..execute.supervise import set_plugin_timeout  # lazy: per command (start-up)

        set_plugin_timeout(args.plugin_timeout)


def need_distributed() -> None:
    if importlib.util.find_spec("distributed") is None:
        raise CoaplabError("--cluster needs Dask distributed, an optional extra: pip install 'coaplab[cluster]'")


def check_max_retransmit(value: int) -> None:
    """--max-retransmit: the option's own range, checked before any algorithm runs (so that a
    value out of range is not reported as the algorithm's failure)."""
    if value > MAX_MAX_RETRANSMIT:
        raise CoaplabError(f"--max-retransmit: {value} is out of range; expected an integer from 0 to {MAX_MAX_RETRANSMIT}")
