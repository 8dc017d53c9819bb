"""coaplab — a laboratory for CoAP congestion control.

Rust does the work (``coaplab._core``); this package describes, schedules, stores and presents.
"""

from .errors import CoaplabError, ScenarioError, ScriptError
from .replay import load_script, replay
from .runner import Result, run_scenario
from .scenario import Scenario, load_scenario

__all__ = [
    "CoaplabError", "ScenarioError", "ScriptError", "Result", "Scenario",
    "load_scenario", "load_script", "replay", "run", "run_scenario", "__version__",
]

#: `coaplab.run(scenario, jobs=None)` — alias of :func:`run_scenario`.
run = run_scenario

try:
    from ._core import __version__
except ImportError:  # pragma: no cover - only when the extension is not built
    __version__ = "0.0.0+unbuilt"
