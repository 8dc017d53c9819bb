"""Statistics across replications: how much a configuration's result moves from one replication
to the next, and how sure its pooled FCT median and mean are.

- the spread: each replication's median FCT (over its clients), with their minimum, maximum,
  mean and sample standard deviation;
- a 95 % bootstrap confidence interval of the pooled median and of the pooled mean FCT (the
  statistics the summaries report). Replications, not clients, are resampled (a cluster
  bootstrap: clients of one replication share its queue and its losses, so they are not
  independent; replications are, having independent random streams). Each of ``resamples``
  draws picks R replications with replacement, pools their clients' FCTs and computes the
  median (linear interpolation, as :func:`coaplab.stats.percentile`) and the mean; the interval
  is the 2.5th–97.5th percentile of those (Efron & Tibshirani, *An Introduction to the
  Bootstrap*, 1993, ch. 13, percentile interval).

The draws come from Python's ``random.Random(seed).random()``, whose sequence Python keeps the
same across versions, so the intervals are deterministic and portable.
"""

from __future__ import annotations

import math
import random
from typing import Any, Sequence

from .stats import percentile

#: Bootstrap resamples and seed (fixed: the interval is part of a reproducible summary).
RESAMPLES = 2000
SEED = 20260101
LEVEL = 0.95


def _fcts(run: dict[str, Any]) -> list[float]:
    return sorted(c["fct_s"] for c in run["clients"] if c.get("fct_s") is not None)


def _weighted_median(values, owner, counts) -> float:
    """Median (linear interpolation between closest ranks) of the multiset in which the sorted
    ``values[i]`` (a numpy array) appears ``counts[owner[i]]`` times."""
    import numpy as np

    cum = np.cumsum(counts[owner])
    n = int(cum[-1])
    h = (n - 1) * 0.5
    lo_rank = math.floor(h)
    hi_rank = min(lo_rank + 1, n - 1)
    # The element of rank k (0-based) is the first whose cumulative count exceeds k.
    lo_v, hi_v = values[np.searchsorted(cum, [lo_rank, hi_rank], side="right")]
    return float(lo_v + (h - lo_rank) * (hi_v - lo_v))


def replication_stats(runs: list[dict[str, Any]], resamples: int = RESAMPLES, seed: int = SEED,
                      level: float = LEVEL) -> dict[str, Any]:
    """The spread of FCT across replications and bootstrap intervals of the pooled median and
    mean FCT, for one configuration's runs (each a per-replication result with ``clients``).

    Returns ``{"replications", "median_per_replication", "median_spread": {min, max, mean,
    std}, "median": {estimate, low, high}, "mean": {estimate, low, high}, "level",
    "resamples", "seed"}``; intervals are ``None`` with fewer than two replications that
    completed exchanges (nothing to resample), the spread's ``std`` likewise."""
    per_rep = [_fcts(r) for r in runs]
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
    pooled = sorted((v, i) for i, vs in enumerate(per_rep) for v in vs)
    import numpy as np

    values = np.array([v for v, _ in pooled])
    owner = np.array([i for _, i in pooled])
    sums = [sum(v) for v in per_rep]
    lens = [len(v) for v in per_rep]
    est_median = percentile([v for v, _ in pooled], 0.5)
    est_mean = sum(sums) / sum(lens)
    if r < 2:
        out["median"] = {"estimate": est_median, "low": None, "high": None}
        out["mean"] = {"estimate": est_mean, "low": None, "high": None}
        return out
    rng = random.Random(seed)
    boot_median, boot_mean = [], []
    for _ in range(resamples):
        counts = np.zeros(r, dtype=np.int64)
        for _ in range(r):
            counts[int(rng.random() * r)] += 1
        boot_median.append(_weighted_median(values, owner, counts))
        boot_mean.append(sum(int(c) * s for c, s in zip(counts, sums)) / sum(int(c) * n for c, n in zip(counts, lens)))
    tail = (1 - level) / 2
    boot_median.sort()
    boot_mean.sort()
    out["median"] = {"estimate": est_median, "low": percentile(boot_median, tail), "high": percentile(boot_median, 1 - tail)}
    out["mean"] = {"estimate": est_mean, "low": percentile(boot_mean, tail), "high": percentile(boot_mean, 1 - tail)}
    return out
