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
- :func:`hop_delay` — a mesh's exchange delay by hop distance (periodic workloads);
- the figures of one traced run over time (time-sequence graphs, RTO traces, queue occupancy,
  throughput) are in :mod:`coaplab.present.traces`, which draws them with this module's parts
  (:class:`Figure`, :func:`new_figure`, :func:`style_axes`, the palette).

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
from typing import Any

import matplotlib
import matplotlib.colors as mcolors
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as _MplFigure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..errors import CoaplabError
from ..execute.tidy import flatten, fmt_value, short, sort_key, title, varying
from ..files import atomic_write, output_file

#: Okabe & Ito, "Color Universal Design" (2008): distinguishable with every common colour-vision
#: deficiency. Black is last: it is kept for drops and medians.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
#: Paper widths, inches: one column and two columns of the IEEE / ACM two-column layouts.
WIDTHS = {"one": 3.5, "two": 7.16}
FONT_PT = 8
RC: dict[Any, Any] = {  # Any keys: matplotlib types rc_context by a Literal of every rc name
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

        with matplotlib.rc_context(RC), atomic_write(path, "wb") as f:
            self.savefig(f, format=ext, dpi=dpi, metadata=_NO_DATE.get(ext))
        return path

    def to_svg(self) -> str:
        """The figure as an inline SVG element (no XML prolog)."""
        buf = io.StringIO()
        with matplotlib.rc_context(RC):
            self.savefig(buf, format="svg", metadata=_NO_DATE["svg"])
        text = buf.getvalue()
        return text[text.index("<svg"):]

    def to_png(self, dpi: int = 150) -> bytes:
        buf = io.BytesIO()
        with matplotlib.rc_context(RC):
            self.savefig(buf, format="png", dpi=dpi)
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        return self.to_png(dpi=110)


def new_figure(width: str | float, height: float) -> Figure:
    w = WIDTHS.get(width) if isinstance(width, str) else float(width)
    if w is None:
        raise CoaplabError(f"--width: {width!r} is not allowed; expected one, two or a width in inches")
    fig = Figure(figsize=(w, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def style_axes(ax) -> None:
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
            key, v = key_values(f, placed), f.get(k)
            if seen.setdefault(key, (v,)) != (v,):
                needed.append(k)
                break
    if needed:
        (cols if not col else hues).extend(needed)
    return xs, hues, cols


def place_rows(summaries, x, hue, col):
    """The summaries as (flattened parameters, summary) rows (one per client group when
    ``group`` is placed) and the keys laid out on x, hue and panels."""
    rows = _rows(summaries, "group" in (x, hue, col))
    known = set().union(*(f.keys() for f, _ in rows))
    return (rows, *_layout(rows, x, hue, col, known))


def hue_styles(rows, hues: list[str]):
    """The hue values in order, with a colour and a hatch for each."""
    hue_vals = ordered_values(key_values(f, hues) for f, _ in rows)
    return (hue_vals, dict(zip(hue_vals, fill_colours(len(hue_vals)))),
            dict(zip(hue_vals, _hatches(len(hue_vals)))))


def key_values(flat: dict[str, Any], keys: list[str]) -> tuple:
    return tuple(flat.get(k) for k in keys)


def key_label(keys: list[str], value: tuple) -> str:
    if len(keys) == 1:
        return fmt_value(value[0])
    return ", ".join(f"{short(k)}={fmt_value(v)}" for k, v in zip(keys, value))


def dim_title(keys: list[str]) -> str:
    return ", ".join(title(k) for k in keys)


def panel_title(keys: list[str], value: tuple) -> str:
    """One line per key: ``NSTART = 2``, ``bottleneck buffer = 2,500 bytes``."""
    lines = []
    for k, v in zip(keys, value):
        name, _, unit = title(k).partition(" (")
        lines.append(f"{name} = {fmt_value(v)}" + (f" {unit.rstrip(')')}" if unit else ""))
    return "\n".join(lines)


def ordered_values(values: Iterable[tuple]) -> list[tuple]:
    """Distinct values: numbers sorted, text in order of first appearance (the sweep's order)."""
    seen: list[tuple] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    if all(all(isinstance(e, (int, float)) and not isinstance(e, bool) or e is None for e in v) for v in seen):
        return sorted(seen, key=lambda v: tuple(sort_key(e) if e is not None else (2, 0, "") for e in v))
    return seen


def panel_grid(n: int, width: str | float, panel_height: float):
    w = WIDTHS.get(width, width) if isinstance(width, str) else width
    ncols = max(1, min(n, 2 if w is not None and float(w) < 5 or n == 4 else 3))
    nrows = math.ceil(n / ncols)
    return ncols, nrows, panel_height * nrows + 0.45


#: Box and bar fills: the Okabe–Ito colours but black (a black box would hide its median).
FILLS = OKABE_ITO[:7]
#: Beyond 7 series the colours repeat, each round with another hatching, so that 12 algorithms
#: stay distinguishable in print and for every reader.
HATCHES = ["", "////", "....", "xxxx", "\\\\\\\\"]


def fill_colours(n: int) -> list[str]:
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
        add_legend(fig, handles, [key_label(hues, v) for v in hue_vals], dim_title(hues))


def add_legend(fig, handles, labels, legend_title: str) -> None:
    """Above the panels, read row by row (matplotlib fills legend columns first, so the
    entries are transposed, padded with blanks, to read in order left to right)."""
    if len(labels) <= 1 and not legend_title:
        return
    wide = fig.get_figwidth() > 5
    ncols = min(len(labels), 6 if wide else 3)
    handles, labels = row_major(handles, labels, ncols)
    fig.legend(handles, labels, title=legend_title or None,
               loc="outside upper center", ncols=ncols, frameon=False, handlelength=1.2, columnspacing=1.0)


def row_major(handles, labels, ncols: int) -> tuple[list, list]:
    """Legend entries reordered (and padded with blanks) so that a legend of ``ncols`` columns,
    which matplotlib fills column by column, reads row by row."""
    nrows = math.ceil(len(labels) / ncols)
    pad = nrows * ncols - len(labels)
    handles = list(handles) + [Patch(visible=False)] * pad
    labels = list(labels) + [""] * pad
    order = [r * ncols + c for c in range(ncols) for r in range(nrows)]
    return [handles[i] for i in order], [labels[i] for i in order]


def start_at_zero(ax) -> None:
    """A y axis of non-negative quantities starts at 0; all-zero data gets 0 to 1 rather than
    matplotlib's ±0.04 around 0."""
    top = ax.get_ylim()[1]
    positive = any(np.nan_to_num(np.asarray(line.get_ydata(), dtype=float)).max(initial=0.0) > 0
                   for line in ax.get_lines())
    ax.set_ylim(0, top if positive and top > 0 else 1)


# --------------------------------------------------------------------------- box plots


def box_plot(summaries: Sequence[dict[str, Any]], metric: str, y_label: str, x: str | None = None,
             hue: str | None = None, col: str | None = None, width: str | float = "two",
             panel_height: float = 2.2, log_y: bool = False, zero_based: bool = False) -> Figure:
    """Box plots of a percentile metric of the summaries (whiskers p10/p90, box p25/p75,
    median line), laid out by ``x``, ``hue`` and ``col`` (dotted configuration keys or
    ``group``)."""
    if not summaries:
        raise CoaplabError("no configurations to plot")
    rows, xs, hues, cols = place_rows(summaries, x, hue, col)
    col_vals = ordered_values(key_values(f, cols) for f, _ in rows)
    x_vals = ordered_values(key_values(f, xs) for f, _ in rows)
    hue_vals, colours, hatches = hue_styles(rows, hues)
    ncols, nrows, height = panel_grid(len(col_vals), width, panel_height)
    fig = new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        n_hue = len(hue_vals)
        slot = 0.8 / n_hue
        for i, cv in enumerate(col_vals):
            ax = axes[i // ncols][i % ncols]
            style_axes(ax)
            stats, positions, face = [], [], []
            for f, s in rows:
                if key_values(f, cols) != cv:
                    continue
                st = s.get(metric) or {}
                if st.get("p50") is None:
                    continue
                xi, hi = x_vals.index(key_values(f, xs)), hue_vals.index(key_values(f, hues))
                positions.append(xi + (hi - (n_hue - 1) / 2) * slot)
                stats.append({"med": st["p50"], "q1": st["p25"], "q3": st["p75"], "whislo": st["p10"],
                              "whishi": st["p90"], "fliers": [], "label": ""})
                face.append((colours[key_values(f, hues)], hatches[key_values(f, hues)]))
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
            ax.set_xticks(range(len(x_vals)), [key_label(xs, v) for v in x_vals] if xs else [""] * len(x_vals))
            if not xs:
                ax.tick_params(axis="x", length=0)
            ax.set_xlim(-0.5, len(x_vals) - 0.5)
            if len(x_vals) > 4 and max(len(key_label(xs, v)) for v in x_vals) > 6:
                ax.tick_params(axis="x", labelrotation=30)
                for lab in ax.get_xticklabels():
                    lab.set_horizontalalignment("right")
            _label_panel(ax, i, len(col_vals), ncols, xs and dim_title(xs), y_label, cols and panel_title(cols, cv))
            if log_y:
                ax.set_yscale("log")
            elif zero_based:
                top = max(((s.get(metric) or {}).get("p90") or 0.0 for _, s in rows), default=0.0)
                ax.set_ylim(0, top * 1.05 if top > 0 else 1.0)
        _hide_unused(axes, len(col_vals))
        if n_hue > 1:
            handles = [Patch(facecolor=colours[v], hatch=hatches[v], edgecolor="#333333", linewidth=0.6) for v in hue_vals]
            add_legend(fig, handles, [key_label(hues, v) for v in hue_vals], dim_title(hues))
    return fig


#: What a box plot's parts are, on its y axis (the literature's convention, not Tukey's).
BOX_NOTE = "\n(box p25–p75, whiskers p10–p90)"


def fct_boxes(summaries, x=None, hue=None, col=None, width="two", **kw) -> Figure:
    """Flow completion time per client: whiskers p10/p90, box p25/p75, median line."""
    return box_plot(summaries, "fct_s", "flow completion time (s)" + BOX_NOTE, x=x, hue=hue, col=col, width=width, **kw)


def unnecessary_boxes(summaries, x=None, hue=None, col=None, width="two", **kw) -> Figure:
    """Unnecessary retransmissions per client (p10/p25/median/p75/p90)."""
    kw.setdefault("zero_based", True)
    return box_plot(summaries, "unnecessary_retransmissions_per_client", "unnecessary retransmissions\nper client",
                    x=x, hue=hue, col=col, width=width, **kw)


# --------------------------------------------------------------------------- histograms


def retransmission_histogram(summaries: Sequence[dict[str, Any]], x=None, hue=None, col=None,
                             width: str | float = "two", bins: int = 6, panel_height: float = 1.9,
                             log_y: bool = False) -> Figure:
    """Per panel (one per value of ``col`` × ``x``): the share of exchanges that needed 0, 1,
    …, ≥ ``bins``−1 retransmissions, one bar per ``hue`` value; ``log_y``: a logarithmic share
    axis (rare retransmission counts beside a dominant one)."""
    if not summaries:
        raise CoaplabError("no configurations to plot")
    rows, xs, hues, cols = place_rows(summaries, x, hue, col)
    panel_keys = cols + xs
    panels = ordered_values(key_values(f, panel_keys) for f, _ in rows)
    hue_vals, colours, hatches = hue_styles(rows, hues)
    ncols, nrows, height = panel_grid(len(panels), width, panel_height)
    fig = new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        bw = 0.8 / len(hue_vals)
        for i, pv in enumerate(panels):
            ax = axes[i // ncols][i % ncols]
            style_axes(ax)
            for f, s in rows:
                if key_values(f, panel_keys) != pv:
                    continue
                hist = list(s.get("retransmission_histogram") or [])
                total = sum(hist) or 1
                shares = [100.0 * (hist[b] if b < len(hist) else 0) / total for b in range(bins - 1)]
                shares.append(100.0 * sum(hist[bins - 1:]) / total)
                hi = hue_vals.index(key_values(f, hues))
                hv = key_values(f, hues)
                _hue_bars(ax, list(range(bins)), shares, hi, len(hue_vals), bw, colours[hv], hatches[hv])
            ax.set_xticks(range(bins), [str(b) for b in range(bins - 1)] + [f"≥{bins - 1}"])
            if log_y:
                ax.set_yscale("log")
                ax.set_ylim(0.01, 100)
            else:
                ax.set_ylim(0, 100)
            _label_panel(ax, i, len(panels), ncols, "retransmissions per exchange", "exchanges (%)",
                         panel_keys and panel_title(panel_keys, pv))
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
    rows, xs, hues, cols = place_rows(udp, x, hue, col)
    col_vals = ordered_values(key_values(f, cols) for f, _ in rows)
    x_vals = ordered_values(key_values(f, xs) for f, _ in rows)
    hue_vals, colours, hatches = hue_styles(rows, hues)
    ncols, nrows, height = panel_grid(len(col_vals), width, panel_height)
    fig = new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        bw = 0.8 / len(hue_vals)
        top = max(s["retransmission_ratio"] for _, s in rows)
        for i, cv in enumerate(col_vals):
            ax = axes[i // ncols][i % ncols]
            style_axes(ax)
            for f, s in rows:
                if key_values(f, cols) != cv:
                    continue
                xi, hi = x_vals.index(key_values(f, xs)), hue_vals.index(key_values(f, hues))
                hv = key_values(f, hues)
                _hue_bars(ax, xi, 100.0 * s["retransmission_ratio"], hi, len(hue_vals), bw, colours[hv], hatches[hv])
            ax.set_xticks(range(len(x_vals)), [key_label(xs, v) for v in x_vals] if xs else [""] * len(x_vals))
            ax.set_xlim(-0.5, len(x_vals) - 0.5)
            ax.set_ylim(0, max(100.0 * top * 1.1, 1.0))
            _label_panel(ax, i, len(col_vals), ncols, xs and dim_title(xs), "retransmission ratio (%)",
                         cols and panel_title(cols, cv))
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
    rows, xs, hues, cols = place_rows(have, x, hue, col)
    panel_keys = cols + xs
    panels = ordered_values(key_values(f, panel_keys) for f, _ in rows)
    hue_vals = ordered_values(key_values(f, hues) for f, _ in rows)
    colours = dict(zip(hue_vals, fill_colours(len(hue_vals))))
    markers = dict(zip(hue_vals, "osD^v<>pX*hH" * 4))
    ncols, nrows, height = panel_grid(len(panels), width, panel_height)
    fig = new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        for i, pv in enumerate(panels):
            ax = axes[i // ncols][i % ncols]
            style_axes(ax)
            for f, s in rows:
                if key_values(f, panel_keys) != pv:
                    continue
                pmf = s["completed_per_client_pmf"]
                total = sum(n for _, n in pmf)
                hv = key_values(f, hues)
                ax.plot([k for k, _ in pmf], [n / total for _, n in pmf], marker=markers[hv], markersize=3,
                        color=colours[hv], linewidth=0.9)
            ax.set_ylim(bottom=0)
            _label_panel(ax, i, len(panels), ncols, "completed exchanges per client", "probability",
                         panel_keys and panel_title(panel_keys, pv))
        _hide_unused(axes, len(panels))
        if len(hue_vals) > 1:
            handles = [Line2D([], [], color=colours[v], marker=markers[v], markersize=3) for v in hue_vals]
            add_legend(fig, handles, [key_label(hues, v) for v in hue_vals], dim_title(hues))
    return fig


#: Keys that set a mesh run's offered load: they are the x axis of load curves, not series.
_LOAD_KEYS = ("workload.period_s", "workload.clients", "workload.request_bytes", "workload.exchanges")


def _mesh_points(rows, runs, pick, keys: tuple[str, ...], per_run: bool) -> list[tuple[float, float, float, float]]:
    """(offered load, mean over replications, min, max) of the summed mesh ``keys`` of the rows
    ``pick`` selects, by load; min = max = the mean without the configuration's runs."""
    out = []
    for f, s in rows:
        if not pick(f):
            continue
        y = sum(s["mesh"].get(k, 0) for k in keys) / (s["replications"] if per_run else 1)
        reps = [sum(r["mesh"].get(k, 0) for k in keys) for r in (runs or {}).get(s.get("config_id"), []) if r.get("mesh")]
        out.append((s["mesh"]["offered_kbps"], y, min(reps, default=y), max(reps, default=y)))
    return sorted(out)


def _draw_points(ax, pts, colour, marker, size: float, width: float) -> None:
    """A line through the means with whiskers from the smallest to the largest replication."""
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    err = [[max(0.0, y - p[2]) for y, p in zip(ys, pts)], [max(0.0, p[3] - y) for y, p in zip(ys, pts)]]
    ax.errorbar(xs, ys, yerr=err, marker=marker, markersize=size, color=colour, linewidth=width, elinewidth=0.7,
                capsize=2.0)


def load_curves(summaries: Sequence[dict[str, Any]], metric: str = "carried_kbps", hue=None, col=None,
                width: str | float = "two", panel_height: float = 2.2, runs=None) -> Figure:
    """Runs on a multi-hop mesh (docs/networks.md): ``metric`` of the summaries' ``mesh`` object
    (``carried_kbps``, or a counter such as ``mac_queue_drops``) against the offered load
    (kbit/s), one line per ``hue`` value (default: the algorithm), one panel per ``col`` value
    — the Cooja study's carried-vs-offered figure. The points are means over replications; with
    ``runs`` (config_id → runs) whiskers span the smallest to the largest replication."""
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
    panels = ordered_values(key_values(f, cols) for f, _ in rows)
    hue_vals = ordered_values(key_values(f, hues) for f, _ in rows)
    colours = dict(zip(hue_vals, fill_colours(len(hue_vals))))
    markers = dict(zip(hue_vals, "osD^v<>pX*hH"))
    ncols, nrows, height = panel_grid(len(panels), width, panel_height)
    fig = new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    per_run = metric not in ("carried_kbps", "offered_kbps")
    with matplotlib.rc_context(RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        for i, pv in enumerate(panels):
            ax = axes[i // ncols][i % ncols]
            style_axes(ax)
            top = 0.0
            for hv in hue_vals:
                pts = _mesh_points(rows, runs, lambda f, pv=pv, hv=hv: key_values(f, cols) == pv and key_values(f, hues) == hv,
                                   (metric,), per_run)
                if pts:
                    _draw_points(ax, pts, colours[hv], markers[hv], 3.5, 1.2)
                    top = max(top, max(p[0] for p in pts))
            if metric == "carried_kbps" and top > 0:
                ax.plot([0, top], [0, top], color="#999999", linewidth=0.7, linestyle=":")  # carried = offered
            start_at_zero(ax)
            _label_panel(ax, i, len(panels), ncols, "offered load (kbit/s)",
                         ("carried load (kbit/s)" if metric == "carried_kbps" else metric.replace("_", " ")
                          + " per replication") + ("\n(mean; whiskers min–max)" if runs else ""),
                         cols and panel_title(cols, pv))
        _hide_unused(axes, len(panels))
        if len(hue_vals) > 1:
            handles = [Line2D([], [], color=colours[v], marker=markers[v], markersize=3.5) for v in hue_vals]
            add_legend(fig, handles, [key_label(hues, v) for v in hue_vals], dim_title(hues))
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
                      panel_height: float = 1.8, runs=None) -> Figure:
    """MAC-layer drops per replication vs offered load on a mesh, one row of panels per cause
    (`DROP_CAUSES`; a cause no configuration had is left out), one column per ``col`` value
    (e.g. ``coap.nstart``), one line per algorithm through the means over replications, with
    ``runs`` (config_id → runs) whiskers from the smallest to the largest replication — the
    Cooja study's MAC-drop figure, split by cause."""
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
    panels = ordered_values(key_values(f, cols) for f, _ in rows)
    hue_vals = ordered_values(key_values(f, hues) for f, _ in rows)
    colours = dict(zip(hue_vals, fill_colours(len(hue_vals))))
    markers = dict(zip(hue_vals, "osD^v<>pX*hH"))
    causes = {c: keys for c, keys in DROP_CAUSES.items() if any(s["mesh"].get(k, 0) for _, s in rows for k in keys)}
    causes = causes or dict(list(DROP_CAUSES.items())[:1])  # nothing dropped: one row of zeros says so
    ncols, nrows = len(panels), len(causes)
    fig = new_figure(width, panel_height * nrows + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(RC):
        axes = fig.subplots(nrows, ncols, sharex=True, squeeze=False)
        for r, (cause, keys) in enumerate(causes.items()):
            for i, pv in enumerate(panels):
                ax = axes[r][i]
                style_axes(ax)
                for hv in hue_vals:
                    pts = _mesh_points(rows, runs, lambda f, pv=pv, hv=hv: key_values(f, cols) == pv and key_values(f, hues) == hv,
                                       keys, True)
                    if pts:
                        _draw_points(ax, pts, colours[hv], markers[hv], 3, 1.1)
                if r == nrows - 1:
                    ax.set_xlabel("offered load (kbit/s)")
                if i == 0:
                    ax.set_ylabel(f"{cause}\ndrops per replication" + ("\n(mean, min–max)" if runs else ""))
                if cols and r == 0:
                    ax.set_title(panel_title(cols, pv))
                start_at_zero(ax)
        if len(hue_vals) > 1:
            handles = [Line2D([], [], color=colours[v], marker=markers[v], markersize=3) for v in hue_vals]
            add_legend(fig, handles, [key_label(hues, v) for v in hue_vals], dim_title(hues))
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
    panels = ordered_values(key_values(f, cols) for f, _ in rows)
    hue_vals = ordered_values(key_values(f, hues) for f, _ in rows)
    colours = dict(zip(hue_vals, fill_colours(len(hue_vals))))
    markers = dict(zip(hue_vals, "osD^v<>pX*hH"))
    ncols, nrows, height = panel_grid(len(panels), width, panel_height)
    fig = new_figure(width, height + (0.35 if len(hue_vals) > 1 else 0))

    with matplotlib.rc_context(RC):
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        for i, pv in enumerate(panels):
            ax = axes[i // ncols][i % ncols]
            style_axes(ax)
            for j, hv in enumerate(hue_vals):
                for f, s in rows:
                    if key_values(f, cols) != pv or key_values(f, hues) != hv:
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
            _label_panel(ax, i, len(panels), ncols, "hops to the sink", "exchange delay (s)", cols and panel_title(cols, pv))
            ax.xaxis.get_major_locator().set_params(integer=True)
            start_at_zero(ax)
        _hide_unused(axes, len(panels))
        if len(hue_vals) > 1:
            handles = [Line2D([], [], color=colours[v], marker=markers[v], markersize=3.5) for v in hue_vals]
            add_legend(fig, handles, [key_label(hues, v) for v in hue_vals], dim_title(hues))
    return fig


#: The kinds ``coaplab plot`` draws (the trace kinds by :mod:`.traces`).
KINDS = ("fct", "unnecessary", "histogram", "time-sequence", "rto", "queue", "throughput")
