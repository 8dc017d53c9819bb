"""Client populations (`[[group]]`) and `[network]` in scenario files: inheritance, the resolved
form, validation with group-qualified keys, group sweep keys."""

import json

import pytest

from coaplab.describe.scenario import config_id, load_scenario, resolve
from coaplab.errors import ScenarioError
from conftest import ROOT


def test_groups_inherit_and_override():
    s = load_scenario({"link": {"buffer_bytes": 1410000},
                       "workload": {"kind": "continuous", "exchanges": 30},
                       "coap": {"max_retransmit": 20, "cc": "cocoa"},
                       "group": [{"name": "legacy", "clients": 200, "coap": {"cc": "default"}},
                                 {"name": "safe", "workload": {"clients": 7, "exchanges": 9}}]})
    [c] = s.configurations()
    base = resolve({"link": {"buffer_bytes": 1410000}, "workload": {"kind": "continuous", "exchanges": 30},
                    "coap": {"max_retransmit": 20, "cc": "cocoa"}})
    # The top level is the base, exactly as without groups; "group" is added at the end.
    assert list(c) == list(base) + ["group"]
    assert {k: v for k, v in c.items() if k != "group"} == base
    legacy, safe = c["group"]
    assert list(legacy) == ["name", "workload", "coap"]  # UDP: no tcp key
    assert legacy["name"] == "legacy" and legacy["workload"] == base["workload"] | {"clients": 200}
    assert legacy["coap"] == base["coap"] | {"cc": "default"}
    assert safe["workload"] == base["workload"] | {"clients": 7, "exchanges": 9}
    assert safe["coap"] == base["coap"]
    # A group changes the identity; the same groups written differently do not.
    assert config_id(c) != config_id(base)
    same = load_scenario({"link": {"buffer_bytes": 1410000}, "workload": {"exchanges": 30},
                          "coap": {"max_retransmit": 20},
                          "group": [{"name": "legacy", "workload": {"clients": 200}, "coap": {"cc": "default"}},
                                    {"name": "safe", "clients": 7, "workload": {"exchanges": 9}}]})
    assert config_id(same.configurations()[0]) == config_id(c)


def test_tcp_groups_carry_a_tcp_section():
    [c] = load_scenario({"tcp": {"nagle": "off"},
                         "group": [{"name": "u", "clients": 25},
                                   {"name": "t", "clients": 25, "coap": {"transport": "tcp", "cc": "newreno"},
                                    "tcp": {"initial_window": 10}}]}).configurations()
    assert "tcp" not in c  # the base is UDP
    u, t = c["group"]
    assert "tcp" not in u
    assert list(t) == ["name", "workload", "coap", "tcp"]
    assert t["tcp"]["nagle"] == "off" and t["tcp"]["initial_window"] == 10 and t["tcp"]["syn_retries"] == 40


def test_without_groups_or_network_nothing_is_added():
    c = resolve({})
    assert "group" not in c and "network" not in c and "tcp" not in c
    assert resolve({"network": {}})["network"] == {"kind": "star"}
    assert resolve({"network": {"kind": "star"}})["network"] == {"kind": "star"}


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ({"group": [{"name": "a", "coap": {"cc": "cocoaa"}}]}, 'group.a.coap.cc: "cocoaa" is not a UDP algorithm (did you mean "cocoa"?)'),
        ({"group": [{"name": "a", "coap": {"transport": "tcp"}}]}, 'group.a.coap.cc: "cocoa" is not a TCP congestion controller'),
        ({"group": [{"name": "a", "workload": {"kind": "burst"}}]}, 'group.a.workload.burst_at_s: required when workload.kind = "burst"'),
        ({"group": [{"name": "a", "workload": {"kind": "random", "duration_s": 5}}]}, "group.a.workload.duration_s: only meaningful for continuous, burst, periodic, reporting, observe or lwm2m"),
        ({"group": [{"name": "a", "tcp": {"nagle": "off"}}]}, 'group.a.tcp.nagle: only meaningful with coap.transport = "tcp"'),
        ({"tcp": {"nagle": "off"}, "group": [{"name": "a"}]}, 'tcp.nagle: only meaningful with coap.transport = "tcp"'),
        ({"group": [{"name": "a", "coap": {"transport": "tcp", "cc": "newreno"}, "tcp": {"initial_rto_s": 5, "max_rto_s": 1}}]},
         "group.a.tcp.max_rto_s: 1 is below group.a.tcp.initial_rto_s"),
        ({"group": [{"name": "a", "clients": 0}]}, "group.a.clients: 0 is out of range; expected an integer >= 1"),
        ({"group": [{"name": "a", "clients": 2, "workload": {"clients": 3}}]}, "group.a.clients: given twice"),
        ({"group": [{"name": "a", "workload": {"clientz": 3}}]}, 'group.a.workload.clientz: unknown key (did you mean "clients"?)'),
        ({"group": [{"name": "a"}, {"name": "a"}]}, 'group.a.name: "a" is used by two groups'),
        ({"group": [{"clients": 3}]}, "group[0].name: missing"),
        ({"group": [{"name": "a/b"}]}, 'group[0].name: "a/b" is not allowed; expected letters, digits, - and _'),
        ({"group": [{"name": "a", "colour": 1}]}, "group.a.colour: unknown key; allowed: name, clients, workload, coap, tcp"),
        ({"group": [{"name": "a", "coap": 5}]}, "group.a.coap: 5 is not allowed; expected a table"),
        ({"group": []}, "group: [] is not allowed; expected one or more [[group]] tables"),
        ({"group": {"name": "a"}}, 'group: {"name": "a"} is not allowed'),
        ({"group": [5]}, "group[0]: 5 is not allowed"),
        ({"network": {"kind": "mesh"}}, 'network.kind: "mesh" is not allowed; expected one of star'),
        ({"network": "star"}, 'network: "star" is not allowed; expected a table'),
    ],
)
def test_bad_groups(raw, fragment):
    with pytest.raises(ScenarioError) as e:
        load_scenario(raw)
    assert fragment in str(e.value)
    assert "\n" not in str(e.value)


def test_group_sweeps():
    s = load_scenario({"group": [{"name": "legacy", "clients": 2, "coap": {"cc": "default"}},
                                 {"name": "safe", "clients": 2}],
                       "sweep": {"group.safe.coap.cc": ["cocoa", "cocoa-fb2"], "group.safe.clients": [3, 4],
                                 "group.legacy.workload.exchanges": [5]}})
    assert s.count == 4
    confs = s.configurations()
    got = [(c["group"][1]["coap"]["cc"], c["group"][1]["workload"]["clients"], c["group"][0]["workload"]["exchanges"]) for c in confs]
    assert got == [("cocoa", 3, 5), ("cocoa", 4, 5), ("cocoa-fb2", 3, 5), ("cocoa-fb2", 4, 5)]
    assert s.swept_values(confs[1]) == {"group.safe.coap.cc": "cocoa", "group.safe.clients": 4,
                                        "group.legacy.workload.exchanges": 5}
    assert confs[0]["group"][0]["coap"]["cc"] == "default"  # the other group is untouched


@pytest.mark.parametrize(
    "sweep, fragment",
    [
        ({"group.b.clients": [1]}, 'sweep.group.b.clients: no group named "b"; groups: a'),
        ({"group.a.colour": [1]}, "sweep.group.a.colour: unknown key"),
        ({"group.a": [1]}, "sweep.group.a: unknown key"),
        ({"group.a.coap.cc": ["cocoa", "nope"]}, 'group.a.coap.cc: "nope" is not a UDP algorithm'),
        ({"group.a.clients": [0]}, "group.a.clients: 0 is out of range"),
    ],
)
def test_bad_group_sweeps(sweep, fragment):
    with pytest.raises(ScenarioError) as e:
        load_scenario({"group": [{"name": "a"}], "sweep": sweep})
    assert fragment in str(e.value)


def test_shipped_group_examples():
    [c] = load_scenario(ROOT / "examples" / "mixed-400.toml").configurations()
    assert c["link"]["buffer_bytes"] == 1410000 and c["workload"]["kind"] == "continuous"
    assert [(g["name"], g["workload"]["clients"], g["coap"]["cc"], g["coap"]["max_retransmit"]) for g in c["group"]] == [
        ("legacy", 200, "default", 20), ("safe", 200, "cocoa-fb2", 20)]
    [c] = load_scenario(ROOT / "examples" / "udp-vs-tcp.toml").configurations()
    assert c["link"]["buffer_bytes"] == 2500
    assert [(g["name"], g["workload"]["clients"], g["coap"]["transport"], g["coap"]["cc"], "tcp" in g) for g in c["group"]] == [
        ("udp", 25, "udp", "cocoa", False), ("tcp", 25, "tcp", "newreno", True)]
    json.dumps(c)  # what the engine receives
