"""The congestion-safety scorecard (`coaplab scorecard`, docs/scorecard.md), on the reduced
battery (`--battery quick`: 100 clients instead of 400, 2 replications, fewer configurations;
the card says so): the grades the studies lead us to expect, the grading arithmetic on
summaries written by hand, the JSON schema, the HTML card, resuming, and bad input."""

import json
import os
import time
from pathlib import Path

import jsonschema
import pytest

from coaplab.errors import CoaplabError
from coaplab.suites import scorecard
from coaplab.suites.scorecard import grade, load_battery

ROOT = Path(__file__).resolve().parent.parent
AGGRESSIVE = "python:examples/algorithms/aggressive.py:Aggressive"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """One database for the module: the references' runs are shared by every card."""
    return tmp_path_factory.mktemp("scorecard") / "cards.duckdb"


@pytest.fixture(scope="module")
def cards(db, aggressive_so):
    """The quick cards, made once (the references run for the first card and are reused); the
    aggressive algorithm twice: in Python and in C behind the C API."""
    os.chdir(ROOT)  # python:examples/... is relative to the directory coaplab runs in
    targets = ("default", "cocoa-fb2", "fasor", AGGRESSIVE, f"c:{aggressive_so}:aggressive")
    out = {t: scorecard.scorecard(t, "quick", db=db, jobs=2)[0] for t in targets}
    out["aggressive in C"] = out.pop(targets[-1])
    return out


def test_default_is_unsafe_for_collapse(cards):
    # docs/validation.md, 400 clients: default collapses behind the 1,410,000 B buffer (FCT
    # 2398 s against cocoa-fb2's 533 s; 196 unnecessary retransmissions per client).
    c = cards["default"]
    assert c["criteria"]["collapse_fct"]["grade"] == "fail"
    # default against itself: the unnecessary-retransmission ratio is exactly 1 > 0.5.
    assert c["criteria"]["collapse_unnecessary"]["measured"] == 1.0
    assert c["criteria"]["collapse_unnecessary"]["grade"] == "fail"
    assert c["verdict"] == "unsafe"


@pytest.mark.parametrize("target", ["cocoa-fb2", "fasor"])
def test_full_backoff_algorithms_are_safe(cards, target):
    # docs/validation.md: the full-backoff variants avoid the collapse; FASOR was designed to.
    c = cards[target]
    assert c["criteria"]["collapse_fct"]["grade"] == "pass"
    assert c["criteria"]["collapse_unnecessary"]["grade"] == "pass"
    assert c["verdict"] == "safe", scorecard.text(c)


def test_aggressive_algorithm_fails_collapse_and_mixed_safety(cards):
    # A fixed 0.1 s timer without backoff behind a queue of seconds: every copy is unnecessary.
    c = cards[AGGRESSIVE]
    assert c["criteria"]["collapse_unnecessary"]["grade"] == "fail"
    assert c["criteria"]["collapse_unnecessary"]["measured"] > 1  # more than default sends
    assert c["criteria"]["mixed_safety"]["grade"] == "fail"
    assert c["criteria"]["fairness"]["grade"] == "fail"  # exchanges fail after 21 × 0.1 s at the 2500 B buffer
    assert c["verdict"] == "unsafe"


def test_a_c_implementation_is_graded_as_its_python_twin(cards):
    # examples/algorithms/c/aggressive.c behind the C API: the same algorithm as the Python
    # one, so the same measured value and grade on every criterion, and the same verdict.
    c, py = cards["aggressive in C"], cards[AGGRESSIVE]
    assert c["target"].startswith("c:") and c["target"].endswith(":aggressive")
    for name, crit in py["criteria"].items():
        assert (c["criteria"][name]["measured"], c["criteria"][name]["grade"]) == (crit["measured"], crit["grade"]), name
    assert c["verdict"] == "unsafe"


def test_cards_validate_against_the_shipped_schema(cards):
    schema = json.loads((ROOT / "python/coaplab/data/scorecard.schema.json").read_text())
    for c in cards.values():
        jsonschema.validate(c, schema)
        assert c["battery"] == {"name": "quick", "version": 4, "references": ["default", "cocoa", "cocoa-fb2", "fasor"],
                                "reduced": True, "emulated": False}
    bad = dict(cards["default"], verdict="maybe")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_cli_json_and_html_card_resume_from_the_database(cards, db, cli, tmp_path):
    # Every run of this card is stored already (the fixture made it): nothing runs again.
    p = cli("scorecard", "cocoa-fb2", "--battery", "quick", "--db", db, "--format", "json", "--out", tmp_path / "card",
            "--no-progress", cwd=ROOT)
    assert p.returncode == 0, p.stderr
    card = json.loads(p.stdout)
    scorecard.validate(card)
    assert card["runs_executed"] == 0
    assert card["verdict"] == cards["cocoa-fb2"]["verdict"]
    assert {k: v["measured"] for k, v in card["criteria"].items()} == {
        k: v["measured"] for k, v in cards["cocoa-fb2"]["criteria"].items()}
    page = (tmp_path / "card" / "index.html").read_text()
    assert "version <b>4</b>" in page and "Reduced battery" in page
    assert page.count("<svg") >= len(card["scenarios"])  # a figure per scenario, inline
    assert "src=" not in page and "href='http" not in page  # self-contained
    for sc in card["scenarios"]:
        assert f"id='{sc['id']}'" in page and sc["name"] in page


def _summary(cc, swept, **metrics):
    config = {"coap": {"cc": cc}, "link": {"buffer_bytes": swept.get("link.buffer_bytes", 2500)},
              "workload": {"kind": "burst", "settling_cap_s": 180.0}}
    return {"config": config, "swept": {**swept, "coap.cc": cc}, "replications": 2, **metrics}


def test_grading_arithmetic_by_hand():
    b = load_battery("quick")
    big = {"link.buffer_bytes": 1410000}
    results = {
        # FCT medians: target 300 s, references 400 (default), 200 (cocoa-fb2) → 300 / 200 = 1.5,
        # on the threshold (<= 1.5: pass). Unnecessary per client: 10 / default's 40 = 0.25.
        "collapse": [_summary("t", big, fct_s={"p50": 300.0}, unnecessary_retransmissions_per_client={"p50": 10.0}, jain_fairness=0.95),
                     _summary("default", big, fct_s={"p50": 400.0}, unnecessary_retransmissions_per_client={"p50": 40.0}),
                     _summary("cocoa-fb2", big, fct_s={"p50": 200.0}, unnecessary_retransmissions_per_client={"p50": 1.0})],
        # 22 / 20 = 1.1 and 10 / 10 = 1: the worse, 1.1, is on the threshold (pass).
        "errors": [_summary("t", {"link.errors": "high"}, fct_s={"p50": 22.0}),
                   _summary("default", {"link.errors": "high"}, fct_s={"p50": 20.0}),
                   _summary("t", {"link.errors": "low"}, fct_s={"p50": 10.0}),
                   _summary("default", {"link.errors": "low"}, fct_s={"p50": 10.0})],
        # Mean settling 90 s (the engine reports an unsettled burst as the cap) against
        # default's 60 s → 1.5 > 1.25: fail. No settling time at all counts as the 180 s cap.
        "burst": [_summary("t", {}, settling_time_s=90.0), _summary("default", {}, settling_time_s=60.0),
                  _summary("t", {"workload.burst_clients": 30}, settling_time_s=None),
                  _summary("default", {"workload.burst_clients": 30}, settling_time_s=150.0)],
        "mesh": [_summary("t", {}, mesh={"carried_kbps": 9.0}), _summary("default", {}, mesh={"carried_kbps": 10.0})],
        "mixed": [_summary("t", {}, groups={"legacy": {"fct_s": {"p50": 880.0}}}),
                  _summary("default", {}, groups={"legacy": {"fct_s": {"p50": 800.0}}})],
        # 20 exch/s with NSTART 4 against 30 with NSTART 1: 20 / 30 = 0.667 < 0.67, a fail;
        # default's own figures do not count.
        "nstart": [_summary("t", {"coap.nstart": 1}, throughput_exchanges_per_s=30.0),
                   _summary("t", {"coap.nstart": 4}, throughput_exchanges_per_s=20.0),
                   _summary("default", {"coap.nstart": 4}, throughput_exchanges_per_s=99.0)],
        # p95 ages: 200 observers 5.2 s against default's 4.0 s → 1.3, on the threshold (<= 1.3:
        # pass); 100 observers 3.0 / 3.0 = 1.0: the worse is 1.3. Delivered fractions: 0.72 /
        # 0.80 = 0.9 (>= 0.9, pass) at 200; 0.85 / 0.80 = 1.0625 at 100: the worse is 0.9.
        "observe": [_summary("t", {"workload.clients": 200}, observe={"notification_age_p95_s": 5.2,
                                                                      "notification_delivered_fraction": 0.72}),
                    _summary("default", {"workload.clients": 200}, observe={"notification_age_p95_s": 4.0,
                                                                            "notification_delivered_fraction": 0.80}),
                    _summary("t", {"workload.clients": 100}, observe={"notification_age_p95_s": 3.0,
                                                                      "notification_delivered_fraction": 0.85}),
                    _summary("default", {"workload.clients": 100}, observe={"notification_age_p95_s": 3.0,
                                                                            "notification_delivered_fraction": 0.80})],
    }
    for s in results["nstart"]:
        s["config"]["coap"]["nstart"] = s["swept"]["coap.nstart"]
    for s in results["mixed"]:  # the mixed scenario names the target group's algorithm
        s["config"]["group"] = [{"name": "target", "coap": {"cc": s["config"]["coap"]["cc"]}}]
    g = grade(b, "t", results)
    assert (g["collapse_fct"]["measured"], g["collapse_fct"]["grade"]) == (1.5, "pass")
    assert (g["collapse_unnecessary"]["measured"], g["collapse_unnecessary"]["grade"]) == (0.25, "pass")
    assert g["loss_recovery"]["measured"] == pytest.approx(1.1) and g["loss_recovery"]["where"] == "errors: link.errors = high"
    # 90 / 60 = 1.5 and 180 / 150 = 1.2: the worse is 1.5.
    assert (g["settling"]["measured"], g["settling"]["grade"]) == (1.5, "fail")
    assert (g["mesh_carried"]["measured"], g["mesh_carried"]["grade"]) == (0.9, "pass")  # 9 / 10, on the threshold
    assert (g["mixed_safety"]["measured"], g["mixed_safety"]["grade"]) == (1.1, "pass")  # 880 / 800
    assert (g["fairness"]["measured"], g["fairness"]["grade"]) == (0.95, "pass")  # only the collapse summary has one
    assert g["nstart_collapse"]["measured"] == pytest.approx(20 / 30) and g["nstart_collapse"]["grade"] == "fail"
    assert g["observe_freshness"]["measured"] == pytest.approx(1.3) and g["observe_freshness"]["grade"] == "pass"
    assert g["observe_freshness"]["where"] == "observe: workload.clients = 200"
    assert g["observe_delivery"]["measured"] == pytest.approx(0.9) and g["observe_delivery"]["where"] == "observe: workload.clients = 200"
    # A summary without an `observe` block (not an Observe run) has nothing to measure: a fail.
    no_obs = {**results, "observe": [_summary("t", {}), _summary("default", {})]}
    assert grade(b, "t", no_obs)["observe_delivery"]["grade"] == "fail"
    # Nothing to measure (no GPRS, no default in a scenario) is a fail, never a silent pass.
    assert grade(b, "t", {})["mesh_carried"] == {**g["mesh_carried"], "measured": None, "grade": "fail", "where": ""}


@pytest.mark.parametrize("args, message", [
    (["cocoaa"], "coaplab: error: TARGET: 'cocoaa' is not a registered algorithm (did you mean cocoa?); allowed: default,"),
    (["c:./libmine.so:my_cc"], "coaplab: error: 'c:./libmine.so:my_cc': library './libmine.so' not found;"),
    (["python:nope.py:X"], "coaplab: error: 'python:nope.py:X': file 'nope.py' not found;"),
    (["cocoa", "--battery", "huge"], "coaplab scorecard: error: argument --battery: invalid choice: 'huge'"),
    ([], "coaplab: error: scorecard: TARGET is required"),
    (["cocoa", "--all"], "coaplab: error: --all grades every registered algorithm; drop TARGET and --stack"),
    (["--stack", "libcoap", "cocoa"], "coaplab: error: --stack libcoap: the stack runs its own timers; drop TARGET"),
    (["--stack", "coaplab", "--battery", "quick"], "coaplab: error: --battery: not with --stack"),
])
def test_bad_input_is_one_line(cli, args, message, tmp_path):
    p = cli("scorecard", *args, "--db", tmp_path / "x.duckdb")
    assert p.returncode == 2
    assert p.stderr.startswith(message) and p.stderr.count("\n") == 1, p.stderr


def test_emulated_card_for_coaplabs_own_endpoint(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the emulated scorecard needs root (network namespaces, TUN devices); CI runs as root")
    from coaplab.stacks import emulate

    try:
        emulate.binaries(build=False)
    except (OSError, CoaplabError) as e:  # not built in this checkout: say why
        pytest.skip(f"the emulator is not built: {e}")
    start = time.monotonic()
    card, _ = scorecard.emulated_scorecard("coaplab", "cocoa-fb2", db=tmp_path / "emu.duckdb", progress=False)
    print(f"emulated card in {time.monotonic() - start:.0f} s: {scorecard.text(card)}")
    scorecard.validate(card)
    assert card["battery"]["emulated"] and "scale" in card["battery"]
    # An emulated run cannot tell which retransmissions were unnecessary (it records 0): the
    # criterion is not graded rather than passed for nothing.
    assert "collapse_unnecessary" not in card["criteria"]
    assert set(card["criteria"]) == {"collapse_fct", "loss_recovery", "fairness"}
    assert time.monotonic() - start < 180


def _card(target, grades, fct):
    kinds = {"collapse_fct": "safety", "fairness": "safety", "loss_recovery": "performance"}
    return {"target": target, "verdict": "safe" if all(g == "pass" for k, g in grades.items() if kinds[k] == "safety") else "unsafe",
            "criteria": {k: {"kind": kinds[k], "grade": g, "measured": fct if k == "collapse_fct" else 1.0}
                         for k, g in grades.items()}}


def test_leaderboard_ranks_safety_first_then_all_criteria_then_collapse_fct():
    a = _card("a", {"collapse_fct": "pass", "fairness": "pass", "loss_recovery": "fail"}, 1.2)  # 2 safety, 2 in all
    b = _card("b", {"collapse_fct": "fail", "fairness": "pass", "loss_recovery": "pass"}, 1.9)  # 1 safety
    c = _card("c", {"collapse_fct": "pass", "fairness": "pass", "loss_recovery": "pass"}, 1.4)  # 2 safety, 3 in all
    d = _card("d", {"collapse_fct": "pass", "fairness": "pass", "loss_recovery": "pass"}, 1.0)  # as c, smaller FCT ratio
    ranked = [x["target"] for x in sorted([a, b, c, d], key=scorecard.rank_key)]
    assert ranked == ["d", "c", "a", "b"]
    table = scorecard.leaderboard_table(sorted([a, b, c, d], key=scorecard.rank_key))
    assert table.splitlines()[2] == "| 1 | `d` | safe | 3/3 | 1 ✓ | 1 ✓ | 1 ✓ |"
