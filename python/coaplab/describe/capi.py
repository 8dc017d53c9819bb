"""Algorithms in C, through the C API: ``coap.cc = "c:LIB:NAME"``.

``LIB`` is a shared library that exports the C API of ``docs/c-api.md`` (``coaplab_cc_init``,
``coaplab_cc_exchange_start``, ``coaplab_cc_timeout``, ``coaplab_cc_response``,
``coaplab_cc_base_rto``, with the structs of ``crates/cc-ffi/include/coaplab_cc.h``); ``NAME`` is
the algorithm name its ``coaplab_cc_init`` accepts. That is coaplab's own
``libcoaplab_cc_ffi.so`` (``cargo build --release -p coaplab-cc-ffi``), or a stack's own
implementation behind the same header, e.g. ``examples/algorithms/c/fixed_timer.c``.

The simulator drives it as it drives an algorithm written in Python (``coaplab.describe.algorithm``):
every client gets its own instance, which owns one ``coaplab_cc_state`` and one
``coaplab_cc_exchange`` per exchange in flight (caller-owned memory, as the C API asks), and
each callback becomes one C call through :mod:`ctypes`:

========================  ============================================================
``on_exchange_start``     ``coaplab_cc_exchange_start(now, outstanding, rng.next_u64())``
``next_timer(ex)``        ``coaplab_cc_timeout(ex.last_sent + ex.timer)`` → RETRANSMIT
``on_failure``            ``coaplab_cc_timeout(now)`` → FAILED
``on_response``           ``coaplab_cc_response(now, ordinal or -1, sent_at)``
``base_rto``              ``coaplab_cc_base_rto``
========================  ============================================================

The dithering word is the client's next 64-bit draw, the one word a built-in algorithm's single
draw per exchange start uses: ``c:libcoaplab_cc_ffi.so:cocoa`` therefore gives the summaries of
the built-in ``cocoa`` to the last digit (``tests/test_capi.py``). Times cross as integer
nanoseconds (``coaplab.describe.algorithm.ns``): exact.

ctypes, not a compiled adapter: the library is the user's, chosen at run time; a Python
algorithm's per-call cost (docs/algorithms.md) is the price, the same as for ``python:``.
"""

from __future__ import annotations

import ctypes as C
from pathlib import Path
from typing import Any

from .algorithm import PREFIX, Algorithm, Config, bind, load_class, maker_of, ns, secs

#: The prefix of a C algorithm's name: ``c:LIB:NAME``.
C_PREFIX = "c:"

#: ``COAPLAB_CC_STATE_WORDS`` / ``COAPLAB_CC_EXCHANGE_WORDS`` (``coaplab_cc.h``).
STATE_WORDS = 64
EXCHANGE_WORDS = 16
#: Return codes and sample kinds (``coaplab_cc.h``).
OK, RETRANSMIT, FAILED = 0, 1, 0
ANSWERED_UNKNOWN = -1
SAMPLE_KINDS = {0: "strong", 1: "weak", 2: "ambiguous", 3: "none"}
ERRORS = {-1: "COAPLAB_CC_ERR_NULL", -2: "COAPLAB_CC_ERR_UNKNOWN_ALGORITHM",
          -3: "COAPLAB_CC_ERR_NOT_INITIALIZED", -4: "COAPLAB_CC_ERR_BAD_CONFIG",
          -5: "COAPLAB_CC_ERR_OVERLAP", -6: "COAPLAB_CC_ERR_BUFFER_TOO_SMALL", -7: "COAPLAB_CC_ERR_INVALID"}

State = C.c_uint64 * STATE_WORDS
Exchange = C.c_uint64 * EXCHANGE_WORDS


class _Config(C.Structure):
    """``coaplab_cc_config``."""

    _fields_ = [("ack_timeout_ns", C.c_uint64), ("ack_random_factor_permille", C.c_uint64),
                ("max_retransmit", C.c_uint32), ("nstart", C.c_uint32),
                ("max_timer_ns", C.c_uint64), ("clock_granularity_ns", C.c_uint64)]


class _Sample(C.Structure):
    """``coaplab_cc_sample``."""

    _fields_ = [("kind", C.c_uint32), ("rtt_ns", C.c_uint64)]


_P = C.POINTER
#: Every function the simulator calls: (name, return type, argument types).
FUNCTIONS = (
    ("coaplab_cc_init", C.c_int32, [_P(State), C.c_char_p, _P(_Config)]),
    ("coaplab_cc_exchange_start", C.c_int32,
     [_P(State), C.c_uint64, C.c_uint32, C.c_uint64, _P(Exchange), _P(C.c_uint64)]),
    ("coaplab_cc_timeout", C.c_int32, [_P(State), C.c_uint64, _P(Exchange), _P(C.c_uint64)]),
    ("coaplab_cc_response", C.c_int32,
     [_P(State), C.c_uint64, _P(Exchange), C.c_int64, C.c_uint64, _P(_Sample)]),
    ("coaplab_cc_base_rto", C.c_int32, [_P(State), _P(C.c_uint64)]),
)

_LIBRARIES: dict[str, Any] = {}
_CLASSES: dict[str, type[CAlgorithm]] = {}


def _bad(spec: str, what: str) -> ValueError:
    return ValueError(f"{spec!r}: {what}; expected c:LIB:NAME with LIB a shared library exporting the "
                      "C API of docs/c-api.md and NAME an algorithm its coaplab_cc_init accepts")


def _library(spec: str, path: str) -> Any:
    file = Path(path)
    if not file.exists():
        raise _bad(spec, f"library {path!r} not found")
    if not file.is_file():
        raise _bad(spec, f"{path!r} is not a regular file")
    key = str(file.resolve())
    if key not in _LIBRARIES:
        try:
            lib = C.CDLL(key)
        except OSError as e:
            raise _bad(spec, f"{path!r} cannot be loaded as a shared library ({str(e).splitlines()[0]})") from None
        for name, restype, argtypes in FUNCTIONS:
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise _bad(spec, f"{path!r} does not export {name}") from None
            fn.restype, fn.argtypes = restype, argtypes
        _LIBRARIES[key] = lib
    return _LIBRARIES[key]


def _check(spec: str, call: str, rc: int) -> int:
    if rc < 0:
        raise RuntimeError(f"{spec}: {call} returned {rc} ({ERRORS.get(rc, 'an unknown error')})")
    return rc


class CAlgorithm(Algorithm):
    """An algorithm implemented in C behind the C API (one instance per client)."""

    #: Set on the subclass :func:`load_c_class` makes.
    spec: str = ""
    lib: Any = None
    algorithm: bytes = b""

    def reset(self) -> None:
        c = self.config
        cfg = _Config(ns(c.ack_timeout), c.ack_random_factor_permille, c.max_retransmit, c.nstart,
                      ns(c.max_timer), ns(c.clock_granularity))
        self._state = State()
        _check(self.spec, "coaplab_cc_init", self.lib.coaplab_cc_init(self._state, self.algorithm, cfg))
        #: The exchanges in flight, by (start, T_0) in ns, each ``[exchange, k, last_sent, T_k]``:
        #: two exchanges of one client may share start and T_0 (NSTART > 1, no dithering); then
        #: they are told apart by retransmissions, last send and timer, and where those agree
        #: too their C exchanges hold the same bytes, so either serves.
        self._exchanges: dict[tuple[int, int], list[list[Any]]] = {}

    def _find(self, ex, remove: bool) -> list[Any]:
        key = (ns(ex.started), ns(ex.initial_timer))
        want = (ex.retransmissions, ns(ex.last_sent), ns(ex.timer))
        entries = self._exchanges.get(key, [])
        for i, e in enumerate(entries):
            if (e[1], e[2], e[3]) == want:
                if remove:
                    del entries[i]
                    if not entries:
                        del self._exchanges[key]
                return e
        raise RuntimeError(f"{self.spec}: no exchange in flight matches {ex!r}")

    def on_exchange_start(self, now: float, outstanding: int, rng) -> float:
        ex, timer = Exchange(), C.c_uint64()
        _check(self.spec, "coaplab_cc_exchange_start",
               self.lib.coaplab_cc_exchange_start(self._state, ns(now), outstanding, rng.next_u64(), ex, C.byref(timer)))
        self._exchanges.setdefault((ns(now), timer.value), []).append([ex, 0, ns(now), timer.value])
        return secs(timer.value)

    def next_timer(self, ex) -> float:
        e = self._find(ex, remove=False)
        now = ns(ex.last_sent) + ns(ex.timer)
        timer = C.c_uint64()
        rc = _check(self.spec, "coaplab_cc_timeout", self.lib.coaplab_cc_timeout(self._state, now, e[0], C.byref(timer)))
        if rc != RETRANSMIT:
            raise RuntimeError(f"{self.spec}: coaplab_cc_timeout answered FAILED after {ex.k} retransmissions, "
                               f"below MAX_RETRANSMIT {self.config.max_retransmit}")
        e[1:] = [ex.retransmissions + 1, now, timer.value]
        return secs(timer.value)

    def on_failure(self, now: float, ex) -> None:
        e = self._find(ex, remove=True)
        timer = C.c_uint64()
        rc = _check(self.spec, "coaplab_cc_timeout", self.lib.coaplab_cc_timeout(self._state, ns(now), e[0], C.byref(timer)))
        if rc != FAILED:
            raise RuntimeError(f"{self.spec}: coaplab_cc_timeout answered RETRANSMIT after MAX_RETRANSMIT "
                               f"{self.config.max_retransmit} retransmissions")

    def on_response(self, now: float, ex, answered) -> tuple[str, float | None] | None:
        e = self._find(ex, remove=True)
        ordinal, sent_at = (answered[0], ns(answered[1])) if answered is not None else (ANSWERED_UNKNOWN, 0)
        sample = _Sample()
        _check(self.spec, "coaplab_cc_response",
               self.lib.coaplab_cc_response(self._state, ns(now), e[0], ordinal, sent_at, C.byref(sample)))
        kind = SAMPLE_KINDS.get(sample.kind)
        if kind is None:
            raise RuntimeError(f"{self.spec}: coaplab_cc_response wrote sample kind {sample.kind}; allowed 0-3")
        return kind, (None if kind == "none" else secs(sample.rtt_ns))

    def base_rto(self) -> float:
        rto = C.c_uint64()
        _check(self.spec, "coaplab_cc_base_rto", self.lib.coaplab_cc_base_rto(self._state, C.byref(rto)))
        return secs(rto.value)

    def __deepcopy__(self, memo: dict) -> CAlgorithm:
        # The C state is plain data (no pointers, docs/c-api.md): a byte copy is a full copy.
        other = type(self).__new__(type(self))
        other.config = self.config
        other._state = State.from_buffer_copy(self._state)
        other._exchanges = {k: [[Exchange.from_buffer_copy(e[0]), *e[1:]] for e in v]
                            for k, v in self._exchanges.items()}
        return other


def load_c_class(spec: str) -> type[CAlgorithm]:
    """``c:LIB:NAME`` → a :class:`CAlgorithm` subclass bound to that library and name (loaded
    once per process). Raises ``ValueError`` with one line naming what is wrong."""
    if spec in _CLASSES:
        return _CLASSES[spec]
    path, sep, name = spec.removeprefix(C_PREFIX).rpartition(":")
    if not spec.startswith(C_PREFIX) or not sep or not path or not name:
        raise _bad(spec, "not of the form c:LIB:NAME")
    lib = _library(spec, path)
    cls = type(f"C_{name}", (CAlgorithm,), {"spec": spec, "lib": lib, "algorithm": name.encode()})
    try:
        bind(cls(), Config())
    except RuntimeError as e:
        raise _bad(spec, f"{name!r} was refused by coaplab_cc_init ({str(e).split(' returned ')[-1]})") from None
    _CLASSES[spec] = cls
    return cls


def _maker(spec: str):
    """Called by the Rust side for ``coap.cc = "c:LIB:NAME"`` (as ``coaplab.describe.algorithm._maker`` is
    for ``python:``): returns ``make(ack_timeout_s, permille, max_retransmit, nstart, max_timer_s,
    granularity_s)``."""
    cls = load_c_class(spec)
    make = maker_of(cls)

    # FASOR's Rexmit-Cnt echo (`fasor-rc`), if the library says its algorithm needs it.
    try:
        needs = cls.lib.coaplab_cc_needs_rexmit_count
    except AttributeError:  # optional in the C API
        needs = None
    if needs is not None:
        needs.restype, needs.argtypes = C.c_int32, [C.c_char_p]
    make.needs_rexmit_count = needs is not None and needs(cls.algorithm) == 1  # type: ignore[attr-defined]
    return make


def is_foreign(spec: str) -> bool:
    """Whether ``spec`` names an algorithm outside the registry: ``python:FILE:CLASS`` or
    ``c:LIB:NAME``."""
    return spec.startswith((PREFIX, C_PREFIX))


def load_foreign(spec: str) -> type[Algorithm]:
    """The class of ``python:FILE:CLASS`` or ``c:LIB:NAME`` (``ValueError``, one line, if it
    cannot be loaded)."""
    return load_c_class(spec) if spec.startswith(C_PREFIX) else load_class(spec)


def instance_of(algorithm: Any) -> tuple[Algorithm, str] | None:
    """An :class:`Algorithm` instance (or a ``python:FILE:CLASS`` / ``c:LIB:NAME`` name) →
    (instance, label); other values → ``None``."""
    if isinstance(algorithm, Algorithm):
        return algorithm, type(algorithm).__name__
    if isinstance(algorithm, str) and is_foreign(algorithm):
        return load_foreign(algorithm)(), algorithm  # python:FILE:CLASS, or C through the C API
    return None
