"""The results database while a sweep writes it, and pcap / trace files of stored runs (issue:
results a researcher can analyse and publish, items 4 and 5)."""

import json
import os
import subprocess
import sys
import time

import duckdb
import pandas as pd

from coaplab import cli as cli_module
from coaplab.execute import store, sweep
from coaplab.execute.store import ResultsDB

# 3 configurations × 5000 replications of 40 clients × 40 exchanges: a few ms per run, minutes
# in all at --jobs 1 — far longer than the reads below, which kill it when they are done.
LONG_TOML = ('name = "long"\nseed = 9\nreplications = 5000\n[link]\nerrors = "medium"\n'
             '[workload]\nclients = 40\nexchanges = 40\n[sweep]\n"coap.cc" = ["default", "cocoa", "fasor"]\n')


def _stored_ok(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM runs WHERE status = 'ok'").fetchone()[0]
    finally:
        con.close()


def test_report_export_status_and_notebook_reads_while_a_sweep_runs(cli, tmp_path):
    scen, db = tmp_path / "long.toml", tmp_path / "live.duckdb"
    scen.write_text(LONG_TOML)
    sweep = subprocess.Popen([sys.executable, "-m", "coaplab.cli", "run", str(scen), "--db", str(db), "--jobs", "1",
                              "--format", "json", "--no-progress"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and sweep.poll() is None and not db.exists():
            time.sleep(0.05)
        # A first commit: status shows stored runs (retrying: the sweep may be committing).
        rows = []
        while time.monotonic() < deadline and sweep.poll() is None:
            rows = store.status(db)
            if rows and rows[0]["stored"] > 0:
                break
            time.sleep(0.1)
        assert rows and rows[0]["stored"] > 0, rows
        # Every reader, one after the other, while the sweep keeps committing.
        status = subprocess.run([sys.executable, "-m", "coaplab.cli", "status", "--db", str(db), "--format", "json"],
                                capture_output=True, text=True, timeout=120, check=False)
        assert status.returncode == 0, status.stderr
        line = json.loads(status.stdout)
        assert line["scenario"] == "long" and line["configurations"] == 3 and line["total"] == 15000
        assert 0 < line["stored"] < 15000 and line["failed"] == 0 and line["last_commit"]
        export = subprocess.run([sys.executable, "-m", "coaplab.cli", "export", "--db", str(db), "--out",
                                 str(tmp_path / "tables")], capture_output=True, text=True, timeout=120, check=False)
        assert export.returncode == 0, export.stderr
        runs = pd.read_parquet(tmp_path / "tables" / "runs.parquet")
        assert len(runs) >= line["stored"] and set(runs["coap.cc"]) <= {"default", "cocoa", "fasor"}
        report = subprocess.run([sys.executable, "-m", "coaplab.cli", "report", "--db", str(db), "--out",
                                 str(tmp_path / "report")], capture_output=True, text=True, timeout=180, check=False)
        assert report.returncode == 0, report.stderr
        assert (tmp_path / "report" / "index.html").stat().st_size > 0
        # A notebook: an ordinary read-only DuckDB connection between two commits, and ResultsDB
        # (which waits for the commit in progress).
        with ResultsDB(db, read_only=True) as rdb:
            n_frame = len(rdb.frame("runs"))
        assert n_frame >= len(runs)
        assert sweep.poll() is None, "the sweep ended before the reads did; make it longer"
        # The sweep still commits after being read: more runs are stored.
        later = time.monotonic() + 60
        while time.monotonic() < later and store.status(db)[0]["stored"] <= n_frame:
            time.sleep(0.2)
        assert store.status(db)[0]["stored"] > n_frame
    finally:
        sweep.kill()
        sweep.wait()
    # Killed mid-sweep as the SIGKILL tests do: what was stored is whole.
    con = duckdb.connect(str(db), read_only=True)
    n, distinct = con.execute("SELECT count(*), count(DISTINCT (config_id, replication)) FROM runs").fetchone()
    clients = con.execute("SELECT count(*) FROM clients").fetchone()[0]
    con.close()
    assert n == distinct and clients == 40 * n


def _hold(db, read_only, seconds):
    """Another process holding the database open for `seconds` (prints 'open' once it is)."""
    code = (f"import duckdb, sys, time; c = duckdb.connect({str(db)!r}, read_only={read_only}); "
            f"print('open', flush=True); time.sleep({seconds}); c.close()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "open"
    return proc


def test_a_reader_that_cannot_get_in_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    db = tmp_path / "held.duckdb"
    with ResultsDB(db):
        pass  # a new, empty coaplab database
    holder = _hold(db, False, 60)
    try:
        monkeypatch.setattr(store, "READ_WAIT_S", 0.3)
        assert cli_module.main(["status", "--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"is held by PID {holder.pid}" in err and "0.3 s" in err, err
    finally:
        holder.kill()
        holder.wait()
    assert not list(tmp_path.glob("held.duckdb.read-request-*"))  # the reader cleaned up
    assert cli_module.main(["status", "--db", str(db)]) == 0


def test_the_writer_waits_for_a_reader_that_keeps_the_file_open(tmp_path):
    import coaplab
    from coaplab.execute.runner import engine_run

    scen = {"name": "w", "replications": 4, "workload": {"clients": 3, "exchanges": 5}}
    db = tmp_path / "w.duckdb"
    readers = []

    def runner(text, rep, pcap):
        if rep == 1:  # mid-sweep, a notebook opens the database and keeps it open for 1.5 s
            readers.append(_hold(db, True, 1.5))
        return engine_run(text, rep, pcap)

    # Its commits wait (the runs stay in memory) until the reader closes the file.
    res = coaplab.run(scen, jobs=1, db=db, runner=runner)
    readers[0].wait()
    assert res.executed == 4 and not res.failures and _stored_ok(db) == 4


def test_a_second_sweep_on_the_same_database_is_refused_in_one_line(cli, tmp_path):
    import coaplab

    scen = tmp_path / "s.toml"
    scen.write_text('name = "s"\nreplications = 2\n[workload]\nclients = 3\nexchanges = 5\n')
    db = tmp_path / "s.duckdb"
    writer = sweep.SweepWriter(db)  # a sweep in progress (this process), between two commits
    writer.begin([], "m")
    try:
        second = cli("run", scen, "--db", db, "--no-progress")
        assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
        assert f"is being written by another sweep (PID {os.getpid()})" in second.stderr
        assert cli("status", "--db", db).returncode == 0  # readers are not affected
    finally:
        writer.close()
    assert cli("run", scen, "--db", db, "--no-progress").returncode == 0
    assert coaplab.run(scen, db=db).executed == 0  # and the lock is released after each sweep


# --- pcap / trace files of stored runs ---------------------------------------------------------

PCAP_TOML = ('name = "pc"\nseed = 2\nreplications = 2\n[link]\nerrors = "medium"\n'
             '[workload]\nclients = 30\nexchanges = 60\n[sweep]\n"coap.cc" = ["default", "cocoa"]\n')


def _pcap_sizes(directory):
    return {p.name: p.stat().st_size for p in sorted(directory.glob("*.pcap"))}


def test_pcap_of_stored_runs_reruns_them_with_identical_results(cli, tmp_path):
    scen, db = tmp_path / "pc.toml", tmp_path / "pc.duckdb"
    scen.write_text(PCAP_TOML)
    first = cli("run", scen, "--db", db, "--format", "json", "--no-progress")
    assert first.returncode == 0, first.stderr
    out = cli("run", scen, "--db", db, "--format", "json", "--pcap", tmp_path / "pcap")
    assert out.returncode == 0, out.stderr
    assert "re-ran 4 stored runs to write their pcap files; every re-run result equals the stored one" in out.stderr
    assert out.stdout == first.stdout  # the summaries, from the database, unchanged
    # The files are those of a run without the database (byte for byte).
    fresh = cli("run", scen, "--no-db", "--format", "json", "--pcap", tmp_path / "fresh")
    assert fresh.returncode == 0, fresh.stderr
    got = {p.name: p.read_bytes() for p in (tmp_path / "pcap").glob("*.pcap")}
    want = {p.name: p.read_bytes() for p in (tmp_path / "fresh").glob("*.pcap")}
    assert len(got) == 4 and got == want
    # The estimate announced before writing: packets sent × (mean packet + 16 B record header)
    # + 24 B per file, within 15 % of what was written.
    line = next(line for line in out.stderr.splitlines() if "--pcap: 4 pcap files of about" in line)
    estimate_mb = float(line.split("of about ")[1].split(" MB")[0])
    written_mb = sum(_pcap_sizes(tmp_path / "pcap").values()) / 1e6
    assert abs(estimate_mb - written_mb) <= 0.15 * written_mb, (estimate_mb, written_mb)
    # Again: the files exist, nothing re-runs.
    again = cli("run", scen, "--db", db, "--format", "json", "--pcap", tmp_path / "pcap")
    assert again.returncode == 0 and "re-ran" not in again.stderr


def test_large_pcap_output_is_refused_without_yes(cli, tmp_path):
    scen, db = tmp_path / "pc.toml", tmp_path / "pc.duckdb"
    scen.write_text(PCAP_TOML)
    assert cli("run", scen, "--db", db, "--no-progress").returncode == 0
    small = cli("run", scen, "--db", db, "--pcap", tmp_path / "p1", "--max-output-mb", "0.01")
    assert small.returncode == 2 and small.stderr.count("\n") == 1
    assert "exceed --max-output-mb 0.01; add --yes" in small.stderr and "Traceback" not in small.stderr
    assert not (tmp_path / "p1").exists()  # nothing written, not even the directory
    # The default threshold (200 MB): pretend the stored runs sent 10^7 packets each (4 runs ×
    # 10^7 × ≥ 16 B > 200 MB).
    con = duckdb.connect(str(db))
    con.execute("UPDATE runs SET packets_sent = 10000000")
    con.close()
    big = cli("run", scen, "--db", db, "--pcap", tmp_path / "p2")
    assert big.returncode == 2 and "exceed --max-output-mb 200;" in big.stderr, big.stderr
    assert not (tmp_path / "p2").exists()
    bad = cli("run", scen, "--db", db, "--max-output-mb", "5")
    assert bad.returncode == 2 and "belong to --pcap" in bad.stderr
    neg = cli("run", scen, "--db", db, "--pcap", tmp_path / "p3", "--max-output-mb", "-1")
    assert neg.returncode == 2 and "--max-output-mb: -1 is out of range" in neg.stderr


def test_rerun_differing_from_the_stored_result_is_an_error(cli, tmp_path):
    scen, db = tmp_path / "pc.toml", tmp_path / "pc.duckdb"
    scen.write_text(PCAP_TOML)
    assert cli("run", scen, "--db", db, "--no-progress").returncode == 0
    con = duckdb.connect(str(db))  # as if another engine had stored one run
    row = con.execute("SELECT config_id, replication, result FROM runs ORDER BY config_id, replication LIMIT 1").fetchone()
    result = json.loads(row[2])
    result["events"] += 1
    con.execute("UPDATE runs SET result = ? WHERE config_id = ? AND replication = ?", (json.dumps(result), row[0], row[1]))
    con.close()
    out = cli("run", scen, "--db", db, "--pcap", tmp_path / "pcap", "--no-progress")
    assert out.returncode == 2, out.stderr
    assert f"[{row[0]}] replication {row[1]} differs from the stored result" in out.stderr
    assert out.stderr.count("\n") == 1


def test_trace_of_stored_traced_runs_reruns_them(cli, tmp_path):
    scen, db = tmp_path / "tr.toml", tmp_path / "tr.duckdb"
    scen.write_text('name = "tr"\nreplications = 2\ntrace = true\n[workload]\nclients = 3\nexchanges = 5\n')
    first = cli("run", scen, "--db", db, "--format", "json", "--no-progress")
    assert first.returncode == 0
    out = cli("run", scen, "--db", db, "--format", "json", "--trace", tmp_path / "traces", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "re-ran 2 stored runs to write their trace files; every re-run result equals the stored one" in out.stderr
    fresh = cli("run", scen, "--no-db", "--format", "json", "--trace", tmp_path / "fresh", "--no-progress")
    got = {p.name: p.read_text() for p in (tmp_path / "traces").glob("*.csv")}
    want = {p.name: p.read_text() for p in (tmp_path / "fresh").glob("*.csv")}
    assert fresh.returncode == 0 and len(got) == 2 and got == want
    assert out.stdout == first.stdout
