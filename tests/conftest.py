import json
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
