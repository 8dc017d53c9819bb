"""``coaplab setup californium`` (docs/emulation.md, "Third-party endpoints"): Californium's
driver built from the sources the package ships, with the system's Maven and JDK, into the user
cache. A fake ``mvn`` (a script that writes the jar where it is told) checks the cache path, the
idempotence and the errors without Maven; one real build runs where Maven is (CI has it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coaplab import shipped
from coaplab.stacks import californium_setup

ROOT = Path(__file__).resolve().parent.parent
JAR = "californium-driver-1.jar"  # java/californium/pom.xml: <artifactId>-<version>.jar

# The fake Maven: finds -Dcoaplab.build.directory=DIR among its arguments, writes DIR/JAR and
# DIR/lib/, and appends one line per call to $FAKE_MVN_LOG. FAKE_MVN_FAIL=1: prints and fails.
FAKE_MVN = """#!/bin/sh
PATH=/usr/bin:/bin  # its own tools (mkdir); the PATH it is found on may hold nothing else
echo "mvn $*" >> "$FAKE_MVN_LOG"
if [ -n "$FAKE_MVN_FAIL" ]; then echo "[ERROR] Could not resolve dependencies (fake)"; exit 1; fi
for a in "$@"; do
  case "$a" in -Dcoaplab.build.directory=*) out="${a#-Dcoaplab.build.directory=}";; esac
done
mkdir -p "$out/lib" && echo jar > "$out/JAR" && echo lib > "$out/lib/californium-core-3.14.0.jar"
""".replace("JAR", JAR)


def _bin(tmp_path: Path, tools=("mvn", "javac")) -> Path:
    """A directory holding only the fake tools asked for (javac: a script that succeeds)."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for t in tools:
        (d / t).write_text(FAKE_MVN if t == "mvn" else "#!/bin/sh\nexit 0\n")
        (d / t).chmod(0o755)
    return d


def _setup(tmp_path: Path, env_extra: dict[str, str], path: str | Path):
    """`coaplab setup californium` as a user runs it, with PATH = `path` only (the Python
    interpreter is run by its absolute name)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COAPLAB_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(PATH=str(path), FAKE_MVN_LOG=str(tmp_path / "mvn.log"), PYTHONPATH=str(ROOT / "python"), **env_extra)
    return subprocess.run([sys.executable, "-m", "coaplab.cli", "setup", "californium"], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=300, check=False)


def _calls(tmp_path: Path) -> int:
    log = tmp_path / "mvn.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.parametrize("where", ["COAPLAB_CACHE_DIR", "XDG_CACHE_HOME", "HOME"])
def test_the_driver_goes_into_the_user_cache(tmp_path, where):
    # The cache: $COAPLAB_CACHE_DIR, else $XDG_CACHE_HOME/coaplab, else ~/.cache/coaplab (the XDG
    # Base Directory Specification's default); the driver in its californium/ directory.
    base = tmp_path / "base"
    expected = {"COAPLAB_CACHE_DIR": base / "californium",
                "XDG_CACHE_HOME": base / "coaplab" / "californium",
                "HOME": base / ".cache" / "coaplab" / "californium"}[where]
    p = _setup(tmp_path, {where: str(base)}, _bin(tmp_path))
    assert p.returncode == 0, p.stderr
    assert (expected / JAR).read_text() == "jar\n" and (expected / "lib").is_dir()
    assert f"building Californium's driver with Maven into {expected}" in p.stdout
    assert f"built {expected / JAR}" in p.stdout
    assert _calls(tmp_path) == 1
    # No partial or old build directory is left beside it.
    assert sorted(x.name for x in expected.parent.iterdir()) == ["californium"]


def test_a_relative_xdg_cache_home_is_ignored(tmp_path, monkeypatch):
    # The specification: "If an implementation encounters a relative path in any of these
    # variables it should consider the path invalid and ignore it."
    monkeypatch.delenv("COAPLAB_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert shipped.cache_dir() == tmp_path / ".cache" / "coaplab"


def test_a_second_setup_does_nothing_and_a_newer_source_rebuilds(tmp_path):
    env = {"COAPLAB_CACHE_DIR": str(tmp_path / "cache")}
    first = _setup(tmp_path, env, _bin(tmp_path))
    assert first.returncode == 0, first.stderr
    jar = tmp_path / "cache" / "californium" / JAR
    second = _setup(tmp_path, env, _bin(tmp_path))
    assert second.returncode == 0, second.stderr
    assert _calls(tmp_path) == 1  # Maven not run again
    assert "up to date" in second.stdout and str(jar) in second.stdout
    # Sources newer than the jar (an upgraded coaplab): built again. In-process, on a copy of
    # the sources, so that the repository's files keep their times.
    sources = tmp_path / "src"
    shutil.copytree(ROOT / "java" / "californium", sources)
    past = time.time() - 60
    os.utime(jar, (past, past))
    os.utime(sources / "pom.xml")  # now: newer than the jar
    said: list[str] = []
    with pytest.MonkeyPatch.context() as m:
        m.setattr(californium_setup.shipped, "californium_sources", lambda: sources)
        m.setenv("PATH", str(_bin(tmp_path)))
        m.setenv("FAKE_MVN_LOG", str(tmp_path / "mvn.log"))
        assert californium_setup.build(jar.parent, say=said.append) is True
        assert _calls(tmp_path) == 2
        assert californium_setup.build(jar.parent, say=said.append) is False  # the new jar is newer again
    assert _calls(tmp_path) == 2 and "up to date" in said[-1]


@pytest.mark.parametrize("tools, message", [
    ((), "mvn (Debian package maven) and javac (Debian package default-jdk-headless) are missing from the PATH"),
    (("javac",), "mvn (Debian package maven) is missing from the PATH"),
    (("mvn",), "javac (Debian package default-jdk-headless) is missing from the PATH"),
])
def test_a_missing_tool_is_one_line_and_exit_2(tmp_path, tools, message):
    p = _setup(tmp_path, {"COAPLAB_CACHE_DIR": str(tmp_path / "cache")}, _bin(tmp_path, tools))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr == (f"coaplab: error: setup californium: {message}; install Maven and a JDK: "
                        "apt-get install default-jdk-headless maven\n")
    assert _calls(tmp_path) == 0 and not (tmp_path / "cache").exists()


def test_a_failed_maven_run_leaves_no_build(tmp_path):
    p = _setup(tmp_path, {"COAPLAB_CACHE_DIR": str(tmp_path / "cache"), "FAKE_MVN_FAIL": "1"}, _bin(tmp_path))
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "Could not resolve dependencies (fake)" in p.stdout  # Maven's own words are shown
    assert p.stderr.startswith("coaplab: error: setup californium: Maven failed (exit 1;") and p.stderr.count("\n") == 1
    assert list((tmp_path / "cache").iterdir()) == []  # neither the build nor its partial directory


def test_an_unwritable_cache_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    p = _setup(tmp_path, {"COAPLAB_CACHE_DIR": str(tmp_path / "file" / "cache")}, _bin(tmp_path))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "cannot create" in p.stderr and "COAPLAB_CACHE_DIR" in p.stderr


def test_the_emulation_finds_the_cache_outside_a_checkout(tmp_path, monkeypatch):
    monkeypatch.setenv("COAPLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(californium_setup.shipped, "in_checkout", lambda: False)
    assert californium_setup.driver_dir() is None
    (tmp_path / "californium" / "lib").mkdir(parents=True)
    (tmp_path / "californium" / JAR).write_text("jar")
    assert californium_setup.driver_dir() == tmp_path / "californium"


def test_a_driver_older_than_its_sources_is_refused_in_one_line(tmp_path, monkeypatch):
    """A jar built before the shipped sources changed would run the old endpoint: the emulation
    refuses it and says to rebuild."""
    from coaplab.errors import CoaplabError
    from coaplab.stacks import thirdparty

    sources = tmp_path / "src"
    (sources / "src").mkdir(parents=True)
    (sources / "pom.xml").write_text("<project/>")
    monkeypatch.setenv("COAPLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(californium_setup.shipped, "in_checkout", lambda: False)
    monkeypatch.setattr(californium_setup.shipped, "californium_sources", lambda: sources)
    built = tmp_path / "cache" / "californium"
    (built / "lib").mkdir(parents=True)
    (built / JAR).write_text("jar")
    old = time.time() - 3600
    os.utime(built / JAR, (old, old))  # built an hour before the sources were written
    assert californium_setup.driver_dir() is None
    assert californium_setup.stale_driver() == built / JAR
    monkeypatch.setattr(thirdparty.shutil, "which", lambda _: "/usr/bin/java")
    with pytest.raises(CoaplabError, match="older than its sources; run coaplab setup californium"):
        thirdparty.californium_java()
    os.utime(built / JAR, None)  # rebuilt now: newer than every source
    assert californium_setup.driver_dir() == built and californium_setup.stale_driver() is None


def test_a_real_build_with_maven(tmp_path):
    """Maven and the JDK of the system (CI: scripts/setup.sh installs default-jdk-headless and
    maven): the driver and Californium's jars (pom.xml pins californium-core 3.14.0)."""
    if shutil.which("mvn") is None or shutil.which("javac") is None:
        if os.environ.get("CI"):
            pytest.fail("Maven and a JDK are required in CI (scripts/setup.sh installs them)")
        pytest.skip("no Maven / JDK here (apt-get install default-jdk-headless maven)")
    env = {"COAPLAB_CACHE_DIR": str(tmp_path / "cache")}
    p = _setup(tmp_path, env, os.environ["PATH"])
    assert p.returncode == 0, p.stdout + p.stderr
    out = tmp_path / "cache" / "californium"
    assert (out / JAR).is_file() and (out / "lib" / "californium-core-3.14.0.jar").is_file()
    again = _setup(tmp_path, env, os.environ["PATH"])
    assert again.returncode == 0 and "up to date" in again.stdout


@pytest.mark.parametrize("args, needle", [
    (["setup", "java"], "argument what: invalid choice: 'java' (choose from 'californium')"),
    (["setup"], "the following arguments are required: what"),
])
def test_a_bad_argument_is_one_line(tmp_path, args, needle):
    p = subprocess.run([sys.executable, "-m", "coaplab.cli", *args], capture_output=True, text=True, cwd=tmp_path,
                       timeout=60, check=False)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr
