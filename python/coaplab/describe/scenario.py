"""Scenario files (docs/experiments.md): loading, strict validation, defaults, and sweep expansion.

The keys, their types, defaults, ranges and allowed values are the engine's: its configuration
types (``crates/engine/src/config/``) export them as a JSON Schema (``_core.config_schema()``,
shipped as ``coaplab/data/scenario.schema.json`` for editors). This module reads that schema;
it adds what a schema cannot say well: the one-line error wording, the cross-key checks (an
algorithm valid for its transport, the burst keys, ...), client populations (``[[group]]``)
and sweeps.

Every error is a one-line :class:`ScenarioError` naming the dotted key, the bad value and what is
allowed, raised before anything runs. A resolved configuration contains every parameter,
defaults included; it is what the engine receives and what a configuration's identity hashes.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import ScenarioError
from ..files import read_regular_file
from ..names import did_you_mean, quote_value, unknown_among
from .capi import foreign_digests, is_foreign, load_foreign
from .lwm2m import check_lwm2m
from .schema import SCHEMA_DOCUMENT, deref, enum_values, non_null

#: Bumped whenever the simulation model changes results; part of every configuration identity.
#: What each version changed: docs/design.md §9.6, "Model versions".
MODEL_VERSION = "coaplab-model-8"

#: The most configurations one scenario's sweep may expand to; larger studies are split into
#: several scenario files (each is checked and resumed on its own).
MAX_CONFIGURATIONS = 100_000

#: The UDP algorithms (docs/algorithms.md) and the TCP model's congestion controllers.
UDP_ALGORITHMS: tuple[str, ...] = tuple(_core.algorithms())
TCP_CONTROLLERS: tuple[str, ...] = tuple(_core.tcp_controllers())
#: The TCP controllers whose runs trace their state (the ``cc_state`` table), from the registry.
CC_STATE_CONTROLLERS: tuple[str, ...] = tuple(_core.tcp_controllers_with_state())


#: Allowed values of the fixed sets, from the engine.
_LINK, _WORKLOAD, _COAP = (deref(SCHEMA_DOCUMENT["properties"][s]) for s in ("link", "workload", "coap"))
_TCP = non_null(SCHEMA_DOCUMENT["properties"]["tcp"])
_NETWORK = non_null(SCHEMA_DOCUMENT["properties"]["network"])
_ENERGY = non_null(SCHEMA_DOCUMENT["properties"]["energy"])
_GROUP = deref(SCHEMA_DOCUMENT["properties"]["group"]["items"])
TRANSPORTS = enum_values(_COAP["properties"]["transport"])
NAGLE_MODES = enum_values(_TCP["properties"]["nagle"])
WORKLOAD_KINDS = enum_values(_WORKLOAD["properties"]["kind"])
NETWORK_KINDS = enum_values(_NETWORK["properties"]["kind"])


def kinds_of(key: str) -> tuple[str, ...]:
    """The network kinds a ``network`` key applies to: the schema's ``x-kinds`` (the engine's
    own statement, ``crates/engine/src/config/network.rs``)."""
    return tuple(_NETWORK["properties"][key]["x-kinds"])


#: The network kinds that are radio meshes (``[link]`` buffer and errors do not apply): the kinds
#: the radio's keys apply to (``x-kinds`` of ``network.range_m``).
MESH_KINDS: tuple[str, ...] = kinds_of("range_m")
#: The NB-IoT and LTE-M cell kinds: those ``network.coupling_loss_db`` applies to.
CELL_KINDS: tuple[str, ...] = kinds_of("coupling_loss_db")
_ERRORS_OPTIONS = [deref(o) for o in deref(_LINK["properties"]["errors"])["anyOf"]]
ERROR_PROFILES = next(tuple(o["enum"]) for o in _ERRORS_OPTIONS if "enum" in o)
_CHAIN = next(o for o in _ERRORS_OPTIONS if o.get("type") == "object")
CHAIN_KEYS = tuple(_CHAIN["properties"])
DEFAULT_START_SPREAD_S = _WORKLOAD["properties"]["start_spread_s"]["default"]

#: Group names (and so the sweep keys `group.<name>.…`): letters, digits, `-`, `_`.
_GROUP_NAME = re.compile(_GROUP["properties"]["name"]["pattern"])


@dataclass(frozen=True)
class Field:
    """One scenario key: its default and its checker (returns the normalised value)."""

    default: Any
    check: Callable[[str, Any], Any]
    #: Left out of the resolved configuration unless given (keys added after configurations
    #: were first stored, so that existing configurations keep their identity; the engine
    #: fills the default).
    omit_if_absent: bool = False


def _bad(key: str, value: Any, allowed: str) -> ScenarioError:
    return ScenarioError(f"{key}: {quote_value(value)} is not allowed; expected {allowed}")


def _bounds(node: dict[str, Any]) -> tuple[Any, Any, bool]:
    if "exclusiveMinimum" in node:
        return node["exclusiveMinimum"], node.get("maximum"), True
    return node.get("minimum"), node.get("maximum"), False


def _num(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def number(lo: float | None = None, hi: float | None = None, *, open_lo: bool = False, optional: bool = False):
    desc = "a number" + ("" if lo is None else f" {'>' if open_lo else '>='} {_num(float(lo))}")
    desc += "" if hi is None else f" and <= {_num(float(hi))}"
    if optional:
        desc += " (or omit the key)"

    def check(key: str, v: Any) -> Any:
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or isinstance(v, float) and not math.isfinite(v):
            raise _bad(key, v, desc)
        # int/float comparisons are exact in Python, whatever the integer's size.
        if lo is not None and (v <= lo if open_lo else v < lo) or hi is not None and v > hi:
            raise ScenarioError(f"{key}: {quote_value(v)} is out of range; expected {desc}")
        try:
            return float(v)
        except OverflowError:
            raise ScenarioError(f"{key}: {quote_value(v)} is out of range; expected {desc}") from None

    return check


def integer(lo: int | None = None, hi: int | None = None, *, optional: bool = False):
    desc = "an integer" + ("" if lo is None else f" >= {lo}") + ("" if hi is None else f" and <= {hi}")
    if optional:
        desc += " (or omit the key)"

    def check(key: str, v: Any) -> Any:
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise _bad(key, v, desc)
        if lo is not None and v < lo or hi is not None and v > hi:
            raise ScenarioError(f"{key}: {quote_value(v)} is out of range; expected {desc}")
        return v

    return check


def pair(item: Callable[[str, Any], Any], what: str, ordered: bool = True):
    """Two values: a range [min, max] (`ordered`), or a plain pair such as a mesh link [a, b]
    (either order)."""

    def check(key: str, v: Any) -> Any:
        if not isinstance(v, list) or len(v) != 2:
            raise _bad(key, v, f"a list [min, max] of two {what}" if ordered else f"a list [a, b] of two {what}")
        a, b = item(f"{key}[0]", v[0]), item(f"{key}[1]", v[1])
        if ordered and a > b:
            raise ScenarioError(f"{key}: {quote_value(v)} has min > max; expected [min, max] with min <= max")
        return [a, b]

    return check


def list_of(item: Callable[[str, Any], Any], max_items: int | None = None):
    def check(key: str, v: Any) -> Any:
        if not isinstance(v, list):
            raise _bad(key, v, "a list")
        if max_items is not None and len(v) > max_items:
            raise ScenarioError(f"{key}: {len(v)} items; expected at most {max_items}")
        return [item(f"{key}[{i}]", x) for i, x in enumerate(v)]

    return check


def choice(options: tuple[str, ...]):
    def check(key: str, v: Any) -> Any:
        if not isinstance(v, str) or v not in options:
            raise ScenarioError(f"{key}: {quote_value(v)} is not allowed{did_you_mean(v, options)}; expected one of " + ", ".join(options))
        return v

    return check


_NO_CONTROL = r"^[^\x00-\x1f\x7f]*$"


def text(min_len: int = 0, max_len: int | None = None, pattern: str | None = None):
    desc = "a string" + (f" of {min_len} to {max_len} characters" if max_len is not None else "")
    if pattern == _NO_CONTROL:
        desc += " without control characters"
    elif pattern is not None:
        desc += f" matching {pattern}"
    regex = re.compile(pattern) if pattern is not None else None

    def check(key: str, v: Any) -> Any:
        if not isinstance(v, str) or len(v) < min_len or max_len is not None and len(v) > max_len:
            raise _bad(key, v, desc)
        if regex is not None and not regex.search(v):
            raise _bad(key, v, desc)
        return v

    return check


def boolean(key: str, v: Any) -> Any:
    if not isinstance(v, bool):
        raise _bad(key, v, "true or false")
    return v


def _table(key: str, v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise _bad(key, v, "a table")
    return v


def record(node: dict[str, Any]) -> Callable[[str, Any], Any]:
    """A table with known keys (an entry of ``network.nodes`` or ``network.lossy_links``):
    every key checked here, so that an error names it (``network.nodes[3].role``) instead of
    a position in the engine's JSON. The value is returned unchanged (its identity too)."""
    props = node["properties"]
    required = [k for k in node.get("required", []) if k in props]
    checks: dict[str, Callable[[str, Any], Any]] = {}

    def check(key: str, v: Any) -> Any:
        if not checks:
            checks.update({k: _checker(n) for k, n in props.items()})
        if not isinstance(v, dict):
            raise _bad(key, v, "a table with keys " + ", ".join(props))
        for k in v:
            if k not in props:
                raise _unknown(f"{key}.{k}", k, list(props))
        for k in required:
            if k not in v:
                raise ScenarioError(f"{key}.{k}: missing; each entry needs " + ", ".join(required))
        for k, x in v.items():
            checks[k](f"{key}.{k}", x)
        return v

    return check


def _unknown(key: str, name: Any, allowed: Any, where: str = "allowed") -> ScenarioError:
    # A key from a file may hold any character: escape the unprintable ones (a newline would
    # break the one-line error).
    key = "".join(c if c.isprintable() else repr(c)[1:-1] for c in key)
    if name == "":  # `"" = 1` in TOML: say so instead of an empty name
        key = (key.removesuffix(".")) + ('.""' if key not in ("", ".") else '""') + " (an empty key)"
    return ScenarioError(f"{key}: unknown key{did_you_mean(name, allowed)}; {where}: " + ", ".join(allowed))


def _number_or_table(key: str, v: Any) -> Any:
    """network.coupling_loss_db: a number, or a distribution table (checked by the engine)."""
    if isinstance(v, dict):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    raise _bad(key, v, 'a number or a table { distribution = "uniform", low, high }')


def _chain_check(key: str, v: Any) -> Any:
    fields = {k: _checker(n) for k, n in _CHAIN["properties"].items()}
    unknown = [k for k in v if k not in fields]
    if unknown:
        raise _unknown(f"{key}.{unknown[0]}", unknown[0], CHAIN_KEYS)
    missing = [k for k in CHAIN_KEYS if k not in v]
    if missing:
        raise ScenarioError(f"{key}.{missing[0]}: missing; an error table needs all of " + ", ".join(CHAIN_KEYS))
    out = {k: fields[k](f"{key}.{k}", v[k]) for k in CHAIN_KEYS}
    for state in ("good", "bad"):
        lo, mean, hi = out[f"{state}_min_ms"], out[f"{state}_mean_ms"], out[f"{state}_max_ms"]
        if not lo <= mean <= hi:
            raise ScenarioError(f"{key}: {state}_min_ms <= {state}_mean_ms <= {state}_max_ms does not hold ({lo:g}, {mean:g}, {hi:g})")
    return out


def errors_value(key: str, v: Any) -> Any:
    if isinstance(v, str):
        if v not in ERROR_PROFILES:
            raise ScenarioError(f"{key}: {quote_value(v)} is not allowed{did_you_mean(v, ERROR_PROFILES)}; expected one of "
                                + ", ".join(ERROR_PROFILES) + ", or a table with " + ", ".join(CHAIN_KEYS))
        return v
    if not isinstance(v, dict):
        raise _bad(key, v, "a profile name (" + ", ".join(ERROR_PROFILES) + ") or a table with " + ", ".join(CHAIN_KEYS))
    return _chain_check(key, v)


def _types(node: dict[str, Any]) -> tuple[set[str], bool]:
    t = node.get("type", [])
    types = {t} if isinstance(t, str) else set(t)
    return types - {"null"}, "null" in types


def _checker(node: dict[str, Any], ordered: bool = True) -> Callable[[str, Any], Any]:
    """The checker of one schema node (the subset of JSON Schema the engine's types produce).
    Pairs are ranges [min, max] (`ordered`) except as the items of a list (network.links)."""
    node = deref(node)
    if "anyOf" in node:
        options = [deref(o) for o in node["anyOf"]]
        if any("enum" in o for o in options) and any(o.get("type") == "object" for o in options):
            return errors_value
        if {o.get("type") for o in options} == {"number", "object"}:
            return _number_or_table
        if len(options) > 1 and all(o.get("type") == "string" for o in options):
            return text(1)  # coap.cc: a name, `python:FILE:CLASS` or `c:LIB:NAME`, checked per transport in _cross_check
        return _checker(non_null(node))
    if "enum" in node:
        return choice(tuple(node["enum"]))
    types, optional = _types(node)
    if types == {"integer"}:
        return integer(node.get("minimum"), node.get("maximum"), optional=optional)
    if types == {"number"}:
        lo, hi, open_lo = _bounds(node)
        return number(lo, hi, open_lo=open_lo, optional=optional)
    if types == {"boolean"}:
        return boolean
    if types == {"string"}:
        return text(node.get("minLength", 0), node.get("maxLength"), node.get("pattern"))
    if types == {"array"} and node.get("minItems") == node.get("maxItems") == 2:
        item = deref(node["items"])
        lo, hi, _ = _bounds(item)
        kind = "integers" if _types(item)[0] == {"integer"} else "numbers"
        what = f"{kind} >= {_num(lo)}" if hi is None else f"{kind} >= {_num(lo)} and <= {_num(hi)}"
        return pair(_checker(item), what, ordered)
    if types == {"array"} and "items" in node:  # a list: network.nodes, network.links
        return list_of(_checker(node["items"], ordered=False), node.get("maxItems"))
    if types == {"object"} and node.get("properties"):  # an entry of network.nodes, network.lossy_links
        return record(node)
    if types == {"object"}:
        return _table  # its keys are checked by the engine (runner: _core.check)
    raise AssertionError(f"unsupported schema node {node}")  # the engine's schema changed


def _fields(obj: dict[str, Any]) -> dict[str, Field]:
    return {k: Field(n.get("default"), _checker(n), bool(n.get("x-omit-if-absent"))) for k, n in obj["properties"].items()}


#: Every section's keys with their defaults and checkers, in the engine's order.
SCHEMA: dict[str, dict[str, Field]] = {"link": _fields(_LINK), "workload": _fields(_WORKLOAD),
                                       "coap": _fields(_COAP), "tcp": _fields(_TCP), "energy": _fields(_ENERGY)}
# `coap.cc` is checked against its transport's names in `_cross_check` (wording per transport).
SCHEMA["coap"]["cc"] = Field(SCHEMA["coap"]["cc"].default, text(1))
NETWORK: dict[str, Field] = _fields(_NETWORK)
TOP: dict[str, Field] = {k: Field(n.get("default"), _checker(n)) for k, n in SCHEMA_DOCUMENT["properties"].items()
                         if k not in SCHEMA and k not in ("network", "group", "sweep", "advise")}
GROUP_KEYS = tuple(_GROUP["properties"])
_CLIENTS = _checker(_GROUP["properties"]["clients"])
SECTIONS = tuple(SCHEMA)
_TOP_KEYS = list(TOP) + list(SECTIONS) + ["network", "group", "sweep", "advise"]
_BURST_KEYS = ("burst_at_s", "burst_clients", "burst_exchanges")


def file_stem(name: str) -> str:
    """`name` as output files use it: every character outside A–Z, a–z, 0–9, `-`, `_` becomes
    `_` (no `/`, no `.`, so never a path), at most 100 characters."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:100] or "scenario"


def _section(prefix: str, fields: dict[str, Field], given: dict[str, Any]) -> dict[str, Any]:
    for key in given:
        if key not in fields:
            raise _unknown(f"{prefix}.{key}", key, fields)
    # Immutable defaults as they are (deep-copying each cost a warm `coaplab.run` more than its summaries).
    return {key: (f.check(f"{prefix}.{key}", given[key]) if key in given else f.default
                  if isinstance(f.default, (type(None), bool, int, float, str)) else copy.deepcopy(f.default))
            for key, f in fields.items() if key in given or not f.omit_if_absent}


def _given(raw: dict[str, Any], section: str, prefix: str = "") -> dict[str, Any]:
    given = raw.get(section, {})
    if not isinstance(given, dict):
        raise _bad(prefix + section, given, "a table")
    return given


def _resolve_tcp(prefix: str, coap: dict[str, Any], given: dict[str, Any], tcp_elsewhere: bool) -> dict[str, Any] | None:
    """The resolved tcp section of a population with `coap`, or None for UDP."""
    if coap["transport"] != "tcp":
        for key in given:  # a misspelt key is unknown, whatever the transport
            if key not in SCHEMA["tcp"]:
                raise _unknown(f"{prefix}tcp.{key}", key, SCHEMA["tcp"])
        if given and not tcp_elsewhere:
            raise ScenarioError(f"{prefix}tcp.{next(iter(given))}: only meaningful with coap.transport = \"tcp\" "
                                f"(transport is {quote_value(coap['transport'])})")
        return None
    tcp = _section(f"{prefix}tcp", SCHEMA["tcp"], given)
    if tcp["max_rto_s"] < tcp["initial_rto_s"]:
        raise ScenarioError(f"{prefix}tcp.max_rto_s: {tcp['max_rto_s']:g} is below {prefix}tcp.initial_rto_s "
                            f"({tcp['initial_rto_s']:g}); allowed: >= initial_rto_s")
    return tcp


def resolve(raw: dict[str, Any]) -> dict[str, Any]:
    """Validates one configuration (no sweep) and fills every default."""
    if not isinstance(raw, dict):
        raise ScenarioError(f"scenario: expected a table of keys, got {quote_value(raw)}")
    for key in raw:
        if key == "sweep":
            raise ScenarioError("sweep: resolve() takes one configuration; load_scenario() expands sweeps")
        if key not in _TOP_KEYS:
            raise _unknown(key, key, _TOP_KEYS, "allowed at the top level")
    out: dict[str, Any] = {}
    for key, f in TOP.items():
        out[key] = f.check(key, raw[key]) if key in raw else copy.deepcopy(f.default)
    for section in ("link", "workload", "coap"):
        out[section] = _section(section, SCHEMA[section], _given(raw, section))
    _cross_check(out["workload"], out["coap"])
    groups = _resolve_groups(raw, raw.get("group"))
    tcp_given = _given(raw, "tcp")
    tcp = _resolve_tcp("", out["coap"], tcp_given, any("tcp" in g for g in groups))
    if tcp is not None:  # UDP configurations carry no tcp section (their identity does not depend on it)
        out["tcp"] = tcp
    if "network" in raw:
        out["network"] = _section("network", NETWORK, _given(raw, "network"))
        _refuse_network_keys_of_other_kinds(out["network"])
        _refuse_link_keys_that_do_not_apply(out["network"]["kind"], _given(raw, "link"))
        if "clients" not in _given(raw, "workload") and not groups:
            mesh_clients = _mesh_client_nodes(out["network"])
            if mesh_clients is not None:
                out["workload"]["clients"] = mesh_clients
    if "energy" in raw:  # the power model (docs/energy.md): only the keys given, each optional
        out["energy"] = _section("energy", SCHEMA["energy"], _given(raw, "energy"))
    if groups:
        out["group"] = groups
    return out


def _refuse_network_keys_of_other_kinds(network: dict[str, Any]) -> None:
    """A `network` key of another kind than `network.kind` is refused (the schema's `x-kinds`
    names the kinds each key applies to; the engine refuses it with the same line)."""
    kind = network["kind"]
    for key in network:
        if kind not in _NETWORK["properties"][key].get("x-kinds", [kind]):
            own = [k for k, n in _NETWORK["properties"].items() if k != "kind" and kind in n.get("x-kinds", [])]
            raise ScenarioError(f"network.{key}: does not apply to network.kind = \"{kind}\"; "
                                f"keys of {kind}: " + (", ".join(own) or "none"))


def link_keys_of(kind: str) -> tuple[str, ...]:
    """The ``[link]`` keys a network kind reads: the schema's ``x-kinds`` of each (the engine's
    statement; a GPRS network, for one, takes its rates, buffers, delays and losses from its
    ``network.gprs_*`` keys)."""
    return tuple(k for k, p in _LINK["properties"].items() if kind in p["x-kinds"])


def _refuse_link_keys_that_do_not_apply(kind: str, link: dict[str, Any]) -> None:
    """A `[link]` key that the network kind ignores is refused rather than run and shown as if it
    applied."""
    allowed = link_keys_of(kind)
    for key, value in link.items():
        if key not in allowed:
            own = ", ".join([f"network.{k}" for k in _NETWORK["properties"] if k != "kind" and kind in kinds_of(k)][:3])
            raise ScenarioError(f"link.{key}: {quote_value(value)} does not apply to network.kind = \"{kind}\" (its links are set by "
                                f"its network keys, e.g. {own}); allowed in [link] with {kind}: " + ", ".join(sorted(allowed)))


def _mesh_client_nodes(network: dict[str, Any]) -> int | None:
    """A mesh's default `workload.clients`: one client per client node of its topology (plus
    its `outside_clients`); None for networks that are not meshes. The engine's count
    (`net::topology::default_clients`)."""
    try:
        return _core.default_clients(json.dumps(network))
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def _group_label(index: int, g: Any) -> str:
    name = g.get("name") if isinstance(g, dict) else None
    return f"group.{name}" if isinstance(name, str) and _GROUP_NAME.match(name) else f"group[{index}]"


def _resolve_groups(raw: dict[str, Any], given: Any) -> list[dict[str, Any]]:
    """The fully resolved client populations: each inherits the file's sections."""
    if given is None:
        return []
    if not isinstance(given, list) or not given:
        raise _bad("group", given, "one or more [[group]] tables")
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, g in enumerate(given):
        label = _group_label(i, g)
        if not isinstance(g, dict):
            raise _bad(label, g, "a table ([[group]]) with name and the keys to override")
        for key in g:
            if key not in GROUP_KEYS:
                raise _unknown(f"{label}.{key}", key, GROUP_KEYS)
        if "name" not in g:
            raise ScenarioError(f"{label}.name: missing; every [[group]] needs a unique name")
        name = g["name"]
        if not isinstance(name, str) or not _GROUP_NAME.match(name):
            raise _bad(f"{label}.name", name, "letters, digits, - and _ (1 to 64 characters)")
        if name in seen:
            raise ScenarioError(f"{label}.name: {quote_value(name)} is used by two groups; group names are unique")
        seen.add(name)
        prefix = f"group.{name}."
        w_over = _given(g, "workload", prefix)
        if "clients" in g:
            if "clients" in w_over:
                raise ScenarioError(f"{prefix}clients: given twice (also as {prefix}workload.clients); give one")
            w_over = {**w_over, "clients": _CLIENTS(f"{prefix}clients", g["clients"])}
        resolved: dict[str, Any] = {"name": name}
        for section, over in (("workload", w_over), ("coap", _given(g, "coap", prefix))):
            resolved[section] = _section(prefix + section, SCHEMA[section], {**_given(raw, section), **over})
        _cross_check(resolved["workload"], resolved["coap"], prefix)
        tcp_over = _given(g, "tcp", prefix)
        if tcp_over and resolved["coap"]["transport"] != "tcp":
            _resolve_tcp(prefix, resolved["coap"], tcp_over, False)  # raises: tcp keys on a UDP group
        tcp = _resolve_tcp(prefix, resolved["coap"], {**_given(raw, "tcp"), **tcp_over}, True)
        if tcp is not None:
            resolved["tcp"] = tcp
        out.append(resolved)
    return out


#: Loads and checks a scenario's python:/c: algorithm (ValueError, one line): in this process
#: unless coaplab.execute.supervise installed its loader (a supervised worker process).
_plugin_loader: list[Callable[[str], object]] = [load_foreign]


def set_plugin_loader(load: Callable[[str], object]) -> None:
    _plugin_loader[0] = load


def _cross_check(w: dict[str, Any], coap: dict[str, Any], prefix: str = "") -> None:
    if coap["transport"] == "udp" and is_foreign(coap["cc"]):
        try:
            _plugin_loader[0](coap["cc"])
        except ValueError as e:
            raise ScenarioError(f"{prefix}coap.cc: {e}") from None
    elif coap["transport"] == "udp" and coap["cc"] not in UDP_ALGORITHMS:
        hint = " (a TCP controller: set coap.transport = \"tcp\")" if coap["cc"] in TCP_CONTROLLERS else did_you_mean(coap["cc"], UDP_ALGORITHMS)
        raise ScenarioError(f"{prefix}coap.cc: {quote_value(coap['cc'])} is not a UDP algorithm{hint}; allowed: " + ", ".join(UDP_ALGORITHMS))
    if coap["transport"] == "tcp" and (coap.get("non_rate_per_s") or coap.get("non_rule")):
        key = "non_rate_per_s" if coap.get("non_rate_per_s") else "non_rule"
        raise ScenarioError(f"{prefix}coap.{key}: NON traffic is CoAP over UDP only (transport is \"tcp\")")
    if coap["transport"] == "tcp" and coap.get("probing_rate_bps") is not None:
        raise ScenarioError(f"{prefix}coap.probing_rate_bps: PROBING_RATE is CoAP over UDP only (transport is \"tcp\"; TCP's congestion control paces it)")
    if coap["transport"] == "tcp" and coap["cc"] not in TCP_CONTROLLERS:
        raise ScenarioError(f"{prefix}coap.cc: {quote_value(coap['cc'])} is not a TCP congestion controller; allowed with coap.transport = \"tcp\": " + ", ".join(TCP_CONTROLLERS))
    if w["kind"] == "burst":
        for key in _BURST_KEYS:
            if w[key] is None:
                raise ScenarioError(f"{prefix}workload.{key}: required when workload.kind = \"burst\"")
    else:
        for key in _BURST_KEYS:
            if w[key] is not None:
                raise ScenarioError(f"{prefix}workload.{key}: only meaningful when workload.kind = \"burst\" (kind is {quote_value(w['kind'])})")
    if w.get("settling_cap_s") is not None and w["kind"] != "burst":
        raise ScenarioError(f"{prefix}workload.settling_cap_s: only meaningful when workload.kind = \"burst\" (kind is {quote_value(w['kind'])})")
    if w["duration_s"] is not None and w["kind"] not in ("continuous", "burst", "periodic", "reporting", "observe", "lwm2m"):
        raise ScenarioError(f"{prefix}workload.duration_s: only meaningful for continuous, burst, periodic, reporting, observe or lwm2m "
                            f"workloads (kind is {quote_value(w['kind'])})")
    if w["kind"] in ("periodic", "reporting", "lwm2m") and coap["transport"] != "udp":
        raise ScenarioError(f"{prefix}workload.kind: {quote_value(w['kind'])} is a CoAP-over-UDP workload; allowed with "
                            "coap.transport = \"tcp\": continuous, random, burst, firmware")
    if w["kind"] == "reporting":  # 3GPP TR 45.820's mobile autonomous reporting (docs/experiments.md)
        if w.get("duration_s") is None:
            raise ScenarioError(f"{prefix}workload.duration_s: required when workload.kind = \"reporting\"")
        if w.get("request_bytes") is not None:
            raise ScenarioError(f"{prefix}workload.request_bytes: not allowed with workload.kind = \"reporting\" "
                                "(each report's payload is drawn, 20-200 B Pareto, TR 45.820)")
    elif w.get("exception_reports_per_day") is not None:
        raise ScenarioError(f"{prefix}workload.exception_reports_per_day: only meaningful when workload.kind = \"reporting\" "
                            f"(kind is {quote_value(w['kind'])})")
    if w["kind"] == "periodic":
        for key in ("period_s", "duration_s"):
            if w.get(key) is None:
                raise ScenarioError(f"{prefix}workload.{key}: required when workload.kind = \"periodic\"")
    elif w.get("period_s") is not None:
        raise ScenarioError(f"{prefix}workload.period_s: only meaningful when workload.kind = \"periodic\" (kind is {quote_value(w['kind'])})")
    rb = w.get("request_bytes")
    if rb is not None and rb == 61:
        raise ScenarioError(f"{prefix}workload.request_bytes: 61 is not allowed; expected 60 (no payload) or 62..1280 "
                            "(a payload needs its 1-byte marker)")
    if w.get("start_interval_s") and w.get("start", "uniform") != "sequential":
        raise ScenarioError(f"{prefix}workload.start_interval_s: only meaningful when workload.start = \"sequential\" "
                            f"(start is {quote_value(w.get('start', 'uniform'))})")
    check_lwm2m(w, coap, prefix)


def config_id(resolved: dict[str, Any]) -> str:
    """Stable identity: sha256 of the canonical resolved configuration plus the model version;
    for a configuration naming ``python:`` / ``c:`` algorithms, also the sha256 of each one's
    file (its content, not its path or time: an edited algorithm is another configuration, the
    same file gives the same id on any machine). Configurations of registered algorithms only
    hash exactly what they always did."""
    canonical = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    try:
        digests = foreign_digests(resolved)
    except ValueError as e:
        raise ScenarioError(f"coap.cc: {e}") from None
    if digests:
        canonical += "\nalgorithm files:" + json.dumps(digests, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256((MODEL_VERSION + canonical).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# Sweeps


def _sweep_field(dotted: str, group_names: list[str]) -> Callable[[str, Any], Any]:
    """The checker of a sweep key, or a ScenarioError naming what is allowed."""
    parts = dotted.split(".")
    if parts[0] == "group":
        if len(parts) < 3:
            raise ScenarioError(f"sweep.{dotted}: unknown key; group keys are group.<name>.clients or group.<name>.<section>.<key>")
        name, rest = parts[1], parts[2:]
        if name not in group_names:
            where = ", ".join(group_names) if group_names else "none (the file has no [[group]])"
            raise ScenarioError(f"sweep.{dotted}: no group named {quote_value(name)}{did_you_mean(name, group_names)}; groups: {where}")
        if rest == ["clients"]:
            return _CLIENTS
        if len(rest) == 2 and rest[0] in ("workload", "coap", "tcp") and rest[1] in SCHEMA[rest[0]]:
            return SCHEMA[rest[0]][rest[1]].check
        allowed = ["clients"] + [f"{s}.{k}" for s in ("workload", "coap", "tcp") for k in SCHEMA[s]]
        raise _unknown(f"sweep.{dotted}", ".".join(rest), allowed, f"allowed after group.{name}.")
    if len(parts) == 1 and parts[0] in TOP:
        return TOP[parts[0]].check
    if len(parts) == 2 and parts[0] in SCHEMA and parts[1] in SCHEMA[parts[0]]:
        return SCHEMA[parts[0]][parts[1]].check
    if len(parts) == 2 and parts[0] == "network" and parts[1] in NETWORK:
        return NETWORK[parts[1]].check
    section = parts[0] if len(parts) > 1 else ""
    same = [k for k in _all_keys() if k.startswith(section + ".")]
    raise ScenarioError(unknown_among(f"sweep.{dotted}", dotted, same or _all_keys(), f"keys of [{section}]" if same
                                      else "keys") + f" (a sweep key is {', '.join(TOP)} or <section>.<key>, sections "
                        "link, workload, coap, tcp, energy, network, group.<name>)")


def _all_keys() -> list[str]:
    return (list(TOP) + [f"{s}.{k}" for s in SCHEMA for k in SCHEMA[s]] + [f"network.{k}" for k in NETWORK]
            + ["group.<name>.clients", "group.<name>.<section>.<key>"])


def set_dotted(raw: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    if parts[0] == "group":
        target = next(g for g in raw["group"] if isinstance(g, dict) and g.get("name") == parts[1])
        label, parts = f"group.{parts[1]}", parts[2:]
    else:
        target, label = raw, ""
    for p in parts[:-1]:
        label = f"{label}.{p}" if label else p
        sub = target.setdefault(p, {})
        if not isinstance(sub, dict):
            raise _bad(label, sub, "a table")
        target = sub
    target[parts[-1]] = value


def get_dotted(resolved: dict[str, Any], dotted: str) -> Any:
    parts = dotted.split(".")
    node: Any = resolved
    if parts[0] == "group":
        node = next(g for g in resolved["group"] if g["name"] == parts[1])
        parts = ["workload", "clients"] if parts[2:] == ["clients"] else parts[2:]
    for p in parts:
        node = node[p]
    return node


def _fails_alike(raw: dict[str, Any], error: ScenarioError) -> bool:
    try:
        resolve(copy.deepcopy(raw))
    except ScenarioError as base:
        return str(base) == str(error)
    return False


@dataclass
class Scenario:
    """A validated scenario: a base configuration and its sweep."""

    raw: dict[str, Any]
    sweep: dict[str, list[Any]] = field(default_factory=dict)
    source: str = "<dict>"
    #: The file's ``[advise]`` table (``coaplab advise``, docs/advise.md), unchecked here and
    #: never part of a configuration: the engine does not know it (coaplab.suites.advise reads it).
    advise: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return next(self.iter_configurations())["name"]

    @property
    def count(self) -> int:
        """How many configurations the sweep expands to (the product of the value counts)."""
        return reduce(lambda a, b: a * b, (len(v) for v in self.sweep.values()), 1)

    def iter_configurations(self) -> Iterator[dict[str, Any]]:
        """The cartesian product of the sweep, resolved one at a time, in a stable order (first
        sweep key slowest)."""
        keys = list(self.sweep)
        for values in itertools.product(*(self.sweep[k] for k in keys)):
            try:
                raw = copy.deepcopy(self.raw)
                for k, v in zip(keys, values):
                    set_dotted(raw, k, v)
                yield resolve(raw)
            except ScenarioError as e:
                swept = ", ".join(f"{k} = {quote_value(v)}" for k, v in zip(keys, values))
                # An error the file has without its sweep is the file's, whatever the sweep sets.
                own = not keys or _fails_alike(self.raw, e)
                raise ScenarioError(str(e) if own else f"{e} (in the sweep configuration {swept})") from None

    def configurations(self) -> list[dict[str, Any]]:
        """Every configuration of the sweep (see :meth:`iter_configurations`)."""
        return list(self.iter_configurations())

    def swept_values(self, resolved: dict[str, Any]) -> dict[str, Any]:
        """The swept keys' values in one resolved configuration (`group.<name>.clients` is the
        group's `workload.clients`)."""
        return {k: get_dotted(resolved, k) for k in self.sweep}


#: The largest scenario file read, bytes: the longest shipped one is a few kB; the limit keeps
#: `coaplab run /dev/zero` (or a mistaken multi-GB file) from filling memory.
MAX_SCENARIO_BYTES = 1024 * 1024


def _read(path: Path) -> dict[str, Any]:
    data = read_regular_file(path, MAX_SCENARIO_BYTES, "scenario", ScenarioError)
    try:
        text_ = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                            "scenario files are UTF-8 TOML") from None
    try:
        return tomllib.loads(text_)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {str(e).splitlines()[0]}") from None
    except RecursionError:
        raise ScenarioError(f"{path}: arrays or tables nested too deeply to read; "
                            "no key takes values nested more than a few levels") from None
    except ValueError as e:  # an integer literal with more digits than int() converts
        what = "an integer literal with thousands of digits" if "digits" in str(e) else str(e).splitlines()[0]
        raise ScenarioError(f"{path}: cannot read {what}; no key takes such a value") from None


def _check_depth(value: Any, key: str, depth: int = 0) -> None:
    """Refuses values nested deeper than any key allows (before anything recurses on them)."""
    if depth > 20:
        raise ScenarioError(f"{key}: nested too deeply; no key takes values nested more than a few levels")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_depth(v, f"{key}.{k}" if key else str(k), depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_depth(v, f"{key}[{i}]", depth + 1)


def load_scenario(source: str | Path | dict[str, Any]) -> Scenario:
    """Loads a scenario from a TOML file path or a dict and validates every configuration.

    The sweep is checked without expanding it: each swept value against its key, then the
    count (the product of the value counts; at most :data:`MAX_CONFIGURATIONS`); then every
    configuration is resolved one at a time (cross-key checks) without keeping them."""
    try:
        if isinstance(source, dict):
            _check_depth(source, "")
            data, origin = copy.deepcopy(source), "<dict>"
        else:
            data, origin = _read(Path(source)), str(source)
            _check_depth(data, "")
    except RecursionError:
        raise ScenarioError("scenario: values nested too deeply") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"scenario: expected a table of keys, got {quote_value(data)}")
    sweep_raw = data.pop("sweep", {})
    advise = data.pop("advise", None)  # coaplab advise's table: Python's, like [sweep]
    if advise is not None and not isinstance(advise, dict):
        raise _bad("advise", advise, "a table ([advise], docs/advise.md)")
    if not isinstance(sweep_raw, dict):
        raise _bad("sweep", sweep_raw, "a table of dotted key -> list of values")
    groups = data.get("group")
    group_names = [g["name"] for g in groups if isinstance(g, dict) and isinstance(g.get("name"), str)] if isinstance(groups, list) else []
    sweep: dict[str, list[Any]] = {}
    for key, values in sweep_raw.items():
        if isinstance(values, dict):  # [sweep] coap.cc = [...] without quotes parses as a nested table
            raise ScenarioError(f"sweep.{key}: write dotted sweep keys in quotes, e.g. \"{key}.<name>\" = [ ... ]")
        check = _sweep_field(key, group_names)
        if not isinstance(values, list) or not values:
            raise _bad(f"sweep.{key}", values, "a non-empty list of values")
        for v in values:
            try:
                check(key, v)
            except ScenarioError as e:
                raise ScenarioError(f"{e} (in the sweep configuration {key} = {quote_value(v)})") from None
        sweep[key] = values
    scenario = Scenario(raw=data, sweep=sweep, source=origin, advise=advise)
    if scenario.count > MAX_CONFIGURATIONS:
        sizes = " × ".join(str(len(v)) for v in sweep.values())
        raise ScenarioError(f"sweep: {scenario.count:,} configurations ({sizes}) is more than the limit of "
                            f"{MAX_CONFIGURATIONS:,}; split the study into several scenario files")
    for _ in scenario.iter_configurations():  # every configuration is valid before anything runs
        pass
    return scenario
