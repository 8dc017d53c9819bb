"""Files coaplab ships beside its Python code, found the same way in an installed package and in
a checkout (docs/emulation.md, "Where the binaries come from"; README.md, "Install").

A wheel — built from a source tree or an sdist by ``build_backend/coaplab_build.py`` — carries
them in ``coaplab/_shipped/``: the emulator's two binaries (``bin/``), ``examples/``, the C
header (``include/coaplab_cc.h``) and the Maven project of Californium's driver
(``java/californium/``). A checkout (an editable install, or ``PYTHONPATH=python``) has them at
their places in the repository instead (``target/release/``, ``examples/``,
``crates/cc-ffi/include/``, ``java/californium/``). The installed copy is looked at first.

Californium's driver is built by ``coaplab setup californium`` into a user cache,
:func:`cache_dir`.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The wheel's extra files (staged there by the build backend; absent in a checkout).
SHIPPED = Path(__file__).resolve().parent / "_shipped"
#: The repository root when this package runs from a checkout (python/coaplab → two up).
REPO = Path(__file__).resolve().parents[2]
#: The emulator's binaries (crates/emulator's [[bin]] targets).
BINARIES = ("coaplab-emulator", "coaplab-endpoint")
#: The environment variable that overrides :func:`cache_dir`.
CACHE_ENV = "COAPLAB_CACHE_DIR"


def in_checkout() -> bool:
    """Whether this package runs from a source checkout (its Cargo workspace is around it)."""
    return (REPO / "Cargo.toml").is_file() and (REPO / "crates" / "emulator").is_dir()


def _first(installed: Path, checkout: Path) -> Path | None:
    if installed.exists():
        return installed
    if in_checkout() and checkout.exists():
        return checkout
    return None


def binary_dirs() -> list[Path]:
    """Where the emulator's binaries are looked for, in order: the installed package's
    ``_shipped/bin``, then a checkout's ``target/release`` (``$CARGO_TARGET_DIR/release`` when set)."""
    dirs = [SHIPPED / "bin"]
    if in_checkout():
        target = os.environ.get("CARGO_TARGET_DIR")
        dirs.append((Path(target) if target else REPO / "target") / "release")
    return dirs


def examples_dir() -> Path | None:
    """The examples (``examples/`` of the repository)."""
    return _first(SHIPPED / "examples", REPO / "examples")


def c_header() -> Path | None:
    """``coaplab_cc.h``, the C API of algorithm plug-ins (docs/c-api.md)."""
    return _first(SHIPPED / "include" / "coaplab_cc.h", REPO / "crates" / "cc-ffi" / "include" / "coaplab_cc.h")


def californium_sources() -> Path | None:
    """The Maven project of Californium's driver (``pom.xml`` and ``src/``)."""
    return _first(SHIPPED / "java" / "californium", REPO / "java" / "californium")


def cache_dir() -> Path:
    """coaplab's user cache: ``$COAPLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/coaplab``, else
    ``~/.cache/coaplab`` (the XDG Base Directory Specification's default for
    ``$XDG_CACHE_HOME``: https://specifications.freedesktop.org/basedir-spec/latest/)."""
    own = os.environ.get(CACHE_ENV)
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME")
    # The specification: a relative $XDG_CACHE_HOME is invalid and ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "coaplab"
