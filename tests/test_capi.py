"""Algorithms in C behind the C API (`coap.cc = "c:LIB:NAME"`, python/coaplab/describe/capi.py,
docs/c-api.md): coaplab's own C library gives the built-in algorithms' results to the last
digit, a stack's own implementation (examples/algorithms/c/aggressive.c) runs, and bad
libraries are one line, exit 2."""

import json
import subprocess
from pathlib import Path

import pytest

import coaplab
from conftest import compile_c_library

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def ffi_lib() -> Path:
    """coaplab's C API as a shared library (the debug build: same code, built once)."""
    subprocess.run(["cargo", "build", "-q", "-p", "coaplab-cc-ffi"], cwd=ROOT, check=True)
    lib = ROOT / "target" / "debug" / "libcoaplab_cc_ffi.so"
    assert lib.is_file()
    return lib


def _scenario(tmp_path: Path, algorithms: list[str], extra: str = "") -> Path:
    f = tmp_path / "s.toml"
    f.write_text('name = "capi"\nseed = 3\nreplications = 2\n[link]\nbuffer_bytes = 2500\n'
                 '[workload]\nkind = "continuous"\nclients = 50\nexchanges = 20\n'
                 f'[coap]\nnstart = 2\n{extra}[sweep]\n"coap.cc" = {json.dumps(algorithms)}\n')
    return f


def _summaries(cli, scenario: Path, *args: str) -> list[dict]:
    # In the repository: python:examples/... is relative to the directory coaplab runs in.
    p = cli("run", scenario, "--no-db", "--format", "json", "--no-progress", *args, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    for r in rows:
        for k in ("config", "config_id", "name", "swept", "wall_s"):
            r.pop(k)
    return rows


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_c_library_gives_the_builtin_results(cli, tmp_path, ffi_lib, jobs):
    # cocoa (dithered, strong and weak estimators), fasor-rc (the Rexmit-Cnt echo the library
    # asks for through coaplab_cc_needs_rexmit_count) and linux-rto (no dithering: with NSTART
    # 2 two exchanges start in the same nanosecond with the same T_0), each beside its
    # built-in self: every summary figure identical.
    names = ["cocoa", "fasor-rc", "linux-rto"]
    algorithms = [x for n in names for x in (n, f"c:{ffi_lib}:{n}")]
    rows = _summaries(cli, _scenario(tmp_path, algorithms), "--jobs", jobs)
    assert len(rows) == 6
    for i, name in enumerate(names):
        builtin, through_c = rows[2 * i], rows[2 * i + 1]
        assert builtin["exchanges_completed"] > 0
        assert through_c == builtin, name


def test_a_stacks_own_c_algorithm_runs_as_its_python_twin(cli, tmp_path, aggressive_so):
    # examples/algorithms/c/aggressive.c and examples/algorithms/aggressive.py are one algorithm
    # (a fixed 100 ms timer, no backoff, no RTT samples): the same runs, figure for figure.
    rows = _summaries(cli, _scenario(tmp_path, [f"c:{aggressive_so}:aggressive",
                                                "python:examples/algorithms/aggressive.py:Aggressive"]))
    assert rows[0] == rows[1]
    # 100 ms against RTTs of seconds behind 50 clients' queue: most exchanges retransmit.
    assert rows[0]["retransmission_ratio"] > 0.5


def test_the_engine_calls_the_c_functions_as_documented(aggressive_so):
    # By hand: MAX_RETRANSMIT 4 → T_0 .. T_4 all 100 ms (coaplab_cc_timeout at each expiry
    # answers RETRANSMIT), then FAILED; base RTO 100 ms. The engine drives the library
    # (crates/engine/src/foreign/c.rs); no sample, and the state is opaque.
    [r] = coaplab.replay(f"c:{aggressive_so}:aggressive", [{"start": 1.0, "lost": 5, "rtt": 0.1}])
    assert r["timers"] == [0.1] * 5
    assert r["failed"] and r["retransmissions"] == 4
    assert r["end"] == 1.5 and r["rto_after"] == 0.1
    assert r["sample"] == {"kind": "none", "rtt": None} and r["state"] == {}


@pytest.mark.parametrize("cc, message", [
    ("c:nope.so:cocoa", "'c:nope.so:cocoa': library 'nope.so' not found"),
    ("c:README.md:cocoa", "'c:README.md:cocoa': 'README.md' cannot be loaded as a shared library"),
    ("c:examples:cocoa", "'c:examples:cocoa': 'examples' is not a regular file"),
    ("c:EMPTY:cocoa", "does not export coaplab_cc_init"),
    ("c:FFI:nosuch", "'nosuch' was refused by coaplab_cc_init (-2 (COAPLAB_CC_ERR_UNKNOWN_ALGORITHM))"),
])
def test_bad_c_algorithms_are_one_line_exit_2(cli, tmp_path, ffi_lib, cc, message):
    empty = tmp_path / "empty.c"
    empty.write_text("int coaplab_unrelated(void) { return 0; }\n")
    cc = cc.replace("EMPTY", str(compile_c_library(empty, tmp_path / "empty.so"))).replace("FFI", str(ffi_lib))
    scenario = _scenario(tmp_path, [cc])
    p = cli("run", scenario, "--no-db", cwd=ROOT)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and message in p.stderr, p.stderr
    assert "coap.cc" in p.stderr


def _script(tmp_path: Path) -> Path:
    # A lost first transmission (weak sample), a clean exchange (strong), two losses (weak).
    f = tmp_path / "script.json"
    f.write_text(json.dumps([{"start": 0.0, "lost": 1, "rtt": 0.5}, {"start": 10.0, "lost": 0, "rtt": 0.7},
                             {"start": 20.0, "lost": 2, "rtt": 0.3}]))
    return f


def test_replay_and_check_algorithm_take_a_c_algorithm(cli, tmp_path, ffi_lib):
    script = _script(tmp_path)
    through_c = cli("replay", f"c:{ffi_lib}:cocoa", script)
    builtin = cli("replay", "cocoa", script)
    assert through_c.returncode == 0 and builtin.returncode == 0, through_c.stderr + builtin.stderr
    a, b = json.loads(through_c.stdout), json.loads(builtin.stdout)
    # The C API keeps the algorithm's state opaque: everything but `state` is identical.
    assert [dict(r, state=None) for r in a] == [dict(r, state=None) for r in b]
    assert [r["sample"]["kind"] for r in a] == ["weak", "strong", "weak"]
    assert all(r["state"] == {} for r in a) and b[0]["state"]
    ok = cli("check-algorithm", f"c:{ffi_lib}:cocoa", "--compare", "cocoa", "--scripts", "10")
    assert ok.returncode == 0 and ok.stdout.startswith("ok: c:"), ok.stdout + ok.stderr
    # The comparison can fail: CoCoA is not RFC 7252's default.
    differs = cli("check-algorithm", f"c:{ffi_lib}:cocoa", "--compare", "default", "--scripts", "3")
    assert differs.returncode == 1 and "FAIL property 'equal to default'" in differs.stdout
    for args in (("replay", f"c:{ffi_lib}:nosuch", script), ("check-algorithm", "c:nope.so:cocoa")):
        bad = cli(*args)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr


def test_a_c_error_code_fails_the_run_with_one_line(tmp_path):
    # A library whose coaplab_cc_timeout answers COAPLAB_CC_ERR_INVALID instead of RETRANSMIT:
    # the engine stops calling it and the run (or replay) fails with the C API's own wording.
    from coaplab.errors import ScriptError

    source = (ROOT / "examples/algorithms/c/aggressive.c").read_text()
    assert source.count("return COAPLAB_CC_RETRANSMIT;") == 1
    broken = tmp_path / "broken.c"
    broken.write_text(source.replace("return COAPLAB_CC_RETRANSMIT;", "return COAPLAB_CC_ERR_INVALID;"))
    spec = f"c:{compile_c_library(broken, tmp_path / 'broken.so')}:aggressive"
    message = f"{spec}: coaplab_cc_timeout returned -7 (COAPLAB_CC_ERR_INVALID)"
    result = coaplab.run({"workload": {"exchanges": 1, "clients": 1}, "coap": {"cc": spec}}, jobs=1)
    assert result.failures and message in result.failures[0][3]
    with pytest.raises(ScriptError, match=r"coaplab_cc_timeout returned -7 \(COAPLAB_CC_ERR_INVALID\)$"):
        coaplab.replay(spec, [{"start": 0.0, "lost": 1, "rtt": 0.1}])
