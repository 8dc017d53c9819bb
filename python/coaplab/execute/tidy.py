"""Tidy views of configurations and stored results, shared by figures, the report and exports.

- :func:`flatten`: a resolved configuration as ``{dotted key: value}`` (``coap.cc``,
  ``link.buffer_bytes``, …), the names the scenario files and sweeps use.
- :func:`varying`: the keys whose values differ across configurations — what tells them apart,
  so that every label, legend and exported column names exactly those.
- :func:`select`: a ``--where`` filter, an SQL condition over dotted keys
  (``coap.cc in ('cocoa', 'fasor') and link.buffer_bytes > 2500``), evaluated by DuckDB.
- :func:`load`: the configurations and successful runs of a results database, as a
  :class:`Study` that rebuilds the per-configuration summaries.

Nothing here imports pandas at module level.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analyse.stats import summarize
from ..describe import scenario
from ..errors import CoaplabError
from ..files import check_length, output_dir, output_in
from ..names import did_you_mean
from .store import QUEUE_COLUMNS, THROUGHPUT_COLUMNS, ResultsDB, copy_to, queue_rows, throughput_rows

#: Top-level keys of a resolved configuration, before the sections.
TOP_KEYS = ("name", "seed", "replications", "trace")

#: Axis / legend titles (with units) of the keys most often swept; others show the dotted key.
TITLES = {
    "link.buffer_bytes": "bottleneck buffer (bytes)",
    "link.uplink_buffer_bytes": "uplink buffer (bytes)",
    "link.errors": "link errors",
    "link.downlink_kbps": "downlink rate (kbit/s)",
    "link.uplink_kbps": "uplink rate (kbit/s)",
    "link.downlink_delay_ms": "downlink delay (ms)",
    "link.uplink_delay_ms": "uplink delay (ms)",
    "link.mtu": "MTU (bytes)",
    "coap.cc": "algorithm",
    "coap.transport": "transport",
    "coap.nstart": "NSTART",
    "coap.max_retransmit": "MAX_RETRANSMIT",
    "coap.ack_timeout_s": "ACK_TIMEOUT (s)",
    "coap.ack_random_factor": "ACK_RANDOM_FACTOR",
    "workload.clients": "clients",
    "workload.kind": "workload",
    "workload.exchanges": "exchanges per client",
    "workload.resource_bytes": "resource (bytes)",
    "workload.burst_clients": "burst clients",
    "workload.period_s": "request period (s)",
    "workload.exception_reports_per_day": "exception reports per day",
    "energy.psm_uw": "PSM / radio-off power (µW)",
    "energy.battery_wh": "battery (Wh)",
    "tcp.initial_window": "initial window (segments)",
    "tcp.nagle": "Nagle",
    "group": "client group",
    "name": "scenario",
}


def title(key: str) -> str:
    """A key's axis or legend title, with units where it has them; a client group's key
    (``group.target.coap.cc``) as its key's title and the group (``algorithm of group target``)."""
    parts = key.split(".")
    if parts[0] == "group" and len(parts) > 2:
        rest = ".".join(parts[2:])
        return f"{TITLES.get(rest, rest)} of group {parts[1]}"
    return TITLES.get(key, key)


def _scalar(v: Any) -> Any:
    # Tables (custom error chains) and pairs become canonical JSON text: hashable, one column.
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v


def flatten(config: dict[str, Any]) -> dict[str, Any]:
    """A resolved configuration as ``{dotted key: value}``, in the configuration's own order.
    Client populations (``"group"``: a list of resolved groups) become the keys their sweeps
    use, ``group.<name>.<section>.<key>`` (``group.safe.coap.cc``)."""
    out: dict[str, Any] = {}
    for k, v in config.items():
        if k == "group" and isinstance(v, list) and all(isinstance(g, dict) and "name" in g for g in v):
            for g in v:
                for gk, gv in g.items():
                    if gk == "name":
                        continue
                    if isinstance(gv, dict):
                        for sk, sv in gv.items():
                            out[f"group.{g['name']}.{gk}.{sk}"] = _scalar(sv)
                    else:
                        out[f"group.{g['name']}.{gk}"] = _scalar(gv)
        elif isinstance(v, dict) and k not in TOP_KEYS:
            for sk, sv in v.items():
                out[f"{k}.{sk}"] = _scalar(sv)
        else:
            out[k] = _scalar(v)
    return out


def varying(configs: Iterable[dict[str, Any]], extra: Iterable[dict[str, Any]] = ()) -> list[str]:
    """Dotted keys whose values differ across ``configs`` (resolved configurations), in the
    configurations' key order. A key present in only some configurations (the ``tcp.*``
    keys of TCP runs next to UDP runs) varies only if it differs where it is present — the
    transport that implies it already tells those configurations apart."""
    flats = [flatten(c) for c in configs] + [dict(e) for e in extra]
    order: list[str] = []
    values: dict[str, set] = {}
    for f in flats:
        for k, v in f.items():
            if k not in values:
                order.append(k)
                values[k] = set()
            values[k].add(v)
    return [k for k in order if len(values[k]) > 1]


def differing_keys(flats_a: Iterable[dict[str, Any]], flats_b: Iterable[dict[str, Any]]) -> dict[str, tuple[list, list]]:
    """The keys no configuration of one side shares a value of with the other side (what keeps
    two studies from matching): key → (A's values, B's values), sorted; ``name`` left out."""
    def values(flats):
        out: dict[str, set[str]] = {}
        for f in flats:
            for k, v in f.items():
                out.setdefault(k, set()).add(json.dumps(v, sort_keys=True, default=str))
        return out

    va, vb = values(flats_a), values(flats_b)
    return {k: (sorted(map(json.loads, va.get(k, ())), key=str), sorted(map(json.loads, vb.get(k, ())), key=str))
            for k in sorted(set(va) | set(vb)) if k != "name" and not (va.get(k, set()) & vb.get(k, set()))}


def fmt_value(v: Any) -> str:
    """A parameter value as a label: integers with thousands separators (every one, so that
    "2,500" and "28,200" read alike), floats short."""
    if isinstance(v, bool) or v is None:
        return str(v).lower() if isinstance(v, bool) else "—"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, str) and v.startswith("{"):
        return "custom"
    return str(v)


def short(key: str) -> str:
    """A key's short name for labels (``coap.cc`` → ``cc``)."""
    return key.rsplit(".", 1)[-1]


def label(config_or_flat: dict[str, Any], keys: list[str], short_names: bool = True) -> str:
    """``cc=cocoa, buffer_bytes=2,500`` — the configuration's values of ``keys``."""
    flat = config_or_flat if any("." in k for k in config_or_flat) else flatten(config_or_flat)
    return ", ".join(f"{short(k) if short_names else k}={fmt_value(flat.get(k))}" for k in keys)


def sort_key(v: Any) -> tuple:
    """Numbers numerically before anything else; strings keep their given order elsewhere."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, v, "")
    return (1, 0, str(v))


def _algorithm_order() -> list[str]:
    return list(getattr(scenario, "UDP_ALGORITHMS", ())) + list(getattr(scenario, "TCP_CONTROLLERS", ()))


def canonical_order(configs: dict[str, dict[str, Any]], first_seen: dict[str, Any] | None = None) -> list[str]:
    """Config ids in a stable, readable order: scenarios by when they were first stored (or by
    name), then by the values of the keys that vary within the scenario, in key order —
    numbers ascending, algorithms in the order of docs/algorithms.md, other text alphabetical."""
    algos = {a: i for i, a in enumerate(_algorithm_order())}
    by_name: dict[str, list[str]] = {}
    for cid, c in configs.items():
        by_name.setdefault(c["name"], []).append(cid)
    def name_key(name):
        seen = [first_seen[c] for c in by_name[name] if first_seen and first_seen.get(c) is not None]
        return (min(seen) if seen else 0, name) if first_seen else (0, name)
    def value_key(key, v):
        if key == "coap.cc" and v in algos:
            return (1, algos[v], "")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return (0, v, "")
        return (2, 0, str(v))
    out = []
    for name in sorted(by_name, key=name_key):
        cids = by_name[name]
        keys = varying(configs[c] for c in cids)
        flats = {c: flatten(configs[c]) for c in cids}
        out.extend(sorted(cids, key=lambda c: tuple(value_key(k, flats[c].get(k)) for k in keys)))
    return out


_TOKEN = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*")


def _quote_keys(where: str, keys: set[str]) -> str:
    """Quotes the dotted configuration keys of an SQL condition (``coap.cc`` → ``"coap.cc"``),
    leaving string literals and everything else alone."""
    return _TOKEN.sub(lambda m: f'"{m.group(0)}"' if m.group(0) in keys else m.group(0), where)


def select(configs: dict[str, dict[str, Any]], where: str | None, extra: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """The ids of the configurations (``{config_id: resolved config}``) for which the SQL
    condition ``where`` holds; all of them without one. ``extra`` adds columns per id."""
    if where is None or not where.strip():
        return list(configs)
    import duckdb  # lazy: DuckDB (start-up)
    import pandas as pd  # lazy: pandas (start-up)

    rows = [{"config_id": cid, **flatten(c), **((extra or {}).get(cid, {}))} for cid, c in configs.items()]
    frame = pd.DataFrame(rows)
    keys = set(frame.columns)
    for m in _TOKEN.finditer(where):
        word = m.group(0)
        if "." in word and not word.startswith(("'", '"')) and word not in keys:
            hint = did_you_mean(word, sorted(keys), n=3, quote=False)
            raise CoaplabError(f"--where: {word!r} is not a configuration key{hint}; keys are dotted, as in scenario "
                               "files: coap.cc, link.buffer_bytes, workload.clients, ...")
    con = duckdb.connect()
    try:
        con.register("configuration", frame)
        sql = f"SELECT config_id FROM configuration WHERE ({_quote_keys(where, keys)})"
        try:
            chosen = {r[0] for r in con.execute(sql).fetchall()}
        except duckdb.Error as e:
            raise CoaplabError(
                f"--where: {where!r} is not a condition on configuration keys ({str(e).splitlines()[0]}); "
                f"expected SQL over dotted keys, e.g. \"coap.cc in ('cocoa', 'fasor') and link.buffer_bytes > 2500\"") from None
    finally:
        con.close()
    return [cid for cid in configs if cid in chosen]


@dataclass
class Study:
    """The configurations and successful runs of a results database (after a ``--where``)."""

    configs: dict[str, dict[str, Any]]
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    walls: dict[str, float] = field(default_factory=dict)
    source: str = ""
    #: config_id → flattened configuration (dotted keys).
    flat: dict[str, dict[str, Any]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.flat = {cid: flatten(c) for cid, c in self.configs.items()}

    def varying(self) -> list[str]:
        return varying(self.configs.values())

    def summaries(self) -> list[dict[str, Any]]:
        """Per-configuration summaries (as ``coaplab run --format json`` prints them), each with
        ``swept``: the configuration's values of the keys that vary in this study."""
        keys = self.varying()
        out = []
        for cid, config in self.configs.items():
            if not self.runs.get(cid):
                continue
            s = summarize(config, cid, self.runs[cid], self.walls.get(cid, 0.0))
            flat = flatten(config)
            s["swept"] = {k: flat.get(k) for k in keys}
            out.append(s)
        return out


def load(db_path: str | Path, where: str | None = None) -> Study:
    """Reads a results database: every configuration with at least one successful run, in the
    order they were first stored, with their runs ordered by replication."""
    with ResultsDB(db_path, read_only=True) as db:
        try:
            cfg_rows = db.con.execute("SELECT config_id, config FROM configs").fetchall()
            first_seen = dict(db.con.execute("SELECT config_id, min(stored_at) FROM runs GROUP BY config_id").fetchall())
            run_rows = db.con.execute(
                "SELECT config_id, replication, result, wall_s FROM runs WHERE status = 'ok' ORDER BY config_id, replication"
            ).fetchall()
        except Exception as e:  # noqa: BLE001 - any error of these queries (duckdb.CatalogException): not a coaplab database
            raise CoaplabError(f"--db: {str(db_path)!r} holds no coaplab results ({str(e).splitlines()[0]})") from None
    configs = {cid: json.loads(text) for cid, text in cfg_rows}
    runs: dict[str, list[dict[str, Any]]] = {}
    walls: dict[str, float] = {}
    for cid, _rep, result, wall in run_rows:
        runs.setdefault(cid, []).append(json.loads(result))
        walls[cid] = walls.get(cid, 0.0) + (wall or 0.0)
    if not runs:
        raise CoaplabError(f"--db: {str(db_path)!r} holds no finished runs")
    configs = {cid: c for cid, c in configs.items() if cid in runs}
    configs = {cid: configs[cid] for cid in canonical_order(configs, first_seen)}
    chosen = select(configs, where)
    if not chosen and where is None:  # runs whose configuration is not stored: a damaged database
        raise CoaplabError(f"--db: {str(db_path)!r} holds runs of no stored configuration (the configs table lacks them)")
    if not chosen:
        raise CoaplabError(f"--where: {where!r} matches none of the {len(configs)} configurations in {str(db_path)!r}")
    return Study(configs={cid: configs[cid] for cid in chosen}, runs={cid: runs[cid] for cid in chosen},
                 walls={cid: walls[cid] for cid in chosen}, source=str(db_path))


#: Columns of the exported time-sequence table (after config_id and the varying parameters).
TIME_SEQUENCE_COLUMNS = ("replication", "client", "connection", "time_s", "direction", "event", "seq", "length")


def param_columns(keys: list[str], taken: Iterable[str]) -> dict[str, str]:
    """Column name per varying key: the dotted key itself, or ``config.<key>`` for a top-level
    key that a table already has a column of (``seed``, ``name``)."""
    taken = set(taken)
    return {k: (f"config.{k}" if k in taken else k) for k in keys}


#: The tables ``coaplab export`` writes, one file each.
EXPORTED_TABLES = ("configs", "runs", "clients", "traces", "queue", "throughput", "time_sequence", "cc_state")


def export(db_path: str | Path, out_dir: str | Path, fmt: str, where: str | None = None) -> list[Path]:
    """Writes ``configs``, ``runs``, ``clients``, ``traces``, ``time_sequence`` (TCP
    time-sequence traces, one row per event), ``cc_state`` (BBR's state rows, one per ACK
    that changed them; none for New Reno), ``queue`` and ``throughput`` (traced runs' buffer
    occupancy change-points and 100 ms throughput bins per link direction) as ``<table>.parquet`` or ``<table>.csv``. Every
    table starts with ``config_id`` and one column per configuration parameter that varies across
    the exported configurations (dotted names: ``coap.cc``, ``link.buffer_bytes``), then its own
    columns (``replication``, ``client``, …). ``where`` keeps the configurations it matches."""
    import duckdb  # lazy: DuckDB (start-up)
    import pandas as pd  # lazy: pandas (start-up)

    if fmt not in ("parquet", "csv"):
        raise CoaplabError(f"--format: {fmt!r} is not allowed; expected parquet or csv")

    check_length(out_dir, "--out")
    written = []
    with ResultsDB(db_path, read_only=True) as db:
        out = output_dir(out_dir, "--out")  # after the database is accepted: a refused one creates nothing
        for table in EXPORTED_TABLES:  # a directory where a table's file goes: one line, before the work
            output_in(out, f"{table}.{fmt}", "--out")
        con = db.con
        try:
            configs = {cid: json.loads(text) for cid, text in con.execute("SELECT config_id, config FROM configs").fetchall()}
        except duckdb.Error as e:
            raise CoaplabError(f"--db: {str(db_path)!r} holds no coaplab results ({str(e).splitlines()[0]})") from None
        chosen = select(configs, where)
        if where and not chosen:
            raise CoaplabError(f"--where: {where!r} matches none of the {len(configs)} configurations in {str(db_path)!r}")
        keys = varying(configs[c] for c in chosen)
        seq_rows: list[tuple] = []
        for cid, rep, text in con.execute(
                "SELECT config_id, replication, result FROM runs WHERE status = 'ok' AND result LIKE '%\"seq_traces\"%' "
                "ORDER BY config_id, replication").fetchall():
            if cid not in chosen:
                continue
            for t in json.loads(text).get("seq_traces") or []:
                seq_rows.extend((cid, rep, t["client"], t["connection"], *p) for p in t["points"])
        seq = pd.DataFrame(seq_rows, columns=["config_id", *TIME_SEQUENCE_COLUMNS])
        con.register("time_sequence", seq)
        queue_rows_: list[tuple] = []
        throughput_rows_: list[tuple] = []
        for cid, rep, text in con.execute(
                "SELECT config_id, replication, result FROM runs WHERE status = 'ok' AND result LIKE '%\"timeseries\"%' "
                "ORDER BY config_id, replication").fetchall():
            if cid not in chosen:
                continue
            result = json.loads(text)
            queue_rows_.extend((cid, rep, *row) for row in queue_rows(result))
            throughput_rows_.extend((cid, rep, *row) for row in throughput_rows(result))
        con.register("queue", pd.DataFrame(queue_rows_, columns=["config_id", "replication", *QUEUE_COLUMNS]).astype(
            {"replication": "int64", "time_s": "float64", "queue_bytes": "int64"}))
        con.register("throughput", pd.DataFrame(throughput_rows_, columns=["config_id", "replication", *THROUGHPUT_COLUMNS]).astype(
            {"replication": "int64", "time_s": "float64", "bin_s": "float64", "kbps": "float64"}))
        # The stored table (or, in a database written before it existed, the stored results' rows).
        cc = db.frame("cc_state")
        cc["_order"] = range(len(cc))  # the engine's order of rows at one instant
        con.register("cc_state_rows", cc)
        try:
            tables = EXPORTED_TABLES
            source = {t: t for t in tables} | {"cc_state": "cc_state_rows"}
            table_columns = {t: [r[0] for r in con.execute(f"DESCRIBE {source[t]}").fetchall() if r[0] != "_order"]
                             for t in tables}
            # One name per parameter in every table, so that the tables join on them too.
            names = param_columns(keys, {c for cols in table_columns.values() for c in cols})
            # The clients table's tcp_* counters are NULL for every UDP client: an export of UDP
            # configurations only leaves them out rather than carry all-NULL columns.
            any_tcp = any(c.get("coap", {}).get("transport") == "tcp" for cid in chosen
                          for c in (configs[cid].get("group") or [configs[cid]]))
            for table in tables:
                columns = [c for c in table_columns[table]
                           if any_tcp or table != "clients" or not c.startswith("tcp_")]
                flat = [{"config_id": cid, **{names[k]: flatten(configs[cid]).get(k) for k in keys}} for cid in chosen]
                params = pd.DataFrame(flat, columns=["config_id", *names.values()])
                con.register("params", params)
                cols = ", ".join(f'p."{names[k]}"' for k in keys)
                rest = ", ".join(f't."{c}"' for c in columns if c != "config_id")
                order = {"configs": "", "runs": " ORDER BY p.rn, t.replication", "clients": " ORDER BY p.rn, t.replication, t.client",
                         "traces": " ORDER BY p.rn, t.replication, t.client, t.time_s",
                         "time_sequence": " ORDER BY p.rn, t.replication, t.client, t.connection, t.time_s",
                         "cc_state": " ORDER BY p.rn, t.replication, t.client, t.connection, t.direction, t.time_s, t._order",
                         "queue": " ORDER BY p.rn, t.replication, t.direction, t.link, t.time_s",
                         "throughput": " ORDER BY p.rn, t.replication, t.direction, t.link, t.time_s"}[table]
                sql = (f"SELECT t.config_id{', ' + cols if cols else ''}, {rest} FROM {source[table]} t "
                       f"JOIN (SELECT *, row_number() OVER () AS rn FROM params) p ON t.config_id = p.config_id"
                       + (order or " ORDER BY p.rn"))
                path = out / f"{table}.{fmt}"
                opts = "(FORMAT PARQUET)" if fmt == "parquet" else "(FORMAT CSV, HEADER)"
                copy_to(con, sql, path, opts)
                con.unregister("params")
                written.append(path)
        finally:
            con.unregister("time_sequence")
            con.unregister("cc_state_rows")
            con.unregister("queue")
            con.unregister("throughput")
    return written
