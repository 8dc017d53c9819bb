"""`coaplab check-algorithm`: a property suite for a candidate algorithm (Python or C), run
through :func:`coaplab.replay` on generated scripts. Apart from :mod:`.algorithm`, which it
imports with :mod:`.capi` and :mod:`.replay`, so that those three do not import each other."""

from __future__ import annotations

import random
from typing import Any

from .. import _core
from ..errors import ScriptError
from .algorithm import PREFIX, Algorithm, plugin_call
from .capi import is_foreign, load_foreign
from .replay import replay

#: Largest timer the property suite accepts by default (s): the shared 60 s cap (RFC 7252 has
#: none; ``crates/cc/src/config.rs`` MAX_TIMER).
DEFAULT_TIMER_CAP = 60.0
#: Most generated scripts (``--scripts``): the scripts are generated before the first replay
#: (≈ 0.6 kB each), and 100 000 already take hours to replay.
MAX_SCRIPTS = 100_000


def subject_name(spec: str) -> str:
    """``FILE:CLASS`` as ``python:FILE:CLASS``; ``python:…`` and ``c:…`` as they are."""
    return spec if is_foreign(spec) else PREFIX + spec


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
    loaded = load_foreign(subject_name(spec))

    def subject() -> Algorithm | str:
        # A C algorithm is replayed by its name (the engine loads and drives it); a Python one
        # as a fresh instance of its class.
        if isinstance(loaded, str):
            return loaded
        with plugin_call():
            return loaded()
    if compare is not None and compare not in _core.algorithms():
        raise ValueError(f"--compare: unknown algorithm {compare!r}; valid names: {', '.join(_core.algorithms())}")
    failures: list[str] = []

    def attempt(script: list[dict[str, Any]], dither: bool, seed: int) -> tuple[list[dict[str, Any]] | None, str]:
        """One replay of a fresh subject: (output, "") or (None, the error) — an exception of the
        algorithm (ScriptError) or of its constructor, however rarely it raises."""
        try:
            return replay(subject(), script, dither=dither, seed=seed, max_retransmit=max_retransmit), ""
        except ScriptError as e:
            return None, str(e)
        except Exception as e:  # noqa: BLE001 - the user's constructor: any error is a FAIL line
            return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"

    def fail(prop: str, i: int, what: str) -> None:
        failures.append(f"property '{prop}' failed on generated script {i} (--seed {seed}): {what}")

    for i, script in enumerate(generate_scripts(scripts, seed, max_retransmit)):
        for dither in (False, True):
            mode = f"dither {'on' if dither else 'off'}"
            out, error = attempt(script, dither, seed + i)
            if out is None:
                fail("no exceptions", i, f"{mode}: {error}")
                break
            bad = next(((j, t) for j, r in enumerate(out) for t in r["timers"] + [r["rto_after"]]
                        if not 0 < t <= cap), None)
            if bad is not None:
                fail("timers within bounds", i, f"{mode}: exchange {bad[0]} has a timer or base RTO of "
                     f"{bad[1]!r} s; allowed > 0 and <= {cap:g} s")
            again, error = attempt(script, dither, seed + i)
            if again is None:  # raised on the second replay only: not deterministic either
                fail("no exceptions", i, f"{mode}, replayed again: {error}")
                break
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
