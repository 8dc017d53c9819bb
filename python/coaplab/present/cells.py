"""Figures of NB-IoT and LTE-M cells (docs/networks.md "Cell figures"):

- :func:`coupling_loss_curves` — the exchange latency (FCT median and p95) and the energy per
  exchange against the devices' coupling loss, one line per algorithm: from a stored sweep over
  ``network.coupling_loss_db`` (× ``coap.cc``);
- :func:`state_timeline` — one device's radio state over time (tx / rx / connected idle / idle
  DRX / PSM as coloured bands), with its CoAP exchanges' events marked: from a run traced on a
  cell (``coaplab run … --trace DIR``, the engine's ``cell_timeline``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..analyse.timeline import STATES
from ..describe.scenario import CELL_KINDS, NETWORK
from ..errors import CoaplabError
from ..execute.tidy import flatten, varying
from .figures import (
    RC,
    Figure,
    add_legend,
    dim_title,
    fill_colours,
    key_label,
    key_values,
    new_figure,
    ordered_values,
    style_axes,
)

#: The swept key on the x axis.
LOSS_KEY = "network.coupling_loss_db"

#: A colour per state (Okabe–Ito): transmit vermilion, receive blue, connected idle sky blue,
#: idle DRX light grey, PSM white-grey; labels as a reader says them.
STATE_STYLE = {
    "tx": ("#D55E00", "transmit"),
    "rx": ("#0072B2", "receive"),
    "connected_idle": ("#56B4E9", "connected idle"),
    "idle_drx": ("#C8C8C8", "idle (DRX)"),
    "psm": ("#EEEEEE", "PSM"),
}
#: CoAP events of the traced client drawn over the bands: marker, colour, label.
EVENT_STYLE = {
    "start": ("v", "#000000", "request sent"),
    "retransmit": ("x", "#CC79A7", "retransmission"),
    "response": ("^", "#009E73", "response received"),
    "fail": ("X", "#E69F00", "exchange failed"),
}


def _cell_rows(summaries: Sequence[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    rows = [(flatten(s["config"]), s) for s in summaries
            if (s["config"].get("network") or {}).get("kind") in CELL_KINDS]
    if not rows:
        raise CoaplabError("--kind coupling-loss: no runs on an NB-IoT or LTE-M cell in the database; sweep "
                           "network.coupling_loss_db on a network.kind = \"nbiot\" or \"ltem\" scenario first "
                           "(e.g. coaplab reproduce cell-coupling-loss)")
    for f, _ in rows:
        loss = f.get(LOSS_KEY, NETWORK["coupling_loss_db"].default)  # the engine's default when not given
        if not isinstance(loss, (int, float)) or isinstance(loss, bool):
            raise CoaplabError(f"--kind coupling-loss: {LOSS_KEY} is a distribution in configuration "
                               f"{f.get('name', '?')!r}; "
                               "the figure needs one coupling loss per configuration (a number)")
        f[LOSS_KEY] = float(loss)
    return rows


def coupling_loss_curves(summaries: Sequence[dict[str, Any]], hue: str | None = None,
                         width: str | float = "two", panel_height: float = 2.0) -> Figure:
    """Three panels against the coupling loss (dB): FCT median, FCT p95 (pooled over clients and
    replications, s) and energy per completed exchange (J, docs/energy.md); one line per
    ``hue`` value (default: every key that varies besides the coupling loss, the algorithm
    first)."""
    rows = _cell_rows(summaries)
    keys = [k for k in varying(s["config"] for _, s in rows) if k not in (LOSS_KEY, "name")]
    if hue is not None:
        known = set().union(*(f.keys() for f, _ in rows))
        if hue not in known:
            raise CoaplabError(f"--hue: {hue!r} is not a key of the cell runs; e.g. coap.cc, network.category, "
                               "workload.clients")
        keys = [hue] + [k for k in keys if k != hue]
    elif "coap.cc" in keys:
        keys = ["coap.cc"] + [k for k in keys if k != "coap.cc"]
    hue_vals = ordered_values(key_values(f, keys) for f, _ in rows)
    colours = dict(zip(hue_vals, fill_colours(len(hue_vals))))
    markers = dict(zip(hue_vals, "osD^v<>pX*hH" * 4))
    panels = (("fct_s", "p50", "FCT median (s)"), ("fct_s", "p95", "FCT p95 (s)"),
              ("energy", "j_per_exchange", "energy per exchange (J)"))
    fig = new_figure(width, panel_height + (0.45 if len(hue_vals) > 1 else 0.1))
    with matplotlib.rc_context(RC):
        axes = fig.subplots(1, 3, squeeze=False)[0]
        for ax, (section, stat, ylabel) in zip(axes, panels):
            style_axes(ax)
            for hv in hue_vals:
                pts = sorted((f[LOSS_KEY], (s.get(section) or {}).get(stat)) for f, s in rows
                             if key_values(f, keys) == hv)
                pts = [(x, y) for x, y in pts if y is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=markers[hv], markersize=3.5,
                            color=colours[hv], linewidth=1.2)
            ax.set_xlabel("coupling loss (dB)")
            ax.set_ylabel(ylabel)
            ax.set_ylim(bottom=0)
        if len(hue_vals) > 1 or keys:
            handles = [Line2D([], [], color=colours[v], marker=markers[v], markersize=3.5) for v in hue_vals]
            add_legend(fig, handles, [key_label(keys, v) if keys else "" for v in hue_vals], dim_title(keys))
    return fig


def state_timeline(bands: Sequence[tuple[float, float, str]], events: Sequence[dict[str, Any]], caption: str,
                   width: str | float = "two", start_s: float | None = None, end_s: float | None = None,
                   height: float = 1.9) -> Figure:
    """One device's radio state over time as coloured bands on one row, the CoAP events of its
    client (request, retransmission, response, failure) marked above them; ``start_s`` /
    ``end_s`` crop the time axis (default: the whole run)."""
    if not bands:
        raise CoaplabError("--kind state-timeline: the timeline has no states to draw")
    lo = bands[0][0] if start_s is None else start_s
    hi = bands[-1][1] if end_s is None else end_s
    if not hi > lo:
        raise CoaplabError(f"--kind state-timeline: the time window {lo:g}–{hi:g} s is empty")
    shown = [(max(a, lo), min(b, hi), st) for a, b, st in bands if b > lo and a < hi]
    fig = new_figure(width, height)
    with matplotlib.rc_context(RC):
        ax = fig.subplots()
        style_axes(ax)
        ax.grid(False)
        for st in STATES:
            spans = [(a, b - a) for a, b, s in shown if s == st]
            if spans:
                colour = STATE_STYLE[st][0]
                ax.broken_barh(spans, (0.0, 1.0), facecolors=colour, edgecolor=colour, linewidth=0.3)
        used_events = []
        for ev, (marker, colour, _) in EVENT_STYLE.items():
            xs = [e["time_s"] for e in events if e["event"] == ev and lo <= e["time_s"] <= hi]
            if xs:
                used_events.append(ev)
                ax.plot(xs, [1.25] * len(xs), linestyle="none", marker=marker, color=colour, markersize=4.5)
                for x in xs:
                    ax.axvline(x, ymin=0.0, ymax=1.0 / 1.45, color=colour, linewidth=0.5, alpha=0.6)
        ax.set_xlim(lo, hi)
        ax.set_ylim(0, 1.45)
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.set_xlabel("time (s)")
        ax.set_title(caption, loc="left")
        states_used = [st for st in STATES if any(s == st for _, _, s in shown)]
        handles: list[Any] = [Patch(facecolor=STATE_STYLE[st][0], edgecolor="#666666", linewidth=0.3)
                              for st in states_used]
        labels = [STATE_STYLE[st][1] for st in states_used]
        handles += [Line2D([], [], linestyle="none", marker=EVENT_STYLE[e][0], color=EVENT_STYLE[e][1]) for e in used_events]
        labels += [EVENT_STYLE[e][2] for e in used_events]
        add_legend(fig, handles, labels, "")
    return fig

