"""Algorithms written in Python: subclass :class:`Algorithm`.

An algorithm decides the retransmission timers of one client's CON exchanges (RFC 7252 §4.2).
The methods mirror the Rust ``Controller`` trait (``crates/cc/src/controller.rs``); override
what your algorithm changes, the defaults are RFC 7252 §4.2 without state between exchanges.

Contract:

* ``__init__`` takes no arguments. Before the first exchange coaplab sets ``self.config``
  (a :class:`Config`) and calls :meth:`reset`, so **initialise your state in reset()**.
  In the simulator every client gets its own instance.
* Times are ``float`` seconds. Going back to Rust they are rounded to the nearest nanosecond;
  times coming from Rust are ``ns / 1e9`` (exact below 2^53 ns). To match a Rust algorithm bit
  for bit, compute in integer nanoseconds (:func:`ns`) and return ``ns / 1e9`` (:func:`secs`).
* Dithering draws come from the ``rng`` passed to :meth:`on_exchange_start` /
  :meth:`initial_timer` (``rng.uniform(lo, hi)``, ``rng.unit()``, ``rng.next_u64()``), which
  is the client's own deterministic stream (or "dithering off" in a replay: ``uniform``
  returns ``lo``). Never use ``random``: results must not depend on anything else.
* Every timer you return is floored at ``config.clock_granularity`` (1 ms) by coaplab.

Use it with ``coaplab.replay(MyAlgo(), script)``, ``coaplab replay --algorithm-file
my.py:MyAlgo script.json``, ``coaplab check-algorithm my.py:MyAlgo`` or in a scenario as
``coap.cc = "python:my.py:MyAlgo"``. See ``docs/algorithms.md`` ("Algorithms written in
Python") and ``examples/algorithms/cocoa_py.py``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..files import length_problem, shown
from .schema import section_defaults

__all__ = ["PREFIX", "Algorithm", "Config", "load_class", "ns", "secs"]

#: The prefix of a Python algorithm's name in ``coap.cc``: ``python:FILE:CLASS``.
PREFIX = "python:"


def ns(seconds: float) -> int:
    """Seconds → integer nanoseconds, rounded to nearest (as coaplab converts)."""
    return int(seconds * 1e9 + 0.5) if seconds * 1e9 + 0.5 >= 1.0 else 0


def secs(nanoseconds: int) -> float:
    """Integer nanoseconds → seconds, exactly as coaplab converts (``ns / 1e9``)."""
    return nanoseconds / 1e9


#: The engine's defaults of ``coap.*`` (a Python algorithm's configuration when none is given).
_COAP_DEFAULTS = section_defaults("coap")


@dataclass(frozen=True)
class Config:
    """RFC 7252 §4.8 transmission parameters of the run (``coap.*`` of the scenario)."""

    ack_timeout: float = _COAP_DEFAULTS["ack_timeout_s"]
    #: ``ACK_RANDOM_FACTOR`` in per-mille (1500 = 1.5), integer as the Rust side keeps it.
    ack_random_factor_permille: int = round(_COAP_DEFAULTS["ack_random_factor"] * 1000)
    max_retransmit: int = _COAP_DEFAULTS["max_retransmit"]
    nstart: int = _COAP_DEFAULTS["nstart"]
    #: Timer cap of the non-CoCoA families (``coap.max_timer_s``).
    max_timer: float = _COAP_DEFAULTS["max_timer_s"]
    clock_granularity: float = 0.001

    @property
    def ack_random_factor(self) -> float:
        return self.ack_random_factor_permille / 1000

    def randomized(self, value: float) -> float:
        """``value · ACK_RANDOM_FACTOR`` truncated to the ns, as the Rust ``Config::randomized``."""
        return secs(ns(value) * self.ack_random_factor_permille // 1000)


class Algorithm:
    """Base class of an algorithm written in Python. Override what your algorithm changes.

    The ``ex`` argument is a read-only exchange: ``started``, ``last_sent`` (s),
    ``retransmissions`` (alias ``k``), ``initial_timer`` (``T_0``) and ``timer`` (``T_k``, s).
    """

    config: Config = Config()

    def reset(self) -> None:
        """Forget everything learned (also called once before the first exchange). Default: nothing."""

    def on_exchange_start(self, now: float, outstanding: int, rng) -> float:
        """A new exchange's transmission 0 is sent at ``now`` while ``outstanding`` others are in
        flight; returns ``T_0`` (s). Default: :meth:`initial_timer`."""
        return self.initial_timer(now, rng)

    def initial_timer(self, now: float, rng) -> float:
        """``T_0`` (s). Default (RFC 7252 §4.2): uniform in ``[ACK_TIMEOUT, ACK_TIMEOUT·ACK_RANDOM_FACTOR]``
        capped at ``config.max_timer``."""
        c = self.config
        return min(rng.uniform(c.ack_timeout, c.randomized(c.ack_timeout)), c.max_timer)

    def next_timer(self, ex) -> float:
        """``T_{k+1}`` after ``T_k = ex.timer`` expired (s). Default: ``min(2·T_k, max_timer)``."""
        return secs(min(2 * ns(ex.timer), ns(self.config.max_timer)))

    def on_failure(self, now: float, ex) -> None:
        """The exchange failed at ``now`` after ``MAX_RETRANSMIT`` retransmissions. Default: nothing."""

    def on_response(self, now: float, ex, answered) -> tuple[str, float | None] | None:
        """The response to ``ex`` arrived at ``now`` after ``ex.k`` retransmissions. ``answered``
        is ``(ordinal, sent_at)`` when the endpoint knows which transmission it answers (replay
        always does), else ``None``. Returns the RTT sample taken: ``(kind, rtt_s)`` with kind
        ``"strong"``, ``"weak"``, ``"ambiguous"`` or ``"none"``, or ``None`` (no sample). Default: ``None``."""
        return None

    def base_rto(self) -> float:
        """Base of the next exchange before aging and dithering (the replay's ``rto_after``).
        Default: ``ACK_TIMEOUT``."""
        return self.config.ack_timeout

    def state(self) -> dict[str, float | str | None]:
        """Algorithm-specific state for replay output and traces, in a fixed order. Default: empty."""
        return {}


@contextlib.contextmanager
def plugin_call() -> Iterator[None]:
    """Counts the Python front's own call into a plug-in (importing its file, constructing or
    resetting its class) as a call into foreign code, so that the plug-in time limit covers it
    (``coaplab.execute.supervise``; the engine counts its own calls)."""
    from .. import _core  # lazy: the extension (this module is imported by the package itself)

    _core.plugin_enter()
    try:
        yield
    finally:
        _core.plugin_leave()


def bind(obj: Algorithm, config: Config) -> Algorithm:
    obj.config = config
    obj.reset()
    return obj


_CLASSES: dict[str, type] = {}


def _bad(spec: str, what: str) -> ValueError:
    return ValueError(f"{spec!r}: {what}; expected python:FILE.py:CLASS with CLASS a subclass of coaplab.Algorithm")


def load_class(spec: str) -> type:
    """``[python:]FILE:CLASS`` → the class (loaded once per process). Raises ``ValueError``
    with one line naming what is wrong."""
    body = spec.removeprefix(PREFIX)
    path, sep, name = body.rpartition(":")
    try:  # a file edited since it was loaded is loaded again (its content is in config_id)
        st = os.stat(path)
        key = f"{spec}\0{st.st_size}\0{st.st_mtime_ns}"
    except OSError:
        key = spec
    if key in _CLASSES:
        return _CLASSES[key]
    if not sep or not path or not name:
        raise _bad(spec, "not of the form FILE:CLASS")
    file = Path(path)
    if (too_long := length_problem(path)) is not None:
        raise ValueError(f"{shown(spec)}: {too_long}; expected python:FILE.py:CLASS")
    if file.is_dir():
        raise _bad(spec, f"{path!r} is a directory; expected a Python file")
    if not file.exists():
        raise _bad(spec, f"file {path!r} not found")
    if not file.is_file():
        raise _bad(spec, f"{path!r} is not a regular file; expected a Python file")
    module_name = f"coaplab_user_algorithm_{len(_CLASSES)}_{file.stem}"
    try:
        module_spec = importlib.util.spec_from_file_location(module_name, file)
        if module_spec is None or module_spec.loader is None:
            raise ImportError("not a Python file")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        with plugin_call():
            module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # noqa: BLE001 - the user's file: any error (sys.exit too) is one line
        sys.modules.pop(module_name, None)
        first = str(e).splitlines()[0] if str(e) else ""
        raise _bad(spec, f"loading {path!r} raised {type(e).__name__}: {first}") from None
    cls = getattr(module, name, None)
    if cls is None:
        raise _bad(spec, f"{path!r} defines no {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Algorithm)):
        raise _bad(spec, f"{name!r} is not a subclass of coaplab.Algorithm")
    try:
        with plugin_call():
            cls()
    except (Exception, SystemExit) as e:  # noqa: BLE001 - the user's constructor: any error is one line
        raise _bad(spec, f"{name}() raised {type(e).__name__}: {e}") from None
    _CLASSES[key] = cls
    return cls


def maker_of(cls: type[Algorithm], label: str | None = None):
    """``make(ack_timeout_s, permille, max_retransmit, nstart, max_timer_s, granularity_s)``: a
    configured instance of ``cls`` per call (one per simulated client). An exception in
    ``reset()`` is one line naming ``label.reset`` (one in the constructor, ``__init__``)."""
    name = label or cls.__name__

    def make(ack_timeout: float, permille: int, max_retransmit: int, nstart: int, max_timer: float,
             granularity: float) -> Algorithm:
        obj = cls()
        try:
            return bind(obj, Config(ack_timeout, permille, max_retransmit, nstart, max_timer, granularity))
        except Exception as e:
            first = str(e).splitlines()[0] if str(e) else ""
            raise ValueError(f"{name}.reset raised {type(e).__name__}: {first}") from e

    return make


def _maker(spec: str):
    """Called by the Rust side for ``coap.cc = "python:FILE:CLASS"``: :func:`maker_of` its class."""
    return maker_of(load_class(spec), spec)
