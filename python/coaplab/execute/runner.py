"""Running scenarios: every configuration × replication, in parallel, stored as it finishes.

Each run is one call into the Rust engine (``coaplab._core.run_one``). Locally, a thread pool
runs replications on all cores (the engine releases the GIL, so threads run truly in parallel
without process start-up or pickling); with ``cluster``, a Dask distributed cluster runs them,
batched into tasks of about a second of runs each (execute/cluster.py).
Either way the coordinator alone writes the results database, committing each run the moment
it finishes. Results are keyed by (configuration, replication), never by completion order, so
they are identical for any number of workers.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core
from ..analyse.lwm2m import lwm2m_columns
from ..analyse.stats import summarize
from ..analyse.timeline import bands as timeline_bands
from ..describe.capi import algorithm_file, foreign_digests
from ..describe.scenario import (
    CC_STATE_CONTROLLERS,
    CELL_KINDS,
    MODEL_VERSION,
    Scenario,
    config_id,
    file_stem,
    load_scenario,
    resolve,
)
from ..errors import CoaplabError, ResourceError
from ..files import (
    atomic_write,
    commit_partial,
    digest,
    missing_dirs,
    output_dir,
    partial_path,
    remove_dirs,
    remove_stale_partials,
)
from ..names import quote_value
from .cluster import dask_batches, parse_cluster
from .store import (
    CC_STATE_COLUMNS,
    QUEUE_COLUMNS,
    THROUGHPUT_COLUMNS,
    cc_state_rows,
    queue_rows,
    throughput_rows,
)
from .supervise import PluginError, check_configs, plugin_run, plugin_timeout, plugins_of, stop_all, supervised
from .sweep import SweepWriter
from .tidy import flatten, param_columns, varying
from .tidy import label as config_label

RunFn = Callable[[str, int, "str | None"], str]


class RunError(CoaplabError):
    """The engine rejected a configuration, or runs failed."""


@dataclass
class RunResult:
    """What a scenario run produced: one summary per configuration, plus the raw runs, as
    tables (pandas). :class:`coaplab.Result` (:mod:`coaplab.present.result`) adds its figures."""

    scenario: Scenario
    summaries: list[dict[str, Any]]
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: (configuration name, config_id, replication, error) of every failed run.
    failures: list[tuple[str, str, int, str]] = field(default_factory=list)
    #: Runs executed now (the rest came from the database).
    executed: int = 0
    #: Stored runs run again for the pcap / trace files they lacked; each gave the stored result.
    rerun: int = 0
    #: A ``python:`` / ``c:`` algorithm's file → how many stored runs were of another version of
    #: it (its content is part of ``config_id``): not reused.
    superseded: dict[str, int] = field(default_factory=dict)

    def _params(self) -> tuple[list[str], dict[str, dict[str, Any]]]:
        """The keys that vary across this result's configurations, and each configuration's
        values of them (config_id → {dotted key: value})."""
        configs = {s["config_id"]: s["config"] for s in self.summaries}
        keys = varying(configs.values())
        # As `coaplab export` names them: top-level keys that are also run columns get "config.".
        names = param_columns(keys, ("name", "seed"))
        return list(names.values()), {cid: {names[k]: flatten(c).get(k) for k in keys} for cid, c in configs.items()}

    def runs_frame(self):
        """One row per (configuration, replication) with the run-level metrics (pandas): first
        ``config_id``, one column per parameter that varies across the configurations (dotted
        names such as ``coap.cc``), ``replication``, then the metrics."""
        import pandas as pd  # lazy: pandas (start-up)

        keys, params = self._params()
        rows = []
        for cid, runs in self.runs.items():
            for r in runs:
                row = {"config_id": cid, **params.get(cid, {}), "replication": r["replication"],
                       **{k: v for k, v in r.items() if k not in ("clients", "packets", "traces", "retransmission_histogram", "server", "tcp", "seq_traces", "timeseries", "replication", "groups")}}
                row.update({f"packets_{k}": v for k, v in r["packets"].items()})
                row.update({f"tcp_{k}": v for k, v in (r.get("tcp") or {}).items()})
                row.update({f"mesh_{k}": v for k, v in (row.pop("mesh", None) or {}).items()
                            if k not in ("client_hops", "client_mean_exchange_s", "node_drops")})
                row.update({f"cell_{k}": v for k, v in (row.pop("cell", None) or {}).items() if k != "devices_per_level"})
                row.update({f"security_{k}": v for k, v in (row.pop("security", None) or {}).items()})  # coap.security
                row.update(lwm2m_columns(row.pop("lwm2m", None)))  # workload.kind = "lwm2m" (docs/model.md)
                energy = row.pop("energy", None) or {}  # docs/energy.md: networks that record radio states
                row.update({f"energy_{k}": v for k, v in energy.items() if k != "state_time_s"})
                row.update({f"energy_state_time_s_{k}": v for k, v in (energy.get("state_time_s") or {}).items()})
                rows.append(row)
        return pd.DataFrame(rows, columns=None if rows else ["config_id", *keys, "replication"])

    def clients_frame(self):
        """One row per (configuration, replication, client) (pandas): ``config_id``, the
        varying parameters (dotted names), ``replication``, ``client``, then the metrics."""
        import pandas as pd  # lazy: pandas (start-up)

        keys, params = self._params()
        rows = [
            {"config_id": cid, **params.get(cid, {}), "replication": r["replication"],
             **{k: v for k, v in c.items() if k != "tcp"},
             **{f"tcp_{k}": v for k, v in (c.get("tcp") or {}).items()}}
            for cid, runs in self.runs.items()
            for r in runs
            for c in r["clients"]
        ]
        return pd.DataFrame(rows, columns=None if rows else ["config_id", *keys, "replication", "client"])

    def time_sequence_frame(self):
        """TCP runs with tracing on: one row per time-sequence event (pandas) — config_id, the
        varying parameters, replication, client, connection, time_s, direction (``up`` client →
        server, ``down``), event (``send``, ``retransmit``, ``drop``, ``ack``), seq (bytes from
        the first data byte), length."""
        import pandas as pd  # lazy: pandas (start-up)

        keys, params = self._params()
        rows = [
            (cid, *(params.get(cid, {}).get(k) for k in keys), r["replication"], t["client"], t["connection"], *p)
            for cid, runs in self.runs.items()
            for r in runs
            for t in r.get("seq_traces") or []
            for p in t["points"]
        ]
        return pd.DataFrame(rows, columns=["config_id", *keys, "replication", "client", "connection", "time_s",
                                           "direction", "event", "seq", "length"])

    def cc_state_frame(self):
        """TCP runs with tracing on and a controller that traces its state (BBR, CUBIC): the
        congestion controller's state (pandas), one row per ACK that changed it — config_id,
        the varying parameters, replication, client, connection, time_s, direction (the
        sender's: ``up`` client → server, ``down``), mode (BBR's ``startup``, ``drain``,
        ``probe_bw``, ``probe_rtt``; CUBIC's ``slow_start``, ``avoidance``),
        btlbw_bytes_per_s, rtprop_s (NaN before the first RTT sample), pacing_rate_bytes_per_s,
        cwnd_bytes (``store.CC_STATE_COLUMNS``; docs/model.md "BBR", "CUBIC"). Empty for New Reno."""
        import pandas as pd  # lazy: pandas (start-up)

        keys, params = self._params()
        rows = [
            (cid, *(params.get(cid, {}).get(k) for k in keys), r["replication"], *row)
            for cid, runs in self.runs.items()
            for r in runs
            for row in cc_state_rows(r)
        ]
        return pd.DataFrame(rows, columns=["config_id", *keys, "replication", *CC_STATE_COLUMNS])

    def queue_frame(self):
        """Runs with tracing on (not meshes): the bottleneck buffers' occupancy over time (pandas),
        one row per change — config_id, the varying parameters, replication, direction (``down``
        is the bottleneck in front of the devices, ``up`` the uplink's buffer), link, time_s,
        queue_bytes (bytes waiting from time_s on; docs/model.md "Time series")."""
        return self._series_frame("queue")

    def throughput_frame(self):
        """Runs with tracing on (not meshes): each direction's delivered throughput (pandas), one
        row per 100 ms bin — config_id, the varying parameters, replication, direction, link,
        time_s (the bin's start), bin_s, kbps (IP bytes serialized and not lost in the bin)."""
        return self._series_frame("throughput")

    def _series_frame(self, kind: str):
        import pandas as pd  # lazy: pandas (start-up)

        rows_of, columns = {"queue": (queue_rows, QUEUE_COLUMNS), "throughput": (throughput_rows, THROUGHPUT_COLUMNS)}[kind]
        keys, params = self._params()
        rows = [
            (cid, *(params.get(cid, {}).get(k) for k in keys), r["replication"], *row)
            for cid, runs in self.runs.items()
            for r in runs
            for row in rows_of(r)
        ]
        return pd.DataFrame(rows, columns=["config_id", *keys, "replication", *columns])

    def traced_run(self, config_id: str | None, replication: int) -> tuple[str, dict[str, Any], str]:
        """(config_id, run, caption) of the first run with time series (``trace = true``) of
        ``config_id`` (any configuration when None) and ``replication``."""
        for cid, runs in self.runs.items():
            if config_id is not None and cid != config_id:
                continue
            for r in runs:
                if r["replication"] == replication and r.get("timeseries"):
                    return cid, r, f"{self.label(cid)}: replication {replication}"
        raise CoaplabError(f"no time series for config {config_id or '(any)'}, replication {replication}: run a "
                           "scenario on a star or gprs network with trace = true")

    def label(self, config_id: str) -> str:
        """The configuration named by its values of the keys that vary across this result (its
        config_id when none varies), as figure captions name it."""
        keys, params = self._params()
        return config_label(params.get(config_id, {}), keys) if keys else config_id


class Progress:
    """A rich progress bar on a terminal, plain periodic lines otherwise (both on stderr)."""

    def __init__(self, total: int, enabled: bool, label: str, unit: str = "runs"):
        self.total, self.done, self.failed, self.start = total, 0, 0, time.monotonic()
        self.enabled = enabled and total > 0
        self.label, self.unit = label, unit
        self._bar = None
        self._last_line = 0.0
        if self.enabled and sys.stderr.isatty():
            from rich.console import Console  # lazy: only on a terminal (start-up)
            from rich.progress import (  # lazy: only on a terminal (start-up)
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeRemainingColumn,
            )  # lazy: only on a terminal (start-up)
            from rich.progress import Progress as RichProgress  # lazy: only on a terminal (start-up)

            # On stderr: stdout carries only the requested output (`--format json > out.jsonl`).
            self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn("{task.fields[failed]}"), TimeRemainingColumn(), transient=True,
                                     console=Console(stderr=True))
            self._bar.start()
            self._task = self._bar.add_task(label, total=total, failed="")

    def advance(self, failed: bool = False) -> None:
        self.done += 1
        self.failed += failed
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, advance=1, failed=f"{self.failed} failed" if self.failed else "")
            return
        now = time.monotonic()
        # Quiet for short runs: the first line after 5 s, then every 5 s, and the last one.
        if now - max(self._last_line, self.start) >= 5.0 or (self.done == self.total and self._last_line):
            elapsed = now - self.start
            eta = elapsed / self.done * (self.total - self.done)
            failed_text = f", {self.failed} failed" if self.failed else ""
            print(f"{self.label}: {self.done}/{self.total} {self.unit}{failed_text}, {elapsed:.1f} s elapsed, ETA {eta:.0f} s",
                  file=sys.stderr, flush=True)
            self._last_line = now

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def engine_run(config_json: str, replication: int, pcap: str | None) -> str:
    """One run in the Rust engine; module-level so that Dask workers can import it."""
    return _core.run_one(config_json, replication, pcap)


def _timed(runner: RunFn, task: tuple[str, int, str, str | None]) -> tuple[str, int, str | None, str | None, float]:
    """Runs one task; returns (cid, rep, result JSON or None, error or None, wall s).
    Any failure of the run itself — an engine error or a panic — becomes its error text."""
    cid, rep, text, pcap = task
    t0 = time.perf_counter()
    partial = partial_path(Path(pcap)) if pcap is not None else None
    try:
        # The capture is written under a partial name and renamed once complete and synced:
        # a kill or a full disk never leaves a cut-short file under the final name.
        out = runner(text, rep, None if partial is None else str(partial))
        if partial is not None and pcap is not None:
            try:
                commit_partial(partial, Path(pcap))
            except OSError as e:
                partial.unlink(missing_ok=True)
                return cid, rep, None, f"{PCAP_ERROR}: {pcap}: {e.strerror or e}", time.perf_counter() - t0
        return cid, rep, out, None, time.perf_counter() - t0
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - pyo3's PanicException derives from BaseException
        # The engine's refusals (ValueError) are already one readable line; anything else (a
        # panic) keeps its type name, which says what went wrong.
        text = str(e) if type(e) in (ValueError, PluginError) else f"{type(e).__name__}: {e}"
        if partial is not None:
            partial.unlink(missing_ok=True)
        return cid, rep, None, (text.splitlines() or [""])[0], time.perf_counter() - t0


#: How the engine's (and :func:`_timed`'s) errors writing a capture begin: not a failure of the
#: run but of the machine (a full disk), which stops the sweep.
PCAP_ERROR = "writing pcap"


def _output_error(error: str) -> bool:
    return error.startswith((PCAP_ERROR, "cannot create pcap file"))


def _stop_engine_runs() -> None:
    """Asks the runs in progress in this process to stop (each returns "did not finish:
    cancelled" at its next guard check)."""
    cancel = getattr(_core, "cancel_all", None)
    if cancel is not None:
        cancel()
    stop_all()  # the plug-ins' worker processes


#: The error text of a run stopped by ``_stop_engine_runs`` (never stored).
CANCELLED = "did not finish: cancelled"


def _local(runner: RunFn, tasks: list, jobs: int) -> Generator[list, None, None]:
    """Yields batches of finished runs: everything that completed since the last batch.
    Even with one job the run executes in a worker thread, so the next run proceeds while the
    coordinator commits the previous ones. Interrupted (Ctrl-C) or closed early, it does not
    wait for the runs in progress: queued runs are dropped and running ones are cancelled.

    Each future puts itself on a queue when done, so collecting a batch costs its own size:
    ``concurrent.futures.wait(pending, FIRST_COMPLETED)`` installs and removes a waiter on every
    pending future per batch, quadratic in the runs (docs/performance.md, "Summaries")."""
    pool = _pool(jobs)
    done: queue.SimpleQueue = queue.SimpleQueue()
    remaining = len(tasks)
    futures = [pool.submit(_timed, runner, t) for t in tasks]
    for f in futures:
        f.add_done_callback(done.put)
    try:
        while remaining:
            batch = [done.get()]
            while True:
                try:
                    batch.append(done.get_nowait())
                except queue.Empty:
                    break
            remaining -= len(batch)
            yield [f.result() for f in batch]
    finally:
        if remaining:
            for f in futures:
                f.cancel()  # the queued ones; the running ones stop at their next guard check
            _stop_engine_runs()


#: The thread pools of this process by size, kept between calls: starting and joining a pool's
#: threads cost a warm `coaplab.run` of a small scenario more CPU than its summaries
#: (docs/performance.md, "Against ns-3"). Idle threads wait on a queue and cost nothing.
_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(jobs: int) -> ThreadPoolExecutor:
    """The process's pool of ``jobs`` threads (made on first use)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(jobs)
        if pool is None:
            pool = _POOLS[jobs] = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix=f"coaplab-run-{jobs}")
        return pool


class OutputTooLarge(CoaplabError):
    """The pcaps a run would write exceed the allowed size."""


#: The pcap size `coaplab run --pcap` writes without ``--yes`` or a larger ``--max-output-mb``.
MAX_OUTPUT_MB = 200.0
#: The pcap file header and the header of each packet record (libpcap format), bytes.
PCAP_HEADER_BYTES = 24
PCAP_RECORD_BYTES = 16


def mean_packet_bytes(config: dict[str, Any]) -> float:
    """The mean captured packet of a configuration, bytes: requests carry headers only,
    responses (or Block2 blocks) the payload too, so the mean is the headers' mean plus half
    the payload. The headers' mean (37 B UDP, 40 B TCP, IP headers included) is measured: one
    replication each, mean of (pcap size - 24) / packets sent - 16 = 66.5 B for 10 continuous
    UDP clients, 66.8 B for 40 random UDP clients (60 B responses: 37 + 30), 72.0 B for 10
    continuous TCP clients (40 + 30 + acks); firmware with 256 B blocks: 167.8 B UDP (estimate
    165), 200.5 B TCP (estimate 168)."""
    w = config.get("workload", {})
    if w.get("kind") == "firmware":
        payload = min(2 ** (int(w.get("block_szx", 4)) + 4), int(w.get("resource_bytes", 102400)))
    else:
        payload = int(w.get("response_bytes", 60))
    base = 40 if config.get("coap", {}).get("transport") == "tcp" else 37
    return base + payload / 2


def min_packets(config: dict[str, Any]) -> int | None:
    """A lower bound on the packets one run of `config` sends, from the configuration alone: a
    request and a response per exchange (per Block2 block for firmware); None when the workload
    does not fix its number of exchanges (``duration_s``, ``burst``, client groups)."""
    w = config.get("workload", {})
    if "group" in config or "groups" in config or w.get("duration_s") is not None:
        return None
    clients = w.get("clients")
    if w.get("kind") in ("continuous", "random", None) and clients is not None and w.get("exchanges") is not None:
        return 2 * int(clients) * int(w["exchanges"])
    if w.get("kind") == "firmware" and clients is not None:
        block = 2 ** (int(w.get("block_szx", 4)) + 4)
        return 2 * int(clients) * -(-int(w.get("resource_bytes", 102400)) // block)
    return None


def _check_pcap_output(pcaps: list[tuple[str, int]], sent: dict[tuple[str, int], int], configs: dict[str, dict[str, Any]],
                       max_output_mb: float | None, announce: bool) -> None:
    """Estimates the pcaps about to be written: packets × (mean packet + record header) + file
    header, with the packets the stored runs sent (runs not stored yet: the mean of their
    configuration's stored runs, or, when it has none, the lower bound :func:`min_packets`).
    Announces it on stderr, and refuses past `max_output_mb`."""
    per_config: dict[str, list[int]] = {}
    for (cid, _), count in sent.items():
        per_config.setdefault(cid, []).append(count)
    size, stored, bound, unknown = 0.0, 0, 0, 0
    for cid, rep in pcaps:
        if (cid, rep) in sent:
            n, stored = float(sent[(cid, rep)]), stored + 1
        elif cid in per_config:
            n, stored = sum(per_config[cid]) / len(per_config[cid]), stored + 1
        elif (low := min_packets(configs[cid])) is not None:
            n, bound = float(low), bound + 1
        else:
            unknown += 1
            continue
        size += PCAP_HEADER_BYTES + n * (mean_packet_bytes(configs[cid]) + PCAP_RECORD_BYTES)
    if not stored and not bound:
        return
    mb = size / 1e6
    how = [f"{stored} from the packets sent by their stored runs" if stored else "",
           f"{bound} from a lower bound of 2 packets per exchange" if bound else "",
           f"{unknown} not estimated" if unknown else ""]
    what = (f"--pcap: {len(pcaps)} pcap files of {'at least ' if not stored else 'about '}"
            f"{mb:,.{0 if mb >= 10 else 1}f} MB in all (estimated: {'; '.join(h for h in how if h)})")
    if max_output_mb is not None and mb > max_output_mb:
        raise OutputTooLarge(f"{what} exceed --max-output-mb {max_output_mb:g}; add --yes to write them, or "
                             "give a larger --max-output-mb")
    if announce:
        print(f"coaplab: {what}", file=sys.stderr, flush=True)


def _base_fails_alike(scenario: Scenario, message: str, plugins: list[str]) -> bool:
    """Whether the file without its sweep fails the engine's check with the same message (the
    error is the base file's, not a swept value's); plug-ins load in a worker, as for the sweep."""
    try:
        text = json.dumps(resolve(copy.deepcopy(scenario.raw)))
    except CoaplabError:
        return False
    got = (supervised(" / ".join(plugins), " while loading it", check_configs, [text]) if plugins
           else check_configs([text]))
    return got is not None and got[1] == message


def run_scenario(
    scenario: Scenario | str | Path | dict[str, Any],
    jobs: int | None = None,
    progress: bool = False,
    pcap_dir: str | Path | None = None,
    trace: bool | None = None,
    runner: RunFn | None = None,
    trace_dir: str | Path | None = None,
    db: str | Path | None = None,
    cluster: Any = None,
    max_output_mb: float | None = None,
) -> RunResult:
    """Runs every configuration × replication of ``scenario`` and returns the summaries.

    ``jobs`` (default: the number of cores) or ``cluster`` (a ``--cluster`` value: ``local:N``,
    ``slurm:FILE.toml``, ``pbs:FILE.toml``, ``ssh:HOST1,HOST2,…``, a scheduler address; or a
    ``distributed.Client`` or cluster object, which stays open: execute/cluster.py) choose where
    runs execute; results do not depend on it. With ``db`` every finished run is committed to that results database at once, and runs
    already stored there are not run again. ``trace=True`` records per-client timer / RTO
    traces; ``trace_dir`` also writes them as one CSV per replication. Failed runs are
    recorded (``Result.failures``) while the others go on.

    With ``db``, ``pcap_dir`` / ``trace_dir`` also re-run the stored runs whose files are not
    in those directories (the engine is deterministic: a re-run result differing from the
    stored one raises :class:`RunError`; ``Result.rerun`` counts them). Before writing pcaps,
    their size is estimated from the packets the stored runs sent; past ``max_output_mb``
    (default: no limit) nothing runs and :class:`OutputTooLarge` is raised.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    if hasattr(_core, "reset_cancel"):
        _core.reset_cancel()  # a previous interrupted call must not cancel these runs
    if trace_dir is not None:
        trace = True
    # Absolute before any plug-in runs: a plug-in's os.chdir() must not move the outputs.
    pcap_dir, trace_dir, db = (None if p is None else os.path.abspath(p) for p in (pcap_dir, trace_dir, db))
    jobs = jobs or os.cpu_count() or 1
    if jobs < 1:
        raise RunError(f"--jobs: {jobs} is out of range; expected an integer >= 1")
    if isinstance(cluster, str):
        parse_cluster(cluster)  # a value that is not allowed, or a bad file, before anything runs
    configs = scenario.configurations()
    if trace is not None:
        for c in configs:
            c["trace"] = trace
    ids = [config_id(c) for c in configs]
    if runner is None:
        plugins = sorted({n for c in configs for n in plugins_of(c)})
        # A plug-in's configurations run in supervised worker processes (execute/supervise.py),
        # started by the Dask worker on a cluster.
        runner = plugin_run if plugins else engine_run
        texts = [json.dumps(c) for c in configs]
        # Everything the engine would reject, before anything runs (plug-ins load in a worker).
        refused = (supervised(" / ".join(plugins), " while loading it", check_configs, texts) if plugins
                   else check_configs(texts))
        if refused is not None:
            c = configs[refused[0]]
            swept = ", ".join(f"{k} = {quote_value(v)}" for k, v in scenario.swept_values(c).items())
            alike = scenario.sweep and _base_fails_alike(scenario, refused[1], plugins)
            name = f" (in the sweep configuration {swept})" if scenario.sweep and not alike else ""
            raise RunError(f"{refused[1]}{name}")

    created: list[Path] = []  # removed again if the sweep is refused before anything ran
    for option, directory in (("--pcap", pcap_dir), ("--trace", trace_dir)):
        if directory is not None:  # before anything runs: a directory that cannot be written is one line
            missing = missing_dirs(directory)
            output_dir(directory, option)
            created += missing
            remove_stale_partials(Path(directory))  # left by a killed sweep
    store = SweepWriter(db) if db is not None else None
    by_config = dict(zip(ids, configs))
    superseded: dict[str, int] = {}
    try:
        done: set[tuple[str, int]] = set()
        if store is not None:
            content_named = frozenset(cid for cid, c in zip(ids, configs) if foreign_digests(c))
            done = store.begin(zip(ids, configs), MODEL_VERSION, content_named)
            for cid, n in store.superseded.items():
                for spec in foreign_digests(by_config[cid]):
                    superseded[algorithm_file(spec)] = superseded.get(algorithm_file(spec), 0) + n
            if store.recovered and progress:
                print(f"coaplab: stored {store.recovered} finished runs an earlier sweep kept in {store.journal} "
                      "while the database was held", file=sys.stderr)
        recorded = store.outputs if store is not None else {}

        def intact(path: Path) -> bool:
            """Whether an output file of a stored run is there and whole: the size and checksum
            recorded when it was written, when it was recorded (older sweeps did not)."""
            if not path.is_file():
                return False
            if path.name not in recorded:
                return True
            try:
                return digest(path) == recorded[path.name]
            except OSError:
                return False

        tasks = []
        by_id = {}
        #: Stored runs run again for the pcap / trace files they lack (never stored again).
        rerun: dict[tuple[str, int], bool] = {}  # -> whether its trace CSV is wanted
        for cid, c in zip(ids, configs):
            by_id[cid] = c
            text = json.dumps(c)
            for rep in range(c["replications"]):
                stem = f"{file_stem(c['name'])}-{cid}-rep{rep}"
                pcap = str(Path(pcap_dir) / f"{stem}.pcap") if pcap_dir is not None else None
                if (cid, rep) in done:
                    pcap = pcap if pcap is not None and not intact(Path(pcap)) else None
                    need_trace = trace_dir is not None and not all(
                        intact(Path(trace_dir) / f"{stem}{suffix}") for suffix in _trace_files(c))
                    if pcap is None and not need_trace:
                        continue
                    rerun[(cid, rep)] = need_trace
                tasks.append((cid, rep, text, pcap))
        pcaps = [(cid, rep) for cid, rep, _, pcap in tasks if pcap is not None]
        if pcaps:
            sent: dict[tuple[str, int], int] = {}
            if store is not None and done:
                with store.read() as rdb:
                    sent = rdb.packets_sent(done)
            try:
                _check_pcap_output(pcaps, sent, by_id, max_output_mb, announce=progress)
            except OutputTooLarge:
                remove_dirs(created)  # nothing written, not even the directories
                raise
        pcap_of = {(cid, rep): pcap for cid, rep, _, pcap in tasks if pcap is not None}

        def written(cid: str, rep: int) -> list[tuple]:
            """The output record of a run's pcap, once the file is in place (a Dask worker on
            another machine writes it there: nothing to record here)."""
            path = pcap_of.get((cid, rep))
            if path is None or not os.path.isfile(path):
                return []
            return [(Path(path).name, cid, rep, *digest(Path(path)))]

        memory: dict[tuple[str, int], tuple[dict[str, Any], float]] = {}
        rerun_results: dict[tuple[str, int], tuple[dict[str, Any], float]] = {}
        failures: dict[tuple[str, int], str] = {}
        engine_version = getattr(_core, "__version__", "unknown")
        label = scenario.source if scenario.source != "<dict>" else "runs"
        bar = Progress(len(tasks), progress, label)
        execute = (dask_batches(_timed, runner, tasks, cluster, plugin_timeout()) if cluster is not None
                   else _local(runner, tasks, jobs))
        try:
            traced: dict[tuple[str, int], str] = {}  # the batch's runs whose trace files are wanted
            for batch in execute:
                rows = []
                outputs: list[tuple] = []
                full: str | None = None
                for cid, rep, out, error, wall in batch:
                    if error is not None and error.endswith(CANCELLED):
                        continue  # stopped by an interrupt: not a result, never stored
                    if error is not None and _output_error(error):
                        full = full or error  # the machine's failure, not the run's: never stored
                        continue
                    if error is None:
                        outputs.extend(written(cid, rep))
                        if trace_dir is not None and rerun.get((cid, rep), True):
                            traced[(cid, rep)] = out
                    if (cid, rep) in rerun:
                        if error is not None:
                            raise RunError(f"the re-run of stored run {by_id[cid]['name']} [{cid}] replication {rep} "
                                           f"(for its pcap / trace files) failed: {error}")
                        rerun_results[(cid, rep)] = (json.loads(out), wall)
                        bar.advance()
                        continue
                    result = json.loads(out) if error is None else None
                    rows.append((cid, by_id[cid], rep, result, error, wall))
                    if error is not None:
                        failures[(cid, rep)] = error
                    elif result is not None:
                        memory[(cid, rep)] = (result, wall)
                if traced and trace_dir is not None:  # as the runs finish: a kill later loses none of them
                    outputs.extend(_write_traces(by_id, traced, Path(trace_dir)))
                    traced.clear()
                if store is not None:
                    store.note_outputs(outputs)
                    store.store(rows, engine_version, MODEL_VERSION)
                for row in rows:
                    bar.advance(failed=row[4] is not None)
                if full is not None:
                    raise ResourceError(f"--pcap: {full}; the sweep stopped" + (
                        ", the runs stored before are kept: free space and re-run the same command to resume"
                        if store is not None else ""))
            if store is not None:
                store.flush(engine_version, MODEL_VERSION)
        except BaseException:
            if store is not None and store.pending and not store.broken:  # runs kept waiting by readers
                try:
                    store.store([], engine_version, MODEL_VERSION)
                except Exception:  # noqa: BLE001, S110 - best effort: the first exception propagates
                    pass
            raise
        finally:
            execute.close()  # interrupted: stop the runs in progress without waiting for them
            bar.close()

        available: dict[tuple[str, int], tuple[dict[str, Any], float]] = {}
        if store is not None and done:
            with store.read() as rdb:
                # This sweep's stored runs only (``done`` holds every stored run of the database).
                available = dict(rdb.results(key for key in done if key[0] in by_id))
        for key, (result, _) in sorted(rerun_results.items()):
            stored = available[key][0]
            if json.dumps({k: v for k, v in result.items() if k != "traces"}, sort_keys=True) != json.dumps(stored, sort_keys=True):
                cid, rep = key
                raise RunError(f"the re-run of stored run {by_id[cid]['name']} [{cid}] replication {rep} differs from "
                               "the stored result (stored by another engine version?); its pcap / trace files do not "
                               "belong to the stored results: write them into another directory with --no-db")
        available.update(memory)
        summaries, runs = [], {}
        # Summarising a large stored study takes seconds: it gets its own progress (a bar on a
        # terminal, a line every 5 s otherwise), after the runs'.
        summing = Progress(len(ids), progress, f"{label}: summarising", unit="configurations")
        try:
            for cid, c in zip(ids, configs):
                reps = [available[(cid, rep)] for rep in range(c["replications"]) if (cid, rep) in available]
                runs[cid] = [r for r, _ in reps]
                summing.advance()
                if not reps:
                    continue
                s = summarize(c, cid, runs[cid], sum(w for _, w in reps))
                s["swept"] = scenario.swept_values(c)
                s["replications_failed"] = c["replications"] - len(reps)
                summaries.append(s)
        finally:
            summing.close()
    finally:
        if store is not None:
            store.close()  # releases the sweep lock
    failed = [(by_id[cid]["name"], cid, rep, err) for (cid, rep), err in sorted(failures.items())]
    return RunResult(scenario=scenario, summaries=summaries, runs=runs, failures=failed,
                  executed=len(tasks) - len(rerun), rerun=len(rerun), superseded=superseded)


TRACE_COLUMNS = ("client", "time_s", "event", "exchange", "timer_s", "rto_s", "sample_s", "sample_kind")


SEQ_TRACE_COLUMNS = ("client", "connection", "time_s", "direction", "event", "seq", "length")

#: ``…-cell-timeline.csv``: one traced cell device's radio state bands (analyse/timeline.py).
CELL_TIMELINE_COLUMNS = ("device", "start_s", "end_s", "state")


def traces_cc_state(config: dict[str, Any]) -> bool:
    """Whether any client population of a resolved configuration runs TCP with a controller
    that traces its state (:data:`CC_STATE_CONTROLLERS`)."""
    populations = config.get("group") or [config]  # groups, each resolved, replace the base's population
    return any(g.get("coap", {}).get("transport") == "tcp" and g.get("coap", {}).get("cc") in CC_STATE_CONTROLLERS
               for g in populations)


def _trace_files(config: dict[str, Any]) -> list[str]:
    """The suffixes of a replication's trace files: ``-trace.csv``, ``-cc-state.csv`` with a
    controller that traces its state (BBR, CUBIC), and ``-cell-timeline.csv`` on a cell."""
    cell = (config.get("network") or {}).get("kind") in CELL_KINDS
    return (["-trace.csv"] + (["-cc-state.csv"] if traces_cc_state(config) else [])
            + (["-cell-timeline.csv"] if cell else []))


def _write_traces(configs: dict[str, dict[str, Any]], results: dict[tuple[str, int], str],
                  directory: Path) -> list[tuple]:
    """The trace files of finished runs (config_id → configuration; (config_id, replication) →
    the run's result JSON): one CSV per replication, every client's timer / RTO trace in time
    order (UDP), or every connection's time-sequence trace (TCP); runs whose controller traces
    its state (BBR, CUBIC) add a second
    CSV, ``…-cc-state.csv``, with the congestion controller's state rows (``cc_state`` table);
    runs on a cell add ``…-cell-timeline.csv``, device 0's radio state bands
    (:data:`CELL_TIMELINE_COLUMNS`).
    Returns the output records (file name, config_id, replication, bytes, SHA-256) of the
    files written. A full disk stops the sweep with one line (:class:`ResourceError`)."""
    try:
        return [(p.name, cid, rep, *digest(p)) for p, cid, rep in write_traces(configs, results, directory)]
    except OSError as e:
        raise ResourceError(f"--trace: cannot write into {str(directory)!r}: {e.strerror or e}; the sweep stopped, "
                            "the runs stored before are kept: free space and re-run the same command to resume") from None


def write_traces(configs: dict[str, dict[str, Any]], results: dict[tuple[str, int], str],
                 directory: Path) -> list[tuple[Path, str, int]]:
    """Writes the trace files of :func:`_write_traces`; returns (path, config_id, replication)
    of each. Each file is written under a partial name and renamed once whole (atomic_write):
    a kill or a full disk leaves no cut-short trace under the final name."""
    directory.mkdir(parents=True, exist_ok=True)
    files: list[tuple[Path, str, int]] = []
    for (cid, rep), text in sorted(results.items()):
        c = configs[cid]
        run = json.loads(text)
        stem = f"{file_stem(c['name'])}-{cid}-rep{rep}"
        if traces_cc_state(c):
            files.append((directory / f"{stem}-cc-state.csv", cid, rep))
            with atomic_write(files[-1][0], "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(CC_STATE_COLUMNS)
                w.writerows(cc_state_rows(run))
        if run.get("cell_timeline"):
            t = run["cell_timeline"]
            files.append((directory / f"{stem}-cell-timeline.csv", cid, rep))
            with atomic_write(files[-1][0], "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(CELL_TIMELINE_COLUMNS)
                w.writerows((t["device"], a, b, state) for a, b, state in timeline_bands(t))
        files.append((directory / f"{stem}-trace.csv", cid, rep))
        with atomic_write(files[-1][0], "w", newline="") as f:
            w = csv.writer(f)
            if c["coap"]["transport"] == "tcp":
                w.writerow(SEQ_TRACE_COLUMNS)
                for t in run.get("seq_traces") or []:
                    for point in t["points"]:
                        w.writerow([t["client"], t["connection"], *point])
                continue
            w.writerow(TRACE_COLUMNS)
            for t in run.get("traces") or []:
                for point in t["points"]:
                    w.writerow([t["client"], *point])
    return files
