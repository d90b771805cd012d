/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of the release order of held packets: the MLFQ (PAC paper,
 * section III-D: strict priority between levels, per-flow round robin
 * within a level, demotion by received bytes), the max_hold timers, the
 * held-packet cap, pac_flush() and pac_destroy().
 *
 * Most tests hold slow-start ACKs of 1 MSS (trigger 2 MSS = 2920 bytes)
 * behind a "filler" request on another flow, and then let data in: the
 * filler's answer, and each released ACK's own data, on its own flow. */

#include "pac.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pac-test-fixture.h"

#define MIN(A, B) ((A) < (B) ? (A) : (B))

/* Returns the index in 'rec' of packet 'pkt', or -1 unless it was emitted
 * exactly once and with PAC_EMIT_RELEASE. */
static int
released_at(int pkt)
{
    int at = -1;

    for (size_t i = 0; i < n_rec; i++) {
        if (rec[i].pkt == pkt) {
            if (at >= 0 || rec[i].emit != PAC_EMIT_RELEASE) {
                return -1;
            }
            at = (int) i;
        }
    }
    return at;
}

/* Checks that packets A and B were each released once, A first. */
#define CHECK_RELEASED_BEFORE(A, B)                                     \
    do {                                                                \
        PAC_CHECK(released_at(A) >= 0);                                 \
        PAC_CHECK(released_at(B) >= 0);                                 \
        PAC_CHECK(released_at(A) < released_at(B));                     \
    } while (0)

/* Threshold 30000 (ROOM payload bytes) and IW 20 segments: one request
 * (FILL bytes) is more than the threshold admits, so that everything else
 * waits behind it. */
#define ROOM 28703
#define FILL (20 * MSS)

static void
sched_config(struct pac_config *cfg)
{
    test_config(cfg);
    cfg->threshold = 30000;
    cfg->init_window_segs = 20;
}

/* A new instance of sched_config(), or NULL. */
static struct pac *
make_sched_pac(void)
{
    struct pac_config cfg;

    sched_config(&cfg);
    return make_pac(&cfg);
}

/* The new connections' reserve (cfg.new_flow_reserve): the receiver
 * opened connection 21 at 'opened' (it sends its SYN then), and 'burst'
 * others 1 us later; older flows
 * 0-7 (17 000 bytes received each: level 0, not new) send a request each,
 * at 1.2 s, until one is held; then a new connection, flow 20, sends its
 * SYN and, after the peer's SYN-ACK, its request.  Returns how many older
 * requests passed, the new connection's verdicts in '*syn_v' and '*req_v',
 * and whether the older request held was still held at the end in
 * '*older_held'. */
static int
reserve_scenario_burst(uint32_t reserve, uint64_t opened, int burst,
                       enum pac_verdict *syn_v, enum pac_verdict *req_v,
                       bool *older_held)
{
    struct pac_config cfg;
    struct pac *pac;
    uint32_t seq[8];
    int passed = 0;

    test_config(&cfg);
    cfg.new_flow_reserve = reserve;
    pac = make_pac(&cfg);
    if (!pac) {
        return -1;
    }
    for (int f = 0; f < 8; f++) {
        seq[f] = ack_flow(pac, AT(0), f, 17000, f);
    }
    vm_syn(pac, opened, 21, 1460, 9);
    for (int i = 0; i < burst; i++) {
        vm_syn(pac, opened + 1, 30 + i, 1460, 40 + i);
    }
    for (int f = 0; f < 8; f++) {
        if (request(pac, AT(1200000), f, seq[f], 10 + f) == PAC_HELD) {
            break;
        }
        passed++;
    }
    rec_reset();
    *syn_v = vm_syn(pac, AT(1200002), 20, 1460, 30);
    peer_synack(pac, AT(1200003), 20, 5000, 1460);
    *req_v = tx(pac, AT(1200004), 20, 5001, 100, ACK, 31);
    *older_held = n_rec == 0 && get_stats(pac).held >= 1;
    end_pac();
    return passed;
}

/* reserve_scenario_burst() without other connections opened beside the
 * new one. */
static int
reserve_scenario_at(uint32_t reserve, uint64_t opened,
                    enum pac_verdict *syn_v, enum pac_verdict *req_v,
                    bool *older_held)
{
    return reserve_scenario_burst(reserve, opened, 0, syn_v, req_v,
                                  older_held);
}

/* reserve_scenario_at() with connection 21 opened just before the older
 * requests. */
static int
reserve_scenario(uint32_t reserve, enum pac_verdict *syn_v,
                 enum pac_verdict *req_v, bool *older_held)
{
    return reserve_scenario_at(reserve, AT(1199000), syn_v, req_v,
                               older_held);
}

/* Older flows fit under the threshold less the reserve, so the older
 * request that the whole threshold would still have taken waits; a new
 * connection's handshake and first request go ahead of it.  Without the
 * reserve the new connection's request waits behind the older request;
 * its SYN passes either way (a SYN brings a frame only, and passes a
 * window trigger that waits, as capped ACKs do). */
static void
test_new_flow_reserve(void)
{
    enum pac_verdict syn_v, req_v;
    bool older_held;
    int with, without;

    without = reserve_scenario(0, &syn_v, &req_v, &older_held);
    PAC_CHECK(without > 0 && without < 8);
    PAC_CHECK_EQ(syn_v, PAC_PASS);
    PAC_CHECK_EQ(req_v, PAC_HELD);
    PAC_CHECK(older_held);

    with = reserve_scenario(16384, &syn_v, &req_v, &older_held);
    PAC_CHECK(with > 0 && with < without);
    PAC_CHECK_EQ(syn_v, PAC_PASS);
    PAC_CHECK_EQ(req_v, PAC_PASS);
    PAC_CHECK(older_held);
}

/* The reserve lapses a second after the receiver's last new connection:
 * without new connections it would only lower every other flow's
 * threshold.  Connection 21 opened 1.2 s before the older requests, which
 * then take as much as without a reserve; the next new connection's SYN
 * brings the reserve back, but what older flows already took stays
 * theirs, so its request waits as without one. */
static void
test_new_flow_reserve_lapses(void)
{
    enum pac_verdict syn_v, req_v;
    bool older_held;
    int lapsed, without;

    without = reserve_scenario_at(0, AT(0), &syn_v, &req_v, &older_held);
    lapsed = reserve_scenario_at(16384, AT(0), &syn_v, &req_v, &older_held);
    PAC_CHECK(without > 0);
    PAC_CHECK_EQ(lapsed, without);
    PAC_CHECK_EQ(syn_v, PAC_PASS);
    PAC_CHECK_EQ(req_v, PAC_HELD);
    PAC_CHECK(older_held);
}

/* Connections the receiver opens in a burst are an incast's: none of them
 * is new, however little it has received, and they do not raise the
 * reserve, so that neither the incast's first round takes the place of a
 * short flow beside it nor the reserve takes room from the incast.
 * Connection 21 and five others opened within 10 ms: the older requests
 * take as much as without a reserve, and connection 20, opened in the same
 * 10 ms, waits as they do.  With two others, the reserve is up and 20
 * goes ahead. */
static void
test_new_flow_burst_not_new(void)
{
    enum pac_verdict syn_v, req_v;
    bool older_held;
    int without, burst, lone;

    without = reserve_scenario_burst(0, AT(1199000), 5, &syn_v, &req_v,
                                     &older_held);
    burst = reserve_scenario_burst(16384, AT(1199000), 5, &syn_v, &req_v,
                                   &older_held);
    PAC_CHECK_EQ(burst, without);
    PAC_CHECK_EQ(syn_v, PAC_PASS);
    PAC_CHECK_EQ(req_v, PAC_HELD);
    lone = reserve_scenario_burst(16384, AT(1199000), 2, &syn_v, &req_v,
                                  &older_held);
    PAC_CHECK(lone < without);
    PAC_CHECK_EQ(req_v, PAC_PASS);
}

/* The reserve is at most a quarter of the threshold, and older flows'
 * budget never reaches into it: with a reserve as large as the threshold,
 * older requests still fill three quarters of it. */
static void
test_new_flow_reserve_quarter(void)
{
    enum pac_verdict syn_v, req_v;
    bool older_held;

    /* Each older request takes about an initial window (14 600 bytes) and
     * three quarters of 96 000 bytes hold four of them. */
    PAC_CHECK(reserve_scenario(96000, &syn_v, &req_v, &older_held) >= 4);
}

/* 'n' full segments of 'flow' from 'seq' on, one a microsecond from
 * 'start'; returns the sequence number after them. */
static uint32_t
rx_segments(struct pac *pac, uint64_t start, int flow, uint32_t seq, int n)
{
    for (int i = 0; i < n; i++) {
        rx_data(pac, start + i, flow, seq + i * MSS, MSS);
    }
    return seq + n * MSS;
}

/* While a new connection's request waits for more room than the reserve,
 * older flows leave it that room.  Threshold 30000: older flow 0 is in its
 * third answer, whose size the first two told (58 500 bytes), so its ACKs
 * are capped and pass a window trigger that waits; older flow 1 has a
 * request in flight.  New flow 20's request (IW) then does not fit, and
 * flow 0's answer goes on arriving, two segments at a time, each
 * acknowledged.  Returns how many of flow 0's ACKs went (passed or
 * released) before the new request, or -1 if it never went. */
static int
new_room_scenario(uint32_t reserve)
{
    struct pac_config cfg;
    struct pac *pac;
    uint32_t seq = 5001;
    int before = 0;
    bool went = false;

    test_config(&cfg);
    cfg.threshold = 30000;
    cfg.new_flow_reserve = reserve;
    pac = make_pac(&cfg);
    if (!pac) {
        return -1;
    }
    vm_syn(pac, AT(0), 0, MSS, 1);
    peer_synack(pac, AT(10), 0, 5000, MSS);
    for (int a = 0; a < 3; a++) {
        tx(pac, AT(1000 * (a + 1)), 0, seq, 100, ACK, 2 + a);
        if (a < 2) {
            seq = rx_segments(pac, AT(1000 * (a + 1) + 100), 0, seq, 40);
            rx_data(pac, AT(1000 * (a + 1) + 150), 0, seq, 100);
            seq += 100;
            tx(pac, AT(1000 * (a + 1) + 200), 0, seq, 0, ACK, 5 + a);
        }
    }
    for (int k = 0; k < 6; k++) {
        seq = rx_segments(pac, AT(3100 + k * 10), 0, seq, 2);
        tx(pac, AT(3105 + k * 10), 0, seq, 0, ACK, 10 + k);
    }
    vm_syn(pac, AT(3150), 1, MSS, 20);
    peer_synack(pac, AT(3160), 1, 9000, MSS);
    tx(pac, AT(3170), 1, 9001, 100, ACK, 21);
    rx_segments(pac, AT(3175), 1, 9001, 4);
    tx(pac, AT(3180), 1, 9001 + 4 * MSS, 100, ACK, 22);

    vm_syn(pac, AT(3200), 20, MSS, 30);
    peer_synack(pac, AT(3210), 20, 7000, MSS);
    rec_reset();
    went = tx(pac, AT(3220), 20, 7001, 100, ACK, 31) == PAC_PASS;
    for (int k = 0; k < 20 && !went; k++) {
        seq = rx_segments(pac, AT(3300 + k * 10), 0, seq, 2);
        for (size_t i = 0; i < n_rec && !went; i++) {
            went = rec[i].pkt == 31;
            before += !went;
        }
        rec_reset();
        if (!went) {
            before += tx(pac, AT(3305 + k * 10), 0, seq, 0, ACK, 100 + k)
                      == PAC_PASS;
        }
    }
    end_pac();
    return went ? before : -1;
}

static void
test_new_flow_room_grows(void)
{
    int before;

    /* Without the reserve the capped ACKs take the room as it comes: the
     * new request goes only after several of them. */
    before = new_room_scenario(0);
    PAC_CHECK(before >= 5);
    /* With a reserve smaller than the request's window, the ACKs leave
     * the request the room it waits for: it goes first. */
    PAC_CHECK_EQ(new_room_scenario(4000), 0);
}

/* A peer that sends again data whose ACK PAC holds has not seen that ACK
 * in time (its retransmission timer or tail loss probe ran out):
 * pac_peer_retransmits counts it.  Data sent again whose ACK had left,
 * or past what the held ACK acknowledges, does not count. */
static void
test_peer_retransmits(void)
{
    struct pac *pac;
    uint32_t b;

    pac = make_sched_pac();
    PAC_CHECK(pac);
    b = ack_flow(pac, AT(0), 1, 20000, 0);
    rx_data(pac, AT(0), 1, b, 2 * MSS);
    CHECK_PASS(request(pac, AT(1), 0, 1, 1));
    CHECK_HELD(tx(pac, AT(2), 1, b + 2 * MSS, 0, ACK, 2));

    rx_data(pac, AT(3), 1, b - 2 * MSS, MSS);          /* Acknowledged. */
    rx_data(pac, AT(4), 1, b + 2 * MSS, MSS);          /* New. */
    PAC_CHECK_EQ(get_stats(pac).peer_retransmits, 0);
    rx_data(pac, AT(5), 1, b + MSS, MSS);              /* Held ACK's. */
    PAC_CHECK_EQ(get_stats(pac).peer_retransmits, 1);
    end_pac();
}

/* A flow that has received >= 20000 bytes is at level 1; level 0 is served
 * first. */
static void
test_mlfq_priority(void)
{
    struct pac_flow_info info;
    struct pac_stats st;
    uint32_t a, b;
    struct pac *pac;

    pac = make_sched_pac();
    PAC_CHECK(pac);
    PAC_CHECK_EQ(max_payload(30000), ROOM);

    rx_data(pac, AT(0), 3, 1, 19999);
    GET_FLOW(pac, 3, &info);
    PAC_CHECK_EQ(info.level, 0);
    rx_data(pac, AT(0), 3, 20000, 1);
    GET_FLOW(pac, 3, &info);
    PAC_CHECK_EQ(info.level, 1);
    PAC_CHECK_EQ(info.rx_bytes, 20000);

    b = ack_flow(pac, AT(1), 1, 20000, 0);
    GET_FLOW(pac, 1, &info);
    PAC_CHECK_EQ(info.level, 1);
    a = ack_flow(pac, AT(2), 0, 1000, 1);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.level, 0);
    CHECK_IN_FLIGHT(pac, 0);

    CHECK_PASS(request(pac, AT(3), 2, 1, 2));
    CHECK_IN_FLIGHT(pac, FILL);
    CHECK_HELD(tx(pac, AT(4), 1, b, 0, ACK, 3));       /* Level 1. */
    CHECK_HELD(tx(pac, AT(5), 0, a, 0, ACK, 4));       /* Level 0. */
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 2);
    PAC_CHECK_EQ(st.held_per_level[0], 1);
    PAC_CHECK_EQ(st.held_per_level[1], 1);

    rx_data(pac, AT(6), 2, 1, FILL - (ROOM - 2920));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 4);
    CHECK_IN_FLIGHT(pac, ROOM);
    rx_data(pac, AT(7), 0, a, 2920);
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 3);
    CHECK_IN_FLIGHT(pac, ROOM);
    end_pac();
}

/* Strict priority: a level-1 ACK that fits still waits while a level-0
 * packet waits. */
static void
test_mlfq_strict(void)
{
    struct pac *pac;
    uint32_t b;

    pac = make_sched_pac();
    PAC_CHECK(pac);

    b = ack_flow(pac, AT(0), 1, 20000, 0);
    rx_data(pac, AT(0), 1, b, 2 * MSS);
    CHECK_PASS(tx(pac, AT(1), 1, b, 0, ACK, 1));       /* 2920 */
    CHECK_HELD(request(pac, AT(2), 0, 1, 2));          /* + FILL */
    CHECK_HELD(tx(pac, AT(3), 1, b + MSS, 0, ACK, 3)); /* Fits. */
    CHECK_N_EMITTED(0);
    CHECK_IN_FLIGHT(pac, 2920);

    rx_data(pac, AT(4), 1, b + 2 * MSS, 2920);         /* 0 */
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 2);
    CHECK_IN_FLIGHT(pac, FILL);

    rx_data(pac, AT(5), 0, 1, FILL - (ROOM - 2920) - 1);
    CHECK_N_EMITTED(1);
    rx_data(pac, AT(6), 0, FILL - (ROOM - 2920), 1);
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 3);
    CHECK_IN_FLIGHT(pac, ROOM);
    end_pac();
}

/* Within a level, per-flow round robin: A B A B A B, as data comes in. */
static void
test_mlfq_round_robin(void)
{
    static const int order[] = { 3, 6, 4, 7, 5, 8 };
    uint32_t seq[2], data[2];
    struct pac *pac;

    pac = make_sched_pac();
    PAC_CHECK(pac);

    /* Flows 0 and 1 have received 3 MSS each that they have not
     * acknowledged yet. */
    for (int f = 0; f < 2; f++) {
        seq[f] = ack_flow(pac, AT(0), f, MSS, f);
        rx_data(pac, AT(0), f, seq[f], 2 * MSS);
        data[f] = seq[f] + 2 * MSS;
    }
    CHECK_IN_FLIGHT(pac, 0);
    CHECK_PASS(request(pac, AT(1), 2, 1, 2));

    for (int f = 0; f < 2; f++) {
        for (int i = 0; i < 3; i++) {
            CHECK_HELD(tx(pac, AT(2), f, seq[f] + i * MSS, 0, ACK,
                          3 + 3 * f + i));
        }
    }
    PAC_CHECK_EQ(get_stats(pac).held, 6);
    PAC_CHECK_EQ(get_stats(pac).held_per_level[0], 6);
    PAC_CHECK_EQ(get_stats(pac).max_held_seen, 6);

    /* The filler's answer makes room for one ACK; then each ACK's data
     * makes room for the next. */
    rx_data(pac, AT(10), 2, 1, FILL - (ROOM - 2920));
    for (int i = 0; i < 6; i++) {
        int f = i % 2;

        if (i) {
            int prev = !f;

            rx_data(pac, AT(10 + i), prev, data[prev], 2920);
            data[prev] += 2920;
        }
        CHECK_N_EMITTED(i + 1);
        CHECK_RELEASED(i, order[i]);
        CHECK_IN_FLIGHT(pac, ROOM);
    }
    PAC_CHECK_EQ(get_stats(pac).released[PAC_REL_FIT], 6);
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    end_pac();
}

/* One burst after the set-up of test_mlfq_round_robin (flows 0 and 1 hold
 * three ACKs each behind the filler; flow 1 has received one MSS more,
 * not yet acknowledged): the filler's whole answer and flow 1's ACK of its
 * last MSS (test packet 9), handled packet by packet or, if 'batched',
 * between pac_batch_begin() and pac_batch_end().  Records the releases in
 * 'rec'; returns packet 9's verdict and the in-flight estimate at the end
 * in '*in_flightp'. */
static enum pac_verdict
burst_after_round_robin(bool batched, uint64_t *in_flightp)
{
    enum pac_verdict v;
    uint32_t seq[2];
    struct pac *pac;

    pac = make_sched_pac();
    if (!pac) {
        return PAC_PASS;
    }
    for (int f = 0; f < 2; f++) {
        seq[f] = ack_flow(pac, AT(0), f, MSS, f);
        rx_data(pac, AT(0), f, seq[f], (2 + f) * MSS);
    }
    request(pac, AT(1), 2, 1, 2);
    for (int f = 0; f < 2; f++) {
        for (int i = 0; i < 3; i++) {
            tx(pac, AT(2), f, seq[f] + i * MSS, 0, ACK, 3 + 3 * f + i);
        }
    }
    rec_reset();

    if (batched) {
        pac_batch_begin(pac);
    }
    rx_data(pac, AT(10), 2, 1, FILL);
    v = tx(pac, AT(10), 1, seq[1] + 3 * MSS, 0, ACK, 9);
    if (batched) {
        if (n_rec) {
            return PAC_PASS;    /* Released inside the burst. */
        }
        pac_batch_end(pac, rec_emit, NULL);
    }
    *in_flightp = in_flight(pac);
    return v;
}

/* Bursts: inside one nothing is released; its end releases, in the same
 * order and to the same in-flight, what packet-by-packet handling
 * released during it, and a segment that would have passed then (its flow
 * is not yet served inside the burst) is held and released after its
 * flow's earlier packets. */
static void
test_batch_same_releases(void)
{
    static const int order[] = { 3, 6, 4, 7, 5, 8 };
    uint64_t per_packet_in_flight = 0, batched_in_flight = 0;

    CHECK_PASS(burst_after_round_robin(false, &per_packet_in_flight));
    PAC_CHECK_EQ(per_packet_in_flight, 7 * 2920);
    CHECK_N_EMITTED(6);
    for (int i = 0; i < 6; i++) {
        CHECK_RELEASED(i, order[i]);
    }

    CHECK_HELD(burst_after_round_robin(true, &batched_in_flight));
    CHECK_N_EMITTED(7);
    for (int i = 0; i < 6; i++) {
        CHECK_RELEASED(i, order[i]);
    }
    CHECK_RELEASED(6, 9);
    PAC_CHECK_EQ(batched_in_flight, per_packet_in_flight);
    PAC_CHECK_EQ(get_stats(cur_pac).held, 0);
    end_pac();
}

/* A flow demoted while it has held packets moves with them. */
static void
test_mlfq_demotion_moves_held(void)
{
    struct pac_flow_info info;
    struct pac_config cfg;
    struct pac_stats st;
    uint32_t a, b;
    struct pac *pac;

    sched_config(&cfg);
    cfg.level_bytes[0] = 5000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    /* Flow 0 has received 1560 + 2000 bytes, 2000 not acknowledged. */
    a = ack_flow(pac, AT(0), 0, 100, 0);
    rx_data(pac, AT(0), 0, a, 2000);
    CHECK_PASS(request(pac, AT(1), 2, 1, 1));          /* FILL */
    CHECK_HELD(tx(pac, AT(2), 0, a, 0, ACK, 2));           /* 2920 */
    CHECK_HELD(tx(pac, AT(3), 0, a + 2000, 0, ACK, 3));    /* 4000 */
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held_per_level[0], 2);

    /* 1440 more bytes make 5000: level 1, with both ACKs. */
    rx_data(pac, AT(4), 0, a + 2000, 1440);
    CHECK_N_EMITTED(0);
    CHECK_IN_FLIGHT(pac, FILL);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 2);
    PAC_CHECK_EQ(st.held_per_level[0], 0);
    PAC_CHECK_EQ(st.held_per_level[1], 2);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.level, 1);
    PAC_CHECK_EQ(info.held, 2);

    /* A level-0 flow now goes first. */
    b = ack_flow(pac, AT(5), 1, MSS, 4);
    rx_data(pac, AT(5), 1, b, MSS);
    CHECK_HELD(tx(pac, AT(6), 1, b, 0, ACK, 5));
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held_per_level[0], 1);
    PAC_CHECK_EQ(st.held_per_level[1], 2);

    rx_data(pac, AT(7), 2, 1, FILL - (ROOM - 2920));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 5);

    /* Then flow 0's, as room is made. */
    rx_data(pac, AT(8), 1, b + MSS, 2920);
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 2);
    CHECK_IN_FLIGHT(pac, ROOM);
    rx_data(pac, AT(9), 0, a + 3440, 2920);
    CHECK_N_EMITTED(2);
    rx_data(pac, AT(10), 2, 1 + FILL - (ROOM - 2920), 4000 - 2920);
    CHECK_N_EMITTED(3);
    CHECK_RELEASED(2, 3);
    CHECK_IN_FLIGHT(pac, ROOM);
    end_pac();
}

/* Four levels with custom thresholds: demotion by received bytes, and
 * strict priority among all four. */
static void
test_mlfq_four_levels(void)
{
    static const uint32_t got[] = { 999, 1000, 5000, 12000 };
    struct pac_flow_info info;
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;

    sched_config(&cfg);
    cfg.n_levels = 4;
    cfg.level_bytes[0] = 1000;
    cfg.level_bytes[1] = 5000;
    cfg.level_bytes[2] = 10000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    for (int f = 0; f < 4; f++) {
        rx_data(pac, AT(0), f, 1, got[f]);
        GET_FLOW(pac, f, &info);
        PAC_CHECK_EQ(info.level, f);    /* Flow 3 straight to level 3. */
    }
    rx_data(pac, AT(1), 4, 1, 4999);
    GET_FLOW(pac, 4, &info);
    PAC_CHECK_EQ(info.level, 1);
    rx_data(pac, AT(1), 4, 5000, 1);
    GET_FLOW(pac, 4, &info);
    PAC_CHECK_EQ(info.level, 2);
    rx_data(pac, AT(1), 4, 5001, 100000);
    GET_FLOW(pac, 4, &info);
    PAC_CHECK_EQ(info.level, 3);        /* Never beyond the last. */
    CHECK_IN_FLIGHT(pac, 0);

    /* Each flow's first ACK acknowledges nothing (one MSS); its second,
     * 999 bytes for flow 0 and an MSS for the others. */
    CHECK_PASS(request(pac, AT(10), 5, 1, 0));
    for (int f = 3; f >= 0; f--) {
        CHECK_PASS(tx(pac, AT(11), f, 1, 0, ACK, 4 - f));
    }
    CHECK_IN_FLIGHT(pac, FILL + 4 * MSS);
    for (int f = 3; f >= 0; f--) {
        CHECK_HELD(tx(pac, AT(12), f, 1 + MIN(got[f], MSS), 0, ACK,
                      8 - f));
    }
    st = get_stats(pac);
    for (int l = 0; l < 4; l++) {
        PAC_CHECK_EQ(st.held_per_level[l], 1);
    }

    /* Room for all four: they go in level order. */
    rx_data(pac, AT(20), 5, 1,
            FILL + 4 * MSS - (ROOM - (999 + MSS) - (1000 + MSS) - 2 * 2920));
    CHECK_N_EMITTED(4);
    for (int i = 0; i < 4; i++) {
        CHECK_RELEASED(i, 8 - i);
    }
    CHECK_IN_FLIGHT(pac, ROOM);
    end_pac();
}

/* One level: everything is round robin. */
static void
test_mlfq_one_level(void)
{
    struct pac_flow_info info;
    struct pac_config cfg;
    struct pac *pac;

    sched_config(&cfg);
    cfg.n_levels = 1;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    rx_data(pac, AT(0), 0, 1, 1000000);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.level, 0);
    CHECK_PASS(tx(pac, AT(1), 2, 1, 100, ACK, 0));
    CHECK_PASS(tx(pac, AT(2), 0, 1, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(3), 0, 1461, 0, ACK, 2));
    PAC_CHECK_EQ(get_stats(pac).held_per_level[0], 1);
    end_pac();
}

/* max_hold: an ACK held max_hold_us is released by pac_run(), at the
 * deadline that pac_next_wakeup() announces. */
static void
test_max_hold(void)
{
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;

    sched_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    PAC_CHECK_EQ(cfg.max_hold_us, 20000);

    /* Flows 0 and 1 received data that no trigger counted. */
    rx_data(pac, AT(0), 0, 1, 2000);
    rx_data(pac, AT(0), 1, 1, 2000);
    CHECK_PASS(request(pac, AT(0), 2, 1, 0));
    CHECK_PASS(tx(pac, AT(0), 0, 1, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(100), 0, 1461, 0, ACK, 2));
    CHECK_PASS(tx(pac, AT(200), 1, 1, 0, ACK, 3));
    CHECK_HELD(tx(pac, AT(300), 1, 1461, 0, ACK, 4));
    PAC_CHECK(pac_next_wakeup(pac) == AT(20100));

    run(pac, AT(20099));
    CHECK_N_EMITTED(0);
    PAC_CHECK(pac_next_wakeup(pac) == AT(20100));
    run(pac, AT(20100));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 2);
    CHECK_IN_FLIGHT(pac, FILL + 2 * MSS + 2920);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.released[PAC_REL_MAX_HOLD], 1);
    PAC_CHECK_EQ(st.released[PAC_REL_FIT], 0);
    PAC_CHECK_EQ(st.held, 1);

    PAC_CHECK(pac_next_wakeup(pac) == AT(20300));
    run(pac, AT(20300));
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 4);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.released[PAC_REL_MAX_HOLD], 2);
    PAC_CHECK_EQ(st.held, 0);

    /* Nothing held: the next deadline is the control interval (in_flight
     * > 0), here at its 100 ms cap. */
    PAC_CHECK(pac_next_wakeup(pac) == AT(100000));
    end_pac();
}

/* The hold bound limits how long a flow waits for its next packet to
 * leave (what the peer's retransmission timer measures): a packet's clock
 * starts when it becomes its flow's oldest held packet.  A late pac_run()
 * releases every flow head that is due, oldest first. */
static void
test_max_hold_late_run(void)
{
    struct pac *pac;

    pac = make_sched_pac();
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 2, 1, 0));
    CHECK_PASS(tx(pac, AT(0), 0, 1, 0, ACK, 1));
    CHECK_PASS(tx(pac, AT(0), 1, 1, 0, ACK, 2));
    CHECK_HELD(tx(pac, AT(10), 1, 1461, 0, ACK, 3));
    CHECK_HELD(tx(pac, AT(20), 0, 1461, 0, ACK, 4));
    CHECK_HELD(tx(pac, AT(30), 1, 2921, 0, ACK, 5));
    PAC_CHECK(pac_next_wakeup(pac) == AT(20010));

    /* Only pac_run() runs the timers; an overdue wakeup is "now". */
    CHECK_HELD(tx(pac, AT(40000), 0, 2921, 0, ACK, 6));
    CHECK_N_EMITTED(0);
    PAC_CHECK(pac_next_wakeup(pac) == AT(40000));

    run(pac, AT(50000));
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(0, 3);
    CHECK_RELEASED(1, 4);

    /* Packets 5 and 6 became their flows' heads at 50000. */
    PAC_CHECK(pac_next_wakeup(pac) == AT(70000));
    run(pac, AT(69999));
    CHECK_N_EMITTED(2);
    run(pac, AT(70000));
    CHECK_N_EMITTED(4);
    CHECK_RELEASED(2, 5);
    CHECK_RELEASED(3, 6);
    PAC_CHECK_EQ(get_stats(pac).released[PAC_REL_MAX_HOLD], 4);
    end_pac();
}

/* The start of the max_hold_trigger_us tests: a 50 ms bound, flow 2's
 * request (packet 0) passed, its window filling the threshold, and flow 0's
 * request (packet 1) held.  NULL if any of that went otherwise. */
static struct pac *
trigger_pac(void)
{
    struct pac_config cfg;
    struct pac *pac;

    sched_config(&cfg);
    cfg.max_hold_trigger_us = 50000;
    pac = make_pac(&cfg);
    if (!pac || request(pac, AT(0), 2, 1, 0) != PAC_PASS
        || request(pac, AT(10), 0, 1, 1) != PAC_HELD) {
        return NULL;
    }
    return pac;
}

/* Requests use max_hold_trigger_us. */
static void
test_max_hold_trigger(void)
{
    struct pac *pac;

    pac = trigger_pac();
    PAC_CHECK(pac);
    CHECK_PASS(tx(pac, AT(20), 1, 1, 0, ACK, 2));
    CHECK_HELD(tx(pac, AT(30), 1, 1461, 0, ACK, 3));
    PAC_CHECK(pac_next_wakeup(pac) == AT(20030));

    run(pac, AT(20030));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 3);
    PAC_CHECK(pac_next_wakeup(pac) == AT(50010));

    /* Expired, but its window does not fit: it waits for data... */
    run(pac, AT(50010));
    CHECK_N_EMITTED(1);
    /* ...and goes, ahead of its turn, as soon as it fits. */
    rx_data(pac, AT(50020), 1, 1, 4380);
    rx_data(pac, AT(50020), 2, 1, 29200);
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 1);
    PAC_CHECK_EQ(get_stats(pac).released[PAC_REL_MAX_HOLD], 2);
    PAC_CHECK_EQ(get_stats(pac).request_triggers, 2);
    end_pac();
}

/* The default max_hold_trigger_us is 1 s: until then a request waits its
 * turn (here it gets room just before). */
static void
test_max_hold_trigger_default(void)
{
    struct pac *pac;

    pac = make_sched_pac();
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 2, 1, 0));
    CHECK_HELD(request(pac, AT(10), 0, 1, 1));
    PAC_CHECK(pac_next_wakeup(pac) == AT(100000));     /* Interval. */
    for (uint64_t t = 100000; t < 1000000; t += 100000) {
        run(pac, AT(t));
        CHECK_N_EMITTED(0);
    }
    run(pac, AT(1000009));
    CHECK_N_EMITTED(0);
    rx_data(pac, AT(1000009), 2, 1, 29200);    /* Room, before expiry. */
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    PAC_CHECK_EQ(get_stats(pac).released[PAC_REL_MAX_HOLD], 0);
    end_pac();
}

/* max_hold_trigger_us counts only while no window trigger leaves in its
 * turn.  A request at the back of a queue that moves waits its turn however
 * long that takes (in a large incast the last requests wait longer than the
 * bound); one of a queue that has not moved for the bound goes ahead. */
static void
test_max_hold_trigger_moving_queue(void)
{
    struct pac_stats st;
    struct pac *pac;

    /* One window fills the threshold: one answer at a time. */
    pac = trigger_pac();
    PAC_CHECK(pac);
    CHECK_HELD(request(pac, AT(20), 1, 1, 2));
    CHECK_HELD(request(pac, AT(30), 3, 1, 3));

    /* Flow 2's answer: flow 0's request goes in its turn. */
    rx_data(pac, AT(30000), 2, 1, 29200);
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);

    /* Flow 1's request has waited 59 980 us, but the queue moved 30 ms
     * ago: it goes in its turn too, not ahead of it. */
    rx_data(pac, AT(60000), 0, 1, 29200);
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 2);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.released[PAC_REL_FIT], 2);
    PAC_CHECK_EQ(st.released[PAC_REL_MAX_HOLD], 0);

    /* Then nothing moves for 50 ms: flow 3's request has expired, and
     * goes ahead (by max_hold_trigger_us) as soon as it fits. */
    run(pac, AT(110000));
    CHECK_N_EMITTED(2);
    rx_data(pac, AT(120000), 1, 1, 29200);
    CHECK_N_EMITTED(3);
    CHECK_RELEASED(2, 3);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.released[PAC_REL_FIT], 2);
    PAC_CHECK_EQ(st.released[PAC_REL_MAX_HOLD], 1);
    end_pac();
}

/* A packet behind a held head waits for it, then gets its own bound from
 * the time it becomes the flow's head.  Here the head is a request that
 * data passed (the answer before it was still under way), which makes it
 * an ACK bound by max_hold_us (test_request_passed_by_data_goes_as_ack()
 * in test-pac-copy.c). */
static void
test_max_hold_behind_request(void)
{
    struct pac_stats st;
    struct pac *pac;

    pac = trigger_pac();
    PAC_CHECK(pac);
    rx_data(pac, AT(15), 0, 1, 500);
    CHECK_HELD(tx(pac, AT(20), 0, 501, 0, ACK, 2));
    PAC_CHECK(pac_next_wakeup(pac) == AT(20010));

    run(pac, AT(20010));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    PAC_CHECK(pac_next_wakeup(pac) <= AT(40010));
    run(pac, AT(40010 - 1));
    CHECK_N_EMITTED(1);
    run(pac, AT(40010));
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 2);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.released[PAC_REL_MAX_HOLD], 2);
    PAC_CHECK_EQ(st.held, 0);
    end_pac();
}

/* The held-packet cap: holding one more first releases the flow head that
 * has waited longest, an ACK rather than a window trigger while there is
 * one; nothing is dropped. */
static void
test_held_cap(void)
{
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;

    sched_config(&cfg);
    cfg.max_held = 4;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 9, 1, 0));
    CHECK_PASS(tx(pac, AT(0), 0, 1, 0, ACK, 1));
    CHECK_PASS(tx(pac, AT(0), 1, 1, 0, ACK, 2));
    CHECK_HELD(tx(pac, AT(1), 0, 1461, 0, ACK, 3));
    CHECK_HELD(tx(pac, AT(2), 1, 1461, 0, ACK, 4));
    CHECK_HELD(tx(pac, AT(3), 0, 2921, 0, ACK, 5));
    CHECK_HELD(tx(pac, AT(4), 1, 2921, 0, ACK, 6));
    CHECK_N_EMITTED(0);
    PAC_CHECK_EQ(get_stats(pac).held, 4);

    /* Flow 0's head (packet 3, head since t = 1) goes; packet 5 becomes
     * flow 0's head at t = 5. */
    CHECK_HELD(tx(pac, AT(5), 0, 4381, 0, ACK, 7));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 3);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 4);
    PAC_CHECK_EQ(st.released[PAC_REL_CAP], 1);
    PAC_CHECK_EQ(st.max_held_seen, 4);

    CHECK_HELD(tx(pac, AT(6), 1, 4381, 0, ACK, 8));    /* Head: 6. */
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 4);
    CHECK_HELD(tx(pac, AT(7), 3, 1, 100, ACK, 9));     /* Head: 7. */
    CHECK_N_EMITTED(3);
    CHECK_RELEASED(2, 5);
    CHECK_HELD(tx(pac, AT(8), 1, 5841, 0, ACK, 10));   /* Head: 8. */
    CHECK_N_EMITTED(4);
    CHECK_RELEASED(3, 6);
    CHECK_HELD(tx(pac, AT(9), 0, 5841, 0, ACK, 11));   /* Head: 11. */
    CHECK_N_EMITTED(5);
    CHECK_RELEASED(4, 7);
    CHECK_HELD(tx(pac, AT(10), 0, 7301, 0, ACK, 12));  /* Head: 10. */
    CHECK_N_EMITTED(6);
    CHECK_RELEASED(5, 8);

    /* The request (packet 9, since t = 7) is the oldest head, but an ACK
     * head goes first: packet 11 (since t = 9). */
    CHECK_HELD(tx(pac, AT(11), 0, 8761, 0, ACK, 13));
    CHECK_N_EMITTED(7);
    CHECK_RELEASED(6, 11);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 4);
    PAC_CHECK_EQ(st.released[PAC_REL_CAP], 7);
    PAC_CHECK_EQ(st.stale_drops, 0);

    pac_flush(pac, rec_emit, NULL);
    CHECK_N_EMITTED(11);
    CHECK_RELEASED_BEFORE(12, 13);
    PAC_CHECK(released_at(9) >= 0);
    PAC_CHECK(released_at(10) >= 0);
    for (int i = 3; i <= 13; i++) {
        PAC_CHECK(released_at(i) >= 0);
    }
    end_pac();
    CHECK_N_EMITTED(11);
}

/* pac_flush() and pac_destroy() release everything exactly once, in
 * per-flow order; pac_flush() keeps the flows. */
static void
test_flush_and_destroy(void)
{
    struct pac_stats st;
    struct pac *pac;

    pac = make_sched_pac();
    PAC_CHECK(pac);

    rx_data(pac, AT(0), 1, 1, 20000);                  /* Level 1. */
    CHECK_PASS(request(pac, AT(1), 2, 1, 0));
    CHECK_PASS(tx(pac, AT(1), 0, 1, 0, ACK, 1));
    CHECK_PASS(tx(pac, AT(1), 1, 20001, 0, ACK, 2));
    CHECK_HELD(tx(pac, AT(2), 0, 1461, 0, ACK, 3));
    CHECK_HELD(tx(pac, AT(3), 1, 21461, 0, ACK, 4));
    CHECK_HELD(tx(pac, AT(4), 0, 2921, 0, ACK, 5));
    CHECK_HELD(tx(pac, AT(5), 1, 22921, 0, ACK, 6));
    CHECK_HELD(tx(pac, AT(6), 2, 1461, 0, ACK, 7));
    CHECK_HELD(tx(pac, AT(7), 0, 2921, 0, PAC_TCP_FIN | ACK, 8));
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 6);
    PAC_CHECK_EQ(st.held_per_level[0], 4);
    PAC_CHECK_EQ(st.held_per_level[1], 2);

    pac_flush(pac, rec_emit, NULL);
    CHECK_N_EMITTED(6);
    CHECK_RELEASED_BEFORE(3, 5);
    CHECK_RELEASED_BEFORE(5, 8);
    CHECK_RELEASED_BEFORE(4, 6);
    PAC_CHECK(released_at(7) >= 0);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 0);
    PAC_CHECK_EQ(st.held_per_level[0], 0);
    PAC_CHECK_EQ(st.held_per_level[1], 0);
    PAC_CHECK_EQ(st.released[PAC_REL_FLUSH], 6);
    PAC_CHECK_EQ(st.flows, 3);

    /* A second flush has nothing to do. */
    pac_flush(pac, rec_emit, NULL);
    CHECK_N_EMITTED(6);

    /* The instance keeps working; destroy releases the rest. */
    CHECK_HELD(tx(pac, AT(10), 1, 24381, 0, ACK, 9));
    CHECK_HELD(tx(pac, AT(11), 2, 2921, 0, ACK, 10));
    CHECK_HELD(tx(pac, AT(12), 1, 25841, 0, ACK, 11));
    end_pac();
    CHECK_N_EMITTED(9);
    CHECK_RELEASED_BEFORE(9, 11);
    PAC_CHECK(released_at(10) >= 0);
}

/* Runs 'fn' in a child process with a 20 s limit.  Returns true if it
 * passed. */
static bool
run_isolated(void (*fn)(void))
{
    pid_t pid;
    int status;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        return false;
    } else if (!pid) {
        alarm(20);
        pac_test_cur_failed = 0;
        fn();
        fflush(stdout);
        fflush(stderr);
        _exit(pac_test_cur_failed ? 1 : 0);
    }
    if (waitpid(pid, &status, 0) != pid) {
        return false;
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "child killed by signal %d%s\n", WTERMSIG(status),
                WTERMSIG(status) == SIGALRM ? " (time limit: hang)" : "");
        return false;
    }
    return WIFEXITED(status) && !WEXITSTATUS(status);
}

/* Regression: one flow holding more than 65535 packets (max_held goes up
 * to 2^20, default 65536).  A 16-bit per-flow count would wrap to 0:
 * pac_dump_flows() would say 0, the next segment could pass ahead, and
 * pac_flush() would loop forever (hence the child process).  Whatever the
 * per-flow cap, the counts agree, the flow stays in order and everything
 * comes back exactly once. */
static void
flow_held_overflow_child(void)
{
    struct pac_flow_info info;
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;
    uint32_t ack = 1;
    const int n = 65537;

    test_config(&cfg);
    cfg.threshold = 3000;
    cfg.max_hold_us = 10000000;
    PAC_CHECK_EQ(cfg.max_held, 65536);
    pac = pac_create(&cfg, T0);
    PAC_CHECK(pac);
    rec_reset();

    CHECK_PASS(request(pac, AT(0), 1, 1, 0));
    rx(pac, AT(0), 0, 1, 0, ACK, PAC_ECN_ECT0);
    CHECK_PASS(tx(pac, AT(0), 0, ack, 0, ACK, 1));
    for (int i = 0; i < n; i++) {
        ack += 10;
        CHECK_HELD(tx(pac, AT(1), 0, ack, 0, ACK, 2 + i));
        if (i == 65534 || i == 65535 || i == n - 1) {
            st = get_stats(pac);
            GET_FLOW(pac, 0, &info);
            PAC_CHECK_EQ(info.held, st.held);
            PAC_CHECK_EQ(st.held + n_rec, i + 1);
        }
    }

    /* A data segment queues behind the flow's held ACKs. */
    CHECK_HELD(tx(pac, AT(2), 0, ack, 100, ACK, 2 + n));
    pac_flush(pac, rec_emit, NULL);
    CHECK_N_EMITTED(n + 1);
    for (int i = 0; i < n + 1; i++) {
        CHECK_RELEASED(i, 2 + i);
    }
    pac_destroy(pac, rec_emit, NULL);
    CHECK_N_EMITTED(n + 1);
}

static void
test_flow_held_overflow(void)
{
    PAC_CHECK(run_isolated(flow_held_overflow_child));
}

int
main(void)
{
    PAC_RUN_TEST(test_mlfq_priority);
    PAC_RUN_TEST(test_new_flow_reserve);
    PAC_RUN_TEST(test_new_flow_reserve_quarter);
    PAC_RUN_TEST(test_new_flow_reserve_lapses);
    PAC_RUN_TEST(test_new_flow_burst_not_new);
    PAC_RUN_TEST(test_new_flow_room_grows);
    PAC_RUN_TEST(test_peer_retransmits);
    PAC_RUN_TEST(test_mlfq_strict);
    PAC_RUN_TEST(test_mlfq_round_robin);
    PAC_RUN_TEST(test_batch_same_releases);
    PAC_RUN_TEST(test_mlfq_demotion_moves_held);
    PAC_RUN_TEST(test_mlfq_four_levels);
    PAC_RUN_TEST(test_mlfq_one_level);
    PAC_RUN_TEST(test_max_hold);
    PAC_RUN_TEST(test_max_hold_late_run);
    PAC_RUN_TEST(test_max_hold_trigger);
    PAC_RUN_TEST(test_max_hold_trigger_default);
    PAC_RUN_TEST(test_max_hold_trigger_moving_queue);
    PAC_RUN_TEST(test_max_hold_behind_request);
    PAC_RUN_TEST(test_held_cap);
    PAC_RUN_TEST(test_flush_and_destroy);
    PAC_RUN_TEST(test_flow_held_overflow);
    drop_pac();
    PAC_TEST_MAIN_END;
}
