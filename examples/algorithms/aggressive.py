"""A deliberately unsafe retransmission algorithm: a fixed 0.1 s timer and no backoff.

The scorecard's negative control (docs/scorecard.md, tests/test_scorecard.py): it retransmits
every 0.1 s whatever the RTT, so behind any queue longer than 0.1 s every copy is unnecessary.

    coaplab scorecard python:examples/algorithms/aggressive.py:Aggressive --battery quick
"""

from coaplab import Algorithm

#: The fixed retransmission timer (s): far below the 2 s ACK_TIMEOUT of RFC 7252 §4.8.
TIMER_S = 0.1


class Aggressive(Algorithm):
    def initial_timer(self, now, rng):
        return TIMER_S

    def next_timer(self, ex):
        return TIMER_S  # no backoff
