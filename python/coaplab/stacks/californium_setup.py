"""Californium's driver built for the emulation (``coaplab setup californium``; docs/emulation.md,
"Third-party endpoints").

The driver (``java/californium``: ``pom.xml`` and one class) ships with the package as sources
(:func:`coaplab.shipped.californium_sources`); this module builds it with the system's Maven and
JDK — Maven downloads Californium from Maven Central into ``~/.m2`` the first time — into the user
cache, ``<cache>/californium/`` (:func:`coaplab.shipped.cache_dir`: ``$COAPLAB_CACHE_DIR``,
``$XDG_CACHE_HOME/coaplab`` or ``~/.cache/coaplab``): the driver's jar and its dependencies'
jars in ``lib/``. Nothing is done while the jar is newer than every source file.

The emulation finds the driver (:func:`driver_dir`) in a checkout's ``target/californium/``
(what ``scripts/setup.sh`` builds, from the checkout's own sources) and else in the cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from .. import shipped
from ..errors import CoaplabError, ResourceError

#: The jar Maven builds: pom.xml's ``<artifactId>-<version>.jar``.
DRIVER_JAR = "californium-driver-1.jar"
#: The Maven user property that sets the build directory (pom.xml's ``<build><directory>``).
BUILD_DIR_PROPERTY = "coaplab.build.directory"
#: Debian's packages of the two tools (https://packages.debian.org: ``maven`` ships ``mvn``,
#: ``default-jdk-headless`` ``javac`` and ``java``).
TOOLS = {"mvn": "maven", "javac": "default-jdk-headless"}
INSTALL_HINT = "apt-get install default-jdk-headless maven"


def cache_build_dir() -> Path:
    """Where ``coaplab setup californium`` builds the driver."""
    return shipped.cache_dir() / "californium"


def driver_dir() -> Path | None:
    """The directory holding the built driver (its jar and ``lib/``): a checkout's
    ``target/californium`` first, then the user cache; None when neither has it, or only one
    older than the shipped sources (:func:`stale_driver`: a driver built before the sources
    changed would run the old endpoint without a word)."""
    sources = shipped.californium_sources()
    for d in _build_dirs():
        if (d / DRIVER_JAR).is_file() and (sources is None or up_to_date(d, sources)):
            return d
    return None


def stale_driver() -> Path | None:
    """A built driver jar older than the shipped sources (rebuild it: ``coaplab setup
    californium``), when :func:`driver_dir` found no current one."""
    sources = shipped.californium_sources()
    if sources is None:
        return None
    for d in _build_dirs():
        if (d / DRIVER_JAR).is_file() and not up_to_date(d, sources):
            return d / DRIVER_JAR
    return None


def _build_dirs() -> list[Path]:
    return ([shipped.REPO / "target" / "californium"] if shipped.in_checkout() else []) + [cache_build_dir()]


def missing_tools() -> list[str]:
    """The build tools (``mvn``, ``javac``) not on the PATH."""
    return [t for t in TOOLS if shutil.which(t) is None]


def newest_source(sources: Path) -> float:
    """The newest modification time among the driver's source files (pom.xml, src/)."""
    times = [p.stat().st_mtime for p in sources.rglob("*") if p.is_file()]
    return max(times, default=0.0)


def up_to_date(build_dir: Path, sources: Path) -> bool:
    """Whether ``build_dir`` holds a driver jar (and its ``lib/``) newer than every source file."""
    jar = build_dir / DRIVER_JAR
    return jar.is_file() and (build_dir / "lib").is_dir() and jar.stat().st_mtime > newest_source(sources)


def build(build_dir: Path | None = None, say: Callable[[str], None] = print) -> bool:
    """Builds the driver into ``build_dir`` (default :func:`cache_build_dir`) unless it is up to
    date; True when it built. One line (exit 2) when Maven or the JDK is missing; a failed Maven
    run shows Maven's output and raises :class:`ResourceError` (exit 1)."""
    sources = shipped.californium_sources()
    if sources is None or not (sources / "pom.xml").is_file():
        raise CoaplabError("setup californium: this coaplab ships no Californium driver sources "
                           "(coaplab/_shipped/java/californium); reinstall it (README.md, \"Install\")")
    out = build_dir or cache_build_dir()
    if up_to_date(out, sources):
        say(f"Californium's driver is up to date: {out / DRIVER_JAR} (newer than its sources; nothing to do)")
        return False
    missing = missing_tools()
    if missing:
        what = " and ".join(f"{t} (Debian package {TOOLS[t]})" for t in missing)
        verb = "is" if len(missing) == 1 else "are"
        raise CoaplabError(f"setup californium: {what} {verb} missing from the PATH; install Maven and a JDK: "
                           f"{INSTALL_HINT}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CoaplabError(f"setup californium: cannot create {str(out.parent)!r}: {e.strerror or e}; "
                           f"set {shipped.CACHE_ENV} to a writable directory") from None
    # Built beside the final directory and renamed into place: a failed or killed build never
    # leaves a directory that looks built.
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    say(f"building Californium's driver with Maven into {out} (the first build downloads Californium "
        "from Maven Central into ~/.m2, ~25 s; later ones take seconds) ...")
    start = time.monotonic()
    env = {**os.environ, "MAVEN_OPTS": f"{os.environ.get('MAVEN_OPTS', '')} -Dstyle.color=never".strip()}
    run = subprocess.run(["mvn", "-q", "-B", "-Dstyle.color=never", "-f", str(sources / "pom.xml"),
                          f"-D{BUILD_DIR_PROPERTY}={partial}", "package"],
                         capture_output=True, text=True, env=env, check=False)
    if run.returncode != 0 or not (partial / DRIVER_JAR).is_file():
        shutil.rmtree(partial, ignore_errors=True)
        tail = "\n".join((run.stdout + run.stderr).strip().splitlines()[-20:])
        if tail:
            print(tail)
        raise ResourceError(f"setup californium: Maven failed (exit {run.returncode}; its output is above); "
                            "it needs Maven Central (network) the first time")
    old = out.with_name(f".{out.name}.{os.getpid()}.old")
    if out.exists():
        os.replace(out, old)
    os.replace(partial, out)
    shutil.rmtree(old, ignore_errors=True)
    say(f"built {out / DRIVER_JAR} in {time.monotonic() - start:.0f} s")
    return True
