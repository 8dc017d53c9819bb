"""The workload metrics of ``coaplab compare`` (coaplab.present.compare_metrics): LwM2M devices
and Q-Block transfers, on hand-made runs (expected values by hand) and on two small stored
studies of each kind (expected values from the stored summaries, docs/model.md), the Q-Block
table of ``coaplab report``, and bad input unchanged."""

import json

import pytest

from coaplab.execute.tidy import load
from coaplab.present import compare
from coaplab.present.compare_metrics import METRIC_KEYS, WORKLOAD_METRICS

# --------------------------------------------------------------------------- hand-made runs


def _lwm2m(register, updates_failed):
    return {"clients": [], "lwm2m": {"register_s": register, "read_wait_s": [], "firmware_s": [],
                                     "updates_failed": updates_failed}}


def _qblock(times, recovery, recovered):
    return {"clients": [], "qblock": {"transfer_time_s": times, "recovery_requests": recovery,
                                      "blocks_recovered": recovered}}


def test_lwm2m_differences_by_hand():
    a = compare.Sample([_lwm2m([1.0, 2.0], 1), _lwm2m([6.0], 3)], "a")
    b = compare.Sample([_lwm2m([2.0, 4.0], 0), _lwm2m([9.0], 0)], "b")
    d = compare.difference(a, b)
    # The mean over all devices of all replications, not the mean of per-replication means:
    # A (1 + 2 + 6)/3 = 3 (the mean of means would be (1.5 + 6)/2 = 3.75), B (2 + 4 + 9)/3 = 5;
    # difference 5 − 3 = 2.
    r = d["lwm2m_register_mean_s"]
    assert (r["first"], r["second"], r["difference"]) == (3.0, 5.0, 2.0)
    assert r["low"] <= 2.0 <= r["high"]
    # Failed updates per replication: A (1 + 3)/2 = 2, B 0; difference −2.
    u = d["lwm2m_updates_failed"]
    assert (u["first"], u["second"], u["difference"]) == (2.0, 0.0, -2.0)
    # No reads, no firmware in either: not shown; nor the metrics of other workloads.
    assert set(d) == {"lwm2m_register_mean_s", "lwm2m_updates_failed"}


def test_qblock_differences_by_hand():
    a = compare.Sample([_qblock([1.0, 2.0, 3.0], 3, 2), _qblock([4.0], 5, 4)], "a")
    b = compare.Sample([_qblock([2.0, 4.0], 10, 7), _qblock([6.0, 8.0], 0, 1)], "b")
    d = compare.difference(a, b)
    # Pooled p50: A 1 2 3 4 → (2 + 3)/2 = 2.5; B 2 4 6 8 → (4 + 6)/2 = 5; difference 2.5.
    p = d["qblock_transfer_p50_s"]
    assert (p["first"], p["second"], p["difference"]) == (2.5, 5.0, 2.5)
    # Pooled mean: A 10/4 = 2.5, B 20/4 = 5; difference 2.5.
    m = d["qblock_transfer_mean_s"]
    assert (m["first"], m["second"], m["difference"]) == (2.5, 5.0, 2.5)
    # Per replication: recovery requests A (3 + 5)/2 = 4, B (10 + 0)/2 = 5 → 1;
    # blocks recovered A (2 + 4)/2 = 3, B (7 + 1)/2 = 4 → 1.
    assert d["qblock_recovery_requests"]["difference"] == 1.0
    assert d["qblock_blocks_recovered"]["difference"] == 1.0
    for k in ("qblock_transfer_p50_s", "qblock_transfer_mean_s", "qblock_recovery_requests", "qblock_blocks_recovered"):
        assert d[k]["low"] <= d[k]["difference"] <= d[k]["high"], k
    assert "rank_test" not in p  # only FCT, unnecessary retransmissions and throughput are rank-tested


def test_new_metrics_come_last():
    # Each metric's bootstrap stream is seeded with its index: the nine earlier metrics keep theirs.
    assert METRIC_KEYS[:9] == ("fct_median_s", "unnecessary_median", "throughput_exchanges_per_s",
                               "retransmission_ratio", "mean_rtt_s", "energy_j_per_exchange", "energy_mean_power_mw",
                               "notification_delivered_fraction", "notification_age_mean_s")
    assert set(WORKLOAD_METRICS) >= {"lwm2m_register_mean_s", "qblock_transfer_p50_s"}


# --------------------------------------------------------------------------- two stored studies of each kind

LWM2M = {"name": "lwm2m-small", "seed": 1, "replications": 2,
         "workload": {"kind": "lwm2m", "clients": 4, "duration_s": 1800.0, "start_spread_s": 30.0,
                      "lwm2m_lifetime_s": 600.0, "lwm2m_reads_per_day": 480.0, "lwm2m_notify_period_s": 300.0,
                      "lwm2m_firmware_bytes": 4096, "lwm2m_firmware_at_s": 900.0},
         "coap": {"transport": "udp", "cc": "cocoa"}}
QBLOCK = {"name": "qblock-small", "seed": 1, "replications": 3, "link": {"mtu": 1500},
          "workload": {"kind": "firmware", "clients": 1, "resource_bytes": 8192},
          "coap": {"block_mode": "q-block"}}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    from coaplab.execute.runner import run_scenario

    tmp = tmp_path_factory.mktemp("workloads")
    # A and B differ in the link's error preset only (ignored when matching).
    for side, errors in (("a", "low"), ("b", "high")):
        for scen in (LWM2M, QBLOCK):
            run_scenario({**scen, "link": {**scen.get("link", {}), "errors": errors}}, jobs=1,
                         db=tmp / f"{scen['name']}-{side}.duckdb")
    return tmp


def _summary(db):
    (s,) = load(db).summaries()
    return s


def test_compare_stored_lwm2m_studies(stored):
    a, b = stored / "lwm2m-small-a.duckdb", stored / "lwm2m-small-b.duckdb"
    res = compare.compare_studies(a, b, ignore=["link.errors"])
    (m,) = res["matched"]
    sa, sb = _summary(a), _summary(b)
    # Each difference of means is the summaries' (docs/model.md "LwM2M devices": the mean over
    # all devices of all replications): lwm2m_X_s.mean of B − lwm2m_X_s.mean of A.
    for key, field in (("lwm2m_register_mean_s", "lwm2m_register_s"), ("lwm2m_read_wait_mean_s", "lwm2m_read_wait_s"),
                       ("lwm2m_firmware_mean_s", "lwm2m_firmware_s")):
        row = m["metrics"][key]
        assert row["first"] == pytest.approx(sa[field]["mean"]) and row["second"] == pytest.approx(sb[field]["mean"])
        assert row["difference"] == pytest.approx(sb[field]["mean"] - sa[field]["mean"])
        assert row["low"] <= row["difference"] <= row["high"], key
    # Failed updates: the summary's sum over replications / replications (2 on each side).
    row = m["metrics"]["lwm2m_updates_failed"]
    assert row["difference"] == pytest.approx(sb["lwm2m_updates_failed"] / 2 - sa["lwm2m_updates_failed"] / 2)
    assert not any(k.startswith(("qblock", "notification")) for k in m["metrics"])


def test_compare_stored_qblock_studies(cli, stored):
    a, b = stored / "qblock-small-a.duckdb", stored / "qblock-small-b.duckdb"
    out = cli("compare", "--db", a, "--db", b, "--ignore", "link.errors", "--format", "json")
    assert out.returncode == 0, out.stderr
    (m,) = [r for r in map(json.loads, out.stdout.splitlines()) if r["kind"] == "match"]
    qa, qb = _summary(a)["qblock"], _summary(b)["qblock"]
    # The summaries' pooled transfer times (docs/model.md "Q-Block"): p50 and mean of B − of A.
    for key, stat in (("qblock_transfer_p50_s", "p50"), ("qblock_transfer_mean_s", "mean")):
        row = m["metrics"][key]
        assert row["difference"] == pytest.approx(qb["transfer_time_s"][stat] - qa["transfer_time_s"][stat])
        assert row["low"] <= row["difference"] <= row["high"], key
    # Counters per replication: the summary's sum / 3 replications on each side.
    for key in ("recovery_requests", "blocks_recovered"):
        row = m["metrics"][f"qblock_{key}"]
        assert row["difference"] == pytest.approx(qb[key] / 3 - qa[key] / 3)
    assert not any(k.startswith("lwm2m") for k in m["metrics"])
    text = cli("compare", "--db", a, "--db", b, "--ignore", "link.errors")
    assert text.returncode == 0 and "Q-Block transfer p50 (s)" in text.stdout
    assert "LwM2M" not in text.stdout and "observe" not in text.stdout


def test_report_has_a_qblock_table(cli, stored, tmp_path):
    out = cli("report", "--db", stored / "qblock-small-a.duckdb", "--out", tmp_path / "r")
    assert out.returncode == 0, out.stderr
    doc = (tmp_path / "r" / "index.html").read_text()
    assert 'data-table="qblock-' in doc and "<h3>Q-Block</h3>" in doc and "recovery requests" in doc
    out = cli("report", "--db", stored / "lwm2m-small-a.duckdb", "--out", tmp_path / "l")
    assert out.returncode == 0, out.stderr
    assert 'data-table="qblock-' not in (tmp_path / "l" / "index.html").read_text()  # no Q-Block: no table
    # Two studies: the workload's columns appear in the comparison table.
    out = cli("report", "--db", stored / "qblock-small-a.duckdb", "--db", stored / "qblock-small-b.duckdb",
              "--ignore", "link.errors", "--out", tmp_path / "c")
    assert out.returncode == 0, out.stderr
    doc = (tmp_path / "c" / "index.html").read_text()
    assert "Q-Block transfer p50 (s)<br>A" in doc and "LwM2M registration mean (s)<br>A" not in doc


def test_bad_input_is_one_line(cli, stored, tmp_path):
    a = stored / "qblock-small-a.duckdb"
    for args, words in ((("compare", "--db", a), "compare takes exactly two"),
                        (("compare", "--db", a, "--db", stored / "lwm2m-small-b.duckdb", "--ignore", "link.erors"),
                         "did you mean link.errors")):
        out = cli(*args)
        assert out.returncode == 2 and words in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
