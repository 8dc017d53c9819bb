"""The metrics that ``coaplab compare`` (and ``coaplab report --db A --db B``, ``--diff-by``)
shows differences of, declared once each (docs/experiments.md "Differences"): its key, its
label, how it is computed from each replication's result, its unit and which direction is
better. :mod:`coaplab.present.compare` bootstraps and rank-tests whatever is listed here.

**Kinds** (how a configuration's statistic comes from its per-replication results):

- ``client``: the median of a client-row field pooled over the clients of all replications
  (``fct_s.p50`` of the summary);
- ``values``: the median of a per-replication list (a dotted path into the run, e.g.
  ``qblock.transfer_time_s``) pooled over all replications;
- ``values_mean``: the mean of such a list over all its elements of all replications
  (Σ elements / their count — the summary's ``mean`` of the pooled values);
- ``run``: the mean over replications of a per-replication scalar (a counter is thus shown
  per replication: the summary's sum over replications divided by their number);
- ``ratio``: Σ numerator / Σ denominator over replications.

A metric is shown for a pair of configurations only when both have data for it, so the
workload metrics (Observe, LwM2M, Q-Block) appear only for studies of that workload.

**Order matters.** Each metric's bootstrap stream is seeded with its index in :data:`METRICS`
(:meth:`coaplab.present.compare.Sample.boot`): new metrics go at the end, so that the intervals
of the earlier ones never move.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..analyse.observe import OBSERVE_RATIOS
from ..analyse.quantile import percentile
from ..analyse.stats import run_field


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    #: ``client``, ``values``, ``values_mean``, ``run`` or ``ratio`` (the module doc).
    kind: str
    field: str
    den: str | None = None
    #: Whether the rank test over replications is reported for it.
    ranked: bool = False
    #: The unit of the statistic ("" for a count or a ratio).
    unit: str = ""
    #: True when a larger value is better, False when a smaller one is.
    larger_is_better: bool = False
    #: Which workload reports it (None: every workload).
    workload: str | None = None


METRICS = (
    Metric("fct_median_s", "median FCT (s)", "client", "fct_s", ranked=True, unit="s"),
    Metric("unnecessary_median", "median unnecessary retx per client", "client", "unnecessary_retransmissions",
           ranked=True),
    Metric("throughput_exchanges_per_s", "throughput (exch/s)", "run", "throughput_exchanges_per_s", ranked=True,
           unit="exchanges/s", larger_is_better=True),
    Metric("retransmission_ratio", "retransmission ratio", "ratio", "con_retransmissions", "con_transmissions"),
    Metric("mean_rtt_s", "mean RTT (s)", "ratio", "rtt_strong_sum_s", "rtt_strong_samples", unit="s"),
    # Then energy (docs/energy.md), observe (docs/model.md "Observe"): last, keeping earlier bootstrap streams.
    Metric("energy_j_per_exchange", "energy per exchange (J)", "ratio", "energy.energy_j", "energy.exchanges_completed",
           unit="J"),
    Metric("energy_mean_power_mw", "mean power per device (mW)", "run", "energy.mean_power_mw", unit="mW"),
    *(Metric(key, text, "ratio", num, den, unit="s" if key.endswith("_s") else "",
             larger_is_better=not key.endswith("_s"), workload="observe")
      for key, text, num, den in OBSERVE_RATIOS),
    # LwM2M devices (docs/model.md "LwM2M devices"): the summary's lwm2m_*_s means and the
    # failed registration updates (its lwm2m_updates_failed, per replication).
    Metric("lwm2m_register_mean_s", "LwM2M registration mean (s)", "values_mean", "lwm2m.register_s", unit="s",
           workload="lwm2m"),
    Metric("lwm2m_read_wait_mean_s", "LwM2M read wait mean (s)", "values_mean", "lwm2m.read_wait_s", unit="s",
           workload="lwm2m"),
    Metric("lwm2m_firmware_mean_s", "LwM2M firmware mean (s)", "values_mean", "lwm2m.firmware_s", unit="s",
           workload="lwm2m"),
    Metric("lwm2m_updates_failed", "LwM2M updates failed / repl.", "run", "lwm2m.updates_failed", workload="lwm2m"),
    # Q-Block transfers (docs/model.md "Q-Block"): the summary's qblock.transfer_time_s p50 and
    # mean, and its recovery_requests and blocks_recovered (per replication).
    Metric("qblock_transfer_p50_s", "Q-Block transfer p50 (s)", "values", "qblock.transfer_time_s", unit="s",
           workload="qblock"),
    Metric("qblock_transfer_mean_s", "Q-Block transfer mean (s)", "values_mean", "qblock.transfer_time_s", unit="s",
           workload="qblock"),
    Metric("qblock_recovery_requests", "Q-Block recovery requests / repl.", "run", "qblock.recovery_requests",
           workload="qblock"),
    Metric("qblock_blocks_recovered", "Q-Block blocks recovered / repl.", "run", "qblock.blocks_recovered",
           workload="qblock"),
)
METRIC_KEYS = tuple(m.key for m in METRICS)
BY_KEY = {m.key: m for m in METRICS}
#: The metrics of within-study differences (issue: FCT, unnecessary retransmissions, throughput).
PAIR_METRICS = METRIC_KEYS[:3]
#: The workload metrics, added to the within-study differences when the study has them.
WORKLOAD_METRICS = tuple(m.key for m in METRICS if m.workload is not None)
#: The columns of the two-study HTML table shown even when no configuration has them (as
#: before the workload metrics were added); the others only when a matched configuration has them.
ALWAYS_COLUMNS = METRIC_KEYS[:9]
#: How each kind's statistic is recomputed under resampling (:meth:`Sample._stat`).
SHAPE = {"client": "median", "values": "median", "run": "mean", "ratio": "ratio", "values_mean": "ratio"}


def _pooled(per: list[list[float]]) -> dict[str, Any] | None:
    """Per-replication sorted values (replications without any left out) as the pooled-median data."""
    per = [v for v in per if v]
    if not per:
        return None
    pooled = sorted((v, i) for i, vs in enumerate(per) for v in vs)
    return {"r": len(per), "values": np.array([v for v, _ in pooled]), "owner": np.array([i for _, i in pooled]),
            "per_replication": [percentile(v, 0.5) for v in per]}


def replication_data(metric: Metric, runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One configuration's per-replication data for ``metric`` (replications without data for
    it left out, as :mod:`coaplab.analyse.replstats` does for FCT); None when none has any."""
    if metric.kind == "client":
        return _pooled([sorted(float(c[metric.field]) for c in r["clients"] if c.get(metric.field) is not None)
                        for r in runs])
    if metric.kind == "values":
        return _pooled([sorted(float(x) for x in (run_field(r, metric.field) or [])) for r in runs])
    if metric.kind == "run":
        vals = [float(run_field(r, metric.field)) for r in runs if run_field(r, metric.field) is not None]
        return {"r": len(vals), "x": np.array(vals), "per_replication": vals} if vals else None
    if metric.kind == "values_mean":
        lists = [[float(x) for x in v] for r in runs if (v := run_field(r, metric.field))]
        if not lists:
            return None
        return {"r": len(lists), "num": np.array([sum(v) for v in lists]), "den": np.array([float(len(v)) for v in lists])}
    den = metric.den
    assert den is not None, metric.key  # a ratio
    have = [r for r in runs if run_field(r, metric.field) is not None and run_field(r, den) is not None]
    if not have or sum(run_field(r, den) for r in have) <= 0:
        return None
    return {"r": len(have), "num": np.array([float(run_field(r, metric.field)) for r in have]),
            "den": np.array([float(run_field(r, den)) for r in have])}
