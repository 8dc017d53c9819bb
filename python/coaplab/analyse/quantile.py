"""The one percentile rule of every statistic here (pooled summaries, replication intervals,
comparisons), apart from :mod:`.stats` so that :mod:`.replstats` can use it without importing
the summaries that use :mod:`.replstats`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy arrays are accepted, but this module must not load numpy (start-up)
    import numpy as np


def percentile(sorted_values: Sequence[float] | np.ndarray, q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default "linear" method):
    position h = (n − 1)·q, value = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("percentile of an empty list")
    h = (n - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])
