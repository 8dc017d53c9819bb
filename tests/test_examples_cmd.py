"""``coaplab examples DIR``: the shipped examples and the C header copied out (README.md,
"Install"). Bad paths (too long, a pipe, a file, read-only) are tests/test_hostile_paths.py's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "crates" / "cc-ffi" / "include" / "coaplab_cc.h"


def coaplab(*args, cwd):
    return subprocess.run([sys.executable, "-m", "coaplab.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120, check=False)


def _expected() -> dict[str, bytes]:
    """What DIR must hold: every file of the repository's examples/ (no byte-code caches) and
    the header in include/, read straight from the repository."""
    out = {}
    for d, dirs, files in os.walk(ROOT / "examples"):
        dirs[:] = [x for x in dirs if x not in ("__pycache__", ".ipynb_checkpoints")]
        for f in files:
            if not f.endswith(".pyc"):
                p = Path(d) / f
                out[p.relative_to(ROOT / "examples").as_posix()] = p.read_bytes()
    out["include/coaplab_cc.h"] = HEADER.read_bytes()
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_examples_are_copied_into_a_new_directory(tmp_path):
    p = coaplab("examples", "a/b", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "a" / "b"
    expected = _expected()
    assert _tree(out) == expected
    # Spot checks of what a user needs: a scenario, the C plug-in example and its header.
    assert {"quick.toml", "algorithms/c/aggressive.c", "include/coaplab_cc.h", "emulation/californium-star.toml"} <= set(expected)
    assert f"copied {len(expected)} files into a/b/" in p.stdout


def test_the_copied_scenario_runs_and_the_c_example_compiles_against_the_copied_header(tmp_path):
    assert coaplab("examples", "examples", cwd=tmp_path).returncode == 0
    # The examples' comments run them from DIR's parent with DIR = examples.
    run = coaplab("run", "examples/python-algorithm.toml", "--no-db", "--no-progress", "--format", "json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler (cc / $CC): the C API's tests need one, as crates/cc-ffi's do")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-Iexamples/include",
                    "examples/algorithms/c/aggressive.c", "-o", "aggressive.so"], cwd=tmp_path, check=True)
    assert (tmp_path / "aggressive.so").stat().st_size > 0


def test_existing_files_are_kept_unless_force(tmp_path):
    assert coaplab("examples", "ex", cwd=tmp_path).returncode == 0
    mine = tmp_path / "ex" / "quick.toml"
    mine.write_text("# my edits\n")
    again = coaplab("examples", "ex", cwd=tmp_path)
    assert again.returncode == 2 and again.stderr.count("\n") == 1, again.stderr
    n = len(_expected())
    assert again.stderr.startswith(f"coaplab: error: DIR: {n} of the {n} files exist in 'ex' (e.g. ")
    assert "add --force" in again.stderr
    assert mine.read_text() == "# my edits\n"
    forced = coaplab("examples", "ex", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert mine.read_bytes() == (ROOT / "examples" / "quick.toml").read_bytes()


def test_one_existing_file_refuses_before_anything_is_written(tmp_path):
    (tmp_path / "ex" / "include").mkdir(parents=True)
    (tmp_path / "ex" / "include" / "coaplab_cc.h").write_text("mine")
    p = coaplab("examples", "ex", cwd=tmp_path)
    assert p.returncode == 2
    assert f"DIR: 1 of the {len(_expected())} files exist in 'ex' (e.g. include/coaplab_cc.h)" in p.stderr
    assert _tree(tmp_path / "ex") == {"include/coaplab_cc.h": b"mine"}


def test_force_replaces_a_link_instead_of_writing_through_it(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    (tmp_path / "ex").mkdir()
    (tmp_path / "ex" / "quick.toml").symlink_to(outside)
    p = coaplab("examples", "ex", "--force", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert outside.read_text() == "not yours"
    assert not (tmp_path / "ex" / "quick.toml").is_symlink()


@pytest.mark.parametrize("args, needle", [
    (["examples", ""], "DIR: an empty path is not allowed; expected a directory"),
    (["examples"], "the following arguments are required: DIR"),
    (["examples", "x", "--overwrite"], "unrecognized arguments: --overwrite"),
])
def test_bad_arguments_are_one_line(tmp_path, args, needle):
    p = coaplab(*args, cwd=tmp_path)
    assert p.returncode == 2 and needle in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    assert list(tmp_path.iterdir()) == []
