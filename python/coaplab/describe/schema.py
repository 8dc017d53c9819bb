"""The engine's JSON Schema of scenario files (``_core.config_schema()``, generated from its
configuration types), parsed once for every module that reads a fact from it: the scenario
checker (:mod:`.scenario`) and the Python algorithms' defaults (:mod:`.algorithm`)."""

from __future__ import annotations

import json
from typing import Any

from .. import _core

#: The JSON Schema of scenario files, as the engine exports it.
SCHEMA_DOCUMENT: dict[str, Any] = json.loads(_core.config_schema())


def section_defaults(section: str) -> dict[str, Any]:
    """The engine's default of every key of a scenario section (``coap``, ``link``, ...) that has one."""
    node = SCHEMA_DOCUMENT["properties"][section]
    while "$ref" in node:
        node = SCHEMA_DOCUMENT["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return {k: p["default"] for k, p in node["properties"].items() if "default" in p}


def deref(node: dict[str, Any]) -> dict[str, Any]:
    """`node` with its `$ref` replaced by the definition (the node's own keys win)."""
    while "$ref" in node:
        target = SCHEMA_DOCUMENT.get("$defs", {})[node["$ref"].rsplit("/", 1)[-1]]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def non_null(node: dict[str, Any]) -> dict[str, Any]:
    """The non-null alternative of an `Option` (`anyOf [T, null]`), dereferenced."""
    node = deref(node)
    options = [o for o in node.get("anyOf", []) if o != {"type": "null"}]
    if "anyOf" in node and len(options) == 1:
        return deref(options[0])
    return node


def enum_values(node: dict[str, Any]) -> tuple[str, ...]:
    return tuple(deref(node)["enum"])
