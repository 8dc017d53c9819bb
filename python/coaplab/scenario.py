"""Scenario files (SPEC §7.1): loading, strict validation, defaults, and sweep expansion.

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
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import ScenarioError

#: Bumped whenever the simulation model changes results; part of every configuration identity.
MODEL_VERSION = "coaplab-model-1"

#: Client start spread, s: each client starts at an offset uniform in [0, spread].
#: Fixed by the 50-client / 14100 B reference (docs/validation.md): its published FCTs span
#: 1.227 s, one full round of the bottleneck (50 × 24.8 ms); any spread much above zero
#: narrows that span (0.64 s at 0.66 s spread), so the clients started practically together.
DEFAULT_START_SPREAD_S = 0.05

UDP_ALGORITHMS = (
    "default", "default-fb1", "default-fb2", "cocoa", "cocoa-s", "cocoa-fb1", "cocoa-fb2",
    "basic-rto", "linux-rto", "peakhopper-rto", "fasor", "fasor-rc",
)
#: Congestion controllers of the TCP model (SPEC §4.2).
TCP_CONTROLLERS = ("newreno",)
TRANSPORTS = ("udp", "tcp")
#: Nagle's algorithm in the TCP model: Linux's (Minshall's) variant, RFC 896 as written, or off.
NAGLE_MODES = ("minshall", "classic", "off")
WORKLOAD_KINDS = ("continuous", "random", "burst", "firmware")
ERROR_PROFILES = ("none", "low", "medium", "high")
CHAIN_KEYS = ("good_mean_ms", "good_min_ms", "good_max_ms", "good_loss",
              "bad_mean_ms", "bad_min_ms", "bad_max_ms", "bad_loss")


def _fmt(v: Any) -> str:
    return json.dumps(v) if isinstance(v, (str, list, dict, bool)) or v is None else repr(v)


@dataclass(frozen=True)
class Field:
    """One scenario key: its default and its checker (returns the normalised value)."""

    default: Any
    check: Callable[[str, Any], Any]


def _bad(key: str, value: Any, allowed: str) -> ScenarioError:
    return ScenarioError(f"{key}: {_fmt(value)} is not allowed; expected {allowed}")


def number(lo: float | None = None, hi: float | None = None, *, open_lo: bool = False, optional: bool = False):
    desc = "a number" + ("" if lo is None else f" {'>' if open_lo else '>='} {lo:g}") + ("" if hi is None else f" and <= {hi:g}")
    if optional:
        desc += " (or omit the key)"

    def check(key: str, v: Any) -> Any:
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise _bad(key, v, desc)
        if lo is not None and (v <= lo if open_lo else v < lo) or hi is not None and v > hi:
            raise ScenarioError(f"{key}: {_fmt(v)} is out of range; expected {desc}")
        return float(v)

    return check


def integer(lo: int | None = None, hi: int | None = None, *, optional: bool = False):
    desc = "an integer" + ("" if lo is None else f" >= {lo}") + ("" if hi is None else f" and <= {hi}")

    def check(key: str, v: Any) -> Any:
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise _bad(key, v, desc)
        if lo is not None and v < lo or hi is not None and v > hi:
            raise ScenarioError(f"{key}: {_fmt(v)} is out of range; expected {desc}")
        return v

    return check


def pair(item: Callable[[str, Any], Any], what: str):
    def check(key: str, v: Any) -> Any:
        if not isinstance(v, list) or len(v) != 2:
            raise _bad(key, v, f"a list [min, max] of two {what}")
        a, b = item(f"{key}[0]", v[0]), item(f"{key}[1]", v[1])
        if a > b:
            raise ScenarioError(f"{key}: {_fmt(v)} has min > max; expected [min, max] with min <= max")
        return [a, b]

    return check


def choice(options: tuple[str, ...]):
    def check(key: str, v: Any) -> Any:
        if v not in options:
            raise _bad(key, v, "one of " + ", ".join(options))
        return v

    return check


def text(key: str, v: Any) -> Any:
    if not isinstance(v, str):
        raise _bad(key, v, "a string")
    return v


def boolean(key: str, v: Any) -> Any:
    if not isinstance(v, bool):
        raise _bad(key, v, "true or false")
    return v


def errors_value(key: str, v: Any) -> Any:
    if isinstance(v, str):
        if v not in ERROR_PROFILES:
            raise _bad(key, v, "one of " + ", ".join(ERROR_PROFILES) + ", or a table with " + ", ".join(CHAIN_KEYS))
        return v
    if not isinstance(v, dict):
        raise _bad(key, v, "a profile name (" + ", ".join(ERROR_PROFILES) + ") or a table with " + ", ".join(CHAIN_KEYS))
    unknown = sorted(set(v) - set(CHAIN_KEYS))
    if unknown:
        raise ScenarioError(f"{key}.{unknown[0]}: unknown key; allowed: " + ", ".join(CHAIN_KEYS))
    missing = [k for k in CHAIN_KEYS if k not in v]
    if missing:
        raise ScenarioError(f"{key}.{missing[0]}: missing; an error table needs all of " + ", ".join(CHAIN_KEYS))
    out = {}
    for k in CHAIN_KEYS:
        out[k] = number(0.0, 1.0)(f"{key}.{k}", v[k]) if k.endswith("loss") else number(0.0, open_lo=True)(f"{key}.{k}", v[k])
    for state in ("good", "bad"):
        lo, mean, hi = out[f"{state}_min_ms"], out[f"{state}_mean_ms"], out[f"{state}_max_ms"]
        if not lo <= mean <= hi:
            raise ScenarioError(f"{key}: {state}_min_ms <= {state}_mean_ms <= {state}_max_ms does not hold ({lo:g}, {mean:g}, {hi:g})")
    return out


SCHEMA: dict[str, dict[str, Field]] = {
    "link": {
        "downlink_kbps": Field(30.0, number(0, open_lo=True)),
        "uplink_kbps": Field(60.0, number(0, open_lo=True)),
        "downlink_delay_ms": Field(400.0, number(0)),
        "uplink_delay_ms": Field(200.0, number(0)),
        "mtu": Field(296, integer(68, 65535)),
        "buffer_bytes": Field(2500, integer(0, 10**12)),
        "uplink_buffer_bytes": Field(None, integer(0, 10**12, optional=True)),
        "path_delay_ms": Field([10.0, 20.0], pair(number(0), "numbers >= 0")),
        "link_overhead_bytes": Field(0, integer(0, 1000)),
        "errors": Field("none", errors_value),
    },
    "workload": {
        "kind": Field("continuous", choice(WORKLOAD_KINDS)),
        "clients": Field(1, integer(1, 100_000)),
        "exchanges": Field(50, integer(1, 10_000_000)),
        "duration_s": Field(None, number(0, 10**7, open_lo=True, optional=True)),
        "batch": Field([1, 10], pair(integer(1, 1_000_000), "integers >= 1")),
        "start_spread_s": Field(DEFAULT_START_SPREAD_S, number(0, 10**6)),
        "response_bytes": Field(60, integer(0, 65_000)),
        "resource_bytes": Field(102400, integer(1, 10**10)),
        "block_szx": Field(4, integer(0, 6)),
        "background": Field(0, integer(0, 100_000)),
        "burst_at_s": Field(None, number(0, 10**7, optional=True)),
        "burst_clients": Field(None, integer(1, 100_000, optional=True)),
        "burst_exchanges": Field(None, integer(1, 10_000_000, optional=True)),
    },
    "coap": {
        "transport": Field("udp", choice(TRANSPORTS)),
        "cc": Field("cocoa", text),
        "max_retransmit": Field(4, integer(0, 63)),
        "nstart": Field(1, integer(1, 64)),
        "ack_timeout_s": Field(2.0, number(0, 3600, open_lo=True)),
        "ack_random_factor": Field(1.5, number(1.0, 10.0)),
        "max_timer_s": Field(60.0, number(0, 86400, open_lo=True)),
    },
    # The TCP model's parameters (SPEC §4.2; crates/engine/src/tcp/config.rs documents each).
    # Only with coap.transport = "tcp"; UDP configurations carry no tcp section. The MSS is
    # link.mtu − 40 (256 B by default).
    "tcp": {
        "initial_window": Field(4, integer(1, 1000)),
        "slow_start_limit": Field(None, integer(1, 1000, optional=True)),
        "nagle": Field("minshall", choice(NAGLE_MODES)),
        "limited_transmit": Field(True, boolean),
        "delayed_ack_ms": Field(200.0, number(0, 10_000)),
        "initial_rto_s": Field(2.0, number(0, 3600, open_lo=True)),
        "max_rto_s": Field(120.0, number(0, 86400, open_lo=True)),
        "syn_retries": Field(40, integer(0, 1000)),
        "synack_retries": Field(41, integer(0, 1000)),
    },
}
TOP: dict[str, Field] = {
    "name": Field("scenario", text),
    "seed": Field(1, integer(0, 2**63 - 1)),
    "replications": Field(1, integer(1, 100_000)),
    "trace": Field(False, boolean),
}
SECTIONS = tuple(SCHEMA)


def _field(dotted: str) -> Field | None:
    if "." in dotted:
        section, key = dotted.split(".", 1)
        return SCHEMA.get(section, {}).get(key)
    return TOP.get(dotted)


def _all_keys() -> list[str]:
    return list(TOP) + [f"{s}.{k}" for s in SCHEMA for k in SCHEMA[s]]


def resolve(raw: dict[str, Any]) -> dict[str, Any]:
    """Validates one configuration (no sweep) and fills every default."""
    if not isinstance(raw, dict):
        raise ScenarioError(f"scenario: expected a table of keys, got {_fmt(raw)}")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in SCHEMA:
            continue
        if key not in TOP:
            raise ScenarioError(f"{key}: unknown key; allowed at the top level: " + ", ".join(list(TOP) + list(SECTIONS) + ["sweep"]))
    for key, f in TOP.items():
        out[key] = f.check(key, raw[key]) if key in raw else copy.deepcopy(f.default)
    for section, fields in SCHEMA.items():
        given = raw.get(section, {})
        if not isinstance(given, dict):
            raise ScenarioError(f"{section}: {_fmt(given)} is not allowed; expected a table")
        for key in given:
            if key not in fields:
                raise ScenarioError(f"{section}.{key}: unknown key; allowed: " + ", ".join(fields))
        out[section] = {
            key: (f.check(f"{section}.{key}", given[key]) if key in given else copy.deepcopy(f.default))
            for key, f in fields.items()
        }
    _cross_check(out)
    if out["coap"]["transport"] != "tcp":
        given = raw.get("tcp") or {}
        if given:
            raise ScenarioError(f"tcp.{next(iter(given))}: only meaningful with coap.transport = \"tcp\" (transport is {_fmt(out['coap']['transport'])})")
        # UDP configurations carry no tcp section (their identity does not depend on it).
        del out["tcp"]
    elif out["tcp"]["max_rto_s"] < out["tcp"]["initial_rto_s"]:
        raise ScenarioError(f"tcp.max_rto_s: {out['tcp']['max_rto_s']:g} is below tcp.initial_rto_s ({out['tcp']['initial_rto_s']:g}); allowed: >= initial_rto_s")
    return out


def _cross_check(c: dict[str, Any]) -> None:
    coap, w = c["coap"], c["workload"]
    if coap["transport"] == "udp" and coap["cc"] not in UDP_ALGORITHMS:
        hint = " (a TCP controller: set coap.transport = \"tcp\")" if coap["cc"] in TCP_CONTROLLERS else ""
        raise ScenarioError(f"coap.cc: {_fmt(coap['cc'])} is not a UDP algorithm{hint}; allowed: " + ", ".join(UDP_ALGORITHMS))
    if coap["transport"] == "tcp" and coap["cc"] not in TCP_CONTROLLERS:
        raise ScenarioError(f"coap.cc: {_fmt(coap['cc'])} is not a TCP congestion controller; allowed with coap.transport = \"tcp\": " + ", ".join(TCP_CONTROLLERS))
    if w["kind"] == "burst":
        for key in ("burst_at_s", "burst_clients", "burst_exchanges"):
            if w[key] is None:
                raise ScenarioError(f"workload.{key}: required when workload.kind = \"burst\"")
    else:
        for key in ("burst_at_s", "burst_clients", "burst_exchanges"):
            if w[key] is not None:
                raise ScenarioError(f"workload.{key}: only meaningful when workload.kind = \"burst\" (kind is {_fmt(w['kind'])})")
    if w["duration_s"] is not None and w["kind"] not in ("continuous", "burst"):
        raise ScenarioError(f"workload.duration_s: only meaningful for continuous or burst workloads (kind is {_fmt(w['kind'])})")


def config_id(resolved: dict[str, Any]) -> str:
    """Stable identity: sha256 of the canonical resolved configuration plus the model version."""
    canonical = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256((MODEL_VERSION + canonical).encode()).hexdigest()[:16]


def _set_dotted(raw: dict[str, Any], dotted: str, value: Any) -> None:
    if "." in dotted:
        section, key = dotted.split(".", 1)
        raw.setdefault(section, {})
        raw[section][key] = value
    else:
        raw[dotted] = value


@dataclass
class Scenario:
    """A validated scenario: a base configuration and its sweep."""

    raw: dict[str, Any]
    sweep: dict[str, list[Any]] = field(default_factory=dict)
    source: str = "<dict>"

    @property
    def name(self) -> str:
        return self.configurations()[0]["name"]

    def configurations(self) -> list[dict[str, Any]]:
        """The cartesian product of the sweep, in a stable order (first sweep key slowest)."""
        keys = list(self.sweep)
        out = []
        for values in itertools.product(*(self.sweep[k] for k in keys)):
            raw = copy.deepcopy(self.raw)
            for k, v in zip(keys, values):
                _set_dotted(raw, k, v)
            try:
                out.append(resolve(raw))
            except ScenarioError as e:
                swept = ", ".join(f"{k} = {_fmt(v)}" for k, v in zip(keys, values))
                raise ScenarioError(f"{e} (in the sweep configuration {swept})" if keys else str(e)) from None
        return out

    def swept_values(self, resolved: dict[str, Any]) -> dict[str, Any]:
        """The swept keys' values in one resolved configuration."""
        out = {}
        for k in self.sweep:
            if "." in k:
                s, key = k.split(".", 1)
                out[k] = resolved[s][key]
            else:
                out[k] = resolved[k]
        return out


def load_scenario(source: str | Path | dict[str, Any]) -> Scenario:
    """Loads a scenario from a TOML file path or a dict, validating every configuration."""
    if isinstance(source, dict):
        data, origin = copy.deepcopy(source), "<dict>"
    else:
        path = Path(source)
        try:
            text_ = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ScenarioError(f"cannot read scenario {str(path)!r}: {e.strerror or e}") from None
        try:
            data = tomllib.loads(text_)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"{path}: not valid TOML: {e}") from None
        origin = str(path)
    sweep_raw = data.pop("sweep", {})
    if not isinstance(sweep_raw, dict):
        raise ScenarioError(f"sweep: {_fmt(sweep_raw)} is not allowed; expected a table of dotted key -> list of values")
    sweep: dict[str, list[Any]] = {}
    for key, values in sweep_raw.items():
        if isinstance(values, dict):  # [sweep] coap.cc = [...] without quotes parses as a nested table
            raise ScenarioError(f"sweep.{key}: write dotted sweep keys in quotes, e.g. \"{key}.<name>\" = [ ... ]")
        if _field(key) is None:
            raise ScenarioError(f"sweep.{key}: unknown key; allowed: " + ", ".join(_all_keys()))
        if not isinstance(values, list) or not values:
            raise ScenarioError(f"sweep.{key}: {_fmt(values)} is not allowed; expected a non-empty list of values")
        sweep[key] = values
    scenario = Scenario(raw=data, sweep=sweep, source=origin)
    scenario.configurations()  # validate every configuration before anything runs
    return scenario
