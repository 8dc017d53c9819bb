"""One install carries everything (README.md, "Install"): coaplab installed into a clean virtual
environment from the wheel (with pip and with uv), from the sdist and from a source tree, as the
README says, then used with no Rust toolchain on the PATH and no checkout around it: ``coaplab
--help``, a scenario, ``coaplab examples``, the emulator's binaries found in the installed
package (and, as root, one emulated run), Californium's driver sources built by ``coaplab setup
californium`` (a fake Maven: tests/test_setup_californium.py builds for real).

The wheel and the sdist are the ones scripts/test.sh builds into dist/. The sdist and the source
tree compile Rust (one build each per test session: module-scoped fixtures), in Cargo's target
directory of this checkout (``CARGO_TARGET_DIR``), which keeps the dependencies' builds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = 'name = "w"\nreplications = 1\n[workload]\nclients = 2\nexchanges = 3\n'
#: The PATH the installed commands run with: the venv's and the system's directories, none with
#: cargo or rustc (rustup's ~/.cargo/bin is left out).
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _dist(pattern: str, what: str) -> Path:
    found = sorted((ROOT / "dist").glob(pattern))
    if not found:
        if os.environ.get("CI"):
            pytest.fail(f"no {what} in dist/: scripts/test.sh builds it before the tests")
        pytest.skip(f"no {what} in dist/ (scripts/test.sh builds one)")
    return found[-1]


def _venv(where: Path, installer: str = "pip") -> Path:
    venv = where / "venv"
    if installer == "pip":
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    else:
        uv = Path(sys.executable).parent / "uv"
        subprocess.run([str(uv), "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=120)
    return venv


def _install(venv: Path, target: str, installer: str = "pip", cwd: Path | None = None) -> None:
    """Installs `target` into `venv` as the README says. A build from source reuses this
    checkout's Cargo target directory."""
    env = {**os.environ, "CARGO_TARGET_DIR": os.environ.get("CARGO_TARGET_DIR") or str(ROOT / "target")}
    py = venv / "bin" / "python"
    if installer == "pip":
        cmd = [str(py), "-m", "pip", "install", "-q", target]
    else:
        cmd = [str(Path(sys.executable).parent / "uv"), "pip", "install", "-q", "--python", str(py), target]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False, cwd=cwd, env=env)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]


def _source_tree(dest: Path) -> Path:
    """This checkout's files as a clone has them (git's tracked and not-ignored files)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)
    return dest


@pytest.fixture(scope="module", params=["wheel", "sdist", "source"])
def installed(request, tmp_path_factory):
    """(kind, venv): coaplab installed from the wheel, the sdist or a source tree; once each."""
    kind = request.param
    where = tmp_path_factory.mktemp(f"install-{kind}")
    if kind == "wheel":
        target, cwd = str(_dist("coaplab-*.whl", "wheel")), None
    elif kind == "sdist":
        target, cwd = str(_dist("coaplab-*.tar.gz", "sdist")), None
    else:  # README: git clone …; cd coaplab; pip install .
        cwd, target = _source_tree(where / "coaplab"), "."
    venv = _venv(where)
    _install(venv, target, cwd=cwd)
    # How long it took is `pytest --durations`'s "setup" of the first test of each kind.
    return kind, venv


def _env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("COAPLAB_EMULATOR_DIR", "CARGO_TARGET_DIR", "PYTHONPATH", "COAPLAB_CACHE_DIR")}
    env["PATH"] = f"{venv / 'bin'}:{SYSTEM_PATH}"
    assert shutil.which("cargo", path=env["PATH"]) is None and shutil.which("rustc", path=env["PATH"]) is None, \
        "a Rust toolchain in the system directories: this test cannot show that none is needed"
    return env


def coaplab(venv: Path, *args, cwd: Path, timeout: float = 120, env_extra: dict[str, str] | None = None):
    return subprocess.run([str(venv / "bin" / "coaplab"), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**_env(venv), **(env_extra or {})}, timeout=timeout, check=False)


def test_help_and_a_scenario(installed, tmp_path, capsys):
    kind, venv = installed
    t0 = time.perf_counter()
    help_ = coaplab(venv, "--help", cwd=tmp_path)
    started = time.perf_counter() - t0
    assert help_.returncode == 0 and "run" in help_.stdout and "examples" in help_.stdout
    with capsys.disabled():  # a figure, not an assertion
        print(f"\n{kind}: coaplab --help in {started:.2f} s (clean venv)")
    (tmp_path / "w.toml").write_text(SCENARIO)
    run = coaplab(venv, "run", "w.toml", "--no-db", "--format", "json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert '"exchanges_completed": 6' in run.stdout  # 2 clients × 3 exchanges
    # The clean venv has no Dask: the cluster option says which extra to install.
    cluster = coaplab(venv, "run", "w.toml", "--no-db", "--cluster", "local:1", cwd=tmp_path)
    assert cluster.returncode == 2 and "coaplab[cluster]" in cluster.stderr, cluster.stderr


def test_examples_and_the_c_header_are_shipped(installed, tmp_path):
    _, venv = installed
    p = coaplab(venv, "examples", "examples", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    for rel, repo in [("quick.toml", "examples/quick.toml"), ("algorithms/c/aggressive.c", "examples/algorithms/c/aggressive.c"),
                      ("include/coaplab_cc.h", "crates/cc-ffi/include/coaplab_cc.h"),
                      ("emulation/californium-star.toml", "examples/emulation/californium-star.toml")]:
        assert (tmp_path / "examples" / rel).read_bytes() == (ROOT / repo).read_bytes(), rel
    run = coaplab(venv, "run", "examples/quick.toml", "--no-db", "--no-progress", "--format", "json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]


def test_the_emulator_binaries_are_the_installed_packages(installed, tmp_path):
    _, venv = installed
    py = venv / "bin" / "python"
    found = subprocess.run([str(py), "-c", "from coaplab.stacks.emulate import binaries; print(*binaries(build=False))"],
                           capture_output=True, text=True, cwd=tmp_path, env=_env(venv), timeout=60, check=False)
    assert found.returncode == 0, found.stderr
    site = subprocess.run([str(py), "-c", "import coaplab, os; print(os.path.dirname(coaplab.__file__))"],
                          capture_output=True, text=True, env=_env(venv), check=True).stdout.strip()
    assert found.stdout.split() == [f"{site}/_shipped/bin/coaplab-emulator", f"{site}/_shipped/bin/coaplab-endpoint"]
    assert site.startswith(str(venv))
    for b in found.stdout.split():
        assert os.access(b, os.X_OK), b
    assert coaplab(venv, "emulate", "--help", cwd=tmp_path).returncode == 0
    if os.geteuid() != 0 or shutil.which("ip") is None or not os.path.exists("/dev/net/tun"):
        pytest.skip("an emulated run needs root, iproute2 and /dev/net/tun (CI runs as root)")
    (tmp_path / "w.toml").write_text(SCENARIO)
    run = coaplab(venv, "emulate", "w.toml", "--no-db", "--no-progress", "--format", "json", "--max-seconds", "60",
                  cwd=tmp_path, timeout=300)
    assert run.returncode in (0, 1), run.stderr[-2000:]  # 1: marked invalid for lateness on a busy machine
    assert '"exchanges_completed": 6' in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]


def test_californiums_driver_builds_from_the_installed_sources(installed, tmp_path):
    # A fake Maven (writes the jar where it is told; tests/test_setup_californium.py) shows the
    # command runs from the installed package on its shipped pom.xml, into the user cache.
    _, venv = installed
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "mvn").write_text('#!/bin/sh\nPATH=/usr/bin:/bin\necho "$@" > "$FAKE_MVN_LOG"\nfor a in "$@"; do case "$a" in '
                              '-Dcoaplab.build.directory=*) o="${a#-Dcoaplab.build.directory=}";; esac; done\n'
                              'mkdir -p "$o/lib" && echo jar > "$o/californium-driver-1.jar"\n')
    (bin_ / "javac").write_text("#!/bin/sh\nexit 0\n")
    for t in ("mvn", "javac"):
        (bin_ / t).chmod(0o755)
    env = _env(venv)
    p = coaplab(venv, "setup", "californium", cwd=tmp_path,
                env_extra={"PATH": f"{bin_}:{env['PATH']}", "HOME": str(tmp_path), "FAKE_MVN_LOG": str(tmp_path / "log")})
    assert p.returncode == 0, p.stderr
    assert (tmp_path / ".cache" / "coaplab" / "californium" / "californium-driver-1.jar").is_file()
    pom = (tmp_path / "log").read_text().split(" -f ")[1].split()[0]
    assert pom.startswith(str(venv)) and pom.endswith("/_shipped/java/californium/pom.xml")
    assert Path(pom).read_bytes() == (ROOT / "java" / "californium" / "pom.xml").read_bytes()
    assert Path(pom).with_name("src").joinpath("main/java/coaplab/CaliforniumDriver.java").read_bytes() == \
        (ROOT / "java/californium/src/main/java/coaplab/CaliforniumDriver.java").read_bytes()


def test_the_wheel_installs_with_uv(tmp_path):
    venv = _venv(tmp_path, "uv")
    _install(venv, str(_dist("coaplab-*.whl", "wheel")), installer="uv")
    (tmp_path / "w.toml").write_text(SCENARIO)
    run = coaplab(venv, "run", "w.toml", "--no-db", "--format", "json", cwd=tmp_path)
    assert run.returncode == 0 and '"exchanges_completed": 6' in run.stdout, run.stderr[-2000:]


def test_the_wheel_carries_the_binaries_executable():
    # Read from the zip (no install): coaplab/_shipped/bin holds both, with execute permission.
    import zipfile

    with zipfile.ZipFile(_dist("coaplab-*.whl", "wheel")) as z:
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()
                 if i.filename.startswith("coaplab/_shipped/bin/")}
    assert set(modes) == {"coaplab/_shipped/bin/coaplab-emulator", "coaplab/_shipped/bin/coaplab-endpoint"}
    assert all(m & 0o111 for m in modes.values()), modes
