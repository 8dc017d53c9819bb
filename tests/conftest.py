import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args, cwd=None):
    """Runs the `coaplab` command as a user would (in a scratch directory unless `cwd` is
    given, so the default ./coaplab.duckdb lands there); returns the CompletedProcess."""
    import tempfile

    cwd = cwd or tempfile.mkdtemp(prefix="coaplab-cli-")
    return subprocess.run([sys.executable, "-m", "coaplab.cli", *map(str, args)], capture_output=True, text=True, cwd=cwd, check=False)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def write_json(tmp_path):
    def write(obj, name="script.json"):
        p = tmp_path / name
        p.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
        return p

    return write


def compile_c_library(source: Path, out: Path) -> Path:
    """Compiles a C implementation of the C API (crates/cc-ffi/include/coaplab_cc.h) into a
    shared library, warnings as errors, with the system C compiler (``cc`` or ``$CC``)."""
    import os
    import shutil

    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler (cc / $CC): the C API's tests need one, as crates/cc-ffi's do")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror",
                    f"-I{ROOT / 'crates/cc-ffi/include'}", str(source), "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="session")
def aggressive_so(tmp_path_factory) -> Path:
    """examples/algorithms/c/aggressive.c built: the C twin of examples/algorithms/aggressive.py."""
    return compile_c_library(ROOT / "examples/algorithms/c/aggressive.c",
                             tmp_path_factory.mktemp("c") / "aggressive.so")


def need_emulation():
    """Skips an emulation test where it cannot run (not root, no iproute2 or TUN, the emulator
    not built); CI runs as root with everything built."""
    from coaplab.stacks import emulate as em

    if os.geteuid() != 0:
        pytest.skip("emulation needs root (network namespaces, TUN devices); CI runs as root")
    if shutil.which("ip") is None or not os.path.exists("/dev/net/tun"):
        pytest.skip("emulation needs iproute2 and /dev/net/tun")
    try:
        em.binaries()
    except Exception as e:  # noqa: BLE001 - not built and no cargo: any error skips
        pytest.skip(f"coaplab-emulator is not built: {e}")


def our_namespaces() -> list[str]:
    """Network namespaces this test process's emulations created and left behind."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"coaplab-{os.getpid()}-")]
