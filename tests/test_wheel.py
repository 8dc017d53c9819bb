"""The package as users install it: the wheel `scripts/test.sh` builds (maturin, abi3) is
installed into a clean virtual environment with pip and with uv, and its CLI starts and runs a
scenario there (issue: "Install")."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = 'name = "w"\nreplications = 1\n[workload]\nclients = 2\nexchanges = 3\n'


def _wheel() -> Path:
    wheels = sorted((ROOT / "dist").glob("coaplab-*.whl"))
    if not wheels:
        if os.environ.get("CI"):
            pytest.fail("no wheel in dist/: scripts/test.sh builds it before the tests")
        pytest.skip("no wheel in dist/ (scripts/test.sh builds one)")
    return wheels[-1]


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_wheel_installs_into_a_clean_venv_and_runs(installer, tmp_path, capsys):
    wheel = _wheel()
    venv = tmp_path / "venv"
    py = venv / "bin" / "python"
    if installer == "pip":
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
        out = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True,
                             timeout=900, check=False)
    else:
        uv = Path(sys.executable).parent / "uv"
        subprocess.run([str(uv), "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=120)
        out = subprocess.run([str(uv), "pip", "install", "-q", "--python", str(py), str(wheel)],
                             capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    cli = venv / "bin" / "coaplab"
    t0 = time.perf_counter()
    help_ = subprocess.run([str(cli), "--help"], capture_output=True, text=True, timeout=60, check=False)
    started = time.perf_counter() - t0
    assert help_.returncode == 0 and "run" in help_.stdout
    # A figure, not an assertion; printed past pytest's capture so the test command shows it.
    with capsys.disabled():
        print(f"\n{installer}: coaplab --help in {started:.2f} s (clean venv, wheel)")
    (tmp_path / "w.toml").write_text(SCENARIO)
    run = subprocess.run([str(cli), "run", "w.toml", "--no-db", "--format", "json"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert '"exchanges_completed": 6' in run.stdout
    # The clean venv has no Dask: the cluster option says which extra to install.
    cluster = subprocess.run([str(cli), "run", "w.toml", "--no-db", "--cluster", "local:1"], capture_output=True,
                             text=True, cwd=tmp_path, timeout=120, check=False)
    assert cluster.returncode == 2 and "coaplab[cluster]" in cluster.stderr, cluster.stderr
