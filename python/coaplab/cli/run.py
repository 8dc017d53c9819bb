"""``coaplab run``: run a scenario file (sweep x replications) and print summaries."""

from __future__ import annotations

import argparse
import sys

from ..errors import CoaplabError
from .common import (
    DIFF_BY_HELP,
    add_plugin_timeout,
    apply_plugin_timeout,
    db_arg,
    need_distributed,
    positive_int,
    sub_parser,
)

NAME = "run"


def add_parser(sub) -> argparse.ArgumentParser:
    run = sub_parser(sub, NAME, "run a scenario file (sweep x replications) and print summaries",
                    "  coaplab run examples/quick.toml\n"
                    "  coaplab run examples/bufferbloat.toml --jobs 2 --format json > summaries.jsonl\n"
                    "  coaplab run examples/tcp-firmware.toml --trace out/traces --pcap out/pcap\n"
                    "  coaplab run examples/bufferbloat.toml --cluster local:4   (needs coaplab[cluster])")
    run.add_argument("scenario", metavar="SCENARIO.toml", help="the scenario file, e.g. examples/quick.toml")
    run.add_argument("--jobs", type=positive_int, default=None, help="parallel runs, e.g. --jobs 2 (default: number of cores)")
    run.add_argument("--format", choices=("table", "json"), default="table",
                     help="table: one readable block per configuration (default); json: JSON Lines, one object per configuration")
    run.add_argument("--pcap", metavar="DIR", help="write one pcap per replication into DIR, e.g. --pcap out/pcap "
                     "(stored runs without one are run again: results are identical); the estimated size is "
                     "printed first, and past 200 MB nothing is written without --yes or --max-output-mb")
    run.add_argument("--trace", metavar="DIR", help="write traces, one CSV per replication, into DIR: per-client timer / RTO traces (UDP) "
                     "or per-connection time-sequence traces (TCP), with a second CSV per replication of BBR's state "
                     "(mode, BtlBw, RTprop, pacing rate, cwnd); on an nbiot or ltem cell also device 0's radio states over time "
                     "(-cell-timeline.csv) (stored runs without one are run again)")
    run.add_argument("--max-output-mb", type=float, metavar="MB", default=None,
                     help="--pcap: the largest estimated output written without asking (default: 200)")
    run.add_argument("--yes", action="store_true", help="--pcap: write the pcaps however large the estimate")
    run.add_argument("--no-progress", action="store_true", help="no progress output on stderr")
    run.add_argument("--db", metavar="PATH", default=None,
                     help="results database: every finished run is stored at once, stored runs are skipped (default: ./coaplab.duckdb)")
    run.add_argument("--no-db", action="store_true", help="do not store results")
    run.add_argument("--cluster", metavar="WHERE",
                     help="run on a Dask cluster: local:N (N worker processes here), slurm:FILE.toml or pbs:FILE.toml "
                          "(batch jobs, dask-jobqueue), ssh:HOST1,HOST2,… or a scheduler address tcp://host:8786 "
                          "(needs pip install 'coaplab[cluster]'; docs/cluster.md)")
    run.add_argument("--diff-by", metavar="KEY", help=DIFF_BY_HELP)
    add_plugin_timeout(run)
    return run


def main(args) -> int:
    from ..present.output import json_lines, table  # lazy: per command (start-up)
    from ..present.result import run_scenario  # lazy: per command (start-up)


    apply_plugin_timeout(args)
    if args.no_db and args.db is not None:
        raise CoaplabError("--db and --no-db exclude each other")
    if args.cluster is not None and args.jobs is not None:
        raise CoaplabError("--jobs and --cluster exclude each other (the cluster decides the parallelism)")
    if args.cluster is not None:
        need_distributed()
    if args.max_output_mb is not None and not args.max_output_mb > 0:
        raise CoaplabError(f"--max-output-mb: {args.max_output_mb:g} is out of range; expected a size in MB > 0")
    if (args.max_output_mb is not None or args.yes) and args.pcap is None:
        raise CoaplabError("--max-output-mb and --yes belong to --pcap; add --pcap DIR or drop them")
    from ..execute.runner import MAX_OUTPUT_MB  # lazy: per command (start-up)

    limit = None if args.yes else (args.max_output_mb or MAX_OUTPUT_MB)
    db = None if args.no_db else db_arg(args)
    scenario = args.scenario
    if args.diff_by is not None:  # a bad key is refused before anything runs
        from ..describe.scenario import load_scenario  # lazy: per command (start-up)
        from ..present.compare import check_key  # lazy: per command (start-up)

        scenario = load_scenario(args.scenario)
        check_key(scenario.configurations(), args.diff_by)
    result = run_scenario(scenario, jobs=args.jobs, progress=not args.no_progress, pcap_dir=args.pcap,
                          trace_dir=args.trace, db=db, cluster=args.cluster, max_output_mb=limit)
    total = sum(c["replications"] for c in result.scenario.configurations())
    if db is not None and result.executed < total and not args.no_progress:
        print(f"coaplab: {total - result.executed} of {total} runs were already stored in {db}; ran {result.executed}",
              file=sys.stderr)
    for file, n in sorted(result.superseded.items()):  # said even with --no-progress: it explains a re-run
        print(f"coaplab: {n} runs stored in {db} were of another version of {file} (its content is part of a run's "
              "identity) and are not reused", file=sys.stderr)
    if result.rerun:
        files = " and ".join(f for f, d in (("pcap", args.pcap), ("trace", args.trace)) if d is not None)
        print(f"coaplab: re-ran {result.rerun} stored runs to write their {files} files; every re-run result equals "
              "the stored one", file=sys.stderr)
    if result.summaries:
        if args.format == "json":
            sys.stdout.write(json_lines(result.summaries) + "\n")
        else:
            from ..analyse.replstats import replication_stats  # lazy: per command (start-up)

            shown = [s if "fct_replications" in s or s["replications"] < 2
                     else {**s, "fct_replications": replication_stats(result.runs[s["config_id"]])} for s in result.summaries]
            sys.stdout.write(table(shown))
        if args.diff_by is not None:
            from ..present.compare import pairwise_json, pairwise_table  # lazy: per command (start-up)

            rows = result.differences(args.diff_by)
            sys.stdout.write(pairwise_json(rows) if args.format == "json" else "\n" + pairwise_table(rows))
    if result.failures:
        stored = ("stored as failed; re-run the command to retry them" if db is not None
                  else "not stored: --no-db")
        print(f"coaplab: {len(result.failures)} of {total} runs failed ({stored}):", file=sys.stderr)
        for name, cid, rep, err in result.failures[:20]:
            print(f"  {name} [{cid}] replication {rep}: {err}", file=sys.stderr)
        if len(result.failures) > 20:
            print(f"  ... and {len(result.failures) - 20} more", file=sys.stderr)
        return 1
    return 0
