"""One cell device's radio states over time as non-overlapping bands (docs/networks.md "State
timeline"): the engine's ``cell_timeline`` (its mode at every change and its transmit / receive
spans) becomes ``(start_s, end_s, state)`` bands, ``state`` one of the energy model's states
(docs/energy.md): ``tx``, ``rx``, ``connected_idle``, ``idle_drx``, ``psm``."""

from __future__ import annotations

import itertools
from typing import Any

#: The states in drawing order, as docs/energy.md names them.
STATES = ("tx", "rx", "connected_idle", "idle_drx", "psm")

#: The state of a device neither sending nor receiving, by its RRC / PSM mode.
_BASE = {"connected": "connected_idle", "idle": "idle_drx", "psm": "psm"}


def bands(timeline: dict[str, Any]) -> list[tuple[float, float, str]]:
    """The bands of one ``cell_timeline``, in time order, adjacent bands of one state merged.
    A transmit span wins over a receive span (a half-duplex device does not do both; the
    random-access response window holds the DCI and the RAR it listens for)."""
    end = float(timeline["end_s"])
    modes = sorted(((float(t), m) for t, m in timeline["modes"]), key=lambda x: x[0])
    events: list[tuple[float, int, str]] = []  # (time, +1 / -1, tx | rx)
    for s, e, what in timeline["spans"]:
        if e > s:
            events += [(float(s), 1, what), (float(e), -1, what)]
    points = sorted({0.0, end, *(t for t, _ in modes), *(t for t, _, _ in events)})
    points = [p for p in points if 0.0 <= p <= end]
    events.sort(key=lambda x: x[0])
    active = {"tx": 0, "rx": 0}
    out: list[tuple[float, float, str]] = []
    mi = ei = 0
    mode = modes[0][1] if modes else "idle"
    for a, b in itertools.pairwise(points):
        while mi < len(modes) and modes[mi][0] <= a:
            mode = modes[mi][1]
            mi += 1
        while ei < len(events) and events[ei][0] <= a:
            active[events[ei][2]] += events[ei][1]
            ei += 1
        state = "tx" if active["tx"] > 0 else "rx" if active["rx"] > 0 else _BASE[mode]
        if out and out[-1][2] == state and out[-1][1] == a:
            out[-1] = (out[-1][0], b, state)
        else:
            out.append((a, b, state))
    return out


def state_totals(timeline_bands: list[tuple[float, float, str]]) -> dict[str, float]:
    """Seconds per state over the bands."""
    out = dict.fromkeys(STATES, 0.0)
    for a, b, state in timeline_bands:
        out[state] += b - a
    return out
