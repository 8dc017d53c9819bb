"""Plug-ins (``python:FILE:CLASS``, ``c:LIB:NAME``) run in a supervised worker process.

Foreign code can crash (a segfault, ``abort()``), end the process (C ``exit()``, Python
``os._exit``), or never return (a loop, a ``sleep()``). None of that may take coaplab down
silently (issue #38, items 6 and 7): every call of a command that runs foreign code — a run
whose configuration names one, a replay, check-algorithm, the load of a scorecard's target —
executes in a worker process (``multiprocessing``'s ``spawn`` context) that this module
supervises. The worker's end becomes one line naming the plug-in and what it did
(:class:`PluginError`, exit status 1):

* ``python:x.py:Cls: the algorithm's process was killed by SIGSEGV during replication 3``
* ``c:./l.so:x: the algorithm's process exited with status 0 during replication 3``
* ``…: a call into the algorithm did not return within 10 s (--plugin-timeout); its process
  was ended``

The time limit is per call: the engine counts the calls into foreign code it starts and ends
(``crates/engine/src/foreign/calls.rs``, ``_core.plugin_calls``); the worker's watchdog
thread ends the process when a call has been in progress, with no other call started or
ended, for longer than the limit (:data:`DEFAULT_PLUGIN_TIMEOUT`, ``--plugin-timeout S``). A
call that holds Python's GIL so that the watchdog cannot run is caught from this side: the
watchdog's heartbeat stops, and the worker is killed after the limit plus a grace period.

Workers are reused (one per run thread): a sweep pays the start-up of a worker process
(≈ 0.3 s) once per thread, not per run; runs of built-in algorithms never leave the process.
A plug-in's ``print`` goes to stderr (the worker's stdout is its stderr), so that a command's
``--format json`` output on stdout stays JSON."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ..describe.scenario import set_plugin_loader
from ..errors import CoaplabError

#: The default per-call time limit for plug-ins, seconds (``--plugin-timeout``): far above any
#: decision an algorithm makes (microseconds) and any file it imports, short enough that a
#: hung plug-in ends a sweep's replication within seconds.
DEFAULT_PLUGIN_TIMEOUT = 10.0
#: Largest ``--plugin-timeout`` accepted, seconds (a day).
MAX_PLUGIN_TIMEOUT = 86_400.0
#: How long past the limit a worker whose watchdog has stopped (the GIL held) is killed, s.
GRACE_S = 5.0

_timeout = DEFAULT_PLUGIN_TIMEOUT
#: ``COAPLAB_PLUGIN_IN_PROCESS=1`` runs plug-ins in coaplab's own process, unsupervised (no time
#: limit, a crash is coaplab's): for a debugger, and to measure what supervision costs.
IN_PROCESS_ENV = "COAPLAB_PLUGIN_IN_PROCESS"


class PluginError(CoaplabError):
    """A plug-in crashed, ended its process or did not return within the time limit."""

    exit_code = 1


def set_plugin_timeout(seconds: float) -> None:
    """Sets the per-call time limit of the plug-ins this process runs from now on (seconds)."""
    global _timeout
    if not (0 < seconds <= MAX_PLUGIN_TIMEOUT):
        raise CoaplabError(f"--plugin-timeout: {seconds:g} is out of range; expected seconds > 0 and "
                           f"<= {MAX_PLUGIN_TIMEOUT:g}")
    _timeout = float(seconds)


def plugin_timeout() -> float:
    """The current per-call time limit of plug-ins, seconds."""
    return _timeout


def is_plugin(name: Any) -> bool:
    """Whether an algorithm name is a plug-in: ``python:FILE:CLASS`` or ``c:LIB:NAME``."""
    return isinstance(name, str) and name.startswith(("python:", "c:"))


def plugins_of(config: dict[str, Any]) -> list[str]:
    """The plug-ins a resolved configuration names as ``coap.cc`` (top level or groups), in order."""
    out: list[str] = []
    for population in [config, *(config.get("group") or [])]:
        cc = (population.get("coap") or {}).get("cc")
        if isinstance(cc, str) and is_plugin(cc) and cc not in out:
            out.append(cc)
    return out


# ----------------------------------------------------------------------------- worker side


def _watchdog(shared, limit: float, parent: int) -> None:
    """The worker's watchdog thread: a heartbeat in ``shared[0]``; a call in progress with no
    call started or ended for ``limit`` s sets ``shared[1]`` and ends the process. It also ends
    the worker once the coaplab process that started it is gone (it is then re-parented): a
    killed command leaves no worker behind, even one stuck in a plug-in. (Not
    ``PR_SET_PDEATHSIG``: Linux sends that when the *thread* that started the worker ends, and
    workers are started by run threads and reused by others.)"""
    from .. import _core  # lazy: the worker only

    last, since = None, time.monotonic()
    poll = min(0.25, limit / 4)
    while True:
        time.sleep(poll)
        if os.getppid() != parent:
            os._exit(4)
        now = time.monotonic()
        shared[0] = now
        counts = _core.plugin_calls()
        if counts != last:
            last, since = counts, now
        elif counts[0] != counts[1] and now - since > limit:
            shared[1] = 1.0
            os._exit(3)


def _portable(e: BaseException) -> BaseException:
    """An exception the parent can unpickle: itself, or a ValueError with its text."""
    if isinstance(e, (SystemExit, KeyboardInterrupt, GeneratorExit)):
        return ValueError(f"{type(e).__name__}: {e}")
    try:
        pickle.loads(pickle.dumps(e))
        return e
    except Exception:  # noqa: BLE001 - any exception type the user's code made
        return ValueError(str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}")


def _worker_main(conn, shared, limit: float) -> None:
    """The worker process: runs each ``(function, args)`` received and sends back
    ``("ok", result)`` or ``("raise", exception)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it kills the worker
    parent = os.getppid()
    sys.stdout.flush()
    os.dup2(2, 1)  # a plug-in's print goes to stderr: the command's stdout stays its output
    threading.Thread(target=_watchdog, args=(shared, limit, parent), daemon=True, name="coaplab-plugin-watchdog").start()
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[str, Any] = ("ok", fn(*args))
        except BaseException as e:  # noqa: BLE001 - everything goes back to the parent
            reply = ("raise", _portable(e))
        sys.stdout.flush()
        sys.stderr.flush()
        conn.send(reply)


def run_one(config_json: str, replication: int, pcap: str | None) -> str:
    """In a worker: one run (``_core.run_one``)."""
    from .. import _core  # lazy: the worker only

    return _core.run_one(config_json, replication, pcap)


def load_plugin(spec: str) -> None:
    """In a worker: loads and checks ``python:FILE:CLASS`` or ``c:LIB:NAME`` (``ValueError``,
    one line, if it cannot be loaded)."""
    from ..describe.capi import load_foreign  # lazy: the worker only

    load_foreign(spec)


def check_configs(texts: list[str]) -> tuple[int, str] | None:
    """In a worker: ``_core.check`` of each configuration (JSON text); the first refusal as
    (index, one line), or None."""
    from .. import _core  # lazy: the worker only

    for i, text in enumerate(texts):
        try:
            _core.check(text)
        except ValueError as e:
            return i, str(e)
    return None


# ----------------------------------------------------------------------------- parent side


class _Worker:
    def __init__(self, limit: float):
        ctx = multiprocessing.get_context("spawn")
        self.limit = limit
        self.shared = ctx.RawArray("d", 2)
        self.shared[0] = time.monotonic()
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, self.shared, limit), daemon=True,
                                name="coaplab-plugin")
        self.proc.start()
        child.close()

    def alive(self) -> bool:
        return self.proc.is_alive()

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()

    def call(self, label: str, during: str, fn: Callable, args: tuple) -> Any:
        self.shared[0] = time.monotonic()
        self.conn.send((fn, args))
        while True:
            if self.conn.poll(0.1):
                try:
                    kind, value = self.conn.recv()
                except (EOFError, OSError):
                    break
                if kind == "ok":
                    return value
                raise value
            if not self.proc.is_alive():
                break
            if time.monotonic() - self.shared[0] > self.limit + GRACE_S:
                self.kill()  # the watchdog stopped: a call holds the GIL
                raise PluginError(f"{label}: a call into the algorithm did not return within {self.limit:g} s "
                                  f"(--plugin-timeout){during}; its process was killed")
        self.proc.join(5)
        code = self.proc.exitcode
        self.conn.close()
        if self.shared[1]:
            what = f"a call into the algorithm did not return within {self.limit:g} s (--plugin-timeout){during}; its process was ended"
        elif code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            what = f"the algorithm's process was killed by {name}{during}"
        else:
            what = f"the algorithm's process exited with status {code}{during}"
        raise PluginError(f"{label}: {what}")


_lock = threading.Lock()
_idle: list[_Worker] = []
_live: set[_Worker] = set()


def supervised(label: str, during: str, fn: Callable, *args: Any) -> Any:
    """``fn(*args)`` in a supervised worker process (``fn`` importable by name: a module-level
    function or a ``_core`` function); its result, or the exception it raised. A worker that
    crashes, exits or exceeds the time limit is :class:`PluginError`, one line naming
    ``label`` and what happened, followed by ``during`` (" during replication 3")."""
    if os.environ.get(IN_PROCESS_ENV) == "1":
        return fn(*args)
    with _lock:
        worker = None
        while _idle:
            w = _idle.pop()
            if w.alive() and w.limit == _timeout:
                worker = w
                break
            w.kill()
            _live.discard(w)
        if worker is None:
            worker = _Worker(_timeout)
            _live.add(worker)
    ok = False
    try:
        result = worker.call(label, during, fn, args)
        ok = True
        return result
    except PluginError:
        raise
    except BaseException:
        ok = worker.alive() and not isinstance(sys.exc_info()[1], KeyboardInterrupt)
        raise
    finally:
        with _lock:
            if ok and worker in _live:
                _idle.append(worker)
            else:
                _live.discard(worker)
        if not ok:
            worker.kill()


def stop_all() -> None:
    """Kills every worker (an interrupted command: the runs in progress are not stored)."""
    with _lock:
        workers = list(_live)
        _live.clear()
        _idle.clear()
    for w in workers:
        try:
            w.kill()
        except Exception:  # noqa: BLE001, S110 - best effort while stopping
            pass


def plugin_run(config_json: str, replication: int, pcap: str | None) -> str:
    """One run (``coaplab.execute.runner.engine_run``'s signature): in a supervised worker when
    the configuration names a plug-in, in this process otherwise."""
    from .. import _core  # lazy: the extension

    if "python:" not in config_json and '"c:' not in config_json:
        return _core.run_one(config_json, replication, pcap)
    names = plugins_of(json.loads(config_json))
    if not names:
        return _core.run_one(config_json, replication, pcap)
    return supervised(" / ".join(names), f" during replication {replication}", run_one, config_json,
                      replication, pcap)


def check_plugin(spec: str) -> None:
    """Loads and checks a plug-in in a supervised worker (the scenario loader's, once this
    module is imported: foreign code never runs in the command's own process)."""
    supervised(spec, " while loading it", load_plugin, spec)


set_plugin_loader(check_plugin)
