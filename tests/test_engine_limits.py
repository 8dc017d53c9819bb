"""Inputs that used to hang or crash the engine: each is refused with one line, or finishes.

The first two are refused by the engine itself (defence in depth behind scenario validation),
so the resolved configuration is edited directly, past `coaplab.describe.scenario`."""

import json

import pytest

import coaplab
from coaplab import _core
from coaplab.describe.scenario import load_scenario


def resolved(**link):
    config = load_scenario({"name": "limits", "workload": {"clients": 2, "exchanges": 2}}).configurations()[0]
    config["link"].update(link)
    return json.dumps(config)


def test_a_chain_whose_states_round_to_0_ns_is_refused():
    # `*_ms = 1e-7` is 0.1 ns: every state would last 0 ns and the chain would never advance.
    chain = {f"{s}_{k}_ms": 1e-7 for s in ("good", "bad") for k in ("mean", "min", "max")}
    chain.update(good_loss=0.0, bad_loss=0.5)
    with pytest.raises(ValueError) as e:
        _core.check(resolved(errors=chain))
    assert str(e.value) == ("link.errors: good_mean_ms: 0 ns is too short; allowed: >= 0.001 ms "
                            "(a state must last at least 1 µs)")


def test_a_rate_that_rounds_to_0_bit_per_s_is_refused():
    # 1e-4 kbit/s = 0.1 bit/s, rounded to whole bit/s: 0.
    with pytest.raises(ValueError) as e:
        _core.check(resolved(downlink_kbps=1e-4))
    assert str(e.value).startswith("link.downlink_kbps: 0.0001 gives a rate: 0 bit/s")


def test_a_half_open_tcp_connection_does_not_retransmit_forever():
    # The reproducer: with no SYN-ACK retry, the server end gives up while the client is
    # established (its ACK lost at 80 % loss); the client used to retransmit forever. Now the
    # client gives up after tcp_retries2 = 15 retransmissions (and, with the testbed sending
    # RSTs, is reset sooner). Every exchange ends: completed or failed.
    res = coaplab.run({"name": "half-open", "seed": 1, "replications": 8, "link": {"errors": "high"},
                       "workload": {"kind": "firmware", "clients": 2},
                       "coap": {"transport": "tcp", "cc": "newreno"}, "tcp": {"synack_retries": 0}}, jobs=2)
    assert not res.failures
    [s] = res.summaries
    assert s["exchanges_completed"] + s["exchanges_failed"] == 8 * 2
