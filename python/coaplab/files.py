"""Files the user names: reading them safely, and writing outputs so that a kill or a full disk
never leaves a file that looks complete but is not (docs/experiments.md, "Limits")."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from .errors import CoaplabError

#: The longest file or directory name, and the longest path, the OS takes (Linux, macOS: 255
#: bytes a name; Linux: 4096 bytes a path, its final NUL included).
NAME_MAX = 255
PATH_MAX = 4096


def shown(path: str | Path) -> str:
    """`path` quoted for a message, cut in the middle when it is long (an overlong path would
    make the one line unreadable)."""
    text = str(path)
    return repr(text if len(text) <= 80 else text[:40] + "…" + text[-30:])


def length_problem(path: str | Path) -> str | None:
    """Why the OS would refuse `path` for its length (a name over :data:`NAME_MAX` bytes, a path
    of :data:`PATH_MAX` bytes or more), or ``None``."""
    raw = os.fsencode(str(path))
    if len(raw) >= PATH_MAX:
        return f"the path {shown(path)} is {len(raw):,} bytes long; allowed: at most {PATH_MAX - 1:,} bytes"
    for part in raw.split(b"/"):
        if len(part) > NAME_MAX:
            return (f"the path {shown(path)} has a name of {len(part):,} bytes; allowed: at most {NAME_MAX} bytes "
                    "per file or directory name")
    return None


def check_length(path: str | Path, option: str, error: type = CoaplabError) -> None:
    """Refuses, in one line naming `option`, a path the OS would refuse for its length, before
    any work (:func:`length_problem`)."""
    why = length_problem(path)
    if why is not None:
        raise error(f"{option}: {why}")


def input_file(path: str | Path, option: str, what: str = "file", missing_ok: bool = False,
               error: type = CoaplabError) -> os.stat_result | None:
    """Checks, without opening it, that `path` is a regular file that can be read: one line
    naming `option` for too long a path, a directory, a named pipe (which would block the
    command forever), a socket or a device. ``None`` when it does not exist and `missing_ok`."""
    check_length(path, option, error)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise error(f"{option}: {shown(path)} does not exist; expected an existing {what}") from None
    except OSError as e:
        raise error(f"{option}: cannot read {shown(path)}: {_reason(e)}; expected a {what}") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{option}: {shown(path)} is a directory; expected a {what}")
    if not stat.S_ISREG(st.st_mode):
        kind = "a named pipe" if stat.S_ISFIFO(st.st_mode) else "not a regular file (a socket or device)"
        raise error(f"{option}: {shown(path)} is {kind}; expected a {what}")
    return st


def read_regular_file(path: Path, limit: int, what: str, error: type = CoaplabError) -> bytes:
    """The bytes of `path`, refusing what is not a regular file (a FIFO would block forever, a
    device never ends) and files over `limit` bytes, with one line naming the file."""
    check_length(path, what, error)
    try:
        # O_NONBLOCK: opening a FIFO with no writer would block before any check could run.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise error(f"cannot read {what} {str(path)!r}: it is a directory; expected a file") from None
    except OSError as e:
        raise error(f"cannot read {what} {str(path)!r}: {e.strerror or e}") from None
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        os.close(fd)
        raise error(f"cannot read {what} {str(path)!r}: it is a directory; expected a file")
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(st.st_mode):
            raise error(f"cannot read {what} {str(path)!r}: not a regular file (a pipe, socket or device); "
                        "expected a file")
        if st.st_size > limit:
            raise error(f"{what} {str(path)!r} is {st.st_size:,} bytes; allowed: at most {limit:,} bytes")
        if hasattr(os, "set_blocking"):
            os.set_blocking(f.fileno(), True)
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise error(f"cannot read {what} {str(path)!r}: {e.strerror or e}") from None
    if len(data) > limit:  # grew while being read
        raise error(f"{what} {str(path)!r} is larger than {limit:,} bytes; allowed: at most {limit:,} bytes")
    return data


#: Temporary outputs end in this suffix: ``.<final name>.<pid>.partial`` in the final file's
#: directory, so that a rename makes them whole and a glance tells them apart.
PARTIAL = ".partial"


def partial_path(final: Path) -> Path:
    """The temporary name `final` is written under (same directory: the rename is atomic)."""
    return final.with_name(f".{final.name}.{os.getpid()}{PARTIAL}")


def fsync_dir(directory: Path) -> None:
    """Makes a rename in `directory` durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def commit_partial(partial: Path, final: Path) -> None:
    """Flushes `partial` to disk and renames it to `final`: `final` is either absent, or the
    earlier complete file, or the new complete one; never a cut-short file."""
    fd = os.open(partial, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, final)
    fsync_dir(final.parent)


class atomic_write:
    """``with atomic_write(path, "w") as f:`` writes `path` whole or not at all: the data goes
    to :func:`partial_path`, is fsynced and renamed over `path` when the block ends without an
    error; on an error (a full disk, an interrupt) the partial file is removed."""

    def __init__(self, path: str | Path, mode: str = "w", **kw):
        self.final = Path(path)
        self.partial = partial_path(self.final)
        self.mode, self.kw = mode, kw

    def __enter__(self):
        self.f = open(self.partial, self.mode, **self.kw)
        return self.f

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        try:
            if exc_type is None:
                self.f.flush()
                os.fsync(self.f.fileno())
            self.f.close()
        except BaseException:
            self.partial.unlink(missing_ok=True)
            raise
        if exc_type is not None:
            self.partial.unlink(missing_ok=True)
            return False
        try:
            os.replace(self.partial, self.final)
        except BaseException:
            self.partial.unlink(missing_ok=True)
            raise
        fsync_dir(self.final.parent)
        return False


def remove_stale_partials(directory: Path) -> None:
    """Removes the partial files that processes no longer alive left in `directory` (a kill
    in the middle of a write)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for n in names:
        if not (n.startswith(".") and n.endswith(PARTIAL)):
            continue
        pid = n[: -len(PARTIAL)].rsplit(".", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and _alive(int(pid)):
            continue
        try:
            (directory / n).unlink()
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def digest(path: Path) -> tuple[int, str]:
    """(size in bytes, SHA-256 hex) of a file."""
    import hashlib  # lazy: loads OpenSSL, +4 MB for `coaplab --help`, which imports this module (start-up)

    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return size, h.hexdigest()


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def missing_dirs(path: str | Path) -> list[Path]:
    """The directories `output_dir(path)` would create, innermost last."""
    out, missing = Path(path), []
    while not _exists(out) and out != out.parent:
        missing.append(out)
        out = out.parent
    return missing[::-1]


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # too long a name: output_dir says so in one line
        return True


def remove_dirs(created: list[Path]) -> None:
    """Removes directories :func:`output_dir` created, if still empty (innermost first)."""
    for d in reversed(created):
        try:
            d.rmdir()
        except OSError:
            return


def output_dir(path: str | Path, option: str) -> Path:
    """Creates the output directory `path` (with its parents) and checks that files can be
    written in it, before anything runs; one line naming the option otherwise."""
    out = Path(path)
    if str(path) == "":
        raise CoaplabError(f"{option}: an empty path is not allowed; expected a directory")
    check_length(path, option)
    if out.exists() and not out.is_dir():
        raise CoaplabError(f"{option}: {str(path)!r} exists and is not a directory; expected a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CoaplabError(f"{option}: cannot create directory {str(path)!r}: {_reason(e)}") from None
    probe = out / f".coaplab-write-test.{os.getpid()}{PARTIAL}"
    try:
        probe.touch()
        probe.unlink()
    except OSError as e:
        raise CoaplabError(f"{option}: cannot write into {str(path)!r}: {_reason(e)}") from None
    return out


def output_file(path: str | Path, option: str) -> Path:
    """Checks that the file `path` can be written (its directory created, a file made there,
    `path` not a directory or a device) before the work that produces it; one line otherwise."""
    out = Path(path)
    if str(path) == "":
        raise CoaplabError(f"{option}: an empty path is not allowed; expected a file name")
    check_length(path, option)
    try:
        st = os.stat(out)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise CoaplabError(f"{option}: cannot write {str(path)!r}: {_reason(e)}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise CoaplabError(f"{option}: cannot write {str(path)!r}: it is {what}; expected a file name")
    output_dir(out.parent if str(out.parent) else ".", option)
    return out


def output_in(directory: str | Path, name: str, option: str) -> Path:
    """The file `name` in the output directory `directory` (given with `option`), checked before
    the work that produces it: the directory created and writable (:func:`output_dir`), `name`
    there not a directory. Write it with :class:`atomic_write`: the rename replaces a symbolic
    link found at that name instead of writing through it to a file outside `directory`."""
    out = output_dir(directory, option)
    path = out / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    except OSError as e:
        raise CoaplabError(f"{option}: cannot write {shown(path)}: {_reason(e)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise CoaplabError(f"{option}: cannot write {shown(path)}: it is a directory; expected a file or nothing there")
    return path


class new_dirs_removed_on_error:
    """``with new_dirs_removed_on_error(out_dir):`` around a command's work: the directories
    :func:`output_dir` creates for `out_dir` are removed again (if still empty) when the work
    fails, so a refused command leaves nothing behind."""

    def __init__(self, path: str | Path):
        self.created = missing_dirs(path) if str(path) and length_problem(path) is None else []

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if exc_type is not None:
            remove_dirs(self.created)
        return False
