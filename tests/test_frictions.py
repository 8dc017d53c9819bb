"""The smaller frictions of the researcher's workflow (issue 37, item 6): the sweep lock's file,
error wording, suggestions, `compare`'s hint."""

import os

import coaplab


def test_the_sweep_lock_file_is_removed_when_the_run_ends(tmp_path):
    db = tmp_path / "r.duckdb"
    coaplab.run({"name": "l", "replications": 1, "workload": {"clients": 1, "exchanges": 2}}, db=db)
    assert db.exists() and not (tmp_path / "r.duckdb.sweep-lock").exists()


def test_a_stale_sweep_lock_is_taken_over_and_removed(tmp_path):
    # A killed sweep leaves its file with its PID; nobody holds the flock: the next run takes it.
    db = tmp_path / "r.duckdb"
    lock = tmp_path / "r.duckdb.sweep-lock"
    lock.write_text("PID 999999")
    res = coaplab.run({"name": "l", "replications": 1, "workload": {"clients": 1, "exchanges": 2}}, db=db)
    assert res.executed == 1 and not lock.exists()
    assert sorted(os.listdir(tmp_path)) == ["r.duckdb"]
