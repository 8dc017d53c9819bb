"""The :class:`Result` a notebook holds (``coaplab.run``, ``coaplab.Result``): what a scenario run
produced (:class:`coaplab.execute.runner.RunResult`, its summaries, runs and tables) with its
figures and pairwise differences, which the run layer below does not draw."""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..execute import runner
from ..execute.runner import RunResult

if TYPE_CHECKING:  # figures loads matplotlib: imported where a figure is drawn
    from .figures import Figure


@dataclass
class Result(RunResult):
    """What a scenario run produced: one summary per configuration, plus the raw runs, as
    tables (pandas) and as figures."""

    @classmethod
    def of(cls, result: RunResult) -> Result:
        """The same run, with its figures."""
        return cls(**{f.name: getattr(result, f.name) for f in fields(RunResult)})

    def differences(self, key: str) -> list[dict[str, Any]]:
        """Pairwise differences between this result's configurations that differ only in
        ``key`` (a dotted key such as ``coap.cc``): median FCT, unnecessary retransmissions per
        client and throughput, each with a 95 % bootstrap interval over replications and a
        Mann–Whitney U test (:func:`coaplab.present.compare.pairwise`; ``coaplab run --diff-by KEY``)."""
        from .compare import pairwise  # lazy: numpy (start-up)

        configs = {s["config_id"]: s["config"] for s in self.summaries if self.runs.get(s["config_id"])}
        return [{"name": configs[r["config_id_first"]]["name"], **r}
                for name in dict.fromkeys(c["name"] for c in configs.values())
                for r in pairwise({cid: c for cid, c in configs.items() if c["name"] == name}, self.runs, key)]

    # The figures (coaplab.present.figures, .traces) of this result, for notebooks: each imports
    # them, and so matplotlib, when called — `coaplab run` never loads it (tests/test_tidy.py::test_light_imports).

    def plot_fct(self, x: str | None = None, hue: str | None = None, col: str | None = None,
                 width: str | float = "two") -> Figure:
        """FCT box plots (:func:`coaplab.present.figures.fct_boxes` of :attr:`summaries`)."""
        from . import figures  # lazy: matplotlib (start-up)

        return figures.fct_boxes(self.summaries, x=x, hue=hue, col=col, width=width)

    def plot_unnecessary(self, x: str | None = None, hue: str | None = None, col: str | None = None,
                         width: str | float = "two") -> Figure:
        """Unnecessary retransmissions per client (:func:`coaplab.present.figures.unnecessary_boxes`)."""
        from . import figures  # lazy: matplotlib (start-up)

        return figures.unnecessary_boxes(self.summaries, x=x, hue=hue, col=col, width=width)

    def plot_histogram(self, x: str | None = None, hue: str | None = None, col: str | None = None,
                       width: str | float = "two") -> Figure:
        """Exchanges by retransmissions (:func:`coaplab.present.figures.retransmission_histogram`)."""
        from . import figures  # lazy: matplotlib (start-up)

        return figures.retransmission_histogram(self.summaries, x=x, hue=hue, col=col, width=width)

    def plot_time_sequence(self, config_id: str | None = None, replication: int = 0, connection: int = 0,
                           direction: str = "down", width: str | float = "two") -> Figure:
        """One TCP connection's time-sequence graph (:func:`coaplab.present.traces.result_time_sequence`)."""
        from . import traces  # lazy: matplotlib (start-up)

        return traces.result_time_sequence(self, config_id, replication, connection, direction, width)

    def plot_rto(self, config_id: str | None = None, replication: int = 0, client: int = 0,
                 width: str | float = "two") -> Figure:
        """One client's timer and RTO over time (:func:`coaplab.present.traces.result_rto_trace`)."""
        from . import traces  # lazy: matplotlib (start-up)

        return traces.result_rto_trace(self, config_id, replication, client, width)

    def plot_queue(self, config_id: str | None = None, replication: int = 0, width: str | float = "two") -> Figure:
        """One traced run's buffer occupancy over time (:func:`coaplab.present.traces.result_queue_occupancy`)."""
        from . import traces  # lazy: matplotlib (start-up)

        return traces.result_queue_occupancy(self, config_id, replication, width)

    def plot_throughput(self, config_id: str | None = None, replication: int = 0, width: str | float = "two") -> Figure:
        """One traced run's throughput per direction (:func:`coaplab.present.traces.result_throughput_series`)."""
        from . import traces  # lazy: matplotlib (start-up)

        return traces.result_throughput_series(self, config_id, replication, width)


@functools.wraps(runner.run_scenario, assigned=("__doc__",))
def run_scenario(*args: Any, **kwargs: Any) -> Result:
    return Result.of(runner.run_scenario(*args, **kwargs))
