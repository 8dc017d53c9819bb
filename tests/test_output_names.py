"""Output files are only ever written inside the directories the user gave (--pcap, --trace),
whatever the scenario's name."""

import os

import pytest

from coaplab.execute.runner import file_stem


@pytest.mark.parametrize("name, stem", [
    ("../../x", "______x"),      # '.' and '/' are outside [A-Za-z0-9_-]
    ("a/b", "a_b"),
    ("..", "__"),
    (".hidden", "_hidden"),
    ("ok-name_1", "ok-name_1"),
    ("", "scenario"),
    ("día 1", "d_a_1"),          # í and the space too
    ("x" * 300, "x" * 100),
])
def test_file_stem(name, stem):
    assert file_stem(name) == stem


def all_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


@pytest.mark.parametrize("name", ["../../x", "sub/dir", "/etc/evil", ".."])
def test_hostile_names_write_only_inside_the_given_directories(cli, tmp_path, name):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    scen = work / "s.toml"
    scen.write_text(f'name = "{name}"\nreplications = 1\n[workload]\nclients = 2\nexchanges = 2\n')
    proc = cli("run", scen, "--pcap", "out/pcap", "--trace", "out/trace", "--no-db", cwd=work)
    assert proc.returncode == 0, proc.stderr
    files = all_files(tmp_path)
    outputs = [f for f in files if f not in ("a/b/s.toml",)]
    assert len(outputs) == 2, files  # one pcap, one trace CSV
    assert all(f.startswith(("a/b/out/pcap/", "a/b/out/trace/")) for f in outputs), files
    for f in outputs:
        base = os.path.basename(f)
        assert not base.startswith(".") and "/" not in base
