"""Results database: resume after SIGKILL, failure recording, export, Dask (issue: experiment management)."""

import json
import random
import signal
import subprocess
import sys
import time

import duckdb
import pandas as pd

import coaplab
from coaplab.execute.runner import engine_run
from coaplab.execute.store import ResultsDB


def strip(summaries):
    return [{k: v for k, v in s.items() if k != "wall_s"} for s in summaries]


SWEEP = {"name": "kill", "seed": 3, "replications": 200, "link": {"errors": "medium"},
         "workload": {"clients": 100, "exchanges": 300}, "coap": {"max_retransmit": 20},
         "sweep": {"coap.cc": ["default", "cocoa", "fasor"]}}


def _toml(tmp_path):
    p = tmp_path / "kill.toml"
    p.write_text('name = "kill"\nseed = 3\nreplications = 200\n[link]\nerrors = "medium"\n'
                 '[workload]\nclients = 100\nexchanges = 300\n[coap]\nmax_retransmit = 20\n'
                 '[sweep]\n"coap.cc" = ["default", "cocoa", "fasor"]\n')
    return p


def _stored_live(db):
    """Finished runs in a database a sweep is writing, read through the live-reader protocol."""
    with ResultsDB(db, read_only=True, wait_s=30) as store:
        return int((store.frame("runs").status == "ok").sum())


def _stored(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        runs = con.execute("SELECT count(*), count(DISTINCT (config_id, replication)) FROM runs WHERE status = 'ok'").fetchone()
        clients = con.execute("SELECT count(*) FROM clients").fetchone()[0]
    finally:
        con.close()
    return runs[0], runs[1], clients


def test_sigkill_then_resume_keeps_every_finished_run(tmp_path):
    scen, db = _toml(tmp_path), tmp_path / "r.duckdb"
    cmd = [sys.executable, "-m", "coaplab.cli", "run", str(scen), "--db", str(db), "--jobs", "1", "--format", "json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    # Kill it mid-sweep (the whole sweep takes ≈ 15 s of one core): as soon as a live reader
    # (the store's read-request protocol, docs/experiments.md) sees a first finished run — not
    # after a fixed delay, which on a loaded machine can come before any run is committed.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists() and _stored_live(db) > 0:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the sweep finished before it could be killed; make it longer"
    n, distinct, clients = _stored(db)
    assert 0 < n < 600, n
    assert n == distinct and clients == 100 * n  # every stored run is whole: all its clients
    # The same command again: the stored runs are skipped, the rest run, nothing is duplicated.
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, check=False)
    assert again.returncode == 0, again.stderr
    assert f"{n} of 600 runs were already stored" in again.stderr
    n2, distinct2, clients2 = _stored(db)
    assert n2 == distinct2 == 600 and clients2 == 100 * 600
    # And the result equals an uninterrupted sweep.
    clean = coaplab.run(SWEEP, jobs=2).summaries
    resumed = [json.loads(l) for l in again.stdout.splitlines()]
    assert strip(resumed) == strip(json.loads(json.dumps(clean)))


def test_failed_runs_are_recorded_and_retried(tmp_path):
    db = tmp_path / "f.duckdb"
    scen = {"name": "f", "replications": 4, "workload": {"clients": 2, "exchanges": 3}}

    def flaky(text, rep, pcap):
        if rep == 2:
            raise RuntimeError("injected engine failure\nsecond line")
        return engine_run(text, rep, pcap)

    res = coaplab.run(scen, jobs=2, db=db, runner=flaky)
    assert [(r, e) for _, _, r, e in res.failures] == [(2, "RuntimeError: injected engine failure")]
    assert res.summaries[0]["replications"] == 3 and res.summaries[0]["replications_failed"] == 1
    with ResultsDB(db) as store:
        runs = store.frame("runs").sort_values("replication")
        assert list(runs.status) == ["ok", "ok", "failed", "ok"]
        assert runs.error.iloc[2] == "RuntimeError: injected engine failure"
    # Re-running retries only the failed run.
    calls = []

    def counting(text, rep, pcap):
        calls.append(rep)
        return engine_run(text, rep, pcap)

    res = coaplab.run(scen, jobs=1, db=db, runner=counting)
    assert calls == [2] and not res.failures and res.summaries[0]["replications"] == 4
    assert strip(res.summaries) == strip(coaplab.run(scen, jobs=1).summaries)


def test_cli_exports_round_trip(cli, tmp_path):
    db = tmp_path / "e.duckdb"
    scen = tmp_path / "e.toml"
    scen.write_text('name = "e"\nreplications = 2\n[workload]\nclients = 3\nexchanges = 5\n[sweep]\n"coap.cc" = ["default", "cocoa"]\n')
    assert cli("run", scen, "--db", db, "--format", "json").returncode == 0
    with ResultsDB(db) as store:
        clients = store.frame("clients")
        arrow = store.arrow("runs")
    assert len(clients) == 2 * 2 * 3 and arrow.num_rows == 4
    for fmt in ("parquet", "csv"):
        out = cli("export", "--db", db, "--format", fmt, "--out", tmp_path / fmt)
        assert out.returncode == 0, out.stderr
        read = pd.read_parquet if fmt == "parquet" else pd.read_csv
        back = read(tmp_path / fmt / f"clients.{fmt}").sort_values(["config_id", "replication", "client"]).reset_index(drop=True)
        want = clients.sort_values(["config_id", "replication", "client"]).reset_index(drop=True)
        # UDP only: the stored tcp_* counters are all NULL, and the export leaves them out.
        tcp_columns = [c for c in want.columns if c.startswith("tcp_")]
        assert tcp_columns and want[tcp_columns].isna().all().all()
        want = want.drop(columns=tcp_columns)
        # The export adds, after config_id, the parameter that varies (coap.cc).
        assert list(back.columns[:2]) == ["config_id", "coap.cc"]
        assert sorted(set(back["coap.cc"])) == ["cocoa", "default"]
        pd.testing.assert_frame_equal(back.drop(columns=["coap.cc"]), want, check_dtype=False)
        assert (tmp_path / fmt / f"runs.{fmt}").exists()
    bad = cli("export", "--db", tmp_path / "missing.duckdb", "--out", tmp_path / "x")
    assert bad.returncode == 2 and "does not exist" in bad.stderr


def test_dask_local_cluster_gives_identical_results(tmp_path):
    scen = {"name": "dask", "seed": 5, "replications": 6, "link": {"errors": "high"},
            "workload": {"kind": "random", "clients": 6, "exchanges": 8}, "sweep": {"coap.cc": ["cocoa", "fasor"]}}
    local = coaplab.run(scen, jobs=1).summaries
    dask = coaplab.run(scen, cluster="local:2", db=tmp_path / "d.duckdb").summaries
    assert strip(dask) == strip(local)


CRASH_TOML = ('name = "crash"\nseed = 4\nreplications = 3000\n[link]\nerrors = "medium"\n'
              '[workload]\nclients = 5\nexchanges = 5\n[sweep]\n"coap.cc" = ["default", "cocoa", "fasor"]\n')


def _stamp(db):
    """Modification times of the database and its write-ahead log (None when absent)."""
    wal = db.with_name(db.name + ".wal")
    return tuple(p.stat().st_mtime_ns if p.exists() else None for p in (db, wal))


def test_ten_sigkills_at_random_moments_then_resume_equals_an_uninterrupted_sweep(tmp_path):
    # 9000 runs of 5 clients × 5 exchanges: the sweep is commit-bound, a few seconds in all.
    # Each attempt is killed at a random moment 0–250 ms after it starts committing runs (the
    # database or its log changes), the database is checked, and the next attempt resumes.
    scen, db = tmp_path / "crash.toml", tmp_path / "crash.duckdb"
    scen.write_text(CRASH_TOML)
    cmd = [sys.executable, "-m", "coaplab.cli", "run", str(scen), "--db", str(db), "--jobs", "2", "--format", "json",
           "--no-progress"]
    rng = random.Random(20261122)
    kills, stored, history = 0, 0, []
    while kills < 10:
        before = _stamp(db)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and _stamp(db) == before:
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.25))
        if proc.poll() is not None:
            break  # the sweep finished before this kill
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        n, distinct, clients = _stored(db)
        assert n == distinct and clients == 5 * n  # no duplicate, every stored run whole
        assert n >= stored  # a committed run is never lost
        stored = n
        history.append(n)
    print("stored after each kill:", history)
    assert kills == 10, f"the sweep finished after {kills} kills (stored: {history}); make it longer"
    assert history[-1] < 9000, history
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False)
    assert again.returncode == 0, again.stderr
    n, distinct, clients = _stored(db)
    assert n == distinct == 9000 and clients == 5 * 9000
    clean = subprocess.run([*cmd[:5], "--no-db", *cmd[7:]], capture_output=True, text=True, cwd=tmp_path,
                           timeout=600, check=False)
    assert clean.returncode == 0, clean.stderr
    resumed = [json.loads(line) for line in again.stdout.splitlines()]
    uninterrupted = [json.loads(line) for line in clean.stdout.splitlines()]
    assert len(resumed) == 3 and strip(resumed) == strip(uninterrupted)
    assert [s["replications"] for s in resumed] == [3000] * 3


def test_a_ctrl_c_during_the_writers_reopen_is_not_lost(tmp_path, monkeypatch):
    """DuckDB turns a Ctrl-C that lands in a query into its InterruptException (a duckdb.Error).
    The sweep's writer re-opens the database between commits and checks its schema version;
    an interrupt there must reach the caller (the CLI makes it exit 130), not be taken for an
    unreadable version and swallowed — `coaplab advise` once ran to the end after a Ctrl-C."""
    import pytest

    from coaplab.execute import store

    path = tmp_path / "r.duckdb"
    store.ResultsDB(path).close()  # a stamped coaplab database

    def interrupted(self):
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr(store.ResultsDB, "schema_version", interrupted)
    with pytest.raises(duckdb.InterruptException):
        store.ResultsDB(path, migrate=False)
