"""Replay from Python and from the command line (docs/design.md §3.2), including bad scripts."""

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import coaplab
from coaplab.errors import ScriptError


def test_cocoa_first_strong_sample_by_hand():
    # R = 0.5: E_strong = 0.5 + 4·0.25 = 1.5; RTO = 0.5·1.5 + 0.5·2 = 1.75 s.
    [r] = coaplab.replay("cocoa", [{"start": 0, "lost": 0, "rtt": 0.5}])
    assert r["timers"] == [2.0]
    assert r["sample"] == {"kind": "strong", "rtt": 0.5}
    assert r["rto_after"] == pytest.approx(1.75)
    assert r["failed"] is False
    assert r["state"]["srtt_strong"] == pytest.approx(0.5)


def test_failure_after_max_retransmit_default_4():
    # lost 5 > MAX_RETRANSMIT 4: timers 2, 4, 8, 16, 32 then failure.
    [r] = coaplab.replay("default", [{"start": 0, "lost": 5, "rtt": 0.5}])
    assert r["timers"] == [2.0, 4.0, 8.0, 16.0, 32.0]
    assert r["failed"] is True
    assert r["sample"]["kind"] == "none"
    [r] = coaplab.replay("default", [{"start": 0, "lost": 5, "rtt": 0.5}], max_retransmit=5)
    assert r["failed"] is False


def test_fasor_state_is_reported():
    r = coaplab.replay("fasor", [{"start": 0, "lost": 0, "rtt": 1}, {"start": 5, "lost": 1, "rtt": 1}])
    assert r[1]["state"]["state"] == "FAST_SLOW_FAST"
    # SlowRTO = 1.5 × (7.75 − 5) = 4.125 (copy 1 sent at 5 + 1.75, answered 1 s later).
    assert r[1]["state"]["slow_rto"] == pytest.approx(4.125)


def test_dither_on_is_seeded_and_within_range():
    script = [{"start": 10.0 * i, "lost": 0, "rtt": 0.5} for i in range(50)]
    a = coaplab.replay("default", script, dither=True, seed=3)
    b = coaplab.replay("default", script, dither=True, seed=3)
    c = coaplab.replay("default", script, dither=True, seed=4)
    assert a == b and a != c
    assert all(2.0 <= r["timers"][0] <= 3.0 for r in a)


@pytest.mark.parametrize(
    "script, fragment",
    [
        ({"start": 0}, "must be a JSON list"),
        ([{"start": 0, "lost": 0}], "exchange 0: missing field 'rtt'"),
        ([{"start": 0, "lost": -1, "rtt": 1}], "exchange 0: field 'lost' = -1 is out of range"),
        ([{"start": 0, "lost": 0, "rtt": 1}, {"start": -2, "lost": 0, "rtt": 1}], "exchange 1: field 'start' = -2"),
        ([{"start": 0, "lost": 1.5, "rtt": 1}], "exchange 0: field 'lost' = 1.5 is not a non-negative integer"),
        ([{"start": 0, "lost": 0, "rtt": "x"}], "exchange 0: field 'rtt' = 'x'"),
        ([{"start": 0, "lost": 0, "rtt": 1, "jitter": 2}], "exchange 0: unknown field 'jitter'"),
        ([5], "exchange 0: expected an object"),
        # #0 ends at 0.5 s (answered at once); #1 starts at 0.4 s.
        ([{"start": 0, "lost": 0, "rtt": 0.5}, {"start": 0.4, "lost": 0, "rtt": 1}], "exchange 1: field 'start' = 0.4 s is earlier than the end of exchange 0"),
    ],
)
def test_bad_scripts(script, fragment):
    with pytest.raises(ScriptError, match=fragment.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        coaplab.replay("default", script)


def test_unknown_algorithm_lists_names():
    with pytest.raises(ScriptError, match="valid names: default, default-fb1"):
        coaplab.replay("cocoaa", [])


def test_cli_replay_californium_variant(cli, write_json):
    # Californium's Cocoa/Rto (docs/algorithms.md): T_0 = 2000 ms; R = 1000: RTT 1000, RTTVAR 500,
    # E = 1000 + max(100, 4·500) = 3000, RTO = round(0.5·3000 + 0.5·2000) = 2500. Then
    # R = 1200: RTTVAR = round(0.875·500 + 0.125·200) = 463, RTT = round(0.75·1000 + 0.25·1200)
    # = 1050, E = 1050 + 4·463 = 2902, RTO = round(0.5·2902 + 0.5·2500) = 2701.
    p = write_json([{"start": 0, "lost": 0, "rtt": 1.0}, {"start": 10, "lost": 0, "rtt": 1.2}])
    out = cli("replay", "cocoa@californium", p)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert [x["timers"] for x in r] == [[2.0], [2.5]]
    assert [x["rto_after"] for x in r] == [pytest.approx(2.5), pytest.approx(2.701)]
    assert r[1]["state"]["rttvar_strong"] == pytest.approx(0.463)


def test_cli_replay_json(cli, write_json):
    p = write_json([{"start": 0, "lost": 1, "rtt": 0.5}])
    out = cli("replay", "cocoa", p)
    assert out.returncode == 0, out.stderr
    [r] = json.loads(out.stdout)
    # T_0 = 2, VBF ×2 → 4; weak R = 2.5: RTO = 0.25·3.75 + 0.75·2 = 2.4375.
    assert r["timers"] == [2.0, 4.0] and r["sample"]["kind"] == "weak"
    assert r["rto_after"] == pytest.approx(2.4375)


def test_cli_replay_compare_table(cli):
    out = cli("replay", "--compare", "default,cocoa,fasor", "examples/loss-burst.json", cwd=str(__import__("conftest").ROOT))
    assert out.returncode == 0, out.stderr
    rows = [l for l in out.stdout.splitlines() if l[:1].isdigit()]
    assert len(rows) == 8 and all(l.count("->") == 3 for l in rows)
    assert "-> FAIL" not in out.stdout  # max_retransmit 4 suffices for this script


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["replay", "cocoa", "missing.json"], "cannot read script"),
        (["replay", "nope", "SCRIPT"], "unknown algorithm 'nope'"),
        (["replay", "cocoa@california", "SCRIPT"], "unknown algorithm 'cocoa@california' (did you mean \"cocoa@californium\"?); valid names: "),
        (["replay", "cocoa", "BAD"], "not valid JSON"),
        (["replay", "cocoa", "OVERLAP"], "exchange 1: field 'start'"),
    ],
)
def test_cli_replay_errors_are_one_line(cli, write_json, args, fragment):
    good = write_json([{"start": 0, "lost": 0, "rtt": 0.5}], "good.json")
    bad = write_json("[{", "bad.json")
    overlap = write_json([{"start": 0, "lost": 0, "rtt": 0.5}, {"start": 0.1, "lost": 0, "rtt": 0.5}], "overlap.json")
    args = [{"SCRIPT": good, "BAD": bad, "OVERLAP": overlap}.get(a, a) for a in args]
    out = cli(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coaplab: error: ") and fragment in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def test_cli_bad_arguments_exit_2(cli):
    out = cli("replay", "cocoa", "x.json", "--max-retransmit", "-3")
    assert out.returncode == 2 and "out of range" in out.stderr


exchange = st.fixed_dictionaries({"gap": st.floats(0, 1000), "lost": st.integers(0, 30), "rtt": st.floats(0, 100)})


@settings(max_examples=40, deadline=None)
@example(steps=[{"gap": 1.1558761743588093, "lost": 0, "rtt": 0.0}, {"gap": 0.0, "lost": 0, "rtt": 0.0}],
         algorithm="default", max_retransmit=0)  # a start from the previous `end` (whole ns) is not earlier
@given(st.lists(exchange, max_size=15), st.sampled_from(coaplab._core.algorithms()), st.integers(0, 40))
def test_replay_never_crashes(steps, algorithm, max_retransmit):
    # Build a sequential script from the previous exchange's end.
    t, script = 0.0, []
    for s in steps:
        script.append({"start": t + s["gap"], "lost": s["lost"], "rtt": s["rtt"]})
        t = coaplab.replay(algorithm, script, max_retransmit=max_retransmit)[-1]["end"]
    out = coaplab.replay(algorithm, script, max_retransmit=max_retransmit)
    assert len(out) == len(script)
    for r in out:
        assert len(r["timers"]) == r["retransmissions"] + 1
