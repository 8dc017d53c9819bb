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


def test_californiums_number_changes_no_result():
    """Every number of 65000..65535 is three bytes of option header after Uri-Path (delta above
    269: 0xE0 and a 2-byte extension), so the packets, hence the results, are the same."""
    ours, californium = _summary({}), _summary({"rexmit_cnt_option": 0xfe04})
    assert californium["config"]["coap"]["rexmit_cnt_option"] == 65028
    for s in (ours, californium):
        s.pop("config"), s.pop("config_id"), s.pop("wall_s", None)
    assert ours == californium


def test_a_critical_or_out_of_range_number_is_one_line_exit_2(tmp_path):
    for value, fragment in [(65021, "not an elective experimental option number"), (64999, "coap.rexmit_cnt_option")]:
        f = tmp_path / "s.toml"
        f.write_text(f'[coap]\ncc = "fasor-rc"\nrexmit_cnt_option = {value}\n')
        p = subprocess.run([sys.executable, "-m", "coaplab.cli", "run", "--no-db", str(f)],
                           check=False, capture_output=True, text=True)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and fragment in p.stderr, p.stderr
