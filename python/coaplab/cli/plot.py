"""``coaplab plot``: draw one figure from the results database (PNG, PDF or SVG)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CoaplabError
from ..files import output_file
from .common import DB_HELP, KEY_HELP, WHERE_HELP, db_arg, non_negative_int, sub_parser

NAME = "plot"


def add_parser(sub) -> argparse.ArgumentParser:
    plot = sub_parser(sub, NAME, "draw one figure from the results database (PNG, PDF or SVG)",
                    "  coaplab plot --kind fct --x link.buffer_bytes --hue coap.cc --col coap.nstart --out fig.pdf\n"
                    "  coaplab plot --db study.duckdb --kind histogram --where \"coap.cc in ('cocoa','fasor')\" --out hist.png\n"
                    "  coaplab plot --kind time-sequence --config 44c8b1475d569923 --replication 0 --out ts.svg\n"
                    "  coaplab plot --kind rto --config 42b0cb9c2ca47e1c --client 3 --width one --out rto.pdf\n"
                    "  coaplab plot --kind queue --replication 0 --out queue.svg\n"
                    "  coaplab plot --db cells.duckdb --kind coupling-loss --out loss.pdf\n"
                    "  coaplab plot --db cell.duckdb --kind state-timeline --window 0:30 --out states.svg",
                    description="Draw one figure from the results database. fct / unnecessary: box plots (whiskers "
                                "p10/p90, box p25/p75, median line) per configuration; histogram: retransmissions per "
                                "exchange; retransmission-ratio: retransmissions / CON transmissions per configuration "
                                "(UDP); completed-pmf: the distribution of completed exchanges per client; "
                                "median-ci: the median FCT per configuration with its 95 % bootstrap interval over replications as whiskers; "
                                "time-sequence: one TCP connection (runs with trace = true; with BBR a second "
                                "panel shows cwnd, the BDP estimate, pacing rate x RTprop and the modes); rto: one UDP "
                                "client's timer and RTO estimate (runs with trace = true); queue / throughput: one run's "
                                "bottleneck buffer occupancy / each direction's delivered throughput over time (runs "
                                "with trace = true on a star or gprs network); coupling-loss: FCT median and p95 and energy "
                                "per exchange against network.coupling_loss_db, one line per algorithm (a stored sweep on "
                                "an nbiot or ltem cell); state-timeline: the radio state of client 0's device over time "
                                "with its CoAP events (a cell run with trace = true).")
    plot.add_argument("--db", metavar="PATH", default=None, help=DB_HELP)
    plot.add_argument("--kind", choices=("fct", "unnecessary", "histogram", "retransmission-ratio", "completed-pmf",
                                         "time-sequence", "rto", "queue", "throughput", "load", "mac-drops",
                                         "drop-causes", "median-ci", "coupling-loss", "state-timeline"),
                      default="fct",
                      help="what to draw (default: fct)")
    plot.add_argument("--out", metavar="FILE", required=True, help="the figure file; the extension picks the format: .png, .pdf or .svg")
    plot.add_argument("--x", metavar="KEY", help="x axis: " + KEY_HELP + " (default: chosen from the keys that vary)")
    plot.add_argument("--hue", metavar="KEY", help="colour: " + KEY_HELP)
    plot.add_argument("--col", metavar="KEY", help="one panel per value: " + KEY_HELP)
    plot.add_argument("--where", metavar="CONDITION", help=WHERE_HELP)
    plot.add_argument("--log-y", action="store_true",
                      help="fct / histogram: a logarithmic y axis (wide ranges; the histogram from 0.01 %%)")
    plot.add_argument("--width", default="two", metavar="one|two|INCHES",
                      help="figure width: one (3.5 in, one paper column), two (7.16 in, default) or inches, e.g. 5")
    plot.add_argument("--config", metavar="CONFIG_ID", help="time-sequence / rto / queue / throughput: the configuration (default: the first traced one)")
    plot.add_argument("--replication", type=non_negative_int, default=None, help="time-sequence / rto / queue / throughput: the replication (default: the first traced)")
    plot.add_argument("--client", type=non_negative_int, default=None, help="rto: the client (default: the first traced)")
    plot.add_argument("--connection", type=non_negative_int, default=None,
                      help="time-sequence: the connection number (default: the busiest)")
    plot.add_argument("--window", metavar="START:END", default=None,
                      help="state-timeline: the time window in seconds, e.g. 0:30 (default: the whole run)")
    plot.add_argument("--direction", choices=("down", "up"), default="down",
                      help="time-sequence: down = server to client (default, the bottleneck), up = client to server")
    return plot


def main(args) -> int:
    from ..execute.tidy import load  # lazy: per command (start-up)
    from ..present import figures  # lazy: per command (start-up)

    width = _width(args.width)
    if Path(args.out).suffix.lower() not in (".png", ".pdf", ".svg"):
        raise CoaplabError(f"--out: {args.out!r} has no known figure extension; allowed: .png, .pdf, .svg")

    output_file(args.out, "--out")  # before reading the database: a path that cannot be written is one line
    db = db_arg(args)
    if args.log_y and args.kind not in ("fct", "histogram"):
        raise CoaplabError(f"--log-y: only for --kind fct or histogram, not {args.kind}")
    if args.window is not None and args.kind != "state-timeline":
        raise CoaplabError(f"--window: only for --kind state-timeline, not {args.kind}")
    if args.kind == "coupling-loss":  # cells: latency and energy vs coupling loss
        for opt in ("config", "replication", "client", "connection", "x", "col"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: not for --kind coupling-loss (x: network.coupling_loss_db, lines: --hue)")
        from ..present.cells import coupling_loss_curves  # lazy: per command (start-up)

        fig = coupling_loss_curves(load(db, args.where).summaries(), hue=args.hue, width=width)
    elif args.kind == "state-timeline":
        for opt in ("x", "hue", "col", "client", "connection"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: not for --kind state-timeline (it draws client 0's device of one run)")
        fig = _state_timeline(db, args, width)
    elif args.kind in ("load", "mac-drops"):  # meshes: carried load / MAC queue drops vs offered load
        for opt in ("config", "replication", "client", "connection", "x"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: not for --kind {args.kind} (its x axis is the offered load)")
        metric = "carried_kbps" if args.kind == "load" else "mac_queue_drops"
        study = load(db, args.where)
        fig = figures.load_curves(study.summaries(), metric, hue=args.hue, col=args.col, width=width, runs=study.runs)
    elif args.kind == "drop-causes":  # meshes: MAC drops by cause vs offered load
        for opt in ("config", "replication", "client", "connection", "x", "hue"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: not for --kind drop-causes (x: offered load, lines: coap.cc, rows: cause)")
        study = load(db, args.where)
        fig = figures.drop_cause_curves(study.summaries(), col=args.col, width=width, runs=study.runs)
    elif args.kind in ("fct", "unnecessary", "histogram", "retransmission-ratio", "completed-pmf", "median-ci"):
        for opt in ("config", "replication", "client", "connection"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: only for --kind time-sequence or rto")
        study = load(db, args.where)
        draw: Callable[..., Any]
        if args.kind == "median-ci":  # markers at the median FCT, whiskers its replication interval
            from ..present.compare import median_intervals  # lazy: per command (start-up)

            draw = median_intervals
        else:
            draws: dict[str, Callable[..., Any]] = {
                "fct": figures.fct_boxes, "unnecessary": figures.unnecessary_boxes,
                "histogram": figures.retransmission_histogram,
                "retransmission-ratio": figures.retransmission_ratio_bars, "completed-pmf": figures.completed_pmf}
            draw = draws[args.kind]
        fig = draw(study.summaries(), x=args.x, hue=args.hue, col=args.col, width=width,
                   **({"log_y": True} if args.log_y else {}))
    else:
        for opt in ("x", "hue", "col"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: only for --kind fct, unnecessary, histogram, retransmission-ratio, "
                                   "completed-pmf or median-ci")
        fig = _trace_figure(db, args, width)
    print(fig.save(args.out))
    return 0


def _width(text: str):
    if text in ("one", "two"):
        return text
    try:
        w = float(text)
    except ValueError:
        w = -1.0
    if not 1.0 <= w <= 30.0:
        raise CoaplabError(f"--width: {text!r} is not allowed; expected one, two or a width in inches from 1 to 30")
    return w


def _cc_state(trace: dict, direction: str) -> list[dict]:
    """The congestion-controller state rows (BBR) of one stored connection trace and direction."""
    from ..execute.store import CC_STATE_COLUMNS, cc_state_rows  # lazy: per command (start-up)

    rows = cc_state_rows({"seq_traces": [trace]})
    return [dict(zip(CC_STATE_COLUMNS, r)) for r in rows if r[3] == direction]


def _trace_figure(db: str, args, width):
    from ..execute.store import ResultsDB, sequence_points  # lazy: per command (start-up)
    from ..execute.tidy import label, load, varying  # lazy: per command (start-up)
    from ..present import traces as trace_figures  # lazy: per command (start-up)

    study = load(db, args.where)
    if args.config is not None and args.config not in study.configs:
        raise CoaplabError(f"--config: {args.config!r} is not a configuration with finished runs in {db!r}"
                           + (" matching --where" if args.where else ""))
    cids = [args.config] if args.config else list(study.configs)

    def what(cid):
        name = study.configs[cid]["name"]
        keys = varying(c for c in study.configs.values() if c["name"] == name)
        return f"{name}: {label(study.flat[cid], keys)}" if keys else name

    if args.kind in ("queue", "throughput"):
        for opt in ("client", "connection"):
            if getattr(args, opt) is not None:
                raise CoaplabError(f"--{opt}: not for --kind {args.kind} (it draws both directions of one run)")
        return _series_figure(study, cids, what, args, width)
    if args.kind == "time-sequence":
        if args.client is not None:
            raise CoaplabError("--client: only for --kind rto (time-sequence graphs pick a --connection)")
        for cid in cids:
            for run in study.runs[cid]:
                if args.replication is not None and run["replication"] != args.replication:
                    continue
                traces = run.get("seq_traces") or []
                if args.connection is not None:
                    traces = [t for t in traces if t["connection"] == args.connection]
                if not traces:
                    continue
                t = max(traces, key=lambda t: sum(p[4] for p in t["points"] if p[1] == args.direction and p[2] == "send"))
                pts = sequence_points(t, args.direction)
                if pts:
                    caption = f"{what(cid)}, replication {run['replication']}, connection {t['connection']} ({args.direction})"
                    return trace_figures.time_sequence(pts, caption, width=width, cc_state=_cc_state(t, args.direction))
        raise CoaplabError("no time-sequence trace matches: run a TCP scenario with trace = true"
                           + "".join(f", {o} {getattr(args, o)}" for o in ("config", "replication", "connection")
                                     if getattr(args, o) is not None))
    if args.connection is not None:
        raise CoaplabError("--connection: only for --kind time-sequence (rto traces pick a --client)")
    with ResultsDB(db, read_only=True) as rdb:
        for cid in cids:
            sql = ("SELECT replication, client FROM traces WHERE config_id = ?"
                   + (" AND replication = ?" if args.replication is not None else "")
                   + (" AND client = ?" if args.client is not None else "") + " ORDER BY replication, client LIMIT 1")
            params = [cid] + [v for v in (args.replication, args.client) if v is not None]
            first = rdb.con.execute(sql, params).fetchone()
            if first is None:
                continue
            rows = rdb.con.execute(
                "SELECT time_s, event, exchange, timer_s, rto_s, sample_s, sample_kind FROM traces "
                "WHERE config_id = ? AND replication = ? AND client = ? ORDER BY time_s", [cid, *first]).fetchall()
            pts = [dict(zip(("time_s", "event", "exchange", "timer_s", "rto_s", "sample_s", "sample_kind"), r)) for r in rows]
            return trace_figures.rto_trace(pts, f"{what(cid)}, replication {first[0]}, client {first[1]}", width=width)
    raise CoaplabError("no timer trace matches: run a UDP scenario with trace = true"
                       + "".join(f", {o} {getattr(args, o)}" for o in ("config", "replication", "client")
                                 if getattr(args, o) is not None))


def _series_figure(study, cids, what, args, width):
    """``--kind queue|throughput``: the first traced run matching --config / --replication."""
    from ..execute.store import queue_points, series_note, throughput_points  # lazy: per command (start-up)
    from ..present import traces as trace_figures  # lazy: per command (start-up)

    queue = args.kind == "queue"
    for cid in cids:
        for run in study.runs[cid]:
            if args.replication is not None and run["replication"] != args.replication:
                continue
            if not run.get("timeseries"):
                continue
            caption = f"{what(cid)}, replication {run['replication']}{series_note(run)}"
            if queue:
                return trace_figures.queue_occupancy(queue_points(run), caption, width=width, end_s=run["sim_time_s"])
            return trace_figures.throughput_series(throughput_points(run), caption, width=width, end_s=run["sim_time_s"])
    raise CoaplabError(f"no {args.kind} time series matches: run a scenario on a star or gprs network with trace = true"
                       + "".join(f", {o} {getattr(args, o)}" for o in ("config", "replication")
                                 if getattr(args, o) is not None))


def _window(text: str | None) -> tuple[float | None, float | None]:
    if text is None:
        return None, None
    a, sep, b = text.partition(":")
    try:
        lo, hi = float(a), float(b)
    except ValueError:
        lo = hi = -1.0
    if not sep or not 0.0 <= lo < hi:
        raise CoaplabError(f"--window: {text!r} is not allowed; expected START:END in seconds with 0 <= START < END, e.g. 0:30")
    return lo, hi


def _state_timeline(db: str, args, width):
    """``--kind state-timeline``: the first run matching --config / --replication that recorded
    a cell device's timeline, with its client's CoAP events (UDP timer traces)."""
    from ..analyse.timeline import bands  # lazy: per command (start-up)
    from ..execute.store import ResultsDB  # lazy: per command (start-up)
    from ..execute.tidy import load  # lazy: per command (start-up)
    from ..present.cells import state_timeline  # lazy: per command (start-up)

    lo, hi = _window(args.window)
    study = load(db, args.where)
    if args.config is not None and args.config not in study.configs:
        raise CoaplabError(f"--config: {args.config!r} is not a configuration with finished runs in {db!r}"
                           + (" matching --where" if args.where else ""))
    for cid in [args.config] if args.config else list(study.configs):
        for run in study.runs[cid]:
            if args.replication is not None and run["replication"] != args.replication:
                continue
            t = run.get("cell_timeline")
            if not t:
                continue
            with ResultsDB(db, read_only=True) as rdb:
                rows = rdb.con.execute("SELECT time_s, event FROM traces WHERE config_id = ? AND replication = ? "
                                       "AND client = ? ORDER BY time_s", [cid, run["replication"], t["device"]]).fetchall()
            events = [{"time_s": r[0], "event": r[1]} for r in rows]
            c = study.configs[cid]
            net = c.get("network") or {}
            caption = (f"{c['name']} [{cid}], replication {run['replication']}: device {t['device']} on the "
                       f"{net.get('kind')} cell" + (f" (truncated at {t['truncated_at_s']:g} s)" if t.get("truncated_at_s") else ""))
            return state_timeline(bands(t), events, caption, width=width, start_s=lo, end_s=hi)
    raise CoaplabError("no cell state timeline matches: run a scenario on an nbiot or ltem cell with trace = true "
                       "(coaplab run FILE --trace DIR)" + "".join(f", {o} {getattr(args, o)}" for o in ("config", "replication")
                                                                 if getattr(args, o) is not None))
