"""Replay (SPEC §3.2): drive one algorithm through a script of exchanges, no network.

A script is a JSON list of exchanges ``{"start": s, "lost": n, "rtt": s}``: the first ``n``
transmissions get no response and transmission ``n`` is answered ``rtt`` seconds after it was
sent. Validation happens here, before the single call into the Rust engine.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .errors import ScriptError

#: RFC 7252 §4.8 MAX_RETRANSMIT default.
DEFAULT_MAX_RETRANSMIT = 4
#: Largest accepted MAX_RETRANSMIT (timers beyond it are all at the cap anyway).
MAX_MAX_RETRANSMIT = 1000
#: Largest accepted time value in a script, seconds (≈ 31 years; keeps nanoseconds in u64).
MAX_SECONDS = 1e9

_FIELDS = ("start", "lost", "rtt")


def load_script(path: str | Path) -> list[dict[str, Any]]:
    """Reads and validates a replay script file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ScriptError(f"cannot read script {str(path)!r}: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScriptError(f"{path}: not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    return validate_script(data)


def _number(index: int, field: str, value: Any, *, integer: bool) -> float | int:
    kind = "a non-negative integer" if integer else "a non-negative number of seconds"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        raise ScriptError(f"exchange {index}: field {field!r} = {value!r} is not {kind}")
    if not math.isfinite(value) or value < 0 or value > MAX_SECONDS:
        raise ScriptError(f"exchange {index}: field {field!r} = {value!r} is out of range; expected {kind} up to {MAX_SECONDS:g}")
    return value


def validate_script(data: Any) -> list[dict[str, Any]]:
    """Checks the script's shape; returns it as a list of ``{"start", "lost", "rtt"}`` dicts."""
    if not isinstance(data, list):
        raise ScriptError(f"script must be a JSON list of exchanges {{\"start\", \"lost\", \"rtt\"}}, got {type(data).__name__}")
    out = []
    for i, ex in enumerate(data):
        if not isinstance(ex, dict):
            raise ScriptError(f"exchange {i}: expected an object with fields start, lost, rtt; got {ex!r}")
        for field in _FIELDS:
            if field not in ex:
                raise ScriptError(f"exchange {i}: missing field {field!r} (required: start, lost, rtt)")
        unknown = sorted(set(ex) - set(_FIELDS))
        if unknown:
            raise ScriptError(f"exchange {i}: unknown field {unknown[0]!r}; allowed: start, lost, rtt")
        out.append({
            "start": float(_number(i, "start", ex["start"], integer=False)),
            "lost": int(_number(i, "lost", ex["lost"], integer=True)),
            "rtt": float(_number(i, "rtt", ex["rtt"], integer=False)),
        })
        if i > 0 and out[i]["start"] < out[i - 1]["start"]:
            raise ScriptError(
                f"exchange {i}: field 'start' = {out[i]['start']!r} is earlier than exchange {i - 1}'s start "
                f"{out[i - 1]['start']!r}; exchanges run one after another"
            )
    return out


def replay(
    algorithm: str,
    script: list[dict[str, Any]] | str | Path,
    dither: bool = False,
    seed: int = 0,
    max_retransmit: int = DEFAULT_MAX_RETRANSMIT,
) -> list[dict[str, Any]]:
    """Replays ``script`` (a list of exchanges, or a path to a JSON script) through ``algorithm``.

    Returns one dict per exchange: ``timers`` (seconds armed for each transmission),
    ``retransmissions``, ``sample`` (``{"kind": strong|weak|ambiguous|none, "rtt": s}``),
    ``failed``, ``rto_after`` (base of the next exchange before dithering), ``state``
    (algorithm-specific), ``start`` and ``end``. With ``dither=False`` the lower bound of every
    dither range is used, so results are exact.
    """
    from . import _core

    if algorithm not in _core.algorithms():
        raise ScriptError(f"unknown algorithm {algorithm!r}; valid names: {', '.join(_core.algorithms())}")
    if isinstance(script, (str, Path)):
        steps = load_script(script)
    else:
        steps = validate_script(script)
    if isinstance(max_retransmit, bool) or not isinstance(max_retransmit, int) or not 0 <= max_retransmit <= MAX_MAX_RETRANSMIT:
        raise ScriptError(f"max_retransmit = {max_retransmit!r} is out of range; expected an integer in 0..{MAX_MAX_RETRANSMIT}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ScriptError(f"seed = {seed!r} is out of range; expected an integer in 0..2^64-1")
    tuples = [(s["start"], s["lost"], s["rtt"]) for s in steps]
    try:
        return _core.replay(algorithm, tuples, bool(dither), seed, max_retransmit)
    except ValueError as e:  # overlap detected by the engine, which knows when each exchange ended
        raise ScriptError(str(e)) from None
