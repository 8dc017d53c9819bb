"""The words of one-line messages, written once: suggestions for mistyped names (scenario keys
and values, algorithm names, ``--where`` / ``--diff-by`` / ``--ignore`` keys) and a value quoted
short (:func:`quote_value`)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from typing import Any


def did_you_mean(word: Any, options: Iterable[str], *, n: int = 1, quote: bool = True) -> str:
    """`` (did you mean "x"?)`` for the ``n`` options closest to ``word`` (JSON-quoted, or as they
    are with ``quote=False``); empty when none is close or ``word`` is not a string."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, list(options), n=n, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean {', '.join(json.dumps(c) if quote else c for c in close)}?)"


def unknown_among(label: str, word: str, options: list[str], what: str, *, few: int = 12, n: int = 6) -> str:
    """``LABEL: unknown key (did you mean "x"?); WHAT: …``: every option when there are at most
    ``few``, else the ``n`` closest to ``word`` (none listed when none is close)."""
    label = "".join(c if c.isprintable() else repr(c)[1:-1] for c in label)  # one line, whatever the file held
    shown = options if len(options) <= few else difflib.get_close_matches(word, options, n=n, cutoff=0.5)
    which = what if len(options) <= few else f"closest of the {len(options)} {what}"
    return f"{label}: unknown key{did_you_mean(word, options)}" + (f"; {which}: {', '.join(shown)}" if shown else "")


def quote_value(v: Any) -> str:
    """A value as the error messages quote it: short, one line, never failing."""
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, int):
        if v.bit_length() > 64:
            # str() refuses integers of more than 4300 digits (about 14 000 bits).
            digits = f"{len(str(abs(v)))}" if v.bit_length() < 14_000 else f"about {int(v.bit_length() * 0.30103) + 1}"
            return f"{'-' if v < 0 else ''}<an integer of {digits} digits>"
        return repr(v)
    if isinstance(v, float):
        return repr(v)
    try:
        out = json.dumps(v, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        out = f"<a {type(v).__name__}>"
    out = out.replace("\n", "\\n")
    return out if len(out) <= 80 else out[:77] + "..."
