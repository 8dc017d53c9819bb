"""`coaplab advise` (docs/advise.md): an optimum known by construction, the safety filter
refusing a candidate that collapses the overload case, resuming after SIGINT with nothing lost,
the JSON schema, and bad [advise] tables (one line, exit 2)."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from coaplab.suites import advise

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "python" / "coaplab" / "data" / "advise.schema.json").read_text())

# A loss-free star with one client and a known round-trip time. Propagation: uplink 200 ms +
# downlink 400 ms, no router-server delay (path_delay_ms [0, 0]) = 600 ms. Serialisation at
# 1000 kbit/s: a packet is at most the MTU, 296 B = 2368 bit -> at most 2.368 ms each way. So
# every exchange takes RTT in [0.600, 0.600 + 2 x 0.002368] = [0.600, 0.6048] s.
RTT_MIN, RTT_MAX = 0.600, 0.600 + 2 * 296 * 8 / 1_000_000
KNOWN = """
name = "known-rtt"
seed = 1
[link]
downlink_kbps = 1000.0
uplink_kbps = 1000.0
downlink_delay_ms = 400.0
uplink_delay_ms = 200.0
path_delay_ms = [0.0, 0.0]
[workload]
kind = "continuous"
clients = 1
exchanges = 10
[advise]
replications = 2
evaluations = 4
objectives = ["latency_p95_s", "delivered"]
[advise.knobs]
"coap.cc" = "default"
"coap.ack_random_factor" = 1.0
"coap.max_retransmit" = 0
"coap.nstart" = 1
"coap.probing_rate_bps" = 1000.0
"coap.ack_timeout_s" = [0.2, 0.4, 0.8, 1.6]
"""


def test_the_fixed_timer_optimum_is_known_by_construction(tmp_path):
    # RFC 7252 §4.2: the first timeout is drawn in [ACK_TIMEOUT, ACK_TIMEOUT x ACK_RANDOM_FACTOR];
    # with the factor 1.0 it is ACK_TIMEOUT exactly, and with MAX_RETRANSMIT 0 the exchange is
    # given up when it fires. So a timer below the RTT (0.2, 0.4 s < 0.600 s) fails every
    # exchange (delivered 0, no latency), and every timer above it (0.8, 1.6 s > 0.6048 s) gets
    # every response (delivered 1, latency = RTT). RFC 7252's defaults (ACK_TIMEOUT 2 s, first
    # timer >= 2 s > RTT) deliver every exchange at the RTT too: the three tie, and the tie goes
    # to the point that changes fewest of RFC 7252's values - RFC 7252's own.
    f = tmp_path / "known.toml"
    f.write_text(KNOWN)
    ans, objectives = advise.advise(f, db=tmp_path / "a.duckdb", jobs=2)
    jsonschema.Draft202012Validator(SCHEMA).validate(ans)
    assert [o.name for o in objectives] == ["latency_p95_s", "delivered"]
    by_timer = {p["knobs"]["coap.ack_timeout_s"]: p for p in ans["evaluated"]}
    assert sorted(by_timer) == [0.2, 0.4, 0.8, 1.6]  # a grid of 4 within a budget of 4: walked whole
    for t in (0.2, 0.4):
        assert by_timer[t]["objectives"]["delivered"]["value"] == 0.0
        assert by_timer[t]["objectives"]["latency_p95_s"]["value"] is None
    for t in (0.8, 1.6):
        assert by_timer[t]["objectives"]["delivered"]["value"] == 1.0
        assert RTT_MIN <= by_timer[t]["objectives"]["latency_p95_s"]["value"] <= RTT_MAX
        assert by_timer[t]["safe"], by_timer[t]["criteria"]
    front_timers = sorted(p["knobs"]["coap.ack_timeout_s"] for p in ans["pareto_front"])
    assert front_timers == [0.8, 1.6, 2.0]
    assert ans["recommendation"]["knobs"] == advise.RFC7252_DEFAULTS
    # A timer below the RTT gives every exchange up after one copy: it loads nobody, so it is
    # safe by the scorecard's criteria, and off the front only because it delivers nothing.
    assert by_timer[0.2]["safe"] and by_timer[0.4]["safe"]


UNSAFE = """
name = "unsafe"
seed = 1
replications = 2
[link]
buffer_bytes = 1410000
[workload]
kind = "continuous"
clients = 10
exchanges = 10
[coap]
max_retransmit = 20
[advise]
replications = 2
[advise.knobs]
"coap.cc" = "default"
"coap.ack_timeout_s" = 0.1
"coap.ack_random_factor" = 1.0
"coap.max_retransmit" = 20
"coap.nstart" = 1
"coap.probing_rate_bps" = 1000.0
"""


def test_the_safety_filter_refuses_a_tiny_timer(tmp_path):
    # The reference star (docs/model.md): propagation 200 + 400 ms plus the router-server path
    # (10-20 ms each way), so no response comes back before 0.62 s. A 0.1 s timer without
    # dithering (factor 1.0) fires at 0.1 s and, doubling, at 0.1 + 0.2 = 0.3 s: two copies of
    # every request are sent before its response can arrive, both unnecessary. So the candidate
    # sends at least 2 unnecessary retransmissions per exchange, 20 per client for 10 exchanges,
    # on the deployment alone; in the overload case (the bloated 1,410,000 B buffer, the
    # population scaled until default's 2-3 s timers retransmit spuriously) the copies add load
    # to the queue: default sends far fewer, so the candidate's ratio exceeds 0.5.
    f = tmp_path / "unsafe.toml"
    f.write_text(UNSAFE)
    ans, _ = advise.advise(f, db=tmp_path / "a.duckdb", jobs=2)
    (cand,) = ans["evaluated"]
    assert not cand["safe"]
    assert "collapse_unnecessary" in cand["failed"]
    assert cand["criteria"]["collapse_unnecessary"]["measured"] > 0.5
    assert ans["overload"]["congested"]  # default did retransmit spuriously in the overload case
    # The grading is the scorecard's: default's own ratio to itself is 1 > 0.5, so RFC 7252's
    # defaults fail this criterion too wherever the overload case congests (docs/scorecard.md).
    assert ans["rfc7252"]["criteria"]["collapse_unnecessary"]["measured"] == pytest.approx(1.0)
    assert cand not in ans["pareto_front"]


RESUME = """
name = "resume"
seed = 3
[workload]
kind = "continuous"
clients = 4
exchanges = 5
[advise]
replications = 2
evaluations = 8
[advise.knobs]
"coap.cc" = ["default", "cocoa", "fasor"]
"coap.max_retransmit" = 4
"coap.nstart" = 1
"coap.ack_random_factor" = 1.5
"coap.probing_rate_bps" = 1000.0
"""


def _strip(ans):
    """The answer without what depends on how the work was split (time, runs executed now)."""
    ans = json.loads(json.dumps(ans))
    for k in ("wall_s", "runs_executed", "deployment"):
        ans.pop(k)
    for p in [*ans["evaluated"], *ans["pareto_front"], ans["rfc7252"], *ans["compare"]]:
        p.pop("runs_executed")
    return ans


def test_resume_after_sigint_loses_nothing(tmp_path):
    f = tmp_path / "resume.toml"
    f.write_text(RESUME)
    db = tmp_path / "r.duckdb"
    cmd = [sys.executable, "-m", "coaplab.cli", "advise", str(f), "--db", str(db), "--format", "json", "--jobs", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert proc.stderr is not None
    seen = 0
    deadline = time.monotonic() + 120
    for line in proc.stderr:  # one progress line per evaluation
        if line.startswith("coaplab advise: ") and "/8 " in line:
            seen += 1
        if seen >= 3 or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130 and seen >= 3
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, check=False)
    assert again.returncode == 0, again.stderr
    lines = [ln for ln in again.stderr.splitlines() if ln.startswith("coaplab advise: ") and "/8 " in ln]
    # The evaluations finished before the interrupt are read back, not run again.
    assert all(ln.endswith("s]") and "[stored," in ln for ln in lines[:seen - 1]), lines
    resumed = json.loads(again.stdout)
    fresh = advise.advise(f, db=tmp_path / "fresh.duckdb", jobs=1)[0]
    assert _strip(resumed) == _strip(fresh)  # the same answer as one uninterrupted run
    # A third call runs nothing at all.
    third = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, check=False)
    assert json.loads(third.stdout)["runs_executed"] == 0


@pytest.mark.parametrize("table, fragment", [
    ('[advise.knobs]\n"coap.ack_timeot_s" = 2.0', "advise.knobs.coap.ack_timeot_s: unknown knob (did you mean"),
    ('[advise.knobs]\n"coap.ack_timeout_s" = { min = 4.0, max = 1.0 }', "advise.knobs.coap.ack_timeout_s: an empty range"),
    ('[advise.knobs]\n"coap.cc" = []', "advise.knobs.coap.cc: an empty list"),
    ("[advise]\nevaluations = -3", "advise.evaluations: -3 is not allowed; expected an integer >= 1"),
    ("[advise]\nminutes = 0", "advise.minutes: 0 is not allowed"),
    ('[advise]\nobjectives = ["throughput"]', "advise.objectives: 'throughput' is not an objective"),
    ("[advise]\nbudget = 3", "advise.budget: unknown key"),
    ('[advise.knobs]\n"coap.cc" = ["cocoa", "reno"]', 'advise.knobs.coap.cc[1]: "reno" is not a UDP algorithm'),
])
def test_bad_advise_tables_are_one_line(tmp_path, cli, table, fragment):
    f = tmp_path / "bad.toml"
    f.write_text("[workload]\nclients = 2\nexchanges = 2\n" + table + "\n")
    r = cli("advise", f, "--db", tmp_path / "x.duckdb")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert fragment in r.stderr, r.stderr


def test_bad_compare_is_one_line(tmp_path, cli):
    f = tmp_path / "d.toml"
    f.write_text("[workload]\nclients = 2\nexchanges = 2\n[advise]\n")
    r = cli("advise", f, "--compare", "ack_timeout=15", "--db", tmp_path / "x.duckdb")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "--compare: 'coap.ack_timeout' is not a knob" in r.stderr


def test_the_advise_table_does_not_reach_the_engine(tmp_path, cli):
    # `coaplab run` takes a deployment file as any scenario: [advise] is Python's, never the engine's.
    f = tmp_path / "d.toml"
    f.write_text("[workload]\nclients = 2\nexchanges = 2\n[advise]\nevaluations = 3\n")
    r = cli("run", f, "--no-db", "--format", "json", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "advise" not in json.loads(r.stdout.splitlines()[0])["config"]


def test_defaults_come_from_the_registry():
    knobs = advise.default_knobs()
    from coaplab import _core

    assert knobs["coap.cc"].values == tuple(_core.algorithms())
    # PROBING_RATE: RFC 7252 §4.8's 1 byte/s up to 1000 bytes/s (no limit in effect).
    assert knobs["coap.probing_rate_bps"].values == (1.0, 10.0, 100.0, 1000.0)



def test_energy_objectives_come_from_the_summary():
    # Nothing is hard-wired: whatever numeric `energy.*` fields a summary has become objectives,
    # a lifetime maximised, anything else minimised; defaults add those per exchange and the life.
    summary = {"energy": {"per_exchange_mj": 1.5, "battery_life_days": 300.0, "radio": "nb-iot"}}
    objs = advise.energy_objectives(summary)
    assert sorted(objs) == ["energy.battery_life_days", "energy.per_exchange_mj"]
    assert objs["energy.battery_life_days"].maximise and not objs["energy.per_exchange_mj"].maximise
    # Two replications: per exchange 1.0 and 2.0 mJ; the summary's mean 1.5 is the value, and the
    # interval of the mean of two values resampled lies within [1.0, 2.0].
    runs = [{"clients": [{"exchanges_completed": 2, "exchanges_failed": 0, "mean_exchange_s": 1.0}],
             "energy": {"per_exchange_mj": v, "battery_life_days": 300.0}} for v in (1.0, 2.0)]
    m = advise.measure(advise.Case(summary, runs, 0))
    assert m["energy.per_exchange_mj"]["value"] == 1.5
    lo, hi = m["energy.per_exchange_mj"]["ci"]
    assert 1.0 <= lo <= hi <= 2.0
    advice = advise.load_advice({"workload": {"clients": 1, "exchanges": 1}, "advise": {}})
    assert [o.name for o in advise.choose_objectives(advice, m)] == [
        "latency_p95_s", "delivered", "energy.per_exchange_mj", "energy.battery_life_days"]
    # Without energy fields the defaults are latency and delivered only.
    plain = {k: v for k, v in m.items() if not k.startswith("energy.")}
    assert [o.name for o in advise.choose_objectives(advice, plain)] == ["latency_p95_s", "delivered"]
    named = advise.load_advice({"workload": {"clients": 1, "exchanges": 1}, "advise": {"objectives": ["energy.x"]}})
    with pytest.raises(advise.AdviseError, match="'energy.x' is not in this deployment's summary"):
        advise.choose_objectives(named, m)


def test_a_larger_budget_continues_the_same_sequence(tmp_path):
    # The candidates depend only on the seed and the (stored) results: 6 evaluations start with
    # the 3 of a first call, whose runs come from the database.
    import tomllib

    raw = tomllib.loads(RESUME)
    db = tmp_path / "b.duckdb"
    raw["advise"]["evaluations"] = 3
    first = advise.advise(raw, db=db, jobs=2)[0]
    raw["advise"]["evaluations"] = 6
    second = advise.advise(raw, db=db, jobs=2)[0]
    assert [p["knobs"] for p in second["evaluated"][:3]] == [p["knobs"] for p in first["evaluated"]]
    assert [p["runs_executed"] for p in second["evaluated"][:3]] == [0, 0, 0]
    assert len(second["evaluated"]) > 3 and any(p["runs_executed"] for p in second["evaluated"][3:])


def test_fairness_is_not_graded_on_reporting_devices(tmp_path):
    """TR 45.820's devices report every 30 min to every day by design, so Jain's index of their
    completed exchanges measures the mix (a device of 1 report a day against one of 48), not
    the algorithm: advise marks the criterion n/a there, with the reason."""
    f = tmp_path / "reporting.toml"
    f.write_text('name = "rep"\nseed = 2\n[workload]\nkind = "reporting"\nclients = 6\nduration_s = 7200.0\n'
                 'response_bytes = 4\n[advise]\nreplications = 2\nevaluations = 1\n[advise.knobs]\n'
                 '"coap.cc" = "default"\n"coap.ack_timeout_s" = 2.0\n"coap.ack_random_factor" = 1.5\n'
                 '"coap.max_retransmit" = 4\n"coap.nstart" = 1\n"coap.probing_rate_bps" = 1000.0\n')
    ans, _ = advise.advise(f, db=tmp_path / "a.duckdb", jobs=2)
    (cand,) = ans["evaluated"]
    assert cand["criteria"]["fairness"]["grade"] == "n/a"
    assert "TR 45.820" in cand["criteria"]["fairness"]["where"]
