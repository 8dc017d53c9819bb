"""Replication statistics (coaplab.replstats), on cases computed by hand."""

import pytest

from coaplab.replstats import replication_stats


def runs(*per_replication):
    return [{"clients": [{"fct_s": v} for v in fcts]} for fcts in per_replication]


def test_spread_of_per_replication_medians():
    # Medians: [1, 2, 9] → 2; [4, 6] → 5; [3] → 3. Mean 10/3; sample variance
    # ((2 − 10/3)² + (5 − 10/3)² + (3 − 10/3)²) / 2 = (16/9 + 25/9 + 1/9) / 2 = 7/3.
    s = replication_stats(runs([9.0, 1.0, 2.0], [4.0, 6.0], [3.0]))
    assert s["median_per_replication"] == [2.0, 5.0, 3.0]
    assert s["median_spread"]["min"] == 2.0 and s["median_spread"]["max"] == 5.0
    assert s["median_spread"]["mean"] == pytest.approx(10 / 3)
    assert s["median_spread"]["std"] == pytest.approx((7 / 3) ** 0.5)
    # Pooled: 1 2 3 4 6 9 → median (3 + 4) / 2 = 3.5, mean 25 / 6.
    assert s["median"]["estimate"] == 3.5 and s["mean"]["estimate"] == pytest.approx(25 / 6)


def test_two_single_client_replications():
    # Replications {1} and {3}: a resample is (1,1), (1,3), (3,1) or (3,3), each with
    # probability 1/4, so the bootstrap median and mean are 1, 2 or 3 with probabilities
    # 1/4, 1/2, 1/4. The 2.5th percentile of 2000 draws is 1 and the 97.5th is 3 unless fewer
    # than ~50 draws hit an end, which has probability far below 1e-9 (binomial, p = 1/4).
    s = replication_stats(runs([1.0], [3.0]))
    for k in ("median", "mean"):
        assert s[k] == {"estimate": 2.0, "low": 1.0, "high": 3.0}


def test_identical_replications_give_a_zero_width_interval():
    s = replication_stats(runs([1.0, 2.0, 4.0], [1.0, 2.0, 4.0], [1.0, 2.0, 4.0]))
    assert s["median"] == {"estimate": 2.0, "low": 2.0, "high": 2.0}
    assert s["mean"]["low"] == pytest.approx(7 / 3) and s["mean"]["high"] == pytest.approx(7 / 3)
    assert s["median_spread"]["std"] == 0.0


def test_interval_is_deterministic_and_uses_the_seed():
    data = runs([1.0, 5.0], [2.0, 8.0], [3.0, 3.5], [10.0, 0.5], [4.0, 4.5])
    a, b = replication_stats(data), replication_stats(data)
    assert a == b
    c = replication_stats(data, seed=7)
    assert (c["median"]["low"], c["median"]["high"], c["mean"]["low"], c["mean"]["high"]) != \
        (a["median"]["low"], a["median"]["high"], a["mean"]["low"], a["mean"]["high"])
    # The interval brackets the estimate and lies within the range of the data.
    for k in ("median", "mean"):
        assert 0.5 <= a[k]["low"] <= a[k]["estimate"] <= a[k]["high"] <= 10.0


def test_weighted_median_matches_the_expanded_sample():
    # Resampling picks replication 0 twice and replication 2 once: the pooled sample is
    # [1, 5, 1, 5, 3, 3.5] → sorted 1 1 3 3.5 5 5 → median (3 + 3.5) / 2 = 3.25.
    import numpy as np

    from coaplab.replstats import _weighted_median

    values = np.array([1.0, 2.0, 3.0, 3.5, 5.0, 8.0])
    owner = np.array([0, 1, 2, 2, 0, 1])
    assert _weighted_median(values, owner, np.array([2, 0, 1])) == 3.25


def test_too_few_replications():
    one = replication_stats(runs([1.0, 3.0]))
    assert one["median"] == {"estimate": 2.0, "low": None, "high": None}
    assert one["median_spread"]["std"] is None
    none = replication_stats(runs([]))
    assert none["replications"] == 0 and none["median"]["estimate"] is None
    # Clients without an FCT (no exchange completed) are left out.
    s = replication_stats([{"clients": [{"fct_s": None}, {"fct_s": 2.0}]}])
    assert s["median_per_replication"] == [2.0]
