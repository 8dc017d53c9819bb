"""Figures of one traced run over time (matplotlib, as :mod:`coaplab.present.figures`, whose
:class:`~coaplab.present.figures.Figure` they return):

- :func:`time_sequence` — a tcptrace-style time-sequence graph of one TCP connection;
- :func:`time_sequence_overlay` — two such graphs (simulated, emulated) on one axis;
- :func:`rto_trace` — a client's armed timer and RTO estimate over time, with its RTT samples;
- :func:`queue_occupancy` / :func:`throughput_series` — a traced run's bottleneck buffer
  occupancy and each direction's delivered throughput over time;
- :func:`result_time_sequence`, :func:`result_rto_trace`, :func:`result_queue_occupancy`,
  :func:`result_throughput_series` — those four, picked out of a run's :class:`coaplab.Result`
  (what its ``plot_time_sequence`` / ``plot_rto`` / ``plot_queue`` / ``plot_throughput`` draw).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import matplotlib
from matplotlib.artist import Artist
from matplotlib.collections import LineCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..errors import CoaplabError
from ..execute.store import TRACE_COLUMNS, queue_points, throughput_points
from .figures import FONT_PT, OKABE_ITO, RC, Figure, new_figure, row_major, start_at_zero, style_axes


class ResultLike(Protocol):
    """What the ``result_*`` figures read of a :class:`coaplab.Result` (which draws them, and so
    is not imported here: the run layer sits below this one)."""

    runs: dict[str, list[dict[str, Any]]]

    def time_sequence_frame(self) -> Any: ...

    def cc_state_frame(self) -> Any: ...

    def traced_run(self, config_id: str | None, replication: int) -> tuple[str, dict[str, Any], str]: ...

    def label(self, config_id: str) -> str: ...


def _get(p, k):
    return p[k] if isinstance(p, dict) else getattr(p, k)


def time_sequence(points, caption: str = "", width: str | float = "two", height: float = 2.6,
                  cc_state=None, state_height: float = 1.7) -> Figure:
    """A tcptrace-style time-sequence graph of one direction of one connection: each data
    segment a vertical bar spanning its bytes at its send time (new data blue, retransmissions
    vermilion, drawn on top of everything but drops), dropped segments as black crosses, and
    the cumulative ACK reaching the sender as a green step line. ``points`` are rows (dicts or
    objects) with ``time_s``, ``event`` (send, retransmit, drop, ack), ``seq`` and ``length``.

    ``cc_state``: the sender's congestion-controller state rows of that direction (BBR: rows
    with ``time_s``, ``mode``, ``btlbw_bytes_per_s``, ``rtprop_s``, ``pacing_rate_bytes_per_s``,
    ``cwnd_bytes``, as :meth:`coaplab.Result.cc_state_frame` gives them). When there are any, a
    second panel (``state_height`` inches) below the graph, on the same time axis, draws
    :func:`_cc_state_panel`. Without them (New Reno) the figure is the graph alone."""
    pts = [(_get(p, "time_s"), _get(p, "event"), _get(p, "seq"), _get(p, "length")) for p in points]
    if not pts:
        raise CoaplabError("no time-sequence points to plot")
    state = _cc_state_points(cc_state)
    fig = new_figure(width, height + (state_height if state else 0))

    colours = {"send": OKABE_ITO[0], "retransmit": OKABE_ITO[3], "ack": OKABE_ITO[2], "drop": "#000000"}
    with matplotlib.rc_context(RC):
        if state:
            ax, state_ax = fig.subplots(2, 1, sharex=True, height_ratios=[height, state_height])
        else:
            ax = fig.subplots()
        style_axes(ax)
        ax.grid(True, axis="x")
        kb = 1000.0
        segs: dict[str, list[Any]] = {"send": [], "retransmit": []}
        drops, acks = [], []
        for t, ev, seq, length in pts:
            if ev == "ack":
                acks.append((t, seq / kb))
            elif ev == "drop":
                drops.append((t, (seq + length / 2) / kb))
            elif ev in segs:
                segs[ev].append([(t, seq / kb), (t, (seq + max(length, 1)) / kb)])
        # Drawing order (zorder): new data 2, ACK line 3, retransmissions 4, drops 5.
        # Each artist carries its event name as its id (SVG: <g id="ack">).
        ax.add_collection(LineCollection(segs["send"], colors=colours["send"], linewidths=1.4, zorder=2)).set_gid("send")
        if acks:
            ta, ya = zip(*sorted(acks))
            ax.step(ta, ya, where="post", color=colours["ack"], linewidth=0.9, zorder=3)[0].set_gid("ack")
        ax.add_collection(LineCollection(segs["retransmit"], colors=colours["retransmit"], linewidths=2.0,
                                         zorder=4)).set_gid("retransmit")
        if segs["retransmit"]:
            # A segment is a fraction of a point tall on a whole transfer's scale: mark each
            # retransmission at its middle so that none is lost under the ACK line.
            ax.scatter([a[0] for a, _ in segs["retransmit"]], [(a[1] + b[1]) / 2 for a, b in segs["retransmit"]],
                       marker="D", s=10, color=colours["retransmit"], linewidths=0, zorder=4).set_gid("retransmit-marks")
        if drops:
            td, yd = zip(*drops)
            ax.scatter(td, yd, marker="x", s=14, linewidths=0.9, color=colours["drop"], zorder=5).set_gid("drop")
        ax.autoscale_view()
        (state_ax if state else ax).set_xlabel("time (s)")
        ax.set_ylabel("sequence number (kB)")
        if caption:
            ax.set_title(caption, loc="left")
        handles = [Line2D([], [], color=colours["send"], linewidth=1.4),
                   Line2D([], [], color=colours["retransmit"], linewidth=2.0, marker="D", markersize=3),
                   Line2D([], [], color=colours["drop"], marker="x", linestyle="none", markersize=4),
                   Line2D([], [], color=colours["ack"], linewidth=0.9)]
        labels = [f"sent ({len(segs['send'])})", f"retransmitted ({len(segs['retransmit'])})",
                  f"dropped ({len(drops)})", "cumulative ACK"]
        fig.legend(handles, labels, loc="outside upper center", frameon=False, ncols=4, handlelength=1.4,
                   columnspacing=1.0)
        if state:
            _cc_state_panel(state_ax, state, end=max(p[0] for p in pts))
    return fig


#: The two runs of :func:`time_sequence_overlay`: label, colour, retransmission and drop markers.
OVERLAY_SERIES = (("simulated", OKABE_ITO[0], "D", "x"), ("emulated (Linux)", OKABE_ITO[3], "s", "+"))


def time_sequence_overlay(simulated, emulated, caption: str = "", width: str | float = "two",
                          height: float = 2.8, labels: Sequence[str] | None = None) -> Figure:
    """Two time-sequence graphs of the same connection direction on one axis: the simulator's
    run (blue) and the emulated one (vermilion, by default labelled "emulated (Linux)"). Each
    series draws its data segments as vertical bars at their send times (the emulated ones
    thinner, on top), its retransmissions as markers (diamonds / squares), its drops as crosses
    (x / +) and the cumulative ACK reaching the sender as a step line (solid / dashed). Points
    are rows as :func:`time_sequence` takes them. Each artist's id (SVG ``<g id>``) is
    ``<series>-<event>``, series ``simulated`` or ``emulated``."""
    names = list(labels) if labels is not None else [s[0] for s in OVERLAY_SERIES]
    series = []
    for pts in (simulated, emulated):
        rows = [(_get(p, "time_s"), _get(p, "event"), _get(p, "seq"), _get(p, "length")) for p in pts]
        if not rows:
            raise CoaplabError("no time-sequence points to plot")
        series.append(rows)
    fig = new_figure(width, height)

    kb = 1000.0
    handles, legend = [], []
    with matplotlib.rc_context(RC):
        ax = fig.subplots()
        style_axes(ax)
        ax.grid(True, axis="x")
        for k, (rows, (_, colour, rmark, dmark), name) in enumerate(zip(series, OVERLAY_SERIES, names)):
            gid = ("simulated", "emulated")[k]
            bars, rexmit, drops, acks = [], [], [], []
            for t, ev, seq, length in rows:
                if ev == "ack":
                    acks.append((t, seq / kb))
                elif ev == "drop":
                    drops.append((t, (seq + length / 2) / kb))
                elif ev in ("send", "retransmit"):
                    bars.append([(t, seq / kb), (t, (seq + max(length, 1)) / kb)])
                    if ev == "retransmit":
                        rexmit.append((t, (seq + length / 2) / kb))
            lw = 1.6 if k == 0 else 0.8
            ax.add_collection(LineCollection(bars, colors=colour, linewidths=lw, zorder=2 + k)).set_gid(f"{gid}-send")
            if acks:
                ta, ya = zip(*sorted(acks))
                ax.step(ta, ya, where="post", color=colour, linewidth=0.9, linestyle="-" if k == 0 else "--",
                        zorder=4 + k)[0].set_gid(f"{gid}-ack")
            if rexmit:
                tr, yr = zip(*rexmit)
                ax.scatter(tr, yr, marker=rmark, s=12, facecolors="none", edgecolors=colour, linewidths=0.8,
                           zorder=6 + k).set_gid(f"{gid}-retransmit")
            if drops:
                td, yd = zip(*drops)
                ax.scatter(td, yd, marker=dmark, s=16, linewidths=0.9, color=colour, zorder=8 + k).set_gid(f"{gid}-drop")
            handles.append(Line2D([], [], color=colour, linewidth=lw, linestyle="-" if k == 0 else "--",
                                  marker=rmark, markersize=3, markerfacecolor="none"))
            legend.append(f"{name}: {len(bars) - len(rexmit)} sent, {len(rexmit)} retransmitted, {len(drops)} dropped")
        ax.autoscale_view()
        ax.set_xlabel("time (s)")
        ax.set_ylabel("sequence number (kB)")
        if caption:
            ax.set_title(caption, loc="left")
        fig.legend(handles, legend, loc="outside upper center", frameon=False, ncols=2, handlelength=2.2,
                   columnspacing=1.5)
    return fig


#: The controllers' modes as the engine names them (docs/model.md: BBR's four, CUBIC's two), with
#: their label and band colour (light Okabe–Ito tints: the lines drawn over them stay readable).
CC_MODES = {"startup": ("Startup", OKABE_ITO[1]), "drain": ("Drain", OKABE_ITO[4]),
            "probe_bw": ("ProbeBW", OKABE_ITO[5]), "probe_rtt": ("ProbeRTT", OKABE_ITO[3]),
            "slow_start": ("slow start", OKABE_ITO[1]), "avoidance": ("congestion avoidance", OKABE_ITO[5])}
_BAND_ALPHA = 0.16


def _cc_state_points(rows) -> list[tuple]:
    """(time_s, mode, BtlBw B/s, RTprop s or None, pacing rate B/s, cwnd B) in time order."""
    out = []
    for r in rows if rows is not None else []:
        rtprop = _opt(r, "rtprop_s")
        out.append((_get(r, "time_s"), _get(r, "mode"), _get(r, "btlbw_bytes_per_s"),
                    None if rtprop is None or _nan(rtprop) or rtprop <= 0 else rtprop,
                    _get(r, "pacing_rate_bytes_per_s"), _get(r, "cwnd_bytes")))
    return sorted(out, key=lambda r: r[0])


def _cc_state_panel(ax, state: list[tuple], end: float) -> None:
    """The sender's BBR state over time: cwnd, the BDP estimate (BtlBw × RTprop) and pacing rate
    × RTprop (the bytes one RTprop of pacing puts in flight: the BDP times the pacing gain) as
    step lines in kB, each value held until the next row; the mode as shaded bands, labelled
    where a band is wide enough, and in the legend below the figure."""
    style_axes(ax)
    ax.grid(True, axis="x")
    kb = 1000.0
    end = max(end, state[-1][0])
    t = [r[0] for r in state] + [end]
    def held(values):
        values = list(values)
        return values + values[-1:]
    cwnd = held(r[5] / kb for r in state)
    bdp = held(r[2] * r[3] / kb if r[3] is not None else math.nan for r in state)
    paced = held(r[4] * r[3] / kb if r[3] is not None else math.nan for r in state)
    # A controller without a bandwidth estimate or pacing (CUBIC) reports 0: only cwnd is drawn.
    rates = any(r[2] or r[4] for r in state)
    if rates:
        ax.step(t, paced, where="post", color=OKABE_ITO[2], linewidth=0.9, linestyle=":", zorder=3)[0].set_gid("cc-pacing")
        ax.step(t, bdp, where="post", color="#555555", linewidth=0.9, linestyle="--", zorder=3)[0].set_gid("cc-bdp")
    ax.step(t, cwnd, where="post", color=OKABE_ITO[0], linewidth=1.2, zorder=4)[0].set_gid("cc-cwnd")
    # Mode bands: from the row that entered a mode to the next row in another mode.
    bands: list[list] = []
    for at, mode, *_ in state:
        if not bands or bands[-1][0] != mode:
            if bands:
                bands[-1][2] = at
            bands.append([mode, at, end])
    span = (end - state[0][0]) or 1.0
    top = max(v for series in ((cwnd, bdp, paced) if rates else (cwnd,)) for v in series if not _nan(v))
    ax.set_ylim(0, top * 1.18 if top > 0 else 1.0)
    for mode, start, stop in bands:
        name, colour = CC_MODES.get(mode, (mode, "#999999"))
        ax.axvspan(start, stop, color=colour, alpha=_BAND_ALPHA, linewidth=0, zorder=0).set_gid(f"mode-{mode}")
        if (stop - start) / span >= 0.07:
            ax.text((start + stop) / 2, 0.97, name, transform=ax.get_xaxis_transform(), ha="center", va="top",
                    fontsize=FONT_PT, color="#333333", zorder=5)
    ax.set_ylabel("window (kB)")
    seen = [m for m in CC_MODES if any(b[0] == m for b in bands)] + sorted({b[0] for b in bands} - set(CC_MODES))
    lines = [Line2D([], [], color=OKABE_ITO[0], linewidth=1.2),
             Line2D([], [], color="#555555", linewidth=0.9, linestyle="--"),
             Line2D([], [], color=OKABE_ITO[2], linewidth=0.9, linestyle=":")][: 3 if rates else 1]
    handles: list[Artist] = list(lines)
    labels = ["cwnd", "BDP estimate (BtlBw × RTprop)", "pacing rate × RTprop"][: 3 if rates else 1]
    ncols = min(max(3, len(seen)), 4) if ax.figure.get_figwidth() > 5 else 2
    if ncols > len(handles):  # the lines on the first row, the modes on the second
        labels += [""] * (ncols - len(handles))
        handles += [Patch(visible=False)] * (ncols - len(handles))
    for m in seen:
        name, colour = CC_MODES.get(m, (m, "#999999"))
        handles.append(Patch(facecolor=colour, alpha=_BAND_ALPHA, linewidth=0))
        labels.append(name)
    handles, labels = row_major(handles, labels, ncols)
    ax.figure.legend(handles, labels, loc="outside lower center", frameon=False, ncols=ncols, handlelength=1.6,
                     columnspacing=1.0)


def rto_trace(points, caption: str = "", width: str | float = "two", height: float = 2.4) -> Figure:
    """One client's retransmission timer over time: the armed timer and the RTO estimate as
    step lines, RTT samples as points (strong filled, weak hollow). ``points`` are rows with
    ``time_s``, ``timer_s``, ``rto_s`` and optionally ``sample_s``, ``sample_kind``."""
    pts = sorted(((_get(p, "time_s"), _get(p, "timer_s"), _get(p, "rto_s"),
                   _opt(p, "sample_s"), _opt(p, "sample_kind")) for p in points), key=lambda r: r[0])
    if not pts:
        raise CoaplabError("no trace points to plot")
    fig = new_figure(width, height)

    with matplotlib.rc_context(RC):
        ax = fig.subplots()
        style_axes(ax)
        t = [p[0] for p in pts]
        timer = [p[1] if p[1] is not None and not _nan(p[1]) else math.nan for p in pts]
        rto = [p[2] if p[2] is not None and not _nan(p[2]) else math.nan for p in pts]
        ax.step(t, timer, where="post", color=OKABE_ITO[0], linewidth=1.0, label="armed timer")
        ax.step(t, rto, where="post", color=OKABE_ITO[1], linewidth=1.0, label="RTO estimate")
        handles = [Line2D([], [], color=OKABE_ITO[0]), Line2D([], [], color=OKABE_ITO[1])]
        labels = ["armed timer", "RTO estimate"]
        for kind, marker_face in (("strong", OKABE_ITO[2]), ("weak", "none")):
            sp = [(p[0], p[3]) for p in pts if p[4] == kind and p[3] is not None and not _nan(p[3])]
            if sp:
                xs, ys = zip(*sp)
                ax.scatter(xs, ys, s=9, marker="o", facecolors=marker_face, edgecolors=OKABE_ITO[2],
                           linewidths=0.7, zorder=4)
                handles.append(Line2D([], [], marker="o", linestyle="none", markersize=3.5,
                                      markerfacecolor=marker_face, markeredgecolor=OKABE_ITO[2]))
                labels.append(f"{kind} RTT sample")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("seconds")
        ax.set_ylim(bottom=0)
        if caption:
            ax.set_title(caption, loc="left")
        # Outside the axes: timers spike to the top of the plot, where a legend would hide them.
        fig.legend(handles, labels, loc="outside upper center", frameon=False, ncols=min(len(labels), 4),
                   handlelength=1.4, columnspacing=1.0)
    return fig


_DIRECTIONS = (("down", "downlink (server → devices)", OKABE_ITO[0]), ("up", "uplink (devices → server)", OKABE_ITO[1]))


def queue_occupancy(points, caption: str = "", width: str | float = "two", height: float = 2.4,
                    end_s: float | None = None) -> Figure:
    """The bytes waiting in each direction's buffer over time (a traced run, docs/model.md "Time
    series"): one step line per direction, from 0 B at time 0 to ``end_s`` (default: the last
    change). ``points`` are rows with ``direction``, ``time_s``, ``queue_bytes`` (the change
    points of :meth:`coaplab.Result.queue_frame`)."""
    return _series(points, "queue_bytes", "bytes in the buffer", caption, width, height, end_s, start=(0.0, 0.0))


def throughput_series(points, caption: str = "", width: str | float = "two", height: float = 2.4,
                      end_s: float | None = None) -> Figure:
    """Each direction's delivered throughput over time (a traced run): one step line per
    direction over the bins of :meth:`coaplab.Result.throughput_frame` (``direction``,
    ``time_s`` — the bin's start — ``bin_s``, ``kbps``); the y label names the bin width."""
    bins = {_opt(p, "bin_s") for p in points} - {None}
    label = "delivered kbit/s" + (f" ({next(iter(bins)) * 1000:g} ms bins)" if len(bins) == 1 else "")
    return _series(points, "kbps", label, caption, width, height, end_s, start=None)


def _series(points, value: str, y_label: str, caption: str, width, height, end_s, start) -> Figure:
    by_dir: dict[str, list[tuple[float, float]]] = {}
    for p in points:
        by_dir.setdefault(_get(p, "direction"), []).append((_get(p, "time_s"), _get(p, value)))
    if not by_dir:
        raise CoaplabError("no time-series points to plot: run with trace = true on a star or gprs network")
    fig = new_figure(width, height)

    end = max([end_s or 0.0] + [t for pts in by_dir.values() for t, _ in pts])
    with matplotlib.rc_context(RC):
        ax = fig.subplots()
        style_axes(ax)
        handles, labels = [], []
        for d, name, colour in _DIRECTIONS:
            pts = sorted(by_dir.get(d, []))
            if not pts:
                continue
            if start is not None and pts[0][0] > start[0]:
                pts.insert(0, start)
            if value == "kbps":  # the last bin ends one bin width later; nothing was delivered after it
                width_s = _opt(points[0], "bin_s") or 0.0
                pts.append((pts[-1][0] + width_s, 0.0))
            pts.append((max(end, pts[-1][0]), pts[-1][1]))
            if value == "queue_bytes" and len(pts) > ENVELOPE_ABOVE:
                edges, mean, lo, hi = step_envelope(pts, ENVELOPE_BINS)
                ax.fill_between(edges[:-1], lo, hi, step="post", color=colour, alpha=0.3, linewidth=0)
                ax.step(edges[:-1], mean, where="post", color=colour, linewidth=1.0)
                y_label = (f"bytes in the buffer\n(mean per {(edges[1] - edges[0]) * 1000:.3g} ms bin;"
                           " band: min–max)")
            else:
                ax.step([t for t, _ in pts], [v for _, v in pts], where="post", color=colour, linewidth=1.0)
            handles.append(Line2D([], [], color=colour))
            labels.append(name)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(y_label)
        ax.set_xlim(left=0)
        start_at_zero(ax)
        if caption:
            ax.set_title(caption, loc="left")
        fig.legend(handles, labels, loc="outside upper center", frameon=False, ncols=len(labels),
                   handlelength=1.4, columnspacing=1.0)
    return fig


#: A queue with more change points than this is drawn as a band per time bin (its min–max) with
#: the bin's time-weighted mean, not as a step line too dense to read; in this many bins.
ENVELOPE_ABOVE = 2000
ENVELOPE_BINS = 400


def step_envelope(pts: list[tuple[float, float]], bins: int):
    """A step function (value from each change point until the next; the last point ends it)
    summarised over ``bins`` equal time bins: (edges, time-weighted mean, min, max per bin)."""
    import numpy as np  # lazy: start-up

    t = np.array([p[0] for p in pts], dtype=np.float64)
    v = np.array([p[1] for p in pts], dtype=np.float64)
    edges = np.linspace(t[0], t[-1], bins + 1)
    area = np.concatenate([[0.0], np.cumsum(v[:-1] * np.diff(t))])  # ∫ up to each change point
    mean = np.diff(np.interp(edges, t, area)) / np.diff(edges)
    first = np.searchsorted(t, edges, side="right") - 1  # the change in force at each edge
    lo = np.minimum(np.minimum.reduceat(v, first)[:bins], v[first[1:]])
    hi = np.maximum(np.maximum.reduceat(v, first)[:bins], v[first[1:]])
    return edges, mean, lo, hi


def _opt(p, k):
    try:
        return _get(p, k)
    except (KeyError, AttributeError):
        return None


def _nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def result_time_sequence(result: ResultLike, config_id: str | None = None, replication: int = 0, connection: int = 0,
                         direction: str = "down", width: str | float = "two") -> Figure:
    """A tcptrace-style time-sequence graph of one connection of a run's result
    (:meth:`coaplab.Result.plot_time_sequence`): segments sent, retransmitted and dropped, and
    the ACKs reaching the sender. With BBR, a second panel below on the same time axis shows the
    sender's state (:meth:`coaplab.Result.cc_state_frame`): cwnd, the BDP estimate and pacing
    rate × RTprop, and the modes as shaded bands."""
    frame = result.time_sequence_frame()
    if frame.empty:
        raise CoaplabError("no time-sequence traces: run a TCP scenario with trace = true")
    cid = config_id or frame.config_id.iloc[0]
    sel = frame[(frame.config_id == cid) & (frame.replication == replication)
                & (frame.connection == connection) & (frame.direction == direction)]
    if sel.empty:
        raise CoaplabError(f"no time-sequence points for config {cid}, replication {replication}, "
                           f"connection {connection}, direction {direction!r}")
    state = result.cc_state_frame()
    state = state[(state.config_id == cid) & (state.replication == replication)
                  & (state.connection == connection) & (state.direction == direction)]
    return time_sequence(sel.to_dict("records"),
                         f"{result.label(cid)}: replication {replication}, connection {connection} ({direction})",
                         width=width, cc_state=state.to_dict("records"))


def result_rto_trace(result: ResultLike, config_id: str | None = None, replication: int = 0, client: int = 0,
                     width: str | float = "two") -> Figure:
    """One client's armed timer and RTO estimate over time, with its RTT samples, from a run's
    result (:meth:`coaplab.Result.plot_rto`; UDP runs with ``trace = true``)."""
    for cid, runs in result.runs.items():
        if config_id is not None and cid != config_id:
            continue
        for r in runs:
            if r["replication"] != replication:
                continue
            for t in r.get("traces") or []:
                if t["client"] == client:
                    pts = [dict(zip(TRACE_COLUMNS[3:], p)) for p in t["points"]]
                    return rto_trace(pts, f"{result.label(cid)}: replication {replication}, client {client}",
                                     width=width)
    raise CoaplabError(f"no timer trace for config {config_id or 'any'}, replication {replication}, client {client}: "
                       "run a UDP scenario with trace = true")


def result_queue_occupancy(result: ResultLike, config_id: str | None = None, replication: int = 0,
                           width: str | float = "two") -> Figure:
    """One traced run's bytes waiting in each direction's buffer over time, from a run's result
    (:meth:`coaplab.Result.plot_queue`; :func:`queue_occupancy`)."""
    _, run, caption = result.traced_run(config_id, replication)
    return queue_occupancy(queue_points(run), caption, width=width, end_s=run["sim_time_s"])


def result_throughput_series(result: ResultLike, config_id: str | None = None, replication: int = 0,
                             width: str | float = "two") -> Figure:
    """One traced run's delivered throughput per direction over time, 100 ms bins, from a run's
    result (:meth:`coaplab.Result.plot_throughput`; :func:`throughput_series`)."""
    _, run, caption = result.traced_run(config_id, replication)
    return throughput_series(throughput_points(run), caption, width=width, end_s=run["sim_time_s"])
