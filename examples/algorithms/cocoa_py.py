"""CoCoA (draft-ietf-core-cocoa-03 §4) written in Python with coaplab.Algorithm.

The same algorithm as the Rust ``cocoa`` (``crates/cc/src/cocoa.rs``), computed in integer
nanoseconds with the same truncations, so that it produces identical timers (tests/test_algorithm.py
checks it on generated replay scripts and on a simulation). Use it as::

    coaplab replay --algorithm-file examples/algorithms/cocoa_py.py:CocoaPy script.json
    coaplab check-algorithm examples/algorithms/cocoa_py.py:CocoaPy --compare cocoa
    # in a scenario: coap.cc = "python:examples/algorithms/cocoa_py.py:CocoaPy"
"""

from coaplab import Algorithm
from coaplab.describe.algorithm import ns, secs

S = 1_000_000_000  # ns per second
MAX_TIMER = 32 * S  # draft §4.2: every timer truncated at 32 s


def vbf(timer: int) -> int:
    """Variable backoff factor (draft §4.2) chosen on the current timer: x3 below 1 s, x1.5 above 3 s, else x2."""
    if timer < S:
        nxt = timer * 3
    elif timer > 3 * S:
        nxt = timer * 3 // 2
    else:
        nxt = timer * 2
    return min(nxt, MAX_TIMER)


class Rfc6298:
    """RFC 6298 §2 SRTT / RTTVAR (α = 1/8, β = 1/4) without the 1 s minimum (draft §4.2)."""

    def __init__(self):
        self.srtt = None
        self.rttvar = None

    def sample(self, r: int) -> None:
        if self.srtt is None:
            self.srtt, self.rttvar = r, r // 2
        else:
            self.rttvar = self.rttvar * 3 // 4 + abs(self.srtt - r) // 4
            self.srtt = self.srtt * 7 // 8 + r // 8

    def estimate(self, k: int) -> int:
        return self.srtt + k * self.rttvar


class CocoaPy(Algorithm):
    def reset(self):
        self.strong, self.weak = Rfc6298(), Rfc6298()
        self.rto = ns(self.config.ack_timeout)
        self.last_update = 0
        self.sampled = False

    def _age(self, now: int) -> None:
        # draft §4.2.2, applied cumulatively when an exchange starts
        while self.rto < S and now - self.last_update >= 16 * self.rto:
            self.last_update += 16 * self.rto
            self.rto *= 2
        while self.rto > 3 * S and now - self.last_update >= 4 * self.rto:
            self.last_update += 4 * self.rto
            self.rto = S + self.rto // 2

    def on_exchange_start(self, now, outstanding, rng):
        self._age(ns(now))
        # blind RTO with NSTART > 1 until the first sample (draft §4.2.1)
        base = self.rto if self.sampled else ns(self.config.ack_timeout) * (outstanding + 1)
        hi = base * self.config.ack_random_factor_permille // 1000
        return secs(min(ns(rng.uniform(secs(base), secs(hi))), MAX_TIMER))

    def next_timer(self, ex):
        return secs(vbf(ns(ex.timer)))

    def _update(self, now: int, estimate: int, num: int, den: int) -> None:
        self.rto = estimate * num // den + self.rto * (den - num) // den
        self.last_update = now
        self.sampled = True

    def on_response(self, now, ex, answered):
        rtt = ns(now) - ns(ex.started)
        if ex.k == 0:
            self.strong.sample(rtt)
            self._update(ns(now), self.strong.estimate(4), 1, 2)
            kind = "strong"
        elif ex.k <= 2:
            self.weak.sample(rtt)
            self._update(ns(now), self.weak.estimate(1), 1, 4)
            kind = "weak"
        else:
            kind = "ambiguous"
        return kind, secs(rtt)

    def base_rto(self):
        return secs(self.rto)

    def state(self):
        opt = lambda v: None if v is None else secs(v)
        return {
            "rto": secs(self.rto),
            "srtt_strong": opt(self.strong.srtt),
            "rttvar_strong": opt(self.strong.rttvar),
            "srtt_weak": opt(self.weak.srtt),
            "rttvar_weak": opt(self.weak.rttvar),
            "retained_timer": None,
        }
