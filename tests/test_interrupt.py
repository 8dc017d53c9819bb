"""Ctrl-C stops `coaplab run` at once: exit 130, the runs in progress are cancelled and not
stored, the runs committed before stay."""

import json
import signal
import subprocess
import sys
import time

import duckdb
import pytest

import coaplab
from coaplab.describe.scenario import load_scenario
from coaplab.execute.store import ResultsDB

SCENARIO = """name = "interrupt"
replications = 2
[workload]
kind = "random"
clients = 400
exchanges = 5
[sweep]
"workload.exchanges" = [5, 100000]
"""


def test_sigint_exits_130_without_waiting_for_runs_in_progress(tmp_path):
    # Two short runs (400 clients × 5 exchanges, milliseconds each), then two of 400 × 100 000
    # exchanges (minutes each: ≈ 5 µs per exchange on the project machine).
    scen, db = tmp_path / "i.toml", tmp_path / "i.duckdb"
    scen.write_text(SCENARIO)
    cmd = [sys.executable, "-m", "coaplab.cli", "run", str(scen), "--db", str(db), "--jobs", "1", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        # Wait until a live reader (the store's read-request protocol) sees the two short runs
        # stored: then a long one is running. A fixed delay after the file appeared could land
        # in their writes on a loaded machine.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                with ResultsDB(db, read_only=True, wait_s=30) as store:
                    if len(store.frame("runs")) >= 2:
                        break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        # Bounded: waiting for the run in progress would take minutes.
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "coaplab: interrupted" and "Traceback" not in err
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT status, result FROM runs").fetchall()
    finally:
        con.close()
    # At most the two short runs (a Ctrl-C landing in their commit rolls it back), whole;
    # nothing of the cancelled long run, no "failed" row.
    assert len(rows) <= 2 and all(s == "ok" for s, _ in rows)
    assert all(sum(c["exchanges_completed"] + c["exchanges_failed"] for c in json.loads(r)["clients"]) == 400 * 5
               for _, r in rows)


def test_cancel_all_makes_runs_return_cancelled():
    from coaplab import _core

    config = load_scenario({"name": "c", "workload": {"clients": 2, "exchanges": 2}}).configurations()[0]
    _core.cancel_all()
    try:
        with pytest.raises(ValueError, match="^did not finish: cancelled$"):
            _core.run_one(json.dumps(config), 0, None)
    finally:
        _core.reset_cancel()
    # A later coaplab.run starts afresh (it clears the request).
    _core.cancel_all()
    assert not coaplab.run({"name": "c", "workload": {"clients": 2, "exchanges": 2}}).failures


# A command that fails while handling a Ctrl-C: the clean-up's own error (e.g. a rollback of the
# store's transaction refused) carries the KeyboardInterrupt as its context.
CHAINED = """
import sys
from coaplab import cli
from coaplab.cli import run


def boom(args):
    try:
        raise {inner}
    except BaseException:
        raise RuntimeError("cannot roll back: the transaction was aborted")


run.main = boom
sys.exit(cli.main(["run", "x.toml"]))
"""


@pytest.mark.parametrize("inner, code, last", [
    ("KeyboardInterrupt", 130, "coaplab: interrupted"),
    # Any other error is not the user's Ctrl-C: it is not hidden behind "interrupted".
    ("ValueError('a bug')", 1, "RuntimeError: cannot roll back: the transaction was aborted"),
])
def test_an_error_raised_while_handling_ctrl_c_is_the_interrupt(inner, code, last):
    p = subprocess.run([sys.executable, "-c", CHAINED.format(inner=inner)], capture_output=True, text=True,
                       timeout=60, check=False)
    assert p.returncode == code, p.stderr
    assert p.stderr.strip().splitlines()[-1] == last
