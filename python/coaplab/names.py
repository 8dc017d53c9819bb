"""Suggestions for mistyped names, written once for every message that offers one (scenario keys
and values, algorithm names, ``--where`` / ``--diff-by`` / ``--ignore`` keys)."""

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
