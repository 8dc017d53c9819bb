"""Tidy data: dotted parameter columns in frames and exports, --where, and the CLI around them
(plot, export, completion, output formats, stdout carrying only the requested output)."""

import json

import pandas as pd
import pytest

import coaplab
from coaplab.describe.scenario import resolve
from coaplab.errors import CoaplabError
from coaplab.execute.tidy import flatten, select, varying

SWEEP = {"name": "tidy", "replications": 2, "trace": True, "workload": {"clients": 2, "exchanges": 3},
         "sweep": {"coap.cc": ["default", "cocoa"], "coap.nstart": [1, 2]}}
TCP = {"name": "tcpseq", "replications": 1, "trace": True, "link": {"buffer_bytes": 14100},
       "workload": {"kind": "firmware", "clients": 1, "resource_bytes": 3000},
       "coap": {"transport": "tcp", "cc": "newreno"}}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    db = tmp_path_factory.mktemp("tidy") / "t.duckdb"
    udp = coaplab.run(SWEEP, jobs=2, db=db)
    tcp = coaplab.run(TCP, jobs=1, db=db)
    return db, udp, tcp


def test_flatten_and_varying():
    a = resolve({"coap": {"cc": "cocoa"}})
    b = resolve({"coap": {"cc": "fasor", "nstart": 2}})
    t = resolve({"coap": {"transport": "tcp", "cc": "newreno"}})
    assert flatten(a)["coap.cc"] == "cocoa" and flatten(a)["link.path_delay_ms"] == "[10.0, 20.0]"
    assert varying([a, b]) == ["coap.cc", "coap.nstart"]
    # tcp.* exist only in the TCP configuration: the transport already tells them apart.
    assert varying([a, t]) == ["coap.transport", "coap.cc"]


def test_flatten_client_populations():
    # The resolved form of [[group]] (docs/experiments.md): a list of fully resolved groups;
    # flattened under the keys their sweeps use.
    config = {"name": "mixed", "coap": {"cc": "cocoa"}, "network": {"kind": "star"},
              "group": [{"name": "legacy", "workload": {"clients": 200}, "coap": {"cc": "default"}},
                        {"name": "safe", "workload": {"clients": 200}, "coap": {"cc": "cocoa-fb2"}}]}
    flat = flatten(config)
    assert flat["group.legacy.coap.cc"] == "default" and flat["group.safe.workload.clients"] == 200
    assert flat["network.kind"] == "star" and "group" not in flat
    other = {**config, "group": [config["group"][0], {**config["group"][1], "coap": {"cc": "fasor"}}]}
    assert varying([config, other]) == ["group.safe.coap.cc"]
    assert select({"a": config, "b": other}, "group.safe.coap.cc = 'fasor'") == ["b"]


def test_where_selects_by_dotted_keys():
    configs = {"a": resolve({"coap": {"cc": "cocoa"}, "link": {"buffer_bytes": 2500}}),
               "b": resolve({"coap": {"cc": "fasor"}, "link": {"buffer_bytes": 28200}}),
               "c": resolve({"coap": {"cc": "default"}, "link": {"buffer_bytes": 28200}})}
    assert select(configs, "coap.cc in ('cocoa','fasor')") == ["a", "b"]
    assert select(configs, "link.buffer_bytes > 2500 and coap.cc <> 'fasor'") == ["c"]
    assert select(configs, "name = 'scenario'") == ["a", "b", "c"]
    # A string literal that looks like a key stays a string.
    assert select(configs, "coap.cc = 'coap.cc'") == []
    assert select(configs, None) == ["a", "b", "c"]
    with pytest.raises(CoaplabError, match=r"^--where: 'coap\.ccc' is not a configuration key \(did you mean coap\.cc"):
        select(configs, "coap.ccc = 'cocoa'")
    with pytest.raises(CoaplabError, match=r"^--where: .* is not a condition .*expected SQL over dotted keys"):
        select(configs, "coap.cc = = 1")


def test_result_frames_carry_the_varying_parameters(study):
    _, udp, _ = study
    clients = udp.clients_frame()
    assert list(clients.columns[:5]) == ["config_id", "coap.cc", "coap.nstart", "replication", "client"]
    # 4 configurations × 2 replications × 2 clients.
    assert len(clients) == 16
    assert clients.groupby(["coap.cc", "coap.nstart"]).size().tolist() == [4, 4, 4, 4]
    runs = udp.runs_frame()
    assert list(runs.columns[:4]) == ["config_id", "coap.cc", "coap.nstart", "replication"] and len(runs) == 8


def test_export_tables(study, tmp_path):
    db, udp, tcp = study
    paths = coaplab.execute.tidy.export(db, tmp_path, "parquet")
    assert [p.name for p in paths] == ["configs.parquet", "runs.parquet", "clients.parquet", "traces.parquet",
                                       "queue.parquet", "throughput.parquet", "time_sequence.parquet",
                                       "cc_state.parquet"]
    t = {p.stem: pd.read_parquet(p) for p in paths}
    # Across both scenarios: name, transport, algorithm, NSTART, buffer, workload ... vary.
    for name, frame in t.items():
        assert frame.columns[0] == "config_id"
        assert {"config.name", "coap.cc", "coap.nstart", "coap.transport", "link.buffer_bytes"} <= set(frame.columns), name
    assert len(t["configs"]) == 5 and len(t["runs"]) == 4 * 2 + 1 and len(t["clients"]) == 4 * 2 * 2 + 1
    seq = t["time_sequence"]
    assert set(seq["coap.transport"]) == {"tcp"} and set(seq.event) >= {"send", "ack"}
    assert list(seq.columns[-8:]) == ["replication", "client", "connection", "time_s", "direction", "event", "seq", "length"]
    # The same rows as the run's own frame.
    assert len(seq) == len(tcp.time_sequence_frame())
    assert t["cc_state"].empty  # New Reno has no state rows (BBR's: tests/test_bbr_state.py)
    # Every run is traced: both directions' queue change-points and throughput bins, the same
    # rows as the runs' own frames.
    for table, frame in (("queue", "queue_frame"), ("throughput", "throughput_frame")):
        assert set(t[table].direction) == {"up", "down"}, table
        assert len(t[table]) == len(getattr(udp, frame)()) + len(getattr(tcp, frame)()) > 0, table
    assert list(t["queue"].columns[-5:]) == ["replication", "direction", "link", "time_s", "queue_bytes"]
    # --where: only the matching configurations, and only their varying keys as columns.
    csv = coaplab.execute.tidy.export(db, tmp_path / "csv", "csv", where="coap.cc = 'cocoa'")
    clients = pd.read_csv(csv[2])
    assert list(clients.columns[:4]) == ["config_id", "coap.nstart", "replication", "client"]
    assert len(clients) == 2 * 2 * 2


def test_plot_command(study, cli, tmp_path, capsys):
    from coaplab.cli import main

    db, _, _ = study
    out = cli("plot", "--db", db, "--kind", "fct", "--x", "coap.nstart", "--hue", "coap.cc",
              "--where", "name = 'tidy'", "--out", tmp_path / "f.pdf")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "f.pdf").read_bytes().startswith(b"%PDF") and out.stdout.strip() == str(tmp_path / "f.pdf")
    # The other kinds and the errors in-process (the same main() the command runs).
    for kind, ext in (("time-sequence", "svg"), ("rto", "png"), ("histogram", "png"), ("unnecessary", "svg")):
        assert main(["plot", "--db", str(db), "--kind", kind, "--out", str(tmp_path / f"{kind}.{ext}")]) == 0, kind
        assert (tmp_path / f"{kind}.{ext}").stat().st_size > 1000
    capsys.readouterr()
    bad = [(["--out", tmp_path / "f.jpg"], "--out: "),
           (["--out", tmp_path / "f.png", "--width", "huge"], "--width: 'huge' is not allowed"),
           (["--out", tmp_path / "f.png", "--hue", "coap.x"], "--hue: 'coap.x' is not a configuration key"),
           (["--out", tmp_path / "f.png", "--where", "coap.cc = 'x'"], "--where: \"coap.cc = 'x'\" matches none"),
           (["--out", tmp_path / "f.png", "--client", "1"], "--client: only for --kind time-sequence or rto"),
           (["--out", tmp_path / "f.png", "--kind", "rto", "--config", "nope"], "--config: 'nope' is not")]
    for args, message in bad:
        code = main(["plot", "--db", str(db), *map(str, args)])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("coaplab: error: " + message), (args, err)
        assert len(err.strip().splitlines()) == 1


def test_export_and_report_cli_where(study, cli, tmp_path):
    db, _, _ = study
    out = cli("export", "--db", db, "--out", tmp_path / "e", "--format", "csv", "--where", "coap.transport = 'tcp'")
    assert out.returncode == 0, out.stderr
    assert len(pd.read_csv(tmp_path / "e" / "runs.csv")) == 1
    out = cli("report", "--db", db, "--out", tmp_path / "r", "--where", "coap.cc = 'cocoa'")
    assert out.returncode == 0, out.stderr
    assert "2 configurations matching" in (tmp_path / "r" / "index.html").read_text()


def test_run_json_stdout_is_only_json(cli, tmp_path):
    scen = tmp_path / "s.toml"
    scen.write_text('replications = 1\n[workload]\nclients = 1\nexchanges = 2\n')
    out = cli("run", scen, "--no-db", "--format", "json")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["replications"] == 1


def test_completion_and_help(cli):
    out = cli("completion", "bash")
    assert out.returncode == 0 and "coaplab" in out.stdout and "plot" in out.stdout and "--where" in out.stdout
    for command in ("run", "export", "replay", "calibrate", "report", "plot", "reproduce", "completion"):
        text = cli(command, "--help").stdout
        assert "examples:\n  coaplab " + command in text, command


def test_output_formats():
    from coaplab.suites.calibration import render

    rows = [{"figure": "f", "column": "cocoa", "stat": "p50", "published": 2.0, "simulated": 2.5, "diff": 0.25,
             "approximate": False}]
    assert json.loads(render(rows, "json")) == rows[0]
    assert render(rows, "csv") == "figure,column,stat,published,simulated,diff,approximate\nf,cocoa,p50,2.0,2.5,0.25,False\n"
    assert "| f | cocoa | p50 | 2.000 | 2.500 | +25.00 % |" in render(rows, "markdown")


def test_reproduce_json(cli):
    out = cli("reproduce", "udp-1client-continuous", "--no-db", "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    # Two algorithms × the five published statistics (p10, p25, p50, p75, p90).
    assert len(rows) == 10 and {r["stat"] for r in rows} == {"p10", "p25", "p50", "p75", "p90"}
    for r in rows:
        assert r["experiment"] == "udp-1client-continuous" and r["published"] > 0
        assert r["diff"] == pytest.approx(r["simulated"] / r["published"] - 1)


def test_result_plots(study):
    _, udp, tcp = study
    fig = udp.plot_rto(replication=1, client=1)
    # The first configuration of the sweep (default, NSTART 1), labelled by what varies.
    assert fig.axes[0].get_title(loc="left") == "cc=default, nstart=1: replication 1, client 1"
    with pytest.raises(CoaplabError, match="no timer trace"):
        udp.plot_rto(client=99)
    hist = udp.plot_histogram(x="coap.nstart", hue="coap.cc")
    assert len([ax for ax in hist.axes if ax.get_visible()]) == 2  # one panel per NSTART
    assert tcp.plot_time_sequence().axes[0].get_ylabel() == "sequence number (kB)"


def test_cluster_without_the_extra_is_one_line(monkeypatch, capsys, tmp_path):
    import importlib.util

    from coaplab.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    scen = tmp_path / "s.toml"
    scen.write_text("replications = 1\n")
    assert main(["run", str(scen), "--no-db", "--cluster", "local:1"]) == 2
    err = capsys.readouterr().err
    assert err == "coaplab: error: --cluster needs Dask distributed, an optional extra: pip install 'coaplab[cluster]'\n"


def test_light_imports(tmp_path):
    # `coaplab --help` loads no runner, scenario checker, emulator driver, numpy, pandas, DuckDB
    # or matplotlib, and `run --no-db` of one client none but the first two — its bootstrap
    # intervals over 10 replications included (docs/performance.md, "Start-up").
    import subprocess
    import sys

    scen = tmp_path / "s.toml"
    scen.write_text("replications = 10\n[workload]\nclients = 1\nexchanges = 2\n")
    heavy = ("numpy", "pandas", "duckdb", "matplotlib", "pyarrow", "distributed", "coaplab.stacks.emulate")
    probe = ("import sys, contextlib, io\nfrom coaplab.cli import main\nargs = sys.argv[1:]\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
             f"print(sorted(m for m in {heavy + ('coaplab.execute.runner', 'coaplab.describe.scenario')!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", probe, "--help"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    out = subprocess.run([sys.executable, "-c", probe, "run", str(scen), "--no-db", "--no-progress"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['coaplab.describe.scenario', 'coaplab.execute.runner']", out.stdout + out.stderr


def test_udp_only_exports_carry_no_tcp_columns(study, tmp_path):
    # The clients table's tcp_* counters are NULL for UDP clients: an export of UDP
    # configurations leaves them out; with a TCP configuration among them they stay.
    db, _, _ = study
    udp = coaplab.execute.tidy.export(db, tmp_path / "udp", "csv", where="coap.transport = 'udp'")
    clients = pd.read_csv(next(p for p in udp if p.name == "clients.csv"))
    assert not [c for c in clients.columns if c.startswith("tcp_")]
    both = coaplab.execute.tidy.export(db, tmp_path / "both", "csv")
    clients = pd.read_csv(next(p for p in both if p.name == "clients.csv"))
    assert "tcp_segments_sent" in clients.columns and clients["tcp_segments_sent"].notna().any()
