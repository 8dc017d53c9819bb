"""Algorithms in C, through the C API: ``coap.cc = "c:LIB:NAME"``.

``LIB`` is a shared library that exports the C API of ``docs/c-api.md`` (``coaplab_cc_init``,
``coaplab_cc_exchange_start``, ``coaplab_cc_timeout``, ``coaplab_cc_response``,
``coaplab_cc_base_rto``, with the structs of ``crates/cc-ffi/include/coaplab_cc.h``); ``NAME`` is
the algorithm name its ``coaplab_cc_init`` accepts. That is coaplab's own
``libcoaplab_cc_ffi.so`` (``cargo build --release -p coaplab-cc-ffi``), or a stack's own
implementation behind the same header, e.g. ``examples/algorithms/c/fixed_timer.c``.

The engine loads the library and calls its functions directly on every decision
(``crates/engine/src/foreign/c.rs``): no Python on the decision path. This module only names
such algorithms and asks the engine to load and check one (:func:`load_c`), so that a bad
library is one line before anything runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# mypy (not Python) takes the compiled `_core` for a second definition here, as the package
# `__init__` imports this module eagerly and answers other names through `__getattr__`.
from .. import _core  # type: ignore[no-redef]
from ..files import digest, length_problem, shown
from .algorithm import PREFIX, Algorithm, load_class

#: The prefix of a C algorithm's name: ``c:LIB:NAME``.
C_PREFIX = "c:"


def load_c(spec: str) -> str:
    """Loads ``c:LIB:NAME`` in the engine (the library once per process) and checks that its
    ``coaplab_cc_init`` accepts ``NAME``; returns ``spec``. Raises ``ValueError`` with one line
    naming what is wrong."""
    check_c_path(spec)
    _core.load_c_algorithm(spec)
    return spec


def algorithm_file(spec: str) -> str:
    """The file a foreign algorithm's name points to: ``FILE`` of ``python:FILE:CLASS``, ``LIB``
    of ``c:LIB:NAME`` (relative paths from the working directory, as they are loaded)."""
    body = spec.removeprefix(C_PREFIX) if spec.startswith(C_PREFIX) else spec.removeprefix(PREFIX)
    return body.rpartition(":")[0]


#: (real path, size, mtime) → sha256 of the bytes: each file is read once per process and again
#: when it changes (the digest itself is of the bytes only, the same on every machine).
_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_digest(path: str) -> str:
    """sha256 of a file's bytes (hex); ``ValueError`` (one line) when it cannot be read."""
    try:
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
        if key not in _DIGESTS:
            _DIGESTS[key] = digest(Path(path))[1]
        return _DIGESTS[key]
    except OSError as e:
        raise ValueError(f"{path!r}: cannot be read to identify the algorithm ({e.strerror})") from None


def foreign_digests(resolved: Any) -> dict[str, str]:
    """Every ``python:`` / ``c:`` algorithm a resolved configuration names (``coap.cc``, a
    group's ``coap.cc``) → sha256 of its file's bytes: what the configuration's identity adds
    so that an edited algorithm is a new configuration (``config_id``). Empty without one."""
    out: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "cc" and isinstance(v, str) and is_foreign(v):
                    out[v] = file_digest(algorithm_file(v))
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(resolved)
    return out


def check_c_path(spec: str) -> None:
    """Refuses ``c:LIB:NAME`` whose LIB the OS would refuse for its length (``ValueError``, one
    line, the overlong path cut short) before the engine tries to load it."""
    lib = spec.removeprefix(C_PREFIX).rpartition(":")[0]
    if (too_long := length_problem(lib)) is not None:
        raise ValueError(f"{shown(spec)}: {too_long}; expected c:LIB:NAME with LIB a shared library")


def is_foreign(spec: str) -> bool:
    """Whether ``spec`` names an algorithm outside the registry: ``python:FILE:CLASS`` or
    ``c:LIB:NAME``."""
    return spec.startswith((PREFIX, C_PREFIX))


def load_foreign(spec: str) -> type[Algorithm] | str:
    """The class of ``python:FILE:CLASS``, or ``c:LIB:NAME`` itself once the engine has loaded
    and checked it (``ValueError``, one line, if it cannot be loaded)."""
    return load_c(spec) if spec.startswith(C_PREFIX) else load_class(spec)


def instance_of(algorithm: Any) -> tuple[Algorithm, str] | None:
    """An :class:`Algorithm` instance (or a ``python:FILE:CLASS`` name) → (instance, label);
    other values (a registered name, ``c:LIB:NAME``: the engine builds those) → ``None``."""
    if isinstance(algorithm, Algorithm):
        return algorithm, type(algorithm).__name__
    if isinstance(algorithm, str) and algorithm.startswith(PREFIX):
        return load_class(algorithm)(), algorithm
    return None
