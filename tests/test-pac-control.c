/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of PAC's control loops (PAC paper, sections III-B and III-C):
 * threshold control from ECN marks (eq. 2), deviation correction of the
 * in-flight estimate (eq. 6), the reset after silence, and the per-flow
 * inference of the end of slow start.
 *
 * Unless a test says otherwise, they use a base RTT of 1000 us and no held
 * ACKs, so that the control interval is exactly 1000 us; each interval is
 * ended by a pac_run() at its exact end, so that its duration is exactly
 * 1000 us. */

#include "pac.h"

#include "pac-test-fixture.h"

#define IV 1000                 /* Control interval, us. */

static void
control_config(struct pac_config *cfg)
{
    pac_config_init(cfg);
    cfg->fast_path = false;     /* The tracked algorithm. */
    cfg->base_rtt_us = IV;
}

/* A new instance of control_config() with base RTT 'base_rtt_us' (IV, or
 * shorter for the silence and dry-verdict tests), or NULL. */
static struct pac *
make_control_pac(uint32_t base_rtt_us)
{
    struct pac_config cfg;

    control_config(&cfg);
    cfg.base_rtt_us = base_rtt_us;
    return make_pac(&cfg);
}

/* Sends 'n' segments of 'len' bytes on 'flow' during control interval 'k'
 * (which starts at AT(k * IV)), the first 'n_ce' of them CE-marked, then
 * ends the interval.  '*seq' is the flow's next sequence number. */
static void
interval(struct pac *pac, int k, int flow, uint32_t *seq, int n, int n_ce,
         uint32_t len)
{
    for (int i = 0; i < n; i++) {
        rx(pac, AT(k * IV + 1 + i), flow, *seq, len, ACK,
           i < n_ce ? PAC_ECN_CE : PAC_ECN_ECT0);
        *seq += len;
    }
    run(pac, AT((k + 1) * IV));
}

/* Eq. (2) as implemented: threshold * (1 - alpha / 2) in double precision,
 * truncated, no lower than two default MSS. */
static uint64_t
reduced(uint64_t threshold, int n_ce, int n)
{
    double alpha = (double) n_ce / n;
    uint64_t t = (uint64_t) (threshold * (1 - alpha / 2));

    return t > 2 * MSS ? t : 2 * MSS;
}

/* Eq. (2): after an interval with a fraction alpha of CE-marked packets the
 * threshold is multiplied by (1 - alpha / 2); after a clean one it doubles,
 * up to cfg.threshold. */
static void
test_threshold_ecn(void)
{
    struct pac_config cfg;
    struct pac_stats st;
    uint64_t t1, t2, t3;
    uint32_t seq = 1;
    struct pac *pac;

    control_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.control_interval_us, IV);
    PAC_CHECK_EQ(st.threshold, 96000);

    /* The threshold only changes at the end of the interval. */
    for (int i = 0; i < 10; i++) {
        rx(pac, AT(1 + i), 0, seq, 100, ACK,
           i < 3 ? PAC_ECN_CE : PAC_ECN_ECT0);
        seq += 100;
    }
    PAC_CHECK_EQ(get_stats(pac).threshold, 96000);
    run(pac, AT(IV - 1));
    PAC_CHECK_EQ(get_stats(pac).threshold, 96000);
    run(pac, AT(IV));

    /* alpha = 3/10. */
    t1 = reduced(96000, 3, 10);
    PAC_CHECK(t1 == 81599 || t1 == 81600);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.threshold, t1);
    PAC_CHECK_EQ(st.alpha_permille, 300);
    PAC_CHECK_EQ(st.rx_ce, 3);

    /* alpha = 1: halved. */
    interval(pac, 1, 0, &seq, 4, 4, 100);
    t2 = reduced(t1, 4, 4);
    PAC_CHECK_EQ(t2, t1 / 2);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.threshold, t2);
    PAC_CHECK_EQ(st.alpha_permille, 1000);

    /* alpha = 1/4. */
    interval(pac, 2, 0, &seq, 4, 1, 100);
    t3 = reduced(t2, 1, 4);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.threshold, t3);
    PAC_CHECK_EQ(st.alpha_permille, 250);

    /* Clean intervals (with or without traffic) double it, never above
     * cfg.threshold. */
    interval(pac, 3, 0, &seq, 2, 0, 100);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.threshold, 2 * t3);
    PAC_CHECK_EQ(st.alpha_permille, 0);
    PAC_CHECK(4 * t3 > 96000);
    interval(pac, 4, 0, &seq, 0, 0, 100);
    PAC_CHECK_EQ(get_stats(pac).threshold, 96000);
    interval(pac, 5, 0, &seq, 3, 0, 100);
    PAC_CHECK_EQ(get_stats(pac).threshold, 96000);
    end_pac();
}

/* The reduced threshold governs holding. */
static void
test_threshold_ecn_holds(void)
{
    struct pac_config cfg;
    uint32_t seq = 1;
    struct pac *pac;

    control_config(&cfg);
    cfg.threshold = 20000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    interval(pac, 0, 0, &seq, 2, 2, 100);
    PAC_CHECK_EQ(get_stats(pac).threshold, 10000);

    /* Flow 1's data (no trigger counted it), then its base ACK (1460),
     * then 2920 + 2920 fit 10000, the next does not. */
    rx_data(pac, AT(IV), 1, 1, 5000);
    CHECK_IN_FLIGHT(pac, 0);
    CHECK_PASS(tx(pac, AT(IV + 1), 1, 1, 0, ACK, 0));
    CHECK_PASS(tx(pac, AT(IV + 2), 1, 1461, 0, ACK, 1));
    CHECK_PASS(tx(pac, AT(IV + 3), 1, 2921, 0, ACK, 2));
    CHECK_IN_FLIGHT(pac, 7300);
    CHECK_HELD(tx(pac, AT(IV + 4), 1, 4381, 0, ACK, 3));

    /* A clean interval doubles it back, which releases the ACK. */
    run(pac, AT(2 * IV));
    PAC_CHECK_EQ(get_stats(pac).threshold, 20000);
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 3);
    end_pac();
}

/* The threshold never falls below two default MSS. */
static void
test_threshold_floor(void)
{
    static const uint64_t down[] = {
        48000, 24000, 12000, 6000, 3000, 2920, 2920
    };
    uint32_t seq = 1;
    struct pac *pac;
    int k = 0;

    pac = make_control_pac(IV);
    PAC_CHECK(pac);

    for (int i = 0; i < 7; i++, k++) {
        interval(pac, k, 0, &seq, 1, 1, 100);
        PAC_CHECK_EQ(get_stats(pac).threshold, down[i]);
    }
    for (uint64_t t = 2 * 2920; t < 96000; t *= 2, k++) {
        interval(pac, k, 0, &seq, 1, 0, 100);
        PAC_CHECK_EQ(get_stats(pac).threshold, t);
    }
    interval(pac, k, 0, &seq, 1, 0, 100);
    PAC_CHECK_EQ(get_stats(pac).threshold, 96000);
    end_pac();
}

/* With ECN off, CE marks do not change the threshold. */
static void
test_threshold_ecn_off(void)
{
    struct pac_config cfg;
    struct pac_stats st;
    uint32_t seq = 1;
    struct pac *pac;

    control_config(&cfg);
    cfg.ecn = false;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    for (int k = 0; k < 3; k++) {
        interval(pac, k, 0, &seq, 4, 4, 100);
        st = get_stats(pac);
        PAC_CHECK_EQ(st.threshold, 96000);
        PAC_CHECK_EQ(st.alpha_permille, 0);
    }
    PAC_CHECK_EQ(get_stats(pac).rx_ce, 12);
    end_pac();
}

/* The loss cap: a data segment past a gap in its flow is an upstream drop.
 * Each control interval with one lowers the threshold's ceiling by 1/16 of
 * the configured threshold (96000: 6000 bytes), down to loss_floor_permille
 * (750 here) of it; after 1 s without loss it grows back one MSS, and then one
 * MSS per second.  The threshold itself doubles back only up to the
 * ceiling. */
static void
test_loss_cap(void)
{
    static const uint64_t down[] = { 90000, 84000, 78000, 72000, 72000 };
    const int n_down = sizeof down / sizeof down[0];
    struct pac_config cfg;
    uint32_t seq = 1;
    struct pac *pac;
    int k = 0;

    control_config(&cfg);
    cfg.loss_floor_permille = 750;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    /* In-order data, a retransmission below the highest byte seen and a
     * flow first seen mid-stream are no loss. */
    interval(pac, k++, 0, &seq, 4, 0, 1000);
    rx(pac, AT(k * IV + 1), 0, seq - 2000, 1000, ACK, PAC_ECN_ECT0);
    rx(pac, AT(k * IV + 2), 1, 777777, 1000, ACK, PAC_ECN_ECT0);
    interval(pac, k++, 0, &seq, 2, 0, 1000);
    PAC_CHECK_EQ(get_stats(pac).rx_holes, 0);
    PAC_CHECK_EQ(get_stats(pac).threshold, 96000);

    /* One gap: one hole, however many segments follow it. */
    seq += 1000;
    interval(pac, k++, 0, &seq, 3, 0, 1000);
    PAC_CHECK_EQ(get_stats(pac).rx_holes, 1);
    PAC_CHECK_EQ(get_stats(pac).threshold, down[0]);

    /* Clean intervals neither lower nor raise it before 50 ms. */
    interval(pac, k++, 0, &seq, 3, 0, 1000);
    PAC_CHECK_EQ(get_stats(pac).threshold, down[0]);

    /* Down to the floor, one step per interval with loss. */
    for (int i = 1; i < n_down; i++) {
        seq += 1000;
        interval(pac, k++, 0, &seq, 1, 0, 1000);
        PAC_CHECK_EQ(get_stats(pac).threshold, down[i]);
    }
    PAC_CHECK_EQ(get_stats(pac).rx_holes, n_down);

    /* Back up: one MSS after 1000 intervals (1 s) without loss, the next
     * one 1 s later. */
    for (int i = 1; i < 1000; i++) {
        interval(pac, k++, 0, &seq, 1, 0, 1000);
        PAC_CHECK_EQ(get_stats(pac).threshold, 72000);
    }
    interval(pac, k++, 0, &seq, 1, 0, 1000);
    PAC_CHECK_EQ(get_stats(pac).threshold, 72000 + MSS);
    for (int i = 1; i < 1000; i++) {
        interval(pac, k++, 0, &seq, 1, 0, 1000);
        PAC_CHECK_EQ(get_stats(pac).threshold, 72000 + MSS);
    }
    interval(pac, k++, 0, &seq, 1, 0, 1000);
    PAC_CHECK_EQ(get_stats(pac).threshold, 72000 + 2 * MSS);

    /* Eq. (2) works below the ceiling and doubles back up to it only. */
    interval(pac, k++, 0, &seq, 1, 1, 1000);
    PAC_CHECK_EQ(get_stats(pac).threshold, (72000 + 2 * MSS) / 2);
    interval(pac, k++, 0, &seq, 1, 0, 1000);
    PAC_CHECK_EQ(get_stats(pac).threshold, 72000 + 2 * MSS);
    end_pac();
}

/* loss_floor_permille 1000 turns the loss cap off; holes are still
 * counted. */
static void
test_loss_cap_off(void)
{
    struct pac_config cfg;
    uint32_t seq = 1;
    struct pac *pac;

    control_config(&cfg);
    cfg.loss_floor_permille = 1000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    for (int k = 0; k < 3; k++) {
        seq += 1000;
        interval(pac, k, 0, &seq, 2, 0, 1000);
        PAC_CHECK_EQ(get_stats(pac).threshold, 96000);
    }
    PAC_CHECK_EQ(get_stats(pac).rx_holes, 2);
    end_pac();
}

/* The filters of end_interval(), mirrored: BW_S and in_flight_S are
 * exponential filters with gain 1/4, updated after the correction check.
 * BW is in bytes per microsecond. */
struct mirror {
    double bw_s;
    double if_s;
};

static void
mirror_update(struct mirror *m, double bw, uint64_t in_flight_now)
{
    m->bw_s += (bw - m->bw_s) / 4;
    m->if_s += (in_flight_now - m->if_s) / 4;
}

/* What eq. (6) as implemented does at the end of a correction run. */
struct correction {
    uint64_t expected;          /* in_flight after eq. (6). */
    bool corrected;             /* Whether eq. (6) lowers in_flight. */
};

/* Runs the deviation-correction scenario: a request puts 1000 * MSS in
 * flight (sent before the flow received anything, so that no flow's share
 * is involved: see test-pac-bugs.c for one that is), 'n_steady' intervals
 * receive 'n_per' x 1000 bytes each, then one interval receives 'n_last' x
 * 1000 bytes, 'n_ce' of them CE-marked.  Stores in '*c' what eq. (6) would
 * do, whether or not PAC is configured to apply it ('enabled', pac_config's
 * deviation_correction).  Returns the instance, or NULL if the run went
 * otherwise before the last interval. */
static struct pac *
correction_run_cfg(bool enabled, int n_steady, int n_per, int n_last,
                   int n_ce, struct correction *c)
{
    struct mirror m = { 0, 0 };
    struct pac_config cfg;
    uint64_t expect = 1000 * MSS;
    uint32_t seq = 1;
    struct pac *pac;
    int k;

    control_config(&cfg);
    cfg.init_window_segs = 1000;
    cfg.deviation_correction = enabled;
    pac = make_pac(&cfg);
    if (!pac || tx(pac, AT(0), 9, 1, 100, ACK, 0) != PAC_PASS
        || in_flight(pac) != expect) {
        return NULL;
    }
    for (k = 0; k < n_steady; k++) {
        interval(pac, k, 9, &seq, n_per, 0, 1000);
        expect -= n_per * 1000;
        if (in_flight(pac) != expect || get_stats(pac).corrections) {
            return NULL;
        }
        mirror_update(&m, n_per * 1000.0 / IV, expect);
    }

    interval(pac, k, 9, &seq, n_last, n_ce, 1000);
    expect -= n_last * 1000;
    {
        double bw = n_last * 1000.0 / IV;
        double alpha = (double) n_ce / n_last;

        c->corrected = false;
        if (m.bw_s > 0 && bw <= m.bw_s * (800 / 1000.0)) {
            double target = m.if_s * bw / (m.bw_s * (1 - alpha / 2));

            if (target < expect) {
                expect = (uint64_t) target;
                c->corrected = true;
            }
        }
    }
    c->expected = expect;
    return pac;
}

/* The same with the correction configured. */
static struct pac *
correction_run(int n_steady, int n_per, int n_last, int n_ce,
               struct correction *c)
{
    return correction_run_cfg(true, n_steady, n_per, n_last, n_ce, c);
}

/* A correction run with the correction configured: in_flight ends where
 * eq. (6) leaves it, and PAC counts a correction exactly when eq. (6)
 * corrects, as 'corrects' says it does. */
static void
correction_applied(int n_steady, int n_per, int n_last, int n_ce,
                   bool corrects)
{
    struct correction c;
    struct pac *pac;

    pac = correction_run(n_steady, n_per, n_last, n_ce, &c);
    PAC_CHECK(pac);
    PAC_CHECK_EQ(c.corrected, corrects);
    CHECK_IN_FLIGHT(pac, c.expected);
    PAC_CHECK_EQ(get_stats(pac).corrections, corrects);
    end_pac();
}

/* A correction run without CE marks where eq. (6) alone would correct, but
 * PAC does not ('enabled': whether the correction is configured): in_flight
 * stays at 'left', what the request asked for less what arrived. */
static void
correction_not_applied(bool enabled, int n_steady, int n_per, int n_last,
                       uint64_t left)
{
    struct correction c;
    struct pac *pac;

    pac = correction_run_cfg(enabled, n_steady, n_per, n_last, 0, &c);
    PAC_CHECK(pac);
    PAC_CHECK(c.corrected);             /* By eq. (6) alone. */
    CHECK_IN_FLIGHT(pac, left);
    PAC_CHECK_EQ(get_stats(pac).corrections, 0);
    end_pac();
}

/* Eq. (6) does not apply within a drain time (libpac's pac_dry_time()) of
 * a window trigger: a drop in throughput then is the answer's round trip.
 * Here the drop comes 4 ms after the request, pac_dry_time() is 13.6 ms. */
static void
test_deviation_not_after_window(void)
{
    correction_not_applied(true, 3, 10, 2, 1000 * MSS - 32000);
}

/* Eq. (6) after the filters have converged, without ECN marks. */
static void
test_deviation_correction_converged(void)
{
    correction_applied(20, 10, 7, 0, true);
}

/* Off by default (pac_config's deviation_correction): the same drop as in
 * test_deviation_correction_converged() leaves in_flight as it is. */
static void
test_deviation_correction_off(void)
{
    correction_not_applied(false, 20, 10, 7, 1000 * MSS - 207000);
}

/* With heavy marking the same drop is not blamed on the estimate: the
 * corrected value would be higher than in_flight, which is kept. */
static void
test_deviation_correction_alpha(void)
{
    struct correction c;
    struct pac *pac;

    pac = correction_run(20, 10, 7, 7, &c);
    PAC_CHECK(pac);
    PAC_CHECK(!c.corrected);
    CHECK_IN_FLIGHT(pac, c.expected);
    PAC_CHECK_EQ(c.expected, 1000 * MSS - 207000);
    PAC_CHECK_EQ(get_stats(pac).corrections, 0);
    PAC_CHECK_EQ(get_stats(pac).alpha_permille, 1000);
    end_pac();

    /* Half marked: still a correction, by a smaller factor. */
    correction_applied(20, 10, 6, 3, true);
}

/* A drop to just above lambda * BW_S corrects nothing. */
static void
test_deviation_no_correction(void)
{
    correction_applied(20, 10, 8, 0, false);
}

/* Eq. (6) needs 8 segments per interval at the smoothed rate to read a
 * drop: 5 segments per interval falling to 3 (0.6 of BW_S) is a segment's
 * jitter, not over-estimation, and corrects nothing; 10 falling to 7
 * (test_deviation_correction_converged) does.  40 intervals: past the
 * drain time after the request (threshold / 5 bytes per us, 19.2 ms). */
static void
test_deviation_needs_segments(void)
{
    correction_not_applied(true, 40, 5, 3, 1000 * MSS - 203000);
}

/* No data at all for max(1 ms, 8 base RTTs) with in_flight > 0: in_flight
 * is reset to 0. */
static void
test_silence_reset(void)
{
    struct pac_stats st;
    struct pac *pac;

    pac = make_control_pac(IV);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 0, 1, 0));
    CHECK_IN_FLIGHT(pac, IW);
    for (int k = 1; k < 8; k++) {
        PAC_CHECK(pac_next_wakeup(pac) <= AT(k * IV));
        if (k == 4) {
            /* A segment without payload is no data. */
            rx(pac, AT(3500), 0, 1, 0, ACK, PAC_ECN_ECT0);
        }
        run(pac, AT(k * IV));
        CHECK_IN_FLIGHT(pac, IW);
    }
    PAC_CHECK_EQ(get_stats(pac).silence_resets, 0);
    run(pac, AT(8 * IV));
    CHECK_IN_FLIGHT(pac, 0);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.silence_resets, 1);

    /* Nothing in flight or held: only the flow scan is due. */
    PAC_CHECK(pac_next_wakeup(pac) == AT(1000000));

    /* A new request counts its window as usual. */
    CHECK_PASS(request(pac, AT(8 * IV + 1), 1, 1, 1));
    CHECK_IN_FLIGHT(pac, IW);
    end_pac();
}

/* Short RTTs: the reset still waits at least 1 ms. */
static void
test_silence_reset_min(void)
{
    struct pac *pac;

    pac = make_control_pac(50);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 0, 1, 0));
    for (int t = 50; t < 1000; t += 50) {
        run(pac, AT(t));
        CHECK_IN_FLIGHT(pac, IW);
    }
    run(pac, AT(1000));
    CHECK_IN_FLIGHT(pac, 0);
    PAC_CHECK_EQ(get_stats(pac).silence_resets, 1);
    end_pac();
}

/* Data restarts the silence clock. */
static void
test_silence_reset_data(void)
{
    struct pac *pac;

    pac = make_control_pac(IV);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 0, 1, 0));
    for (int k = 1; k <= 12; k++) {
        if (k == 5) {
            rx_data(pac, AT(4500), 0, 1, 100);
        }
        run(pac, AT(k * IV));
        CHECK_IN_FLIGHT(pac, k < 5 ? IW : IW - 100);
    }
    run(pac, AT(13 * IV));
    CHECK_IN_FLIGHT(pac, 0);
    PAC_CHECK_EQ(get_stats(pac).silence_resets, 1);
    end_pac();
}

/* Data that arrives after PAC gave it up (here as dry) was late, not
 * absent: the datapath or the host delivered it late while the bottleneck
 * kept sending.  PAC then waits that long, and a quarter more, before the
 * next verdict (here a silence reset); gaps of more than 8 ms are the peer
 * sending unasked, not delivery; the allowance decays by an eighth per
 * second. */
static void
test_late_data_lengthens_silence(void)
{
    struct pac_stats st;
    struct pac *pac;

    pac = make_control_pac(50);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 0, 1, 0));
    rx_data(pac, AT(100), 0, 1, 1000);
    for (int t = 200; t <= 2400; t += 100) {
        run(pac, AT(t));
    }
    PAC_CHECK_EQ(get_stats(pac).dry_reclaims, 1);
    CHECK_IN_FLIGHT(pac, 0);

    /* The rest of the answer, all its trigger allowed, comes 2.4 ms after
     * its first segment: the verdict was wrong. */
    rx_data(pac, AT(2500), 0, 1001, IW - 1000);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.late_data, 1);
    PAC_CHECK_EQ(st.late_us, 2400);
    PAC_CHECK_EQ(st.reclaims_undone, 1);
    CHECK_IN_FLIGHT(pac, 0);

    /* Another request: its silence now lasts up to 3 ms, not 1 ms. */
    CHECK_PASS(request(pac, AT(2600), 1, 1, 1));
    for (int t = 2700; t <= 5500; t += 100) {
        run(pac, AT(t));
        CHECK_IN_FLIGHT(pac, IW);
    }
    for (int t = 5600; t <= 5800; t += 100) {
        run(pac, AT(t));
    }
    CHECK_IN_FLIGHT(pac, 0);
    PAC_CHECK_EQ(get_stats(pac).silence_resets, 1);

    /* Flow 0 sends again 9 ms after its last data: not a delivery delay. */
    rx_data(pac, AT(11500), 0, 1 + IW, 1000);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.late_data, 1);
    PAC_CHECK_EQ(st.late_us, 2400);

    /* The flow scan, once a second, lets the allowance decay. */
    run(pac, AT(1000000));
    PAC_CHECK_EQ(get_stats(pac).late_us, 2100);
    end_pac();
}

/* Runs PAC every 100 us from 'start' until 'n' dry reclaims (or for
 * 100 ms), while unasked data of flow 1, one segment each time, keeps PAC
 * from a silence reset; returns the time of the last run. */
static uint64_t
run_until_dry(struct pac *pac, uint64_t start, uint64_t n, uint32_t *bg_seq)
{
    uint64_t t;

    for (t = start; get_stats(pac).dry_reclaims < n && t < start + 100000;
         t += 100) {
        rx_data(pac, AT(t), 1, *bg_seq, MSS);
        *bg_seq += MSS;
        run(pac, AT(t));
    }
    return t - 100;
}

/* A PAC for the dry-verdict tests, or NULL.  Flow 1's data first sets the
 * peak rate, which the dry time depends on. */
static struct pac *
make_dry_test_pac(uint32_t *bg_seq)
{
    struct pac *pac;

    pac = make_control_pac(50);
    if (pac) {
        run_until_dry(pac, 0, 1, bg_seq);
    }
    return pac;
}

/* A peer silent in the middle of an answer smaller so far than its
 * previous one is more likely late than done: its outstanding bytes leave
 * in_flight only after PAC_UNFINISHED_DRY_WAITS (3) more dry times than
 * those of an answer of no expected size. */
static void
test_dry_waits_mid_answer(void)
{
    uint64_t first_spell, second_spell;
    uint32_t bg_seq = 1;
    struct pac *pac;

    pac = make_dry_test_pac(&bg_seq);
    PAC_CHECK(pac);
    PAC_CHECK_EQ(get_stats(pac).dry_reclaims, 0);

    /* The first answer (2 000 bytes, no size expected) goes dry after one
     * dry time. */
    CHECK_PASS(request(pac, AT(100000), 0, 1, 0));
    rx_data(pac, AT(100100), 0, 1, 2000);
    CHECK_PASS(tx(pac, AT(100150), 0, 2001, 0, ACK, 2));
    first_spell = run_until_dry(pac, 100200, 1, &bg_seq) - 100100;
    PAC_CHECK_EQ(get_stats(pac).dry_reclaims, 1);
    PAC_CHECK_EQ(get_stats(pac).dry_waits, 0);

    /* The second stops after 1 000 of the 2 000 expected bytes, which the
     * receiver acknowledged (the peer waits for no ACK): three dry times
     * more, then the same verdict. */
    CHECK_PASS(request(pac, AT(200000), 0, 2001, 1));
    rx_data(pac, AT(200100), 0, 2001, 1000);
    CHECK_PASS(tx(pac, AT(200150), 0, 3001, 0, ACK, 3));
    second_spell = run_until_dry(pac, 200200, 2, &bg_seq) - 200100;
    PAC_CHECK_EQ(get_stats(pac).dry_reclaims, 2);
    PAC_CHECK_EQ(get_stats(pac).dry_waits, 3);
    /* Within the 100 us steps of the run. */
    PAC_CHECK(second_spell >= 4 * first_spell - 400);
    PAC_CHECK(second_spell <= 4 * first_spell + 400);
    end_pac();
}

/* A peer may be waiting for an ACK that the receiver has not sent yet, or
 * that has not reached PAC (on a busy host, milliseconds late).  Its
 * silence takes its budget out of in_flight after one dry time but does
 * not mark it dry: the late ACK counts what it lets the peer send.  Once
 * it has an ACK for all its data and stays silent, it is dry, and an ACK
 * then triggers nothing. */
static void
test_no_dry_mark_while_acks_owed(void)
{
    uint32_t bg_seq = 1;
    uint64_t before, t;
    struct pac *pac;

    pac = make_dry_test_pac(&bg_seq);
    PAC_CHECK(pac);

    /* 2 000 bytes that the receiver does not acknowledge in time. */
    CHECK_PASS(request(pac, AT(100000), 0, 1, 0));
    rx_data(pac, AT(100100), 0, 1, 2000);
    t = run_until_dry(pac, 100200, 1, &bg_seq);
    PAC_CHECK_EQ(get_stats(pac).dry_reclaims, 1);

    before = in_flight(pac);
    CHECK_PASS(tx(pac, AT(t + 100), 0, 2001, 0, ACK, 1));
    PAC_CHECK(in_flight(pac) >= before + 2000);

    /* Silent again, with every byte acknowledged: dry.  A window update
     * (a pure ACK, which otherwise counts a segment) triggers nothing. */
    t = run_until_dry(pac, t + 200, 2, &bg_seq);
    PAC_CHECK_EQ(get_stats(pac).dry_reclaims, 2);
    before = in_flight(pac);
    CHECK_PASS(tx(pac, AT(t + 100), 0, 2001, 0, ACK, 2));
    CHECK_IN_FLIGHT(pac, before);
    end_pac();
}

/* Section III-C: two consecutive per-flow intervals whose received rate
 * fell to lambda times the previous one or less end slow start. */
static void
test_slow_start_inference(void)
{
    static const int pkts_per_iv[] = { 10, 5, 3 };
    struct pac_flow_info info;
    uint32_t seq = 1;
    struct pac *pac;

    pac = make_control_pac(IV);
    PAC_CHECK(pac);

    /* Per-flow intervals start at the flow's first data, AT(10). */
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < pkts_per_iv[k]; i++) {
            rx_data(pac, AT(10 + k * IV + 10 * i), 0, seq, 1000);
            seq += 1000;
            GET_FLOW(pac, 0, &info);
            PAC_CHECK(info.slow_start);
        }
    }
    /* The first segment of the fourth interval closes the third: 3000 <=
     * 0.8 * 5000, the second slowdown in a row. */
    rx_data(pac, AT(10 + 3 * IV), 0, seq, 1000);
    seq += 1000;
    GET_FLOW(pac, 0, &info);
    PAC_CHECK(!info.slow_start);

    /* A request after 250 ms of idleness (Linux: an RTO, at least 200 ms)
     * restarts slow start; one after less does not. */
    CHECK_PASS(tx(pac, AT(10 + 3 * IV + 249999), 0, seq, 100, ACK, 0));
    GET_FLOW(pac, 0, &info);
    PAC_CHECK(!info.slow_start);
    rx_data(pac, AT(500000), 0, seq, 100);
    seq += 100;
    GET_FLOW(pac, 0, &info);
    PAC_CHECK(!info.slow_start);
    CHECK_PASS(tx(pac, AT(750000), 0, seq, 100, ACK, 1));
    GET_FLOW(pac, 0, &info);
    PAC_CHECK(info.slow_start);
    end_pac();
}

/* Slowdowns must be consecutive. */
static void
test_slow_start_inference_consecutive(void)
{
    static const int pkts_per_iv[] = { 10, 5, 6, 4, 5 };
    struct pac_flow_info info;
    uint32_t seq = 1;
    struct pac *pac;

    pac = make_control_pac(IV);
    PAC_CHECK(pac);

    for (int k = 0; k < 5; k++) {
        for (int i = 0; i < pkts_per_iv[k]; i++) {
            rx_data(pac, AT(10 + k * IV + 10 * i), 0, seq, 1000);
            seq += 1000;
        }
    }
    rx_data(pac, AT(10 + 5 * IV), 0, seq, 1000);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK(info.slow_start);
    end_pac();
}

/* Regression: eq. (2)'s floor of two default MSS never lifts the
 * threshold above cfg.threshold (the buffer), e.g. with jumbo frames. */
static void
test_threshold_floor_jumbo(void)
{
    struct pac_config cfg;
    struct pac *pac;

    control_config(&cfg);
    cfg.threshold = 3000;
    cfg.default_mss = 9000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    rx(pac, AT(1), 0, 1, 100, ACK, PAC_ECN_CE);
    run(pac, AT(1000));
    PAC_CHECK_EQ(get_stats(pac).alpha_permille, 1000);
    PAC_CHECK(get_stats(pac).threshold <= 3000);
    end_pac();
}

/* Regression: time may start at 0 ("microseconds from any fixed origin",
 * pac.h); a silence that starts at time 0 is measured from time 0, not one
 * interval late (silent_since == 0 must not mean "not silent"). */
static void
test_silence_time_origin_zero(void)
{
    struct pac_config cfg;
    struct pac *pac;

    control_config(&cfg);
    drop_pac();
    rec_reset();
    pac = cur_pac = pac_create(&cfg, 0);
    PAC_CHECK(pac);

    rx(pac, 0, 0, 1, 0, ACK, PAC_ECN_ECT0);
    CHECK_PASS(tx(pac, 0, 0, 1, 100, ACK, 0));
    CHECK_IN_FLIGHT(pac, IW);
    for (uint64_t t = 1000; t < 8000; t += 1000) {
        run(pac, t);
        CHECK_IN_FLIGHT(pac, IW);
    }
    run(pac, 8000);
    CHECK_IN_FLIGHT(pac, 0);
    end_pac();
}

int
main(void)
{
    PAC_RUN_TEST(test_threshold_ecn);
    PAC_RUN_TEST(test_threshold_ecn_holds);
    PAC_RUN_TEST(test_threshold_floor);
    PAC_RUN_TEST(test_threshold_ecn_off);
    PAC_RUN_TEST(test_threshold_floor_jumbo);
    PAC_RUN_TEST(test_loss_cap);
    PAC_RUN_TEST(test_loss_cap_off);
    PAC_RUN_TEST(test_deviation_not_after_window);
    PAC_RUN_TEST(test_deviation_correction_converged);
    PAC_RUN_TEST(test_deviation_correction_off);
    PAC_RUN_TEST(test_deviation_correction_alpha);
    PAC_RUN_TEST(test_deviation_no_correction);
    PAC_RUN_TEST(test_deviation_needs_segments);
    PAC_RUN_TEST(test_silence_reset);
    PAC_RUN_TEST(test_silence_reset_min);
    PAC_RUN_TEST(test_silence_reset_data);
    PAC_RUN_TEST(test_late_data_lengthens_silence);
    PAC_RUN_TEST(test_dry_waits_mid_answer);
    PAC_RUN_TEST(test_no_dry_mark_while_acks_owed);
    PAC_RUN_TEST(test_silence_time_origin_zero);
    PAC_RUN_TEST(test_slow_start_inference);
    PAC_RUN_TEST(test_slow_start_inference_consecutive);
    drop_pac();
    PAC_TEST_MAIN_END;
}
