"""A sweep's runs on a Dask cluster (``--cluster``, docs/cluster.md): which cluster, and the
runs batched into tasks.

Which cluster (:func:`parse_cluster`; a bad value is one line, exit 2):

* ``local:N`` — a ``LocalCluster`` of N worker processes, one thread each, on this machine;
* ``slurm:FILE.toml`` / ``pbs:FILE.toml`` — dask-jobqueue's ``SLURMCluster`` / ``PBSCluster``
  with the file's keys (``jobs``: how many batch jobs to submit; the rest are the class's
  own arguments), started from this process (it hosts the scheduler) and stopped at the end;
* ``ssh:HOST1,HOST2,…`` — ``distributed.SSHCluster``: the scheduler on HOST1, one worker
  process on each further host (list a host twice to give it a worker too);
* a scheduler address (``tcp://head:8786``) — a cluster someone already started;
* in Python, a ``distributed.Client`` or a cluster object (``coaplab.run(…, cluster=c)``),
  which the caller keeps and closes.

How (:class:`Batcher`): one Dask task per run costs more than the run (a run of a few clients
takes a fraction of a millisecond; Dask's scheduler spends 200 µs to 1 ms per task,
docs.dask.org, "Dask Best Practices", "Avoid very large graphs", and with serialisation and the
worker's side, more: docs/performance.md, "The runner"). So each task carries a batch of runs
sized from the work: about :data:`TASK_TARGET_S` seconds of runs, estimated from the runs that
finished. A run is keyed by (configuration, replication) and its result does not depend on
which batch, worker or order ran it: results are identical for any batching.
"""

from __future__ import annotations

import inspect
import logging
import sys
import tomllib
from collections import deque
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CoaplabError, ResourceError

#: The work one Dask task aims at, seconds of runs: the cost per task measured on the local
#: cluster (≈ 3.8 ms of CPU over the coordinator, scheduler and worker, docs/performance.md,
#: "The runner") is then under 1 % of the work, while a task is still short against a sweep
#: (the coordinator stores results as tasks finish, and spreads the last ones over the workers).
TASK_TARGET_S = 1.0
#: The least work a task takes while runs remain, seconds: at the end of a sweep tasks shrink to
#: spread the last runs over the workers, but not below about ten times their per-task cost
#: (≈ 3.8 ms of CPU, docs/performance.md, "The runner").
MIN_TASK_S = 0.05
#: Tasks in flight per worker thread: one running and one queued behind it, so that a worker
#: never idles for the round trip to the coordinator between two tasks.
IN_FLIGHT_PER_WORKER = 2
#: How a local cluster's worker processes start: ``fork`` (Python's default on Linux up to 3.13,
#: docs.python.org, multiprocessing, "Contexts and start methods") copies the coordinator, which
#: has imported Dask and the engine already, where ``spawn`` (Dask's default) and ``forkserver``
#: import them again (docs/performance.md, Log, 2026-11-27: a 2-worker cluster's start-up cost
#: ≈ 0.8 s of CPU more than ``--jobs 2`` forked, ≈ 2 s spawned or from a fork server). Elsewhere (macOS, Windows) ``spawn``, their safe default.
LOCAL_START_METHOD = "fork" if sys.platform == "linux" else "spawn"
#: The job script's line that lets a batch job's Dask worker start processes (a plug-in's
#: supervised one): Dask reads ``DASK_``-prefixed variables into its configuration
#: (docs.dask.org, "Configuration", "Environment Variables").
NOT_DAEMONIC = "export DASK_DISTRIBUTED__WORKER__DAEMON=False"
#: The forms of ``--cluster``, as the one-line errors list them.
FORMS = "local:N, slurm:FILE.toml, pbs:FILE.toml, ssh:HOST1,HOST2,… or a scheduler address such as tcp://head:8786"
#: dask-jobqueue's cluster classes by ``--cluster`` prefix (https://jobqueue.dask.org/).
JOBQUEUE_CLASSES = {"slurm": "SLURMCluster", "pbs": "PBSCluster"}
#: Arguments of the jobqueue classes that coaplab sets or that belong to the Python API, not to a file.
_NOT_IN_FILE = frozenset({"self", "scheduler", "loop", "asynchronous", "job_cls", "n_workers", "name",
                          "config_name", "kwargs", "job_kwargs", "base_class_kwargs", "scheduler_cls",
                          "security", "shared_temp_directory"})

#: A task as the runner makes it: (config_id, replication, configuration JSON, pcap path or None).
Task = tuple[str, int, str, "str | None"]


class ClusterError(CoaplabError):
    """A ``--cluster`` value that is not allowed, or a cluster that cannot be reached."""


@dataclass
class ClusterSpec:
    """A parsed ``--cluster`` value."""

    kind: str  # "local", "slurm", "pbs", "ssh", "address"
    workers: int = 0  # local: processes; slurm / pbs: batch jobs
    hosts: list[str] = field(default_factory=list)  # ssh
    options: dict[str, Any] = field(default_factory=dict)  # slurm / pbs: the class's arguments
    address: str = ""  # address


def _need(module: str, extra: str = "cluster") -> None:
    import importlib.util  # lazy: only for --cluster

    if importlib.util.find_spec(module) is None:
        raise ClusterError(f"--cluster needs {module}, an optional extra: pip install 'coaplab[{extra}]'")


def jobqueue_options(kind: str) -> set[str]:
    """The arguments a ``slurm:`` / ``pbs:`` file may give: the named parameters of the
    dask-jobqueue cluster class, of its job class and of their bases (dask_jobqueue/core.py,
    ``JobQueueCluster.__init__``, ``Job.__init__``), less those coaplab sets itself."""
    _need("dask_jobqueue")
    import dask_jobqueue  # lazy: optional extra

    cls = getattr(dask_jobqueue, JOBQUEUE_CLASSES[kind])
    names: set[str] = set()
    for klass in (*cls.__mro__, *cls.job_cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is not None:
            names |= {p.name for p in inspect.signature(init).parameters.values()
                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names - _NOT_IN_FILE


def parse_cluster(value: str) -> ClusterSpec:
    """A ``--cluster`` value checked (files read) before anything runs; one line when not allowed."""
    kind, sep, rest = value.partition(":")
    if kind == "local" and sep:
        if not rest.isdigit() or int(rest) < 1:
            raise ClusterError(f"--cluster: {value!r} is not allowed; expected local:N with N >= 1 ({FORMS})")
        return ClusterSpec("local", workers=int(rest))
    if kind == "ssh" and sep:
        hosts = rest.split(",")
        if len(hosts) < 2 or not all(h and h.strip() == h for h in hosts):
            raise ClusterError(f"--cluster: {value!r} is not allowed; expected ssh:SCHEDULER_HOST,WORKER_HOST[,…] "
                               "(the scheduler on the first host, a worker on each further one; no empty names)")
        return ClusterSpec("ssh", hosts=hosts)
    if kind in JOBQUEUE_CLASSES and sep:
        return ClusterSpec(kind, **_jobqueue_file(kind, value, Path(rest)))
    if "://" in value or (sep and rest.isdigit()):
        return ClusterSpec("address", address=value)
    raise ClusterError(f"--cluster: {value!r} is not allowed; expected {FORMS}")


def _jobqueue_file(kind: str, value: str, path: Path) -> dict[str, Any]:
    """``jobs`` and the class's arguments from a ``slurm:`` / ``pbs:`` TOML file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ClusterError(f"--cluster: {value!r}: cannot read {str(path)!r}: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ClusterError(f"--cluster: {str(path)!r} is not valid TOML: {str(e).splitlines()[0]}") from None
    jobs = data.pop("jobs", None)
    if type(jobs) is not int or jobs < 1:
        raise ClusterError(f"--cluster: {str(path)!r}: jobs = {jobs!r} is not allowed; expected jobs = N, the "
                           "number of batch jobs to submit (an integer >= 1)")
    allowed = jobqueue_options(kind)
    unknown = sorted(k for k in data if k not in allowed)
    if unknown:
        raise ClusterError(f"--cluster: {str(path)!r}: unknown key {unknown[0]!r}; allowed: jobs, "
                           + ", ".join(sorted(allowed)))
    prologue = data.get("job_script_prologue", [])
    if not isinstance(prologue, list) or not all(isinstance(line, str) for line in prologue):
        raise ClusterError(f"--cluster: {str(path)!r}: job_script_prologue = {prologue!r} is not allowed; expected "
                           "a list of shell lines, such as [\"source /shared/coaplab/.venv/bin/activate\"]")
    return {"workers": jobs, "options": data}


def make_jobqueue_cluster(spec: ClusterSpec):
    """The dask-jobqueue cluster of a ``slurm:`` / ``pbs:`` spec, not yet scaled (its
    ``job_script()`` is what each batch job runs). Its scheduler runs in this process, without
    a dashboard unless the file asks for one."""
    _need("dask_jobqueue")
    import dask_jobqueue  # lazy: optional extra

    cls = getattr(dask_jobqueue, JOBQUEUE_CLASSES[spec.kind])
    options = {"dashboard_address": None, **spec.options}
    # A plug-in's run starts a supervised process (execute/supervise.py), which a daemonic
    # worker process may not (Dask's default, distributed.yaml: worker.daemon).
    options["job_script_prologue"] = [NOT_DAEMONIC, *options.get("job_script_prologue", [])]
    try:
        return cls(**options)
    except (TypeError, ValueError) as e:
        raise ClusterError(f"--cluster: {spec.kind} file: {str(e).splitlines()[0]}") from None


def connect(cluster: Any) -> tuple[Any, Callable[[], None]]:
    """A Dask client for ``cluster`` (a ``--cluster`` string, a Client or a cluster object) and
    the function that stops what was started here: the workers first, then the scheduler, so
    that no worker is left heartbeating to a closed scheduler (``heartbeat_worker … Stream is
    closed`` on stderr)."""
    _need("distributed")
    from distributed import Client  # lazy: optional extra

    if isinstance(cluster, Client):
        return cluster, lambda: None
    if not isinstance(cluster, str):  # a cluster object: the caller started it and stops it
        client = Client(cluster)
        return client, client.close
    spec = parse_cluster(cluster)
    if spec.kind == "address":
        try:
            client = Client(spec.address, timeout="20s")
        except OSError as e:
            raise ClusterError(f"--cluster: cannot reach the scheduler at {spec.address!r}: {e}") from None
        except (ValueError, TypeError) as e:  # an address Dask cannot parse: bogus://x, tcp://
            raise ClusterError(f"--cluster: {spec.address!r} is not allowed ({str(e).splitlines()[0]}); "
                               f"expected {FORMS}") from None
        return client, client.close
    # The scheduler runs in this process: its logs (a worker's connection closing, at INFO
    # level, on stderr) stay quiet but for critical errors while the cluster runs and stops; a
    # run's own failure comes back as its result (runner._timed).
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        started = _start(spec)
        client = Client(started)
        if spec.kind == "local":  # its workers write on this terminal
            client.run(quiet_logs)
    except BaseException:
        logger.setLevel(level)
        raise

    def close() -> None:
        try:
            client.close()
            started.close()  # the workers first, then the scheduler (SpecCluster._close)
        finally:
            logger.setLevel(level)

    return client, close


def quiet_logs() -> None:
    """Run on each worker of a local cluster: Dask's logs but critical errors off (the nanny
    quiets only its own logger; the worker's closing connections log at INFO on stderr)."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


def _start(spec: ClusterSpec):
    """Starts the cluster of a ``local`` / ``ssh`` / ``slurm`` / ``pbs`` spec."""
    if spec.kind == "local":
        import dask  # lazy: optional extra
        from distributed import LocalCluster  # lazy: optional extra

        # Workers start as LOCAL_START_METHOD says; not daemonic, so that a worker can start a
        # plug-in's supervised process (execute/supervise.py); without Dask's statistical
        # profiler (a sample every 10 ms, distributed.yaml: worker.profile), which no one reads
        # here. Their logs stay quiet but for critical errors (quiet_logs).
        with dask.config.set({"distributed.worker.multiprocessing-method": LOCAL_START_METHOD,
                              "distributed.worker.daemon": False,
                              "distributed.worker.profile.enabled": False,
                              "distributed.admin.tick.interval": "1s"}):
            return LocalCluster(n_workers=spec.workers, threads_per_worker=1, processes=True,
                                dashboard_address=None, silence_logs=logging.CRITICAL)
    if spec.kind == "ssh":
        _need("asyncssh", "ssh")
        from distributed import SSHCluster  # lazy: optional extra

        return SSHCluster(spec.hosts, worker_options={"nthreads": 1}, scheduler_options={"dashboard_address": None})
    cluster = make_jobqueue_cluster(spec)
    cluster.scale(jobs=spec.workers)
    return cluster


class Batcher:
    """Splits runs, in order, into batches of about ``target_s`` seconds of estimated work.

    A run's cost is estimated as the mean wall time of its configuration's finished runs; a run
    of a configuration with none finished yet counts as the costliest mean seen so far (so that
    a batch of an unmeasured, larger configuration stays near the target); before any run has
    finished, a batch is one run. Towards the end a batch takes at most the remaining work
    shared out over ``IN_FLIGHT_PER_WORKER`` × workers tasks (guided self-scheduling), so that the
    last tasks spread over every worker, but at least :data:`MIN_TASK_S`. Every batch holds at
    least one run."""

    def __init__(self, tasks: Sequence[Task], target_s: float = TASK_TARGET_S):
        self.pending: deque[Task] = deque(tasks)
        self.target_s = target_s
        self._sum: dict[str, float] = {}
        self._count: dict[str, int] = {}
        self._total = 0.0
        self._finished = 0
        self._costliest: float | None = None  # the largest configuration mean, kept up to date
        self._argmax = ""  # ... and its configuration

    def observe(self, cid: str, wall_s: float) -> None:
        """A run of configuration ``cid`` finished in ``wall_s`` seconds."""
        self._sum[cid] = self._sum.get(cid, 0.0) + wall_s
        self._count[cid] = self._count.get(cid, 0) + 1
        self._total += wall_s
        self._finished += 1
        mean = self._sum[cid] / self._count[cid]
        if self._costliest is None or mean >= self._costliest:
            self._costliest, self._argmax = mean, cid
        elif cid == self._argmax:  # the costliest configuration's mean fell: find the largest again
            self._costliest, self._argmax = max((self._sum[c] / self._count[c], c) for c in self._count)

    def estimate(self, cid: str) -> float | None:
        """A run's estimated seconds (None before any run has finished)."""
        if cid in self._count:
            return self._sum[cid] / self._count[cid]
        return self._costliest

    def next(self, workers: int) -> list[Task]:
        """The next batch (empty when no run is left)."""
        if not self.pending:
            return []
        if not self._finished:
            return [self.pending.popleft()]
        mean = self._total / self._finished
        share = len(self.pending) * mean / (IN_FLIGHT_PER_WORKER * max(1, workers))
        limit = max(MIN_TASK_S, min(self.target_s, share))
        batch = [self.pending.popleft()]
        work = self.estimate(batch[0][0]) or 0.0
        while self.pending:
            cost = self.estimate(self.pending[0][0]) or 0.0
            if work + cost > limit:
                break
            batch.append(self.pending.popleft())
            work += cost
        return batch


@dataclass
class Batch:
    """A task's runs, wrapped: Dask walks lists and tuples among a task's arguments for
    references to other tasks (dask/_task_spec.py, ``parse_input``), an object it passes whole."""

    runs: list[Task]


def run_batch(timed: Callable, runner: Callable, batch: Batch | list[Task], plugin_timeout: float | None) -> list[tuple]:
    """A Dask task: the batch's runs one after another, each as ``timed(runner, task)`` (runner._timed:
    a run's failure is its result). Module-level so that workers can import it."""
    if plugin_timeout is not None:
        from .supervise import set_plugin_timeout  # lazy: plug-ins only

        set_plugin_timeout(plugin_timeout)
    return [timed(runner, t) for t in (batch.runs if isinstance(batch, Batch) else batch)]


def dask_batches(timed: Callable, runner: Callable, tasks: list[Task], cluster: Any,
                 plugin_timeout: float | None = None) -> Generator[list, None, None]:
    """Yields lists of finished runs (``timed``'s tuples) as batches come back from the cluster.
    Keeps :data:`IN_FLIGHT_PER_WORKER` tasks per worker thread submitted, sizing each from the
    work measured so far (:class:`Batcher`). Closed early, it cancels the tasks in flight."""
    client, close = connect(cluster)
    futures: dict = {}  # in flight → its number of runs
    try:
        from distributed import as_completed  # lazy: optional extra

        batcher = Batcher(tasks)
        done = as_completed()

        def fill() -> None:
            workers = max(1, sum(client.nthreads().values()))
            while batcher.pending and len(futures) < IN_FLIGHT_PER_WORKER * workers:
                batch = Batch(batcher.next(workers))
                f = client.submit(run_batch, timed, runner, batch, plugin_timeout, pure=False)
                futures[f] = len(batch.runs)
                done.add(f)

        fill()
        for finished in done.batches():
            results = []
            for f in finished:
                try:
                    results.extend(f.result())
                except Exception as e:  # noqa: BLE001 - a worker lost (KilledWorker), a task not run
                    raise ResourceError(f"--cluster: a batch of {futures[f]} runs failed on the cluster "
                                        f"({type(e).__name__}: {(str(e).splitlines() or [''])[0]}); the runs stored "
                                        "before are kept: re-run the same command to resume") from None
                del futures[f]
                f.release()
            for cid, _, _, _, wall in results:
                batcher.observe(cid, wall)
            fill()
            yield results
    finally:
        if futures:
            client.cancel(list(futures))
        close()

