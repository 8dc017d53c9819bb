"""Replay (docs/design.md §3.2): drive one algorithm through a script of exchanges, no network.

A script is a JSON list of exchanges ``{"start": s, "lost": n, "rtt": s}``: the first ``n``
transmissions get no response and transmission ``n`` is answered ``rtt`` seconds after it was
sent. Validation happens here, before the single call into the Rust engine.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

# mypy (not Python) takes the compiled `_core` for a second definition here, as the package
# `__init__` imports this module eagerly and answers other names through `__getattr__`.
from .. import _core  # type: ignore[no-redef]
from ..errors import ScriptError
from ..files import read_regular_file
from ..names import did_you_mean
from .algorithm import Config, bind, plugin_call
from .capi import check_c_path, instance_of

#: RFC 7252 §4.8 MAX_RETRANSMIT default.
DEFAULT_MAX_RETRANSMIT = 4
#: Largest accepted MAX_RETRANSMIT (timers beyond it are all at the cap anyway).
MAX_MAX_RETRANSMIT = 1000
#: Largest accepted time value in a script, seconds (≈ 31 years; keeps nanoseconds in u64).
MAX_SECONDS = 1e9
#: Most exchanges in one script. A replay's memory and time grow with the exchanges (a
#: 10^6-exchange replay took 77 s and 6.4 GB); 100 000 replay in seconds. Longer studies are
#: `coaplab run` scenarios.
MAX_EXCHANGES = 100_000
#: Largest script file accepted, bytes (100 000 exchanges of ≈ 60 bytes each, with room).
MAX_SCRIPT_BYTES = 64 * 1024 * 1024

_FIELDS = ("start", "lost", "rtt")


def load_script(path: str | Path) -> list[dict[str, Any]]:
    """Reads and validates a replay script file."""
    raw = read_regular_file(Path(path), MAX_SCRIPT_BYTES, "script", ScriptError)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScriptError(f"{path}: not UTF-8 text (byte {e.start}); a script is a JSON file") from None
    return validate_script(parse_script(text, str(path)))


def parse_script(text: str, source: str = "script") -> Any:
    """JSON text → Python data, every failure as one line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ScriptError(f"{source}: not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise ScriptError(f"{source}: nested too deeply; a script is a flat list of exchange objects") from None
    except ValueError as e:  # e.g. an integer literal longer than Python's digit limit
        raise ScriptError(f"{source}: not a valid script: {str(e).splitlines()[0]}") from None


def _number(index: int, field: str, value: Any, *, integer: bool) -> float | int:
    kind = "a non-negative integer" if integer else "a non-negative number of seconds"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        raise ScriptError(f"exchange {index}: field {field!r} = {_short(value)} is not {kind}")
    # Compare before any float conversion: a huge integer has no float.
    if (isinstance(value, float) and not math.isfinite(value)) or value < 0 or value > MAX_SECONDS:
        raise ScriptError(f"exchange {index}: field {field!r} = {_short(value)} is out of range; "
                          f"expected {kind} up to {MAX_SECONDS:g}")
    return value


def _short(value: Any) -> str:
    """A value for an error message, cut to one short line (huge integers, deep lists)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return f"a {type(value).__name__}"
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def validate_script(data: Any) -> list[dict[str, Any]]:
    """Checks the script's shape; returns it as a list of ``{"start", "lost", "rtt"}`` dicts."""
    if not isinstance(data, list):
        raise ScriptError(f"script must be a JSON list of exchanges {{\"start\", \"lost\", \"rtt\"}}, got {type(data).__name__}")
    if len(data) > MAX_EXCHANGES:
        raise ScriptError(f"script has {len(data)} exchanges; allowed: at most {MAX_EXCHANGES} "
                          "(replay keeps every exchange's record; run longer studies as scenarios)")
    out = []
    for i, ex in enumerate(data):
        if not isinstance(ex, dict):
            raise ScriptError(f"exchange {i}: expected an object with fields start, lost, rtt; got {_short(ex)}")
        for field in _FIELDS:
            if field not in ex:
                raise ScriptError(f"exchange {i}: missing field {field!r} (required: start, lost, rtt)")
        unknown = sorted((k for k in ex if k not in _FIELDS), key=repr)
        if unknown:
            raise ScriptError(f"exchange {i}: unknown field {_short(unknown[0])}; allowed: start, lost, rtt")
        out.append({
            "start": float(_number(i, "start", ex["start"], integer=False)),
            "lost": int(_number(i, "lost", ex["lost"], integer=True)),
            "rtt": float(_number(i, "rtt", ex["rtt"], integer=False)),
        })
        # Compared at the engine's resolution (integer ns, `Duration::from_secs_f64` rounds to
        # the nearest): a start taken from the previous record's `end` (already whole ns) is
        # the same instant as a start given with more digits.
        if i > 0 and round(out[i]["start"] * 1e9) < round(out[i - 1]["start"] * 1e9):
            raise ScriptError(
                f"exchange {i}: field 'start' = {out[i]['start']!r} is earlier than exchange {i - 1}'s start "
                f"{out[i - 1]['start']!r}; exchanges run one after another"
            )
    return out


def replay(
    algorithm: Any,
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

    ``algorithm`` is a registered name (``"cocoa"``), a ``coaplab.Algorithm`` instance (an
    algorithm written in Python; it is configured and reset first), ``"python:FILE:CLASS"`` or
    ``"c:LIB:NAME"`` (a shared library implementing the C API, docs/c-api.md).
    """
    try:
        with plugin_call():
            python = instance_of(algorithm)
        if python is None and isinstance(algorithm, str) and algorithm.startswith("c:"):
            check_c_path(algorithm)
    except ValueError as e:
        raise ScriptError(str(e)) from None
    if python is None and not isinstance(algorithm, str):
        raise ScriptError(f"algorithm = {_short(algorithm)} is neither an algorithm name nor a coaplab.Algorithm")
    # `c:LIB:NAME` goes to the engine by name: it loads and checks the library (one line if bad).
    if python is None and not algorithm.startswith("c:") and algorithm not in _core.algorithms():
        raise ScriptError(f"unknown algorithm {algorithm!r}{did_you_mean(algorithm, _core.algorithms())}; "
                          f"valid names: {', '.join(_core.algorithms())}")
    if isinstance(script, (str, Path)):
        steps = load_script(script)
    else:
        steps = validate_script(script)
    if isinstance(max_retransmit, bool) or not isinstance(max_retransmit, int) or not 0 <= max_retransmit <= MAX_MAX_RETRANSMIT:
        raise ScriptError(f"max_retransmit = {max_retransmit!r} is out of range; expected an integer in 0..{MAX_MAX_RETRANSMIT}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ScriptError(f"seed = {seed!r} is out of range; expected an integer in 0..2^64-1")
    tuples = [(s["start"], s["lost"], s["rtt"]) for s in steps]
    if python is not None:
        obj, label = python
        try:
            with plugin_call():
                bind(obj, Config(max_retransmit=max_retransmit))
        except (Exception, SystemExit) as e:  # noqa: BLE001 - the user's reset(): any error is one line
            raise ScriptError(f"{label}.reset raised {type(e).__name__}: {e}") from None
        try:
            return _core.replay_python(obj, label, tuples, bool(dither), seed, max_retransmit)
        except ValueError as e:
            raise ScriptError(str(e).splitlines()[0]) from None
    try:
        return _core.replay(algorithm, tuples, bool(dither), seed, max_retransmit)
    except ValueError as e:  # overlap detected by the engine, which knows when each exchange ended
        raise ScriptError(str(e)) from None
