"""coap.security through the Python front (docs/model.md "Security"). The sizes, flight by
flight, and the session's timer are the Rust tests in crates/engine/src/coap/security/ (sizes.rs,
session.rs); here whole runs check the same figures end to end, hand-computed from them. That
"none" leaves every result as it was is the golden set (tests/test_golden.py)."""

import subprocess
import sys

import pytest

import coaplab
from coaplab.describe.scenario import load_scenario


def _summary(raw):
    [s] = coaplab.run({"seed": 1, "replications": 1, **raw}, jobs=1, db=None).summaries
    return s


def _star(coap, exchanges=2):
    return _summary({"workload": {"clients": 1, "exchanges": exchanges}, "coap": {"cc": "default", **coap}})


def _cell(coap, nat_timeout_s):
    # One NB-IoT device reporting every 60 s for 300 s: 5 reports, each ~58 s after the last
    # uplink of the one before.
    return _summary({"network": {"kind": "nbiot", "nat_timeout_s": nat_timeout_s},
                     "workload": {"kind": "periodic", "clients": 1, "period_s": 60.0, "duration_s": 300.0},
                     "coap": {"cc": "default", **coap}})


def test_the_keys_stay_absent_unless_given():
    [c] = load_scenario({"coap": {"cc": "default"}}).configurations()
    assert not {"security", "dtls_suite", "dtls_connection_id"} & set(c["coap"])
    [c] = load_scenario({"coap": {"cc": "default", "security": "oscore"}}).configurations()
    assert c["coap"]["security"] == "oscore"


def test_none_has_no_security_section():
    assert "security" not in _star({})


def test_oscore_bytes_on_a_get_and_its_response():
    s = _star({"security": "oscore"}, exchanges=3)["security"]
    # RFC 8613: request + (option 1 + flag 1 + Partial IV 1 + kid 1) + 0xFF 1 + inner code 1 +
    # tag 8 = 14 B; response + (empty option 1) + 0xFF 1 + code 1 + tag 8 = 11 B. Three
    # loss-free exchanges: 3 × 25 = 75 B, 25 B per exchange, no handshake.
    assert (s["record_bytes"], s["bytes_per_exchange"], s["handshakes"], s["handshake_bytes"]) == (75, 25.0, 0, 0)


def test_dtls12_psk_handshake_and_records_on_the_star():
    s = _star({"security": "dtls1.2"})["security"]
    # Flights (IP bytes, sizes.rs): 95 + 88 + 127 + 148 + 138 + 95 = 691; two exchanges of
    # 2 × 29 B records (13 header + 8 nonce + 8 tag): 116; (691 + 116) / 2 = 403.5 B.
    assert (s["handshakes"], s["handshake_bytes"], s["record_bytes"]) == (1, 691, 116)
    assert s["bytes_per_exchange"] == 403.5
    assert (s["flights_retransmitted"], s["failed_handshakes"], s["suite"]) == (0, 0, "psk")
    # The request waits three round trips on the reference link (docs/design.md §2): each
    # 200 ms up + 400 ms down; serialization up 95, 127, 138 B at 60 kbit/s (12.67 + 16.93 +
    # 18.40 ms) and down 88, 148, 95 B at 30 kbit/s (23.47 + 39.47 + 25.33 ms): 1936.3 ms;
    # six router-server delays of 10-20 ms each: 1.996-2.057 s. (Plus the client's start
    # offset, 0-50 ms, which precedes the wish: not counted.)
    assert 1.996 <= s["time_to_first_request_s"] <= 2.057
    # Only the first request waited (the start), so its wait is the mean.
    assert (s["requests_waited"], s["mean_handshake_wait_s"]) == (1, s["time_to_first_request_s"])


def test_dtls13_needs_one_round_trip_less():
    s = _star({"security": "dtls1.3"})["security"]
    # 173 + 137 + 211 + 191 + 86 + 60 = 858 B (sizes.rs); records 14 B (5 header + 1 type +
    # 8 tag): 2 × 2 × 14 = 56.
    assert (s["handshakes"], s["handshake_bytes"], s["record_bytes"]) == (1, 858, 56)
    # Two round trips: 2 × 600 ms + up 173, 211 B (23.07 + 28.13 ms) + down 137, 191 B (36.53
    # + 50.93 ms) = 1338.7 ms, + four 10-20 ms delays: 1.379-1.419 s.
    assert 1.378 <= s["time_to_first_request_s"] <= 1.419


def test_idle_past_the_nat_timeout_handshakes_again_and_with_a_cid_it_does_not():
    # NAT 30 s < the ~58 s idle before each report: a full handshake, then 4 abbreviated.
    s = _cell({"security": "dtls1.2"}, 30.0)["security"]
    assert (s["handshakes"], s["resumptions"]) == (5, 4)
    # Every report waited for its handshake.
    assert s["requests_waited"] == 5
    # With a Connection ID the session survives: one handshake.
    s = _cell({"security": "dtls1.2", "dtls_connection_id": True}, 30.0)["security"]
    assert (s["handshakes"], s["resumptions"], s["connection_id"]) == (1, 0, True)
    assert s["requests_waited"] == 1
    # No NAT (0): one handshake.
    s = _cell({"security": "dtls1.3"}, 0.0)["security"]
    assert (s["handshakes"], s["resumptions"]) == (1, 0)


@pytest.mark.parametrize("coap, fragment", [
    ('security = "tls"', 'coap.security: "tls" is not allowed'),
    ('security = "oscore"\ndtls_suite = "psk"', "coap.dtls_suite: applies to DTLS only"),
    ('dtls_connection_id = true', "coap.dtls_connection_id: applies to DTLS only"),
    ('security = "dtls1.2"\ndtls_suite = "rsa"', 'coap.dtls_suite: "rsa" is not allowed'),
    ('transport = "tcp"\ncc = "newreno"\nsecurity = "dtls1.3"', "coap.security: \"dtls1.3\" secures CoAP over UDP only"),
])
def test_bad_security_input_is_one_line_exit_2(tmp_path, coap, fragment):
    f = tmp_path / "s.toml"
    f.write_text(f"[workload]\nclients = 1\nexchanges = 1\n[coap]\n{coap}\n")
    p = subprocess.run([sys.executable, "-m", "coaplab.cli", "run", "--no-db", str(f)],
                       check=False, capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and fragment in p.stderr, p.stderr


def test_runs_frame_has_the_security_columns():
    res = coaplab.run({"seed": 1, "replications": 1, "workload": {"clients": 1, "exchanges": 3},
                       "coap": {"cc": "default", "security": "oscore"}}, jobs=1, db=None)
    # 3 × (14 + 11) B, as test_oscore_bytes_on_a_get_and_its_response.
    assert list(res.runs_frame()["security_record_bytes"]) == [75]


def test_dtls12_certificate_handshake_fragmented_at_the_reference_mtu():
    s = _star({"security": "dtls1.2", "dtls_suite": "cert"})["security"]
    # link.mtu 296: a datagram carries 268 B of records (sizes.rs). ClientHello 2 + 32 + 1 + 1
    # + 4 + 2 + extensions 24 = 66 (+25 → 91, IP 119); HelloVerifyRequest 88; ClientHello +
    # cookie 98 (+25 → 123, IP 151); the server's flight (ServerHello 78, Certificate 406
    # fragmented, ServerKeyExchange 145, CertificateRequest 8, ServerHelloDone 0) in 296 + 296
    # + 279 + 53 = 924; the client's (Certificate 406 fragmented 243 + 163, ClientKeyExchange
    # 66, CertificateVerify 76, CCS, Finished) in 296 + 216 + 287 = 799; CCS + Finished 95.
    # 119 + 88 + 151 + 924 + 799 + 95 = 2176 B.
    assert (s["handshakes"], s["handshake_bytes"], s["suite"]) == (1, 2176, "cert")
