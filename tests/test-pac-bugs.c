/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Regression tests of bugs found in libpac, one test each: each names the
 * bug and the expected behaviour. */

#include "pac.h"

#include "pac-test-fixture.h"

/* Bug 1: eq. (6) must not overshoot.  correct_in_flight() takes the
 * excess from flows; reclaiming each visited flow's whole outstanding share
 * would leave in_flight below in_flight_S * BW_T / (BW_S * (1 - alpha /
 * 2)), down to 0 when one flow holds it all (while its data is still
 * coming).  Eq. (6) says min(in_flight, target).  Scenario: one
 * request of 1000 MSS (attributed to its flow), 20 intervals of 10000
 * bytes, then one of 7000 bytes (BW_T <= lambda * BW_S). */
static void
test_bug_eq6_overshoot(void)
{
    double bw_s = 0, if_s = 0, target;
    uint64_t expect = 1000 * MSS;
    struct pac_config cfg;
    uint32_t seq = 1;
    struct pac *pac;

    pac_config_init(&cfg);
    cfg.fast_path = false;      /* The tracked algorithm. */
    cfg.base_rtt_us = 1000;
    cfg.init_window_segs = 1000;
    cfg.deviation_correction = true;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    CHECK_PASS(request(pac, AT(0), 9, 1, 0));
    for (int k = 0; k < 21; k++) {
        int n = k < 20 ? 10 : 7;

        for (int i = 0; i < n; i++) {
            rx_data(pac, AT(k * 1000 + 1 + i), 9, seq, 1000);
            seq += 1000;
        }
        run(pac, AT((k + 1) * 1000));
        expect -= n * 1000;
        if (k < 20) {
            CHECK_IN_FLIGHT(pac, expect);
            bw_s += (10.0 - bw_s) / 4;
            if_s += (expect - if_s) / 4;
        }
    }
    target = if_s * 7.0 / bw_s;
    PAC_CHECK(7.0 <= bw_s * 0.8 && target < expect);
    PAC_CHECK_EQ(get_stats(pac).corrections, 1);
    CHECK_IN_FLIGHT(pac, (uint64_t) target);
    end_pac();
}

/* NULL handles: emitted as given. */
static int null_emits;

static void
null_emit(void *aux, void *pkt, enum pac_emit emit)
{
    (void) aux;
    if (!pkt && emit == PAC_EMIT_RELEASE) {
        null_emits++;
    } else {
        rec_emit(aux, pkt, emit);
    }
}

/* Bug 2: a held packet whose handle is NULL is emitted like any other.
 * Telling pac_tx()'s own packet apart by its handle (NULL outside pac_tx())
 * would take it for that packet: it would be lost, and counted as
 * released.  pac.h says handles are opaque to PAC; nothing forbids NULL (a
 * caller may use indices cast to pointers, 0 included). */
static void
test_bug_null_handle_lost(void)
{
    struct pac_segment s;
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);
    null_emits = 0;

    CHECK_PASS(request(pac, AT(0), 1, 1, 0));
    CHECK_PASS(tx(pac, AT(1), 0, 1, 0, ACK, 1));
    s = tx_seg(0, 1461, 0, ACK);
    CHECK_VERDICT(pac_tx(pac, &s, NULL, AT(2), null_emit, NULL), PAC_HELD);
    PAC_CHECK_EQ(get_stats(pac).held, 1);
    pac_flush(pac, null_emit, NULL);
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    PAC_CHECK_EQ(null_emits, 1);
    end_pac();
}

int
main(void)
{
    PAC_RUN_TEST(test_bug_eq6_overshoot);
    PAC_RUN_TEST(test_bug_null_handle_lost);
    drop_pac();
    PAC_TEST_MAIN_END;
}
