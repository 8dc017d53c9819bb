"""Hostile scenario files: whatever a file holds, loading it gives either valid resolved
configurations or one ScenarioError line, and `coaplab run` exits 0 or 2 without a traceback.

The files are mutations of the shipped scenario files (examples/, coaplab/scenarios/): wrong
types, huge / tiny / non-finite numbers, unknown keys, deep nesting, sections replaced by
scalars, bad sweeps, bad groups, written out as TOML."""

from __future__ import annotations

import atexit
import json
import math
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coaplab.describe.scenario import MAX_CONFIGURATIONS, SCHEMA, TOP, file_stem, load_scenario
from coaplab.errors import ScenarioError
from conftest import ROOT

BASES = [tomllib.loads(p.read_text()) for p in
         sorted((ROOT / "examples").glob("*.toml")) + sorted((ROOT / "python" / "coaplab" / "scenarios").glob("*.toml"))]
KEYS = list(TOP) + [f"{s}.{k}" for s in SCHEMA for k in SCHEMA[s]]


# --- a small TOML writer (inline tables; every value TOML can hold) ---------------------------

def _toml_str(v: str) -> str:
    # A TOML basic string: JSON's escapes without surrogate pairs; DEL must be escaped too.
    return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_str(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def to_toml(doc: dict[str, Any]) -> str:
    return "".join(f"{_toml_str(str(k))} = {_toml_value(v)}\n" for k, v in doc.items())


# --- mutations ----------------------------------------------------------------------------------

scalars = st.one_of(
    st.integers(), st.integers(0, 3000), st.floats(0, 1000), st.integers(min_value=-(2**70), max_value=2**70), st.just(10**400), st.just(-(10**30)),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1e-300, 5e-324, 1e308, 1e-7, 1e30, 1e13]),
    st.text(max_size=12), st.sampled_from(["cocoa", "newreno", "tcp", "burst", "high", "star", "", "a/../b", "cocoaa"]),
    st.booleans(),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                      max_leaves=6)


def nested(depth: int) -> Any:
    v: Any = 1
    for i in range(depth):
        v = [v] if i % 2 else {"a": v}
    return v


@st.composite
def mutation(draw, doc: dict[str, Any]) -> dict[str, Any]:
    kind = draw(st.sampled_from(["set", "set", "set", "unknown", "section", "nest", "sweep", "sweep", "group", "group", "drop"]))
    doc = json.loads(json.dumps(doc))
    if kind == "set":
        key = draw(st.sampled_from(KEYS))
        plausible = st.one_of(st.integers(1, 100), st.floats(0.01, 100), st.sampled_from(
            ["cocoa", "default", "newreno", "tcp", "udp", "random", "burst", "firmware", "high", "off", "x"]))
        v = draw(st.one_of(values, plausible))
        if "." in key:
            s, k = key.split(".")
            if not isinstance(doc.get(s), dict):
                doc[s] = {}
            doc[s][k] = v
        else:
            doc[key] = v
    elif kind == "unknown":
        where = draw(st.sampled_from([None, *SCHEMA]))
        name = draw(st.sampled_from(["colour", "bufer_bytes", "clientz", "kind", "cc", "sweep", "x.y"]))
        target = doc if where is None else doc.setdefault(where, {}) if isinstance(doc.get(where, {}), dict) else doc
        target[name] = draw(values)
    elif kind == "section":
        doc[draw(st.sampled_from([*SCHEMA, "network", "group", "sweep"]))] = draw(scalars)
    elif kind == "nest":
        doc[draw(st.sampled_from(["link", "name", "sweep", "group"]))] = nested(draw(st.integers(1, 60)))
    elif kind == "sweep":
        sweep = doc.setdefault("sweep", {}) if isinstance(doc.get("sweep", {}), dict) else {}
        key = draw(st.one_of(st.sampled_from(KEYS), st.sampled_from(["group.a.clients", "group.safe.coap.cc", "group.a", "nope.x", "coap"])))
        sweep[key] = draw(st.one_of(st.lists(values, max_size=4), scalars, st.lists(st.sampled_from([1, 2, 300, 2500, "cocoa", "default"]), min_size=1, max_size=4)))
        doc["sweep"] = sweep
    elif kind == "group":
        group = draw(st.lists(st.one_of(
            st.fixed_dictionaries({"name": st.sampled_from(["a", "safe", "a", "b/c", ""])},
                                  optional={"clients": values, "coap": st.one_of(values, st.fixed_dictionaries({"cc": st.sampled_from(["default", "newreno", "cocoa-fb2"])})),
                                            "workload": values, "tcp": values, "colour": values}),
            values), max_size=3))
        doc["group"] = group
    elif kind == "drop" and doc:
        doc.pop(draw(st.sampled_from(sorted(doc))))
    return doc


#: One or two mutations of a shipped scenario file.
hostile = st.sampled_from(BASES).flatmap(mutation).flatmap(lambda d: st.one_of(st.just(d), mutation(d)))


def check_file(path: Path) -> bool:
    """Loads `path`: True if valid (every configuration resolved), False on a ScenarioError."""
    try:
        s = load_scenario(path)
    except ScenarioError as e:
        msg = str(e)
        assert msg and "\n" not in msg and len(msg) < 4000, msg
        return False
    assert 1 <= s.count <= MAX_CONFIGURATIONS
    for c in s.iter_configurations():
        json.dumps(c, allow_nan=False)  # what the engine receives: plain JSON, finite numbers
    return True


WORK = Path(tempfile.mkdtemp(prefix="coaplab-hostile-"))
atexit.register(shutil.rmtree, WORK, ignore_errors=True)


def test_hostile_files_are_valid_or_one_line_errors():
    outcomes = {True: 0, False: 0}

    @settings(max_examples=2000, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(doc=hostile)
    def one(doc):
        path = WORK / "s.toml"
        path.write_text(to_toml(doc))
        outcomes[check_file(path)] += 1

    one()
    # At least 2,000 files were tried, and both outcomes occur.
    assert outcomes[True] + outcomes[False] >= 2000 and outcomes[True] and outcomes[False], outcomes


# --- through the command line -------------------------------------------------------------------

def _small(doc: dict[str, Any]) -> dict[str, Any]:
    """A cheap version of a shipped scenario: one replication, two clients, three exchanges."""
    doc = json.loads(json.dumps(doc))
    doc["replications"] = 1
    doc["workload"] = {**doc.get("workload", {}), "clients": 2, "exchanges": 3, "resource_bytes": 2048}
    if doc.get("workload", {}).get("kind") == "burst":
        doc["workload"].update(background=2, burst_clients=2, burst_exchanges=2, duration_s=None)
        doc["workload"] = {k: v for k, v in doc["workload"].items() if v is not None}
    if isinstance(doc.get("sweep"), dict):
        doc["sweep"] = {k: v[:1] for k, v in doc["sweep"].items()}
    return doc


def _cheap(path: Path) -> bool:
    try:
        configs = load_scenario(path).configurations()
    except ScenarioError:
        return True
    for c in configs:
        pops = [c] + c.get("group", [])
        for p in pops:
            w = p["workload"]
            clients = w["background"] + (w["burst_clients"] or 0) if w["kind"] == "burst" else w["clients"]
            work = clients * max(w["exchanges"], w["burst_exchanges"] or 0, w["resource_bytes"] // 256 if w["kind"] == "firmware" else 0)
            if c["replications"] * work > 200 or w["duration_s"] is not None or len(configs) > 4:
                return False
    return True


def _cli_cases(n: int = 50) -> list[Path]:
    out: list[Path] = []
    seen = 0
    small = st.sampled_from([_small(b) for b in BASES]).flatmap(mutation)

    @settings(max_examples=4 * n, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(doc=small)
    def collect(doc):
        nonlocal seen
        if len(out) >= n:
            return
        seen += 1
        path = WORK / f"cli-{seen}.toml"
        path.write_text(to_toml(doc))
        if _cheap(path):
            out.append(path)

    collect()
    return out


def _run(path: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("coaplab")
    return subprocess.run([str(exe), "run", str(path), "--no-db", "--no-progress", "--jobs", "1"],
                          capture_output=True, text=True, cwd=WORK, check=False)


def test_cli_exits_0_or_2_without_traceback():
    cases = _cli_cases()
    assert len(cases) >= 40
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(_run, cases))
    codes = {0: 0, 2: 0}
    for path, r in zip(cases, results):
        assert r.returncode in (0, 2), (path.read_text(), r.stderr[-2000:])
        assert "Traceback" not in r.stderr, (path.read_text(), r.stderr[-2000:])
        codes[r.returncode] += 1
        if r.returncode == 2:
            assert r.stderr.startswith("coaplab: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert codes[0] and codes[2]  # the sample holds both valid and invalid files


# --- the named hostile inputs -------------------------------------------------------------------

@pytest.mark.parametrize(
    "content, fragment",
    [
        # 'name = "caf' is 11 bytes (offsets 0-10), so the byte 0xe9 is at offset 11.
        (b'name = "caf\xe9"\n', "not UTF-8 text (byte 0xe9 at offset 11)"),
        (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
        (b"[link]\nerrors = " + b"{a = " * 3000 + b"1" + b"}" * 3000 + b"\n", "nested too deeply"),
        (b"[link]\nerrors = " + b"{a = " * 30 + b"1" + b"}" * 30 + b"\n", "nested too deeply"),
        (b'link = 5\n[sweep]\n"link.mtu" = [300]\n', "link: 5 is not allowed; expected a table"),
        (b"[link]\nmtu = " + b"9" * 5000 + b"\n", "cannot read an integer literal with thousands of digits"),
        (b"[link]\ndownlink_kbps = " + b"9" * 400 + b"\n", "link.downlink_kbps: <an integer of 400 digits> is out of range"),
        (b"[link]\nmtu = 99999999999999999999999\n", "link.mtu: <an integer of 23 digits> is out of range"),
        (b"[link]\ndownlink_kbps = nan\n", "link.downlink_kbps: nan is not allowed; expected a number"),
        (b'name = "a\\nb"\n', "name: \"a\\nb\" is not allowed; expected a string of 1 to 200 characters without control characters"),
        (b'[coap]\ncc = "fasr"\n', 'coap.cc: "fasr" is not a UDP algorithm (did you mean "fasor"?)'),
        (b'[workload]\nkind = "continous"\n', 'workload.kind: "continous" is not allowed (did you mean "continuous"?)'),
        (b"[workload]\nclient = 3\n", 'workload.client: unknown key (did you mean "clients"?)'),
        (b'[sweep]\n"link.mtu" = [' + b", ".join(str(300 + i).encode() for i in range(400)) + b']\n"coap.cc" = ["default", "cocoa", "fasor"]\n'
         b'"link.buffer_bytes" = [' + b", ".join(str(i).encode() for i in range(100)) + b"]\n",
         "sweep: 120,000 configurations (400 × 3 × 100) is more than the limit of 100,000"),
    ],
)
def test_named_hostile_inputs(tmp_path, content, fragment):
    p = tmp_path / "s.toml"
    p.write_bytes(content)
    with pytest.raises(ScenarioError) as e:
        load_scenario(p)
    assert fragment in str(e.value)
    assert "\n" not in str(e.value)


def test_a_large_sweep_is_counted_not_expanded():
    # 400 × 250 = 100,000 configurations: exactly the limit, validated one at a time.
    s = load_scenario({"sweep": {"link.buffer_bytes": list(range(400)), "seed": list(range(250))}})
    assert s.count == 100_000
    it = s.iter_configurations()
    first = next(it)
    assert first["link"]["buffer_bytes"] == 0 and first["seed"] == 0
    assert next(it)["seed"] == 1


def test_names_never_make_paths():
    assert file_stem("../../etc/passwd") == "______etc_passwd"
    assert file_stem("fig3/udp/cocoa@2500") == "fig3_udp_cocoa_2500"
    assert file_stem("quick") == "quick"
    assert file_stem("a" * 300) == "a" * 100


def test_pcap_files_of_a_name_with_slashes_stay_in_the_directory(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('name = "../x/y"\n[workload]\nclients = 1\nexchanges = 2\n')
    exe = Path(sys.executable).with_name("coaplab")
    r = subprocess.run([str(exe), "run", str(p), "--no-db", "--no-progress", "--pcap", str(tmp_path / "pcap")],
                       capture_output=True, text=True, cwd=tmp_path, check=False)
    assert r.returncode == 0, r.stderr
    files = [f.name for f in (tmp_path / "pcap").iterdir()]
    assert len(files) == 1 and files[0].startswith("___x_y-") and files[0].endswith("-rep0.pcap")


@pytest.mark.parametrize("args, fragment", [
    (["plot", "--kind", "time-sequence", "--direction", "sideways", "--out", "x.svg"], "invalid choice: 'sideways'"),
    (["run"], "required: SCENARIO.toml"),
    (["frob"], "invalid choice: 'frob'"),
    (["run", "x.toml", "--jobs", "zero"], "--jobs"),
])
def test_bad_arguments_are_one_line(tmp_path, args, fragment):
    """argparse's own errors (unknown choice, missing argument) are one line, exit code 2,
    without the usage block."""
    exe = Path(sys.executable).with_name("coaplab")
    r = subprocess.run([str(exe)] + args, capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], r.stderr
    assert "usage:" not in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


# --- mesh `file` networks: nodes, links, lossy links (issue #22) ---------------------------------

_coord = st.one_of(st.floats(-2e6, 2e6), st.integers(-10, 120), st.sampled_from([1e6, -1e6, 1e6 + 1]), scalars)
_node = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["border-router", "sink", "client", "client", "router"])},
                          optional={"x": st.integers(0, 60), "y": st.integers(0, 60), "sink": st.integers(0, 6)}),
    st.fixed_dictionaries({"role": st.one_of(st.sampled_from(["Sink", "", "border_router", "client"]), scalars)},
                          optional={"x": _coord, "y": _coord, "sink": st.one_of(st.integers(-2, 70000), scalars),
                                    "z": scalars}),
    values)
_mesh = st.fixed_dictionaries(
    {"name": st.just("mesh"),
     "workload": st.fixed_dictionaries({"clients": st.integers(1, 3), "exchanges": st.just(2)}),
     "network": st.fixed_dictionaries(
         {"kind": st.just("file"),
          "nodes": st.one_of(
              # a plausible mesh, 20 m apart on a line (within radio range), roles in order
              st.integers(0, 4).map(lambda n: [{"x": 0, "y": 0, "role": "border-router"}, {"x": 20, "y": 0, "role": "sink"}]
                                    + [{"x": 40 + 20 * i, "y": 0, "role": "client"} for i in range(n)]),
              st.lists(_node, max_size=7))},
         optional={"links": st.one_of(st.lists(st.lists(st.integers(-1, 8), max_size=3), max_size=6), values),
                   "lossy_links": st.one_of(st.lists(st.one_of(st.fixed_dictionaries(
                       {"a": st.integers(-1, 8), "b": st.integers(-1, 8),
                        "loss": st.one_of(st.floats(0, 1), st.floats(allow_nan=True, allow_infinity=True))},
                       optional={"c": scalars}), values), max_size=3), values),
                   "range_m": st.one_of(st.floats(0.1, 100), scalars)})})


def test_hostile_mesh_files_are_valid_or_one_line_errors_naming_the_key():
    import coaplab._core as core

    outcomes = {"refused": 0, "engine refused": 0, "valid": 0}

    @settings(max_examples=600, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(doc=_mesh)
    def one(doc):
        path = WORK / "mesh.toml"
        path.write_text(to_toml(doc))
        if not check_file(path):
            outcomes["refused"] += 1
            return
        for c in load_scenario(path).iter_configurations():
            try:
                core.check(json.dumps(c))
            except ValueError as e:  # what only the built network shows: reachability, link indices
                msg = str(e)
                assert "\n" not in msg and "line 1 column" not in msg, msg
                assert msg.startswith(("network.", "workload.")), msg
                outcomes["engine refused"] += 1
                return
        outcomes["valid"] += 1

    one()
    assert all(outcomes.values()), outcomes
