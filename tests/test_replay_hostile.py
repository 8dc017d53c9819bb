"""Hostile replay scripts: one line naming the problem and exit 2 (ScriptError from Python),
never a traceback — or a valid result. The reproducers first, then ≥ 1,000 generated scripts
through the Python API and 30 through the command line."""

import json
import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coaplab
from coaplab.describe.replay import MAX_EXCHANGES, load_script
from coaplab.errors import ScriptError

ALGORITHMS = ["default", "default-fb1", "cocoa", "cocoa-fb2", "linux-rto", "peakhopper-rto", "fasor", "fasor-rc"]


def refused(path_or_script, *needles, algorithm="cocoa", **kw):
    with pytest.raises(ScriptError) as e:
        coaplab.replay(algorithm, path_or_script, **kw)
    message = str(e.value)
    assert "\n" not in message and len(message) < 400, message
    for n in needles:
        assert n in message, message
    return message


def test_huge_integers_are_one_line(tmp_path):
    refused([{"start": 0, "lost": 10**400, "rtt": 1}], "'lost'", "integer of 1329 bits", "out of range")
    refused([{"start": 10**30, "lost": 0, "rtt": 1}], "'start'", "out of range")
    p = tmp_path / "huge.json"
    p.write_text('[{"start": 0, "lost": ' + "9" * 5000 + ', "rtt": 1}]')  # past Python's 4300-digit limit
    refused(p, "not a valid script")


def test_non_utf8_and_binary_files_are_one_line(tmp_path):
    p = tmp_path / "latin1.json"
    p.write_bytes('[{"start": 0, "lost": 0, "rtt": 1, "é": 1}]'.encode("latin-1"))
    # '[{"start": 0, "lost": 0, "rtt": 1, "' is 36 bytes: é (0xE9 in Latin-1) is byte 36.
    refused(p, "not UTF-8 text (byte 36)")
    p.write_bytes(bytes(range(256)))
    refused(p, "not UTF-8")


def test_deep_nesting_is_one_line(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    refused(p, "nested too deeply")
    deep = []
    for _ in range(50_000):
        deep = [deep]
    refused([{"start": 0, "lost": deep, "rtt": 1}], "'lost'", "is not a non-negative integer")


def test_too_many_exchanges_are_refused_with_the_count(tmp_path):
    script = [{"start": float(i), "lost": 0, "rtt": 0.1} for i in range(MAX_EXCHANGES + 1)]
    refused(script, "script has 100001 exchanges; allowed: at most 100000")
    p = tmp_path / "long.json"
    p.write_text(json.dumps(script))
    refused(p, "100001 exchanges")
    assert MAX_EXCHANGES == 100_000


# --- generated scripts ---------------------------------------------------------------------

numbers = st.one_of(
    st.integers(min_value=-5, max_value=30),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0, max_value=100),
    st.sampled_from([0, 1e9, 1e9 + 1, 2**32, 2**64, -0.0, 1e-300]),
)
json_scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=20))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20,
)
field_values = st.one_of(numbers, numbers, numbers, json_values)
exchange = st.one_of(
    st.fixed_dictionaries({"start": field_values, "lost": field_values, "rtt": field_values}),
    st.fixed_dictionaries({"start": st.floats(0, 1e9), "lost": st.integers(0, 40), "rtt": st.floats(0, 1e9)}),
    st.dictionaries(st.sampled_from(["start", "lost", "rtt", "extra", ""]), field_values, max_size=4),
    json_values,
)
scripts = st.one_of(st.lists(exchange, max_size=8), json_values)
max_retransmits = st.one_of(st.integers(0, 1000), st.sampled_from([-1, 1001, True, 2.5, 10**30]))


def check(algorithm, script, max_retransmit, dither, seed):
    try:
        out = coaplab.replay(algorithm, script, dither=dither, seed=seed, max_retransmit=max_retransmit)
    except ScriptError as e:
        message = str(e)
        assert message and "\n" not in message and len(message) < 400, message
        return
    assert isinstance(script, list) and len(out) == len(script)
    for record in out:
        assert set(record) >= {"timers", "retransmissions", "sample", "failed", "rto_after", "start", "end"}
        assert record["end"] >= record["start"]


@settings(max_examples=1200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(ALGORITHMS), scripts, max_retransmits, st.booleans(),
       st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([-1, 2**64])))
def test_generated_scripts_through_the_api(algorithm, script, max_retransmit, dither, seed):
    check(algorithm, script, max_retransmit, dither, seed)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=200), scripts.map(lambda s: json.dumps(s).encode())))
def test_generated_files_through_the_loader(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("s") / "script.json"
    p.write_bytes(data)
    try:
        steps = load_script(p)
    except ScriptError as e:
        assert "\n" not in str(e)
        return
    check("cocoa", steps, 4, False, 0)


def hostile_files(n):
    """n hostile script files' bytes, from a fixed seed."""
    rng = random.Random(20261122)
    pieces = [
        b"[" * 5000, b'{"start": ', b'"lost": ', b"9" * 5000, b"\xff\xfe", b"NaN", b"-Infinity", b"1e999",
        b'[{"start": 0, "lost": 0, "rtt": 1}]', b",", b"]", b"}", b'"\\ud800"', b"null", b"true", b"-1",
    ]
    out = []
    for _ in range(n):
        k = rng.randrange(1, 6)
        out.append(b"".join(rng.choice(pieces) for _ in range(k)))
    return out


def test_hostile_files_on_the_command_line(tmp_path):
    for i, data in enumerate(hostile_files(30)):
        p = tmp_path / f"s{i}.json"
        p.write_bytes(data)
        proc = subprocess.run([sys.executable, "-m", "coaplab.cli", "replay", "cocoa", str(p)],
                              capture_output=True, text=True, timeout=120, check=False)
        assert "Traceback" not in proc.stderr, (data[:80], proc.stderr)
        if proc.returncode == 0:
            json.loads(proc.stdout)
        else:
            assert proc.returncode == 2, (data[:80], proc.returncode, proc.stderr)
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("coaplab: error: "), proc.stderr
