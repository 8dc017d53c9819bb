"""The bit-identity set: configurations whose full results must not change under a refactor.

Every refactor or optimisation that should not change results (the network-as-data redesign,
a new event queue, ...) is checked against the stored JSON summaries (``--format json`` minus
``wall_s``), pcap hashes and trace-CSV hashes of these configurations, byte for byte
(``tests/test_golden.py``). They cover both transports, every workload kind, every error profile
and a custom chain, 1–400 clients, all twelve UDP algorithms and Californium's five, the GPRS
uplink, Contiki's MAC on a mesh and FlockLab's wiring, New Reno, BBR and CUBIC, NSTART > 1, limited uplink buffers,
link overhead, TCP options and connection failures; traces and pcaps are on.

``python tests/golden/cases.py --write`` regenerates the stored files. Run it only on a
commit whose results are known good, never to make a failing check pass.
"""

from __future__ import annotations

UDP_ALGORITHMS = (
    "default", "default-fb1", "default-fb2", "cocoa", "cocoa-s", "cocoa-fb1", "cocoa-fb2",
    "basic-rto", "linux-rto", "peakhopper-rto", "fasor", "fasor-rc",
)


CALIFORNIUM_ALGORITHMS = (
    "cocoa@californium", "cocoa-s@californium", "basic-rto@californium", "linux-rto@californium",
    "peakhopper-rto@californium",
)


def _case(name, link=None, workload=None, coap=None, tcp=None, network=None, trace=True, replications=2, seed=7):
    d = {"name": name, "seed": seed, "replications": replications, "trace": trace,
         "link": link or {}, "workload": workload or {}, "coap": coap or {}}
    if tcp is not None:
        d["tcp"] = tcp
    if network is not None:
        d["network"] = network
    return d


def cases() -> list[dict]:
    out = []
    # Every UDP algorithm: 10 continuous clients, medium errors, the 2500 B buffer.
    for i, cc in enumerate(UDP_ALGORITHMS):
        out.append(_case(f"g-alg-{cc}", link={"buffer_bytes": 2500, "errors": "medium"},
                         workload={"kind": "continuous", "clients": 10, "exchanges": 30},
                         coap={"cc": cc, "max_retransmit": 20}, trace=i % 2 == 0))
    udp = [
        _case("g-1client", workload={"clients": 1, "exchanges": 50}, coap={"cc": "default"}),
        _case("g-50-14100", link={"buffer_bytes": 14100}, workload={"clients": 50, "exchanges": 20},
              coap={"cc": "cocoa", "max_retransmit": 20}, trace=False),
        _case("g-100-2500", workload={"clients": 100, "exchanges": 10}, coap={"cc": "cocoa-fb1", "max_retransmit": 20},
              trace=False),
        _case("g-400-random-inf", link={"buffer_bytes": 1410000}, workload={"kind": "random", "clients": 400, "exchanges": 8},
              coap={"cc": "cocoa", "max_retransmit": 20}, trace=False, replications=1),
        _case("g-400-cont-inf", link={"buffer_bytes": 1410000}, workload={"clients": 400, "exchanges": 6},
              coap={"cc": "default", "max_retransmit": 20}, trace=False, replications=1),
        _case("g-400-random-high", link={"errors": "high"}, workload={"kind": "random", "clients": 400, "exchanges": 4},
              coap={"cc": "default-fb2", "max_retransmit": 4}, trace=False, replications=1),
        _case("g-burst-low", link={"errors": "low", "buffer_bytes": 28200},
              workload={"kind": "burst", "background": 10, "exchanges": 40, "burst_at_s": 20.0, "burst_clients": 20,
                        "burst_exchanges": 5},
              coap={"cc": "cocoa-fb2", "max_retransmit": 20}),
        _case("g-fw-high", link={"errors": "high"}, workload={"kind": "firmware", "clients": 1, "resource_bytes": 20000},
              coap={"cc": "cocoa", "max_retransmit": 20}),
        _case("g-fw-4-14100", link={"buffer_bytes": 14100}, workload={"kind": "firmware", "clients": 4, "resource_bytes": 12000},
              coap={"cc": "default", "max_retransmit": 20}, trace=False),
        _case("g-duration", link={"errors": "high"}, workload={"clients": 5, "duration_s": 60.0},
              coap={"cc": "linux-rto", "max_retransmit": 20}),
        _case("g-nstart4-random", link={"errors": "low"}, workload={"kind": "random", "clients": 20, "exchanges": 20, "batch": [2, 6]},
              coap={"cc": "cocoa", "nstart": 4, "max_retransmit": 20}),
        _case("g-chain", link={"errors": {"good_mean_ms": 300.0, "good_min_ms": 50.0, "good_max_ms": 900.0, "good_loss": 0.01,
                                          "bad_mean_ms": 80.0, "bad_min_ms": 20.0, "bad_max_ms": 200.0, "bad_loss": 0.6}},
              workload={"clients": 8, "exchanges": 20}, coap={"cc": "peakhopper-rto", "max_retransmit": 20}),
        _case("g-uplinkbuf", link={"uplink_buffer_bytes": 200, "link_overhead_bytes": 2, "path_delay_ms": [5.0, 30.0],
                                   "mtu": 400},
              workload={"clients": 12, "exchanges": 15, "response_bytes": 120, "start_spread_s": 1.0},
              coap={"cc": "fasor-rc", "max_retransmit": 20, "ack_timeout_s": 1.0, "ack_random_factor": 2.0,
                    "max_timer_s": 30.0}),
        _case("g-100-fasor-low", link={"errors": "low"}, workload={"clients": 100, "exchanges": 6},
              coap={"cc": "fasor", "max_retransmit": 20}, trace=False, replications=1),
    ]
    tcp = {"transport": "tcp", "cc": "newreno"}
    tcps = [
        _case("g-tcp-fw-2500", workload={"kind": "firmware", "clients": 1}, coap=tcp),
        _case("g-tcp-fw-14100-high", link={"buffer_bytes": 14100, "errors": "high"},
              workload={"kind": "firmware", "clients": 1, "resource_bytes": 30000}, coap=tcp),
        _case("g-tcp-random-medium", link={"errors": "medium"}, workload={"kind": "random", "clients": 20, "exchanges": 10},
              coap=tcp),
        _case("g-tcp-50-2500", workload={"clients": 50, "exchanges": 10}, coap=tcp, trace=False),
        _case("g-tcp-burst", link={"buffer_bytes": 28200},
              workload={"kind": "burst", "background": 5, "exchanges": 20, "burst_at_s": 10.0, "burst_clients": 10,
                        "burst_exchanges": 4}, coap=tcp),
        _case("g-tcp-400-inf", link={"buffer_bytes": 1410000}, workload={"clients": 400, "exchanges": 4}, coap=tcp,
              trace=False, replications=1),
        _case("g-tcp-options", link={"errors": "low"}, workload={"clients": 6, "exchanges": 15}, coap=tcp,
              tcp={"nagle": "classic", "limited_transmit": False, "delayed_ack_ms": 0.0, "initial_window": 2,
                   "slow_start_limit": 1}),
        _case("g-tcp-synfail", link={"errors": "high"}, workload={"kind": "random", "clients": 10, "exchanges": 6},
              coap=tcp, tcp={"syn_retries": 2, "initial_rto_s": 1.0, "max_rto_s": 8.0}),
        _case("g-tcp-duration", link={"errors": "medium"}, workload={"clients": 4, "duration_s": 40.0}, coap=tcp),
        _case("g-tcp-fw-4-28200-low", link={"buffer_bytes": 28200, "errors": "low"},
              workload={"kind": "firmware", "clients": 4, "resource_bytes": 20000}, coap=tcp, trace=False),
        # BBR (model 3): pacing, the state rows, loss recovery with Linux's in-flight count and
        # reordering detection (2500 B), no loss (infinite buffer), several clients with errors.
        _case("g-bbr-fw-2500", workload={"kind": "firmware", "clients": 1, "resource_bytes": 40000},
              coap={"transport": "tcp", "cc": "bbr"}),
        _case("g-bbr-fw-inf", link={"buffer_bytes": 1410000}, workload={"kind": "firmware", "clients": 1},
              coap={"transport": "tcp", "cc": "bbr"}),
        _case("g-bbr-10-medium", link={"errors": "medium"}, workload={"clients": 10, "exchanges": 10},
              coap={"transport": "tcp", "cc": "bbr"}),
    ]
    # Model 4: Californium's implementations, the GPRS radio-block uplink, Contiki 2.6's MAC,
    # FlockLab's wiring (servers only, one outside client per sink, phase lock, shadowing).
    model4 = [_case(f"g-alg-{cc}", link={"buffer_bytes": 2500, "errors": "medium"},
                    workload={"kind": "continuous", "clients": 10, "exchanges": 30},
                    coap={"cc": cc, "max_retransmit": 20}, trace=i % 2 == 0)
              for i, cc in enumerate(CALIFORNIUM_ALGORITHMS)]
    californium = {"ack_timeout_s": 2.0, "ack_random_factor": 1.5, "max_retransmit": 4}
    sinks = [{"x": 0.0, "y": 0.0, "role": "border-router"}, {"x": 10.0, "y": 0.0, "role": "sink"},
             {"x": 20.0, "y": 0.0, "role": "sink"}, {"x": 10.0, "y": 10.0, "role": "sink"}]
    model4 += [
        _case("g-gprs-30", network={"kind": "gprs"}, workload={"clients": 30, "duration_s": 60.0},
              coap={"cc": "cocoa", **californium}, trace=False),
        _case("g-gprs-burst", network={"kind": "gprs"},
              workload={"kind": "burst", "background": 5, "duration_s": 40.0, "burst_at_s": 10.0, "burst_clients": 5,
                        "burst_exchanges": 10, "settling_cap_s": 20.0},
              coap={"cc": "default", **californium}),
        _case("g-contiki-dumbbell", network={"kind": "dumbbell", "mac": "contiki"},
              workload={"kind": "periodic", "period_s": 2.0, "duration_s": 60.0, "request_bytes": 95},
              coap={"cc": "cocoa", "max_retransmit": 4, "nstart": 1}, trace=False),
        _case("g-flocklab-sinks", network={"kind": "file", "nodes": sinks, "outside_clients_per_sink": True,
                                           "rdc": "contikimac", "mac": "contiki", "link_loss_model": "shadowing"},
              workload={"clients": 3, "duration_s": 60.0}, coap={"cc": "default", **californium}, trace=False),
    ]
    # CUBIC (issue #23, model 4 unchanged: a new controller, no existing result moves): loss
    # recovery on the 2500 B buffer, HyStart and the cubic curve without loss (infinite buffer),
    # several clients with errors (timeouts reset it).
    cubic = [
        _case("g-cubic-fw-2500", workload={"kind": "firmware", "clients": 1, "resource_bytes": 40000},
              coap={"transport": "tcp", "cc": "cubic"}),
        _case("g-cubic-fw-inf", link={"buffer_bytes": 1410000}, workload={"kind": "firmware", "clients": 1},
              coap={"transport": "tcp", "cc": "cubic"}),
        _case("g-cubic-10-medium", link={"errors": "medium"}, workload={"clients": 10, "exchanges": 10},
              coap={"transport": "tcp", "cc": "cubic"}),
    ]
    return out + udp + tcps + model4 + cubic + round4()


def round4() -> list[dict]:
    """Model 7's cells and deployed CoAP (docs/networks.md "Cells", docs/workloads.md): NB-IoT
    NB1 / NB2 and LTE-M with coverage drawn per device, release assistance, PSM and eDRX, RRC
    resume, block errors, paging; the TR 45.820 reporting mix with exception reports; Observe
    over UDP (CON and NON) and TCP; LwM2M (registration, queue mode, reads, firmware);
    Q-Block1 / Q-Block2; DTLS and OSCORE overhead behind a NAT; NSTART 2 on a cell; CoAP over
    TCP on LTE-M. Each is small (seconds): together they pin every cell mechanism and energy
    field so that a refactor of the cell, the event core or the workloads proves it moves none."""
    nb1 = {"kind": "nbiot", "category": "nb1",
           "coupling_loss_db": {"distribution": "uniform", "low": 130.0, "high": 160.0}}
    return [
        _case("g-nbiot-nb1-rai", network={**nb1, "rai": True},
              workload={"kind": "periodic", "clients": 10, "period_s": 60.0, "duration_s": 600.0},
              coap={"cc": "default"}),
        _case("g-nbiot-nb2-psm-edrx", network={"kind": "nbiot", "category": "nb2", "coupling_loss_db": 140.0,
                                               "psm": True, "t3324_s": 20.0, "edrx_s": 20.48, "access": "up"},
              workload={"kind": "periodic", "clients": 6, "period_s": 90.0, "duration_s": 900.0},
              coap={"cc": "cocoa"}),
        _case("g-nbiot-deep-bler", network={"kind": "nbiot", "category": "nb1", "coupling_loss_db": 162.0, "bler": [0.1, 0.1, 0.2]},
              workload={"kind": "periodic", "clients": 4, "period_s": 120.0, "duration_s": 900.0},
              coap={"cc": "cocoa", "ack_timeout_s": 15.0}, replications=1),
        _case("g-nbiot-reporting", network={**nb1, "rai": True, "psm": True},
              workload={"kind": "reporting", "clients": 40, "duration_s": 7200.0, "response_bytes": 4,
                        "exception_reports_per_day": 24.0},
              coap={"cc": "cocoa"}, trace=False, replications=1),
        _case("g-nbiot-nstart2", network=nb1,
              workload={"kind": "random", "clients": 8, "exchanges": 10, "batch": [1, 4]},
              coap={"cc": "default", "nstart": 2}, replications=1),
        _case("g-ltem-rai", network={"kind": "ltem", "category": "m1",
                                     "coupling_loss_db": {"distribution": "uniform", "low": 115.0, "high": 145.0},
                                     "rai": True},
              workload={"kind": "periodic", "clients": 10, "period_s": 60.0, "duration_s": 600.0},
              coap={"cc": "default"}),
        _case("g-ltem-tcp-fw", network={"kind": "ltem", "coupling_loss_db": 120.0},
              workload={"kind": "firmware", "clients": 1, "resource_bytes": 8000},
              coap={"transport": "tcp", "cc": "newreno"}, replications=1),
        _case("g-observe-con-high", link={"errors": "high"},
              workload={"kind": "observe", "clients": 10, "duration_s": 300.0, "notify": "con",
                        "notify_period_s": 5.0, "notification_bytes": 20},
              coap={"cc": "cocoa"}),
        _case("g-observe-nbiot-non", network=nb1,
              workload={"kind": "observe", "clients": 6, "duration_s": 900.0, "notify": "non-con",
                        "con_every_s": 300.0, "notify_period_s": 30.0, "notification_bytes": 20},
              coap={"cc": "default"}, replications=1),
        _case("g-observe-tcp", link={"errors": "high"},
              workload={"kind": "observe", "clients": 10, "duration_s": 300.0, "notify_period_s": 5.0,
                        "notification_bytes": 20},
              coap={"transport": "tcp", "cc": "newreno"}),
        _case("g-lwm2m-star", workload={"kind": "lwm2m", "clients": 10, "duration_s": 7200.0, "start_spread_s": 60.0,
                                        "lwm2m_lifetime_s": 3600.0, "lwm2m_reads_per_day": 48.0,
                                        "lwm2m_notify_period_s": 900.0, "lwm2m_firmware_bytes": 8192,
                                        "lwm2m_firmware_at_s": 3600.0},
              coap={"cc": "cocoa"}, trace=False, replications=1),
        _case("g-lwm2m-nbiot-queue", network={**nb1, "rai": True},
              workload={"kind": "lwm2m", "clients": 6, "duration_s": 7200.0, "start_spread_s": 60.0,
                        "lwm2m_lifetime_s": 3600.0, "lwm2m_queue_mode": True, "lwm2m_reads_per_day": 24.0,
                        "lwm2m_notify_period_s": 1800.0},
              coap={"cc": "default"}, replications=1),
        _case("g-qblock2-high", link={"errors": "high", "mtu": 1500},
              workload={"kind": "firmware", "clients": 1, "resource_bytes": 12288},
              coap={"block_mode": "q-block"}),
        _case("g-qblock1-upload", link={"errors": "high", "mtu": 1500},
              workload={"kind": "upload", "clients": 2, "resource_bytes": 12288},
              coap={"block_mode": "q-block"}),
        _case("g-dtls-nbiot-nat", network={"kind": "nbiot", "nat_timeout_s": 30.0},
              workload={"kind": "periodic", "clients": 6, "period_s": 45.0, "duration_s": 600.0},
              coap={"cc": "default", "security": "dtls1.2"}, replications=1),
        _case("g-oscore-nbiot", network={"kind": "nbiot", "nat_timeout_s": 60.0},
              workload={"kind": "periodic", "clients": 6, "period_s": 45.0, "duration_s": 600.0},
              coap={"cc": "default", "security": "oscore"}, replications=1),
    ]


if __name__ == "__main__":
    import sys

    if "--write" not in sys.argv:
        sys.exit("usage: python tests/golden/cases.py --write   (regenerates the stored golden results)")
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from test_golden import GOLDEN, compute

    summaries, hashes = compute(Path(sys.argv[sys.argv.index("--write") + 1]) if len(sys.argv) > sys.argv.index("--write") + 1 else None)
    (GOLDEN / "summaries.jsonl").write_text("".join(s + "\n" for s in summaries))
    import json

    (GOLDEN / "hashes.json").write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(summaries)} summaries and {len(hashes)} file hashes")
