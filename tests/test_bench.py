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


def test_a_scenario_file_is_benchmarked_and_its_figures_printed(tmp_path):
    """`coaplab bench SCENARIO.toml`: the scenario's own size (2 replications here) and the figures
    (events come from the runs: 2 replications of 20 clients x 20 exchanges run > 0 events)."""
    f = tmp_path / "s.toml"
    f.write_text('name = "small"\nreplications = 2\n[workload]\nclients = 20\nexchanges = 20\n')
    r = run_cli("bench", str(f), "--jobs", "1")
    assert r.returncode == 0, r.stderr
    assert "small: 2 replications, 1 jobs" in r.stdout
    events = int(next(line.split()[-1] for line in r.stdout.splitlines() if line.startswith("events  ")))
    assert events > 0 and "peak memory (RSS)" in r.stdout


@pytest.mark.parametrize("extra, message", [
    (["--clients", "3"], "--clients: options of the default benchmark"),
    (["--suite"], "--suite: options of the default benchmark"),
])
def test_a_scenario_with_default_benchmark_options_is_refused(tmp_path, extra, message):
    f = tmp_path / "s.toml"
    f.write_text("[workload]\nclients = 2\n")
    r = run_cli("bench", str(f), *extra)
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1


def test_a_swept_scenario_is_refused(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('[sweep]\n"workload.clients" = [1, 2]\n')
    r = run_cli("bench", str(f))
    assert r.returncode == 2 and "sweeps 2 configurations; bench one" in r.stderr
