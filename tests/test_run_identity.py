"""A run's identity by content (issue #37, item 1): a ``python:`` algorithm's source and a ``c:``
library's bytes are part of ``config_id`` (python/coaplab/describe/scenario.py), so the stored
runs of an edited algorithm are never reused, and ``coaplab run`` says so; configurations of
registered algorithms keep their ids (tests/golden/compare_by_case.py checks every one)."""

import json
from pathlib import Path

from coaplab.describe.scenario import config_id, load_scenario
from conftest import ROOT, compile_c_library

BACKOFF = """from coaplab import Algorithm


class Backoff(Algorithm):
    def initial_timer(self, now, rng):
        return 0.5

    def next_timer(self, ex):
        return ex.timer * {factor}
"""


def _scenario(tmp_path: Path, cc: str) -> Path:
    f = tmp_path / "byo.toml"
    f.write_text('name = "byo"\nseed = 1\nreplications = 3\n[link]\nbuffer_bytes = 1000\nerrors = "high"\n'
                 f'[workload]\nkind = "continuous"\nclients = 5\nexchanges = 5\n[coap]\ncc = {json.dumps(cc)}\n')
    return f


def _run(cli, cwd: Path, *args: str):
    p = cli("run", "byo.toml", "--format", "json", *args, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines()], p.stderr


def _fcts(rows):
    return [(r["config_id"], r["fct_s"]["p50"], r["fct_s"]["p95"], r["packets"]["sent"]) for r in rows]


def test_an_edited_python_algorithm_runs_again(cli, tmp_path):
    algo = tmp_path / "byo.py"
    algo.write_text(BACKOFF.format(factor=1.5))
    _scenario(tmp_path, "python:byo.py:Backoff")
    first, _ = _run(cli, tmp_path, "--db", "byo.duckdb")
    again, err = _run(cli, tmp_path, "--db", "byo.duckdb")
    assert "3 of 3 runs were already stored" in err and _fcts(again) == _fcts(first)

    algo.write_text(BACKOFF.format(factor=4))
    second, err = _run(cli, tmp_path, "--db", "byo.duckdb")
    fresh, _ = _run(cli, tmp_path, "--no-db")
    assert "already stored" not in err
    assert "3 runs stored in byo.duckdb were of another version of byo.py" in err and "not reused" in err
    assert second[0]["config_id"] != first[0]["config_id"]
    assert _fcts(second) == _fcts(fresh)
    assert _fcts(second) != _fcts(first)  # 4x backoff: other timers, other packets

    algo.write_text(BACKOFF.format(factor=1.5))  # back to the first version: its runs again
    back, err = _run(cli, tmp_path, "--db", "byo.duckdb")
    assert "3 of 3 runs were already stored" in err and _fcts(back) == _fcts(first)


def test_a_rebuilt_c_library_runs_again(cli, tmp_path):
    source = (ROOT / "examples/algorithms/c/aggressive.c").read_text()
    assert "#define TIMER_NS 100000000ull" in source
    slow = tmp_path / "slow.c"
    slow.write_text(source.replace("#define TIMER_NS 100000000ull", "#define TIMER_NS 900000000ull"))
    lib = tmp_path / "algo.so"
    compile_c_library(ROOT / "examples/algorithms/c/aggressive.c", lib)
    _scenario(tmp_path, f"c:{lib}:aggressive")
    first, _ = _run(cli, tmp_path, "--db", "byo.duckdb")
    compile_c_library(slow, lib)  # the same file name, another behaviour
    second, err = _run(cli, tmp_path, "--db", "byo.duckdb")
    assert f"of another version of {lib}" in err
    assert second[0]["config_id"] != first[0]["config_id"]
    assert _fcts(second) != _fcts(first)


def test_config_id_hashes_the_bytes_not_the_path_or_time(tmp_path):
    lib = tmp_path / "lib.so"
    cfg = {"name": "x", "coap": {"cc": f"c:{lib}:n"}}
    lib.write_bytes(b"one")
    a = config_id(cfg)
    lib.write_bytes(b"two")
    b = config_id(cfg)
    lib.write_bytes(b"one")
    assert config_id(cfg) == a != b
    # a group's algorithm counts as the top-level one does
    grouped = {"name": "x", "group": [{"name": "g", "coap": {"cc": f"c:{lib}:n"}}]}
    g1 = config_id(grouped)
    lib.write_bytes(b"three")
    assert config_id(grouped) != g1


def test_registered_algorithms_keep_their_identity():
    # The id of a configuration without python: / c: names is the hash it always was: sha256 of
    # the model version and the canonical JSON (the golden set checks every stored case).
    import hashlib

    from coaplab.describe.scenario import MODEL_VERSION

    [cfg] = load_scenario({"coap": {"cc": "cocoa"}}).configurations()
    canonical = json.dumps(cfg, sort_keys=True, separators=(",", ":"))
    assert config_id(cfg) == hashlib.sha256((MODEL_VERSION + canonical).encode()).hexdigest()[:16]
