/*
 * A deliberately unsafe retransmission algorithm in C, behind coaplab's C API (docs/c-api.md):
 * a fixed 100 ms timer and no backoff, the C twin of examples/algorithms/aggressive.py.
 *
 * It stands for a stack's own implementation: it does not link coaplab, it implements the
 * functions of crates/cc-ffi/include/coaplab_cc.h over the caller-owned state and exchange, so
 * `coaplab scorecard` can grade it (docs/scorecard.md):
 *
 *   cc -shared -fPIC -O2 -Icrates/cc-ffi/include examples/algorithms/c/aggressive.c -o aggressive.so
 *   coaplab scorecard c:./aggressive.so:aggressive --battery quick
 */
#include <string.h>

#include "coaplab_cc.h"

/* The fixed retransmission timer: far below the 2 s ACK_TIMEOUT of RFC 7252 §4.8. */
#define TIMER_NS 100000000ull
/* words[0] of a state initialized here (the C API asks that an uninitialized one be refused). */
#define MAGIC 0x61676772u /* "aggr" */

/* The state: the magic word, then MAX_RETRANSMIT. The exchange: its retransmissions so far. */
enum { W_MAGIC = 0, W_MAX_RETRANSMIT = 1 };
enum { X_RETRANSMISSIONS = 0 };

int32_t coaplab_cc_init(struct coaplab_cc_state *state, const char *name,
                        const struct coaplab_cc_config *config) {
    if (state == NULL || name == NULL) {
        return COAPLAB_CC_ERR_NULL;
    }
    if (strcmp(name, "aggressive") != 0) {
        return COAPLAB_CC_ERR_UNKNOWN_ALGORITHM;
    }
    memset(state, 0, sizeof *state);
    state->words[W_MAGIC] = MAGIC;
    state->words[W_MAX_RETRANSMIT] = config != NULL ? config->max_retransmit : 4;
    return COAPLAB_CC_OK;
}

int32_t coaplab_cc_exchange_start(struct coaplab_cc_state *state, uint64_t now_ns,
                                  uint32_t outstanding, uint64_t random,
                                  struct coaplab_cc_exchange *exchange, uint64_t *timer_ns) {
    (void)now_ns, (void)outstanding, (void)random; /* no dithering, no state between exchanges */
    if (state == NULL || exchange == NULL) {
        return COAPLAB_CC_ERR_NULL;
    }
    if (state->words[W_MAGIC] != MAGIC) {
        return COAPLAB_CC_ERR_NOT_INITIALIZED;
    }
    memset(exchange, 0, sizeof *exchange);
    if (timer_ns != NULL) {
        *timer_ns = TIMER_NS;
    }
    return COAPLAB_CC_OK;
}

int32_t coaplab_cc_timeout(struct coaplab_cc_state *state, uint64_t now_ns,
                           struct coaplab_cc_exchange *exchange, uint64_t *timer_ns) {
    (void)now_ns;
    if (state == NULL || exchange == NULL) {
        return COAPLAB_CC_ERR_NULL;
    }
    if (state->words[W_MAGIC] != MAGIC) {
        return COAPLAB_CC_ERR_NOT_INITIALIZED;
    }
    if (exchange->words[X_RETRANSMISSIONS] >= state->words[W_MAX_RETRANSMIT]) {
        return COAPLAB_CC_FAILED;
    }
    exchange->words[X_RETRANSMISSIONS] += 1;
    if (timer_ns != NULL) {
        *timer_ns = TIMER_NS; /* no backoff */
    }
    return COAPLAB_CC_RETRANSMIT;
}

int32_t coaplab_cc_response(struct coaplab_cc_state *state, uint64_t now_ns,
                            const struct coaplab_cc_exchange *exchange, int64_t answered_ordinal,
                            uint64_t answered_sent_ns, struct coaplab_cc_sample *sample) {
    (void)now_ns, (void)answered_ordinal, (void)answered_sent_ns;
    if (state == NULL || exchange == NULL) {
        return COAPLAB_CC_ERR_NULL;
    }
    if (state->words[W_MAGIC] != MAGIC) {
        return COAPLAB_CC_ERR_NOT_INITIALIZED;
    }
    if (sample != NULL) {
        sample->kind = COAPLAB_CC_SAMPLE_NONE; /* it learns nothing */
        sample->rtt_ns = 0;
    }
    return COAPLAB_CC_OK;
}

int32_t coaplab_cc_base_rto(const struct coaplab_cc_state *state, uint64_t *rto_ns) {
    if (state == NULL) {
        return COAPLAB_CC_ERR_NULL;
    }
    if (state->words[W_MAGIC] != MAGIC) {
        return COAPLAB_CC_ERR_NOT_INITIALIZED;
    }
    if (rto_ns != NULL) {
        *rto_ns = TIMER_NS;
    }
    return COAPLAB_CC_OK;
}
