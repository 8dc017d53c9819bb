"""`coaplab report --db PATH --out DIR [--where COND]`: a self-contained HTML report (figures
inline as SVG, drawn by :mod:`coaplab.present.figures`) built from the results database.

One section per scenario (configuration name). Each configuration is labelled by the values of
the parameters that vary within its scenario, never by its algorithm and buffer alone. Per
scenario: FCT box plots (whiskers p10/p90, box p25/p75, median line), unnecessary
retransmissions per client, retransmission histograms and ratios (UDP), the distribution of
completed exchanges per client (clients running for a fixed duration), a table of every configuration
(throughput, fairness, the median FCT with its 95 % bootstrap interval across replications and
the spread of the per-replication medians) and TCP counters; the median FCT with its replication
interval as whiskers and the pairwise differences by ``coap.cc`` (or ``diff_by``) with intervals
and rank tests (:func:`coaplab.present.compare.report_section`). Then every recorded RTO / timer
trace and every TCP time-sequence trace: one figure per configuration (its first traced
replication), and a list of every traced replication, so that nothing is left out silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..analyse.replstats import replication_stats
from ..analyse.stats import sum_tcp
from ..describe.scenario import CELL_KINDS
from ..execute.store import (
    CC_STATE_COLUMNS,
    EMULATED_MARK,
    ResultsDB,
    cc_state_rows,
    queue_points,
    sequence_points,
    series_note,
    throughput_points,
)
from ..execute.tidy import Study, fmt_value, label, load, title, varying
from ..files import atomic_write, new_dirs_removed_on_error, output_in
from . import cells, figures
from . import traces as trace_figures  # a name of its own: "traces" is a common local name here
from .compare import check_key, report_section
from .lwm2m import lwm2m_table
from .page import CSS, esc, figure_html
from .qblock import qblock_table

#: Traces drawn per configuration: the first traced replication's first client (UDP) or the
#: busiest connection (TCP); the others are listed with the command that draws them.


def _f(v: Any, digits: int = 3) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _n(v: Any) -> str:
    """A count with thousands separators, like every number in the report's labels."""
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else _f(v)


def _scenarios(study: Study) -> list[tuple[str, list[str]]]:
    """(scenario name, its config ids) in the order first stored."""
    out: dict[str, list[str]] = {}
    for cid, c in study.configs.items():
        out.setdefault(c["name"], []).append(cid)
    return list(out.items())


def _config_table(n: int, study: Study, cids: list[str], keys: list[str], summaries: dict[str, dict[str, Any]]) -> str:
    head = "".join(f'<th class="l">{esc(title(k))}</th>' for k in keys)
    rows = []
    for cid in cids:
        s = summaries[cid]
        flat_label = label(study.configs[cid], keys) if keys else ""
        rs = replication_stats(study.runs[cid])
        med = rs["median"]
        ci = f"<br><span class=\"muted\">[{_f(med['low'])}, {_f(med['high'])}]</span>" if med["low"] is not None else ""
        mean = rs["mean"]
        ci_mean = f"<br><span class=\"muted\">[{_f(mean['low'])}, {_f(mean['high'])}]</span>" if mean["low"] is not None else ""
        spread = rs["median_spread"]
        spread_txt = f"{_f(spread['min'])}–{_f(spread['max'])}" if spread["min"] is not None else "—"
        cells = "".join(f'<td class="l">{esc(fmt_value(study.flat[cid].get(k)))}</td>' for k in keys)
        rows.append(
            f'<tr id="cfg-{esc(cid)}" title="{esc(flat_label)}">{cells}<td class="l"><code>{esc(cid)}</code></td>'
            f"<td>{_n(s['replications'])}</td><td>{_n(s['exchanges_completed'])}</td><td>{_n(s['exchanges_failed'])}</td>"
            f"<td>{_f(s['throughput_exchanges_per_s'])}</td><td>{_f(s['jain_fairness'], 4)}</td>"
            f"<td>{_f(s['fct_s']['p50'])}{ci}</td><td>{_f(mean['estimate'])}{ci_mean}</td>"
            f"<td>{spread_txt}</td><td>{_f(s.get('retransmission_ratio'), 4)}</td><td>{_f(s.get('mean_rtt_s'))}</td>"
            f"<td>{_f(s.get('mean_rtt_weak_s'))}</td><td>{_f(s.get('mean_initial_rto_s'))}</td></tr>")
    return (f'<div class="table-box"><table data-table="configs-{n}"><tr>{head}<th class="l">config_id</th><th>replications</th>'
            "<th>exchanges completed</th><th>failed</th><th>throughput (exch/s)</th><th>Jain</th>"
            "<th>median FCT (s) [95 % CI]</th><th>mean FCT (s) [95 % CI]</th>"
            "<th>per-replication medians (s)</th><th>retransmission ratio</th><th>mean RTT (s)</th>"
            f"<th>mean weak RTT (s)</th><th>mean initial RTO (s)</th></tr>{''.join(rows)}</table></div>"
            '<p class="muted">Median and mean FCT pooled over clients and replications; in brackets the 95 % '
            "confidence interval, a percentile bootstrap over replications (2000 resamples, fixed seed; none with "
            "one replication). Per-replication medians: the smallest and largest replication's median FCT. "
            "UDP only: retransmission ratio = retransmissions / CON transmissions; mean RTT over strong samples "
            "(for algorithms without samples: exchanges answered without retransmission), weak RTT over weak "
            "samples, initial RTO over every exchange's first timer — each Σ / count over all replications "
            "(docs/model.md, \"Metrics\").</p>")


TCP_KEYS = [("connections", "connections"), ("data_segments_sent", "data segments"),
            ("segments_retransmitted", "retransmitted"), ("unnecessary_retransmissions", "unnecessary"),
            ("syn_retransmissions", "SYN retx"), ("synack_retransmissions", "SYN-ACK retx"),
            ("csm_retransmissions", "CSM retx"), ("rto_expirations", "RTO expirations"),
            ("fast_retransmits", "fast retransmits"), ("duplicate_acks", "duplicate ACKs")]


def _tcp_table(n: int, study: Study, cids: list[str], keys: list[str]) -> str:
    tcp = {cid: t for cid in cids if (t := sum_tcp(study.runs[cid]))}
    if not tcp:
        return ""
    head = "".join(f'<th class="l">{esc(title(k))}</th>' for k in keys) + "".join(f"<th>{esc(lab)}</th>" for _, lab in TCP_KEYS)
    rows = "".join(
        "<tr>" + "".join(f'<td class="l">{esc(fmt_value(study.flat[cid].get(k)))}</td>' for k in keys)
        + "".join(f"<td>{_n(t.get(k, 0))}</td>" for k, _ in TCP_KEYS) + "</tr>"
        for cid, t in tcp.items())
    return (f'<div class="table-box"><table data-table="tcp-{n}"><tr>{head}</tr>{rows}</table></div>'
            '<p class="muted">TCP counters summed over all replications (both ends of every connection).</p>')


def _energy_table(n: int, study: Study, cids: list[str], keys: list[str], summaries: dict[str, dict[str, Any]]) -> str:
    """Networks that record time per radio state (docs/energy.md): each configuration's energy
    per exchange, mean power, battery life and mean time per state of a device."""
    energy = {cid: e for cid in cids if (e := summaries[cid].get("energy"))}
    if not energy:
        return ""
    states = list(next(iter(energy.values()))["state_time_s"])
    head = ("".join(f'<th class="l">{esc(title(k))}</th>' for k in keys) + "<th>J per exchange</th><th>mean power (mW)</th>"
            "<th>battery life (years)</th>" + "".join(f"<th>{esc(st)} (s)</th>" for st in states))
    rows = "".join(
        "<tr>" + "".join(f'<td class="l">{esc(fmt_value(study.flat[cid].get(k)))}</td>' for k in keys)
        + f"<td>{_f(e['j_per_exchange'], 4)}</td><td>{_f(e['mean_power_mw'], 4)}</td><td>{_f(e['battery_life_years'], 4)}</td>"
        + "".join(f"<td>{_f(e['state_time_s'][st])}</td>" for st in states) + "</tr>"
        for cid, e in energy.items())
    return (f'<h3>Energy</h3><div class="table-box"><table data-table="energy-{n}"><tr>{head}</tr>{rows}</table></div>'
            '<p class="muted">Per device (every node of a mesh): energy per completed exchange = all devices\' energy / '
            "completed exchanges; mean power over devices and replications; battery life = energy.battery_wh / mean "
            "power; mean time per radio state (docs/energy.md).</p>")


def _observe_table(n: int, study: Study, cids: list[str], keys: list[str], summaries: dict[str, dict[str, Any]]) -> str:
    """``workload.kind = "observe"`` (docs/model.md "Observe"): each configuration's notifications."""
    obs = {cid: o for cid in cids if (o := summaries[cid].get("observe"))}
    if not obs:
        return ""
    cols = ("notifications_generated", "notifications_sent", "notifications_delivered", "notification_delivered_fraction",
            "notifications_superseded", "reregistrations", "notification_age_mean_s", "notification_age_p50_s",
            "notification_age_p95_s", "notification_age_p99_s", "notification_age_max_s")
    head = "".join(f'<th class="l">{esc(title(k))}</th>' for k in keys) + "".join(f"<th>{esc(c)}</th>" for c in cols)
    rows = "".join(
        "<tr>" + "".join(f'<td class="l">{esc(fmt_value(study.flat[cid].get(k)))}</td>' for k in keys)
        + "".join(f"<td>{_f(o[c], 4)}</td>" for c in cols) + "</tr>" for cid, o in obs.items())
    return (f'<h3>Observe</h3><div class="table-box"><table data-table="observe-{n}"><tr>{head}</tr>{rows}</table></div>'
            '<p class="muted">RFC 7641 notifications over all observers and replications: counts summed; delivered '
            "fraction = distinct values delivered / values generated; age = arrival − the value's generation, mean "
            "pooled, percentiles averaged over replications (docs/model.md \"Observe\").</p>")


def _traces(db_path, cids: list[str]) -> tuple[dict[str, dict[int, list[int]]], dict[str, list[dict[str, Any]]]]:
    """UDP timer / RTO traces of the given configurations: which (replication, clients) each
    traced (config → replication → clients), and the points of the one drawn per configuration
    (its first traced replication's first client). Only those points are read: a large study's
    traces run to millions of rows."""
    index: dict[str, dict[int, list[int]]] = {}
    drawn: dict[str, list[dict[str, Any]]] = {}
    wanted = set(cids)
    with ResultsDB(db_path, read_only=True) as db:
        for cid, rep, client in db.con.execute(
                "SELECT DISTINCT config_id, replication, client FROM traces ORDER BY config_id, replication, client").fetchall():
            if cid in wanted:
                index.setdefault(cid, {}).setdefault(rep, []).append(client)
        for cid, reps in index.items():
            rep = min(reps)
            rows = db.con.execute(
                "SELECT time_s, event, exchange, timer_s, rto_s, sample_s, sample_kind FROM traces "
                "WHERE config_id = ? AND replication = ? AND client = ? ORDER BY time_s", [cid, rep, reps[rep][0]]).fetchall()
            drawn[cid] = [dict(zip(("time_s", "event", "exchange", "timer_s", "rto_s", "sample_s", "sample_kind"), r))
                          for r in rows]
    return index, drawn


def build(db_path: str | Path, where: str | None = None, diff_by: str | None = None) -> tuple[str, list[str]]:
    """The report's HTML and the ids of its figures. ``diff_by``: the key of each scenario's
    pairwise differences (default: ``coap.cc`` where it varies; :mod:`coaplab.present.compare`)."""
    study = load(db_path, where)
    if diff_by is not None:
        check_key(study.configs.values(), diff_by)
    summaries = {s["config_id"]: s for s in study.summaries()}
    body, ids, toc = [], [], []
    scen = _scenarios(study)
    for n, (name, cids) in enumerate(scen):
        keys = varying(study.configs[c] for c in cids)
        sums = [summaries[c] for c in cids]
        notes: list[str] = []
        sid = f"scenario-{n}"
        toc.append((sid, f"{name} ({len(cids)} configurations)"))
        w = study.configs[cids[0]]
        body.append(f'<section id="{sid}"><h2>{esc(name)}</h2>')
        populations = w.get("group") or []
        # With client populations the base's workload and algorithm describe nobody: name the
        # populations instead.
        base: tuple[str, ...] = ("link.errors", "link.buffer_bytes") if populations else (
            "coap.transport", "workload.kind", "workload.clients", "link.errors", "link.buffer_bytes", "coap.cc")
        kind = (w.get("network") or {}).get("kind", "star")
        if kind != "star":  # the [link] buffer and errors do not apply to a GPRS network or a mesh
            base = tuple(k for k in base if not k.startswith("link.")) + ("network.kind",)
        fixed = [k for k in base if k not in keys]
        flat0 = study.flat[cids[0]]
        who = ""
        if populations:
            who = " Client populations: " + "; ".join(
                f"{esc(g['name'])} ({esc(g['coap']['transport'])}/{esc(g['coap']['cc'])}, "
                f"{esc(g['workload']['kind'])} ×{esc(g['workload'].get('clients'))})" for g in populations) + "."
        body.append("<p>" + ("Varying: " + ", ".join(f"<code>{esc(k)}</code>" for k in keys) + ". " if keys else "One configuration. ")
                    + "Fixed: " + ", ".join(f"{esc(title(k))} {esc(fmt_value(flat0.get(k)))}" for k in fixed)
                    + f". Replications per configuration: {esc(w['replications'])}.{who}</p>")
        if all(s.get("mesh") and s["config"]["workload"]["kind"] == "periodic" for s in sums):
            # A periodic workload's FCT is set by its period (docs/networks.md): draw the delay.
            figs = [(f"hop-delay-{n}", ("Exchange delay by hop distance: per client its mean exchange time "
                     "(request to response); the median over the clients at each distance, bars p10–p90."),
                     figures.hop_delay(sums))]
            if len(sums) == 1:  # several configurations get the load curves below
                figs.append((f"load-{n}", ("Carried vs offered load on the mesh (kbit/s of requests created and of "
                             "distinct requests delivered to their sinks); dotted: carried = offered."),
                             figures.load_curves(sums, "carried_kbps")))
        else:
            figs = [(f"fct-{n}", ("Flow completion time per client: whiskers p10/p90, box p25/p75, line at the median "
                     "(pooled over clients and replications)."), figures.fct_boxes(sums))]
        if any((s["unnecessary_retransmissions_per_client"].get("p90") or 0) > 0 for s in sums):
            figs.append((f"unnecessary-{n}", ("Unnecessary retransmissions per client: whiskers p10/p90, box p25/p75, "
                         "line at the median."), figures.unnecessary_boxes(sums)))
        else:
            total = sum(s["unnecessary_retransmissions_total"] for s in sums)
            notes.append(f"Unnecessary retransmissions: {total} in all (p90 per client 0 in every configuration), "
                         "so no figure.")
        grouped = any(len(s.get("groups") or {}) > 1 for s in sums)
        if grouped:
            figs.append((f"groups-{n}", ("Flow completion time per client, by client group: whiskers p10/p90, "
                         "box p25/p75, line at the median."), figures.fct_boxes(sums, x="group")))
            if any((g["unnecessary_retransmissions_per_client"].get("p90") or 0) > 0
                   for s in sums for g in (s.get("groups") or {}).values()):
                figs.append((f"groups-unnecessary-{n}", ("Unnecessary retransmissions per client, by client group: "
                             "whiskers p10/p90, box p25/p75, line at the median."),
                             figures.unnecessary_boxes(sums, x="group")))
            if any(sum(g.get("retransmission_histogram") or []) for s in sums for g in (s.get("groups") or {}).values()):
                figs.append((f"groups-histogram-{n}", ("Share of each client group's exchanges that needed 0, 1, … "
                             "retransmissions."), figures.retransmission_histogram(sums, hue="group")))
        if sum(1 for s in sums if s.get("mesh")) > 1:
            figs.append((f"load-{n}", ("Carried vs offered load on the mesh (kbit/s of requests created and of "
                         "distinct requests delivered to their sinks); dotted: carried = offered."),
                         figures.load_curves(sums, "carried_kbps")))
            figs.append((f"mac-drops-{n}", "MAC queue drops per replication vs offered load.",
                         figures.load_curves(sums, "mac_queue_drops")))
            col = "coap.nstart" if len({s["config"]["coap"]["nstart"] for s in sums}) > 1 else None
            figs.append((f"drop-causes-{n}", ("MAC-layer packet drops per replication vs offered load, by cause: "
                         "queue overflow (buffer pool or neighbour queues full), retry limit (a frame given up "
                         "after its link-layer transmissions or busy CCAs), collision (a frame corrupted at its "
                         "receiver and never retried, or refused during another packet's reassembly)."),
                         figures.drop_cause_curves(sums, col=col)))
        if "network.coupling_loss_db" in keys and all(
                (s["config"].get("network") or {}).get("kind") in CELL_KINDS
                and isinstance(s["config"]["network"].get("coupling_loss_db"), (int, float)) for s in sums):
            figs.append((f"coupling-loss-{n}", ("Exchange latency (FCT median and p95, pooled over clients and "
                         "replications) and energy per completed exchange against the devices' coupling loss, "
                         "one line per algorithm."), cells.coupling_loss_curves(sums)))
        if any(sum(s.get("retransmission_histogram") or []) for s in sums):
            figs.append((f"histogram-{n}", "Share of exchanges that needed 0, 1, … retransmissions.",
                         figures.retransmission_histogram(sums)))
        if any(s.get("retransmission_ratio") is not None for s in sums):
            figs.append((f"retransmission-ratio-{n}", ("Retransmission ratio: retransmissions / all CON "
                         "transmissions, pooled over replications (UDP configurations)."),
                         figures.retransmission_ratio_bars(sums)))
        if any(s["config"]["workload"].get("duration_s") is not None and s.get("completed_per_client_pmf")
               for s in sums):
            # Only clients that run for a fixed time complete different numbers of exchanges.
            timed = [s for s in sums if s["config"]["workload"].get("duration_s") is not None]
            figs.append((f"completed-pmf-{n}", ("Completed exchanges per client: probability mass function over "
                         "all clients of all replications (clients running for workload.duration_s)."),
                         figures.completed_pmf(timed)))
        for fid, caption, fig in figs:
            body.append(figure_html(fid, caption, fig))
            ids.append(fid)
        body.extend(f'<p class="muted">{esc(t)}</p>' for t in notes)
        body.append(f"<h3>Configurations</h3>{_config_table(n, study, cids, keys, summaries)}")
        diffs, diff_ids = report_section(n, study, cids, summaries, diff_by)
        body.append(diffs)
        ids.extend(diff_ids)
        body.append(_tcp_table(n, study, cids, keys))
        body.append(_energy_table(n, study, cids, keys, summaries))
        body.append(_observe_table(n, study, cids, keys, summaries))
        body.append(lwm2m_table(n, study.flat, cids, keys, summaries))
        body.append(qblock_table(n, study.flat, cids, keys, summaries))
        body.append("</section>")

    scenario_keys = {cid: varying(study.configs[c] for c in cids) for _, cids in scen for cid in cids}

    def what(cid):
        keys = scenario_keys[cid]
        name = study.configs[cid]["name"]
        return f"{name}: {label(study.flat[cid], keys)}" if keys else name

    traces, drawn = _traces(db_path, list(study.configs))
    if traces:
        toc.append(("traces", f"RTO and timer traces ({len(traces)} configurations)"))
        body.append('<section id="traces"><h2>RTO and timer traces</h2>'
                    "<p>For every traced configuration, its first traced replication's first client; the table lists "
                    "every traced replication with the command that draws any of its clients.</p>")
        listing = []
        ordered = [(cid, traces[cid]) for cid in study.configs if cid in traces]
        for k, (cid, reps) in enumerate(ordered):
            rep = min(reps)
            client = reps[rep][0]
            pts = drawn[cid]
            fid = f"trace-{k}"
            caption = f"{what(cid)} [{cid}]: replication {rep}, client {client}."
            body.append(figure_html(fid, caption, trace_figures.rto_trace(pts, width="two")))
            ids.append(fid)
            listing.append(f'<tr><td class="l"><a href="#{fid}">{esc(what(cid))}</a></td><td class="l"><code>{cid}</code></td>'
                           f'<td class="l">{esc(_ranges(sorted(reps)))}</td>'
                           f'<td class="l">{esc(_ranges(sorted({c for r in reps.values() for c in r})))}</td></tr>')
        body.append('<h3>Every traced replication</h3><table data-table="trace-list"><tr><th class="l">configuration</th>'
                    '<th class="l">config_id</th><th class="l">replications</th><th class="l">clients</th></tr>'
                    f"{''.join(listing)}</table>"
                    '<p class="muted">Draw any of them: <code>coaplab plot --db DB --kind rto --config CONFIG_ID '
                    "--replication R --client C --out fig.pdf</code>.</p></section>")

    seq = _time_sequences(study, what)
    if seq:
        toc.append(("time-sequence", f"TCP time-sequence graphs ({len(seq[0])} configurations)"))
        body.append('<section id="time-sequence"><h2>TCP time-sequence graphs</h2>'
                    "<p>Server → client direction (where the bottleneck is) of the busiest connection of every TCP "
                    "configuration's first traced replication; the table lists every traced connection.</p>")
        for fid, caption, fig in seq[0]:
            body.append(figure_html(fid, caption, fig))
            ids.append(fid)
        body.append('<h3>Every traced connection</h3><table data-table="seq-list"><tr><th class="l">configuration</th>'
                    '<th class="l">config_id</th><th class="l">replications</th><th>connections</th></tr>'
                    f"{''.join(seq[1])}</table>"
                    '<p class="muted">Draw any of them: <code>coaplab plot --db DB --kind time-sequence --config CONFIG_ID '
                    "--replication R --connection N --out fig.pdf</code>; export them all: <code>coaplab export</code> "
                    "(<code>time_sequence</code> table; BBR's state: <code>cc_state</code>).</p></section>")

    series = _time_series(study, what)
    if series:
        toc.append(("time-series", f"Queue and throughput over time ({len(series[1])} configurations)"))
        body.append('<section id="time-series"><h2>Queue and throughput over time</h2>'
                    "<p>Every traced configuration's first traced replication: the bytes waiting in each direction's "
                    "buffer at every change (the packet being serialized is not in the buffer), and each direction's "
                    "delivered throughput (IP bytes serialized and not lost) in 100 ms bins (docs/model.md, "
                    "\"Time series\").</p>")
        for fid, caption, fig in series[0]:
            body.append(figure_html(fid, caption, fig))
            ids.append(fid)
        body.append('<h3>Every traced replication</h3><table data-table="series-list"><tr><th class="l">configuration</th>'
                    '<th class="l">config_id</th><th class="l">replications</th></tr>'
                    f"{''.join(series[1])}</table>"
                    '<p class="muted">Draw any of them: <code>coaplab plot --db DB --kind queue|throughput --config '
                    "CONFIG_ID --replication R --out fig.pdf</code>; export them all: <code>coaplab export</code> "
                    "(<code>queue</code> and <code>throughput</code> tables).</p></section>")

    runs = sum(len(r) for r in study.runs.values())
    where_txt = f" matching <code>{esc(where)}</code>" if where else ""
    nav = "<nav><ul>" + "".join(f'<li><a href="#{sid}">{esc(t)}</a></li>' for sid, t in toc) + "</ul></nav>"
    doc = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>coaplab report</title>"
        f"<style>{CSS}</style></head><body>"
        f"<h1>coaplab report</h1><p>{len(study.configs)} configurations{where_txt}, {runs} runs, "
        f"from <code>{esc(Path(db_path).name)}</code>.</p>{nav}"
        + "".join(body) + "</body></html>")
    return doc, ids


def _time_sequences(study: Study, what) -> tuple[list, list[str]] | None:
    figs: list[tuple[str, str, Any]] = []
    listing: list[str] = []
    for cid, runs in study.runs.items():
        # Any run with TCP time-sequence traces (a TCP base or a TCP client population).
        traced = [r for r in runs if r.get("seq_traces")]
        if not traced:
            continue
        fid = f"timeseq-{len(figs)}"
        first = traced[0]
        best = max(first["seq_traces"], key=lambda t: max((p[3] + p[4] for p in t["points"] if p[1] == "down"), default=0))
        pts = sequence_points(best)
        link = f'<a href="#{fid}">{esc(what(cid))}</a>' if pts else esc(what(cid))
        listing.append(f'<tr><td class="l">{link}</td><td class="l"><code>{cid}</code></td>'
                       f'<td class="l">{esc(_ranges([r["replication"] for r in traced]))}</td>'
                       f'<td>{_n(sum(len(r["seq_traces"]) for r in traced))}</td></tr>')
        if not pts:
            continue
        pair = _simulated_counterpart(study, cid, traced)
        if pair is not None:
            emu_run, sim_pts = pair
            e = emu_run["emulation"]
            stack = "Linux" + (f" {e['tcp_congestion']}" if e.get("tcp_congestion") else "")
            emu_pts = sequence_points(emu_run["seq_traces"][0])
            caption = (f"{what(cid)} [{cid}]: replication {emu_run['replication']}, client 0's first connection, "
                       f"server → client, simulated (configuration {cid.split(EMULATED_MARK)[0]}) and emulated "
                       f"({e.get('client')} clients, {e.get('server')} server, kernel {e.get('kernel')}) "
                       "on one axis: segments sent, retransmitted, dropped, and the cumulative ACK reaching the server.")
            figs.append((fid, caption, trace_figures.time_sequence_overlay(sim_pts, emu_pts, labels=("simulated", f"emulated ({stack})"))))
            continue
        state = [dict(zip(CC_STATE_COLUMNS, r)) for r in cc_state_rows({"seq_traces": [best]}) if r[3] == "down"]
        caption = (f"{what(cid)} [{cid}]: replication {first['replication']}, client {best['client']}, connection "
                   f"{best['connection']}, server → client: segments sent, retransmitted (drawn on top), dropped (×), "
                   "and the cumulative ACK reaching the server"
                   + ("; below, the server's BBR state: cwnd, the BDP estimate (BtlBw × RTprop), pacing rate × "
                      "RTprop, and the mode (shaded)." if state else "."))
        figs.append((fid, caption, trace_figures.time_sequence(pts, cc_state=state)))
    return (figs, listing) if figs else None


def _time_series(study: Study, what) -> tuple[list, list[str]] | None:
    """Queue occupancy and throughput figures of every configuration with traced runs (its
    first traced replication), and the list of every traced replication."""
    figs: list[tuple[str, str, Any]] = []
    listing: list[str] = []
    for cid, runs in study.runs.items():
        traced = [r for r in runs if r.get("timeseries")]
        if not traced:
            continue
        first, k = traced[0], len(listing)
        where = f"{what(cid)} [{cid}]: replication {first['replication']}{series_note(first)}"
        figs.append((f"queue-{k}", f"{where}: bytes waiting in each direction's buffer over time.",
                     trace_figures.queue_occupancy(queue_points(first), end_s=first["sim_time_s"])))
        figs.append((f"throughput-{k}", f"{where}: each direction's delivered throughput, 100 ms bins.",
                     trace_figures.throughput_series(throughput_points(first), end_s=first["sim_time_s"])))
        listing.append(f'<tr><td class="l"><a href="#queue-{k}">{esc(what(cid))}</a></td><td class="l"><code>{cid}</code></td>'
                       f'<td class="l">{esc(_ranges([r["replication"] for r in traced]))}</td></tr>')
    return (figs, listing) if figs else None


def _simulated_counterpart(study: Study, cid: str, traced: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict]] | None:
    """For an emulated configuration whose simulated one is in the study with a traced run of
    the same replication (``coaplab crossval --db`` of a scenario with ``trace = true`` stores
    both): the first such emulated run and the simulated points of client 0's first connection
    (server → client), to draw on one axis. None otherwise."""
    if EMULATED_MARK not in cid:
        return None
    sim_runs = {r["replication"]: r for r in study.runs.get(cid.split(EMULATED_MARK)[0], []) if r.get("seq_traces")}
    for run in traced:
        sim = sim_runs.get(run["replication"])
        mine = [t for t in (sim or {}).get("seq_traces", []) if t["client"] == 0]
        if run.get("emulation") and mine:
            return run, sequence_points(mine[0])
    return None


def _ranges(values: list[int]) -> str:
    """``0–2, 5`` for [0, 1, 2, 5]."""
    out: list[str] = []
    if not values:
        return ""
    start = prev = values[0]
    for v in values[1:]:
        if v == prev + 1:
            prev = v
        else:
            out.append(f"{start}–{prev}" if prev != start else str(start))
            start = prev = v
    out.append(f"{start}–{prev}" if prev != start else str(start))
    return ", ".join(out)


def write(db_path: str | Path, out_dir: str | Path, where: str | None = None, diff_by: str | None = None) -> Path:
    with new_dirs_removed_on_error(out_dir):  # a refused database leaves no empty --out behind
        path = output_in(out_dir, "index.html", "--out")  # before the work: a path that cannot be written is one line
        doc, _ = build(db_path, where, diff_by)
    with atomic_write(path, "w", encoding="utf-8") as f:
        f.write(doc)
    return path


def time_sequence_plot(points, title: str = ""):
    """A time-sequence graph (kept for callers of the earlier API): :func:`traces.time_sequence`."""
    return trace_figures.time_sequence(points, title)


def summary_box_plot(summaries, metric: str = "fct_s", y_label: str = "FCT (s)"):
    """Box plots of a percentile metric (kept for callers of the earlier API)."""
    return figures.box_plot(summaries, metric, y_label)
