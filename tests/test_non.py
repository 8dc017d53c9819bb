"""NON traffic and CoCoA's NON rule through the Python front (docs/algorithms.md "NON traffic")."""

import pytest

import coaplab
from coaplab.describe.scenario import load_scenario
from coaplab.errors import ScenarioError


def _summary(coap):
    raw = {"seed": 2, "replications": 2, "workload": {"clients": 3, "exchanges": 32, "start_spread_s": 1.0},
           "coap": {"cc": "cocoa", "max_retransmit": 20, **coap}}
    [s] = coaplab.run(raw, jobs=1).summaries
    return s


def test_non_summary_counts():
    off = _summary({"non_rate_per_s": 0.5})["non"]
    # 3 clients x 32 messages x 2 replications, all NON.
    assert off["sent"] == 192 and off["rule_con"] == 0
    assert off["rate_per_s"] == pytest.approx(0.5)
    on = _summary({"non_rate_per_s": 0.5, "non_rule": True})["non"]
    # Messages 0, 8, 16, 24 of each client's 32 are CON: 4 x 3 x 2 = 24; the rest NON.
    assert (on["sent"], on["rule_con"]) == (168, 24)


def test_con_runs_have_no_non_summary_and_keys_stay_absent():
    assert "non" not in _summary({})
    [c] = load_scenario({"coap": {"cc": "cocoa"}}).configurations()
    assert "non_rate_per_s" not in c["coap"] and "non_rule" not in c["coap"]


def test_non_on_tcp_is_refused():
    with pytest.raises(ScenarioError, match=r'^coap\.non_rate_per_s: NON traffic is CoAP over UDP only'):
        load_scenario({"coap": {"transport": "tcp", "cc": "newreno", "non_rate_per_s": 1.0}})
