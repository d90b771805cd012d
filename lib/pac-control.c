/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The control interval (paper section III-C) and the filters it reads.
 *
 * An interval lasts the average handshake RTT plus PAC's average delay of
 * ACKs.  At its end (end_interval()): eq. (2) moves the threshold with the
 * fraction α of CE-marked packets, under a ceiling that upstream losses
 * lower and loss-free time raises back (the loss cap, update_loss_cap());
 * eq. (6), if enabled, scales in_flight down when the receive rate drops,
 * taking the excess from the flows silent longest; and a spell with no
 * data at all while in_flight > 0 resets every budget (the silence reset).
 * Also here: the RTT and ACK-delay filters, the peak receive rate, and the
 * per-flow interval that infers when a peer leaves slow start. */

#include "pac-private.h"

/* A spell without any data toward the receiver this long (and at least
 * PAC_SILENCE_RTTS base RTTs) while in_flight > 0 means the estimate was
 * wrong (a peer that was expected to send did not): in_flight is reset.
 * Base RTT, not the control interval: PAC's own delay of ACKs is part of
 * the latter, but data that was asked for arrives within an RTT plus the
 * time to drain the bottleneck queue. */
#define PAC_SILENCE_MIN_US 1000
#define PAC_SILENCE_RTTS 8

/* Eq. (6) reads a throughput drop to lambda times BW_S within one control
 * interval; it needs the interval to hold this many segments at the
 * smoothed rate.  With fewer, one segment more or less is the drop, and
 * the correction would discount data that is still coming. */
#define PAC_EQ6_MIN_PKTS 8

/* Shortest window over which bw_max, the peak receive rate, is measured. */
#define PAC_RATE_WINDOW_US 1000

/* Loss cap (update_loss_cap()): each control interval that saw upstream
 * loss lowers the ceiling of the threshold by 1/PAC_LOSS_CAP_STEP of the
 * configured threshold, down to cfg.loss_floor_permille of it; each
 * PAC_LOSS_CAP_GROW_US without loss raises it back by one MSS.  The growth
 * is slow so that the margin outlasts the pause between incast rounds. */
#define PAC_LOSS_CAP_STEP 16
#define PAC_LOSS_CAP_GROW_US 1000000

uint32_t
pac_control_interval(const struct pac *pac)
{
    uint32_t iv = pac->avg_base_rtt_us + pac->avg_hold_us;

    return MIN(MAX(iv, PAC_MIN_INTERVAL_US), PAC_MAX_INTERVAL_US);
}

void
pac_note_ack_delay(struct pac *pac, uint32_t delay_us)
{
    pac->avg_hold_us = pac->avg_hold_us - pac->avg_hold_us / 8
                       + delay_us / 8;
}

void
pac_note_rtt(struct pac *pac, struct pac_flow *f)
{
    uint32_t sample = MAX(pac_elapsed32(pac->now, f->hs_time), 1);

    f->rtt_us = sample;
    pac->min_rtt_us = pac->have_rtt ? MIN(pac->min_rtt_us, sample) : sample;
    if (pac->have_rtt) {
        pac->avg_base_rtt_us = pac->avg_base_rtt_us
                               - pac->avg_base_rtt_us / 8 + sample / 8;
    } else {
        pac->avg_base_rtt_us = sample;
        pac->have_rtt = true;
    }
}

/* Per-flow control interval (III-C): infers the end of slow start from two
 * consecutive intervals whose received rate fell to lambda or less. */
void
pac_flow_interval(struct pac *pac, struct pac_flow *f, uint32_t bytes)
{
    uint32_t interval = ((f->rtt_us ? f->rtt_us : pac->avg_base_rtt_us)
                         + pac->avg_hold_us);
    uint32_t elapsed = pac_elapsed32(pac->now, f->iv_start);

    if (elapsed >= MAX(interval, 1)) {
        if (elapsed > 4 * (uint64_t) interval) {
            f->iv_prev_rate = 0;
            f->slowdowns = 0;
        } else {
            uint32_t rate = (uint32_t) ((uint64_t) f->iv_bytes * 1000
                                        / elapsed);

            /* While PAC holds the flow's ACKs, PAC sets its rate: a drop
             * then says nothing about the peer's phase. */
            if (f->iv_prev_rate && !f->n_held
                && (uint64_t) rate * 1000
                   <= (uint64_t) f->iv_prev_rate * pac->cfg.lambda_permille) {
                /* Counts up to 2 and stays there (a 2-bit field). */
                f->slowdowns = MIN(f->slowdowns + 1, 2);
                if (f->slowdowns >= 2) {
                    f->flags &= ~PAC_F_SLOW_START;
                }
            } else {
                f->slowdowns = 0;
            }
            f->iv_prev_rate = rate;
        }
        f->iv_start = (uint32_t) pac->now;
        f->iv_bytes = 0;
    }
    f->iv_bytes += bytes;
}

/* Eq. (6) found in_flight 'excess' bytes too high.  The excess is taken
 * from the flows that have been silent longest (the likeliest to have
 * stopped early), then from the unattributed part, so that in_flight stays
 * the sum of what flows account for. */
static void
correct_in_flight(struct pac *pac, uint64_t excess)
{
    uint32_t idx = pac->out_head;

    while (excess && idx != PAC_NONE) {
        uint32_t next = pac->flows[idx].out_next;
        struct pac_flow *f = &pac->flows[idx];

        if (!pac_window_pending(pac, f)) {
            uint32_t out = pac_flow_outstanding(f);
            uint32_t take = MIN(excess, out);

            if (take == out) {
                pac_reclaim_outstanding(pac, idx);
            } else {
                f->budget_end -= take;
                pac->in_flight -= MIN(pac->in_flight, take);
                pac_rr_mark(pac, idx);
            }
            excess -= take;
        }
        idx = next;
    }
    if (excess) {
        uint64_t other = MIN(excess, pac->unattributed);

        pac->unattributed -= other;
        pac->in_flight -= MIN(pac->in_flight, other);
    }
}

/* Tracks bw_max, the peak receive rate over windows of at least
 * PAC_RATE_WINDOW_US.  A single control interval is too short for it: a
 * real datapath delivers segments in batches, and a batch inside one short
 * interval reads as many times the link rate, which would shrink the time
 * derived from bw_max (pac_dry_time()). */
static void
update_rate(struct pac *pac, bool gap)
{
    uint64_t now = pac->now;

    if (gap) {
        pac->rate_start = pac->iv_start;
        pac->rate_bytes = 0;
    }
    pac->rate_bytes += pac->iv_bytes;
    if (now - pac->rate_start >= PAC_RATE_WINDOW_US) {
        double rate = (double) pac->rate_bytes / (now - pac->rate_start);

        if (rate > pac->bw_max) {
            if (!(pac->bw_max > 0)) {
                /* The requests held so far were foreseen at a guess. */
                pac_foresight_restart(pac);
            }
            pac->bw_max = rate;
        }
        pac->rate_start = now;
        pac->rate_bytes = 0;
    }
}

/* Without ECN the switch says nothing until it drops, and a drop in an
 * incast round costs a sender RTOmin when it takes the answer's last
 * segment.  PAC's in-flight estimate misses a few percent of the data
 * (answers it misjudged as finished, triggers of ACKs it could not
 * attribute), so a threshold of exactly the buffer overflows it now and
 * then.  A data segment that arrives past a gap in its flow shows such a
 * drop: lower the threshold's ceiling a step, and let it grow back slowly
 * while nothing is lost, so the margin lasts from one round to the next. */
static void
update_loss_cap(struct pac *pac)
{
    uint64_t now = pac->now;

    if (pac->iv_holes) {
        uint64_t floor = ((uint64_t) pac->cfg.threshold
                          * pac->cfg.loss_floor_permille / 1000);
        uint64_t step = pac->cfg.threshold / PAC_LOSS_CAP_STEP;

        pac->loss_cap = pac->loss_cap > floor + step
                        ? pac->loss_cap - step : floor;
        pac->loss_cap_grown = now;
    } else if (pac->loss_cap < pac->cfg.threshold
               && now - pac->loss_cap_grown >= PAC_LOSS_CAP_GROW_US) {
        pac->loss_cap = MIN(pac->loss_cap + pac->cfg.default_mss,
                            pac->cfg.threshold);
        pac->loss_cap_grown = now;
    }
}

/* Eq. (2): the threshold shrinks with the fraction 'alpha' of CE-marked
 * packets in the interval and doubles without marks, under the loss
 * cap. */
static void
update_threshold(struct pac *pac, double alpha)
{
    update_loss_cap(pac);
    if (alpha > 0) {
        uint64_t floor = MIN(2 * (uint64_t) pac->cfg.default_mss,
                             pac->cfg.threshold);

        pac->threshold = MAX((uint64_t) (pac->threshold * (1 - alpha / 2)),
                             floor);
        pac->threshold = MIN(pac->threshold, pac->loss_cap);
    } else {
        pac->threshold = MIN(pac->threshold * 2, pac->loss_cap);
    }
}

/* How long PAC must see no data at all while it expects some before it
 * resets in_flight: longer than the latest delivery delay it has seen, with
 * a quarter to spare (see pac_note_late_data()). */
static uint64_t
silence_time(const struct pac *pac)
{
    uint64_t t = MAX(PAC_SILENCE_MIN_US,
                     PAC_SILENCE_RTTS * (uint64_t) pac->min_rtt_us);

    return MAX(t, pac->late_us + (uint64_t) pac->late_us / 4);
}

/* Control interval (average RTT): threshold control, eq. (2), deviation
 * correction, eq. (6), if configured, and the silence reset. */
static void
end_interval(struct pac *pac)
{
    uint64_t now = pac->now;
    uint64_t dur = MAX(now - pac->iv_start, 1);
    uint32_t interval = pac_control_interval(pac);
    double lambda = pac->cfg.lambda_permille / 1000.0;
    double bw = (double) pac->iv_bytes / dur;
    double alpha = 0.0;
    bool gap = dur > 4 * (uint64_t) interval;

    update_rate(pac, gap);
    if (pac->cfg.ecn && pac->iv_pkts) {
        alpha = (double) pac->iv_ce / pac->iv_pkts;
    }
    pac->stats.alpha_permille = (uint32_t) (alpha * 1000.0 + 0.5);

    if (pac->cfg.policy != PAC_POLICY_RDTCP) {
        /* (RDTCP's queue_maxsize does not move: its ECN response lowers
         * windows, which that policy leaves out.) */
        update_threshold(pac, alpha);
    }

    if (!pac->iv_bytes) {
        uint64_t limit = silence_time(pac);

        if (!pac->silent) {
            pac->silent = true;
            pac->silent_since = pac->iv_start;
        }
        if (pac->in_flight && now - pac->silent_since >= limit
            && now - pac->last_window_release >= limit) {
            /* Forget every flow's share and pending window too. */
            while (pac->out_head != PAC_NONE) {
                pac_reclaim_outstanding(pac, pac->out_head);
            }
            pac->in_flight = 0;
            pac->unattributed = 0;
            pac->epoch++;
            pac->last_reset = now;
            pac_rr_mark_all(pac);
            pac->silent_since = now;
            pac->stats.silence_resets++;
        }
    } else {
        pac->silent = false;
        /* Eq. (6) reads a drop in throughput as over-estimation; right
         * after a window trigger the drop is the answer's round trip. */
        if (pac->cfg.deviation_correction
            && !gap && pac->bw_smooth > 0 && bw <= pac->bw_smooth * lambda
            && pac->pkt_rate_smooth * dur >= PAC_EQ6_MIN_PKTS
            && pac->in_flight
            && now - pac->last_window_release >= pac_dry_time(pac)) {
            double target = (pac->in_flight_smooth * bw
                             / (pac->bw_smooth * (1 - alpha / 2)));

            if (target < pac->in_flight) {
                correct_in_flight(pac, pac->in_flight - (uint64_t) target);
                pac->stats.corrections++;
            }
        }
    }

    if (gap) {
        /* After an idle spell the filters would compare the new burst with
         * the old one: start them afresh. */
        pac->bw_smooth = 0;
        pac->pkt_rate_smooth = 0;
        pac->in_flight_smooth = pac->in_flight;
    } else {
        pac->bw_smooth += (bw - pac->bw_smooth) / 4;
        pac->pkt_rate_smooth += ((double) pac->iv_pkts / dur
                                 - pac->pkt_rate_smooth) / 4;
        pac->in_flight_smooth += (pac->in_flight - pac->in_flight_smooth) / 4;
    }
    pac->iv_start = now;
    pac->iv_bytes = pac->iv_pkts = pac->iv_ce = pac->iv_holes = 0;
}

/* Starts the control interval and its filters afresh at pac->now, when PAC
 * starts tracking connections again after a spell on the fast path
 * (pac-watch.c), during which no interval ended.  Ending the stale interval
 * instead would take the whole spell for one interval without data: a
 * silence reset of the in-flight estimate just set, and the new burst's
 * rate compared with the old one's.  What the spell would have done to the
 * threshold is done: the loss cap grows back one MSS per
 * PAC_LOSS_CAP_GROW_US of it, and the threshold, which no CE mark lowered
 * meanwhile, doubles up to that cap at every interval, so it is at the
 * cap. */
void
pac_control_restart(struct pac *pac)
{
    uint64_t now = pac->now;

    if (pac->loss_cap < pac->cfg.threshold && now > pac->loss_cap_grown) {
        uint64_t steps = (now - pac->loss_cap_grown) / PAC_LOSS_CAP_GROW_US;
        uint64_t room = pac->cfg.threshold - pac->loss_cap;

        if (steps) {
            pac->loss_cap += MIN(room, steps * pac->cfg.default_mss);
            pac->loss_cap_grown += steps * PAC_LOSS_CAP_GROW_US;
        }
    }
    pac->threshold = pac->loss_cap;
    pac->iv_start = now;
    pac->iv_bytes = pac->iv_pkts = pac->iv_ce = pac->iv_holes = 0;
    pac->rate_start = now;
    pac->rate_bytes = 0;
    pac->bw_smooth = 0;
    pac->pkt_rate_smooth = 0;
    pac->in_flight_smooth = pac->in_flight;
    pac->silent = false;
}

void
pac_set_now(struct pac *pac, uint64_t now)
{
    if (now > pac->now) {
        pac->now = now;
    }
    if (pac->now - pac->iv_start >= pac_control_interval(pac)) {
        end_interval(pac);
    }
}
