"""The example notebooks (examples/notebooks/) run from top to bottom in a fresh kernel, and
show their figures inline. Each is kept small (seconds); their own last cells check the result
they describe (e.g. that `default` collapses with bufferbloat and full backoff avoids it)."""

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT

NOTEBOOKS = {"bufferbloat.ipynb": 2, "tcp-vs-udp.ipynb": 2}  # figures each shows


@pytest.mark.parametrize("name, figures", NOTEBOOKS.items())
def test_notebook_runs(name, figures, tmp_path):
    nb = nbformat.read(ROOT / "examples" / "notebooks" / name, as_version=4)
    # Stored without outputs: what a reader opens is what the code produces.
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == figures
