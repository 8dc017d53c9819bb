"""User-facing errors: each carries a one-line message naming what is wrong and what is allowed."""


class CoaplabError(Exception):
    """Base class of every error the CLI reports as `coaplab: error: <message>` (exit 2)."""


class ScenarioError(CoaplabError):
    """A scenario file or dict is invalid."""


class ScriptError(CoaplabError):
    """A replay script is invalid."""
