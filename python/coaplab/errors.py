"""User-facing errors: each carries a one-line message naming what is wrong and what is allowed."""


class CoaplabError(Exception):
    """Base class of every error the CLI reports as `coaplab: error: <message>` (exit 2)."""


class ScenarioError(CoaplabError):
    """A scenario file or dict is invalid."""


class ScriptError(CoaplabError):
    """A replay script is invalid."""


class ResourceError(CoaplabError):
    """The machine, not the input, stopped the work: a full disk, an unwritable output. One
    line like every CoaplabError, but exit code 1 (the command was valid; exit 2 means it was
    not)."""

    exit_code = 1
