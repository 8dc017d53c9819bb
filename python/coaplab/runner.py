"""Running scenarios: every configuration × replication, in parallel, with progress.

Each run is one call into the Rust engine (``coaplab._core.run_one``), which releases the GIL,
so a thread pool runs replications in parallel on all cores. Results are ordered by
(configuration, replication), never by completion, so the output is identical for any ``jobs``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import CoaplabError
from .scenario import Scenario, config_id, load_scenario
from .stats import summarize

RunFn = Callable[[str, int, "str | None"], str]


class RunError(CoaplabError):
    """The engine rejected a configuration or a run failed."""


@dataclass
class Result:
    """What a scenario run produced: one summary per configuration, plus the raw runs."""

    scenario: Scenario
    summaries: list[dict[str, Any]]
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def runs_frame(self):
        """One row per (configuration, replication) with the run-level metrics (pandas)."""
        import pandas as pd

        rows = []
        for cid, runs in self.runs.items():
            for r in runs:
                row = {"config_id": cid, **{k: v for k, v in r.items() if k not in ("clients", "packets", "traces", "retransmission_histogram", "server")}}
                row.update({f"packets_{k}": v for k, v in r["packets"].items()})
                rows.append(row)
        return pd.DataFrame(rows)

    def clients_frame(self):
        """One row per (configuration, replication, client) (pandas)."""
        import pandas as pd

        rows = [
            {"config_id": cid, "replication": r["replication"], **c}
            for cid, runs in self.runs.items()
            for r in runs
            for c in r["clients"]
        ]
        return pd.DataFrame(rows)


class Progress:
    """A rich progress bar on a terminal, plain periodic lines otherwise (both on stderr)."""

    def __init__(self, total: int, enabled: bool, label: str):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.enabled = enabled and total > 0
        self.label = label
        self._bar = None
        self._last_line = 0.0
        if self.enabled and sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeRemainingColumn

            self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(label, total=total)

    def advance(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, advance=1)
            return
        now = time.monotonic()
        # Quiet for short runs: the first line after 5 s, then every 5 s, and the last one.
        if now - max(self._last_line, self.start) >= 5.0 or (self.done == self.total and self._last_line):
            elapsed = now - self.start
            eta = elapsed / self.done * (self.total - self.done)
            print(f"{self.label}: {self.done}/{self.total} runs, {elapsed:.1f} s elapsed, ETA {eta:.0f} s", file=sys.stderr, flush=True)
            self._last_line = now

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _engine_run(config_json: str, replication: int, pcap: str | None) -> str:
    from . import _core

    try:
        return _core.run_one(config_json, replication, pcap)
    except ValueError as e:
        raise RunError(str(e)) from None


def run_scenario(
    scenario: Scenario | str | Path | dict[str, Any],
    jobs: int | None = None,
    progress: bool = False,
    pcap_dir: str | Path | None = None,
    trace: bool | None = None,
    runner: RunFn | None = None,
    trace_dir: str | Path | None = None,
) -> Result:
    """Runs every configuration × replication of ``scenario`` and returns the summaries.

    ``jobs`` defaults to the number of cores; results do not depend on it. ``trace=True``
    records per-client timer / RTO traces in the runs (``Result.runs``); ``trace_dir`` also
    writes them as one CSV per replication.
    """
    if trace_dir is not None:
        trace = True
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    runner = runner or _engine_run
    jobs = jobs or os.cpu_count() or 1
    if jobs < 1:
        raise RunError(f"--jobs: {jobs} is out of range; expected an integer >= 1")
    configs = scenario.configurations()
    if trace is not None:
        for c in configs:
            c["trace"] = trace
    if pcap_dir is not None:
        Path(pcap_dir).mkdir(parents=True, exist_ok=True)
    tasks = []
    for c in configs:
        cid = config_id(c)
        text = json.dumps(c)
        for rep in range(c["replications"]):
            pcap = str(Path(pcap_dir) / f"{c['name']}-{cid}-rep{rep}.pcap") if pcap_dir is not None else None
            tasks.append((cid, rep, text, pcap))
    bar = Progress(len(tasks), progress, scenario.source if scenario.source != "<dict>" else "runs")
    results: dict[tuple[str, int], tuple[dict[str, Any], float]] = {}

    def one(task):
        cid, rep, text, pcap = task
        t0 = time.perf_counter()
        out = json.loads(runner(text, rep, pcap))
        return (cid, rep), (out, time.perf_counter() - t0)

    try:
        if jobs == 1:
            for t in tasks:
                key, value = one(t)
                results[key] = value
                bar.advance()
        else:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                for key, value in pool.map(one, tasks):
                    results[key] = value
                    bar.advance()
    finally:
        bar.close()

    if trace_dir is not None:
        write_traces(configs, results, Path(trace_dir))
    summaries, runs = [], {}
    for c in configs:
        cid = config_id(c)
        reps = [results[(cid, r)] for r in range(c["replications"])]
        runs[cid] = [r for r, _ in reps]
        s = summarize(c, cid, runs[cid], sum(w for _, w in reps))
        s["swept"] = scenario.swept_values(c)
        summaries.append(s)
    return Result(scenario=scenario, summaries=summaries, runs=runs)


TRACE_COLUMNS = ("client", "time_s", "event", "exchange", "timer_s", "rto_s", "sample_s", "sample_kind")


def write_traces(configs, results, directory: Path) -> None:
    """One CSV per replication: every client's timer / RTO trace, in time order per client."""
    import csv

    directory.mkdir(parents=True, exist_ok=True)
    for c in configs:
        cid = config_id(c)
        for rep in range(c["replications"]):
            run, _ = results[(cid, rep)]
            with open(directory / f"{c['name']}-{cid}-rep{rep}-trace.csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(TRACE_COLUMNS)
                for t in run.get("traces") or []:
                    for point in t["points"]:
                        w.writerow([t["client"], *point])
