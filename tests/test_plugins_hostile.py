"""Plug-ins that crash, exit or hang (issue #38, items 5-8, 13, 14): python:/c: algorithms run
in a supervised worker process (python/coaplab/execute/supervise.py); whatever they do, the
command ends with one line naming the plug-in and what it did, a failure status, and every
finished run stored. Every command here is bounded in time, so a regression cannot hang CI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from conftest import ROOT, compile_c_library

#: Any command here ends well within this (a hang is caught by --plugin-timeout 1).
BOUND_S = 120


def coaplab(*args, cwd: Path, timeout: float = BOUND_S) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coaplab.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, check=False)


def hostile_c(tmp_path: Path, name: str, statement: str = "", timer_ns: str = "100000000ull") -> Path:
    """examples/algorithms/c/aggressive.c with `statement` at the start of
    coaplab_cc_exchange_start and its fixed timer set to `timer_ns`."""
    src = (ROOT / "examples/algorithms/c/aggressive.c").read_text()
    src = src.replace("#include <string.h>", "#include <signal.h>\n#include <stdlib.h>\n#include <string.h>\n"
                      "#include <unistd.h>")
    src = src.replace("#define TIMER_NS 100000000ull", f"#define TIMER_NS {timer_ns}")
    marker = "(void)now_ns, (void)outstanding, (void)random;"
    assert marker in src
    src = src.replace(marker, marker + "\n    " + statement)
    (tmp_path / f"{name}.c").write_text(src)
    return compile_c_library(tmp_path / f"{name}.c", tmp_path / f"{name}.so")


def hostile_py(tmp_path: Path, name: str, body: str, top: str = "") -> str:
    """A coaplab.Algorithm subclass `Algo` in FILE.py whose on_exchange_start runs `body` first;
    `top` runs at import. Returns python:FILE:Algo."""
    (tmp_path / f"{name}.py").write_text(
        "import os, sys, time\nimport coaplab\n" + textwrap.dedent(top) + "\n"
        "class Algo(coaplab.Algorithm):\n"
        "    def on_exchange_start(self, now, outstanding, rng):\n"
        + textwrap.indent(textwrap.dedent(body) or "pass", "        ") + "\n"
        "        return super().on_exchange_start(now, outstanding, rng)\n")
    return f"python:{tmp_path / name}.py:Algo"


def scenario(tmp_path: Path, ccs: list[str], replications: int = 3, extra: str = "") -> Path:
    f = tmp_path / "s.toml"
    f.write_text(f'name = "hostile"\nseed = 1\nreplications = {replications}\n'
                 '[workload]\nkind = "continuous"\nclients = 2\nexchanges = 3\n'
                 f'{extra}[sweep]\n"coap.cc" = {json.dumps(ccs)}\n')
    return f


def script(tmp_path: Path) -> Path:
    f = tmp_path / "script.json"
    f.write_text(json.dumps([{"start": 0.0, "lost": 1, "rtt": 0.5}, {"start": 10.0, "lost": 0, "rtt": 0.7}]))
    return f


def one_line(p: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in p.stderr and "Fatal Python error" not in p.stderr, p.stderr
    return "\n".join(lines)


C_CASES = {
    "segv": ("raise(SIGSEGV);", "killed by SIGSEGV"),
    "abort": ("abort();", "killed by SIGABRT"),
    "exit0": ("exit(0);", "exited with status 0"),
    "loop": ("for (volatile int spin = 1; spin;) {}", "did not return within 1 s"),
    "sleep": ("sleep(1000);", "did not return within 1 s"),
}


@pytest.mark.parametrize("case", sorted(C_CASES))
def test_a_c_plugin_that_crashes_exits_or_hangs_is_one_line_in_every_command(tmp_path, case):
    statement, what = C_CASES[case]
    lib = hostile_c(tmp_path, case, statement)
    spec = f"c:{lib}:aggressive"
    for args in (("check-algorithm", spec, "--scripts", "2"), ("replay", spec, script(tmp_path))):
        p = coaplab(*args, "--plugin-timeout", "1", cwd=tmp_path)
        assert p.returncode == 1, (args, p.returncode, p.stdout, p.stderr)
        text = one_line(p)
        assert text.count("\n") == 0 and spec in text and what in text, text
        assert p.stdout == ""


@pytest.mark.parametrize("case", ["exit0", "segv", "sleep"])
def test_a_run_of_a_hostile_c_plugin_stores_every_other_run_and_fails(tmp_path, case):
    statement, what = C_CASES[case]
    lib = hostile_c(tmp_path, case, statement)
    spec = f"c:{lib}:aggressive"
    db = tmp_path / "r.duckdb"
    p = coaplab("run", scenario(tmp_path, ["default", spec], replications=2), "--db", db, "--jobs", "2",
                "--no-progress", "--plugin-timeout", "1", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    text = one_line(p)
    assert f"{spec}: " in text and what in text and "during replication" in text, text
    with duckdb.connect(str(db), read_only=True) as con:
        ok, failed = con.execute("select count(*) filter (where error is null), count(*) filter (where error is not "
                                 "null) from runs").fetchone()
    assert (ok, failed) == (2, 2)  # the built-in's runs are stored, the plug-in's stored as failed


PY_CASES = {
    "os_exit": ("os._exit(0)", "", "exited with status 0"),
    "busy": ("while True: pass", "", "did not return within 1 s"),
    "sleep": ("time.sleep(1000)", "", "did not return within 1 s"),
    "sleep_on_import": ("", "time.sleep(1000)", "did not return within 1 s"),
    "kill_self": ("os.kill(os.getpid(), 9)", "", "killed by SIGKILL"),
}


@pytest.mark.parametrize("case", sorted(PY_CASES))
def test_a_python_plugin_that_exits_or_hangs_is_one_line(tmp_path, case):
    body, top, what = PY_CASES[case]
    spec = hostile_py(tmp_path, case, body, top)
    for args in (("check-algorithm", spec, "--scripts", "2"), ("replay", spec, script(tmp_path)),
                 ("run", scenario(tmp_path, [spec], replications=1), "--no-db", "--no-progress")):
        p = coaplab(*args, "--plugin-timeout", "1", cwd=tmp_path)
        assert p.returncode != 0, (args, p.stdout, p.stderr)
        text = one_line(p)
        assert spec in text and what in text, (args, text)


def test_sys_exit_at_import_or_in_a_method_is_one_line_exit_2(tmp_path):
    at_import = hostile_py(tmp_path, "exit_import", "", "sys.exit(5)")
    in_method = hostile_py(tmp_path, "exit_method", "sys.exit(5)")
    p = coaplab("replay", at_import, script(tmp_path), cwd=tmp_path)
    assert p.returncode == 2 and "raised SystemExit: 5" in one_line(p), p.stderr
    p = coaplab("replay", in_method, script(tmp_path), cwd=tmp_path)
    assert p.returncode == 2 and "on_exchange_start raised SystemExit: 5" in one_line(p), p.stderr


def test_a_plugins_print_goes_to_stderr_and_json_stays_json(tmp_path):
    spec = hostile_py(tmp_path, "chatty", "print('hello from the plug-in')")
    p = coaplab("run", scenario(tmp_path, [spec], replications=1), "--no-db", "--no-progress", "--format", "json",
                cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [json.loads(line)["config"]["coap"]["cc"] for line in p.stdout.splitlines()] == [spec]
    assert "hello from the plug-in" in p.stderr


def test_a_plugins_chdir_moves_no_output(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    spec = hostile_py(tmp_path, "mover", f"os.chdir({str(elsewhere)!r})")
    work = tmp_path / "work"
    work.mkdir()
    p = coaplab("run", scenario(tmp_path, [spec], replications=1), "--db", "r.duckdb", "--pcap", "pcap",
                "--trace", "trace", "--no-progress", cwd=work)
    assert p.returncode == 0, p.stderr
    assert (work / "r.duckdb").is_file() and list((work / "pcap").iterdir()) and list((work / "trace").iterdir())
    assert not any(elsewhere.iterdir())


def test_an_exception_in_reset_is_named_reset(tmp_path):
    (tmp_path / "bad_reset.py").write_text("import coaplab\nclass Algo(coaplab.Algorithm):\n"
                                           "    def reset(self):\n        raise RuntimeError('no state')\n")
    spec = f"python:{tmp_path / 'bad_reset.py'}:Algo"
    p = coaplab("run", scenario(tmp_path, [spec], replications=1), "--no-db", "--no-progress", cwd=tmp_path)
    assert p.returncode == 2 and f"{spec}.reset raised RuntimeError: no state" in one_line(p), p.stderr
    assert ".__init__" not in p.stderr


def test_c_timers_under_1_ms_are_raised_to_1_ms_as_pythons_are(tmp_path):
    lib = hostile_c(tmp_path, "fast", timer_ns="500000ull")  # 0.5 ms
    p = coaplab("replay", f"c:{lib}:aggressive", script(tmp_path), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    timers = [t for r in json.loads(p.stdout) for t in r["timers"]]
    assert timers and all(t == 0.001 for t in timers)
    p = coaplab("run", scenario(tmp_path, [f"c:{lib}:aggressive"], replications=1), "--no-db", "--no-progress",
                cwd=tmp_path)
    assert p.returncode == 0, p.stderr


def test_a_garbage_return_code_is_named_as_the_c_api_words_it(tmp_path):
    lib = hostile_c(tmp_path, "garbage", "if (state != NULL) return 7;")
    p = coaplab("replay", f"c:{lib}:aggressive", script(tmp_path), cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert ("coaplab_cc_exchange_start returned 7; the C API allows COAPLAB_CC_OK (0) or a negative "
            "COAPLAB_CC_ERR_*") in one_line(p)
    assert "no exchange in flight" not in p.stderr


def test_check_algorithm_bounds_its_arguments(tmp_path):
    spec = f"{ROOT / 'examples/algorithms/cocoa_py.py'}:CocoaPy"
    p = coaplab("check-algorithm", spec, "--scripts", "100000000", cwd=tmp_path, timeout=30)
    assert p.returncode == 2 and "--scripts: 100000000 is out of range" in one_line(p)
    p = coaplab("check-algorithm", spec, "--seed", str(2**64 - 1), cwd=tmp_path, timeout=30)
    assert p.returncode == 2 and "--seed: 18446744073709551615 is out of range" in one_line(p), p.stderr
    assert "FAIL" not in p.stdout


def test_an_algorithm_raising_on_some_runs_only_is_a_fail_line(tmp_path):
    # Raises on every second instance: the first replay of a script passes, the second raises.
    (tmp_path / "flaky.py").write_text(
        "import coaplab\nCOUNT = [0]\nclass Algo(coaplab.Algorithm):\n    def reset(self):\n"
        "        COUNT[0] += 1\n        self.odd = COUNT[0] % 2 == 0\n"
        "    def on_exchange_start(self, now, outstanding, rng):\n        if self.odd:\n"
        "            raise RuntimeError('sometimes')\n        return super().on_exchange_start(now, outstanding, rng)\n")
    p = coaplab("check-algorithm", f"{tmp_path / 'flaky.py'}:Algo", "--scripts", "2", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("FAIL property 'no exceptions'") and "sometimes" in p.stdout


def test_hostile_rng_bounds_and_rtt_samples_are_refused(tmp_path):
    nan = hostile_py(tmp_path, "nan_rng", "rng.uniform(float('nan'), float('inf'))")
    p = coaplab("replay", nan, script(tmp_path), cwd=tmp_path)
    assert p.returncode == 2 and "expected bounds in seconds in 0..1e9" in one_line(p), p.stderr
    (tmp_path / "huge.py").write_text("import coaplab\nclass Algo(coaplab.Algorithm):\n"
                                      "    def on_response(self, now, exchange, answered):\n"
                                      "        return ('strong', 1e300)\n"
                                      "    def next_timer(self, exchange):\n        return 1e300\n")
    p = coaplab("replay", f"python:{tmp_path / 'huge.py'}:Algo", script(tmp_path), cwd=tmp_path)
    assert p.returncode == 2 and "1e300" in one_line(p) and "0000000000" not in p.stderr, p.stderr


def test_ctrl_c_while_a_python_plugin_runs_is_interrupted_130(tmp_path):
    import signal
    import time

    spec = hostile_py(tmp_path, "slow", "time.sleep(30)")
    p = subprocess.Popen([sys.executable, "-m", "coaplab.cli", "replay", spec, str(script(tmp_path))], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    p.send_signal(signal.SIGINT)
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 130 and err.strip() == "coaplab: interrupted", err
