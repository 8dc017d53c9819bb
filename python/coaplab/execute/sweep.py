"""The writer of one sweep (:class:`SweepWriter`): the database lock of a sweep, its group
commits between readers, and the journal that keeps finished runs across a reader that holds on
or a kill (:mod:`.store` has the database itself and why it is written this way)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from ..errors import CoaplabError
from .store import READ_WAIT_S, RETRY_PAUSE_S, DatabaseBusy, ResultsDB, read_requests

#: How long the sweep's writer waits for readers at each group commit before leaving the runs
#: pending for the next commit (the sweep keeps running meanwhile).
WRITE_WAIT_S = 0.5
#: How long the writer waits for readers at the end of a sweep, for the runs still pending.
FINAL_WRITE_WAIT_S = 300.0
#: How long the writer stays out while a reader asks to get in (then it opens anyway; a request
#: file older than :data:`READ_WAIT_S` + 1 s is a crashed reader's and ignored).
READER_GAP_S = 2.0


class SweepWriter:
    """The writer of one sweep. It opens the database only while it commits a batch of runs and
    closes it after, so that readers get in between commits. When readers hold the file (a
    notebook connection, a long report) for longer than :data:`WRITE_WAIT_S`, the batch stays
    pending and goes into the next commit; :meth:`flush` waits up to
    :data:`FINAL_WRITE_WAIT_S` for the last ones.

    Runs kept waiting are also written to a journal next to the database
    (``<db>.journal``, JSON Lines, fsynced): if the reader holds on past the final wait, or the
    sweep is killed meanwhile, nothing computed is lost — the next sweep on the database commits
    the journal's runs first (:meth:`begin`), without running them again."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        # The lock and the journal belong to the file, not to the name it was given by:
        # `--db a.duckdb` and `--db link-to-a.duckdb` are one database.
        self.real = Path(os.path.realpath(self.path))
        self.journal = self.real.with_name(self.real.name + ".journal")
        self.pending: list = []
        self.pending_outputs: list[tuple] = []
        self._journaled = 0  # how many of `pending` the journal holds
        self._failed: set[tuple[str, int]] = set()
        self.broken = False
        self._lock: TextIO | None = None
        #: The output files recorded for stored runs (``ResultsDB.outputs``), read by begin().
        self.outputs: dict[str, tuple[int, str]] = {}
        #: Runs committed from an earlier sweep's journal by begin().
        self.recovered = 0
        #: config_id → stored runs of its configuration with another version of its algorithm
        #: file (never reused), by begin().
        self.superseded: dict[str, int] = {}

    def _take_lock(self) -> None:
        """One sweep at a time per database: an exclusive lock on ``<db>.sweep-lock`` (flock;
        released by :meth:`close`, or by the system when the process dies), which readers
        ignore. Without it a second sweep could commit between the first one's commits. The
        lock file sits next to the resolved database file, so symbolic links to one database
        share one lock. :meth:`close` removes the file while it still holds the lock; a sweep
        that opened the file before that removal finds, once it has the lock, that the name now
        leads elsewhere (or nowhere) and opens it again, so two sweeps never hold locks on two
        files of one name. A file left by a killed sweep (its PID stale) holds no lock: the next
        sweep takes it over."""
        try:
            import fcntl
        except ImportError:  # not a POSIX system: DuckDB's own lock is all there is
            return
        path = self.lock_path
        while True:
            try:
                f = open(path, "a+")  # noqa: SIM115 - held until close()
            except OSError:
                return  # an unwritable directory: DuckDB refuses to write the database there anyway
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.seek(0)
                holder = f.read().strip() or "another process"
                f.close()
                same = "" if self.real == Path(os.path.abspath(self.path)) else f" (the file {str(self.real)!r})"
                raise DatabaseBusy(f"--db: {str(self.path)!r}{same} is being written by another sweep ({holder}); "
                                   "wait for it to end, or give another --db") from None
            try:
                current = os.stat(path).st_ino == os.fstat(f.fileno()).st_ino
            except OSError:
                current = False
            if current:
                break
            f.close()  # removed by the sweep that held it, between our open and our lock: again
        f.seek(0)
        f.truncate()
        f.write(f"PID {os.getpid()}")
        f.flush()
        self._lock = f

    @property
    def lock_path(self) -> Path:
        return self.real.with_name(self.real.name + ".sweep-lock")

    def close(self) -> None:
        """Releases the sweep lock and removes its file (still holding the lock: see
        :meth:`_take_lock`)."""
        if self._lock is not None:
            try:
                if os.stat(self.lock_path).st_ino == os.fstat(self._lock.fileno()).st_ino:
                    self.lock_path.unlink()
            except OSError:
                pass  # gone already, or a directory we may not write: the lock is released below
            self._lock.close()
            self._lock = None

    def _open(self, wait_s: float, migrate: bool = False) -> ResultsDB:
        deadline = time.monotonic() + READER_GAP_S
        while read_requests(self.path) and time.monotonic() < deadline:
            time.sleep(RETRY_PAUSE_S / 2)  # a reader is about to get in: let it
        db = ResultsDB(self.path, wait_s=wait_s, migrate=migrate)
        db._failed = self._failed  # shared: the stored failures a retry replaces
        return db

    def begin(self, configs: Iterable[tuple[str, dict[str, Any]]], model_version: str,
              content_named: frozenset[str] = frozenset()) -> set[tuple[str, int]]:
        """Creates or migrates the database, commits the runs an earlier sweep left in the
        journal, records the configurations, and returns the (config, replication) pairs
        already stored successfully. For the configurations in ``content_named`` (those whose
        id hashes an algorithm file) :attr:`superseded` counts the stored runs of an earlier
        version of that file (:meth:`ResultsDB.superseded`)."""
        configs = list(configs)
        with self._open(READ_WAIT_S, migrate=True) as db:  # refuses a file that is not ours, unchanged
            self._take_lock()
            db.finished()  # the stored failures a journaled retry replaces
            self.recovered = self._replay_journal(db)
            self.superseded = db.superseded([(cid, c) for cid, c in configs if cid in content_named], model_version)
            db.add_configs(configs, model_version)
            done = db.finished()
            self._failed = db._failed
            self.outputs = db.outputs()
        return done

    # --- the journal of finished runs waiting for the database ---------------------------------

    def _journal_append(self, engine_version: str, model_version: str) -> None:
        """Appends the pending runs the journal does not hold yet, fsynced."""
        new = self.pending[self._journaled:]
        if not new and not self.pending_outputs:
            return
        try:
            with open(self.journal, "a", encoding="utf-8") as f:
                f.writelines(json.dumps({"run": [cid, config, rep, result, error, wall],
                                        "engine_version": engine_version, "model_version": model_version}) + "\n" for cid, config, rep, result, error, wall in new)
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            return  # the runs stay in memory; the final flush says what happened
        self._journaled = len(self.pending)

    def _journal_clear(self) -> None:
        self._journaled = 0
        try:
            self.journal.unlink()
        except FileNotFoundError:
            pass

    def _replay_journal(self, db: ResultsDB) -> int:
        """Commits the runs a journal holds (an earlier sweep that could not, or was killed
        while it waited), skipping those stored since; removes the journal. Returns how many."""
        try:
            lines = self.journal.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return 0
        except OSError as e:
            raise CoaplabError(f"--db: cannot read the journal {str(self.journal)!r}: {e.strerror or e}") from None
        stored = db.finished()
        groups: dict[tuple[str, str], dict[tuple[str, int], tuple]] = {}
        for line in lines:
            try:
                entry = json.loads(line)
                cid, config, rep, result, error, wall = entry["run"]
                versions = (entry["engine_version"], entry["model_version"])
            except (ValueError, KeyError, TypeError):
                continue  # the last line of a journal cut short by a kill
            if (cid, rep) not in stored:
                groups.setdefault(versions, {})[(cid, rep)] = (cid, config, rep, result, error, wall)
        n = 0
        for (engine_version, model_version), runs in groups.items():
            db.add_configs([(r[0], r[1]) for r in runs.values()], model_version)
            db.store(list(runs.values()), engine_version, model_version)
            n += len(runs)
        self._journal_clear()
        return n

    def note_outputs(self, rows: list[tuple]) -> None:
        """Output files written — (file name, config_id, replication, bytes, SHA-256) — to record
        with the next commit."""
        self.pending_outputs.extend(rows)

    def store(self, batch: list, engine_version: str, model_version: str, final: bool = False) -> None:
        """Commits `batch` (see :meth:`ResultsDB.store`) with the runs still pending."""
        self.pending.extend(batch)
        if not self.pending and not self.pending_outputs:
            return
        try:
            db = self._open(FINAL_WRITE_WAIT_S if final else WRITE_WAIT_S)
        except DatabaseBusy as e:
            self._journal_append(engine_version, model_version)  # kept on disk, not only in memory
            if not final:
                return  # readers hold the file: these runs go into the next commit
            if self._journaled == len(self.pending):
                raise DatabaseBusy(f"{e}; the {len(self.pending)} finished runs waiting for it are kept in "
                                   f"{str(self.journal)!r}: re-run the same command once it is free, and they "
                                   "are stored without running them again") from None
            raise DatabaseBusy(f"{e}; {len(self.pending)} finished runs could not be stored: re-run the same "
                               "command to run them again") from None
        try:
            db.store(self.pending, engine_version, model_version, self.pending_outputs)
            self.pending = []
            self.pending_outputs = []
            if self._journaled:
                self._journal_clear()  # committed: a replay would skip them anyway
        except BaseException:
            self.broken = True  # a full disk, say: the sweep stops, nothing more is written
            raise
        finally:
            db.close()

    def flush(self, engine_version: str, model_version: str) -> None:
        self.store([], engine_version, model_version, final=True)

    def read(self) -> ResultsDB:
        """The database, open for reading by the sweep itself (a context manager)."""
        return self._open(FINAL_WRITE_WAIT_S)
