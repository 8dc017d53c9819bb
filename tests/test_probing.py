"""PROBING_RATE (`coap.probing_rate_bps`, RFC 7252 §4.7; docs/algorithms.md "PROBING_RATE")
through the Python front. The mechanism's timings, message by message, are the Rust tests in
crates/engine/src/coap/client.rs (`probing_tests`) and coap/probing.rs."""

import subprocess
import sys

import pytest

import coaplab
from coaplab.describe.scenario import load_scenario
from coaplab.errors import ScenarioError


def _summary(coap):
    raw = {"seed": 3, "replications": 2, "workload": {"clients": 1, "exchanges": 20},
           "coap": {"cc": "default", **coap}}
    [s] = coaplab.run(raw, jobs=1, db=None).summaries
    return s


def test_the_key_stays_absent_unless_given():
    [c] = load_scenario({"coap": {"cc": "default"}}).configurations()
    assert "probing_rate_bps" not in c["coap"]
    [c] = load_scenario({"coap": {"cc": "default", "probing_rate_bps": 1}}).configurations()
    assert c["coap"]["probing_rate_bps"] == 1


def test_nstart_2_at_one_byte_per_second_runs_as_nstart_1_on_a_responsive_link():
    """One client, loss-free reference link (RTT well under a second): at 1 byte/s a 40-byte
    request sent beside an unanswered one may leave only 40 s after it, while the answer comes
    within a second and makes the next request a probe that leaves at once. So with NSTART 2
    each request still waits for the previous answer: the same sends, at the same times, as
    NSTART 1 (`default` draws its timers in the same order), hence the same FCT; without the
    limit NSTART 2 finishes sooner."""
    one = _summary({"nstart": 1})
    limited = _summary({"nstart": 2, "probing_rate_bps": 1})
    free = _summary({"nstart": 2})
    assert (limited["fct_s"], limited["exchange_sums"]) == (one["fct_s"], one["exchange_sums"])
    assert free["fct_s"]["p50"] < one["fct_s"]["p50"]


def test_probing_rate_on_tcp_is_refused():
    with pytest.raises(ScenarioError, match=r'^coap\.probing_rate_bps: PROBING_RATE is CoAP over UDP only'):
        load_scenario({"coap": {"transport": "tcp", "cc": "newreno", "probing_rate_bps": 1}})


@pytest.mark.parametrize("value", ["0", "-1", '"fast"'])
def test_a_bad_probing_rate_is_one_line_exit_2(tmp_path, value):
    f = tmp_path / "s.toml"
    f.write_text(f"[coap]\nprobing_rate_bps = {value}\n")
    p = subprocess.run([sys.executable, "-m", "coaplab.cli", "run", "--no-db", str(f)],
                       check=False, capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "coap.probing_rate_bps" in p.stderr, p.stderr
