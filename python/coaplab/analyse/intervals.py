"""Bootstrap intervals over replications for the statistics `coaplab reproduce` sets beside a
published figure: any percentile of the FCT pooled over clients and replications, and a ratio
of per-replication sums (the CoCoA study's mean RTT and mean initial RTO, Σ sums / Σ counts).

The resampling is that of :mod:`coaplab.analyse.replstats` (replications are the unit; the same
draws, :func:`coaplab.analyse.replstats.resample_counts`; the 2.5th–97.5th percentile of the
resampled statistic), so the median's interval here is the one `coaplab report` prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .quantile import percentile
from .replstats import LEVEL, RESAMPLES, SEED, resample_counts


def percentile_intervals(runs: Sequence[dict[str, Any]], levels: Mapping[str, float], key: str = "fct_s",
                         resamples: int = RESAMPLES, seed: int = SEED,
                         level: float = LEVEL) -> dict[str, tuple[float, float] | None]:
    """``{name: (low, high)}`` for each ``levels`` entry (name → quantile in [0, 1]) of the
    clients' ``key`` values pooled over the runs; None with fewer than two runs with values."""
    import numpy as np  # lazy: start-up

    per_rep = [np.sort(np.array([v for c in r["clients"] if (v := c.get(key)) is not None], dtype=np.float64))
               for r in runs]
    per_rep = [v for v in per_rep if len(v)]
    if len(per_rep) < 2:
        return {name: None for name in levels}
    counts = resample_counts(seed, resamples, len(per_rep))
    boot: dict[str, list[float]] = {name: [] for name in levels}
    for row in counts:
        pooled = np.sort(np.concatenate([np.repeat(v, int(c)) for v, c in zip(per_rep, row) if c]))
        for name, q in levels.items():
            boot[name].append(percentile(pooled, q))
    tail = (1 - level) / 2
    out: dict[str, tuple[float, float] | None] = {}
    for name, values in boot.items():
        values.sort()
        out[name] = (percentile(values, tail), percentile(values, 1 - tail))
    return out


def ratio_interval(runs: Sequence[dict[str, Any]], num: str, den: str, resamples: int = RESAMPLES,
                   seed: int = SEED, level: float = LEVEL) -> tuple[float, float] | None:
    """The interval of Σ ``num`` / Σ ``den`` over the runs (each run's own sums); None with fewer
    than two runs that have them."""
    import numpy as np  # lazy: start-up

    have = [r for r in runs if r.get(den)]
    if len(have) < 2:
        return None
    counts = resample_counts(seed, resamples, len(have))
    nums = counts @ np.array([float(r[num]) for r in have])
    dens = counts @ np.array([float(r[den]) for r in have])
    ratios = sorted(float(n / d) for n, d in zip(nums, dens) if d)
    if not ratios:
        return None
    tail = (1 - level) / 2
    return percentile(ratios, tail), percentile(ratios, 1 - tail)


def ratio_of_means_interval(num: Sequence[float], den: Sequence[float], resamples: int = RESAMPLES,
                            seed: int = SEED, level: float = LEVEL) -> tuple[float, float] | None:
    """The interval of mean(``num``) / mean(``den``) for two independent sets of per-replication
    values (two configurations), each resampled on its own; None with fewer than two values in
    either or a zero mean in a resample's denominator."""
    import numpy as np  # lazy: start-up

    if len(num) < 2 or len(den) < 2:
        return None
    rng = np.random.default_rng(seed)
    a, b = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    ma = a[rng.integers(0, len(a), size=(resamples, len(a)))].mean(axis=1)
    mb = b[rng.integers(0, len(b), size=(resamples, len(b)))].mean(axis=1)
    if (mb <= 0).any():
        return None
    r = ma / mb
    tail = (1 - level) / 2 * 100
    return float(np.percentile(r, tail)), float(np.percentile(r, 100 - tail))
