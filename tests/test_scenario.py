"""Scenario validation (docs/design.md §7.1): every kind of bad input names the key, the value and what
is allowed, before anything runs; defaults, sweeps and identities."""

import pytest

from coaplab.describe.scenario import DEFAULT_START_SPREAD_S, MODEL_VERSION, config_id, load_scenario, resolve
from coaplab.errors import ScenarioError


def test_defaults_resolve_to_spec_testbed():
    c = resolve({})
    assert c["link"] == {
        "downlink_kbps": 30.0, "uplink_kbps": 60.0, "downlink_delay_ms": 400.0, "uplink_delay_ms": 200.0,
        "mtu": 296, "buffer_bytes": 2500, "uplink_buffer_bytes": None, "path_delay_ms": [10.0, 20.0],
        "link_overhead_bytes": 0, "errors": "none",
    }
    assert c["coap"]["cc"] == "cocoa" and c["coap"]["max_retransmit"] == 4 and c["coap"]["nstart"] == 1
    assert c["workload"]["start_spread_s"] == DEFAULT_START_SPREAD_S
    assert c["replications"] == 1 and c["seed"] == 1


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ({"colour": 1}, "colour: unknown key; allowed at the top level"),
        ({"link": {"bufer_bytes": 1}}, 'link.bufer_bytes: unknown key (did you mean "buffer_bytes"?); allowed: downlink_kbps'),
        ({"workload": {"clientz": 1}}, "workload.clientz: unknown key"),
        ({"coap": {"algorithm": "x"}}, "coap.algorithm: unknown key"),
        ({"link": {"buffer_bytes": "big"}}, 'link.buffer_bytes: "big" is not allowed; expected an integer >= 0'),
        ({"link": {"buffer_bytes": -5}}, "link.buffer_bytes: -5 is out of range; expected an integer >= 0"),
        ({"link": {"buffer_bytes": 2.5}}, "link.buffer_bytes: 2.5 is not allowed; expected an integer"),
        ({"link": {"downlink_kbps": 0}}, "link.downlink_kbps: 0 is out of range; expected a number >= 0.001 and <= 1e+06"),
        ({"workload": {"clients": 0}}, "workload.clients: 0 is out of range; expected an integer >= 1"),
        ({"workload": {"clients": True}}, "workload.clients: true is not allowed"),
        ({"workload": {"kind": "steady"}}, 'workload.kind: "steady" is not allowed; expected one of continuous, random, burst, firmware'),
        ({"workload": {"batch": [5, 2]}}, "workload.batch: [5, 2] has min > max"),
        ({"link": {"path_delay_ms": [10]}}, "link.path_delay_ms: [10] is not allowed; expected a list [min, max]"),
        ({"coap": {"cc": "cocoaa"}}, 'coap.cc: "cocoaa" is not a UDP algorithm (did you mean "cocoa"?); allowed: default, default-fb1'),
        ({"coap": {"cc": "newreno"}}, 'coap.cc: "newreno" is not a UDP algorithm (a TCP controller'),
        ({"coap": {"transport": "tcp", "cc": "cocoa"}}, 'coap.cc: "cocoa" is not a TCP congestion controller; allowed with coap.transport = "tcp": newreno'),
        ({"coap": {"transport": "quic"}}, 'coap.transport: "quic" is not allowed; expected one of udp, tcp'),
        ({"coap": {"max_retransmit": 64}}, "coap.max_retransmit: 64 is out of range; expected an integer >= 0 and <= 63"),
        ({"link": {"errors": "heavy"}}, 'link.errors: "heavy" is not allowed; expected one of none, low, medium, high'),
        ({"link": {"errors": {"good_loss": 0.1}}}, "link.errors.good_mean_ms: missing"),
        ({"link": {"errors": {"good_mean_ms": 400, "good_min_ms": 60, "good_max_ms": 1200, "good_loss": 1.5,
                                  "bad_mean_ms": 100, "bad_min_ms": 30, "bad_max_ms": 300, "bad_loss": 0.5}}}, "link.errors.good_loss: 1.5 is out of range"),
        ({"link": {"errors": {"good_mean_ms": 40, "good_min_ms": 60, "good_max_ms": 1200, "good_loss": 0,
                                  "bad_mean_ms": 100, "bad_min_ms": 30, "bad_max_ms": 300, "bad_loss": 0.5}}}, "good_min_ms <= good_mean_ms <= good_max_ms does not hold"),
        ({"workload": {"kind": "burst"}}, 'workload.burst_at_s: required when workload.kind = "burst"'),
        ({"workload": {"burst_at_s": 3}}, 'workload.burst_at_s: only meaningful when workload.kind = "burst"'),
        ({"workload": {"kind": "random", "duration_s": 10}}, "workload.duration_s: only meaningful for continuous, burst, periodic, reporting, observe or lwm2m"),
        ({"trace": "yes"}, 'trace: "yes" is not allowed; expected true or false'),
        ({"link": 5}, "link: 5 is not allowed; expected a table"),
    ],
)
def test_each_kind_of_bad_input(raw, fragment):
    with pytest.raises(ScenarioError) as e:
        load_scenario(raw)
    assert fragment in str(e.value)
    assert "\n" not in str(e.value)


def test_custom_error_table_accepted():
    table = {"good_mean_ms": 400, "good_min_ms": 60, "good_max_ms": 1200, "good_loss": 0.0,
                 "bad_mean_ms": 100, "bad_min_ms": 30, "bad_max_ms": 300, "bad_loss": 0.5}
    c = load_scenario({"link": {"errors": table}}).configurations()[0]
    assert c["link"]["errors"]["bad_loss"] == 0.5


@pytest.mark.parametrize(
    "sweep, fragment",
    [
        ({"coap.nstrat": [1]}, "sweep.coap.nstrat: unknown key (did you mean \"coap.nstart\"?); closest of the 18 keys of [coap]: coap.nstart"),
        ({"coap.cc": []}, "sweep.coap.cc: [] is not allowed; expected a non-empty list"),
        ({"coap.cc": "cocoa"}, 'sweep.coap.cc: "cocoa" is not allowed; expected a non-empty list'),
        ({"coap.cc": ["cocoa", "nope"]}, 'coap.cc: "nope" is not a UDP algorithm'),
        ({"link.buffer_bytes": [2500, -1]}, "(in the sweep configuration link.buffer_bytes = -1)"),
        ({"coap": {"cc": ["cocoa"]}}, 'write dotted sweep keys in quotes'),
    ],
)
def test_bad_sweeps_fail_before_running(sweep, fragment):
    with pytest.raises(ScenarioError) as e:
        load_scenario({"sweep": sweep})
    assert fragment in str(e.value)


def test_sweep_order_and_identity():
    s = load_scenario({"sweep": {"coap.cc": ["default", "cocoa"], "link.buffer_bytes": [2500, 14100, 28200]}})
    confs = s.configurations()
    # Cartesian product, first key slowest: 2 × 3 = 6.
    assert [(c["coap"]["cc"], c["link"]["buffer_bytes"]) for c in confs] == [
        ("default", 2500), ("default", 14100), ("default", 28200), ("cocoa", 2500), ("cocoa", 14100), ("cocoa", 28200)]
    ids = [config_id(c) for c in confs]
    assert len(set(ids)) == 6
    # Same parameters → same identity; a default written out explicitly changes nothing.
    assert config_id(resolve({"coap": {"cc": "default"}, "link": {"buffer_bytes": 2500}})) == ids[0]
    assert config_id(resolve({"coap": {"cc": "default", "nstart": 1}})) == ids[0]
    # Any change → a different identity.
    assert config_id(resolve({"coap": {"cc": "default"}, "seed": 2})) != ids[0]
    assert MODEL_VERSION in __import__("coaplab.describe.scenario").describe.scenario.MODEL_VERSION


def test_toml_files(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('name = "x"\n[workload]\nclients = 3\n[sweep]\n"coap.cc" = ["default", "fasor"]\n')
    s = load_scenario(p)
    assert [c["coap"]["cc"] for c in s.configurations()] == ["default", "fasor"]
    p.write_text("name = \n")
    with pytest.raises(ScenarioError, match="not valid TOML"):
        load_scenario(p)
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        load_scenario(tmp_path / "missing.toml")


def test_shipped_examples_are_valid():
    from conftest import ROOT

    for p in (ROOT / "examples").glob("*.toml"):
        assert load_scenario(p).configurations()
