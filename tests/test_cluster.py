"""Dask clusters (`--cluster`, python/coaplab/execute/cluster.py, docs/cluster.md): the runs
batched into tasks, the forms of `--cluster` and their one-line refusals, a Slurm cluster's job
script without Slurm, results identical to `--jobs 1` for any batching, a quiet stderr, and
plug-ins supervised on the workers as in the thread pool."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import coaplab
from coaplab.execute import cluster as C
from coaplab.execute.cluster import Batcher, ClusterError, ClusterSpec, parse_cluster


def runs(cid: str, n: int) -> list[tuple[str, int, str, None]]:
    return [(cid, r, "{}", None) for r in range(n)]


# --- batching ---------------------------------------------------------------------------------

def test_before_any_run_finished_a_batch_is_one_run():
    b = Batcher(runs("a", 10), target_s=1.0)
    assert [len(b.next(workers=4)) for _ in range(3)] == [1, 1, 1]
    assert len(b.pending) == 7


def test_a_batch_holds_about_the_target_of_measured_work():
    b = Batcher(runs("a", 100), target_s=1.0)
    b.observe("a", 0.25)
    # 100 runs left at 0.25 s: the share 100 × 0.25 / (2 in flight × 1 worker) = 12.5 s is above
    # the 1 s target, so a batch is 1 / 0.25 = 4 runs (0.25 is exact in binary: no rounding).
    assert [t[1] for t in b.next(workers=1)] == [0, 1, 2, 3]
    assert len(b.pending) == 96


def test_a_configuration_not_measured_yet_counts_as_the_costliest_seen():
    b = Batcher(runs("c", 10), target_s=1.0)
    b.observe("a", 0.25)
    b.observe("b", 0.5)
    # c is unmeasured: each run counts 0.5 s (b's mean, the larger), so 1 s holds 2 runs.
    assert b.estimate("c") == 0.5 and len(b.next(workers=1)) == 2


def test_a_batch_spans_configurations_and_estimates_each_by_its_own_mean():
    b = Batcher(runs("a", 2) + runs("b", 10), target_s=1.0)
    b.observe("a", 0.125)
    b.observe("b", 0.25)
    # 12 runs left, mean (0.125 + 0.25) / 2 = 0.1875 s: share 12 × 0.1875 / 2 = 1.125 s > 1 s.
    # a, a: 0.25 s; then b's at 0.25 s each: 0.5, 0.75, 1.0; the next would make 1.25 s.
    batch = b.next(workers=1)
    assert [t[0] for t in batch] == ["a", "a", "b", "b", "b"]


def test_the_last_runs_spread_over_the_workers_but_not_below_the_least_task():
    b = Batcher(runs("a", 8), target_s=1.0)
    b.observe("a", 0.125)
    # 8 runs × 0.125 s over 2 in flight × 4 workers: 0.125 s each, one run per task.
    assert len(b.next(workers=4)) == 1
    b = Batcher(runs("a", 100), target_s=1.0)
    b.observe("a", 2 ** -10)  # 0.9765625 ms, exact in binary: the sums below are exact
    # 100 × 2^-10 s / (2 × 4) = 12.2 ms is below MIN_TASK_S = 50 ms: a task takes the runs that
    # fit in 50 ms, 51 (51 × 2^-10 = 49.8 ms; 52 would be 50.8 ms).
    assert C.MIN_TASK_S == 0.05
    assert len(b.next(workers=4)) == 51
    assert len(b.next(workers=4)) == 49 and not b.pending and b.next(workers=4) == []


def test_a_run_costlier_than_the_target_goes_alone():
    b = Batcher(runs("a", 5), target_s=1.0)
    b.observe("a", 3.0)
    assert len(b.next(workers=1)) == 1


# --- --cluster forms --------------------------------------------------------------------------

def test_local_ssh_and_address_forms():
    assert parse_cluster("local:3") == ClusterSpec("local", workers=3)
    assert parse_cluster("ssh:head,node1,node2") == ClusterSpec("ssh", hosts=["head", "node1", "node2"])
    assert parse_cluster("tcp://10.0.0.1:8786") == ClusterSpec("address", address="tcp://10.0.0.1:8786")
    assert parse_cluster("head:8786") == ClusterSpec("address", address="head:8786")


@pytest.mark.parametrize("value, says", [
    ("local:0", "local:N with N >= 1"), ("local:x", "local:N with N >= 1"), ("local:", "local:N with N >= 1"),
    ("ssh:head", "ssh:SCHEDULER_HOST,WORKER_HOST"), ("ssh:head,,n2", "no empty names"),
    ("ssh:", "ssh:SCHEDULER_HOST,WORKER_HOST"), ("nonsense", "expected local:N, slurm:FILE.toml"),
    ("", "expected local:N"), ("slurm:/nonexistent/x.toml", "cannot read"),
])
def test_values_that_are_not_allowed_name_what_is(value, says):
    with pytest.raises(ClusterError, match=None) as e:
        parse_cluster(value)
    assert says in str(e.value) and "\n" not in str(e.value)


SLURM_TOML = '''jobs = 4
cores = 1
processes = 1
memory = "2GB"
walltime = "02:00:00"
queue = "normal"
account = "myproject"
job_script_prologue = ["source /shared/coaplab/.venv/bin/activate"]
'''


def test_a_slurm_file_gives_the_job_script_sbatch_runs(tmp_path):
    pytest.importorskip("dask_jobqueue")
    f = tmp_path / "slurm.toml"
    f.write_text(SLURM_TOML)
    spec = parse_cluster(f"slurm:{f}")
    assert spec.kind == "slurm" and spec.workers == 4 and "jobs" not in spec.options
    cluster = C.make_jobqueue_cluster(spec)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    lines = script.splitlines()
    # The directives dask-jobqueue writes (dask_jobqueue/slurm.py, SLURMJob.__init__: "#SBATCH -p
    # %s" for queue, "-A %s" account, "-n 1", "--cpus-per-task=%d" cores, "--mem=%s" memory
    # rounded up to G, "-t %s" walltime), then the prologue, then one worker of one thread.
    for line in ("#SBATCH -p normal", "#SBATCH -A myproject", "#SBATCH -n 1", "#SBATCH --cpus-per-task=1",
                 "#SBATCH --mem=2G", "#SBATCH -t 02:00:00", "source /shared/coaplab/.venv/bin/activate"):
        assert line in lines, script
    # Dask reads DASK_* variables into its configuration (docs.dask.org, "Configuration"): the
    # workers may start a plug-in's supervised process.
    assert "export DASK_DISTRIBUTED__WORKER__DAEMON=False" in lines
    worker = lines[-1]
    assert "distributed.cli.dask_worker" in worker and "--nthreads 1" in worker and "--nanny" in worker
    assert lines.index("source /shared/coaplab/.venv/bin/activate") < len(lines) - 1


def test_a_pbs_file_gives_pbs_directives(tmp_path):
    pytest.importorskip("dask_jobqueue")
    f = tmp_path / "pbs.toml"
    f.write_text('jobs = 2\ncores = 1\nmemory = "2GB"\nwalltime = "01:00:00"\nqueue = "workq"\n')
    cluster = C.make_jobqueue_cluster(parse_cluster(f"pbs:{f}"))
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    # dask_jobqueue/pbs.py, PBSJob.__init__: "#PBS -q %s", "#PBS -l walltime=%s".
    assert "#PBS -q workq" in script and "#PBS -l walltime=01:00:00" in script


@pytest.mark.parametrize("text, says", [
    ("cores = 1\n", "jobs = None is not allowed"),
    ("jobs = 0\n", "jobs = 0 is not allowed"),
    ("jobs = \"4\"\n", "jobs = '4' is not allowed"),
    ("jobs = 2\ncorse = 1\n", "unknown key 'corse'; allowed: jobs, "),
    ("jobs = 2\nscheduler = 1\n", "unknown key 'scheduler'"),
    ("jobs = [\n", "is not valid TOML"),
    ("jobs = 1\njob_script_prologue = \"source x\"\n", "expected a list of shell lines"),
])
def test_a_bad_slurm_file_is_one_line(tmp_path, text, says):
    pytest.importorskip("dask_jobqueue")
    f = tmp_path / "slurm.toml"
    f.write_text(text)
    with pytest.raises(ClusterError) as e:
        parse_cluster(f"slurm:{f}")
    assert says in str(e.value) and "\n" not in str(e.value)


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "coaplab.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300, check=False)


def test_bad_cluster_values_on_the_command_line_are_one_line_exit_2(tmp_path):
    pytest.importorskip("distributed")
    scen = tmp_path / "s.toml"
    scen.write_text("replications = 1\n[workload]\nclients = 1\nexchanges = 1\n")
    bad = tmp_path / "bad.toml"
    bad.write_text("jobs = 1\nqueu = 'x'\n")
    for value, says in (("local:two", "local:N with N >= 1"), ("ssh:onlyone", "ssh:SCHEDULER_HOST"),
                        ("slurm:/nonexistent.toml", "cannot read"), ("what", "expected local:N"),
                        (f"slurm:{bad}", "unknown key 'queu'")):
        p = cli("run", scen, "--no-db", "--no-progress", "--cluster", value)
        assert p.returncode == 2, (value, p.stderr)
        assert p.stderr.count("\n") == 1 and p.stderr.startswith("coaplab: error: --cluster") and says in p.stderr, p.stderr
    p = cli("reproduce", "udp-1client-continuous", "--no-db", "--no-progress", "--cluster", "local:-1")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "local:N with N >= 1" in p.stderr, p.stderr


# --- runs on a local cluster ------------------------------------------------------------------

def strip(summaries):
    return [{k: v for k, v in s.items() if k != "wall_s"} for s in summaries]


def test_batches_spanning_configurations_give_the_results_of_jobs_1(monkeypatch):
    pytest.importorskip("distributed")
    sizes: list[list[str]] = []
    real = Batcher.next

    def recording(self, workers):
        batch = real(self, workers)
        sizes.append([t[0] for t in batch])
        return batch

    monkeypatch.setattr(Batcher, "next", recording)
    scen = {"name": "batched", "seed": 3, "replications": 12, "link": {"errors": "high"},
            "workload": {"kind": "random", "clients": 3, "exchanges": 4},
            "sweep": {"coap.cc": ["default", "cocoa", "fasor"], "workload.clients": [1, 3]}}
    local = coaplab.run(scen, jobs=1).summaries
    dask = coaplab.run(scen, cluster="local:2").summaries
    assert strip(dask) == strip(local)
    assert sum(map(len, sizes)) == 6 * 12  # every run once
    assert any(len(set(b)) > 1 for b in sizes)  # a batch of runs of several configurations
    assert len(sizes) < 6 * 12  # fewer tasks than runs


def test_a_cluster_object_or_client_is_used_and_left_open(tmp_path):
    distributed = pytest.importorskip("distributed")
    scen = {"name": "obj", "seed": 2, "replications": 4, "workload": {"clients": 2, "exchanges": 3},
            "sweep": {"coap.cc": ["default", "cocoa"]}}
    local = coaplab.run(scen, jobs=1).summaries
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as lc:
        assert strip(coaplab.run(scen, cluster=lc).summaries) == strip(local)
        with distributed.Client(lc) as client:
            assert strip(coaplab.run(scen, cluster=client, db=tmp_path / "c.duckdb").summaries) == strip(local)
            assert client.status == "running"  # the caller's client: not closed
        assert lc.status.name == "running"


def test_a_local_cluster_leaves_stderr_empty(tmp_path):
    pytest.importorskip("distributed")
    scen = tmp_path / "s.toml"
    scen.write_text('name = "quiet"\nreplications = 20\n[workload]\nclients = 2\nexchanges = 5\n'
                    '[sweep]\n"coap.cc" = ["default", "cocoa", "fasor"]\n')
    for _ in range(2):  # Dask's shut-down messages came now and then, not every time
        p = cli("run", scen, "--no-db", "--no-progress", "--format", "json", "--cluster", "local:2")
        assert p.returncode == 0, p.stderr
        assert p.stderr == ""  # no "heartbeat_worker … Stream is closed", no INFO lines
        assert len(p.stdout.splitlines()) == 3


def test_a_plugin_on_a_cluster_is_supervised(tmp_path):
    pytest.importorskip("distributed")
    (tmp_path / "ends.py").write_text(
        "import os\nimport coaplab\n\n"
        "class Algo(coaplab.Algorithm):\n"
        "    def on_exchange_start(self, now, outstanding, rng):\n"
        "        os._exit(3)\n")
    spec = f"python:{tmp_path / 'ends.py'}:Algo"
    scen = tmp_path / "s.toml"
    scen.write_text(f'name = "plug"\nreplications = 2\n[workload]\nclients = 1\nexchanges = 2\n'
                    f'[sweep]\n"coap.cc" = ["default", {json.dumps(spec)}]\n')
    # In its supervised process the plug-in's exit is its runs' one-line failure (as with
    # --jobs, tests/test_plugins_hostile.py); unsupervised it would end the Dask worker itself.
    p = cli("run", scen, "--no-db", "--no-progress", "--format", "json", "--cluster", "local:1", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr and f"{spec}: the algorithm's process exited with status 3" in p.stderr, p.stderr
    assert [json.loads(line)["config"]["coap"]["cc"] for line in p.stdout.splitlines()] == ["default"]


def test_the_cluster_module_imports_no_dask_until_used():
    code = "import sys, coaplab.execute.cluster; print('distributed' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_extras_name_dask_jobqueue_and_asyncssh():
    import tomllib

    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert any(r.startswith("dask-jobqueue") for r in extras["cluster"])
    assert any(r.startswith("asyncssh") for r in extras["ssh"])


def dies(config_json: str, replication: int, pcap: str | None) -> str:
    """A runner that ends the Dask worker's process (as an unsupervised crash would)."""
    import os

    os._exit(9)


def test_a_worker_lost_for_good_is_one_line_exit_1(tmp_path):
    pytest.importorskip("distributed")
    from coaplab.errors import ResourceError

    scen = {"name": "lost", "replications": 2, "workload": {"clients": 1, "exchanges": 1}}
    with pytest.raises(ResourceError) as e:
        coaplab.run(scen, cluster="local:1", runner=dies, db=tmp_path / "l.duckdb")
    # Dask retries a task whose worker died, then gives up (KilledWorker, distributed.yaml:
    # scheduler.allowed-failures); the batch was the first run alone (nothing measured yet).
    assert str(e.value).startswith("--cluster: a batch of 1 runs failed on the cluster (KilledWorker")
    assert "\n" not in str(e.value) and ResourceError.exit_code == 1
