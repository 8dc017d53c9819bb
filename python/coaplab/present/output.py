"""Presenting summaries and result rows: readable tables, JSON Lines, CSV, markdown."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ..analyse.observe import observe_line
from ..analyse.stats import PERCENTILE_KEYS
from ..describe.scenario import CELL_KINDS, MESH_KINDS, NETWORK
from .lwm2m import lwm2m_lines
from .qblock import qblock_lines


def _f(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _wall(seconds: float) -> str:
    """A run's wall time with three significant figures: a small scenario's few milliseconds
    would otherwise print as "0.00 s"."""
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    return f"{seconds * 1000:.3g} ms"


def json_lines(summaries: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(s, sort_keys=True) for s in summaries)


def _clients(w: dict[str, Any]) -> int:
    return w["clients"] if w["kind"] != "burst" else w["background"] + (w.get("burst_clients") or 0)


def table(summaries: list[dict[str, Any]]) -> str:
    """One block per configuration: what was run, FCT percentiles, retransmissions, packets."""
    out = []
    for s in summaries:
        c = s["config"]
        swept = ", ".join(f"{k}={v}" for k, v in s.get("swept", {}).items())
        title = f"{c['name']}  [{s['config_id']}]" + (f"  {swept}" if swept else "")
        w, coap = c["workload"], c["coap"]
        out.append(title)
        if c.get("group"):
            who = "; ".join(f"{g['name']}: {g['coap']['transport']}/{g['coap']['cc']} {g['workload']['kind']} x{_clients(g['workload'])}"
                            for g in c["group"])
        else:
            who = f"{coap['transport']}/{coap['cc']}  {w['kind']} x{_clients(w)} clients"
        out.append(f"  {who}  {network_line(c)}  replications {s['replications']}")
        out.append("  FCT s        " + "  ".join(f"{k:>8}" for k in PERCENTILE_KEYS))
        out.append("               " + "  ".join(f"{_f(s['fct_s'][k]):>8}" for k in PERCENTILE_KEYS))
        if (s.get("fct_replications") or {}).get("replications"):  # none without a completed exchange (NON only)
            out.append(fct_interval_line(s["fct_replications"]))
        out.append("  unnecessary  " + "  ".join(f"{_f(s['unnecessary_retransmissions_per_client'][k], 1):>8}" for k in PERCENTILE_KEYS)
                   + f"   total {s['unnecessary_retransmissions_total']}")
        if s.get("tcp"):
            t = s["tcp"]
            out.append(
                f"  TCP: {t['connections']} connections, {t['data_segments_sent']} data segments,"
                f" {t['segments_retransmitted']} retransmitted ({t['unnecessary_retransmissions']} unnecessary,"
                f" {t['csm_retransmissions']} CSM), SYN {t['syn_retransmissions']} / SYN-ACK {t['synack_retransmissions']} retransmitted,"
                f" {t['rto_expirations']} RTO expirations, {t['fast_retransmits']} fast retransmits"
            )
        if s["retransmission_histogram"]:
            hist = s["retransmission_histogram"]
            shown = ", ".join(f"{k}:{n}" for k, n in enumerate(hist[:12])) + (" ..." if len(hist) > 12 else "")
            out.append(f"  retransmissions per exchange  {shown}")
        p = s["packets"]
        out.append(
            f"  exchanges {s['exchanges_completed']} completed, {s['exchanges_failed']} failed;"
            f" packets sent {p.get('sent', 0)}, dropped at buffer {p.get('dropped_buffer', 0)}, lost to errors {p.get('lost_link', 0)}"
        )
        out.extend(exchange_lines(s, "  "))
        settle = _settle(s)
        out.append(
            f"  throughput {_f(s['throughput_exchanges_per_s'])} exch/s, Jain {_f(s['jain_fairness'])}{settle};"
            f" mean queueing delay {_f(p.get('mean_queue_delay_s'))} s; {s['events']:,} events in {_wall(s['wall_s'])}"
        )
        if s.get("non"):
            n = s["non"]
            out.append(f"  NON: {n['sent']} sent, {n['delivered']} answered (delivery ratio {_f(n['delivery_ratio'])}),"
                       f" {_f(n['rate_per_s'])} per s per client; {n['rule_con']} sent as CON by the NON rule")
        if s.get("observe"):  # workload.kind = "observe" (docs/model.md "Observe")
            out.append("  " + observe_line(s["observe"]))
        out.extend(lwm2m_lines(s, "  "))
        out.extend(qblock_lines(s.get("qblock")))
        out.extend(_group_lines(s.get("groups") or {}))
        out.extend(_mesh_lines(s.get("mesh")))
        out.extend(cell_lines(s.get("cell")))
        out.extend(_security_lines(s.get("security")))
        out.extend(energy_lines(s.get("energy"), "  "))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _security_lines(c: dict[str, Any] | None) -> list[str]:
    """coap.security's counters (docs/model.md "Security")."""
    if not c:
        return []
    how = ", ".join(x for x in (c.get("suite"), "CID" if c.get("connection_id") else None) if x)
    return [(f"  security {c['mode']}{f' ({how})' if how else ''}: {c['handshakes']} handshakes"
            f" ({c['resumptions']} after a NAT expiry), {c['handshake_bytes']:,} handshake B,"
            f" {c['flights_retransmitted']} flights resent, {c['failed_handshakes']} failed ({c['requests_lost']} requests lost);"
            f" record/OSCORE {c['record_bytes']:,} B; {_f(c['bytes_per_exchange'])} B per exchange;"
            f" first request after {_f(c['time_to_first_request_s'])} s;"
            f" {c['requests_waited']} requests waited {_f(c['mean_handshake_wait_s'])} s on average for a handshake")]


def _network_default(c: dict[str, Any], key: str) -> Any:
    """A ``[network]`` key of a configuration, or its default when it was not given (the
    resolved configuration leaves such keys out to keep its identity)."""
    n = c.get("network") or {}
    return n[key] if key in n else NETWORK[key].default


def network_line(c: dict[str, Any]) -> str:
    """What the run's network was, naming only settings that apply to it: the star's ``[link]``
    buffer and errors; a GPRS network's own buffers and loss (``[link]`` buffer and errors do not
    apply to it); a mesh's kind (its radio line below says the rest)."""
    kind = (c.get("network") or {}).get("kind", "star")
    if kind == "gprs":
        return (f"gprs: modem buffer {_network_default(c, 'gprs_modem_buffer_bytes'):,} B, network buffer "
                f"{_network_default(c, 'gprs_network_buffer_bytes'):,} B, loss {_network_default(c, 'gprs_loss'):g}")
    if kind in MESH_KINDS:
        return f"network {kind} ([link] buffer and errors do not apply)"
    if kind in CELL_KINDS:
        category = (c.get("network") or {}).get("category") or ("nb1" if kind == "nbiot" else "m1")
        return f"{kind} cell, category {category} ([link] buffer and errors do not apply)"
    l = c["link"]
    errors = l["errors"] if isinstance(l["errors"], str) else "custom"
    return f"buffer {l['buffer_bytes']:,} B  errors {errors}"


def _settle(s: dict[str, Any]) -> str:
    """``, settling 12.345 s`` (burst workloads), with how many replications did not settle."""
    if s.get("settling_time_s") is None:
        return ""
    unsettled = s.get("replications", 0) - s["settled_replications"] if "settled_replications" in s else 0
    capped = f" ({unsettled} of {s['replications']} replications not settled: the cap)" if unsettled > 0 else ""
    return f", settling {_f(s['settling_time_s'])} s{capped}"


def exchange_lines(s: dict[str, Any], indent: str) -> list[str]:
    """The CoCoA study's metrics (docs/model.md "Metrics"): retransmission ratio, mean strong
    and weak RTT, mean initial RTO (UDP only), completed exchanges per client."""
    out = []
    sums = s.get("exchange_sums")
    if sums:
        weak = f" (weak {_f(s['mean_rtt_weak_s'])} s, {sums['rtt_weak_samples']} samples)" if sums["rtt_weak_samples"] else ""
        out.append(f"{indent}retransmission ratio {_f(s['retransmission_ratio'], 4)} ({sums['con_retransmissions']} of "
                   f"{sums['con_transmissions']} CON transmissions); mean RTT {_f(s['mean_rtt_s'])} s "
                   f"({sums['rtt_strong_samples']} strong samples){weak}; mean initial RTO {_f(s['mean_initial_rto_s'])} s")
    cpc = s.get("completed_per_client")
    if cpc and cpc.get("p50") is not None:
        out.append(f"{indent}completed per client  min {_f(cpc['min'], 1)}  p10 {_f(cpc['p10'], 1)}  p50 {_f(cpc['p50'], 1)}"
                   f"  p90 {_f(cpc['p90'], 1)}  max {_f(cpc['max'], 1)}")
    return out


def energy_lines(e: dict[str, Any] | None, indent: str) -> list[str]:
    """Networks that record time per radio state: energy, mean power, battery life and the mean
    time per state of a device (docs/energy.md)."""
    if not e:
        return []
    states = ", ".join(f"{k} {_f(v)}" for k, v in e["state_time_s"].items() if v)
    return [(f"{indent}energy: {_f(e['j_per_exchange'], 4)} J per exchange, mean power {_f(e['mean_power_mw'], 4)} mW per device"
             f" ({e['devices']} devices), battery life {_f(e['battery_life_years'], 4)} years on {e['battery_wh']:g} Wh;"
             f" time per device (s): {states or 'none'}")]


def _mesh_lines(m: dict[str, Any] | None) -> list[str]:
    """Multi-hop radio networks: loads, MAC counters, FCT by hop distance (docs/networks.md)."""
    if not m:
        return []
    out = [
        (f"  mesh ({m['nodes']} nodes): offered {_f(m['offered_kbps'])} kbit/s, carried {_f(m['carried_kbps'])} kbit/s;"
        f" requests {m['requests_generated']} created, {m['app_drops']} dropped at the application"),
        (f"    frames {m['frames_sent']} ({m['retransmissions']} link-layer retransmissions), collisions {m['collisions']},"
        f" CSMA failures {m['channel_access_failures']}, retries exhausted {m['retry_failures']},"
        f" MAC queue drops {m['mac_queue_drops']}, packets lost to the MAC {m['radio_drops']}"),
        "    hops  clients  FCT p50 s  exchange s (client means: p50, max)  completed  failed",
    ]
    for h, b in m["by_hops"].items():
        ex = b.get("mean_exchange_s") or {}
        out.append(f"    {h:>4}  {b['clients']:>7}  {_f(b['fct_s']['p50']):>9}  {_f(ex.get('p50')):>10}  {_f(ex.get('max')):>10}"
                   f"                {b['exchanges_completed']:>9}  {b['exchanges_failed']:>6}")
    return out


def cell_lines(c: dict[str, Any] | None) -> list[str]:
    """NB-IoT and LTE-M cells: coverage and the cell's counters, summed over replications
    (docs/networks.md, "Metrics of a cell")."""
    if not c:
        return []
    per = "/".join(_f(x, 1) for x in c["devices_per_level"])
    return [
        (f"  cell ({c['devices']} devices, per coverage level 0/1/2: {per}, mean level {_f(c['mean_coverage_level'])}):"
         f" random access {c['ra_attempts']} attempts ({c['ra_collisions']} collisions), RRC set-ups {c['rrc_setups']},"
         f" resumes {c['rrc_resumes']}"),
        (f"    HARQ retransmissions {c['harq_retransmissions']}, pagings {c['pagings']}, PSM-buffered {c['psm_buffered']},"
         f" NAT-dropped {c['nat_dropped']}, releases by RAI {c['releases_rai']} / inactivity {c['releases_inactivity']}"
         # Results stored before model 8 have no `bsr_grants`, before the admission limit no
         # `admission_rejects`.
         + (f", granted on a buffer status report {c['bsr_grants']}" if "bsr_grants" in c else "")
         + (f", refused by admission {c['admission_rejects']}" if c.get("admission_rejects") else "")),
    ]


def _group_lines(groups: dict[str, dict[str, Any]]) -> list[str]:
    """Per-population rows: FCT, unnecessary retransmissions, retransmission histogram."""
    out = []
    for name, g in groups.items():
        out.append(f"  group {name}: {g['transport']}/{g['cc']} {g['workload']} x{g['clients']},"
                   f" {g['exchanges_completed']} completed, {g['exchanges_failed']} failed,"
                   f" throughput {_f(g['throughput_exchanges_per_s'])} exch/s")
        out.append("    FCT s      " + "  ".join(f"{_f(g['fct_s'][k]):>8}" for k in PERCENTILE_KEYS))
        out.append("    unnecessary" + "  ".join(f"{_f(g['unnecessary_retransmissions_per_client'][k], 1):>8}" for k in PERCENTILE_KEYS)
                   + f"   total {g['unnecessary_retransmissions_total']}")
        out.extend(exchange_lines(g, "    "))
        hist = g["retransmission_histogram"]
        if hist:
            shown = ", ".join(f"{k}:{n}" for k, n in enumerate(hist[:12])) + (" ..." if len(hist) > 12 else "")
            out.append(f"    retransmissions per exchange  {shown}")
        if g.get("observe"):
            out.append("    " + observe_line(g["observe"]))
        out.extend(lwm2m_lines(g, "    "))
    return out


def replay_table(results: dict[str, list[dict[str, Any]]]) -> str:
    """Side-by-side replay of several algorithms on one script."""
    names = list(results)
    n = max(len(r) for r in results.values())
    lines = ["#    " + " | ".join(f"{name:<34}" for name in names), "     " + " | ".join(f"{'timers s -> sample / rto_after':<34}" for _ in names)]
    for i in range(n):
        cells = []
        for name in names:
            r = results[name][i]
            timers = ",".join(f"{t:.3g}" for t in r["timers"])
            sample = r["sample"]["kind"][0] if r["sample"]["kind"] != "none" else "-"
            status = "FAIL" if r["failed"] else sample
            cells.append(f"{timers} -> {status} / {r['rto_after']:.3f}"[:34].ljust(34))
        lines.append(f"{i:<4} " + " | ".join(cells))
    lines.append("sample: s = strong, w = weak, a = ambiguous (discarded), - = none; FAIL = MAX_RETRANSMIT exhausted")
    return "\n".join(lines) + "\n"


def rows_json(rows: list[dict[str, Any]]) -> str:
    """JSON Lines: one object per row."""
    return "".join(json.dumps(r) + "\n" for r in rows)


def rows_csv(rows: list[dict[str, Any]]) -> str:
    """CSV with a header; the columns are the union of the rows' keys in first-seen order."""
    columns: list[str] = []
    for r in rows:
        columns.extend(k for k in r if k not in columns)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def rows_markdown(rows: list[dict[str, Any]]) -> str:
    """A GitHub-flavoured markdown table; floats with 3 decimals (relative differences as %)."""
    columns: list[str] = []
    for r in rows:
        columns.extend(k for k in r if k not in columns)

    def cell(k: str, v: Any) -> str:
        if v is None:
            return "—"
        if k == "diff" and isinstance(v, float):
            return f"{v * 100:+.2f} %"
        return _f(v).replace("|", "\\|")

    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(cell(k, r.get(k)) for k in columns) + " |" for r in rows]
    return "\n".join(out) + "\n"


def fct_interval_line(stats: dict[str, Any]) -> str:
    """``median 12.355 s [11.760, 15.925], mean …`` from :func:`coaplab.analyse.replstats.replication_stats`."""
    parts = []
    for k in ("median", "mean"):
        st = stats.get(k) or {}
        if st.get("estimate") is None:
            continue
        ci = f" [{st['low']:.3f}, {st['high']:.3f}]" if st.get("low") is not None else ""
        parts.append(f"{k} {st['estimate']:.3f}{ci}")
    spread = stats.get("median_spread") or {}
    if spread.get("min") is not None and stats.get("replications", 0) > 1:
        parts.append(f"per-replication medians {spread['min']:.3f}–{spread['max']:.3f}")
    return "  FCT 95% CI   " + ", ".join(parts) + f" (bootstrap over {stats.get('replications', 0)} replications)"
