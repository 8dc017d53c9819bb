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

import importlib.util
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import ScriptError

__all__ = ["PREFIX", "Algorithm", "Config", "load_class", "ns", "secs"]

#: The prefix of a Python algorithm's name in ``coap.cc``: ``python:FILE:CLASS``.
PREFIX = "python:"


def ns(seconds: float) -> int:
    """Seconds → integer nanoseconds, rounded to nearest (as coaplab converts)."""
    return int(seconds * 1e9 + 0.5) if seconds * 1e9 + 0.5 >= 1.0 else 0


def secs(nanoseconds: int) -> float:
    """Integer nanoseconds → seconds, exactly as coaplab converts (``ns / 1e9``)."""
    return nanoseconds / 1e9


@dataclass(frozen=True)
class Config:
    """RFC 7252 §4.8 transmission parameters of the run (``coap.*`` of the scenario)."""

    ack_timeout: float = 2.0
    #: ``ACK_RANDOM_FACTOR`` in per-mille (1500 = 1.5), integer as the Rust side keeps it.
    ack_random_factor_permille: int = 1500
    max_retransmit: int = 4
    nstart: int = 1
    #: Timer cap of the non-CoCoA families (``coap.max_timer_s``).
    max_timer: float = 60.0
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


def _bind(obj: Algorithm, config: Config) -> Algorithm:
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
    if spec in _CLASSES:
        return _CLASSES[spec]
    path, sep, name = body.rpartition(":")
    if not sep or not path or not name:
        raise _bad(spec, "not of the form FILE:CLASS")
    file = Path(path)
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
        module_spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - the user's file: any error is reported as one line
        sys.modules.pop(module_name, None)
        first = str(e).splitlines()[0] if str(e) else ""
        raise _bad(spec, f"loading {path!r} raised {type(e).__name__}: {first}") from None
    cls = getattr(module, name, None)
    if cls is None:
        raise _bad(spec, f"{path!r} defines no {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Algorithm)):
        raise _bad(spec, f"{name!r} is not a subclass of coaplab.Algorithm")
    try:
        cls()
    except Exception as e:  # noqa: BLE001 - the user's constructor: any error is one line
        raise _bad(spec, f"{name}() raised {type(e).__name__}: {e}") from None
    _CLASSES[spec] = cls
    return cls


def maker_of(cls: type[Algorithm]):
    """``make(ack_timeout_s, permille, max_retransmit, nstart, max_timer_s, granularity_s)``: a
    configured instance of ``cls`` per call (one per simulated client)."""

    def make(ack_timeout: float, permille: int, max_retransmit: int, nstart: int, max_timer: float,
             granularity: float) -> Algorithm:
        return _bind(cls(), Config(ack_timeout, permille, max_retransmit, nstart, max_timer, granularity))

    return make


def _maker(spec: str):
    """Called by the Rust side for ``coap.cc = "python:FILE:CLASS"``: :func:`maker_of` its class."""
    return maker_of(load_class(spec))


def instance_of(algorithm: Any) -> tuple[Algorithm, str] | None:
    """An :class:`Algorithm` instance (or a ``python:FILE:CLASS`` / ``c:LIB:NAME`` name) →
    (instance, label); other values → ``None``."""
    from .capi import is_foreign, load_foreign  # lazy: capi imports this module (cycle)

    if isinstance(algorithm, Algorithm):
        return algorithm, type(algorithm).__name__
    if isinstance(algorithm, str) and is_foreign(algorithm):
        return load_foreign(algorithm)(), algorithm  # python:FILE:CLASS, or C through the C API
    return None


# ---------------------------------------------------------------------------------------------
# `coaplab check-algorithm`: a property suite for a candidate algorithm.

#: Largest timer the property suite accepts by default (s): the shared 60 s cap (RFC 7252 has
#: none; ``crates/cc/src/config.rs`` MAX_TIMER).
DEFAULT_TIMER_CAP = 60.0


def generate_scripts(count: int, seed: int, max_retransmit: int) -> list[list[dict[str, Any]]]:
    """``count`` replay scripts drawn deterministically from ``seed``: 1–40 exchanges each, idle
    gaps from none to 20 min (aging), 0 to ``max_retransmit + 1`` lost transmissions (so some
    exchanges fail) and RTTs from 1 ms to 20 s, times rounded to the microsecond."""
    rnd = random.Random(seed)
    scripts = []
    for _ in range(count):
        t, script = 0.0, []
        for _ in range(rnd.randint(1, 40)):
            lost = rnd.choice([0, 0, 0, 0, 1, 1, 2, 3, rnd.randint(0, max_retransmit + 1)])
            rtt = rnd.choice([rnd.uniform(0.001, 0.5), rnd.uniform(0.5, 4.0), rnd.uniform(4.0, 20.0)])
            script.append({"start": round(t, 6), "lost": lost, "rtt": round(rtt, 6)})
            # The next exchange starts after this one ends at the latest possible time (every
            # timer at the cap), plus an idle gap.
            t += (max_retransmit + 1) * DEFAULT_TIMER_CAP + rtt + rnd.choice([0.0, rnd.uniform(0, 30), rnd.uniform(0, 1200)])
        scripts.append(script)
    return scripts


def check_algorithm(spec: str, compare: str | None = None, scripts: int = 50, seed: int = 0,
                    max_retransmit: int = 4, cap: float = DEFAULT_TIMER_CAP) -> list[str]:
    """Runs the property suite on ``spec`` (``FILE:CLASS``, ``python:FILE:CLASS`` or
    ``c:LIB:NAME``); returns the failures, one line each (empty = every property holds). Raises
    ``ValueError`` for bad input (file, class, library, ``compare`` name)."""
    from .capi import is_foreign, load_foreign  # lazy: capi imports this module (cycle)
    from .replay import replay  # lazy: replay imports this module (cycle)

    cls = load_foreign(spec if is_foreign(spec) else PREFIX + spec)
    if compare is not None and compare not in _core.algorithms():
        raise ValueError(f"--compare: unknown algorithm {compare!r}; valid names: {', '.join(_core.algorithms())}")
    failures: list[str] = []

    def fail(prop: str, i: int, what: str) -> None:
        failures.append(f"property '{prop}' failed on generated script {i} (--seed {seed}): {what}")

    for i, script in enumerate(generate_scripts(scripts, seed, max_retransmit)):
        for dither in (False, True):
            mode = f"dither {'on' if dither else 'off'}"
            try:
                out = replay(cls(), script, dither=dither, seed=seed + i, max_retransmit=max_retransmit)
            except ScriptError as e:
                fail("no exceptions", i, f"{mode}: {e}")
                break
            bad = next(((j, t) for j, r in enumerate(out) for t in r["timers"] + [r["rto_after"]]
                        if not 0 < t <= cap), None)
            if bad is not None:
                fail("timers within bounds", i, f"{mode}: exchange {bad[0]} has a timer or base RTO of "
                     f"{bad[1]!r} s; allowed > 0 and <= {cap:g} s")
            again = replay(cls(), script, dither=dither, seed=seed + i, max_retransmit=max_retransmit)
            if again != out:
                j = next(j for j, (a, b) in enumerate(zip(out, again)) if a != b)
                fail("determinism", i, f"{mode}: replaying the same script twice differs at exchange {j}")
            if compare is not None:
                ref = replay(compare, script, dither=dither, seed=seed + i, max_retransmit=max_retransmit)
                # An algorithm that reports no state (`state()` empty, as every C algorithm: the C
                # API keeps its state opaque) is compared on everything else.
                ref = [b if a["state"] else {**b, "state": {}} for a, b in zip(out, ref)]
                diff = next(((j, a, b) for j, (a, b) in enumerate(zip(out, ref)) if a != b), None)
                if diff is not None:
                    j, a, b = diff
                    key = next(k for k in b if a.get(k) != b[k])
                    fail(f"equal to {compare}", i, f"{mode}: exchange {j} field {key!r}: {a.get(key)!r} vs {b[key]!r}")
        if len(failures) >= 10:
            break
    return failures
