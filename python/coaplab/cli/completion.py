"""``coaplab completion``: print a shell completion script."""

from __future__ import annotations

import argparse
import sys

from .common import sub_parser

NAME = "completion"


def add_parser(sub) -> argparse.ArgumentParser:
    comp = sub_parser(sub, NAME, "print a shell completion script",
              "  coaplab completion bash > ~/.local/share/bash-completion/completions/coaplab\n"
              "  coaplab completion zsh > ~/.zfunc/_coaplab")
    comp.add_argument("shell", choices=("bash", "zsh", "tcsh"), help="the shell")
    return comp


def main(args) -> int:
    import shtab  # lazy: per command (start-up)

    sys.stdout.write(shtab.complete(args.root_parser, shell=args.shell))
    return 0
