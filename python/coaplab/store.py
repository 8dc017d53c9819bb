"""The results database: an embedded DuckDB file, written by the coordinator only.

Tables:
- ``configs``: one row per configuration (identity, name, resolved parameters as JSON).
- ``runs``: one row per (configuration, replication): seed, status (``ok`` / ``failed``),
  error text, the run-level metrics, wall time, engine and model versions, and the full
  per-run result as JSON (from which summaries are rebuilt).
- ``clients``: one row per (configuration, replication, client); TCP runs add the client's
  connection counters (``tcp_*`` columns). TCP time-sequence traces stay in ``runs.result``.
- ``traces``: per-client timer / RTO trace points, for runs with tracing on.

Runs are committed the moment they finish (group commit: the runs that finished while the
previous commit was being written go into the next transaction together), so killing a sweep
at any point (SIGKILL included) loses at most the runs in progress; re-running the same command
skips the runs already stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from .errors import CoaplabError

#: Where `coaplab run` stores results when no `--db` is given.
DEFAULT_DB = "coaplab.duckdb"

SCHEMA = """
CREATE TABLE IF NOT EXISTS configs (
    config_id TEXT PRIMARY KEY, name TEXT, model_version TEXT, config JSON
);
CREATE TABLE IF NOT EXISTS runs (
    config_id TEXT, replication INTEGER, name TEXT, seed UBIGINT, status TEXT, error TEXT,
    events UBIGINT, sim_time_s DOUBLE, measured_period_s DOUBLE, throughput_exchanges_per_s DOUBLE,
    settling_time_s DOUBLE, exchanges_completed BIGINT, exchanges_failed BIGINT,
    unnecessary_retransmissions BIGINT, packets_sent BIGINT, dropped_buffer BIGINT, lost_link BIGINT,
    wall_s DOUBLE, engine_version TEXT, model_version TEXT, stored_at TIMESTAMP DEFAULT current_timestamp,
    result JSON,
    PRIMARY KEY (config_id, replication)
);
CREATE TABLE IF NOT EXISTS clients (
    config_id TEXT, replication INTEGER, client INTEGER, fct_s DOUBLE, first_request_s DOUBLE,
    last_end_s DOUBLE, exchanges_completed INTEGER, exchanges_failed INTEGER, retransmissions INTEGER,
    unnecessary_retransmissions INTEGER, timeouts INTEGER, duplicate_responses INTEGER,
    PRIMARY KEY (config_id, replication, client)
);
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_connections INTEGER;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_segments_sent BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_data_segments_sent BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_segments_retransmitted BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_syn_retransmissions BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_synack_retransmissions BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_csm_retransmissions BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_rto_expirations BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_fast_retransmits BIGINT;
ALTER TABLE clients ADD COLUMN IF NOT EXISTS tcp_duplicate_acks BIGINT;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS emulated BOOLEAN;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS endpoint TEXT;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS kernel TEXT;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS emulation JSON;
CREATE TABLE IF NOT EXISTS traces (
    config_id TEXT, replication INTEGER, client INTEGER, time_s DOUBLE, event TEXT, exchange INTEGER,
    timer_s DOUBLE, rto_s DOUBLE, sample_s DOUBLE, sample_kind TEXT
);
"""

RUN_COLUMNS = ("config_id", "replication", "name", "seed", "status", "error", "events", "sim_time_s",
               "measured_period_s", "throughput_exchanges_per_s", "settling_time_s", "exchanges_completed",
               "exchanges_failed", "unnecessary_retransmissions", "packets_sent", "dropped_buffer", "lost_link",
               "wall_s", "engine_version", "model_version", "result")
#: TCP runs: per-client counters of the client's connections (NULL for UDP runs).
TCP_CLIENT_COLUMNS = ("connections", "segments_sent", "data_segments_sent", "segments_retransmitted",
                      "syn_retransmissions", "synack_retransmissions", "csm_retransmissions", "rto_expirations",
                      "fast_retransmits", "duplicate_acks")
TRACE_COLUMNS = ("config_id", "replication", "client", "time_s", "event", "exchange", "timer_s", "rto_s",
                 "sample_s", "sample_kind")
CLIENT_COLUMNS = ("client", "fct_s", "first_request_s", "last_end_s", "exchanges_completed", "exchanges_failed",
                  "retransmissions", "unnecessary_retransmissions", "timeouts", "duplicate_responses")


class ResultsDB:
    """A results database file. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path, read_only: bool = False):
        import duckdb

        self.path = Path(path)
        if read_only and not self.path.exists():
            raise CoaplabError(f"--db: {str(self.path)!r} does not exist")
        try:
            self.con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.Error as e:
            raise CoaplabError(f"--db: cannot open {str(self.path)!r}: {str(e).splitlines()[0]}") from None
        if not read_only:
            self.con.execute(SCHEMA)

    def __enter__(self) -> "ResultsDB":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    def add_configs(self, configs: Iterable[tuple[str, dict[str, Any]]], model_version: str) -> None:
        import pandas as pd

        new_configs = pd.DataFrame(
            [(cid, c["name"], model_version, json.dumps(c, sort_keys=True)) for cid, c in configs],
            columns=["config_id", "name", "model_version", "config"],
        ).drop_duplicates("config_id")
        self.con.register("new_configs", new_configs)
        self.con.execute("INSERT OR IGNORE INTO configs SELECT * FROM new_configs")
        self.con.unregister("new_configs")

    def finished(self) -> set[tuple[str, int]]:
        """(config, replication) pairs stored successfully. Also remembers which pairs have a
        stored failure, so that storing their retry replaces exactly those rows."""
        rows = self.con.execute("SELECT config_id, replication, status FROM runs").fetchall()
        self._failed = {(c, r) for c, r, status in rows if status != "ok"}
        return {(c, r) for c, r, status in rows if status == "ok"}

    def store(self, batch: list[tuple[str, dict[str, Any], int, dict[str, Any] | None, str | None, float]],
              engine_version: str, model_version: str) -> None:
        """Stores finished runs — `(config_id, config, replication, result or None, error or
        None, wall_s)` — with their clients and traces, in one transaction (group commit: the
        runs that finished while the previous commit was being written)."""
        import pandas as pd

        run_rows, client_rows, trace_rows = [], [], []
        for cid, config, rep, result, error, wall_s in batch:
            if result is None:
                run_rows.append((cid, rep, config["name"], config["seed"], "failed", error) + (None,) * 11
                                + (wall_s, engine_version, model_version, None))
                continue
            clients = result["clients"]
            traces = result.get("traces")
            p = result["packets"]
            stored = {k: v for k, v in result.items() if k != "traces"}
            run_rows.append((
                cid, rep, config["name"], result["seed"], "ok", None, result["events"], result["sim_time_s"],
                result["measured_period_s"], result["throughput_exchanges_per_s"], result["settling_time_s"],
                sum(c["exchanges_completed"] for c in clients), sum(c["exchanges_failed"] for c in clients),
                sum(c["unnecessary_retransmissions"] for c in clients), p["sent"], p["dropped_buffer"], p["lost_link"],
                wall_s, engine_version, model_version, json.dumps(stored),
            ))
            client_rows.extend((cid, rep, *(c.get(k) for k in CLIENT_COLUMNS),
                                *((c.get("tcp") or {}).get(k) for k in TCP_CLIENT_COLUMNS)) for c in clients)
            if traces:
                trace_rows.extend((cid, rep, t["client"], *pt) for t in traces for pt in t["points"])
        frames = {
            "runs": pd.DataFrame(run_rows, columns=RUN_COLUMNS),
            "clients": pd.DataFrame(client_rows, columns=["config_id", "replication", *CLIENT_COLUMNS,
                                                          *(f"tcp_{k}" for k in TCP_CLIENT_COLUMNS)]),
            "traces": pd.DataFrame(trace_rows, columns=TRACE_COLUMNS),
        }
        self.con.execute("BEGIN TRANSACTION")
        try:
            for cid, _, rep, _, _, _ in batch:
                self._delete(cid, rep)
            for table, frame in frames.items():
                if len(frame):
                    self.con.register("batch_rows", frame)
                    self.con.execute(f"INSERT INTO {table} ({', '.join(frame.columns)}) SELECT * FROM batch_rows")
                    self.con.unregister("batch_rows")
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def delete_run(self, cid: str, rep: int) -> None:
        """Removes a stored run (an emulated run measured again replaces the earlier one)."""
        for table in ("runs", "clients", "traces"):
            self.con.execute(f"DELETE FROM {table} WHERE config_id = ? AND replication = ?", (cid, rep))

    def mark_emulated(self, cid: str, rep: int, endpoint: str, kernel: str, details: dict[str, Any]) -> None:
        """Marks a stored run as emulated (docs/emulation.md): which endpoints ran (client/server
        stack), the kernel, and the emulator's details (lateness, validity, real-time setup)."""
        self.con.execute("UPDATE runs SET emulated = true, endpoint = ?, kernel = ?, emulation = ? "
                         "WHERE config_id = ? AND replication = ?", (endpoint, kernel, json.dumps(details), cid, rep))

    def _delete(self, cid: str, rep: int) -> None:
        """Removes a stored failure before its retry is stored (successes are never re-run)."""
        if (cid, rep) not in getattr(self, "_failed", set()):
            return
        self._failed.discard((cid, rep))
        for table in ("runs", "clients", "traces"):
            self.con.execute(f"DELETE FROM {table} WHERE config_id = ? AND replication = ?", (cid, rep))

    def results(self, pairs: Iterable[tuple[str, int]]) -> dict[tuple[str, int], tuple[dict[str, Any], float]]:
        """(result, wall_s) of the given successfully stored (config, replication) pairs."""
        wanted = set(pairs)
        if not wanted:
            return {}
        rows = self.con.execute("SELECT config_id, replication, result, wall_s FROM runs WHERE status = 'ok'").fetchall()
        return {(c, r): (json.loads(res), w) for c, r, res, w in rows if (c, r) in wanted}

    def failures(self) -> list[tuple[str, str, int, str]]:
        return self.con.execute(
            "SELECT config_id, name, replication, error FROM runs WHERE status = 'failed' ORDER BY name, replication").fetchall()

    def frame(self, table: str):
        """A table as a pandas DataFrame (``configs``, ``runs``, ``clients``, ``traces``)."""
        if table not in ("configs", "runs", "clients", "traces"):
            raise CoaplabError(f"table {table!r}: allowed: configs, runs, clients, traces")
        import duckdb

        try:
            return self.con.execute(f"SELECT * FROM {table}").df()
        except duckdb.CatalogException:
            raise CoaplabError(f"--db: {str(self.path)!r} holds no coaplab results (no table {table!r})") from None

    def arrow(self, table: str):
        """A table as a pyarrow Table."""
        self.frame(table)  # validates the name
        rel = self.con.sql(f"SELECT * FROM {table}")
        return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()

    def export(self, out_dir: str | Path, fmt: str) -> list[Path]:
        """Writes every table as ``<table>.parquet`` or ``<table>.csv`` into ``out_dir``."""
        if fmt not in ("parquet", "csv"):
            raise CoaplabError(f"--format: {fmt!r} is not allowed; expected parquet or csv")
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for table in ("configs", "runs", "clients", "traces"):
            path = out / f"{table}.{fmt}"
            opts = "(FORMAT PARQUET)" if fmt == "parquet" else "(FORMAT CSV, HEADER)"
            self.con.execute(f"COPY {table} TO '{path.as_posix()}' {opts}")
            written.append(path)
        return written
