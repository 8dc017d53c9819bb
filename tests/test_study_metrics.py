"""The CoCoA study's metrics in the summaries, the table, the frames, the database, the figures
and `coaplab reproduce` (docs/model.md "Metrics"; the engine's hand-computed runs are in
crates/engine/tests/study_metrics.rs)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coaplab
from coaplab.analyse.stats import EXCHANGE_SUMS, exchange_metrics
from coaplab.errors import CoaplabError
from coaplab.suites.calibration import cocoa_table2_rows, cocoa_table2_text, load_cocoa2016
from conftest import ROOT

COAPLAB = str(__import__("pathlib").Path(sys.executable).with_name("coaplab"))

QUICK = {"name": "study", "replications": 3, "link": {"errors": "medium"},
         "workload": {"clients": 4, "exchanges": 8},
         "sweep": {"coap.cc": ["default", "cocoa"]}}


@pytest.fixture(scope="module")
def quick():
    return coaplab.run(QUICK, jobs=2)


def test_pooled_by_hand():
    # Two replications: 10 + 30 transmissions with 1 + 5 retransmissions → 6/40 = 0.15 (not
    # the mean of 0.1 and 0.1667); strong RTT (3.0 + 2.0) / (5 + 5) = 0.5 s; weak (0 + 4.0) /
    # (0 + 2) = 2.0 s; initial RTO (22.5 + 62.5) / (9 + 25) = 2.5 s.
    runs = [
        {"con_transmissions": 10, "con_retransmissions": 1, "rtt_strong_samples": 5, "rtt_strong_sum_s": 3.0,
         "rtt_weak_samples": 0, "rtt_weak_sum_s": 0.0, "initial_rto_count": 9, "initial_rto_sum_s": 22.5},
        {"con_transmissions": 30, "con_retransmissions": 5, "rtt_strong_samples": 5, "rtt_strong_sum_s": 2.0,
         "rtt_weak_samples": 2, "rtt_weak_sum_s": 4.0, "initial_rto_count": 25, "initial_rto_sum_s": 62.5},
    ]
    m = exchange_metrics(runs)
    assert m["retransmission_ratio"] == pytest.approx(0.15)
    assert m["mean_rtt_s"] == pytest.approx(0.5)
    assert m["mean_rtt_weak_s"] == pytest.approx(2.0)
    assert m["mean_initial_rto_s"] == pytest.approx(2.5)
    # No UDP part (TCP runs, runs stored before the metrics existed): all None.
    none = exchange_metrics([{"tcp": {}}])
    assert none["exchange_sums"] is None and none["mean_rtt_s"] is None and none["retransmission_ratio"] is None


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 500), st.integers(0, 500), st.integers(0, 100),
                          st.floats(0.0, 100.0), st.integers(1, 100), st.floats(0.0, 300.0)), min_size=1, max_size=8))
def test_pooled_means_are_sum_over_count(parts):
    runs = [{"con_transmissions": n + r, "con_retransmissions": r, "rtt_strong_samples": k, "rtt_strong_sum_s": s,
             "rtt_weak_samples": 0, "rtt_weak_sum_s": 0.0, "initial_rto_count": n, "initial_rto_sum_s": t}
            for n, r, k, s, _, t in parts]
    m = exchange_metrics(runs)
    assert 0 <= m["retransmission_ratio"] < 1
    assert m["retransmission_ratio"] == sum(p[1] for p in parts) / sum(p[0] + p[1] for p in parts)
    assert m["mean_initial_rto_s"] == sum(p[5] for p in parts) / sum(p[0] for p in parts)
    k = sum(p[2] for p in parts)
    assert m["mean_rtt_s"] == (sum(p[3] for p in parts) / k if k else None)


def test_summary_pools_the_runs(quick):
    for s, cid in zip(quick.summaries, quick.runs):
        runs = quick.runs[cid]
        assert s["config_id"] == cid
        sums = {k: sum(r[k] for r in runs) for k in EXCHANGE_SUMS}
        assert s["exchange_sums"] == pytest.approx(sums)
        assert s["retransmission_ratio"] == sums["con_retransmissions"] / sums["con_transmissions"]
        assert s["mean_initial_rto_s"] == sums["initial_rto_sum_s"] / sums["initial_rto_count"]
        assert s["mean_rtt_s"] == sums["rtt_strong_sum_s"] / sums["rtt_strong_samples"]
        # 4 clients × 8 exchanges × 3 replications started; every one sent its original.
        assert sums["initial_rto_count"] == 96
        assert sums["con_transmissions"] - sums["con_retransmissions"] == 96
        # Throughput × measured period = completed exchanges, run by run.
        for r in runs:
            done = sum(c["exchanges_completed"] for c in r["clients"])
            assert r["throughput_exchanges_per_s"] * r["measured_period_s"] == pytest.approx(done, rel=1e-12)
        # The PMF counts every client row: 4 clients × 3 replications.
        assert sum(n for _, n in s["completed_per_client_pmf"]) == 12
        if s["config"]["coap"]["cc"] == "default":
            # T_0 uniform in [2, 3] s (RFC 7252 §4.2): the mean of 96 draws is near 2.5 s.
            assert 2.3 < s["mean_initial_rto_s"] < 2.7
            assert s["mean_rtt_weak_s"] is None  # default takes no weak samples


def test_table_and_frames_show_them(quick):
    from coaplab.present.output import table

    text = table(quick.summaries)
    assert text.count("retransmission ratio ") == 2 and text.count("mean initial RTO") == 2
    assert text.count("completed per client") == 2
    runs = quick.runs_frame()
    for col in ("retransmission_ratio", "mean_rtt_s", "mean_rtt_weak_s", "mean_initial_rto_s",
                "con_transmissions", "rtt_strong_sum_s"):
        assert col in runs.columns, col
    assert len(runs) == 6


def test_tcp_summaries_have_none():
    res = coaplab.run({"name": "t", "replications": 1, "workload": {"clients": 2, "exchanges": 3},
                       "coap": {"transport": "tcp", "cc": "newreno"}})
    s = res.summaries[0]
    assert s["retransmission_ratio"] is None and s["mean_rtt_s"] is None and s["exchange_sums"] is None
    assert s["completed_per_client_pmf"] == [[3, 2]]


def test_settling_cap_and_settled_flag():
    base = {"name": "b", "replications": 2, "link": {"path_delay_ms": [15.0, 15.0]},
            "workload": {"kind": "burst", "background": 1, "exchanges": 3, "burst_at_s": 1.0,
                         "burst_clients": 2, "burst_exchanges": 4}}
    free = coaplab.run(base).summaries[0]
    assert free["settled_replications"] == 2 and free["settling_time_s"] > 1.0
    capped = coaplab.run({**base, "workload": {**base["workload"], "settling_cap_s": 0.5}}).summaries[0]
    assert capped["settling_time_s"] == 0.5 and capped["settled_replications"] == 0
    # The key is absent from configurations that do not set it: their identity is unchanged.
    assert "settling_cap_s" not in free["config"]["workload"]
    assert free["config_id"] != capped["config_id"]


def test_settling_cap_needs_a_burst(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('name = "x"\n[workload]\nsettling_cap_s = 180\n')
    p = subprocess.run([COAPLAB, "run", str(f), "--no-db"], capture_output=True, text=True, check=False)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and 'workload.settling_cap_s: only meaningful when workload.kind = "burst"' in lines[0]


def test_new_metrics_do_not_change_identity():
    # The first golden case's id, as stored before these metrics existed, is unchanged.
    sys.path.insert(0, str(ROOT / "tests" / "golden"))
    from cases import cases

    case = cases()[0]
    stored = json.loads((ROOT / "tests/golden/summaries.jsonl").read_text().splitlines()[0])
    assert stored["name"] == case["name"]
    assert coaplab.run(case).summaries[0]["config_id"] == stored["config_id"]


def test_plots_and_database(tmp_path):
    db = tmp_path / "r.duckdb"
    coaplab.run({"name": "p", "replications": 2, "link": {"errors": "low"},
                 "workload": {"clients": 3, "duration_s": 8.0},
                 "sweep": {"coap.cc": ["default", "cocoa"], "workload.clients": [2, 3]}}, jobs=2, db=db)
    for kind in ("retransmission-ratio", "completed-pmf"):
        out = tmp_path / f"{kind}.svg"
        p = subprocess.run([COAPLAB, "plot", "--db", str(db), "--kind", kind, "--out", str(out)],
                           capture_output=True, text=True, check=False)
        assert p.returncode == 0, p.stderr
        assert out.stat().st_size > 1000
    from coaplab.execute.store import ResultsDB

    with ResultsDB(db, read_only=True) as r:
        rows = r.con.execute("SELECT retransmission_ratio, mean_initial_rto_s, settled FROM runs").fetchall()
    assert len(rows) == 8 and all(0 <= x < 1 and y > 0 and z is None for x, y, z in rows)
    from coaplab.present.report import build

    _, ids = build(db)
    assert "retransmission-ratio-0" in ids and "completed-pmf-0" in ids


def test_plots_refuse_runs_without_the_data(tmp_path):
    db = tmp_path / "tcp.duckdb"
    coaplab.run({"name": "t", "replications": 1, "workload": {"clients": 2, "exchanges": 2},
                 "coap": {"transport": "tcp", "cc": "newreno"}}, db=db)
    p = subprocess.run([COAPLAB, "plot", "--db", str(db), "--kind", "retransmission-ratio",
                        "--out", str(tmp_path / "x.png")], capture_output=True, text=True, check=False)
    assert p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1
    assert "no CoAP-over-UDP runs with a retransmission ratio" in p.stderr
    from coaplab.present.figures import completed_pmf

    with pytest.raises(CoaplabError, match="no runs with completed exchanges per client"):
        completed_pmf([{"config": {"name": "old"}, "fct_s": {}}])


def test_cocoa_table2_published_vs_simulated_by_hand():
    fig = load_cocoa2016()
    summaries = [
        {"config": {"coap": {"cc": "cocoa"}, "workload": {"clients": 10}}, "mean_rtt_s": 0.7271,
         "mean_initial_rto_s": 1.505},
        {"config": {"coap": {"cc": "default"}, "workload": {"clients": 10}}, "mean_rtt_s": 0.9,
         "mean_initial_rto_s": 2.2473},
        {"config": {"coap": {"cc": "fasor"}, "workload": {"clients": 10}}, "mean_rtt_s": 1.0,
         "mean_initial_rto_s": 2.0},
    ]
    rows = cocoa_table2_rows(summaries, fig)
    # Table II, 10 clients: CoCoA RTT 661 ms, initial RTO 1505 ms; Default initial RTO 2497 ms
    # (no RTT published). 727.1 / 661 − 1 = +10 %; 1505 / 1505 − 1 = 0; 2247.3 / 2497 − 1 = −10 %.
    assert [(r["column"], r["stat"]) for r in rows] == [("cocoa", "mean RTT"), ("cocoa", "mean initial RTO"),
                                                        ("default", "mean initial RTO")]
    assert [r["published"] for r in rows] == [661.0, 1505.0, 2497.0]
    assert [round(r["diff"], 6) for r in rows] == [0.1, 0.0, -0.1]
    text = cocoa_table2_text(rows)
    assert "+10.0%" in text and "-10.0%" in text


def test_cocoa_table2_compares_californiums_cocoa_with_the_cocoa_column():
    # The study measured Californium's CoCoA: `cocoa@californium` is set against the `cocoa`
    # column. 20 clients: 1437 ms RTT, 3379 ms RTO; 1580.7 / 1437 − 1 = +10 %, 3041.1 / 3379 − 1 = −10 %.
    summaries = [{"config": {"coap": {"cc": "cocoa@californium"}, "workload": {"clients": 20}}, "mean_rtt_s": 1.5807,
                  "mean_initial_rto_s": 3.0411},
                 {"config": {"coap": {"cc": "linux-rto@californium"}, "workload": {"clients": 20}}, "mean_rtt_s": 1.0,
                  "mean_initial_rto_s": 2.0}]
    rows = cocoa_table2_rows(summaries, load_cocoa2016())
    assert [(r["column"], r["published"], round(r["diff"], 6)) for r in rows] == [
        ("cocoa@californium", 1437.0, 0.1), ("cocoa@californium", 3379.0, -0.1)]


def test_reproduce_prints_table2_for_the_gprs_target(monkeypatch):
    import coaplab.suites.reproduce as rp
    from coaplab.describe.scenario import load_scenario

    real = rp.load

    def small(name):
        assert name == "cocoa2016-gprs-continuous"
        real(name)  # the shipped file loads
        return load_scenario({"name": name, "seed": 1, "replications": 1, "network": {"kind": "gprs"},
                              "workload": {"kind": "continuous", "duration_s": 20.0}, "coap": {"max_retransmit": 4},
                              "sweep": {"workload.clients": [10], "coap.cc": ["cocoa", "default"]}})

    monkeypatch.setattr(rp, "load", small)
    out = rp.reproduce(["cocoa2016-gprs-continuous"], details=True)
    assert "cocoa-gprs-table2" in out
    lines = [ln for ln in out.splitlines() if ln.strip().startswith("10 ")]
    assert len(lines) == 3, out  # cocoa RTT, cocoa initial RTO, default initial RTO
    rows = json.loads("[" + ",".join(rp.reproduce(["cocoa2016-gprs-continuous"], fmt="json").splitlines()) + "]")
    assert sum(r.get("figure") == "cocoa-gprs-table2" for r in rows) == 3


def test_reference_copy_is_packaged():
    assert (ROOT / "python/coaplab/data/cocoa-2016.toml").read_text().startswith("# Calibration figures from the CoCoA study")


def test_groups_have_their_own_metrics():
    res = coaplab.run({"name": "g", "replications": 2, "link": {"errors": "low"},
                       "group": [{"name": "u", "workload": {"clients": 3, "exchanges": 5}, "coap": {"cc": "cocoa"}},
                                 {"name": "t", "workload": {"clients": 2, "exchanges": 3},
                                  "coap": {"transport": "tcp", "cc": "newreno"}}]})
    s = res.summaries[0]
    u, t = s["groups"]["u"], s["groups"]["t"]
    # The run's exchange metrics are the UDP group's: the TCP group has none.
    assert t["exchange_sums"] is None and t["retransmission_ratio"] is None
    assert u["exchange_sums"] == s["exchange_sums"] and u["mean_rtt_s"] == s["mean_rtt_s"]
    assert u["exchange_sums"]["initial_rto_count"] == 3 * 5 * 2
    assert t["completed_per_client_pmf"] == [[3, 4]]
    from coaplab.present import figures

    assert figures.retransmission_ratio_bars(res.summaries) is not None
    assert figures.completed_pmf(res.summaries) is not None


def test_a_database_from_before_gets_the_columns(tmp_path):
    # A database written before these columns existed (the schema without them, as the
    # previous release created it) takes new runs: the sweep adds the columns (NULL in old rows).
    from coaplab.execute.store import SCHEMA, connect

    db = tmp_path / "old.duckdb"
    old = "\n".join(ln for ln in SCHEMA.splitlines()
                    if not any(c in ln for c in ("retransmission_ratio", "mean_rtt", "mean_initial_rto", "settled")))
    con = connect(db)
    con.execute(old)
    con.execute("INSERT INTO coaplab_meta VALUES ('schema_version', '1')")
    con.close()
    coaplab.run({"name": "o", "replications": 1, "workload": {"clients": 2, "exchanges": 3}}, db=db)
    con = connect(db, read_only=True)
    rows = con.execute("SELECT retransmission_ratio, mean_rtt_s, mean_initial_rto_s FROM runs").fetchall()
    con.close()
    assert len(rows) == 1 and rows[0][0] == 0.0 and rows[0][1] > 0 and rows[0][2] > 0
