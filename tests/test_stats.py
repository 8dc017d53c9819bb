"""Metric definitions on hand-made inputs (docs/design.md §6)."""

import pytest

from coaplab.analyse.stats import jain, percentile, percentiles, summarize


def test_percentile_linear_interpolation_between_closest_ranks():
    xs = [10.0, 20.0, 30.0, 40.0, 50.0]
    # p10: h = (5−1)·0.1 = 0.4 → 10 + 0.4·(20 − 10) = 14.
    assert percentile(xs, 0.10) == pytest.approx(14.0)
    # p25: h = 1.0 → 20 exactly; p50: h = 2 → 30; p95: h = 3.8 → 40 + 0.8·10 = 48.
    assert percentile(xs, 0.25) == 20.0
    assert percentile(xs, 0.50) == 30.0
    assert percentile(xs, 0.95) == pytest.approx(48.0)
    p = percentiles([3.0, 1.0, 2.0])
    # Sorted [1, 2, 3]: p75: h = 1.5 → 2.5; p90: h = 1.8 → 2.8.
    assert p["min"] == 1.0 and p["max"] == 3.0 and p["p75"] == pytest.approx(2.5) and p["p90"] == pytest.approx(2.8)
    assert percentiles([])["p50"] is None


def test_jain():
    # Equal shares → 1. Shares (1, 3): (4)² / (2·(1 + 9)) = 16/20 = 0.8.
    assert jain([5, 5, 5]) == 1.0
    assert jain([1, 3]) == pytest.approx(0.8)
    # One client gets everything among 4: 1/n = 0.25.
    assert jain([0, 0, 0, 8]) == pytest.approx(0.25)
    assert jain([]) is None and jain([0, 0]) == 1.0


def _run(fcts, unnecessary, completed, hist):
    return {
        "replication": 0, "seed": 1, "events": 100, "sim_time_s": 10.0, "measured_period_s": 10.0,
        "throughput_exchanges_per_s": sum(completed) / 10.0, "settling_time_s": None,
        "retransmission_histogram": hist,
        "packets": {"sent": 10, "dropped_buffer": 1, "lost_link": 2, "utilisation_downlink": 0.5, "max_queue_bytes": 7, "mean_queue_delay_s": 0.1},
        "clients": [
            {"client": i, "fct_s": f, "exchanges_completed": c, "exchanges_failed": 0, "retransmissions": u, "unnecessary_retransmissions": u, "timeouts": u}
            for i, (f, u, c) in enumerate(zip(fcts, unnecessary, completed))
        ],
    }


def test_summary_pools_clients_over_replications():
    from coaplab.describe.scenario import resolve

    cfg = resolve({})
    runs = [_run([1.0, 2.0], [0, 2], [5, 5], [8, 2]), _run([3.0, 4.0], [1, 1], [6, 2], [5, 2, 1])]
    s = summarize(cfg, "abc", runs, wall_s=0.5)
    # Pooled FCTs [1, 2, 3, 4]: p50 h = 1.5 → 2.5.
    assert s["fct_s"]["p50"] == pytest.approx(2.5) and s["fct_s"]["max"] == 4.0
    assert s["retransmission_histogram"] == [13, 4, 1]
    assert s["unnecessary_retransmissions_total"] == 4
    assert s["exchanges_completed"] == 18
    assert s["packets"]["sent"] == 20 and s["packets"]["dropped_buffer"] == 2 and s["packets"]["lost_link"] == 4
    assert s["packets"]["utilisation_downlink"] == pytest.approx(0.5)
    # Jain per run: (5,5) → 1; (6,2) → 64/(2·40) = 0.8; mean 0.9.
    assert s["jain_fairness"] == pytest.approx(0.9)
    assert s["settling_time_s"] is None and s["events"] == 200 and s["replications"] == 2
