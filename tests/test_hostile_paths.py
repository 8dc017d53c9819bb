"""Hostile paths and databases (issue #38, items 1-4, 10, 11): every command refuses, in one
line and exit 2, before any work and writing nothing, a path the OS would refuse (too long a
name, a named pipe, a directory where a file is needed, a file where a directory is needed, an
unwritable directory), a database that is not coaplab's, and a coaplab database damaged by
hand; an output never goes through a symbolic link out of its directory; an interrupted
upgrade of an old database loses nothing."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import duckdb
import pytest

from coaplab.execute.store import ResultsDB

SMALL = 'name = "small"\nreplications = 2\n[workload]\nclients = 2\nexchanges = 3\n'
TCP = 'name = "bbr"\nreplications = 2\ntrace = true\n[workload]\nclients = 1\nexchanges = 2\n[coap]\ntransport = "tcp"\ncc = "bbr"\n'
LONG = "x" * 300


def coaplab(*args, cwd, timeout=120):
    """The command as a user runs it; a hang (a named pipe opened) fails the test, not the run."""
    return subprocess.run([sys.executable, "-m", "coaplab.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, check=False)


def refused(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coaplab: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def tree(root):
    """Every path under `root` with its bytes (regular files) or its kind: what a command wrote."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            if os.path.islink(p) or not os.path.isfile(p):
                out[p] = "link" if os.path.islink(p) else "dir" if os.path.isdir(p) else "other"
            else:
                with open(p, "rb") as f:
                    out[p] = f.read()
    return out


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A small coaplab database (a UDP sweep and a traced BBR run, so cc_state has rows)."""
    d = tmp_path_factory.mktemp("good")
    (d / "small.toml").write_text(SMALL)
    (d / "bbr.toml").write_text(TCP)
    for scen in ("small.toml", "bbr.toml"):
        p = coaplab("run", scen, "--db", "good.duckdb", "--no-progress", cwd=d)
        assert p.returncode == 0, p.stderr
    return d / "good.duckdb"


@pytest.fixture
def work(tmp_path, good):
    """A scratch directory holding a copy of the good database and the scenario."""
    (tmp_path / "db.duckdb").write_bytes(good.read_bytes())
    (tmp_path / "small.toml").write_text(SMALL)
    return tmp_path


# --- paths the OS would refuse --------------------------------------------------------------

def bad_path(work, kind, suffix=""):
    if kind == "long":
        return work / (LONG + suffix)
    if kind == "fifo":
        os.mkfifo(work / f"pipe{suffix}")
        return work / f"pipe{suffix}"
    if kind == "dir":
        (work / f"adir{suffix}").mkdir()
        return work / f"adir{suffix}"
    if kind == "file":
        (work / f"afile{suffix}").write_text("mine")
        return work / f"afile{suffix}"
    raise AssertionError(kind)


DB_COMMANDS = {
    "status": lambda db: ["status", "--db", db],
    "export": lambda db: ["export", "--db", db, "--out", "exported"],
    "compare": lambda db: ["compare", "--db", db, "--db", "db.duckdb"],
    "plot": lambda db: ["plot", "--db", db, "--kind", "fct", "--out", "f.svg"],
    "report": lambda db: ["report", "--db", db, "--out", "report"],
    "run": lambda db: ["run", "small.toml", "--db", db, "--no-progress"],
    "scorecard": lambda db: ["scorecard", "cocoa", "--battery", "quick", "--db", db, "--no-progress"],
    "advise": lambda db: ["advise", "small.toml", "--db", db, "--no-progress"],
}


@pytest.mark.parametrize("kind", ["long", "fifo", "dir"])
@pytest.mark.parametrize("command", sorted(DB_COMMANDS))
def test_a_db_path_the_os_refuses_is_one_line(work, command, kind):
    db = bad_path(work, kind)
    before = tree(work)
    line = refused(coaplab(*DB_COMMANDS[command](db.name), cwd=work, timeout=60), "--db")
    assert {"long": "allowed: at most 255 bytes", "fifo": "is a named pipe", "dir": "is a directory"}[kind] in line
    assert tree(work) == before  # nothing written


OUT_COMMANDS = {  # (command line, what --out must be)
    "export": (lambda out: ["export", "--db", "db.duckdb", "--out", out], "dir"),
    "report": (lambda out: ["report", "--db", "db.duckdb", "--out", out], "dir"),
    "plot": (lambda out: ["plot", "--db", "db.duckdb", "--kind", "fct", "--out", out], "file"),
    "scorecard": (lambda out: ["scorecard", "cocoa", "--battery", "quick", "--no-db", "--no-progress", "--out", out],
                  "dir"),
    "advise": (lambda out: ["advise", "small.toml", "--db", "db.duckdb", "--no-progress", "--out", out], "dir"),
    "run --pcap": (lambda out: ["run", "small.toml", "--no-db", "--no-progress", "--pcap", out], "dir"),
    "run --trace": (lambda out: ["run", "small.toml", "--no-db", "--no-progress", "--trace", out], "dir"),
    "examples": (lambda out: ["examples", out], "dir"),
}


def _option(command: str) -> str:
    """The option a refusal names: `run`'s own option, `examples`' DIR, else --out."""
    return command.split()[-1] if command.startswith("run") else "DIR" if command == "examples" else "--out"


@pytest.mark.parametrize("kind", ["long", "fifo", "wrong-type"])
@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_an_output_path_the_os_refuses_is_one_line_before_any_work(work, command, kind):
    line_of, needs = OUT_COMMANDS[command]
    if kind == "wrong-type":  # a file where a directory is needed, or the reverse
        kind = "file" if needs == "dir" else "dir"
    out = bad_path(work, kind, ".svg" if needs == "file" else "")
    before = tree(work)
    line = refused(coaplab(*line_of(out.name), cwd=work, timeout=60), _option(command))
    assert {"long": "allowed: at most 255 bytes", "fifo": "expected", "file": "not a directory",
            "dir": "directory"}[kind] in line
    assert tree(work) == before


@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_an_output_in_a_read_only_directory_is_one_line(work, command):
    # Not writable: mode 555 for a user; for root (who writes through modes, as CI runs) a
    # read-only tmpfs, unmounted after.
    line_of, needs = OUT_COMMANDS[command]
    ro = work / "ro"
    ro.mkdir()
    root = os.geteuid() == 0
    if root:
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)],
                           capture_output=True, text=True, check=False)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a read-only tmpfs here: {r.stderr.strip()}")
    else:
        ro.chmod(0o555)
    try:
        target = "ro/out" if needs == "dir" else "ro/f.svg"
        refused(coaplab(*line_of(target), cwd=work, timeout=60), "ead-only file system" if root else "ermission denied")
        assert os.listdir(ro) == []
    finally:
        if root:
            subprocess.run(["umount", "-l", str(ro)], check=False)
        else:
            ro.chmod(0o755)


@pytest.mark.parametrize("spec", [f"python:{LONG}.py:Cls", f"c:{LONG}.so:cocoa"])
@pytest.mark.parametrize("command", ["replay", "check-algorithm"])
def test_an_overlong_plug_in_path_is_one_line(work, command, spec):
    (work / "script.json").write_text(json.dumps([{"start": 0.0, "lost": 0, "rtt": 0.1}]))
    args = [command, spec, "script.json"] if command == "replay" else [command, spec]
    line = refused(coaplab(*args, cwd=work, timeout=60), "allowed: at most 255 bytes")
    assert len(line) < 400


@pytest.mark.parametrize("command", ["report", "scorecard-page"])
def test_an_output_never_goes_through_a_link_out_of_its_directory(work, command):
    outside = work / "outside.html"
    outside.write_text("precious")
    out = work / "page"
    out.mkdir()
    (out / "index.html").symlink_to(outside)
    if command == "report":
        assert coaplab("report", "--db", "db.duckdb", "--out", out, cwd=work).returncode == 0
    else:
        from coaplab.suites.scorecard import write_html

        card = {"battery": {"reduced": False, "emulated": False, "name": "b", "version": 1, "references": []},
                "criteria": {}, "scenarios": [], "target": "t", "verdict": "safe", "wall_s": 1.0}
        assert write_html(card, {}, out) == out / "index.html"
    assert outside.read_text() == "precious"
    assert not (out / "index.html").is_symlink() and "<html" in (out / "index.html").read_text()
    assert [n for n in os.listdir(out) if n != "index.html"] == []  # no partial file left


# --- databases that are not ours --------------------------------------------------------------

def test_a_foreign_duckdb_with_runs_and_configs_is_refused_untouched(work):
    db = work / "foreign.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE runs (id INTEGER, what TEXT)")
    con.execute("CREATE TABLE configs (id INTEGER, config TEXT)")
    con.execute("INSERT INTO runs VALUES (1, 'theirs')")
    con.close()
    before = db.read_bytes()
    for command in ("run", "status", "export", "report", "plot", "compare"):
        refused(coaplab(*DB_COMMANDS[command](db.name), cwd=work), "is not a coaplab results database",
                "no coaplab marker")
        assert db.read_bytes() == before, command
    assert not (work / "exported").exists() and not (work / "report").exists()


def test_an_old_layout_missing_a_coaplab_column_is_refused(work):
    db = work / "db.duckdb"
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE coaplab_meta")
    con.execute("ALTER TABLE traces DROP COLUMN sample_kind")
    con.close()
    before = db.read_bytes()
    refused(coaplab("run", "small.toml", "--db", db.name, "--no-progress", cwd=work), "no coaplab marker")
    assert db.read_bytes() == before


# --- upgrades are atomic -----------------------------------------------------------------------

def make_old(db):
    """`db` as coaplab wrote it before version stamps and the cc_state table."""
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE coaplab_meta")
    con.execute("DROP TABLE cc_state")
    con.close()


def contents(db):
    with ResultsDB(db, read_only=True) as store:
        return {t: store.frame(t).sort_values(list(store.frame(t).columns[:3])).reset_index(drop=True)
                for t in ("configs", "runs", "clients", "cc_state")}


def test_an_upgrade_that_fails_half_way_leaves_the_old_database(work, monkeypatch):
    db = work / "db.duckdb"
    expected = contents(db)
    assert len(expected["cc_state"]) > 0
    make_old(db)

    def fails(self):
        raise KeyboardInterrupt  # Ctrl-C while cc_state is being filled

    monkeypatch.setattr(ResultsDB, "_fill_cc_state", fails)
    with pytest.raises(KeyboardInterrupt):
        ResultsDB(db)
    con = duckdb.connect(str(db), read_only=True)
    tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert "coaplab_meta" not in tables and "cc_state" not in tables  # as it was
    monkeypatch.undo()
    with ResultsDB(db) as store:  # the next command upgrades it
        assert store.schema_version() == 1
    after = contents(db)
    for t, frame in expected.items():
        assert frame.equals(after[t]), t


def test_an_upgrade_killed_with_sigkill_loses_nothing(work):
    db = work / "db.duckdb"
    expected = contents(db)
    make_old(db)
    code = textwrap.dedent(f"""
        import os, signal
        from coaplab.execute import store
        fill = store.ResultsDB._fill_cc_state
        def killed(self):
            fill(self)
            os.kill(os.getpid(), signal.SIGKILL)  # after the rows are in, before the stamp and commit
        store.ResultsDB._fill_cc_state = killed
        store.ResultsDB({str(db)!r})
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    status = coaplab("status", "--db", db, "--format", "json", cwd=work)
    assert status.returncode == 0, status.stderr
    again = coaplab("run", "small.toml", "--db", db, cwd=work)
    assert again.returncode == 0 and "2 of 2 runs were already stored" in again.stderr, again.stderr
    after = contents(db)
    for t, frame in expected.items():
        assert frame.equals(after[t]), t


def test_a_database_left_with_an_empty_stamp_by_an_older_coaplab_is_recovered(work):
    db = work / "db.duckdb"
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM coaplab_meta")
    con.close()
    assert coaplab("status", "--db", db, cwd=work).returncode == 0
    again = coaplab("run", "small.toml", "--db", db, cwd=work)
    assert again.returncode == 0 and "2 of 2 runs were already stored" in again.stderr, again.stderr


# --- coaplab databases damaged by hand -----------------------------------------------------------

CORRUPTIONS = {
    "null-result": ("UPDATE runs SET result = NULL WHERE replication = 1 AND name = 'small'", "unreadable result"),
    "bad-result": (("ALTER TABLE runs ALTER result TYPE TEXT; "
                   "UPDATE runs SET result = '{\"cut' WHERE replication = 1 AND name = 'small'"),
                   "unreadable result (not JSON)"),
    "null-config": ("UPDATE configs SET config = NULL WHERE name = 'small'", "is unreadable (NULL)"),
    "bad-config": ("ALTER TABLE configs ALTER config TYPE TEXT; UPDATE configs SET config = '{1, 2' WHERE name = 'small'",
                   "is unreadable (not JSON)"),
    "array-result": ("UPDATE runs SET result = '[1]' WHERE replication = 0 AND name = 'small'",
                     "not a JSON object"),
    "empty-result": ("UPDATE runs SET result = '{}' WHERE replication = 1 AND name = 'small'", "keys missing"),
    "empty-config": ("UPDATE configs SET config = '{\"seed\": 1}' WHERE name = 'small'", "is unreadable (no name)"),
    "dropped-clients": ("DROP TABLE clients", "its table 'clients' is missing"),
    "dropped-runs": ("DROP TABLE runs", "its table 'runs' is missing"),
}


@pytest.mark.parametrize("command", ["status", "export", "compare", "plot", "report", "run"])
@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_a_damaged_coaplab_database_is_one_line(work, corruption, command):
    sql, what = CORRUPTIONS[corruption]
    (work / "damaged.duckdb").write_bytes((work / "db.duckdb").read_bytes())
    con = duckdb.connect(str(work / "damaged.duckdb"))
    con.execute(sql)
    con.close()
    before = tree(work)
    line = refused(coaplab(*DB_COMMANDS[command]("damaged.duckdb"), cwd=work), "damaged.duckdb",
                   "is a damaged coaplab database", what)
    if "result" in corruption:
        assert "run " in line and "DELETE FROM runs" in line
    assert tree(work) == before
