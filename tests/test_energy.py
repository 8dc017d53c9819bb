"""Energy and battery life in summaries, and TR 45.820's reporting workload, through the Python
front (docs/energy.md, docs/experiments.md): the summary's ``energy`` table on meshes and its
absence elsewhere, the tables and frames that show it, the ``[energy]`` keys, and the
``reporting`` workload on every network kind with its refusals."""

import json

import pytest

import coaplab
from coaplab.describe.scenario import load_scenario
from coaplab.errors import ScenarioError
from coaplab.present.output import table

MESH = {"seed": 3, "replications": 2,
        "workload": {"kind": "periodic", "period_s": 5.0, "duration_s": 30.0, "request_bytes": 95,
                     "response_bytes": 0},
        "network": {"kind": "chain", "rdc": "contikimac"}}


def _run(raw):
    return coaplab.run(raw, jobs=1)


def test_a_mesh_summary_has_the_energy_fields_and_they_pool_the_runs():
    res = _run(MESH)
    [s] = res.summaries
    e = s["energy"]
    runs = res.runs[s["config_id"]]
    # j_per_exchange = Σ energy / Σ completed exchanges over the two replications.
    energy_j = sum(r["energy"]["energy_j"] for r in runs)
    completed = sum(c["exchanges_completed"] for r in runs for c in r["clients"])
    assert completed == s["exchanges_completed"] > 0
    assert e["j_per_exchange"] == pytest.approx(energy_j / completed)
    # Mean power averaged over replications; the battery life is battery_wh over it:
    # 5 Wh × 3600 s/h / (P / 1000) W over 365.25 × 86 400 s a year.
    p = (runs[0]["energy"]["mean_power_mw"] + runs[1]["energy"]["mean_power_mw"]) / 2
    assert e["mean_power_mw"] == pytest.approx(p)
    assert e["battery_life_years"] == pytest.approx(5 * 3600 / (p / 1000) / (365.25 * 86400))
    # The mesh states, in the engine's order; the node's times add up to the run's length.
    assert list(e["state_time_s"]) == ["tx", "rx", "connected_idle", "idle_drx", "psm"]
    mean_sim = sum(r["sim_time_s"] for r in runs) / 2
    assert sum(e["state_time_s"].values()) == pytest.approx(mean_sim)
    # Frames: the run rows carry the energy columns.
    frame = res.runs_frame()
    assert {"energy_j_per_exchange", "energy_mean_power_mw", "energy_battery_life_years",
            "energy_state_time_s_psm"} <= set(frame.columns)
    # The table shows one energy line.
    text = table(res.summaries)
    assert sum("energy:" in line for line in text.splitlines()) == 1


def test_a_star_summary_has_no_energy_and_the_key_stays_out_of_the_configuration():
    raw = {"workload": {"clients": 2, "exchanges": 3}}
    [s] = _run(raw).summaries
    assert "energy" not in s and "energy" not in s["config"]


def test_energy_keys_change_the_power_only():
    # One replication: every device's times cover the same run length T, so the mean power
    # drops by (1.278 − 0.060) mW × mean off time / T.
    one = {**MESH, "replications": 1}
    base = _run(one).summaries[0]
    down = _run({**one, "energy": {"psm_uw": 60.0, "battery_wh": 10}}).summaries[0]
    assert down["config"]["energy"] == {"psm_uw": 60.0, "battery_wh": 10}
    assert down["fct_s"] == base["fct_s"] and down["energy"]["state_time_s"] == base["energy"]["state_time_s"]
    # The radio off at 60 µW instead of the CC2420 idle's 1278 µW.
    off_share = base["energy"]["state_time_s"]["psm"] / sum(base["energy"]["state_time_s"].values())
    assert base["energy"]["mean_power_mw"] - down["energy"]["mean_power_mw"] == pytest.approx((1.278 - 0.060) * off_share)


@pytest.mark.parametrize("energy, fragment", [
    ({"tx_w": 1}, "energy.tx_w: unknown key"),
    ({"psm_uw": -1}, "energy.psm_uw: -1 is out of range"),
    ({"battery_wh": "five"}, "energy.battery_wh"),
])
def test_bad_energy_keys_are_one_line(energy, fragment):
    with pytest.raises(ScenarioError) as e:
        load_scenario({**MESH, "energy": energy})
    assert fragment in str(e.value) and "\n" not in str(e.value)


def _reporting(network=None, **workload):
    raw = {"seed": 5, "workload": {"kind": "reporting", "clients": 20, "duration_s": 7200.0, "response_bytes": 4,
                                   **workload}}
    if network:
        raw["network"] = network
        raw["workload"].pop("clients")
    return raw


@pytest.mark.parametrize("network", [None, {"kind": "gprs"}, {"kind": "chain"}, {"kind": "dumbbell", "rdc": "contikimac"}])
def test_reporting_runs_on_every_network_kind(network):
    [s] = _run(_reporting(network)).summaries
    # Over 2 h, every device reports at least once (its first report falls within its interval
    # of at most 1 day only for some; those of 2 h, 1 h, 30 min report 1, 2, 4 times).
    assert s["exchanges_completed"] + s["exchanges_failed"] > 0
    if network and network["kind"] != "gprs":
        m = s["mesh"]
        # Reports of 20-200 B payload: their IPv6 packets are 61 + 20 to 61 + 200 bytes.
        per_request = m["offered_kbps"] * 1000 / 8 * 7200 / m["requests_generated"]
        assert 81 <= per_request <= 261
        assert s["energy"]["battery_life_years"] > 0


def test_reporting_is_deterministic_per_seed_and_exceptions_add_reports():
    a, b = _run(_reporting()).summaries[0], _run(_reporting()).summaries[0]
    assert a["fct_s"] == b["fct_s"] and a["exchanges_completed"] == b["exchanges_completed"]
    other = _run({**_reporting(), "seed": 6}).summaries[0]
    assert other["fct_s"] != a["fct_s"]
    # 24 exception reports a day over 2 h: 2 per device on average, 40 more for 20 devices.
    more = _run(_reporting(exception_reports_per_day=24.0)).summaries[0]
    assert more["exchanges_completed"] > a["exchanges_completed"] + 20


@pytest.mark.parametrize("workload, coap, fragment", [
    ({"kind": "reporting"}, {}, 'workload.duration_s: required when workload.kind = "reporting"'),
    ({"kind": "reporting", "duration_s": 60.0, "request_bytes": 95}, {}, "workload.request_bytes: not allowed"),
    ({"kind": "reporting", "duration_s": 60.0, "period_s": 5.0}, {}, "workload.period_s: only meaningful"),
    ({"kind": "periodic", "period_s": 1.0, "duration_s": 60.0, "exception_reports_per_day": 1.0}, {},
     "workload.exception_reports_per_day: only meaningful"),
    ({"kind": "reporting", "duration_s": 60.0}, {"transport": "tcp", "cc": "newreno"},
     'workload.kind: "reporting" is a CoAP-over-UDP workload'),
    ({"kind": "reporting", "duration_s": 60.0, "exception_reports_per_day": -1}, {},
     "workload.exception_reports_per_day: -1 is out of range"),
])
def test_bad_reporting_input_is_one_line(workload, coap, fragment):
    with pytest.raises(ScenarioError) as e:
        load_scenario({"workload": workload, "coap": coap})
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_cli_refuses_a_bad_energy_key_in_one_line_exit_2(cli, tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[energy]\ntx_mw = "loud"\n')
    out = cli("run", p, "--no-db")
    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coaplab: error: energy.tx_mw"), out.stderr


def test_the_json_output_carries_energy(cli, tmp_path):
    p = tmp_path / "mesh.toml"
    p.write_text('[workload]\nkind = "periodic"\nperiod_s = 5.0\nduration_s = 20.0\nrequest_bytes = 95\n'
                 '[network]\nkind = "chain"\n')
    out = cli("run", p, "--no-db", "--format", "json")
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout.splitlines()[0])
    assert set(s["energy"]) >= {"j_per_exchange", "mean_power_mw", "state_time_s", "battery_life_years"}


def test_the_database_report_and_compare_carry_energy(tmp_path):
    """A mesh study and the same study with the radio powered down when off: the runs table's
    energy columns, the report's Energy table, and compare's energy metrics (the runs are the
    same, so only the energy figures differ)."""
    import duckdb

    from coaplab.present import compare
    from coaplab.present.report import build

    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    coaplab.run(MESH, jobs=1, db=a)
    coaplab.run({**MESH, "energy": {"psm_uw": 60.0}}, jobs=1, db=b)
    con = duckdb.connect(str(a), read_only=True)
    rows = con.execute("SELECT energy_j_per_exchange, energy_mean_power_mw, energy_battery_life_years, result "
                       "FROM runs ORDER BY replication").fetchall()
    con.close()
    assert len(rows) == 2
    for j, mw, years, result in rows:
        e = json.loads(result)["energy"]
        assert (j, mw, years) == (e["j_per_exchange"], e["mean_power_mw"], e["battery_life_years"])
    doc, _ = build(a)
    assert "<h3>Energy</h3>" in doc and 'data-table="energy-' in doc
    res = compare.compare_studies(a, b, ignore=["energy.psm_uw"])
    [m] = res["matched"]
    assert m["metrics"]["fct_median_s"]["difference"] == 0.0
    power = m["metrics"]["energy_mean_power_mw"]
    assert power["difference"] < 0 and power["low"] <= power["difference"] <= power["high"]
    assert m["metrics"]["energy_j_per_exchange"]["difference"] < 0
