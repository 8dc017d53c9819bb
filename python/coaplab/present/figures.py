"""Publication figures (matplotlib, drawn on the Agg canvas: no display, no pyplot state).

Every function returns a :class:`Figure` (a matplotlib figure that Jupyter shows inline and that
``save(path)`` writes as PNG, PDF or SVG by the file's extension):

- :func:`fct_boxes` — flow completion time per client as the CoAP congestion-control
  literature draws it: whiskers p10/p90, box p25/p75, a line at the median (computed from the
  summaries' percentiles, never re-estimated);
- :func:`unnecessary_boxes` — unnecessary retransmissions per client, the same way;
- :func:`retransmission_histogram` — the share of exchanges that needed 0, 1, … retransmissions;
- :func:`retransmission_ratio_bars` — retransmissions / CON transmissions, one bar per
  configuration (the CoCoA study's retransmission ratio, Betzler et al. 2016);
- :func:`completed_pmf` — the probability mass function of completed exchanges per client
  (the CoCoA study's Fig. 4);
- :func:`time_sequence` — a tcptrace-style time-sequence graph of one TCP connection;
- :func:`time_sequence_overlay` — two such graphs (simulated, emulated) on one axis;
- :func:`rto_trace` — a client's armed timer and RTO estimate over time, with its RTT samples;
- :func:`hop_delay` — a mesh's exchange delay by hop distance (periodic workloads);
- :func:`queue_occupancy` / :func:`throughput_series` — a traced run's bottleneck buffer
  occupancy and each direction's delivered throughput over time;
- :func:`result_time_sequence`, :func:`result_rto_trace`, :func:`result_queue_occupancy`,
  :func:`result_throughput_series` — those four, picked out of a run's :class:`coaplab.Result`
  (what its ``plot_time_sequence`` / ``plot_rto`` / ``plot_queue`` / ``plot_throughput`` draw).

The box plots and histograms take per-configuration summaries (``coaplab run --format json``,
:attr:`coaplab.Result.summaries`) and lay them out by any configuration key: ``x`` (positions
on the x axis), ``hue`` (colour) and ``col`` (one panel per value), each a dotted key such as
``link.buffer_bytes``, ``coap.cc``, ``coap.nstart``, or ``group`` for the client populations of
a summary's ``groups``. Keys left unnamed are chosen from the keys that vary, and any key that
varies but is not placed is added to the colour (or panel) labels, so that no two
configurations are ever drawn as one. Colours are the Okabe–Ito colour-blind-safe palette;
sizes fit one column (3.5 in) or two columns (7.16 in) of a paper; no font is below 8 pt.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
import matplotlib.colors as mcolors
import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure as _MplFigure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..errors import CoaplabError
from ..files import atomic_write, output_file
from ..execute.store import TRACE_COLUMNS, queue_points, throughput_points
from ..execute.tidy import flatten, fmt_value, short, sort_key, title, varying

if TYPE_CHECKING:  # runner imports this module when a Result draws a figure
    from ..execute.runner import Result

#: Okabe & Ito, "Color Universal Design" (2008): distinguishable with every common colour-vision
#: deficiency. Black is last: it is kept for drops and medians.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
#: Paper widths, inches: one column and two columns of the IEEE / ACM two-column layouts.
WIDTHS = {"one": 3.5, "two": 7.16}
FONT_PT = 8
_RC: dict[Any, Any] = {  # Any keys: matplotlib types rc_context by a Literal of every rc name
    "font.size": FONT_PT, "axes.titlesize": FONT_PT, "axes.labelsize": FONT_PT, "xtick.labelsize": FONT_PT,
    "ytick.labelsize": FONT_PT, "legend.fontsize": FONT_PT, "legend.title_fontsize": FONT_PT,
    "figure.titlesize": FONT_PT + 1, "axes.linewidth": 0.6, "lines.linewidth": 1.0,
    "xtick.major.width": 0.6, "ytick.major.width": 0.6, "grid.linewidth": 0.4, "grid.color": "#d0d0d0",
    "svg.fonttype": "none",  # SVG text stays text: searchable, selectable, small
    "svg.hashsalt": "coaplab",  # fixed element ids: the same figure gives the same SVG file
    "pdf.fonttype": 42, "ps.fonttype": 42,  # TrueType in PDFs, as publishers ask
    "savefig.bbox": "tight", "savefig.pad_inches": 0.02,
}


#: No creation date in SVG and PDF files: the same figure gives the same file (docs/figures).
_NO_DATE = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}


class Figure(_MplFigure):
    """A matplotlib figure on the Agg canvas; Jupyter shows it inline (PNG)."""

    def save(self, path: str | Path, dpi: int = 300) -> Path:
        """Writes the figure; the format follows the extension (.png, .pdf, .svg)."""
        path = Path(path)
        ext = path.suffix.lower().lstrip(".")
        if ext not in ("png", "pdf", "svg"):
            raise CoaplabError(f"--out: {str(path)!r} has no known figure extension; allowed: .png, .pdf, .svg")

        output_file(path, "--out")

        with matplotlib.rc_context(_RC), atomic_write(path, "wb") as f:
            self.savefig(f, format=ext, dpi=dpi, metadata=_NO_DATE.get(ext))
        return path

    def to_svg(self) -> str:
        """The figure as an inline SVG element (no XML prolog)."""
        buf = io.StringIO()
        with matplotlib.rc_context(_RC):
            self.savefig(buf, format="svg", metadata=_NO_DATE["svg"])
        text = buf.getvalue()
        return text[text.index("<svg"):]

    def to_png(self, dpi: int = 150) -> bytes:
        buf = io.BytesIO()
        with matplotlib.rc_context(_RC):
            self.savefig(buf, format="png", dpi=dpi)
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        return self.to_png(dpi=110)


def _new_figure(width: str | float, height: float) -> Figure:
    w = WIDTHS.get(width) if isinstance(width, str) else float(width)
    if w is None:
        raise CoaplabError(f"--width: {width!r} is not allowed; expected one, two or a width in inches")
    fig = Figure(figsize=(w, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _style(ax) -> None:
    ax.grid(True, axis="y")
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


# --------------------------------------------------------------------------- layout by keys


def _rows(summaries: Iterable[dict[str, Any]], use_group: bool) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(flattened parameters, summary) pairs; with ``use_group``, one pair per client group of
    each summary (a summary without ``groups`` is one group named ``all``)."""
    out = []
    for s in summaries:
        flat = flatten(s["config"])
        if use_group:
            groups = s.get("groups") or {"all": s}
            for g, sub in groups.items():
                out.append(({**flat, "group": g}, sub))
        else:
            out.append((flat, s))
    return out


def _layout(rows, x, hue, col, known: set[str]):
    """Each of x, hue, col as a list of keys (composite when several keys share a role)."""
    for role, key in (("x", x), ("hue", hue), ("col", col)):
        if key is not None and key not in known:
            raise CoaplabError(f"--{role}: {key!r} is not a configuration key; allowed: dotted keys such as "
                               f"link.buffer_bytes, coap.cc, coap.nstart, or group")
    vary = varying([], extra=[f for f, _ in rows])
    given = {k for k in (x, hue, col) if k}
    free = [k for k in vary if k not in given]
    def take(prefs):
        for p in prefs:
            if p in free:
                free.remove(p)
                return p
        return None
    xs = [x] if x else ([k] if (k := take(["link.buffer_bytes", "workload.clients", "coap.nstart", "link.errors",
                                            "coap.max_retransmit"])) else [])
    hues = [hue] if hue else ([k] if (k := take(["coap.cc", "group", "coap.transport"])) else [])
    if not xs and free and not x:
        xs = [free.pop(0)]
    if not hues and free and not hue:
        hues = [free.pop(0)]
    cols = [col] if col else []
    # Every other varying key that still tells configurations apart (is not implied by the
    # placed ones, as coap.cc = newreno is by coap.transport = tcp) goes to the panels, or to
    # the colours when the panels are taken.
    placed = xs + hues + cols
    seen: dict[tuple, tuple] = {}
    needed = []
    for k in free:
        seen.clear()
        for f, _ in rows:
            key, v = _value(f, placed), f.get(k)
            if seen.setdefault(key, (v,)) != (v,):
                needed.append(k)
                break
    if needed:
        (cols if not col else hues).extend(needed)
    return xs, hues, cols


def _placed(summaries, x, hue, col):
    """The summaries as (flattened parameters, summary) rows (one per client group when
    ``group`` is placed) and the keys laid out on x, hue and panels."""
    rows = _rows(summaries, "group" in (x, hue, col))
    known = set().union(*(f.keys() for f, _ in rows))
    return (rows, *_layout(rows, x, hue, col, known))


def _hue_styles(rows, hues: list[str]):
    """The hue values in order, with a colour and a hatch for each."""
    hue_vals = _ordered(_value(f, hues) for f, _ in rows)
    return (hue_vals, dict(zip(hue_vals, _colours(len(hue_vals)))),
            dict(zip(hue_vals, _hatches(len(hue_vals)))))


def _value(flat: dict[str, Any], keys: list[str]) -> tuple:
    return tuple(flat.get(k) for k in keys)


def _label(keys: list[str], value: tuple) -> str:
    if len(keys) == 1:
        return fmt_value(value[0])
    return ", ".join(f"{short(k)}={fmt_value(v)}" for k, v in zip(keys, value))


def _dim_title(keys: list[str]) -> str:
    return ", ".join(title(k) for k in keys)


def _panel_title(keys: list[str], value: tuple) -> str:
    """One line per key: ``NSTART = 2``, ``bottleneck buffer = 2,500 bytes``."""
    lines = []
    for k, v in zip(keys, value):
        name, _, unit = title(k).partition(" (")
        lines.append(f"{name} = {fmt_value(v)}" + (f" {unit.rstrip(')')}" if unit else ""))
    return "\n".join(lines)


def _ordered(values: Iterable[tuple]) -> list[tuple]:
    """Distinct values: numbers sorted, text in order of first appearance (the sweep's order)."""
    seen: list[tuple] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    if all(all(isinstance(e, (int, float)) and not isinstance(e, bool) or e is None for e in v) for v in seen):
        return sorted(seen, key=lambda v: tuple(sort_key(e) if e is not None else (2, 0, "") for e in v))
    return seen


def _grid(n: int, width: str | float, panel_height: float):
    w = WIDTHS.get(width, width) if isinstance(width, str) else width
    ncols = max(1, min(n, 2 if w is not None and float(w) < 5 or n == 4 else 3))
    nrows = math.ceil(n / ncols)
    return ncols, nrows, panel_height * nrows + 0.45


#: Box and bar fills: the Okabe–Ito colours but black (a black box would hide its median).
FILLS = OKABE_ITO[:7]
#: Beyond 7 series the colours repeat, each round with another hatching, so that 12 algorithms
#: stay distinguishable in print and for every reader.
HATCHES = ["", "////", "....", "xxxx", "\\\\\\\\"]


def _colours(n: int) -> list[str]:
    return [FILLS[i % len(FILLS)] for i in range(n)]


def _hatches(n: int) -> list[str]:
    return [HATCHES[(i // len(FILLS)) % len(HATCHES)] for i in range(n)]


def _darker(colour: str, f: float = 0.55) -> tuple:
    r, g, b = mcolors.to_rgb(colour)
    return (r * f, g * f, b * f)


def _label_panel(ax, i: int, panels: int, ncols: int, xlabel: str | None, ylabel: str, title: str | None) -> None:
    """Panel ``i`` of a grid of ``panels``: the x label on the bottom row's panels (none when
    ``xlabel`` is empty), the y label on the first column's, and its own title if any."""
    if xlabel and i >= panels - ncols:
        ax.set_xlabel(xlabel)
    if i % ncols == 0:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)


def _hue_bars(ax, x, heights, hue_index: int, hues: int, bw: float, colour, hatch) -> None:
    """Bars of one ``hue`` value at positions ``x``, side by side with the other hues' (``bw``
    wide each, centred on ``x``), filled and hatched as ``_bar_legend`` draws them."""
    offset = (hue_index - (hues - 1) / 2) * bw
    xs = [v + offset for v in x] if isinstance(x, list) else x + offset
    ax.bar(xs, heights, width=bw * 0.92, color=colour, hatch=hatch, edgecolor="#333333", linewidth=0.4)


def _hide_unused(axes, used: int) -> None:
    """Hides the grid's panels past the first ``used`` (a grid of ``len(axes)`` rows)."""
    ncols = len(axes[0])
    for j in range(used, len(axes) * ncols):
        axes[j // ncols][j % ncols].set_visible(False)


def _bar_legend(fig, hues: list[str], hue_vals: list[Any], colours: dict, hatches: dict) -> None:
    """The legend of bar figures: one filled, hatched patch per ``hue`` value (none for one)."""
    if len(hue_vals) > 1:
        handles = [Patch(facecolor=colours[v], hatch=hatches[v], edgecolor="#333333", linewidth=0.4) for v in hue_vals]
        _legend(fig, handles, [_label(hues, v) for v in hue_vals], _dim_title(hues))


def _legend(fig, handles, labels, legend_title: str) -> None:
    """Above the panels, read row by row (matplotlib fills legend columns first, so the
    entries are transposed, padded with blanks, to read in order left to right)."""
    if len(labels) <= 1 and not legend_title:
        return
    wide = fig.get_figwidth() > 5
    ncols = min(len(labels), 6 if wide else 3)
    handles, labels = _row_major(handles, labels, ncols)
    fig.legend(handles, labels, title=legend_title or None,
               loc="outside upper center", ncols=ncols, frameon=False, handlelength=1.2, columnspacing=1.0)


def _row_major(handles, labels, ncols: int) -> tuple[list, list]:
    """Legend entries reordered (and padded with blanks) so that a legend of ``ncols`` columns,
    which matplotlib fills column by column, reads row by row."""
    nrows = math.ceil(len(labels) / ncols)
    pad = nrows * ncols - len(labels)
    handles = list(handles) + [Patch(visible=False)] * pad
    labels = list(labels) + [""] * pad
    order = [r * ncols + c for c in range(ncols) for r in range(nrows)]
    return [handles[i] for i in order], [labels[i] for i in order]


# --------------------------------------------------------------------------- box plots


def box_plot(summaries: Sequence[dict[str, Any]], metric: str, y_label: str, x: str | None = None,
             hue: str | None = None, col: str | None = None, width: str | float = "two",
             panel_height: float = 2.2, log_y: bool = False, zero_based: bool = False) -> Figure:
    """Box plots of a percentile metric of the summaries (whiskers p10/p90, box p25/p75,
    median line), laid out by ``x``, ``hue`` and ``col`` (dotted configuration keys or
    ``group``)."""
    if not summaries:
        raise CoaplabError("no configurations to plot")
    rows, xs, hues, cols = _placed(summaries, x, hue, col)
    col_vals = _ordered(_value(f, cols) for f, _ in rows)
    x_vals = _ordered(_value(f, xs) for f, _ in rows)
    hue_vals, colours, hatches = _hue_styles(rows, hues)
    ncols, nrows, height = _grid(len(col_vals), width, panel_height)
    fig = _new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(_RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        n_hue = len(hue_vals)
        slot = 0.8 / n_hue
        for i, cv in enumerate(col_vals):
            ax = axes[i // ncols][i % ncols]
            _style(ax)
            stats, positions, face = [], [], []
            for f, s in rows:
                if _value(f, cols) != cv:
                    continue
                st = s.get(metric) or {}
                if st.get("p50") is None:
                    continue
                xi, hi = x_vals.index(_value(f, xs)), hue_vals.index(_value(f, hues))
                positions.append(xi + (hi - (n_hue - 1) / 2) * slot)
                stats.append({"med": st["p50"], "q1": st["p25"], "q3": st["p75"], "whislo": st["p10"],
                              "whishi": st["p90"], "fliers": [], "label": ""})
                face.append((colours[_value(f, hues)], hatches[_value(f, hues)]))
            if stats:
                art = ax.bxp(stats, positions=positions, widths=slot * 0.72, showfliers=False, patch_artist=True,
                             manage_ticks=False, capwidths=slot * 0.4,
                             medianprops={"linewidth": 1.6},
                             whiskerprops={"linewidth": 0.8}, capprops={"linewidth": 0.8},
                             boxprops={"linewidth": 0.6})
                for patch, (c, h) in zip(art["boxes"], face):
                    patch.set_facecolor(c)
                    patch.set_edgecolor("#333333")
                    patch.set_hatch(h)
                for k, (c, _) in enumerate(face):
                    # The median in a dark shade of the box's colour: a box squeezed to a line
                    # (no spread) still shows whose it is.
                    art["medians"][k].set_color(_darker(c))
                    art["medians"][k].set_gid("median")
                    for part in ("whiskers", "caps"):
                        for line in art[part][2 * k: 2 * k + 2]:
                            line.set_color(c if c != "#F0E442" else "#9a8c00")
            ax.set_xticks(range(len(x_vals)), [_label(xs, v) for v in x_vals] if xs else [""] * len(x_vals))
            if not xs:
                ax.tick_params(axis="x", length=0)
            ax.set_xlim(-0.5, len(x_vals) - 0.5)
            if len(x_vals) > 4 and max(len(_label(xs, v)) for v in x_vals) > 6:
                ax.tick_params(axis="x", labelrotation=30)
                for lab in ax.get_xticklabels():
                    lab.set_horizontalalignment("right")
            _label_panel(ax, i, len(col_vals), ncols, xs and _dim_title(xs), y_label, cols and _panel_title(cols, cv))
            if log_y:
                ax.set_yscale("log")
            elif zero_based:
                top = max(((s.get(metric) or {}).get("p90") or 0.0 for _, s in rows), default=0.0)
                ax.set_ylim(0, top * 1.05 if top > 0 else 1.0)
        _hide_unused(axes, len(col_vals))
        if n_hue > 1:
            handles = [Patch(facecolor=colours[v], hatch=hatches[v], edgecolor="#333333", linewidth=0.6) for v in hue_vals]
            _legend(fig, handles, [_label(hues, v) for v in hue_vals], _dim_title(hues))
    return fig


def fct_boxes(summaries, x=None, hue=None, col=None, width="two", **kw) -> Figure:
    """Flow completion time per client: whiskers p10/p90, box p25/p75, median line."""
    return box_plot(summaries, "fct_s", "flow completion time (s)", x=x, hue=hue, col=col, width=width, **kw)


def unnecessary_boxes(summaries, x=None, hue=None, col=None, width="two", **kw) -> Figure:
    """Unnecessary retransmissions per client (p10/p25/median/p75/p90)."""
    kw.setdefault("zero_based", True)
    return box_plot(summaries, "unnecessary_retransmissions_per_client", "unnecessary retransmissions\nper client",
                    x=x, hue=hue, col=col, width=width, **kw)


# --------------------------------------------------------------------------- histograms


def retransmission_histogram(summaries: Sequence[dict[str, Any]], x=None, hue=None, col=None,
                             width: str | float = "two", bins: int = 6, panel_height: float = 1.9) -> Figure:
    """Per panel (one per value of ``col`` × ``x``): the share of exchanges that needed 0, 1,
    …, ≥ ``bins``−1 retransmissions, one bar per ``hue`` value."""
    if not summaries:
        raise CoaplabError("no configurations to plot")
    rows, xs, hues, cols = _placed(summaries, x, hue, col)
    panel_keys = cols + xs
    panels = _ordered(_value(f, panel_keys) for f, _ in rows)
    hue_vals, colours, hatches = _hue_styles(rows, hues)
    ncols, nrows, height = _grid(len(panels), width, panel_height)
    fig = _new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(_RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        bw = 0.8 / len(hue_vals)
        for i, pv in enumerate(panels):
            ax = axes[i // ncols][i % ncols]
            _style(ax)
            for f, s in rows:
                if _value(f, panel_keys) != pv:
                    continue
                hist = list(s.get("retransmission_histogram") or [])
                total = sum(hist) or 1
                shares = [100.0 * (hist[b] if b < len(hist) else 0) / total for b in range(bins - 1)]
                shares.append(100.0 * sum(hist[bins - 1:]) / total)
                hi = hue_vals.index(_value(f, hues))
                hv = _value(f, hues)
                _hue_bars(ax, list(range(bins)), shares, hi, len(hue_vals), bw, colours[hv], hatches[hv])
            ax.set_xticks(range(bins), [str(b) for b in range(bins - 1)] + [f"≥{bins - 1}"])
            ax.set_ylim(0, 100)
            _label_panel(ax, i, len(panels), ncols, "retransmissions per exchange", "exchanges (%)",
                         panel_keys and _panel_title(panel_keys, pv))
        _hide_unused(axes, len(panels))
        _bar_legend(fig, hues, hue_vals, colours, hatches)
    return fig


def retransmission_ratio_bars(summaries: Sequence[dict[str, Any]], x=None, hue=None, col=None,
                              width: str | float = "two", panel_height: float = 2.0) -> Figure:
    """The retransmission ratio (retransmissions / all CON transmissions, pooled over
    replications; docs/model.md "Metrics") as bars: x positions (default: the number of
    clients), one bar per ``hue`` value (default: the algorithm), one panel per ``col`` value.
    UDP configurations only; refuses summaries without the ratio."""
    udp = [s for s in summaries if s.get("retransmission_ratio") is not None]
    if not udp:
        raise CoaplabError("no CoAP-over-UDP runs with a retransmission ratio to plot (TCP runs have none; runs "
                           "stored before coaplab measured it lack it: run them again with a new --db)")
    rows, xs, hues, cols = _placed(udp, x, hue, col)
    col_vals = _ordered(_value(f, cols) for f, _ in rows)
    x_vals = _ordered(_value(f, xs) for f, _ in rows)
    hue_vals, colours, hatches = _hue_styles(rows, hues)
    ncols, nrows, height = _grid(len(col_vals), width, panel_height)
    fig = _new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(_RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        bw = 0.8 / len(hue_vals)
        top = max(s["retransmission_ratio"] for _, s in rows)
        for i, cv in enumerate(col_vals):
            ax = axes[i // ncols][i % ncols]
            _style(ax)
            for f, s in rows:
                if _value(f, cols) != cv:
                    continue
                xi, hi = x_vals.index(_value(f, xs)), hue_vals.index(_value(f, hues))
                hv = _value(f, hues)
                _hue_bars(ax, xi, 100.0 * s["retransmission_ratio"], hi, len(hue_vals), bw, colours[hv], hatches[hv])
            ax.set_xticks(range(len(x_vals)), [_label(xs, v) for v in x_vals] if xs else [""] * len(x_vals))
            ax.set_xlim(-0.5, len(x_vals) - 0.5)
            ax.set_ylim(0, max(100.0 * top * 1.1, 1.0))
            _label_panel(ax, i, len(col_vals), ncols, xs and _dim_title(xs), "retransmission ratio (%)",
                         cols and _panel_title(cols, cv))
        _hide_unused(axes, len(col_vals))
        _bar_legend(fig, hues, hue_vals, colours, hatches)
    return fig


def completed_pmf(summaries: Sequence[dict[str, Any]], x=None, hue=None, col=None,
                  width: str | float = "two", panel_height: float = 2.0) -> Figure:
    """The probability mass function of completed exchanges per client (over all clients of
    all replications: the summaries' ``completed_per_client_pmf``), as the CoCoA study's Fig. 4
    draws it: one panel per value of ``col`` × ``x`` (default: the number of clients), one
    line with markers per ``hue`` value (default: the algorithm). Refuses summaries without it."""
    have = [s for s in summaries if s.get("completed_per_client_pmf")]
    if not have:
        raise CoaplabError("no runs with completed exchanges per client to plot (runs stored before coaplab "
                           "measured them lack them: run them again with a new --db)")
    rows, xs, hues, cols = _placed(have, x, hue, col)
    panel_keys = cols + xs
    panels = _ordered(_value(f, panel_keys) for f, _ in rows)
    hue_vals = _ordered(_value(f, hues) for f, _ in rows)
    colours = dict(zip(hue_vals, _colours(len(hue_vals))))
    markers = dict(zip(hue_vals, "osD^v<>pX*hH" * 4))
    ncols, nrows, height = _grid(len(panels), width, panel_height)
    fig = _new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(_RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        for i, pv in enumerate(panels):
            ax = axes[i // ncols][i % ncols]
            _style(ax)
            for f, s in rows:
                if _value(f, panel_keys) != pv:
                    continue
                pmf = s["completed_per_client_pmf"]
                total = sum(n for _, n in pmf)
                hv = _value(f, hues)
                ax.plot([k for k, _ in pmf], [n / total for _, n in pmf], marker=markers[hv], markersize=3,
                        color=colours[hv], linewidth=0.9)
            ax.set_ylim(bottom=0)
            _label_panel(ax, i, len(panels), ncols, "completed exchanges per client", "probability",
                         panel_keys and _panel_title(panel_keys, pv))
        _hide_unused(axes, len(panels))
        if len(hue_vals) > 1:
            handles = [Line2D([], [], color=colours[v], marker=markers[v], markersize=3) for v in hue_vals]
            _legend(fig, handles, [_label(hues, v) for v in hue_vals], _dim_title(hues))
    return fig


#: Keys that set a mesh run's offered load: they are the x axis of load curves, not series.
_LOAD_KEYS = ("workload.period_s", "workload.clients", "workload.request_bytes", "workload.exchanges")


def load_curves(summaries: Sequence[dict[str, Any]], metric: str = "carried_kbps", hue=None, col=None,
                width: str | float = "two", panel_height: float = 2.2) -> Figure:
    """Runs on a multi-hop mesh (docs/networks.md): ``metric`` of the summaries' ``mesh`` object
    (``carried_kbps``, or a counter such as ``mac_queue_drops``) against the offered load
    (kbit/s), one line per ``hue`` value (default: the algorithm), one panel per ``col`` value
    — the Cooja study's carried-vs-offered figure."""
    mesh = [s for s in summaries if s.get("mesh")]
    if not mesh:
        raise CoaplabError("no runs on a multi-hop mesh to plot (load curves need network.kind chain, grid, "
                           "dumbbell or file)")
    rows = [(f, s) for f, s in _rows(mesh, False)]
    for f, _ in rows:
        for k in _LOAD_KEYS:
            f.pop(k, None)
    known = set().union(*(f.keys() for f, _ in rows))
    _, hues, cols = _layout(rows, None, hue or ("coap.cc" if "coap.cc" in known else None), col, known)
    hues = [k for k in hues if k not in _LOAD_KEYS]
    panels = _ordered(_value(f, cols) for f, _ in rows)
    hue_vals = _ordered(_value(f, hues) for f, _ in rows)
    colours = dict(zip(hue_vals, _colours(len(hue_vals))))
    markers = dict(zip(hue_vals, "osD^v<>pX*hH"))
    ncols, nrows, height = _grid(len(panels), width, panel_height)
    fig = _new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    per_run = metric not in ("carried_kbps", "offered_kbps")
    with matplotlib.rc_context(_RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        for i, pv in enumerate(panels):
            ax = axes[i // ncols][i % ncols]
            _style(ax)
            top = 0.0
            for hv in hue_vals:
                pts = sorted((s["mesh"]["offered_kbps"], s["mesh"][metric] / (s["replications"] if per_run else 1))
                             for f, s in rows if _value(f, cols) == pv and _value(f, hues) == hv)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=markers[hv], markersize=3.5,
                            color=colours[hv], linewidth=1.2)
                    top = max(top, max(p[0] for p in pts))
            if metric == "carried_kbps" and top > 0:
                ax.plot([0, top], [0, top], color="#999999", linewidth=0.7, linestyle=":")  # carried = offered
            _zero_based(ax)
            _label_panel(ax, i, len(panels), ncols, "offered load (kbit/s)",
                         "carried load (kbit/s)" if metric == "carried_kbps" else metric.replace("_", " ") + " per replication",
                         cols and _panel_title(cols, pv))
        _hide_unused(axes, len(panels))
        if len(hue_vals) > 1:
            handles = [Line2D([], [], color=colours[v], marker=markers[v], markersize=3.5) for v in hue_vals]
            _legend(fig, handles, [_label(hues, v) for v in hue_vals], _dim_title(hues))
    return fig


#: MAC-layer packet drops by cause, from a mesh summary's counters (docs/networks.md "Metrics"):
#: queue overflow (a full buffer pool or, with `network.mac = "contiki"`, no neighbour queue
#: free), the retry limit (a frame given up after its link-layer transmissions, or after
#: macMaxCSMABackoffs busy CCAs), and collisions (Contiki without autoack: a frame corrupted at its
#: receiver and never retried; or dropped by a receiver reassembling another packet).
DROP_CAUSES: dict[str, tuple[str, ...]] = {
    "queue overflow": ("mac_queue_drops",),
    "retry limit": ("retry_failures", "channel_access_failures"),
    "collision": ("collision_drops", "reassembly_drops"),
}


def drop_cause_curves(summaries: Sequence[dict[str, Any]], col=None, width: str | float = "two",
                      panel_height: float = 1.8) -> Figure:
    """MAC-layer drops per replication vs offered load on a mesh, one row of panels per cause
    (`DROP_CAUSES`), one column per ``col`` value (e.g. ``coap.nstart``), one line per
    algorithm — the Cooja study's MAC-drop figure, split by cause."""
    mesh = [s for s in summaries if s.get("mesh")]
    if not mesh:
        raise CoaplabError("no runs on a multi-hop mesh to plot (drop curves need network.kind chain, grid, "
                           "dumbbell or file)")
    rows = [(f, s) for f, s in _rows(mesh, False)]
    for f, _ in rows:
        for k in _LOAD_KEYS:
            f.pop(k, None)
    known = set().union(*(f.keys() for f, _ in rows))
    _, hues, cols = _layout(rows, None, "coap.cc" if "coap.cc" in known else None, col, known)
    hues = [k for k in hues if k not in _LOAD_KEYS]
    panels = _ordered(_value(f, cols) for f, _ in rows)
    hue_vals = _ordered(_value(f, hues) for f, _ in rows)
    colours = dict(zip(hue_vals, _colours(len(hue_vals))))
    markers = dict(zip(hue_vals, "osD^v<>pX*hH"))
    ncols, nrows = len(panels), len(DROP_CAUSES)
    fig = _new_figure(width, panel_height * nrows + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(_RC):
        axes = fig.subplots(nrows, ncols, sharex=True, squeeze=False)
        for r, (cause, keys) in enumerate(DROP_CAUSES.items()):
            for i, pv in enumerate(panels):
                ax = axes[r][i]
                _style(ax)
                for hv in hue_vals:
                    pts = sorted((s["mesh"]["offered_kbps"],
                                  sum(s["mesh"].get(k, 0) for k in keys) / s["replications"])
                                 for f, s in rows if _value(f, cols) == pv and _value(f, hues) == hv)
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=markers[hv], markersize=3,
                                color=colours[hv], linewidth=1.1)
                if r == nrows - 1:
                    ax.set_xlabel("offered load (kbit/s)")
                if i == 0:
                    ax.set_ylabel(f"{cause}\ndrops per replication")
                if cols and r == 0:
                    ax.set_title(_panel_title(cols, pv))
                _zero_based(ax)
        if len(hue_vals) > 1:
            handles = [Line2D([], [], color=colours[v], marker=markers[v], markersize=3) for v in hue_vals]
            _legend(fig, handles, [_label(hues, v) for v in hue_vals], _dim_title(hues))
    return fig




def hop_delay(summaries: Sequence[dict[str, Any]], hue=None, col=None, width: str | float = "two",
              panel_height: float = 2.2) -> Figure:
    """Runs on a multi-hop mesh: the per-hop exchange delay — at each hop distance from the
    sink, the median over its clients of a client's mean exchange time (request to response),
    with a bar from p10 to p90 — one line per ``hue`` value (default: the algorithm), one panel
    per other varying key. What periodic workloads are judged by instead of the FCT, which is
    fixed by their period (docs/networks.md)."""
    mesh = [s for s in summaries if (s.get("mesh") or {}).get("by_hops")]
    if not mesh:
        raise CoaplabError("no runs on a multi-hop mesh to plot (the per-hop delay needs network.kind chain, grid, "
                           "dumbbell or file)")
    rows = _rows(mesh, False)
    known = set().union(*(f.keys() for f, _ in rows))
    xs, hues, cols = _layout(rows, None, hue or ("coap.cc" if "coap.cc" in known else None), col, known)
    cols = xs + cols  # the x axis is the hop distance: every other key gets panels
    panels = _ordered(_value(f, cols) for f, _ in rows)
    hue_vals = _ordered(_value(f, hues) for f, _ in rows)
    colours = dict(zip(hue_vals, _colours(len(hue_vals))))
    markers = dict(zip(hue_vals, "osD^v<>pX*hH"))
    ncols, nrows, height = _grid(len(panels), width, panel_height)
    fig = _new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(_RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        for i, pv in enumerate(panels):
            ax = axes[i // ncols][i % ncols]
            _style(ax)
            for j, hv in enumerate(hue_vals):
                for f, s in rows:
                    if _value(f, cols) != pv or _value(f, hues) != hv:
                        continue
                    pts = sorted((int(h), b["mean_exchange_s"]) for h, b in s["mesh"]["by_hops"].items()
                                 if (b.get("mean_exchange_s") or {}).get("p50") is not None)
                    if not pts:
                        continue
                    # Side by side at each hop distance, so that the bars of two lines never overlap.
                    dx = (j - (len(hue_vals) - 1) / 2) * 0.08
                    hx = [h + dx for h, _ in pts]
                    mid = [e["p50"] for _, e in pts]
                    ax.errorbar(hx, mid, yerr=[[m - e["p10"] for m, (_, e) in zip(mid, pts)],
                                               [e["p90"] - m for m, (_, e) in zip(mid, pts)]],
                                color=colours[hv], marker=markers[hv], markersize=3.5, linewidth=1.0,
                                elinewidth=0.7, capsize=1.5)
            _label_panel(ax, i, len(panels), ncols, "hops to the sink", "exchange delay (s)", cols and _panel_title(cols, pv))
            ax.xaxis.get_major_locator().set_params(integer=True)
            _zero_based(ax)
        _hide_unused(axes, len(panels))
        if len(hue_vals) > 1:
            handles = [Line2D([], [], color=colours[v], marker=markers[v], markersize=3.5) for v in hue_vals]
            _legend(fig, handles, [_label(hues, v) for v in hue_vals], _dim_title(hues))
    return fig


# --------------------------------------------------------------------------- traces


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
    fig = _new_figure(width, height + (state_height if state else 0))

    colours = {"send": OKABE_ITO[0], "retransmit": OKABE_ITO[3], "ack": OKABE_ITO[2], "drop": "#000000"}
    with matplotlib.rc_context(_RC):
        if state:
            ax, state_ax = fig.subplots(2, 1, sharex=True, height_ratios=[height, state_height])
        else:
            ax = fig.subplots()
        _style(ax)
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
    fig = _new_figure(width, height)

    kb = 1000.0
    handles, legend = [], []
    with matplotlib.rc_context(_RC):
        ax = fig.subplots()
        _style(ax)
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
    _style(ax)
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
    handles, labels = _row_major(handles, labels, ncols)
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
    fig = _new_figure(width, height)

    with matplotlib.rc_context(_RC):
        ax = fig.subplots()
        _style(ax)
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
    fig = _new_figure(width, height)

    end = max([end_s or 0.0] + [t for pts in by_dir.values() for t, _ in pts])
    with matplotlib.rc_context(_RC):
        ax = fig.subplots()
        _style(ax)
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
            ax.step([t for t, _ in pts], [v for _, v in pts], where="post", color=colour, linewidth=1.0)
            handles.append(Line2D([], [], color=colour))
            labels.append(name)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(y_label)
        ax.set_xlim(left=0)
        _zero_based(ax)
        if caption:
            ax.set_title(caption, loc="left")
        fig.legend(handles, labels, loc="outside upper center", frameon=False, ncols=len(labels),
                   handlelength=1.4, columnspacing=1.0)
    return fig


def _zero_based(ax) -> None:
    """A y axis of non-negative quantities starts at 0; all-zero data gets 0 to 1 rather than
    matplotlib's ±0.04 around 0."""
    top = ax.get_ylim()[1]
    positive = any(np.nan_to_num(np.asarray(line.get_ydata(), dtype=float)).max(initial=0.0) > 0
                   for line in ax.get_lines())
    ax.set_ylim(0, top if positive and top > 0 else 1)


def _opt(p, k):
    try:
        return _get(p, k)
    except (KeyError, AttributeError):
        return None


def _nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


KINDS = ("fct", "unnecessary", "histogram", "time-sequence", "rto", "queue", "throughput")


def result_time_sequence(result: Result, config_id: str | None = None, replication: int = 0, connection: int = 0,
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


def result_rto_trace(result: Result, config_id: str | None = None, replication: int = 0, client: int = 0,
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


def result_queue_occupancy(result: Result, config_id: str | None = None, replication: int = 0,
                           width: str | float = "two") -> Figure:
    """One traced run's bytes waiting in each direction's buffer over time, from a run's result
    (:meth:`coaplab.Result.plot_queue`; :func:`queue_occupancy`)."""
    _, run, caption = result.traced_run(config_id, replication)
    return queue_occupancy(queue_points(run), caption, width=width, end_s=run["sim_time_s"])


def result_throughput_series(result: Result, config_id: str | None = None, replication: int = 0,
                             width: str | float = "two") -> Figure:
    """One traced run's delivered throughput per direction over time, 100 ms bins, from a run's
    result (:meth:`coaplab.Result.plot_throughput`; :func:`throughput_series`)."""
    _, run, caption = result.traced_run(config_id, replication)
    return throughput_series(throughput_points(run), caption, width=width, end_s=run["sim_time_s"])
