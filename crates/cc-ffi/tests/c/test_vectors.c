/* C test of the coaplab-cc C API: hand-computed vectors (the arithmetic is in the comments),
 * then a dump of a replay through every built-in algorithm, which the Rust test
 * (tests/c_api.rs) compares with coaplab_cc's own replay. Exit status 0 = all checks passed. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "coaplab_cc.h"

#define S(x) ((uint64_t)((x) * 1000000000.0 + 0.5)) /* seconds → ns, rounded */
#define MS(x) ((uint64_t)(x) * 1000000u)

static int failures = 0;

#define CHECK_EQ(got, want)                                                              \
    do {                                                                                 \
        uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                            \
        if (g_ != w_) {                                                                  \
            fprintf(stderr, "%s:%d: %s = %" PRIu64 ", want %" PRIu64 "\n", __FILE__,     \
                    __LINE__, #got, g_, w_);                                             \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

static void names(void) {
    CHECK_EQ(coaplab_cc_algorithm_count(), 12);
    CHECK_EQ(strcmp(coaplab_cc_algorithm_name(0), "default"), 0);
    CHECK_EQ(strcmp(coaplab_cc_algorithm_name(11), "fasor-rc"), 0);
    CHECK_EQ(coaplab_cc_algorithm_name(12) == NULL, 1);
    CHECK_EQ(coaplab_cc_needs_rexmit_count("fasor-rc"), 1);
    CHECK_EQ(coaplab_cc_needs_rexmit_count("cocoa"), 0);
    CHECK_EQ(coaplab_cc_needs_rexmit_count("cocoaa"), (uint64_t)(int64_t)COAPLAB_CC_ERR_UNKNOWN_ALGORITHM);
}

static void errors(void) {
    coaplab_cc_state st;
    memset(&st, 0, sizeof st);
    coaplab_cc_exchange ex;
    uint64_t t = 0;
    /* Never initialized: refused, not undefined. */
    CHECK_EQ(coaplab_cc_exchange_start(&st, 0, 0, 0, &ex, &t), (uint64_t)(int64_t)COAPLAB_CC_ERR_NOT_INITIALIZED);
    CHECK_EQ(coaplab_cc_init(&st, "nope", NULL), (uint64_t)(int64_t)COAPLAB_CC_ERR_UNKNOWN_ALGORITHM);
    CHECK_EQ(coaplab_cc_init(NULL, "cocoa", NULL), (uint64_t)(int64_t)COAPLAB_CC_ERR_NULL);
    coaplab_cc_config c;
    coaplab_cc_config_default(&c);
    c.max_retransmit = 64;
    CHECK_EQ(coaplab_cc_init(&st, "cocoa", &c), (uint64_t)(int64_t)COAPLAB_CC_ERR_BAD_CONFIG);
}

/* CoCoA, defaults, dithering off (random word 0). */
static void cocoa_exchanges(void) {
    coaplab_cc_state st;
    coaplab_cc_exchange ex;
    coaplab_cc_sample s;
    uint64_t t = 0, rto = 0;
    CHECK_EQ(coaplab_cc_init(&st, "cocoa", NULL), COAPLAB_CC_OK);
    /* #1 at 0 s: blind T_0 = ACK_TIMEOUT = 2 s. ACK after 0.5 s (k = 0) → strong sample:
     * SRTT 0.5, RTTVAR 0.25, E = 0.5 + 4·0.25 = 1.5, RTO = 0.5·1.5 + 0.5·2 = 1.75 s. */
    CHECK_EQ(coaplab_cc_exchange_start(&st, 0, 0, 0, &ex, &t), COAPLAB_CC_OK);
    CHECK_EQ(t, S(2.0));
    CHECK_EQ(coaplab_cc_response(&st, S(0.5), &ex, COAPLAB_CC_ANSWERED_UNKNOWN, 0, &s), COAPLAB_CC_OK);
    CHECK_EQ(s.kind, COAPLAB_CC_SAMPLE_STRONG);
    CHECK_EQ(s.rtt_ns, S(0.5));
    CHECK_EQ(coaplab_cc_base_rto(&st, &rto), COAPLAB_CC_OK);
    CHECK_EQ(rto, S(1.75));
    /* #2 at 10 s: T_0 = 1.75; expires 11.75 → T_1 = 1.75·2 = 3.5 (VBF ×2 in [1, 3] s);
     * expires 15.25 → T_2 = 3.5·1.5 = 5.25 (above 3 s). ACK at 15.75, k = 2 → weak sample from
     * the original: R = 5.75, E_weak = 5.75 + 2.875 = 8.625, RTO = 0.25·8.625 + 0.75·1.75
     * = 2.15625 + 1.3125 = 3.46875 s. */
    CHECK_EQ(coaplab_cc_exchange_start(&st, S(10), 0, 0, &ex, &t), COAPLAB_CC_OK);
    CHECK_EQ(t, S(1.75));
    CHECK_EQ(coaplab_cc_timeout(&st, S(11.75), &ex, &t), COAPLAB_CC_RETRANSMIT);
    CHECK_EQ(t, S(3.5));
    CHECK_EQ(coaplab_cc_timeout(&st, S(15.25), &ex, &t), COAPLAB_CC_RETRANSMIT);
    CHECK_EQ(t, S(5.25));
    CHECK_EQ(coaplab_cc_exchange_retransmissions(&ex), 2);
    CHECK_EQ(coaplab_cc_exchange_timer(&ex), S(5.25));
    CHECK_EQ(coaplab_cc_response(&st, S(15.75), &ex, COAPLAB_CC_ANSWERED_UNKNOWN, 0, &s), COAPLAB_CC_OK);
    CHECK_EQ(s.kind, COAPLAB_CC_SAMPLE_WEAK);
    CHECK_EQ(s.rtt_ns, S(5.75));
    CHECK_EQ(coaplab_cc_base_rto(&st, &rto), COAPLAB_CC_OK);
    CHECK_EQ(rto, S(3.46875));
    /* reset: back to ACK_TIMEOUT. A byte copy of the state is a valid state. */
    coaplab_cc_state copy;
    memcpy(&copy, &st, sizeof st);
    CHECK_EQ(coaplab_cc_reset(&st), COAPLAB_CC_OK);
    CHECK_EQ(coaplab_cc_base_rto(&st, &rto), COAPLAB_CC_OK);
    CHECK_EQ(rto, S(2.0));
    CHECK_EQ(coaplab_cc_base_rto(&copy, &rto), COAPLAB_CC_OK);
    CHECK_EQ(rto, S(3.46875));
}

/* RFC 7252 default with MAX_RETRANSMIT = 2: 2, 4, 8 s, then failure at 2 + 4 + 8 = 14 s. */
static void default_failure_and_dither(void) {
    coaplab_cc_state st;
    coaplab_cc_exchange ex;
    coaplab_cc_config c;
    uint64_t t = 0;
    coaplab_cc_config_default(&c);
    c.max_retransmit = 2;
    CHECK_EQ(coaplab_cc_init(&st, "default", &c), COAPLAB_CC_OK);
    CHECK_EQ(coaplab_cc_exchange_start(&st, 0, 0, 0, &ex, &t), COAPLAB_CC_OK);
    CHECK_EQ(t, S(2));
    CHECK_EQ(coaplab_cc_timeout(&st, S(2), &ex, &t), COAPLAB_CC_RETRANSMIT);
    CHECK_EQ(t, S(4));
    CHECK_EQ(coaplab_cc_timeout(&st, S(6), &ex, &t), COAPLAB_CC_RETRANSMIT);
    CHECK_EQ(t, S(8));
    CHECK_EQ(coaplab_cc_timeout(&st, S(14), &ex, &t), COAPLAB_CC_FAILED);
    /* The largest random word draws the upper end: [2, 2·1.5] → 3 s. */
    CHECK_EQ(coaplab_cc_exchange_start(&st, S(20), 0, UINT64_MAX, &ex, &t), COAPLAB_CC_OK);
    CHECK_EQ(t, S(3));
}

/* Clock-granularity floor: basic-rto after a 0 s sample would arm [0, 0]; it arms 1 ms. */
static void granularity_floor(void) {
    coaplab_cc_state st;
    coaplab_cc_exchange ex;
    coaplab_cc_sample s;
    uint64_t t = 0;
    CHECK_EQ(coaplab_cc_init(&st, "basic-rto", NULL), COAPLAB_CC_OK);
    CHECK_EQ(coaplab_cc_exchange_start(&st, 0, 0, 0, &ex, &t), COAPLAB_CC_OK);
    CHECK_EQ(coaplab_cc_response(&st, 0, &ex, COAPLAB_CC_ANSWERED_UNKNOWN, 0, &s), COAPLAB_CC_OK);
    CHECK_EQ(coaplab_cc_exchange_start(&st, S(1), 0, 0, &ex, &t), COAPLAB_CC_OK);
    CHECK_EQ(t, MS(1));
    CHECK_EQ(coaplab_cc_timeout(&st, S(1) + MS(1), &ex, &t), COAPLAB_CC_RETRANSMIT);
    CHECK_EQ(t, MS(2));
}

/* The replay of docs/algorithms.md (cocoa, dithering off):
 * #0 at 0 s, RTT 0.66: T_0 = 2; E = 0.66 + 4·0.33 = 1.98; RTO = 0.99 + 1 = 1.99.
 * #1 at 10 s, two losses, RTT 0.7: 1.99, ×2 = 3.98, ×1.5 = 5.97; transmission 2 sent at 15.97,
 *    answered 16.67 → weak R = 6.67; E = 6.67 + 3.335 = 10.005; RTO = 2.50125 + 1.4925 = 3.99375. */
static void replay_docs_example(void) {
    coaplab_cc_step steps[2] = {{0, 0, S(0.66)}, {S(10), 2, S(0.7)}};
    coaplab_cc_record rec[2];
    uint64_t timers[16];
    size_t used = 0;
    CHECK_EQ(coaplab_cc_replay("cocoa", NULL, steps, 2, 0, 0, rec, 2, timers, 16, &used), COAPLAB_CC_OK);
    CHECK_EQ(used, 4);
    CHECK_EQ(rec[0].timers_len, 1);
    CHECK_EQ(timers[0], S(2));
    CHECK_EQ(rec[0].rto_after_ns, S(1.99));
    CHECK_EQ(rec[1].timers_offset, 1);
    CHECK_EQ(rec[1].timers_len, 3);
    CHECK_EQ(timers[1], S(1.99));
    CHECK_EQ(timers[2], S(3.98));
    CHECK_EQ(timers[3], S(5.97));
    CHECK_EQ(rec[1].retransmissions, 2);
    CHECK_EQ(rec[1].sample.kind, COAPLAB_CC_SAMPLE_WEAK);
    CHECK_EQ(rec[1].sample.rtt_ns, S(6.67));
    CHECK_EQ(rec[1].end_ns, S(16.67));
    CHECK_EQ(rec[1].rto_after_ns, S(3.99375));
    /* Overlapping steps and short buffers are refused. */
    coaplab_cc_step overlap[2] = {{0, 0, S(0.5)}, {S(0.4), 0, S(0.5)}};
    CHECK_EQ(coaplab_cc_replay("cocoa", NULL, overlap, 2, 0, 0, rec, 2, timers, 16, &used),
             (uint64_t)(int64_t)COAPLAB_CC_ERR_OVERLAP);
    CHECK_EQ(coaplab_cc_replay("cocoa", NULL, steps, 2, 0, 0, rec, 2, timers, 3, &used),
             (uint64_t)(int64_t)COAPLAB_CC_ERR_BUFFER_TOO_SMALL);
}

/* Every algorithm through one script, dithered with seed 7; printed for the Rust side. */
static void dump_all(void) {
    coaplab_cc_step steps[5] = {
        {0, 0, S(0.8)}, {S(10), 1, S(1.2)}, {S(40), 3, S(0.9)}, {S(120), 0, S(2.5)}, {S(200), 6, S(0.7)},
    };
    coaplab_cc_config c;
    coaplab_cc_config_default(&c);
    c.max_retransmit = 5;
    for (size_t a = 0; a < coaplab_cc_algorithm_count(); a++) {
        const char *name = coaplab_cc_algorithm_name(a);
        coaplab_cc_record rec[5];
        uint64_t timers[64];
        size_t used = 0;
        int rc = coaplab_cc_replay(name, &c, steps, 5, 1, 7, rec, 5, timers, 64, &used);
        CHECK_EQ(rc, COAPLAB_CC_OK);
        for (size_t i = 0; i < 5 && rc == COAPLAB_CC_OK; i++) {
            printf("%s %zu %" PRIu64 " %u %u %u %" PRIu64 " %" PRIu64 " :", name, i, rec[i].end_ns,
                   rec[i].retransmissions, rec[i].failed, rec[i].sample.kind, rec[i].sample.rtt_ns,
                   rec[i].rto_after_ns);
            for (size_t k = 0; k < rec[i].timers_len; k++) {
                printf(" %" PRIu64, timers[rec[i].timers_offset + k]);
            }
            printf("\n");
        }
    }
}

int main(void) {
    names();
    errors();
    cocoa_exchanges();
    default_failure_and_dither();
    granularity_floor();
    replay_docs_example();
    dump_all();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    fprintf(stderr, "all C checks passed\n");
    return 0;
}
