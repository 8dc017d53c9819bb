"""Regression against the published reference figures (docs/validation.md explains each)."""

import pytest

from coaplab.suites.calibration import compare, figure_scenario, load_reference

FIGURES = {f["id"]: f for f in load_reference()}


def rows(fig_id):
    return compare([FIGURES[fig_id]], jobs=2)


def test_one_client():
    # Target 0.1 %. The median meets it (+0.02 %); the published figures have no spread at
    # all (p10 = p90), while the design's per-packet uniform 10–20 ms path delay gives a 50-exchange
    # FCT a standard deviation of sqrt(100 · 100/12) ms ≈ 29 ms (0.09 %), so p10/p90 sit at
    # ±0.05…0.10 % by construction (docs/validation.md).
    for r in rows("udp-1client-continuous"):
        assert abs(r["diff"]) <= (0.001 if r["stat"] == "p50" else 0.0012), r


@pytest.mark.parametrize("fig_id, tolerance", [
    ("udp-100clients-continuous-2500B", 0.05),  # approximate medians: within 5 %
    ("udp-100clients-random-2500B", 0.05),
])
def test_within_target(fig_id, tolerance):
    for r in rows(fig_id):
        assert abs(r["diff"]) <= tolerance + 1e-9, r


def test_firmware_udp_block_wise_and_tcp():
    # UDP Block2: not an issue target; the model is within 0.11 % of every published percentile.
    # TCP (one 102407-byte message, New Reno): target 5 % for each of the four buffers
    # (docs/validation.md explains what drives each figure).
    tcp = 0
    for r in rows("firmware-1client"):
        assert r["simulated"] is not None, r
        if r["column"].startswith("udp/"):
            assert abs(r["diff"]) < 0.0015, r
        else:
            tcp += 1
            assert abs(r["diff"]) <= 0.05, r
    assert tcp == 4


@pytest.mark.parametrize("fig_id", ["udp-50clients-continuous-2500B", "udp-50clients-continuous-14100B"])
def test_50_clients_known_offset(fig_id):
    # Known, documented residual (docs/validation.md): with the design's sizes the model is a
    # consistent 0.8–1.13 % below the published 50-client percentiles (target 1 %). This test
    # pins the residual so that any change to it is noticed.
    for r in rows(fig_id):
        assert -0.0115 < r["diff"] < -0.007, r


def test_figure_columns_become_scenarios():
    fig = FIGURES["firmware-1client"]
    tcp = figure_scenario(fig, "tcp/newreno@14100")
    assert tcp["coap"] == {"transport": "tcp", "cc": "newreno"}
    assert tcp["link"]["buffer_bytes"] == 14100
    udp = figure_scenario(fig, "udp/cocoa@2500")
    assert udp["workload"]["kind"] == "firmware"
    assert udp["coap"] == {"transport": "udp", "cc": "cocoa", "max_retransmit": 20}


def test_tv_distance_by_hand():
    from coaplab.suites.calibration import tv_distance

    # [3, 1] → (0.75, 0.25, 0); [1, 1, 2] → (0.25, 0.25, 0.5):
    # 0.5 · (|0.75 − 0.25| + |0.25 − 0.25| + |0 − 0.5|) = 0.5 · (0.5 + 0 + 0.5) = 0.5.
    assert tv_distance([3, 1], [1, 1, 2]) == pytest.approx(0.5)
    # Same shape at different totals: 0. Disjoint supports: 1.
    assert tv_distance([1, 2], [10, 20, 0]) == pytest.approx(0.0)
    assert tv_distance([1, 0], [0, 5]) == pytest.approx(1.0)
    # [1474, 3984, 4793, 7795, 381954] (default/continuous, Table 2) against all 400000 in bin 4:
    # 0.5 · (1474 + 3984 + 4793 + 7795 + (400000 − 381954)) / 400000 = 0.5 · 36092 / 400000 = 0.045115.
    assert tv_distance([1474, 3984, 4793, 7795, 381954, 0, 0, 0], [0, 0, 0, 0, 400000]) == pytest.approx(0.045115)
    with pytest.raises(ValueError):
        tv_distance([0, 0], [1])


def test_histogram_rows_become_scenarios():
    from coaplab.suites.calibration import histogram_scenario

    sc = histogram_scenario(FIGURES["retx-hist-400-infinite"], "cocoa/random")
    assert sc["workload"] == {"kind": "random", "clients": 400, "exchanges": 50}
    assert sc["link"] == {"buffer_bytes": 1410000, "errors": "none"}
    assert sc["coap"] == {"transport": "udp", "cc": "cocoa", "max_retransmit": 20}
    assert sc["replications"] == 20


def test_400_client_histograms():
    # Target: total-variation distance <= 0.10 per row (docs/validation.md). Three rows meet it;
    # cocoa/continuous is a known, documented miss (the bistable start, ≈ 0.31 with the
    # default start model): pinned so that any change is noticed.
    got = {r["column"]: r["diff"] for r in rows("retx-hist-400-infinite")}
    assert set(got) == {"default/continuous", "cocoa/continuous", "default/random", "cocoa/random"}
    for row in ("default/continuous", "default/random", "cocoa/random"):
        assert got[row] <= 0.10, (row, got[row])
    assert 0.25 < got["cocoa/continuous"] < 0.40, got


def test_start_model_trade_off():
    # docs/validation.md, "Client start": launching the clients one after another, 50 ms apart,
    # brings every 400-client histogram row within TV 0.10 (continuous cocoa ≈ 0.014) but moves
    # the 50-client / 14100 B percentiles to ≈ −3 … −3.8 %, far outside the 1 % target.
    seq = {"start": "sequential", "start_interval_s": 0.05, "start_spread_s": 0.0}
    hist = compare([FIGURES["retx-hist-400-infinite"]], jobs=2, workload=seq)
    assert len(hist) == 4 and all(r["diff"] <= 0.10 for r in hist), hist
    fifty = compare([FIGURES["udp-50clients-continuous-14100B"]], jobs=2, workload=seq)
    assert max(abs(r["diff"]) for r in fifty) > 0.025, fifty
