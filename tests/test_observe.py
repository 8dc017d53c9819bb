"""RFC 7641 Observe (`workload.kind = "observe"`, docs/model.md "Observe") through the Python
front: the example runs and its summary carries the observe block; bad input is one line and
exit 2. The notifier's rules, message by message, are the Rust tests in
crates/engine/src/coap/observe.rs; the hand-computed ages on a star are
crates/engine/tests/observe.rs."""

import json
import subprocess
import sys

import pytest

import coaplab
from coaplab.analyse.observe import pool_observe


def _run(*args):
    return subprocess.run([sys.executable, "-m", "coaplab.cli", "run", "--no-db", "--no-progress", *args],
                          check=False, capture_output=True, text=True)


def test_the_example_runs_and_reports_the_observe_block():
    p = _run("examples/observe-star.toml", "--format", "json")
    assert p.returncode == 0, p.stderr
    summaries = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    assert [s["config"]["coap"]["cc"] for s in summaries] == ["default", "cocoa", "basic-rto"]
    o = summaries[1]["observe"]
    # 20 observers, a value every 5 s for 600 s: at most 120 values each (the first at the
    # registration's arrival, a fraction of a second in).
    assert 0 < o["notifications_generated"] <= 2 * 20 * 120
    assert 0 < o["notification_delivered_fraction"] < 1  # the `high` error preset loses some
    assert o["notifications_delivered"] == o["notification_age_count"]
    assert o["notification_age_p50_s"] <= o["notification_age_p95_s"] <= o["notification_age_p99_s"] \
        <= o["notification_age_max_s"]
    text = _run("examples/observe-star.toml")
    assert text.returncode == 0 and "notification_delivered_fraction" in text.stdout, text.stderr


def test_a_lossless_star_delivers_every_value():
    """One observer on the loss-free reference link, a value every 10 s for 100 s: 10 values
    (the 11th would come at 100.2 s, past the deadline), all delivered."""
    raw = {"workload": {"kind": "observe", "clients": 1, "start_spread_s": 0.0, "duration_s": 100.0,
                        "notify_period_s": 10.0}, "coap": {"cc": "default"}}
    [s] = coaplab.run(raw, jobs=1, db=None).summaries
    o = s["observe"]
    assert (o["notifications_generated"], o["notifications_delivered"]) == (10, 10)
    assert o["notification_delivered_fraction"] == 1.0
    assert (o["notifications_superseded"], o["reregistrations"]) == (0, 0)


@pytest.mark.parametrize(("workload", "key"), [
    ('kind = "observe"\nnotify_period_s = 5.0\n', "workload.duration_s"),
    ('kind = "observe"\nduration_s = 60.0\nnotify_period_s = 5.0\nnotify_rate_per_s = 1.0\n', "workload.notify_period_s"),
    ('kind = "observe"\nduration_s = 60.0\nnotify_period_s = 5.0\nnotify = "x"\n', "workload.notify"),
    ('kind = "continuous"\nnotify_period_s = 5.0\n', "workload.notify_period_s"),
])
def test_bad_observe_input_is_one_line_exit_2(tmp_path, workload, key):
    f = tmp_path / "s.toml"
    f.write_text(f"[workload]\n{workload}")
    p = _run(str(f))
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and key in p.stderr, p.stderr


def test_the_tcp_example_runs_and_reports_the_observe_block():
    """examples/observe-tcp.toml: Observe over CoAP over TCP (RFC 8323 §7). Every value is the
    registration's response (one per observer: 20 × 2 replications), written to TCP, or
    superseded while unsent bytes waited (docs/model.md "Observe", "Over TCP"); no CON/NON."""
    p = _run("examples/observe-tcp.toml", "--format", "json")
    assert p.returncode == 0, p.stderr
    summaries = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    assert [s["config"]["coap"]["cc"] for s in summaries] == ["newreno", "cubic", "bbr"]
    for s in summaries:
        o = s["observe"]
        assert 0 < o["notifications_generated"] <= 2 * 20 * 120
        assert o["notifications_generated"] == 2 * 20 + o["notifications_sent"] + o["notifications_superseded"]
        assert (o["notifications_con"], o["notifications_non"], o["notification_retransmissions"]) == (0, 0, 0)
        assert o["notifications_delivered"] == o["notification_age_count"] <= o["notifications_generated"]
    text = _run("examples/observe-tcp.toml")
    assert text.returncode == 0 and "notification_delivered_fraction" in text.stdout, text.stderr


@pytest.mark.parametrize(("workload", "key"), [
    ('notify = "non"\n', "workload.notify"),
    ('notify = "non-con"\ncon_every_s = 60.0\n', "workload.notify"),
])
def test_message_types_over_tcp_are_refused_in_one_line(tmp_path, workload, key):
    """Over a reliable transport notifications are neither CON nor NON (RFC 8323 §7.1)."""
    f = tmp_path / "s.toml"
    f.write_text('[workload]\nkind = "observe"\nduration_s = 60.0\nnotify_period_s = 5.0\n' + workload
                 + '[coap]\ntransport = "tcp"\ncc = "newreno"\n')
    p = _run(str(f))
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and key in p.stderr and "RFC 8323 §7.1" in p.stderr, p.stderr


def test_pooling_over_replications():
    """Two replications: counts add, the fraction and the mean age are ratios of sums
    ((3 + 1) / (4 + 2) and (0.9 + 0.5) / (3 + 1)), percentiles are averaged, the max is the largest."""
    a = {"notifications_generated": 4, "notifications_sent": 3, "notifications_con": 3, "notifications_non": 0,
         "notification_retransmissions": 0, "notifications_delivered": 3, "notifications_superseded": 1,
         "observers_removed": 0, "reregistrations": 0, "notification_age_count": 3, "notification_age_sum_s": 0.9,
         "notification_age_p50_s": 0.3, "notification_age_p95_s": 0.4, "notification_age_p99_s": 0.4,
         "notification_age_max_s": 0.4}
    b = {**a, "notifications_generated": 2, "notifications_delivered": 1, "notification_age_count": 1,
         "notification_age_sum_s": 0.5, "notification_age_p50_s": 0.5, "notification_age_max_s": 0.5}
    o = pool_observe([a, None, b])
    assert o is not None
    assert o["notifications_generated"] == 6 and o["notifications_delivered"] == 4
    assert o["notification_delivered_fraction"] == pytest.approx(4 / 6)
    assert o["notification_age_mean_s"] == pytest.approx(1.4 / 4)
    assert o["notification_age_p50_s"] == pytest.approx(0.4)
    assert o["notification_age_max_s"] == 0.5
    assert pool_observe([None, None]) is None


def test_groups_report_observe_per_population():
    """An observe population beside a continuous one: only the observers' group, and the run,
    carry the observe block; the run's block is the observers' (the only ones)."""
    raw = {"workload": {"start_spread_s": 0.0}, "coap": {"cc": "default"},
           "group": [{"name": "obs", "clients": 2, "workload": {"kind": "observe", "duration_s": 60.0,
                                                               "notify_period_s": 10.0}},
                     {"name": "bg", "clients": 1, "workload": {"kind": "continuous", "exchanges": 5}}]}
    [s] = coaplab.run(raw, jobs=1, db=None).summaries
    assert "observe" not in s["groups"]["bg"]
    assert s["groups"]["obs"]["observe"] == s["observe"]
    # 2 observers × 6 values (at 0.2 + 10 k s, k = 0 … 5, before 60 s).
    assert s["observe"]["notifications_generated"] == 12
