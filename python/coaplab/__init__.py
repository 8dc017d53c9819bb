"""coaplab — a laboratory for CoAP congestion control.

Rust does the work (``coaplab._core``); this package describes, schedules, stores and presents.
The names below load on first use (PEP 562), so that ``coaplab --help`` and the commands that do
not run anything start fast.
"""

import importlib

# Imported eagerly (it is light).
from .describe.replay import load_script, replay
from .errors import CoaplabError, ScenarioError, ScriptError

__all__ = [
    "Algorithm",
    "CoaplabError",
    "Result",
    "Scenario",
    "ScenarioError",
    "ScriptError",
    "__version__",
    "compare_studies",
    "load_scenario",
    "load_script",
    "replay",
    "run",
    "run_scenario",
]

#: Where each lazily loaded name lives. `coaplab.run(scenario, jobs=None)` is
#: :func:`run_scenario`.
_LAZY = {
    "Result": ("present.result", "Result"), "run_scenario": ("present.result", "run_scenario"),
    "run": ("present.result", "run_scenario"), "Algorithm": ("describe.algorithm", "Algorithm"),
    "compare_studies": ("present.compare", "compare_studies"),
    "Scenario": ("describe.scenario", "Scenario"), "load_scenario": ("describe.scenario", "load_scenario"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'coaplab' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


try:
    from ._core import __version__
except ImportError:  # pragma: no cover - only when the extension is not built
    __version__ = "0.0.0+unbuilt"
