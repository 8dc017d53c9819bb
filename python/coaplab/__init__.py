"""coaplab — a laboratory for CoAP congestion control.

Rust does the work (``coaplab._core``); this package describes, schedules, stores and presents.
"""

from .errors import CoaplabError, ScenarioError, ScriptError
from .replay import load_script, replay

__all__ = ["CoaplabError", "ScenarioError", "ScriptError", "load_script", "replay", "__version__"]

try:
    from ._core import __version__
except ImportError:  # pragma: no cover - only when the extension is not built
    __version__ = "0.0.0+unbuilt"
