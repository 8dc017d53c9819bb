"""Issue #38, items 9, 12 and 14 (the parts outside the plug-in supervision): emulation inputs
refused in one line before anything runs, the emulator's private temporary directories of
killed runs removed, and a zero-byte or damaged database worded as what it is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import coaplab
from coaplab.errors import CoaplabError
from coaplab.execute.tidy import load
from coaplab.stacks import crossval as cv
from coaplab.stacks import emulate as em
from conftest import ROOT


def _scenario(tmp_path: Path, cc: str = "default", transport: str = "udp") -> Path:
    f = tmp_path / "s.toml"
    cc_line = f'cc = "{cc}"\n' if transport == "udp" else 'cc = "newreno"\n'
    f.write_text('name = "edges"\nreplications = 1\n[workload]\nkind = "continuous"\nclients = 1\nexchanges = 2\n'
                 f'[coap]\ntransport = "{transport}"\n{cc_line}')
    return f


@pytest.fixture
def no_environment(monkeypatch):
    """The refusals come before any namespace or emulator is made: no root needed."""
    monkeypatch.setattr(em, "check_environment", lambda: None)
    monkeypatch.setattr(cv, "check_environment", lambda: None)


@pytest.mark.parametrize("run", [em.emulate, cv.crossval])
def test_a_plugin_algorithm_is_refused_by_emulation_at_once(tmp_path, no_environment, run):
    spec = f"python:{ROOT / 'examples/algorithms/cocoa_py.py'}:CocoaPy"
    with pytest.raises(CoaplabError, match="the emulator's endpoints run built-in algorithms only"):
        run(_scenario(tmp_path, spec), progress=False)


@pytest.mark.parametrize("run", [em.emulate, cv.crossval])
def test_tcp_congestion_on_a_udp_scenario_is_refused(tmp_path, no_environment, run):
    with pytest.raises(CoaplabError, match="--tcp-congestion bbr: the scenario runs no configuration over TCP"):
        run(_scenario(tmp_path), progress=False, tcp_congestion="bbr")


@pytest.mark.parametrize("command", ["emulate", "crossval"])
def test_a_bad_out_is_one_line_before_anything_runs(tmp_path, command):
    scenario = _scenario(tmp_path)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for out, message in ((a_file, "is not a directory"), (tmp_path / ("x" * 300), "a path component of 300 bytes")):
        p = subprocess.run([sys.executable, "-m", "coaplab.cli", command, str(scenario), "--out", str(out), "--no-db"],
                           capture_output=True, text=True, timeout=60, check=False)
        assert p.returncode == 2 and message in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_the_emulators_temporary_directories_of_dead_owners_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale, mine, unowned = (tmp_path / f"{em.WORK_PREFIX}{n}" for n in ("stale", "mine", "unowned"))
    for d in (stale, mine, unowned):
        d.mkdir()
    (stale / em.OWNER_FILE).write_text(f"{dead.pid}\n")
    import os

    (mine / em.OWNER_FILE).write_text(f"{os.getpid()}\n")
    assert em.remove_stale_work_dirs(tmp_path) == [stale]
    assert not stale.exists() and mine.exists() and unowned.exists()


def test_a_zero_byte_db_is_a_new_database(tmp_path):
    db = tmp_path / "empty.duckdb"
    db.touch()
    with pytest.raises(CoaplabError, match="is empty: no results are stored in it yet"):
        load(db)
    coaplab.run({"workload": {"clients": 1, "exchanges": 2}}, db=db, jobs=1)
    assert db.stat().st_size > 0 and load(db).configs


def test_runs_without_their_configuration_are_not_a_where_message(tmp_path):
    db = tmp_path / "r.duckdb"
    coaplab.run({"workload": {"clients": 1, "exchanges": 2}}, db=db, jobs=1)
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM configs")
    with pytest.raises(CoaplabError) as e:
        load(db)
    assert "--where" not in str(e.value) and "None" not in str(e.value), str(e.value)
    assert json.dumps(str(e.value))  # one line
