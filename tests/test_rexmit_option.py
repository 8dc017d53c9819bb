"""`coap.rexmit_cnt_option`: FASOR's Rexmit-Cnt under another option number, e.g. Californium's
(docs/emulation.md, "FASOR's Rexmit-Cnt and Californium"). The encoding by hand is
crates/engine/src/coap/messages.rs's `rexmit_cnt_adds_its_option`."""

import subprocess
import sys

import coaplab


def _summary(coap):
    raw = {"seed": 4, "replications": 2, "workload": {"clients": 20, "exchanges": 20},
           "coap": {"cc": "fasor-rc", **coap}}
    [s] = coaplab.run(raw, jobs=1, db=None).summaries
    return s


def test_another_number_changes_no_result():
    """Every number of 65000..65535 is three bytes of option header after Uri-Path (delta above
    269: 0xE0 and a 2-byte extension), so under a number other than Californium's (65002 here)
    the packets, hence the results, are the same as under 65000."""
    ours, other = _summary({}), _summary({"rexmit_cnt_option": 65002})
    assert other["config"]["coap"]["rexmit_cnt_option"] == 65002
    for s in (ours, other):
        s.pop("config"), s.pop("config_id"), s.pop("wall_s", None)
    assert ours == other


def test_californiums_number_sends_the_first_transmission_as_one_byte():
    """Under Californium's 0xfe04 = 65028 the value is the transmission number, 1 for the first, in
    one byte (its TransmissionCountOption refuses 0; crates/engine/src/coap/messages.rs
    CALIFORNIUM_REXMIT_CNT), where 65000 sends count 0 as an empty value. One
    client, 3 exchanges, no loss, nothing retransmitted: each request (43 → 44 B) and its echo in
    the response one byte longer, so the uplink carries 3 bytes more and the downlink 3 more."""
    def run(coap):
        raw = {"seed": 4, "replications": 1, "workload": {"clients": 1, "exchanges": 3}, "coap": {"cc": "fasor-rc", **coap}}
        [s] = coaplab.run(raw, jobs=1, db=None).summaries
        return s

    ours, californium = run({}), run({"rexmit_cnt_option": 0xFE04})
    assert ours["packets"]["sent"] == californium["packets"]["sent"] == 6
    assert californium["packets"]["bytes_uplink"] - ours["packets"]["bytes_uplink"] == 3
    assert californium["packets"]["bytes_downlink"] - ours["packets"]["bytes_downlink"] == 3


def test_a_critical_or_out_of_range_number_is_one_line_exit_2(tmp_path):
    for value, fragment in [(65021, "not an elective experimental option number"), (64999, "coap.rexmit_cnt_option")]:
        f = tmp_path / "s.toml"
        f.write_text(f'[coap]\ncc = "fasor-rc"\nrexmit_cnt_option = {value}\n')
        p = subprocess.run([sys.executable, "-m", "coaplab.cli", "run", "--no-db", str(f)],
                           check=False, capture_output=True, text=True)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and fragment in p.stderr, p.stderr
