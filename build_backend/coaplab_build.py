"""coaplab's build backend (pyproject.toml ``[build-system]``, PEP 517 with ``backend-path``):
maturin, plus what maturin cannot put into the same wheel.

maturin builds one Cargo target kind per wheel — the PyO3 extension ``coaplab._core`` here —
and cannot ship a crate's binaries next to it (PyO3/maturin issue #368, open). ``coaplab
emulate`` / ``crossval`` need two binaries of ``crates/emulator`` (``coaplab-emulator``,
``coaplab-endpoint``), and ``coaplab examples`` / ``coaplab setup californium`` need files that
live outside the Python package (``examples/``, the C header ``crates/cc-ffi/include/coaplab_cc.h``,
the Maven project ``java/californium``). So every wheel a PEP 517 frontend builds — pip or uv
from a source tree or from an sdist, ``pip wheel``, ``python -m build`` — first runs ``cargo build
--release -p coaplab-emulator`` (Cargo's own ``CARGO_TARGET_DIR`` applies), then stages the
binaries and those files into ``python/coaplab/_shipped/`` (ignored by git; pyproject.toml's
``include`` puts it into the wheel), lets maturin write the wheel and removes the staging
directory again, so that a checkout never holds stale copies that would shadow ``target/release``
(docs/emulation.md, "Where the binaries come from"). The ``maturin build`` / ``maturin sdist``
commands do not run this backend: their wheel lacks ``_shipped/`` and their sdist the emulator's
workspace membership (scripts/test.sh uses ``pip wheel`` and :func:`build_sdist`).

An editable install (``pip install -e .``, scripts/setup.sh) builds the binaries too but copies
nothing: in a checkout the package finds them in ``target/release``. The sdist is maturin's,
with the emulator's crates, this directory, ``examples/`` and ``java/`` added by pyproject.toml's
``include``, and the repository's own ``Cargo.toml``: maturin rewrites the workspace's
``members`` to the extension's crates only, and Cargo then refuses ``-p coaplab-emulator``.

A second maturin project (``bindings = "bin"``, a ``coaplab-emulator`` wheel that coaplab
depends on) was the other way: it installs from a wheel, but an sdist or a source tree of
coaplab would then need that second package from an index first — not one install.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import maturin
from maturin import (  # noqa: F401 - the PEP 517 hooks this backend takes from maturin unchanged
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parent.parent
#: Where the wheel's extra files are staged: coaplab/_shipped in the wheel (python/coaplab/shipped.py reads it).
STAGE = ROOT / "python" / "coaplab" / "_shipped"
#: The binaries of crates/emulator that coaplab runs (coaplab/_shipped/bin/ in the wheel).
BINARIES = ("coaplab-emulator", "coaplab-endpoint")
#: Source tree path → path under coaplab/_shipped/ in the wheel.
FILES = {
    "examples": "examples",
    "crates/cc-ffi/include/coaplab_cc.h": "include/coaplab_cc.h",
    "java/californium": "java/californium",
}


def _say(text: str) -> None:
    print(f"coaplab build: {text}", file=sys.stderr, flush=True)


def build_binaries() -> dict[str, Path]:
    """``cargo build --release -p coaplab-emulator``; the built binaries by name, read from
    Cargo's JSON messages (``executable``), so that ``CARGO_TARGET_DIR`` and ``.cargo/config``
    are honoured without guessing the target directory."""
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if cargo is None:
        raise RuntimeError("coaplab build: cargo is missing; building coaplab from source needs a Rust toolchain "
                           "(https://rustup.rs), the wheel does not")
    _say("cargo build --release -p coaplab-emulator (the emulator and the endpoint)")
    out = subprocess.run([cargo, "build", "--release", "-p", "coaplab-emulator", "--bins",
                          "--message-format=json-render-diagnostics"],
                         cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"coaplab build: cargo build -p coaplab-emulator failed (exit {out.returncode})")
    found: dict[str, Path] = {}
    for line in out.stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            found[msg["target"]["name"]] = Path(msg["executable"])
    missing = [b for b in BINARIES if b not in found]
    if missing:
        raise RuntimeError(f"coaplab build: cargo built no {', '.join(missing)}")
    return found


def stage(binaries: dict[str, Path]) -> None:
    """Copies the binaries and :data:`FILES` into :data:`STAGE` (emptied first)."""
    shutil.rmtree(STAGE, ignore_errors=True)
    (STAGE / "bin").mkdir(parents=True)
    for name in BINARIES:
        shutil.copy2(binaries[name], STAGE / "bin" / name)
    for src, dst in FILES.items():
        source, target = ROOT / src, STAGE / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints"))
        else:
            shutil.copy2(source, target)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    binaries = build_binaries()
    try:
        stage(binaries)
        return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
    finally:
        shutil.rmtree(STAGE, ignore_errors=True)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    build_binaries()  # into target/release, where a checkout's coaplab looks (no copy)
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    name = maturin.build_sdist(sdist_directory, config_settings)
    restore_workspace(Path(sdist_directory) / name)
    return name


def restore_workspace(sdist: Path) -> None:
    """Puts the repository's ``Cargo.toml`` (every member, the emulator's included) back into
    the sdist maturin wrote, in place of maturin's rewritten one."""
    manifest = (ROOT / "Cargo.toml").read_bytes()
    rewritten = sdist.with_name(sdist.name + ".partial")
    with tarfile.open(sdist, "r:gz") as src, tarfile.open(rewritten, "w:gz", format=src.format) as dst:
        for member in src.getmembers():
            data = src.extractfile(member) if member.isfile() else None
            if member.isfile() and member.name.count("/") == 1 and member.name.endswith("/Cargo.toml"):
                member.size = len(manifest)
                dst.addfile(member, io.BytesIO(manifest))
            else:
                dst.addfile(member, data)
    os.replace(rewritten, sdist)
