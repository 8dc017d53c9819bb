"""NB-IoT and LTE-M cells (docs/networks.md, "NB-IoT and LTE-M cells"): the shipped examples run,
and mechanism-level facts hold end to end — an exchange from idle pays random access and RRC
set-up, a connected LTE-M device's round trip matches the published BG96 ping times, deep
coverage is much slower — and bad cell keys are refused in one line."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(cli, tmp_path, text: str) -> dict:
    p = tmp_path / "cell.toml"
    p.write_text(text)
    out = cli("run", p, "--no-db", "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[0])


def _scenario(kind: str, loss: float, period_s: float, exchanges: int, rai: bool, clients: int = 1) -> str:
    return (f'seed = 1\nreplications = 1\n[network]\nkind = "{kind}"\ncoupling_loss_db = {loss}\nrai = {str(rai).lower()}\n'
            f'[workload]\nkind = "periodic"\nclients = {clients}\nperiod_s = {period_s}\nduration_s = {period_s * exchanges}\n'
            '[coap]\ntransport = "udp"\ncc = "default"\n')


@pytest.mark.parametrize("name", ["nbiot", "ltem"])
def test_the_examples_run_and_report_the_cell(cli, name):
    out = cli("run", ROOT / "examples" / f"{name}.toml", "--no-db", "--format", "json")
    assert out.returncode == 0, out.stderr
    for line in out.stdout.splitlines():
        s = json.loads(line)
        c = s["cell"]
        # 10 devices, 10 reports each over 600 s (2 replications). Level-2 devices take seconds
        # per exchange against CoAP's 2-s ACK_TIMEOUT: a report may find the previous exchange
        # still outstanding (dropped at the application, NSTART = 1) or run out of retransmissions.
        assert c["devices"] == 10 and s["exchanges_completed"] + s["exchanges_failed"] <= 2 * 10 * 10
        assert s["exchanges_completed"] >= 190
        # Release assistance: every connection ends after its response, so each report from
        # idle costs a set-up (at least one per exchange).
        assert c["rrc_setups"] >= s["exchanges_completed"] and c["releases_rai"] > 0
        assert c["ra_attempts"] >= c["rrc_setups"]


def test_an_exchange_from_idle_pays_random_access_and_set_up(cli, tmp_path):
    # LTE-M in good coverage (115 dB: RSRP 18.2 − 115 = −96.8 dBm, level 0). Reports every 60 s
    # with RAI: each one from idle (one set-up per report); every 1 s without RAI: connected
    # after the first (one set-up), a scheduling request instead of random access + set-up.
    idle = _run(cli, tmp_path, _scenario("ltem", 115, 60, 20, True))
    connected = _run(cli, tmp_path, _scenario("ltem", 115, 1, 20, False))
    assert idle["cell"]["rrc_setups"] == 20 and connected["cell"]["rrc_setups"] == 1
    assert idle["mean_rtt_s"] > connected["mean_rtt_s"]
    # The published BG96 ping round trips in good coverage, 185–207 ms (docs/networks.md):
    # the connected device's scheduling request, grants and the fitted core and path delays.
    assert 0.185 <= connected["mean_rtt_s"] <= 0.207


def test_nbiot_first_exchange_from_idle_is_about_half_a_second(cli, tmp_path):
    # NB-IoT in good coverage, each report from idle: the wait for the 640-ms NPRACH period
    # (320 ms on average), random access, set-up and Msg5, and the 180-ms core and path round
    # trip: about 0.5–0.7 s (published first-ping figures: 500–600 ms).
    s = _run(cli, tmp_path, _scenario("nbiot", 130, 60, 20, True))
    assert 0.45 <= s["mean_rtt_s"] <= 0.75
    assert s["cell"]["mean_coverage_level"] == 0


def test_deep_coverage_is_much_slower(cli, tmp_path):
    # 144 dB is level 1, 164 dB level 2 (32 preamble repetitions, 64-subframe DCIs, single-tone
    # uplink with 32 repetitions): its exchanges take several times longer.
    mid = _run(cli, tmp_path, _scenario("nbiot", 144, 60, 5, True))
    deep = _run(cli, tmp_path, _scenario("nbiot", 164, 60, 5, True))
    assert mid["cell"]["mean_coverage_level"] == 1 and deep["cell"]["mean_coverage_level"] == 2
    assert deep["fct_s"]["p50"] - 240 > 2 * (mid["fct_s"]["p50"] - 240)


@pytest.mark.parametrize(
    "network, line",
    [
        ('kind = "nbiot"\ncoupling_loss_db = 170',
         "network.coupling_loss_db: 170 dB is beyond the reach of nb1 (maximum coupling loss 164 dB); allowed: 0 to 164"),
        ('kind = "nbiot"\ncategory = "nb3"', "network.category: 'nb3' is not a category of nbiot; allowed: nb1, nb2"),
        ('kind = "ltem"\ncategory = "nb1"', "network.category: 'nb1' is not a category of ltem; allowed: m1"),
        ('category = "nb1"', 'network.category: does not apply to network.kind = "star"; keys of star: none'),
        ('kind = "nbiot"\ngprs_loss = 0.1', 'network.gprs_loss: does not apply to network.kind = "nbiot"; keys of nbiot: category, '),
        ('kind = "nbiot"\ncoupling_loss_db = { distribution = "normal", low = 1, high = 2 }',
         "network.coupling_loss_db.distribution: 'normal' is not a distribution; allowed: uniform"),
        # The admission limit (docs/networks.md, "Admission") is a positive time.
        ('kind = "nbiot"\nadmission_backlog_s = 0',
         "network.admission_backlog_s: 0 is out of range; expected a number >= 0.001 and <= 1e+06"),
        ('kind = "ltem"\nadmission_backlog_s = "x"',
         'network.admission_backlog_s: "x" is not allowed; expected a number >= 0.001'),
    ],
)
def test_bad_cell_keys_are_refused_in_one_line(cli, tmp_path, network, line):
    p = tmp_path / "n.toml"
    p.write_text(f"[network]\n{network}\n")
    out = cli("run", p, "--no-db")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"coaplab: error: {line}"), out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
