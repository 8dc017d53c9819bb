"""``coaplab setup``: build what an emulation endpoint needs beyond the package itself.

``coaplab setup californium`` builds Californium's driver (shipped as sources) with the system's
Maven and JDK into the user cache (:mod:`coaplab.stacks.californium_setup`; docs/emulation.md,
"Third-party endpoints")."""

from __future__ import annotations

import argparse

from .common import sub_parser

NAME = "setup"


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub_parser(sub, NAME, "build what an emulation endpoint needs (Californium's driver)",
                   "  coaplab setup californium      # Maven + JDK: apt-get install default-jdk-headless maven\n"
                   "  COAPLAB_CACHE_DIR=/opt/coaplab coaplab setup californium",
                   description="Build what an emulation endpoint needs. `californium`: Californium's driver, from "
                               "the sources this package ships, with the system's Maven and JDK (Californium comes "
                               "from Maven Central) into $COAPLAB_CACHE_DIR/californium, else "
                               "$XDG_CACHE_HOME/coaplab/californium, else ~/.cache/coaplab/californium; nothing "
                               "is done while it is newer than its sources.")
    p.add_argument("what", choices=("californium",), help="what to build")
    return p


def main(args) -> int:
    from ..stacks import californium_setup  # lazy: per command (start-up)

    californium_setup.build(say=lambda text: print(f"coaplab setup: {text}", flush=True))
    return 0
