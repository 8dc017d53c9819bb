"""Replication statistics (coaplab.analyse.replstats), on cases computed by hand."""

import pytest

from coaplab.analyse.replstats import replication_stats


def runs(*per_replication):
    return [{"clients": [{"fct_s": v} for v in fcts]} for fcts in per_replication]


@pytest.fixture(params=["numpy", "loop"])
def path(request, monkeypatch):
    """Both ways replication_stats resamples: vectorised with numpy, or the plain-Python loop it
    takes for small pools while numpy is not loaded."""
    from coaplab.analyse import replstats

    monkeypatch.setattr(replstats, "_small_without_numpy", lambda *_: request.param == "loop")
    return request.param


def test_spread_of_per_replication_medians(path):
    # Medians: [1, 2, 9] → 2; [4, 6] → 5; [3] → 3. Mean 10/3; sample variance
    # ((2 − 10/3)² + (5 − 10/3)² + (3 − 10/3)²) / 2 = (16/9 + 25/9 + 1/9) / 2 = 7/3.
    s = replication_stats(runs([9.0, 1.0, 2.0], [4.0, 6.0], [3.0]))
    assert s["median_per_replication"] == [2.0, 5.0, 3.0]
    assert s["median_spread"]["min"] == 2.0 and s["median_spread"]["max"] == 5.0
    assert s["median_spread"]["mean"] == pytest.approx(10 / 3)
    assert s["median_spread"]["std"] == pytest.approx((7 / 3) ** 0.5)
    # Pooled: 1 2 3 4 6 9 → median (3 + 4) / 2 = 3.5, mean 25 / 6.
    assert s["median"]["estimate"] == 3.5 and s["mean"]["estimate"] == pytest.approx(25 / 6)


def test_two_single_client_replications(path):
    # Replications {1} and {3}: a resample is (1,1), (1,3), (3,1) or (3,3), each with
    # probability 1/4, so the bootstrap median and mean are 1, 2 or 3 with probabilities
    # 1/4, 1/2, 1/4. The 2.5th percentile of 2000 draws is 1 and the 97.5th is 3 unless fewer
    # than ~50 draws hit an end, which has probability far below 1e-9 (binomial, p = 1/4).
    s = replication_stats(runs([1.0], [3.0]))
    for k in ("median", "mean"):
        assert s[k] == {"estimate": 2.0, "low": 1.0, "high": 3.0}


def test_identical_replications_give_a_zero_width_interval(path):
    s = replication_stats(runs([1.0, 2.0, 4.0], [1.0, 2.0, 4.0], [1.0, 2.0, 4.0]))
    assert s["median"] == {"estimate": 2.0, "low": 2.0, "high": 2.0}
    assert s["mean"]["low"] == pytest.approx(7 / 3) and s["mean"]["high"] == pytest.approx(7 / 3)
    assert s["median_spread"]["std"] == 0.0


def test_interval_is_deterministic_and_uses_the_seed(path):
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
    # [1, 5, 1, 5, 3, 3.5] → sorted 1 1 3 3.5 5 5 → median (3 + 3.5) / 2 = 3.25. Picking
    # replication 1 three times: [2, 8] × 3 → 2 2 2 8 8 8 → (2 + 8) / 2 = 5. Picking 0, 1, 2
    # once each: 1 2 3 3.5 5 8 → (3 + 3.5) / 2 = 3.25. Picking 2 once and 0 not at all: 3, 3.5
    # → 3.25; picking 0 once: 1, 5 → 3; picking 0 and 1 once and 2 twice: 1 2 3 3 3.5 3.5 5 8
    # → (3 + 3.5) / 2 = 3.25.
    import numpy as np

    from coaplab.analyse.replstats import _weighted_medians

    values = np.array([1.0, 2.0, 3.0, 3.5, 5.0, 8.0])
    owner = np.array([0, 1, 2, 2, 0, 1])
    counts = np.array([[2, 0, 1], [0, 3, 0], [1, 1, 1], [0, 0, 1], [1, 0, 0], [1, 1, 2]])
    assert _weighted_medians(values, owner, counts).tolist() == [3.25, 5.0, 3.25, 3.25, 3.0, 3.25]


# The bootstrap as first written: one resample at a time, Python's random() and sum(), the
# median over the cumulative counts of every value (numpy). replication_stats, vectorised or
# in its plain-Python loop, must give the same numbers to the last bit.
def _reference_weighted_median(values, owner, counts):
    import math

    import numpy as np

    cum = np.cumsum(counts[owner])
    n = int(cum[-1])
    h = (n - 1) * 0.5
    lo_rank = math.floor(h)
    hi_rank = min(lo_rank + 1, n - 1)
    lo_v, hi_v = values[np.searchsorted(cum, [lo_rank, hi_rank], side="right")]
    return float(lo_v + (h - lo_rank) * (hi_v - lo_v))


def reference_bootstrap(runs, resamples=2000, seed=20260101, level=0.95):
    import random

    import numpy as np

    from coaplab.analyse.stats import percentile

    per_rep = [v for v in (sorted(c["fct_s"] for c in r["clients"] if c.get("fct_s") is not None) for r in runs) if v]
    r = len(per_rep)
    pooled = sorted((v, i) for i, vs in enumerate(per_rep) for v in vs)
    values = np.array([v for v, _ in pooled])
    owner = np.array([i for _, i in pooled])
    sums = [sum(v) for v in per_rep]
    lens = [len(v) for v in per_rep]
    rng = random.Random(seed)
    boot_median, boot_mean = [], []
    for _ in range(resamples):
        counts = np.zeros(r, dtype=np.int64)
        for _ in range(r):
            counts[int(rng.random() * r)] += 1
        boot_median.append(_reference_weighted_median(values, owner, counts))
        boot_mean.append(sum(int(c) * s for c, s in zip(counts, sums)) / sum(int(c) * n for c, n in zip(counts, lens)))
    tail = (1 - level) / 2
    boot_median.sort()
    boot_mean.sort()
    return {"median": {"estimate": percentile([v for v, _ in pooled], 0.5), "low": percentile(boot_median, tail),
                       "high": percentile(boot_median, 1 - tail)},
            "mean": {"estimate": sum(sums) / sum(lens), "low": percentile(boot_mean, tail),
                     "high": percentile(boot_mean, 1 - tail)}}


def random_study(rng, r, clients):
    """r replications of `clients` clients: FCTs of very different magnitudes (so that sums
    round), repeated values (ties within and across replications) and clients without an FCT."""
    pick = [0.5, 1.0, 1.0, 2.25, 1e-3, 3e4, 7.0]
    out = []
    for _ in range(r):
        n = rng.randint(0, clients) if clients > 1 else 1
        fcts = [rng.choice(pick) if rng.random() < 0.2 else rng.lognormvariate(0, 2) for _ in range(n)]
        fcts += [None] * rng.randint(0, 2)
        out.append(fcts)
    return runs(*out)


@pytest.mark.parametrize("seed", range(12))
def test_bootstrap_equals_the_first_loop_bit_for_bit(seed, path):
    import random

    rng = random.Random(seed)
    data = random_study(rng, rng.randint(2, 25), rng.choice([1, 2, 5, 40, 300]))
    resamples = rng.choice([1, 7, 400])
    got = replication_stats(data, resamples=resamples, seed=seed)
    if got["replications"] < 2:
        pytest.skip("fewer than two replications with an FCT")
    want = reference_bootstrap(data, resamples=resamples, seed=seed)
    for k in ("median", "mean"):
        assert got[k] == want[k]  # ==, not approx: the same floats


@pytest.mark.parametrize("seed", range(4))
def test_blocked_median_search_equals_the_first_loop(seed, monkeypatch):
    # A small table limit makes the median search table every k-th position only and walk
    # the k values of the block (the path for very large pools).
    import random

    from coaplab.analyse import replstats

    monkeypatch.setattr(replstats, "PREFIX_ENTRIES", 17)
    monkeypatch.setattr(replstats, "_small_without_numpy", lambda *_: False)
    rng = random.Random(100 + seed)
    data = random_study(rng, rng.randint(2, 12), 60)
    got = replication_stats(data, resamples=300, seed=seed)
    want = reference_bootstrap(data, resamples=300, seed=seed)
    assert (got["median"], got["mean"]) == (want["median"], want["mean"])


@pytest.mark.parametrize("window", [1, 2])
def test_upper_middle_search_equals_the_first_loop(window, monkeypatch):
    # With a window of one or two values, the upper middle value of many resamples whose lower
    # middle value was its last copy is searched instead of found just after it.
    import random

    from coaplab.analyse import replstats

    monkeypatch.setattr(replstats, "NEXT_WINDOW", window)
    monkeypatch.setattr(replstats, "_small_without_numpy", lambda *_: False)
    rng = random.Random(200 + window)
    data = random_study(rng, 9, 40)
    got = replication_stats(data, resamples=500, seed=window)
    want = reference_bootstrap(data, resamples=500, seed=window)
    assert (got["median"], got["mean"]) == (want["median"], want["mean"])


def test_resample_counts_are_the_python_draws():
    # The picks of random.Random(seed), r per resample, counted per replication.
    import random

    from coaplab.analyse.replstats import resample_counts

    for seed, r in ((20260101, 20), (7, 3), (2**40 + 5, 11)):
        rng = random.Random(seed)
        want = [[0] * r for _ in range(50)]
        for b in range(50):
            for _ in range(r):
                want[b][int(rng.random() * r)] += 1
        assert resample_counts(seed, 50, r).tolist() == want


def test_row_sums_are_pythons_sum():
    # Magnitudes 1e-8 … 1e16 make every addition round; the rows must equal sum() exactly,
    # on whichever interpreter runs (sum() compensates from Python 3.12 on).
    import random

    import numpy as np

    from coaplab.analyse.replstats import _row_sums

    rng = random.Random(3)
    rows = [[rng.choice([1.0, -1.0]) * 10 ** rng.uniform(-8, 16) for _ in range(rng.randint(1, 30))] for _ in range(300)]
    rows += [[1e16, 1.0, -1e16], [0.1] * 10, [1e100, 1.0, -1e100, 3.0]]
    for row in rows:
        assert _row_sums(np.array([row]))[0] == sum(row)


def test_another_client_value(path):
    # key= resamples another per-client field exactly as the FCT: the same data under another
    # name gives the same statistics.
    data = [{"clients": [{"fct_s": None, "rtt_s": v} for v in vs]} for vs in ([1.0, 5.0], [2.0, 8.0], [3.0])]
    as_fct = runs([1.0, 5.0], [2.0, 8.0], [3.0])
    assert replication_stats(data, key="rtt_s") == replication_stats(as_fct)
    assert replication_stats(data)["replications"] == 0


def test_too_few_replications():
    one = replication_stats(runs([1.0, 3.0]))
    assert one["median"] == {"estimate": 2.0, "low": None, "high": None}
    assert one["median_spread"]["std"] is None
    none = replication_stats(runs([]))
    assert none["replications"] == 0 and none["median"]["estimate"] is None
    # Clients without an FCT (no exchange completed) are left out.
    s = replication_stats([{"clients": [{"fct_s": None}, {"fct_s": 2.0}]}])
    assert s["median_per_replication"] == [2.0]


def test_a_process_loads_numpy_once_the_loop_has_cost_as_much():
    """The plain loop while numpy is not loaded, until the loops have taken LOOP_BUDGET steps in
    all; then numpy, with the same numbers. A fresh interpreter, so numpy is not loaded yet."""
    import subprocess
    import sys

    # Ten one-value replications: 2000 × (10 + 10) = 40 000 steps a call; 11 calls take
    # 440 000 ≤ 450 000 steps, the 12th would take 480 000 > 450 000: numpy from the 12th on.
    script = """
import json, sys
from coaplab.analyse.replstats import replication_stats, LOOP_BUDGET
assert LOOP_BUDGET == 450_000
runs = [{"clients": [{"fct_s": 0.5 + (7 * i % 10) / 4}]} for i in range(10)]
out = []
for call in range(13):
    s = replication_stats(runs)
    out.append(("numpy" in sys.modules, s["median"], s["mean"]))
print(json.dumps(out))
"""
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    import json

    calls = json.loads(got.stdout)
    assert [loaded for loaded, _, _ in calls] == [False] * 11 + [True] * 2
    assert all(c[1:] == calls[0][1:] for c in calls)  # the loop, warm or not, and numpy agree
