"""LwM2M devices through the Python front and the CLI (docs/model.md "LwM2M devices")."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import coaplab
from coaplab.describe.scenario import load_scenario
from coaplab.errors import ScenarioError

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "coaplab.cli", *args], check=False, capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_lossless_star_summary_has_the_hand_computed_registration_time():
    # One device, fixed 15 ms path: Register 117 B up (15.6 ms + 215 ms), ACK 32 B down
    # (8.533334 ms + 415 ms) = 654.133334 ms (crates/engine/tests/lwm2m.rs has the arithmetic).
    # Lifetime 300 s: Updates 207 s after each reply, 4 before 1000 s; none fails.
    raw = {"workload": {"kind": "lwm2m", "duration_s": 1000.0, "start_spread_s": 0.0, "lwm2m_lifetime_s": 300.0},
           "link": {"path_delay_ms": [15.0, 15.0]}, "coap": {"cc": "default"}}
    [s] = coaplab.run(raw, jobs=1).summaries
    reg = s["lwm2m_register_s"]
    assert reg["n"] == 1 and reg["mean"] == pytest.approx(0.654133334, abs=1e-9)
    assert (s["lwm2m_updates_sent"], s["lwm2m_updates_failed"], s["lwm2m_registrations_failed"]) == (4, 0, 0)
    assert s["lwm2m_read_wait_s"]["n"] == 0 and s["lwm2m_firmware_s"]["n"] == 0


def test_other_workloads_have_no_lwm2m_fields_and_keys_stay_absent():
    [s] = coaplab.run({"workload": {"exchanges": 2}}, jobs=1).summaries
    assert not any(k.startswith("lwm2m") for k in s)
    [c] = load_scenario({"workload": {"kind": "lwm2m", "duration_s": 10.0}}).configurations()
    assert not any(k.startswith("lwm2m") for k in c["workload"])


@pytest.mark.parametrize("workload, coap, message", [
    ({"lwm2m_lifetime_s": 60.0}, {}, r'^workload\.lwm2m_lifetime_s: only meaningful when workload\.kind = "lwm2m" \(kind is "continuous"\)$'),
    ({"kind": "lwm2m"}, {}, r'^workload\.duration_s: required when workload\.kind = "lwm2m"'),
    ({"kind": "lwm2m", "duration_s": 10.0, "lwm2m_queue_window_s": 30.0}, {},
     r"^workload\.lwm2m_queue_window_s: only meaningful with workload\.lwm2m_queue_mode = true$"),
    ({"kind": "lwm2m", "duration_s": 10.0, "lwm2m_firmware_at_s": 5.0}, {}, r"^workload\.lwm2m_firmware_at_s: only meaningful"),
    ({"kind": "lwm2m", "duration_s": 10.0}, {"transport": "tcp", "cc": "newreno"}, r'^workload\.kind: "lwm2m" is a CoAP-over-UDP workload'),
    ({"kind": "lwm2m", "duration_s": 10.0}, {"security": "oscore"}, r"^coap\.security: .*allowed: \"none\"$"),
])
def test_bad_lwm2m_input_is_one_line(workload, coap, message):
    with pytest.raises(ScenarioError, match=message):
        load_scenario({"workload": workload, "coap": coap})


def test_cli_runs_the_star_example_and_refuses_bad_input(tmp_path):
    r = _cli("run", str(ROOT / "examples" / "lwm2m-star.toml"), "--no-db", "--no-progress", "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [s] = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    # 50 devices × 2 replications register (spread over 60 s, the star is idle); each of the 100
    # firmware pulls, all at 3600 s through the 2500 B buffer, either completes or is halted.
    assert s["lwm2m_register_s"]["n"] == 100 and s["lwm2m_registrations_failed"] == 0
    assert s["lwm2m_firmware_s"]["n"] + s["lwm2m_firmware_failed"] == 100
    assert s["lwm2m_updates_sent"] > 0 and s["lwm2m_notifications_delivered"] > 0
    bad = tmp_path / "bad.toml"
    bad.write_text('[workload]\nkind = "lwm2m"\n')
    r = _cli("run", str(bad), "--no-db", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "workload.duration_s" in r.stderr


def test_cli_runs_the_nbiot_queue_mode_example_with_battery_fields(tmp_path):
    r = _cli("run", str(ROOT / "examples" / "lwm2m-nbiot.toml"), "--no-db", "--no-progress", "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [s] = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    assert s["lwm2m_register_s"]["n"] == 20
    assert s["energy"] and any("battery" in k for k in s["energy"])
    # Queue mode: a read waits for the device's next uplink (notifications every 30 min, 93 s
    # window): the mean wait is far above a cell's round trip of a few seconds.
    assert s["lwm2m_read_wait_s"]["n"] > 0 and s["lwm2m_read_wait_s"]["mean"] > 60.0


def test_report_has_an_lwm2m_table(tmp_path):
    db = tmp_path / "r.duckdb"
    scenario = tmp_path / "s.toml"
    scenario.write_text('name = "lw"\n[workload]\nkind = "lwm2m"\nclients = 3\nduration_s = 600.0\n'
                        "lwm2m_lifetime_s = 200.0\n")
    r = _cli("run", str(scenario), "--db", str(db), "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "LwM2M updates 15 sent, 0 failed" in r.stdout  # 3 devices × updates at ~107, 214, 321, 428, 535 s
    r = _cli("report", "--db", str(db), "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "rep" / "index.html").read_text()
    assert 'data-table="lwm2m-' in page and "updates sent" in page
