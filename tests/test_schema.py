"""The configuration schema is the engine's (crates/engine/src/config/): the shipped JSON Schema
of scenario files equals what the engine exports, every shipped scenario file validates against
it, and the Python front takes its defaults, ranges and allowed values from it."""

import json
import tomllib

import jsonschema
import pytest

from coaplab import _core
from coaplab.describe import scenario as sc
from coaplab.errors import ScenarioError
from conftest import ROOT

SHIPPED = ROOT / "python" / "coaplab" / "data" / "scenario.schema.json"
FILES = sorted((ROOT / "examples").glob("*.toml")) + sorted((ROOT / "python" / "coaplab" / "scenarios").glob("*.toml"))


def test_shipped_schema_is_the_engines():
    # Regenerate with: python -c "from coaplab import _core; print(_core.config_schema(), end='')" > python/coaplab/data/scenario.schema.json
    assert SHIPPED.read_text() == _core.config_schema()


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(SHIPPED.read_text()))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_shipped_scenario_files_validate_against_the_schema(path):
    schema = json.loads(SHIPPED.read_text())
    jsonschema.Draft202012Validator(schema).validate(tomllib.loads(path.read_text()))


def test_the_schema_rejects_what_the_loader_rejects():
    v = jsonschema.Draft202012Validator(json.loads(SHIPPED.read_text()))
    for bad in ({"link": {"bufer_bytes": 1}}, {"coap": {"cc": "cocoaa"}}, {"link": {"mtu": 67}},
                {"workload": {"kind": "steady"}}, {"network": {"kind": "mesh"}},
                {"group": [{"clients": 3}]}, {"group": [{"name": "a/b"}]}, {"sweep": {"coap.cc": []}},
                {"link": {"downlink_kbps": 0.0001}}, {"link": {"uplink_delay_ms": 1e30}}):
        assert not v.is_valid(bad), bad
        with pytest.raises(ScenarioError):
            sc.load_scenario(bad)


def test_defaults_and_allowed_values_come_from_the_engine():
    schema = json.loads(_core.config_schema())
    link = schema["$defs"]["LinkConfig"]["properties"]
    assert {k: f.default for k, f in sc.SCHEMA["link"].items()} == {k: p.get("default") for k, p in link.items()}
    assert sc.UDP_ALGORITHMS == tuple(_core.algorithms())
    assert sc.TCP_CONTROLLERS == tuple(_core.tcp_controllers())
    assert sc.TCP_CONTROLLERS[:3] == ("newreno", "bbr", "cubic")
    assert sc.WORKLOAD_KINDS == ("continuous", "random", "burst", "firmware", "periodic", "reporting", "observe", "lwm2m", "upload")
    assert sc.NAGLE_MODES == ("minshall", "classic", "off") and sc.TRANSPORTS == ("udp", "tcp")
    assert sc.ERROR_PROFILES == ("none", "low", "medium", "high")


@pytest.mark.parametrize(
    "raw, fragment",
    [
        # Times become u64 nanoseconds: 1e30 ms would saturate; the bound is 1e7 ms.
        ({"link": {"uplink_delay_ms": 1e30}}, "link.uplink_delay_ms: 1e+30 is out of range; expected a number >= 0 and <= 1e+07"),
        # Rates become integer bit/s: 1e-4 kbit/s = 0.1 bit/s would round to 0.
        ({"link": {"downlink_kbps": 1e-4}}, "link.downlink_kbps: 0.0001 is out of range; expected a number >= 0.001"),
        # Gilbert–Elliott sojourns of 1e-7 ms = 0.1 ns would round to 0 ns.
        ({"link": {"errors": {"good_mean_ms": 1e-7, "good_min_ms": 1e-7, "good_max_ms": 1e-7, "good_loss": 0.0,
                                  "bad_mean_ms": 100, "bad_min_ms": 30, "bad_max_ms": 300, "bad_loss": 0.5}}},
         "link.errors.good_mean_ms: 1e-07 is out of range; expected a number >= 0.1"),
        ({"link": {"path_delay_ms": [0, 1e14]}}, "link.path_delay_ms[1]: 100000000000000.0 is out of range"),
        ({"workload": {"duration_s": 0}}, "workload.duration_s: 0 is out of range; expected a number >= 0.001"),
    ],
)
def test_bounds_keep_derived_integers_in_range(raw, fragment):
    with pytest.raises(ScenarioError) as e:
        sc.load_scenario(raw)
    assert fragment in str(e.value)


def test_coap_cc_values_come_from_the_registries_and_python_values_match_a_pattern():
    v = jsonschema.Draft202012Validator(json.loads(SHIPPED.read_text()))
    # Every registered name, UDP and TCP, is allowed: the schema walks the registries.
    for name in (*_core.algorithms(), *_core.tcp_controllers()):
        assert v.is_valid({"coap": {"cc": name}}), name
    # The documented form of an algorithm written in Python (docs/algorithms.md).
    assert v.is_valid({"coap": {"cc": "python:examples/algorithms/cocoa_py.py:CocoaPy"}})
    for bad in ("nope", "python:", "python:file.py", "python:file.py:", "python:file.py:1Class"):
        assert not v.is_valid({"coap": {"cc": bad}}), bad



#: The keys that enter every resolved configuration, and so every ``config_id``: the keys of the
#: first stored configurations. A key added since is ``x-omit-if-absent`` (CONTRIBUTING.md,
#: "Adding a scenario key"), so existing configurations keep their identity and stored results.
IDENTITY_KEYS = {
    "link": {"buffer_bytes", "downlink_delay_ms", "downlink_kbps", "errors", "link_overhead_bytes", "mtu",
             "path_delay_ms", "uplink_buffer_bytes", "uplink_delay_ms", "uplink_kbps"},
    "workload": {"background", "batch", "block_szx", "burst_at_s", "burst_clients", "burst_exchanges", "clients",
                 "duration_s", "exchanges", "kind", "resource_bytes", "response_bytes", "start_spread_s"},
    "coap": {"ack_random_factor", "ack_timeout_s", "cc", "max_retransmit", "max_timer_s", "nstart", "transport"},
    "tcp": {"ack_every_segment", "delayed_ack_ms", "hz", "initial_rto_s", "initial_window", "limited_transmit",
            "max_rto_s", "nagle", "slow_start_limit", "syn_retries", "synack_retries"},
    "network": {"kind"},
    # [energy] (docs/energy.md): every key optional, the section absent unless given.
    "energy": set(),
}


def test_a_new_key_keeps_existing_configurations_identity():
    sections = {**sc.SCHEMA, "network": sc.NETWORK}
    got = {s: {k for k, f in fields.items() if not f.omit_if_absent} for s, fields in sections.items()}
    added = {s: sorted(got[s] - IDENTITY_KEYS[s]) for s in got if got[s] - IDENTITY_KEYS[s]}
    assert not added, (f"new keys {added} enter every resolved configuration and change every config_id: mark them "
                       "#[schemars(extend(\"x-omit-if-absent\" = true))] (CONTRIBUTING.md, \"Adding a scenario key\")")
    # A removed identity key would change every config_id as well.
    assert got == IDENTITY_KEYS
