"""The results database refuses what is not one (one line, exit 2, nothing downloaded),
records its schema version, and a full disk stops a sweep without losing committed runs."""

import errno
import sqlite3
import subprocess
import sys
import time

import duckdb
import pytest

import coaplab
from coaplab.errors import CoaplabError
from coaplab.execute.runner import engine_run
from coaplab.execute.store import SCHEMA_VERSION, ResultsDB, connect

SMALL = 'name = "small"\nreplications = 2\n[workload]\nclients = 2\nexchanges = 3\n'


def one_line_error(proc, *needles, code=2):
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coaplab: error: --db: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def scen(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def every_command(cli, scen, db, tmp_path):
    yield cli("run", scen, "--db", db, "--no-progress")
    yield cli("export", "--db", db, "--out", tmp_path / "exported")
    yield cli("report", "--db", db, "--out", tmp_path / "report")


def test_a_sqlite_file_is_refused_without_loading_an_extension(cli, scen, tmp_path):
    db = tmp_path / "results.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE runs (x INTEGER)")
    con.commit()
    con.close()
    before = db.read_bytes()
    for proc in every_command(cli, scen, db, tmp_path):
        one_line_error(proc, "is not a coaplab results database (a SQLite file)")
    assert db.read_bytes() == before  # untouched


def test_a_foreign_duckdb_or_junk_file_is_refused(cli, scen, tmp_path):
    db = tmp_path / "other.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE measurements (x INTEGER)")
    con.close()
    for proc in every_command(cli, scen, db, tmp_path):
        one_line_error(proc, "not a coaplab results database", "measurements")
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"\x00\x01not a database at all" * 100)
    for proc in every_command(cli, scen, junk, tmp_path):
        one_line_error(proc, "not a DuckDB file")


def test_extension_autoloading_is_off_on_every_connection(tmp_path):
    con = connect(tmp_path / "x.duckdb")
    try:
        settings = dict(con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('autoload_known_extensions', 'autoinstall_known_extensions')").fetchall())
    finally:
        con.close()
    assert settings == {"autoload_known_extensions": "false", "autoinstall_known_extensions": "false"}
    with ResultsDB(tmp_path / "y.duckdb") as store:
        (v,) = store.con.execute("SELECT current_setting('autoinstall_known_extensions')").fetchone()
        assert v is False


def test_schema_version_is_recorded_and_a_newer_one_refused(cli, scen, tmp_path):
    db = tmp_path / "r.duckdb"
    assert cli("run", scen, "--db", db, "--no-progress").returncode == 0
    with ResultsDB(db) as store:
        assert store.schema_version() == SCHEMA_VERSION == 1
        store.con.execute("UPDATE coaplab_meta SET value = '7' WHERE key = 'schema_version'")
    for proc in every_command(cli, scen, db, tmp_path):
        one_line_error(proc, "schema version 7, newer than this coaplab's (1)", "upgrade coaplab")


def test_a_database_from_before_versions_is_migrated_and_keeps_its_runs(cli, scen, tmp_path):
    db = tmp_path / "old.duckdb"
    assert cli("run", scen, "--db", db, "--no-progress").returncode == 0
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE coaplab_meta")  # as written before versions were recorded
    con.close()
    # Export reads it as is; a run stamps it and reuses both stored runs.
    assert cli("export", "--db", db, "--out", tmp_path / "e").returncode == 0
    again = cli("run", scen, "--db", db)
    assert again.returncode == 0, again.stderr
    assert "2 of 2 runs were already stored" in again.stderr
    with ResultsDB(db, read_only=True) as store:
        assert store.schema_version() == 1
        assert store.con.execute("SELECT count(*) FROM coaplab_meta").fetchone()[0] == 1


SWEEP = {"name": "disk", "seed": 9, "replications": 12, "workload": {"clients": 3, "exchanges": 4},
         "sweep": {"coap.cc": ["default", "cocoa"]}}


def strip(summaries):
    return [{k: v for k, v in s.items() if k != "wall_s"} for s in summaries]


def test_a_full_disk_stops_the_sweep_keeps_committed_runs_and_resumes(tmp_path, monkeypatch):
    db = tmp_path / "full.duckdb"
    original = ResultsDB._write
    calls = []

    def fill_up(self, batch, frames):
        calls.append(len(batch))
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(self, batch, frames)

    def paced(text, rep, pcap):  # a few ms per run, so that the runs commit in several batches
        time.sleep(0.02)
        return engine_run(text, rep, pcap)

    monkeypatch.setattr(ResultsDB, "_write", fill_up)
    with pytest.raises(CoaplabError) as e:
        coaplab.run(SWEEP, jobs=1, db=db, runner=paced)
    message = str(e.value)
    assert "\n" not in message and "No space left on device" in message and "re-run" in message
    monkeypatch.setattr(ResultsDB, "_write", original)
    committed = calls[0] + calls[1]
    with ResultsDB(db, read_only=True) as store:
        runs = store.frame("runs")
        clients = store.frame("clients")
    # Exactly the two committed batches, whole (3 clients each), nothing of the failed one.
    assert len(runs) == committed and set(runs.status) == {"ok"}
    assert len(clients) == 3 * committed
    resumed = coaplab.run(SWEEP, jobs=1, db=db)
    assert resumed.executed == 24 - committed
    with ResultsDB(db, read_only=True) as store:
        n, distinct = store.con.execute(
            "SELECT count(*), count(DISTINCT (config_id, replication)) FROM runs").fetchone()
    assert n == distinct == 24
    assert strip(resumed.summaries) == strip(coaplab.run(SWEEP, jobs=2).summaries)


def test_a_full_disk_is_one_line_and_exit_1_on_the_command_line(scen, tmp_path):
    # Exit 1, not 2: the command was valid, the machine stopped it (issue #22, item 2).
    db = tmp_path / "full.duckdb"
    # The store fails on its first commit, as a full disk would make it.
    code = (
        "import errno, sys\n"
        "from coaplab.execute import store\n"
        "def full(self, batch, frames):\n"
        "    raise OSError(errno.ENOSPC, 'No space left on device')\n"
        "store.ResultsDB._write = full\n"
        "from coaplab.cli import main\n"
        f"sys.exit(main(['run', {str(scen)!r}, '--db', {str(db)!r}, '--no-progress']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
    line = one_line_error(proc, "No space left on device", "re-run the same command to resume", code=1)
    assert str(db) in line


def test_the_sweep_lock_beside_the_default_database_is_ignored_by_git():
    # `coaplab run` in a checkout holds ./coaplab.duckdb.sweep-lock beside ./coaplab.duckdb while
    # it runs (removed at the end; a killed run leaves it): git must ignore both, as it ignores
    # the database.
    import shutil

    from conftest import ROOT

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for name in ("coaplab.duckdb", "coaplab.duckdb.sweep-lock", "results-a.duckdb.sweep-lock"):
        r = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT, check=False)
        assert r.returncode == 0, f"{name} is not ignored by .gitignore"
