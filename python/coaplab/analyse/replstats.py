"""Statistics across replications: how much a configuration's result moves from one replication
to the next, and how sure its pooled FCT median and mean are.

- the spread: each replication's median FCT (over its clients), with their minimum, maximum,
  mean and sample standard deviation;
- a 95 % bootstrap confidence interval of the pooled median and of the pooled mean FCT (the
  statistics the summaries report). Replications, not clients, are resampled (a cluster
  bootstrap: clients of one replication share its queue and its losses, so they are not
  independent; replications are, having independent random streams). Each of ``resamples``
  draws picks R replications with replacement, pools their clients' FCTs and computes the
  median (linear interpolation, as :func:`coaplab.analyse.stats.percentile`) and the mean; the interval
  is the 2.5th–97.5th percentile of those (Efron & Tibshirani, *An Introduction to the
  Bootstrap*, 1993, ch. 13, percentile interval).

The draws are those of Python's ``random.Random(seed).random()``, whose sequence Python keeps the
same across versions, so the intervals are deterministic and portable: resample b picks
replication ``int(u * R)`` for its R draws u, taken in order.

All resamples are computed at once with numpy, and give the numbers, to the last bit, of the
plain loop this module first had (one resample at a time, Python's ``sum``; the test suite
keeps that loop as the reference, ``tests/test_replstats.py``):

- the draws: Python's generator is the Mersenne Twister MT19937 and ``random()`` its
  ``genrand_res53`` (CPython ``Modules/_randommodule.c``, ``_random_Random_random_impl``); numpy's
  legacy ``RandomState.random_sample`` draws the same doubles the same way (numpy
  ``random/src/mt19937/mt19937.h``, ``mt19937_next_double``) once given Python's state
  (``Random.getstate``), and NEP 19 freezes that stream. The draws depend only on the seed, so
  the matrix of picks is made once per (seed, resamples, R) and reused;
- the medians: a binary search per resample for the pooled element of each middle rank, using
  the resample's cumulative weights at any position (its pick counts times the number of each
  replication's values up to there) instead of building the cumulative sum over every value;
- the means: the same products summed term by term in the same order, as ``sum`` does (since
  Python 3.12 ``sum`` of floats compensates rounding, Neumaier's algorithm; it is replicated
  for the interpreter that runs).
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import random
import sys
from typing import Any

from .quantile import percentile

#: Bootstrap resamples and seed (fixed: the interval is part of a reproducible summary).
RESAMPLES = 2000
SEED = 20260101
LEVEL = 0.95

#: At most this many entries (positions × replications) in the table of cumulative counts per
#: replication that the median search reads; beyond it, only every k-th position is tabled and
#: the last step sums the weights of up to k values per resample (bounds memory for very large
#: pools: 2^20 int64 entries = 8 MB).
PREFIX_ENTRIES = 1 << 20


#: How many positions past the lower middle value the median looks for the upper one before
#: searching (:func:`_weighted_medians`).
NEXT_WINDOW = 8


def _client_values(run: dict[str, Any], key: str) -> list[float]:
    """The clients' ``key`` values of one run, sorted; clients without one are left out."""
    values = [v for c in run["clients"] if (v := c.get(key)) is not None]
    values.sort()
    return values


@functools.lru_cache(maxsize=8)
def resample_counts(seed: int, resamples: int, r: int):
    """counts[b, j]: how many times resample b picks replication j — the picks
    ``int(random.Random(seed).random() * r)``, r per resample, in order. Read-only (cached)."""
    import numpy as np  # lazy: small pools need no numpy (start-up)

    state = random.Random(seed).getstate()[1]  # 624 words of MT19937 state, then the position
    mt = np.random.RandomState()
    # has_gauss = 0, cached_gaussian = 0.0: what numpy assumes for a 3-tuple, spelled out.
    mt.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), state[-1], 0, 0.0))
    picks = (mt.random_sample(resamples * r) * r).astype(np.int64)  # int() truncates likewise
    rows = np.repeat(np.arange(resamples, dtype=np.int64), r)
    counts = np.bincount(rows * r + picks, minlength=resamples * r).reshape(resamples, r)
    counts.setflags(write=False)
    return counts


def _cumulative_table(owner, r: int, step: int, dtype):
    """``table[q, j]``: how many of replication j's values lie at pooled positions
    0 … (q + 1)·step − 1 (the last row: up to the end)."""
    import numpy as np  # lazy: small pools need no numpy (start-up)

    block = np.arange(len(owner)) // step
    table = np.bincount(block * r + owner, minlength=(int(block[-1]) + 1) * r).reshape(-1, r).astype(dtype)
    return np.cumsum(table, axis=0, out=table)


def _first_above(table, owner, counts, ranks, step: int):
    """For each row b of ``counts``: the position in the pooled sorted values of the element of
    rank ``ranks[b]`` (0-based) in the multiset where value i appears ``counts[b, owner[i]]``
    times — the first position whose cumulative count exceeds the rank — and the cumulative
    count there.

    A row's cumulative count at the end of block q is ``counts[b] · table[q]``
    (:func:`_cumulative_table`), which never decreases with q (counts are >= 0), so a binary
    search over the blocks finds the block; with ``step`` > 1, the weights of the block's
    values, one after the other, then find the position."""
    import numpy as np  # lazy: small pools need no numpy (start-up)

    b, m, q_max = len(ranks), len(owner), len(table) - 1
    # Binary lifting: q = how many blocks end with a cumulative count <= the rank.
    q = np.zeros(b, dtype=np.int64)
    bit = 1 << q_max.bit_length()
    while bit:
        cand = np.minimum(q + bit, q_max + 1)
        below = np.einsum("ij,ij->i", counts, table[cand - 1]) <= ranks
        q = np.where(below, cand, q)
        bit >>= 1
    if step == 1:
        return q, np.einsum("ij,ij->i", counts, table[q])
    start = q * step
    base = np.where(q > 0, np.einsum("ij,ij->i", counts, table[np.maximum(q - 1, 0)]), 0)
    offsets = start[:, None] + np.arange(step)
    weights = np.where(offsets < m, np.take_along_axis(counts, owner[np.minimum(offsets, m - 1)], axis=1), 0)
    cum = base[:, None] + np.cumsum(weights, axis=1)
    within = np.argmax(cum > ranks[:, None], axis=1)
    return start + within, cum[np.arange(b), within]


def _weighted_medians(values, owner, counts):
    """The median (linear interpolation between closest ranks, as
    :func:`coaplab.analyse.stats.percentile`) of each resample b's multiset, in which the sorted
    ``values[i]`` appears ``counts[b, owner[i]]`` times; one float64 per resample."""
    import numpy as np  # lazy: small pools need no numpy (start-up)

    r = counts.shape[1]
    m = len(owner)
    n = counts @ np.bincount(owner, minlength=r)
    h = (n - 1) * 0.5
    lo_rank = np.floor(h).astype(np.int64)
    hi_rank = np.minimum(lo_rank + 1, n - 1)
    # 32-bit counts halve the memory the search reads; they hold any cumulative count < 2^31.
    dtype = np.int32 if int(n.max()) < 2**31 else np.int64
    step = max(1, -(-m * r // PREFIX_ENTRIES))
    table = _cumulative_table(owner, r, step, dtype)
    cnt = counts.astype(dtype)
    lo_pos, cum = _first_above(table, owner, cnt, lo_rank, step)
    # The element of rank lo + 1 is the same value unless rank lo is its last copy; then it is
    # the next value the resample picked, mostly within a few positions (a value is skipped
    # only if its replication was not picked: probability (1 − 1/R)^R ≤ 0.37); the rest search.
    hi_pos = lo_pos.copy()
    again = np.flatnonzero(cum <= hi_rank)
    if len(again):
        ahead = lo_pos[again, None] + np.arange(1, NEXT_WINDOW + 1)
        picked = (ahead < m) & (np.take_along_axis(cnt[again], owner[np.minimum(ahead, m - 1)], axis=1) > 0)
        found = picked.any(axis=1)
        hi_pos[again[found]] = ahead[found, np.argmax(picked[found], axis=1)]
        rest = again[~found]
        if len(rest):
            hi_pos[rest] = _first_above(table, owner, cnt[rest], hi_rank[rest], step)[0]
    lo_v, hi_v = values[lo_pos], values[hi_pos]
    return lo_v + (h - lo_rank) * (hi_v - lo_v)


def _row_sums(terms):
    """Each row of ``terms`` summed as Python's built-in ``sum`` sums a sequence of floats
    (starting from the integer 0): left to right, and from Python 3.12 on with Neumaier's
    compensation (CPython ``Python/bltinmodule.c``, ``builtin_sum_impl``)."""
    import numpy as np  # lazy: small pools need no numpy (start-up)

    total = 0 + terms[:, 0]
    if sys.version_info < (3, 12):
        for j in range(1, terms.shape[1]):
            total = total + terms[:, j]
        return total
    comp = np.zeros_like(total)
    for j in range(1, terms.shape[1]):
        x = terms[:, j]
        t = total + x
        comp = comp + np.where(np.abs(total) >= np.abs(x), (total - t) + x, (x - t) + total)
        total = t
    return np.where((comp != 0) & np.isfinite(comp), total + comp, total)


def replication_stats(runs: list[dict[str, Any]], resamples: int = RESAMPLES, seed: int = SEED,
                      level: float = LEVEL, key: str = "fct_s") -> dict[str, Any]:
    """The spread of FCT across replications and bootstrap intervals of the pooled median and
    mean FCT, for one configuration's runs (each a per-replication result with ``clients``).
    ``key`` names another per-client value to treat the same way (the FCT by default).

    Returns ``{"replications", "median_per_replication", "median_spread": {min, max, mean,
    std}, "median": {estimate, low, high}, "mean": {estimate, low, high}, "level",
    "resamples", "seed"}``; intervals are ``None`` with fewer than two replications that
    completed exchanges (nothing to resample), the spread's ``std`` likewise."""
    per_rep = [_client_values(r, key) for r in runs]
    per_rep = [v for v in per_rep if v]
    medians = [percentile(v, 0.5) for v in per_rep]
    r = len(per_rep)
    out: dict[str, Any] = {"replications": r, "median_per_replication": medians, "level": level,
                           "resamples": resamples, "seed": seed}
    if r == 0:
        out["median_spread"] = {"min": None, "max": None, "mean": None, "std": None}
        out["median"] = out["mean"] = {"estimate": None, "low": None, "high": None}
        return out
    mean_m = sum(medians) / r
    std = math.sqrt(sum((m - mean_m) ** 2 for m in medians) / (r - 1)) if r > 1 else None
    out["median_spread"] = {"min": min(medians), "max": max(medians), "mean": mean_m, "std": std}
    sums = [sum(v) for v in per_rep]
    lens = [len(v) for v in per_rep]
    m = sum(lens)
    est_mean = sum(sums) / m
    tail = (1 - level) / 2
    if r < 2 or _small_without_numpy(resamples, r, m):
        # Every value with its replication, in (value, replication) order.
        pooled = sorted((x, i) for i, v in enumerate(per_rep) for x in v)
        out["median"] = {"estimate": percentile([x for x, _ in pooled], 0.5), "low": None, "high": None}
        out["mean"] = {"estimate": est_mean, "low": None, "high": None}
        if r < 2:
            return out
        boot_median, boot_mean = _bootstrap_loop(pooled, sums, lens, resamples, seed)
    else:
        import numpy as np  # lazy: small pools need no numpy (start-up)

        # Every value with its replication, in (value, replication) order: sorting the pairs.
        unsorted = np.fromiter(itertools.chain.from_iterable(per_rep), dtype=np.float64, count=m)
        owners = np.repeat(np.arange(r, dtype=np.int64), lens)
        order = np.lexsort((owners, unsorted))
        values, owner = unsorted[order], owners[order]
        out["median"] = {"estimate": float(percentile(values, 0.5))}
        out["mean"] = {"estimate": est_mean}
        counts = resample_counts(seed, resamples, r)
        # Σ count·sum over Σ count·len per resample; int × float is the float product, and the
        # integer denominators are exact.
        boot_mean = _row_sums(counts * np.array(sums, dtype=np.float64)) / (counts @ np.array(lens, dtype=np.int64))
        boot_median = np.sort(_weighted_medians(values, owner, counts), kind="stable").tolist()
        boot_mean = np.sort(boot_mean, kind="stable").tolist()
    for stat, boot in (("median", boot_median), ("mean", boot_mean)):
        out[stat].update(low=percentile(boot, tail), high=percentile(boot, 1 - tail))
    return out


#: The most resamples × (replications + values) that :func:`_bootstrap_loop` takes on when numpy
#: is not loaded yet. The loop does ≈ 6 M of those steps per CPU-second (2000 resamples of 10
#: one-client replications: 6.4 ms), so at most ≈ 17 ms, while importing numpy costs ≈ 75 ms:
#: the first `coaplab.run` of one TCP firmware client × 10 replications in a fresh process took
#: 0.106 s of CPU through numpy and 0.030 s through the loop (docs/performance.md, "Start-up").
LOOP_STEPS = 100_000
#: The loop's steps a process takes in all before it imports numpy instead: about what the
#: import costs (≈ 75 ms at ≈ 6 M steps per CPU-second). The rule of renting skis until their
#: price is paid: a script that calls `coaplab.run` once never loads numpy, one that calls it
#: many times (a warm loop, `coaplab advise`, the ns-3 comparison) stops paying ≈ 7 ms per call
#: after the first few, and neither pays more than twice the better choice made in hindsight
#: (Karlin et al., "Competitive snoopy caching", Algorithmica 1988). Both paths give the same
#: numbers to the last bit (tests/test_replstats.py).
LOOP_BUDGET = 450_000
_loop_spent = 0


def _small_without_numpy(resamples: int, r: int, m: int) -> bool:
    """Whether to resample in plain Python: numpy is not loaded yet (importing it is most of
    a small run's start-up), the loop costs less than the import, and the loops this process
    already ran have not cost as much as the import (:data:`LOOP_BUDGET`). Both ways give the
    same numbers (tests/test_replstats.py)."""
    global _loop_spent
    steps = resamples * (r + m)
    if "numpy" in sys.modules or steps > LOOP_STEPS or _loop_spent + steps > LOOP_BUDGET:
        return False
    _loop_spent += steps
    return True


@functools.lru_cache(maxsize=8)
def _loop_counts(seed: int, resamples: int, r: int) -> tuple[tuple[int, ...], ...]:
    """The plain loop's :func:`resample_counts`: per resample, how many times it picks each
    replication. The draws depend only on the seed, so they are made once per (seed,
    resamples, R) and reused, as the vectorised path does (a warm process's next summary of R
    replications skips 2000 × R draws of Python's generator)."""
    draw = random.Random(seed).random
    rows = []
    for _ in range(resamples):
        counts = [0] * r
        for _ in range(r):
            counts[int(draw() * r)] += 1
        rows.append(tuple(counts))
    return tuple(rows)


def _bootstrap_loop(pooled, sums, lens, resamples: int, seed: int) -> tuple[list[float], list[float]]:
    """The bootstrap medians and means, sorted, one resample at a time in plain Python: the
    same draws, and each resample's median found by walking the pooled (value, replication)
    pairs with the resample's counts; the same arithmetic as the vectorised path."""
    r = len(sums)
    values = [x for x, _ in pooled]
    owner = [i for _, i in pooled]
    mul = operator.mul
    boot_median, boot_mean = [], []
    for counts in _loop_counts(seed, resamples, r):
        n = sum(map(mul, counts, lens))
        h = (n - 1) * 0.5
        lo_rank = math.floor(h)
        hi_rank = min(lo_rank + 1, n - 1)
        cum = 0
        for k, i in enumerate(owner):  # the first position whose cumulative count exceeds lo_rank
            cum += counts[i]
            if cum > lo_rank:
                break
        lo_v = values[k]
        while cum <= hi_rank:  # rank lo was that value's last copy: on to the next one picked
            k += 1
            cum += counts[owner[k]]
        boot_median.append(lo_v + (h - lo_rank) * (values[k] - lo_v))
        # int × float in the order of the first loop (`sum(int(c) * s for …)`), summed by sum().
        boot_mean.append(sum(map(mul, counts, sums)) / n)
    boot_median.sort()
    boot_mean.sort()
    return boot_median, boot_mean
