"""`coaplab bench --suite` options: bad input is one clear line and exit 2; the cargo command line.

The suite itself is a benchmark (prints figures, asserts nothing): it is not run here.
"""

import pytest

from coaplab.suites.bench import suite_command
from conftest import run_cli


@pytest.mark.parametrize("args, message", [
    (["--suite", "--suite-clients", "1,x"], "'x' in '1,x' is not an integer"),
    (["--suite", "--suite-clients", "10,0"], "0 in '10,0' is out of range"),
    (["--suite", "--repetitions", "0"], "--repetitions: 0 is out of range"),
    (["--suite-clients", "1,2"], "--suite-clients and --exchanges belong to --suite"),
    (["--exchanges", "5"], "--suite-clients and --exchanges belong to --suite"),
])
def test_bad_suite_options(args, message):
    r = run_cli("bench", *args)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_suite_command_line():
    assert suite_command(["tcp"], [1, 400], 7, 60) == [
        "run", "--release", "-q", "-p", "coaplab-engine", "--example", "bench_suite", "--",
        "--transports", "tcp", "--clients", "1,400", "--repetitions", "7", "--exchanges", "60"]
