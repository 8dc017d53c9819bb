"""Algorithms written in Python (coaplab.Algorithm, docs/algorithms.md "Algorithms written in
Python"): replay, the simulator, `coaplab check-algorithm`, and their errors."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coaplab
from coaplab import Algorithm, replay
from coaplab.describe.algorithm import load_class
from coaplab.describe.scenario import load_scenario
from coaplab.errors import ScenarioError, ScriptError
from conftest import ROOT

COCOA_PY = f"{ROOT}/examples/algorithms/cocoa_py.py:CocoaPy"
CocoaPy = load_class(COCOA_PY)


@st.composite
def scripts(draw):
    """Exchanges far enough apart never to overlap (every timer at the 32 s cap: at most
    (max_retransmit + 1) · 32 s + rtt), with idle gaps long enough for CoCoA's aging."""
    n = draw(st.integers(1, 25))
    t, out = 0.0, []
    for _ in range(n):
        lost = draw(st.integers(0, 7))
        rtt = draw(st.floats(0.000_001, 30.0).map(lambda x: round(x, 6)))
        out.append({"start": round(t, 6), "lost": lost, "rtt": rtt})
        t += 7 * 32 + rtt + draw(st.sampled_from([0.0, 1.0, 60.0, 700.0]))
    return out


@settings(max_examples=150, deadline=None)
@given(script=scripts(), dither=st.booleans(), seed=st.integers(0, 2**64 - 1), max_retransmit=st.integers(0, 6))
def test_cocoa_in_python_equals_rust_cocoa_on_replay(script, dither, seed, max_retransmit):
    rust = replay("cocoa", script, dither=dither, seed=seed, max_retransmit=max_retransmit)
    python = replay(CocoaPy(), script, dither=dither, seed=seed, max_retransmit=max_retransmit)
    assert python == rust


def _summaries(cc, jobs=1):
    raw = {"name": "py-vs-rust", "seed": 7, "replications": 2,
           "link": {"buffer_bytes": 2500, "errors": "medium"},
           "workload": {"kind": "continuous", "clients": 12, "exchanges": 15},
           "coap": {"cc": cc, "max_retransmit": 20}}
    [s] = coaplab.run(raw, jobs=jobs).summaries
    return {k: v for k, v in s.items() if k not in ("config", "config_id", "swept", "wall_s")}


def test_cocoa_in_python_equals_rust_cocoa_in_the_simulator():
    rust = _summaries("cocoa")
    assert rust["timeouts_total"] > 0  # the lossy link exercises the backoff and the weak estimator
    assert _summaries("python:" + COCOA_PY) == rust
    # Deterministic whatever the number of jobs (the runs then take turns on the GIL).
    assert _summaries("python:" + COCOA_PY, jobs=2) == rust


class FixedHalfSecond(Algorithm):
    """The same 0.5 s timer for every transmission."""

    def initial_timer(self, now, rng):
        return 0.5

    def next_timer(self, ex):
        return 0.5


def test_a_python_algorithm_in_the_simulator_hand_computed(tmp_path):
    # crates/engine/tests/registered_algorithm.rs's case, with the algorithm in Python: one
    # exchange on the idle star with a fixed 15 ms path delay takes 660.133334 ms
    # (5.333334 + 200 + 15 + 15 + 24.8 + 400 ms); the 0.5 s timer fires first, so there is one
    # unnecessary retransmission.
    f = tmp_path / "fixed.py"
    f.write_text("from coaplab import Algorithm\n\n"
                 "class Fixed(Algorithm):\n"
                 "    def initial_timer(self, now, rng):\n        return 0.5\n"
                 "    def next_timer(self, ex):\n        return 0.5\n")
    [s] = coaplab.run({"link": {"path_delay_ms": [15.0, 15.0]}, "workload": {"exchanges": 1, "clients": 1},
                       "coap": {"cc": f"python:{f}:Fixed"}}, jobs=1).summaries
    assert s["retransmission_histogram"] == [0, 1]
    assert s["unnecessary_retransmissions_total"] == 1
    assert abs(s["fct_s"]["max"] - 0.660_133_334) < 1e-9


def test_a_run_takes_any_number_of_python_algorithms(tmp_path):
    # One run, ten groups, ten different python: algorithms (formerly at most 8: the engine
    # had 8 fixed build slots; now each name is resolved once per run into its own value).
    # Class i arms a fixed timer of (i + 1) x 0.5 s: each group's T_0 shows its own class ran,
    # and only the 0.5 s timer fires before its exchange (under 1 s) ends.
    f = tmp_path / "fixed.py"
    f.write_text("from coaplab import Algorithm\n" + "".join(
        f"class Fixed{i}(Algorithm):\n"
        f"    def initial_timer(self, now, rng):\n        return {(i + 1) * 0.5}\n"
        f"    def next_timer(self, ex):\n        return {(i + 1) * 0.5}\n" for i in range(10)))
    groups = [{"name": f"g{i}", "clients": 1, "coap": {"cc": f"python:{f}:Fixed{i}"}} for i in range(10)]
    [s] = coaplab.run({"link": {"path_delay_ms": [15.0, 15.0]}, "workload": {"exchanges": 1},
                       "group": groups}, jobs=1).summaries
    assert s["exchanges_completed"] == 10
    assert [s["groups"][f"g{i}"]["mean_initial_rto_s"] for i in range(10)] == [(i + 1) * 0.5 for i in range(10)]
    assert s["retransmission_histogram"] == [9, 1]


def test_defaults_are_rfc7252():
    # Default methods: T_0 = ACK_TIMEOUT with dithering off, doubling: 2, 4, 8, 16, 32 s
    # (RFC 7252 §4.2) — the same as the Rust `default`.
    script = [{"start": 0, "lost": 4, "rtt": 0.5}, {"start": 100, "lost": 0, "rtt": 1.0}]
    out = replay(Algorithm(), script)
    assert out[0]["timers"] == [2.0, 4.0, 8.0, 16.0, 32.0]
    # The Rust `default` reports its full-backoff state (`retained_timer`); the base class none.
    def strip(rs):
        return [{k: v for k, v in r.items() if k != "state"} for r in rs]

    assert strip(out) == strip(replay("default", script))
    assert strip(replay(Algorithm(), script, dither=True, seed=4)) == strip(replay("default", script, dither=True, seed=4))


class Raises(Algorithm):
    def next_timer(self, ex):
        return 1 / 0


class BadTimer(Algorithm):
    def initial_timer(self, now, rng):
        return "soon"


class KeepsRng(Algorithm):
    def initial_timer(self, now, rng):
        if hasattr(self, "rng"):
            return self.rng.uniform(1.0, 2.0)
        self.rng = rng
        return 1.0


def test_errors_in_python_algorithms_are_one_line():
    script = [{"start": 0, "lost": 1, "rtt": 0.5}, {"start": 100, "lost": 0, "rtt": 0.5}]
    with pytest.raises(ScriptError, match=r"^Raises\.next_timer raised ZeroDivisionError: division by zero$"):
        replay(Raises(), script)
    with pytest.raises(ScriptError, match=r"^BadTimer\.on_exchange_start: returned 'soon'; expected a number of seconds$"):
        replay(BadTimer(), script)
    with pytest.raises(ScriptError, match=r"KeepsRng\.on_exchange_start raised RuntimeError: this Rng was lent for one call only"):
        replay(KeepsRng(), script)
    with pytest.raises(ScriptError, match="neither an algorithm name nor a coaplab.Algorithm"):
        replay(object(), script)


def test_scenario_validator_loads_python_algorithms(tmp_path):
    assert load_scenario({"coap": {"cc": "python:" + COCOA_PY}}).configurations()[0]["coap"]["cc"].startswith("python:")
    with pytest.raises(ScenarioError, match=r"^coap\.cc: 'python:nope\.py:X': file 'nope\.py' not found"):
        load_scenario({"coap": {"cc": "python:nope.py:X"}})
    with pytest.raises(ScenarioError, match=r"defines no 'Nope'"):
        load_scenario({"coap": {"cc": "python:" + COCOA_PY.replace("CocoaPy", "Nope")}})
    broken = tmp_path / "broken.py"
    broken.write_text("import not_a_module_anywhere\n")
    with pytest.raises(ScenarioError, match=r"raised ModuleNotFoundError: No module named 'not_a_module_anywhere'"):
        load_scenario({"coap": {"cc": f"python:{broken}:X"}})
    with pytest.raises(ScenarioError, match=r"'vbf' is not a subclass of coaplab.Algorithm"):
        load_scenario({"coap": {"cc": f"python:{ROOT}/examples/algorithms/cocoa_py.py:vbf"}})


def test_a_python_algorithm_raising_in_a_run_fails_the_run(tmp_path):
    f = tmp_path / "raises.py"
    f.write_text("from coaplab import Algorithm\n\nclass R(Algorithm):\n"
                 "    def on_response(self, now, ex, answered):\n        raise KeyError('boom')\n")
    result = coaplab.run({"workload": {"exchanges": 1, "clients": 1}, "coap": {"cc": f"python:{f}:R"}}, jobs=1)
    assert len(result.failures) == 1
    assert f"python:{f}:R.on_response raised KeyError: 'boom'" in result.failures[0][3]


def test_check_algorithm_cli(cli, tmp_path):
    ok = cli("check-algorithm", COCOA_PY, "--compare", "cocoa", "--scripts", "10")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("ok: ")
    differs = cli("check-algorithm", COCOA_PY, "--compare", "default", "--scripts", "2")
    assert differs.returncode == 1
    assert differs.stdout.startswith("FAIL property 'equal to default' failed on generated script 0")
    f = tmp_path / "bad.py"
    f.write_text("from coaplab import Algorithm\n\nclass Zero(Algorithm):\n"
                 "    def next_timer(self, ex):\n        return 0.0\n"
                 "class Flaky(Algorithm):\n    n = 0\n"
                 "    def initial_timer(self, now, rng):\n"
                 "        Flaky.n += 1\n        return 1.0 + Flaky.n % 3\n")
    zero = cli("check-algorithm", f"{f}:Zero", "--scripts", "5")
    # A zero timer is floored at the 1 ms clock granularity (crates/cc/src/config.rs), so the
    # bounds hold; the cap property catches a timer above --cap instead.
    assert zero.returncode == 0, zero.stdout
    capped = cli("check-algorithm", f"{f}:Flaky", "--cap", "1.5", "--scripts", "3")
    assert capped.returncode == 1
    assert "property 'timers within bounds' failed" in capped.stdout
    flaky = cli("check-algorithm", f"{f}:Flaky", "--scripts", "3")
    assert flaky.returncode == 1 and "property 'determinism' failed" in flaky.stdout
    for bad in (["nope.py:X"], [COCOA_PY, "--compare", "cocoaa"], [COCOA_PY, "--cap", "0"]):
        r = cli("check-algorithm", *bad)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_replay_cli_algorithm_file(cli, write_json):
    script = write_json([{"start": 0, "lost": 1, "rtt": 0.5}, {"start": 50, "lost": 0, "rtt": 1.5}])
    py = cli("replay", "--algorithm-file", COCOA_PY, str(script))
    rust = cli("replay", "cocoa", str(script))
    assert py.returncode == 0 and json.loads(py.stdout) == json.loads(rust.stdout)
    both = cli("replay", "--algorithm-file", COCOA_PY, "--compare", "cocoa", str(script))
    assert both.returncode == 0 and "python:" in both.stdout
    bad = cli("replay", "--algorithm-file", "missing.py:X", str(script))
    assert bad.returncode == 2 and "file 'missing.py' not found" in bad.stderr


def test_shipped_python_algorithm_scenario_equals_its_rust_twin(cli):
    # examples/python-algorithm.toml runs CoCoA written in Python beside the Rust `cocoa`:
    # every figure but the configuration's own name and identity must be the same.
    res = cli("run", "examples/python-algorithm.toml", "--no-db", "--format", "json", cwd=ROOT)
    assert res.returncode == 0, res.stderr
    python, rust = (json.loads(line) for line in res.stdout.splitlines())
    assert python["config"]["coap"]["cc"].startswith("python:examples/algorithms/cocoa_py.py")
    assert rust["config"]["coap"]["cc"] == "cocoa"
    for s in (python, rust):
        for key in ("config", "config_id", "swept", "wall_s"):
            s.pop(key)
    assert python["exchanges_completed"] == 10 * 50 * 3
    assert python == rust
