/* How a CoAP stack drives coaplab-cc from its retransmission path (see docs/c-api.md).
 *
 * One peer, one confirmable request. The "network" here is a stand-in: the first two
 * transmissions are lost and the third is answered after 400 ms. A real stack replaces
 * `now_ns()`, `send_con()` and the timer with its own clock, socket and timer service.
 *
 *   cc -std=c99 -I crates/cc-ffi/include retransmit.c libcoaplab_cc_ffi.a -lpthread -ldl -lm
 *   ./a.out cocoa
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "coaplab_cc.h"

struct peer {
    coaplab_cc_state cc;     /* per-server algorithm state, owned by the stack */
    coaplab_cc_exchange ex;  /* the exchange in flight (NSTART = 1) */
    uint64_t sent_at[8];     /* when each transmission left, for the Rexmit-Cnt echo */
};

static uint64_t clock_ns = 0;
static uint64_t now_ns(void) { return clock_ns; }
static uint64_t random_word(void) { return 0x9e3779b97f4a7c15ull; } /* use a real RNG */

static void send_con(int transmission) {
    printf("%8.3f s  send CON, transmission %d\n", now_ns() / 1e9, transmission);
}

int main(int argc, char **argv) {
    const char *algorithm = argc > 1 ? argv[1] : "cocoa";
    struct peer p;
    memset(&p, 0, sizeof p);
    if (coaplab_cc_init(&p.cc, algorithm, NULL) != COAPLAB_CC_OK) {
        fprintf(stderr, "unknown algorithm '%s'; valid names:", algorithm);
        for (size_t i = 0; i < coaplab_cc_algorithm_count(); i++)
            fprintf(stderr, " %s", coaplab_cc_algorithm_name(i));
        fprintf(stderr, "\n");
        return 2;
    }

    /* Sending the original transmission: ask for T_0 and arm the timer. */
    uint64_t timer = 0;
    coaplab_cc_exchange_start(&p.cc, now_ns(), /*outstanding=*/0, random_word(), &p.ex, &timer);
    p.sent_at[0] = now_ns();
    send_con(0);

    int lost = 2;                      /* the stand-in network drops transmissions 0 and 1 */
    uint64_t rtt = 400u * 1000000u;    /* and answers transmission 2 after 400 ms */
    for (;;) {
        uint32_t k = coaplab_cc_exchange_retransmissions(&p.ex);
        uint64_t expiry = p.sent_at[k] + timer;
        if ((int)k == lost && p.sent_at[k] + rtt <= expiry) {
            /* The response arrived before the timer: report it (with the answered
             * transmission when the Rexmit-Cnt option is echoed, else UNKNOWN). */
            clock_ns = p.sent_at[k] + rtt;
            int echo = coaplab_cc_needs_rexmit_count(algorithm) == 1;
            coaplab_cc_sample s;
            coaplab_cc_response(&p.cc, now_ns(), &p.ex, echo ? (int64_t)k : COAPLAB_CC_ANSWERED_UNKNOWN,
                                p.sent_at[k], &s);
            printf("%8.3f s  response after %u retransmission(s); sample kind %u, %.3f s\n",
                   now_ns() / 1e9, k, s.kind, s.rtt_ns / 1e9);
            break;
        }
        /* The retransmission timer fired. */
        clock_ns = expiry;
        if (coaplab_cc_timeout(&p.cc, now_ns(), &p.ex, &timer) == COAPLAB_CC_FAILED) {
            printf("%8.3f s  exchange failed\n", now_ns() / 1e9);
            break;
        }
        p.sent_at[k + 1] = now_ns();
        send_con((int)k + 1);
        printf("           next timer %.3f s\n", timer / 1e9);
    }
    uint64_t rto = 0;
    coaplab_cc_base_rto(&p.cc, &rto);
    printf("next exchange starts from %.3f s\n", rto / 1e9);
    return 0;
}
