"""``coaplab examples DIR``: copy the examples this package ships (scenario files, algorithm
plug-ins in Python and C, notebooks, investigations) and the C header ``coaplab_cc.h`` into DIR."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import sub_parser

NAME = "examples"
#: What is not copied: Python's byte-code caches and Jupyter's checkpoints.
SKIPPED = ("__pycache__", ".ipynb_checkpoints")
#: Where the C header goes in DIR (the C example includes it: cc -IDIR/include …).
HEADER = "include/coaplab_cc.h"


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub_parser(sub, NAME, "copy the shipped examples and the C header into a directory",
                   "  coaplab examples examples     # then: coaplab run examples/quick.toml\n"
                   "  coaplab examples my-examples --force",
                   description="Copy the examples this package ships (scenario files, algorithm plug-ins in "
                               f"Python and C, notebooks) and the C API's header ({HEADER}) into DIR, created "
                               "when missing. Existing files are not overwritten unless --force. The examples' "
                               "comments run them from DIR's parent with DIR = examples.")
    p.add_argument("dir", metavar="DIR", help="the directory to copy into")
    p.add_argument("--force", action="store_true", help="overwrite files that exist in DIR")
    return p


def files() -> dict[str, Path]:
    """Relative path in DIR → the shipped file (a Path) to copy there."""
    from ..errors import CoaplabError  # lazy: per command (start-up)
    from ..shipped import c_header, examples_dir

    examples, header = examples_dir(), c_header()
    if examples is None or header is None:
        raise CoaplabError("examples: this coaplab ships no examples (coaplab/_shipped is missing); "
                           "reinstall it (README.md, \"Install\")")
    out: dict[str, Path] = {}
    for p in sorted(examples.rglob("*")):
        rel = p.relative_to(examples)
        if p.is_file() and not any(part in SKIPPED for part in rel.parts) and p.suffix != ".pyc":
            out[rel.as_posix()] = p
    out[HEADER] = header
    return out


def main(args) -> int:
    import os  # lazy: per command (start-up)

    from ..errors import CoaplabError
    from ..files import atomic_write, check_length, new_dirs_removed_on_error, output_dir, output_in, shown

    option = "DIR"
    if args.dir == "":
        raise CoaplabError(f"{option}: an empty path is not allowed; expected a directory")
    check_length(args.dir, option)
    todo = files()
    root = Path(args.dir)
    if not args.force:
        existing = [rel for rel in todo if os.path.lexists(root / rel)]
        if existing:
            raise CoaplabError(f"{option}: {len(existing)} of the {len(todo)} files exist in {shown(root)} "
                               f"(e.g. {existing[0]}); add --force to overwrite them, or name another directory")
    with new_dirs_removed_on_error(root):
        output_dir(root, option)
        for rel, source in todo.items():
            target = output_in(root / Path(rel).parent, Path(rel).name, option)
            with atomic_write(target, "wb") as f:
                f.write(source.read_bytes())
    print(f"coaplab: copied {len(todo)} files into {root}/ (the C header: {root / HEADER}; "
          f"build the C example: cc -shared -fPIC -I{root / 'include'} {root / 'algorithms/c/aggressive.c'} "
          "-o aggressive.so)")
    return 0
