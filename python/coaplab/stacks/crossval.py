"""``coaplab crossval`` (docs/emulation.md): a scenario run in the simulator and in emulation
(:mod:`coaplab.stacks.emulate`) with the same replications and RNG streams, compared metric by metric,
and for TCP the two time-sequence graphs on one axis.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..analyse.stats import PERCENTILE_KEYS
from ..describe.scenario import file_stem, load_scenario
from ..errors import CoaplabError
from ..execute.runner import engine_run, run_scenario
from ..execute.store import sequence_points
from ..present.traces import time_sequence_overlay
from .dtls_compare import dtls_rows
from .emulate import (
    CLIENTS_WITH_RETRANSMISSIONS,
    DEFAULT_LATE_US,
    UNKNOWN,
    check_span,
    check_supported,
    check_tcp_congestion,
    emulate,
    percent_diff,
    table_cell,
)
from .namespaces import TcpSetup, check_environment, client_address, log
from .pcapseq import time_sequence_points
from .thirdparty import algorithm_mismatch, stack_algorithm

#: A cell's counters (docs/networks.md, "Metrics of a cell") compared by ``crossval``: the
#: emulator runs the simulator's cell, so the radio procedures its packets caused show there.
CELL_ROWS = (("ra_attempts", "cell: random-access attempts"), ("rrc_setups", "cell: RRC set-ups"),
             ("rrc_resumes", "cell: RRC resumes"), ("harq_retransmissions", "cell: HARQ retransmissions"),
             ("pagings", "cell: pagings"), ("releases_rai", "cell: releases by RAI"),
             ("releases_inactivity", "cell: releases by inactivity"),
             ("bsr_grants", "cell: grants on a buffer status report"))


def crossval_rows(sim: dict[str, Any], emu: dict[str, Any]) -> list[tuple[str, Any, Any, str]]:
    """(metric, simulated, emulated, difference) for one configuration; the emulated value and
    the difference are "n/a" where the emulated client cannot tell (a third-party client's
    retransmissions)."""
    known = (emu.get("emulation") or {}).get("client", "coaplab") in CLIENTS_WITH_RETRANSMISSIONS

    rows: list[tuple[str, Any, Any, str]] = []
    for k in PERCENTILE_KEYS:
        a, b = sim["fct_s"][k], emu["fct_s"][k]
        rows.append((f"FCT {k} s", a, b, percent_diff(a, b)))
    if sim.get("tcp"):
        a, b = sim["tcp"]["segments_retransmitted"], emu["tcp"]["segments_retransmitted"]
        rows.append(("TCP segments retransmitted", a, b, f"{b - a:+d}"))
    else:
        a = sum(k * n for k, n in enumerate(sim["retransmission_histogram"]))
        if known:
            b = sum(k * n for k, n in enumerate(emu["retransmission_histogram"]))
            rows.append(("retransmissions (completed exchanges)", a, b, f"{b - a:+d}"))
        else:
            rows.append(("retransmissions (completed exchanges)", a, UNKNOWN, UNKNOWN))
    for key, label in (("exchanges_completed", "exchanges completed"), ("exchanges_failed", "exchanges failed")):
        rows.append((label, sim[key], emu[key], f"{emu[key] - sim[key]:+d}"))
    for key, label in (("sent", "packets sent"), ("dropped_buffer", "dropped at buffer"), ("lost_link", "lost to errors")):
        a, b = int(sim["packets"].get(key, 0)), int(emu["packets"].get(key, 0))
        rows.append((label, a, b, f"{b - a:+d}"))
    if sim.get("cell") and emu.get("cell"):
        for key, label in CELL_ROWS:
            a, b = int(sim["cell"][key]), int(emu["cell"][key])
            rows.append((label, a, b, f"{b - a:+d}"))
    rows += dtls_rows(sim.get("security"), (emu.get("emulation") or {}).get("dtls"), emu["exchanges_completed"])
    if not sim.get("tcp"):
        hs, he = sim["retransmission_histogram"], emu["retransmission_histogram"] if known else []
        for n in range(max(len(hs), len(he))):
            a = hs[n] if n < len(hs) else 0
            if not known:
                rows.append((f"exchanges with {n} retransmissions", a, UNKNOWN, UNKNOWN))
                continue
            b = he[n] if n < len(he) else 0
            rows.append((f"exchanges with {n} retransmissions", a, b, f"{b - a:+d}"))
    return rows


#: Printed by ``crossval`` for TCP configurations whose receivers follow different ACK rules.
ACK_RULE_NOTE = ("note: the model's receiver delays ACKs (every second segment, else 200 ms) and the kernel's "
                 "follows its own policy, so ACK counts and early slow start differ; for a like-for-like "
                 "comparison set [tcp] ack_every_segment = true (docs/emulation.md, \"Like for like\")")


def crossval(scenario: str | Path | dict[str, Any], *, client: str = "coaplab", server: str = "coaplab",
             db: str | None = None, replications: int | None = None, out_dir: str | Path | None = None,
             max_seconds: float = 600.0, late_us: float = DEFAULT_LATE_US, progress: bool = True,
             tcp_congestion: str | None = None, allow_mismatch: bool = False) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Runs the scenario in the simulator and in emulation (same replications, same RNG
    streams); returns (simulated summary, emulated summary) per configuration.

    Only like with like: a configuration whose ``coap.cc`` the client stack does not run
    (:func:`coaplab.stacks.thirdparty.algorithm_mismatch`: libcoap and aiocoap run RFC 7252's
    fixed timers whatever ``coap.cc`` says) is refused before anything runs, unless
    ``allow_mismatch``: then it runs and its emulated summary says what each side ran
    (``emulation.algorithm_mismatch``, printed in its row)."""
    sc = load_scenario(scenario)
    mismatches: dict[str, str] = {}
    tcp = False
    for cfg in sc.iter_configurations():
        if m := _mismatch(cfg, client, tcp_congestion):
            mismatches.setdefault(cfg["coap"]["cc"], m)
            tcp = tcp or cfg["coap"]["transport"] == "tcp"
    check_tcp_congestion(sc.configurations(), tcp_congestion)
    if mismatches and not allow_mismatch:
        cc, first = next(iter(mismatches.items()))
        fix = ("set coap.cc to the kernel's controller or drop --tcp-congestion" if tcp
               else f"use --client coaplab or coap.cc = {stack_algorithm(client, cc)!r}")
        raise CoaplabError(f"crossval: coap.cc = {cc!r}: {first}; not like with like, nothing run "
                           f"({fix}, or --allow-mismatch to run it labelled)")
    check_environment()
    for cfg in sc.iter_configurations():
        check_supported(cfg, client, server, tcp_congestion)
        check_span(cfg, max_seconds)
    raw = dict(sc.raw)
    if replications is not None:
        raw["replications"] = min(replications, int(raw.get("replications", 1)))
    if sc.sweep:
        raw["sweep"] = sc.sweep
    if progress and any(_like_for_like(c) is False for c in sc.iter_configurations()):
        log(ACK_RULE_NOTE)
    sim = run_scenario(raw, progress=False, db=db).summaries
    emu = emulate(raw, client=client, server=server, db=db, out_dir=out_dir, max_seconds=max_seconds,
                  late_us=late_us, progress=progress, tcp_congestion=tcp_congestion)
    pairs = list(zip(sim, emu))
    for s, e in pairs:
        if m := mismatches.get(s["config"]["coap"]["cc"]):
            e["emulation"]["algorithm_mismatch"] = m
    if out_dir is not None:
        for s, e in pairs:
            if s["config"]["coap"]["transport"] == "tcp":
                name = "Linux" + (f" {tcp_congestion}" if tcp_congestion else "")
                path = crossval_time_sequence(s["config"], s["config_id"], out_dir, label=f"emulated ({name})")
                e["emulation"]["time_sequence_svg"] = str(path)
        crossval_report(pairs, out_dir)
    return pairs


def _mismatch(cfg: dict[str, Any], client: str, tcp_congestion: str | None) -> str | None:
    """What each side would run when the emulated side does not run the simulator's algorithm
    (a third-party client's own algorithm; over TCP, ``--tcp-congestion`` naming another
    controller than ``coap.cc``); None for like with like."""
    cc = cfg["coap"]["cc"]
    if cfg["coap"]["transport"] == "udp":
        return algorithm_mismatch(client, cc)
    runs = tcp_congestion or TcpSetup.from_config(cfg).congestion
    return None if runs == TcpSetup.from_config(cfg).congestion else f"Linux runs {runs}, the simulator runs {cc}"


def _like_for_like(cfg: dict[str, Any]) -> bool | None:
    """Whether the model's and the kernel's receivers follow one ACK rule; None over UDP."""
    return TcpSetup.from_config(cfg).like_for_like() if cfg["coap"]["transport"] == "tcp" else None


def _ack_rule(cfg: dict[str, Any]) -> str:
    """The crossval report's sentence on the receivers' ACK rules (TCP only)."""
    return {None: "",
            True: " ACK rule: both sides acknowledge every segment (like for like).",
            False: " ACK rule: the model delays ACKs, the kernel follows its own policy (not like for like)."}[_like_for_like(cfg)]


def crossval_report(pairs: list[tuple[dict[str, Any], dict[str, Any]]], out_dir: str | Path) -> Path:
    """Writes ``out_dir/crossval.md``: the report section of a cross-validation — per
    configuration, the metrics side by side (:func:`crossval_rows`) as a Markdown table, the
    emulator's lateness and validity, the endpoints and kernel, and for TCP the overlaid
    time-sequence graphs of replication 0 (linked relative to ``out_dir``)."""
    out = ["# Cross-validation: simulated vs emulated", ""]
    for sim, emu in pairs:
        e = emu["emulation"]
        swept = ", ".join(f"`{k}` = {v}" for k, v in emu.get("swept", {}).items())
        out += [f"## {sim['name']} `{sim['config_id']}`" + (f" — {swept}" if swept else ""), "",
                f"{e['client']} clients, {e['server']} server, {sim['replications']} replications; "
                f"emulator lateness mean {e['lateness_us_mean']:.0f} µs, worst p99 {e['lateness_us_p99_max']:.0f} µs; "
                f"{e['invalid_runs']} of {emu['replications']} emulated runs invalid; kernel {e['kernel']}."
                + _ack_rule(sim["config"])
                + (f" **Not like with like: {e['algorithm_mismatch']}.**" if e.get("algorithm_mismatch") else ""),
                "", "| metric | simulated | emulated | difference |", "|---|---:|---:|---:|"]
        out += [f"| {label} | {table_cell(a)} | {table_cell(b)} | {d} |" for label, a, b, d in crossval_rows(sim, emu)]
        if e.get("time_sequence_svg"):
            rel = Path(e["time_sequence_svg"]).name
            out += ["", f"![simulated and emulated time-sequence graphs, replication 0]({rel})"]
        out.append("")
    path = Path(out_dir) / "crossval.md"
    path.write_text("\n".join(out))
    return path


def simulated_time_sequence(cfg: dict[str, Any], replication: int = 0, client: int = 0,
                            connection: int = 0) -> list[dict[str, Any]]:
    """The simulator's server → client time-sequence points of one connection (the
    ``connection``-th of client ``client``) of one replication: the run again with
    ``trace = true`` (tracing records, it changes no result)."""
    out = json.loads(engine_run(json.dumps(dict(cfg, trace=True)), replication, None))
    mine = [t for t in out.get("seq_traces") or [] if t["client"] == client]
    if connection >= len(mine):
        raise CoaplabError(f"the simulated run has no connection {connection} of client {client}")

    return sequence_points(mine[connection])


def crossval_time_sequence(cfg: dict[str, Any], cid: str, out_dir: str | Path, replication: int = 0,
                           label: str = "emulated (Linux)") -> Path:
    """Writes ``out_dir/<scenario name>-<config_id>-rep<r>-time-sequence.svg``: the simulated and
    the emulated time-sequence graphs (server → client, client 0's first connection) of
    replication ``r`` of a TCP configuration on one axis, the emulated one read from the run's
    captures in ``out_dir/<config_id>-r<r>`` (:func:`coaplab.stacks.pcapseq.time_sequence_points`)."""
    sim = simulated_time_sequence(cfg, replication)
    emu = time_sequence_points(Path(out_dir) / f"{cid}-r{replication}", client_address(0))
    caption = f"{cfg['name']} [{cid}], replication {replication}: server → client, connection 0"
    fig = time_sequence_overlay(sim, emu, caption, labels=("simulated", label))
    # The scenario name is user text: reduced as pcap / trace names are (no "/", no "."), so the
    # file stays inside out_dir.
    return fig.save(Path(out_dir) / f"{file_stem(cfg['name'])}-{cid}-rep{replication}-time-sequence.svg")


def crossval_table(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    out = []
    for sim, emu in pairs:
        e = emu["emulation"]
        swept = ", ".join(f"{k}={v}" for k, v in emu.get("swept", {}).items())
        out.append(f"{sim['name']}  [{sim['config_id']}]" + (f"  {swept}" if swept else "")
                   + f"  simulated vs emulated ({e['client']} clients, {e['server']} server), {sim['replications']} replications"
                   + (f"  NOT LIKE WITH LIKE: {e['algorithm_mismatch']}" if e.get("algorithm_mismatch") else ""))
        out.append(f"  {'metric':<38} {'simulated':>12} {'emulated':>12} {'difference':>11}")
        for label, a, b, d in crossval_rows(sim, emu):
            out.append(f"  {label:<38} {table_cell(a):>12} {table_cell(b):>12} {d:>11}")
        out.append(f"  lateness: mean {e['lateness_us_mean']:.0f} µs, worst p99 {e['lateness_us_p99_max']:.0f} µs;"
                   f" {e['invalid_runs']} of {emu['replications']} emulated runs invalid")
        if e.get("time_sequence_svg"):
            out.append(f"  time-sequence graphs (replication 0, simulated and emulated): {e['time_sequence_svg']}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
