/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef PAC_TEST_FIT_H
#define PAC_TEST_FIT_H 1

/* An outside check of libpac's admission rule, for the randomised tests
 * (tests/test-pac-random.c, tests/fuzz-state.c).
 *
 * A segment with a trigger leaves in its turn (PAC_REL_FIT, or passed at
 * once) only if the trigger fits: in_flight was 0, or in_flight plus the
 * trigger, counted as frames (each default_mss of payload takes
 * PAC_WIRE_OVERHEAD more bytes of the switch buffer), stays within the
 * threshold.  The test sees in_flight only between libpac's actions: at
 * each emit and when a call returns.  So it checks the rule where what it
 * sees settles it: a release in turn that raised in_flight above what the
 * threshold admits is a violation if in_flight was above 0 at the previous
 * observation and nothing could have lowered it since.  Everything that
 * lowers in_flight without a release shows in a counter (received data,
 * reclaims, resets, corrections, flows removed, the end of tracking on the
 * fast path); a release of a request
 * lowers its own flow's share, but only together with a trigger of its
 * own, so in_flight stays above 0.
 *
 * A second rule: in_flight rises only when a segment leaves (an emit or a
 * pass), when data proves a reclaim wrong (reclaims_undone), or when a
 * peer acknowledges a SYN-ACK that left uncharged in a flood of handshakes
 * (handshakes_late_charged: its window counts from then).  A window trigger
 * that leaves uncharged (handshakes_uncharged) leaves without fitting: its
 * trigger is its frame, as through plain OVS.
 *
 * The watcher is told what each observation is: fit_watch_emit() from the
 * emit callback, fit_watch_end() when a call returns, saying whether the
 * call let its own segment leave in turn, that is, whether it was passed
 * and fits() must have admitted it.  (A duplicate ACK passes at once
 * whatever in_flight is: the caller does not claim a pure ACK of a flow
 * that held nothing.) */

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "pac.h"

/* Bytes a frame takes beyond its payload, as libpac counts them. */
#define FIT_WIRE_OVERHEAD 66

struct fit_watch {
    struct pac_stats last;      /* At the previous observation. */
    uint64_t mss;               /* The configuration's default_mss. */
    char err[256];              /* The first violation, or "". */
};

/* Whether 'payload' bytes in flight fit 'threshold' bytes of buffer. */
static inline bool
fit_within(uint64_t payload, uint64_t threshold, uint64_t mss)
{
    return payload * (mss + FIT_WIRE_OVERHEAD) < (threshold + 1) * mss;
}

/* Whether something between 'a' and 'b' may have lowered in_flight without
 * a release. */
static inline bool
fit_lowered(const struct pac_stats *a, const struct pac_stats *b)
{
    return (a->rx_packets != b->rx_packets
            || a->dry_reclaims != b->dry_reclaims
            || a->answer_ends != b->answer_ends
            || a->silence_resets != b->silence_resets
            || a->corrections != b->corrections
            || a->evictions != b->evictions
            || a->flows_expired != b->flows_expired
            || a->flows_closed != b->flows_closed
            || a->tracking_stops != b->tracking_stops);
}

static inline void
fit_watch_init(struct fit_watch *w, const struct pac *pac, uint32_t mss)
{
    pac_get_stats(pac, &w->last);
    w->mss = mss;
    w->err[0] = '\0';
}

static inline void
fit_watch_fail(struct fit_watch *w, const char *what,
               const struct pac_stats *cur)
{
    if (!w->err[0]) {
        snprintf(w->err, sizeof w->err,
                 "%s (in_flight %"PRIu64" before, %"PRIu64" after, "
                 "threshold %"PRIu64")", what, w->last.in_flight,
                 cur->in_flight, cur->threshold);
    }
}

/* An observation.  'in_turn': it ends with a release that fits() admitted
 * (a PAC_REL_FIT emit, or the call's own segment passed in turn).  'left':
 * a segment left since the previous observation. */
static inline void
fit_watch_observe(struct fit_watch *w, const struct pac *pac, bool in_turn,
                  bool left)
{
    struct pac_stats cur;

    pac_get_stats(pac, &cur);
    if (cur.in_flight > w->last.in_flight && !left
        && cur.reclaims_undone == w->last.reclaims_undone
        && cur.handshakes_late_charged == w->last.handshakes_late_charged) {
        fit_watch_fail(w, "in_flight rose while no segment left", &cur);
    }
    if (in_turn && w->last.in_flight && cur.in_flight > w->last.in_flight
        && cur.handshakes_uncharged == w->last.handshakes_uncharged
        && !fit_lowered(&w->last, &cur)
        && !fit_within(cur.in_flight, cur.threshold, w->mss)) {
        fit_watch_fail(w, "a segment left in its turn although its trigger "
                       "did not fit", &cur);
    }
    w->last = cur;
}

/* From the emit callback: a held packet came back. */
static inline void
fit_watch_emit(struct fit_watch *w, const struct pac *pac)
{
    struct pac_stats cur;
    bool fit;

    pac_get_stats(pac, &cur);
    fit = (cur.released[PAC_REL_FIT] == w->last.released[PAC_REL_FIT] + 1
           && cur.released[PAC_REL_MAX_HOLD]
              == w->last.released[PAC_REL_MAX_HOLD]
           && cur.released[PAC_REL_CAP] == w->last.released[PAC_REL_CAP]
           && cur.released[PAC_REL_FLUSH] == w->last.released[PAC_REL_FLUSH]
           && cur.stale_drops == w->last.stale_drops);
    fit_watch_observe(w, pac, fit, true);
}

/* From the copy callback: a zero-window copy of a held request left, which
 * PAC sends only when the peer's ACK of it fits (request_copy_us). */
static inline void
fit_watch_copy(struct fit_watch *w, const struct pac *pac)
{
    fit_watch_observe(w, pac, true, true);
}

/* When a call returns.  'own_in_turn': it was pac_tx() and passed its
 * segment, which fits() had to admit; 'own_left': it passed its
 * segment. */
static inline void
fit_watch_end(struct fit_watch *w, const struct pac *pac, bool own_in_turn,
              bool own_left)
{
    fit_watch_observe(w, pac, own_in_turn, own_left);
}

#endif /* pac-test-fit.h */
