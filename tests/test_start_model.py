"""Client start models (workload.start, docs/model.md): validation, identity of existing
configurations, and the offsets a run actually uses (hand-computed)."""

import pytest

from coaplab.describe.scenario import load_scenario, resolve
from coaplab.errors import ScenarioError
from coaplab.execute.runner import run_scenario


def test_start_keys_absent_unless_given():
    # Existing configurations keep their resolved form (and so their config_id and stored runs).
    w = resolve({})["workload"]
    assert "start" not in w and "start_interval_s" not in w
    given = resolve({"workload": {"start": "sequential", "start_interval_s": 0.05}})["workload"]
    assert given["start"] == "sequential" and given["start_interval_s"] == 0.05


@pytest.mark.parametrize("raw, fragment", [
    ({"workload": {"start": "staggered"}}, 'workload.start: "staggered" is not allowed; expected one of uniform, sequential'),
    ({"workload": {"start_interval_s": 0.05}}, 'workload.start_interval_s: only meaningful when workload.start = "sequential"'),
    ({"workload": {"start": "sequential", "start_interval_s": -1}}, "workload.start_interval_s: -1 is out of range"),
])
def test_bad_start_keys(raw, fragment):
    with pytest.raises(ScenarioError) as e:
        load_scenario(raw)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_bad_start_key_on_the_command_line(cli, tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[workload]\nstart_interval_s = 0.1\n')
    out = cli("run", str(p), "--no-db")
    assert out.returncode == 2
    assert out.stderr.strip().endswith('(start is "uniform")') and "Traceback" not in out.stderr


def test_sequential_launch_times_in_a_run():
    # Three continuous clients launched 10 s apart with no jitter (start_spread_s = 0), one
    # exchange each on an idle testbed: client i sends its first request at exactly 10·i s.
    res = run_scenario({"name": "seq", "workload": {"clients": 3, "exchanges": 1, "start": "sequential",
                                                     "start_interval_s": 10.0, "start_spread_s": 0.0}}, db=None)
    firsts = res.clients_frame().sort_values("client")["first_request_s"].tolist()
    assert firsts == [0.0, 10.0, 20.0]
