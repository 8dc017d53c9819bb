"""``coaplab bench``: benchmark the simulator (events/s, simulated s per wall s, peak memory)."""

from __future__ import annotations

import argparse
import sys

from ..errors import CoaplabError
from .common import int_list, positive_int, sub_parser

NAME = "bench"


def add_parser(sub) -> argparse.ArgumentParser:
    bench = sub_parser(sub, NAME, "benchmark the simulator (events/s, simulated s per wall s, peak memory)",
                    "  coaplab bench                           # 400 random UDP clients, infinite buffer, 20 replications\n"
                    "  coaplab bench --transport tcp\n"
                    "  coaplab bench examples/nbiot.toml --jobs 1   # any scenario of one configuration\n"
                    "  coaplab bench --suite --suite-clients 400,4000 --repetitions 7   # CPU time vs a bare heap\n")
    bench.add_argument("scenario", nargs="?", metavar="SCENARIO.toml",
                       help="benchmark this scenario (one configuration) instead of the default one")
    bench.add_argument("--jobs", type=positive_int, default=2, help="parallel runs (default 2)")
    bench.add_argument("--replications", type=positive_int, default=None, help="replications (default 20)")
    bench.add_argument("--clients", type=positive_int, default=None, help="clients (default 400)")
    bench.add_argument("--transport", choices=("udp", "tcp"), default=None,
                       help="udp: cocoa (default); tcp: CoAP over TCP with New Reno; with --suite: only this one")
    bench.add_argument("--suite", action="store_true",
                       help="the scaling suite: UDP and TCP, 1 to 10000 continuous clients, CPU time per event "
                            "against a bare binary-heap loop (needs the source checkout and cargo; docs/performance.md)")
    bench.add_argument("--suite-clients", type=int_list, metavar="N,N,...", default=None,
                       help="--suite: client counts (default 1,10,100,400,1000,4000,10000)")
    bench.add_argument("--repetitions", type=positive_int, default=5,
                       help="--suite: interleaved repetitions per configuration (min and median are printed)")
    bench.add_argument("--exchanges", type=positive_int, default=None,
                       help="--suite: exchanges per client (default max(50, 100000 / clients))")
    return bench


def main(args) -> int:
    from ..suites.bench import SUITE_CLIENTS, bench, suite  # lazy: per command (start-up)

    if args.scenario is not None:
        given = [o for o, v in (("--suite", args.suite), ("--clients", args.clients), ("--transport", args.transport),
                                ("--replications", args.replications)) if v]
        if given:
            raise CoaplabError(f"{', '.join(given)}: options of the default benchmark; SCENARIO.toml sets its own "
                               "(drop them or the scenario)")
    if args.suite:
        transports = ("udp", "tcp") if args.transport is None else (args.transport,)
        sys.stdout.write(suite(transports, args.suite_clients or SUITE_CLIENTS, args.repetitions, args.exchanges))
        return 0
    if args.suite_clients is not None or args.exchanges is not None:
        raise CoaplabError("--suite-clients and --exchanges belong to --suite; add --suite or drop them")
    scenario = None
    if args.scenario is not None:
        from ..describe.scenario import load_scenario

        scenario = load_scenario(args.scenario)
    sys.stdout.write(bench(jobs=args.jobs, replications=args.replications or 20, clients=args.clients or 400,
                           transport=args.transport or "udp", scenario=scenario))
    return 0
