"""The NSTART study's arithmetic (`coaplab reproduce nstart`, docs/validation.md "NSTART"):
goodput ratios, their intervals and the collapse rule, on made-up results computed by hand."""

import pytest

from coaplab.analyse.intervals import ratio_of_means_interval
from coaplab.suites import nstart


def _summary(cc, n, goodput, unnecessary=0, done=100):
    return {"name": "nstart-star", "config_id": f"{cc}-{n}", "swept": {"coap.cc": cc, "coap.nstart": n},
            "config": {"coap": {"cc": cc, "nstart": n}}, "throughput_exchanges_per_s": goodput,
            "unnecessary_retransmissions_total": unnecessary, "exchanges_completed": done}


def test_the_collapse_rule_by_hand():
    """Algorithm a: NSTART 1 goodput 10 (replications 10, 10); NSTART 2: 9.8, 9.8 → 0.98, inside
    the 5 % margin; NSTART 4: 9.0, 9.0 → 0.90, every resample 0.90 < 0.95: unsafe from 4.
    Algorithm b: NSTART 2's replications 9.0 and 10.6 (mean 9.8) — resamples reach 10.6 / 10 =
    1.06, so the interval's top is above 0.95: not unsafe, although the mean is 0.98."""
    runs = {"a-1": [{"throughput_exchanges_per_s": 10.0}] * 2, "a-2": [{"throughput_exchanges_per_s": 9.8}] * 2,
            "a-4": [{"throughput_exchanges_per_s": 9.0}] * 2,
            "b-1": [{"throughput_exchanges_per_s": 10.0}] * 2,
            "b-2": [{"throughput_exchanges_per_s": 9.0}, {"throughput_exchanges_per_s": 10.6}]}
    summaries = [_summary("a", 1, 10.0), _summary("a", 2, 9.8), _summary("a", 4, 9.0, unnecessary=50),
                 _summary("b", 1, 10.0), _summary("b", 2, 9.8)]
    rows = {r["coap.cc"]: r for r in nstart.rows(summaries, runs)}
    a, b = rows["a"], rows["b"]
    assert a["relative_2"] == pytest.approx(0.98) and a["relative_4"] == pytest.approx(0.9)
    assert a["unsafe_from"] == 4 and a["unnecessary_per_exchange_4"] == pytest.approx(0.5)
    assert b["unsafe_from"] is None
    assert b["relative_2_ci"][1] == pytest.approx(1.06)
    assert "unsafe from" in nstart.text(summaries, runs)


def test_ratio_of_means_interval_by_hand():
    # Constant replications: every resample gives 3 / 4 = 0.75.
    assert ratio_of_means_interval([3.0, 3.0, 3.0], [4.0, 4.0]) == pytest.approx((0.75, 0.75))
    # Numerator 1 or 3 (2 values): resampled means 1, 2 or 3 → ratios 0.5 … 1.5 over 2.
    low, high = ratio_of_means_interval([1.0, 3.0], [2.0, 2.0])
    assert (low, high) == pytest.approx((0.5, 1.5))
    assert ratio_of_means_interval([1.0], [2.0, 2.0]) is None


def test_the_study_sweeps_every_built_in_algorithm():
    from coaplab import _core
    for part in nstart.PARTS:
        s = nstart.scenario(part)
        assert s.sweep["coap.cc"] == list(_core.algorithms())
        assert s.sweep["coap.nstart"] == list(nstart.NSTARTS)
