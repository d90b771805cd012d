/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of the PAC in-flight estimate and release rule (PAC paper,
 * section III, Algorithm 1 and eqs. 3-5; docs/libpac.md): ACK triggers,
 * window triggers of requests and handshakes, duplicate ACKs, per-flow
 * order and stale ACKs (section III-D).
 *
 * Unless a test says otherwise, the instance uses test_config(): default
 * threshold 96000, MSS 1460, IW 10 segments, and a base RTT so large that
 * no control interval ends and no flow is taken for finished during a
 * test.  Traffic is consistent: the data that arrives on a flow is what the
 * VM's segments on that flow asked for, unless a test says otherwise. */

#include "pac.h"

#include "pac-test-fixture.h"

/* Eq. (5): data that was asked for lowers in_flight by its length, never
 * below 0. */
static void
test_rx_lowers_in_flight(void)
{
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    /* A request is a window trigger: in_flight = IW. */
    CHECK_PASS(request(pac, AT(0), 0, 1, 0));
    CHECK_IN_FLIGHT(pac, IW);

    rx_data(pac, AT(10), 0, 1, 1000);
    CHECK_IN_FLIGHT(pac, IW - 1000);
    rx_data(pac, AT(20), 0, 1001, 1460);
    CHECK_IN_FLIGHT(pac, IW - 2460);
    rx_data(pac, AT(30), 0, 2461, 0);           /* No payload. */
    CHECK_IN_FLIGHT(pac, IW - 2460);
    rx_data(pac, AT(40), 0, 2461, 20000);       /* Clamped at 0. */
    CHECK_IN_FLIGHT(pac, 0);
    rx_data(pac, AT(50), 0, 22461, 5);
    CHECK_IN_FLIGHT(pac, 0);

    st = get_stats(pac);
    PAC_CHECK_EQ(st.rx_packets, 6);
    PAC_CHECK_EQ(st.rx_bytes, 1000 + 1460 + 20000 + 5);
    PAC_CHECK_EQ(st.rx_ce, 0);
    PAC_CHECK_EQ(st.tx_packets, 1);
    PAC_CHECK_EQ(st.tx_passed, 1);
    PAC_CHECK_EQ(st.request_triggers, 1);
    CHECK_N_EMITTED(0);
    end_pac();
}

/* Eq. (5) per flow (libpac's pac_credit_rx()): data nobody asked for does not
 * cancel what other flows were asked for; a trigger sent before its flow
 * had received anything is paid back by any such data. */
static void
test_rx_credit_per_flow(void)
{
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 0, 1, 0));
    CHECK_IN_FLIGHT(pac, IW);
    rx_data(pac, AT(10), 1, 1, 2000);
    CHECK_IN_FLIGHT(pac, IW);

    /* Flow 2's request goes before anything is received on it. */
    CHECK_PASS(tx(pac, AT(20), 2, 1, 100, ACK, 1));
    CHECK_IN_FLIGHT(pac, 2 * IW);
    rx_data(pac, AT(30), 2, 1, 1000);
    CHECK_IN_FLIGHT(pac, 2 * IW - 1000);
    rx_data(pac, AT(40), 1, 2001, 1000);
    CHECK_IN_FLIGHT(pac, 2 * IW - 2000);
    rx_data(pac, AT(50), 0, 1, IW);
    CHECK_IN_FLIGHT(pac, IW - 2000);
    end_pac();
}

/* Eqs. (3) and (4) in slow start: trigger = delta + max(delta, MSS). */
static void
test_ack_trigger_slow_start(void)
{
    struct pac_flow_info info;
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    rx_data(pac, AT(0), 0, 1, 1460);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK(info.slow_start);
    PAC_CHECK_EQ(info.mss, MSS);
    PAC_CHECK_EQ(info.level, 0);

    /* The first ACK of a flow gives the ACK base: no delta is known, so it
     * counts as a duplicate ACK (one MSS). */
    CHECK_PASS(tx(pac, AT(10), 0, 1461, 0, ACK, 0));
    CHECK_IN_FLIGHT(pac, MSS);
    rx_data(pac, AT(20), 0, 1461, 1460);
    CHECK_IN_FLIGHT(pac, 0);

    /* delta = 1 MSS: in_flight grows by exactly 2 MSS. */
    CHECK_PASS(tx(pac, AT(30), 0, 2921, 0, ACK, 1));
    CHECK_IN_FLIGHT(pac, 2 * MSS);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.last_ack, 2921);

    /* A stretch ACK of 2 MSS (delayed ACK, GRO): 4 MSS. */
    rx_data(pac, AT(40), 0, 2921, 2920);
    CHECK_IN_FLIGHT(pac, 0);
    CHECK_PASS(tx(pac, AT(50), 0, 5841, 0, ACK, 2));
    CHECK_IN_FLIGHT(pac, 4 * MSS);

    /* A stretch ACK of 4 MSS: 8 MSS. */
    rx_data(pac, AT(60), 0, 5841, 4 * MSS);
    CHECK_IN_FLIGHT(pac, 0);
    CHECK_PASS(tx(pac, AT(70), 0, 5841 + 4 * MSS, 0, ACK, 3));
    CHECK_IN_FLIGHT(pac, 8 * MSS);

    /* delta < MSS: the window still grows by one MSS. */
    rx_data(pac, AT(80), 0, 5841 + 4 * MSS, 8 * MSS);
    CHECK_IN_FLIGHT(pac, 0);
    CHECK_PASS(tx(pac, AT(90), 0, 5841 + 4 * MSS + 500, 0, ACK, 4));
    CHECK_IN_FLIGHT(pac, 500 + MSS);

    PAC_CHECK_EQ(get_stats(pac).request_triggers, 0);
    CHECK_N_EMITTED(0);
    end_pac();
}

/* Eq. (3) in congestion avoidance: delta + MSS * MSS / window, where the
 * window is the flow's window estimate (IW until more is learned; PAC grows
 * it per released ACK, reported as pac_flow_info.cwnd); with ECE on the
 * ACK: delta. */
static void
test_ack_trigger_congestion_avoidance(void)
{
    struct pac_flow_info info;
    uint32_t w, trigger;
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    /* A CE mark on received data ends slow start (ECN on). */
    rx(pac, AT(0), 0, 1, 1460, ACK, PAC_ECN_CE);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK(!info.slow_start);
    PAC_CHECK_EQ(info.cwnd, IW);
    PAC_CHECK_EQ(get_stats(pac).rx_ce, 1);

    CHECK_PASS(tx(pac, AT(10), 0, 1461, 0, ACK, 0));   /* ACK base. */
    CHECK_IN_FLIGHT(pac, MSS);
    rx_data(pac, AT(20), 0, 1461, 1460);
    CHECK_IN_FLIGHT(pac, 0);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.cwnd, IW);        /* No delta, no growth. */

    /* window = IW = 14600: 1460 + 1460 * 1460 / 14600 = 1460 + 146. */
    CHECK_PASS(tx(pac, AT(30), 0, 2921, 0, ACK, 1));
    CHECK_IN_FLIGHT(pac, MSS + MSS * MSS / IW);
    PAC_CHECK_EQ(MSS * MSS / IW, 146);

    /* With the window the flow has now. */
    GET_FLOW(pac, 0, &info);
    w = info.cwnd;
    PAC_CHECK(w > IW);
    rx_data(pac, AT(40), 0, 2921, 1606);
    CHECK_IN_FLIGHT(pac, 0);
    CHECK_PASS(tx(pac, AT(50), 0, 4527, 0, ACK, 2));
    trigger = 1606 + MSS * MSS / w;
    CHECK_IN_FLIGHT(pac, trigger);

    /* ECE on the ACK: exactly delta, and no window growth. */
    rx_data(pac, AT(60), 0, 4527, trigger);
    CHECK_IN_FLIGHT(pac, 0);
    GET_FLOW(pac, 0, &info);
    w = info.cwnd;
    CHECK_PASS(tx(pac, AT(70), 0, 4527 + trigger, 0, ACK | PAC_TCP_ECE, 3));
    CHECK_IN_FLIGHT(pac, trigger);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.cwnd, w);

    /* ECE in slow start: exactly delta too. */
    rx_data(pac, AT(80), 1, 1, 1460);
    GET_FLOW(pac, 1, &info);
    PAC_CHECK(info.slow_start);
    CHECK_PASS(tx(pac, AT(90), 1, 1, 0, ACK, 4));      /* ACK base. */
    CHECK_IN_FLIGHT(pac, trigger + MSS);
    CHECK_PASS(tx(pac, AT(100), 1, 1461, 0, ACK | PAC_TCP_ECE, 5));
    CHECK_IN_FLIGHT(pac, trigger + MSS + MSS);
    CHECK_N_EMITTED(0);
    end_pac();
}

/* Congestion avoidance uses the flow's window estimate: here IW 4. */
static void
test_ack_trigger_ca_window(void)
{
    struct pac_config cfg;
    struct pac *pac;

    test_config(&cfg);
    cfg.init_window_segs = 4;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    rx(pac, AT(0), 0, 1, 1460, ACK, PAC_ECN_CE);
    CHECK_PASS(tx(pac, AT(10), 0, 1461, 0, ACK, 0));
    rx_data(pac, AT(20), 0, 1461, 1460);
    CHECK_IN_FLIGHT(pac, 0);
    CHECK_PASS(tx(pac, AT(30), 0, 2921, 0, ACK, 1));
    CHECK_IN_FLIGHT(pac, 1460 + 1460 * 1460 / (4 * 1460));
    PAC_CHECK_EQ(1460 * 1460 / (4 * 1460), 365);
    end_pac();
}

/* With ECN off, CE marks do not end slow start. */
static void
test_ecn_off_keeps_slow_start(void)
{
    struct pac_flow_info info;
    struct pac_config cfg;
    struct pac *pac;

    test_config(&cfg);
    cfg.ecn = false;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    rx(pac, AT(0), 0, 1, 1460, ACK, PAC_ECN_CE);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK(info.slow_start);
    PAC_CHECK_EQ(get_stats(pac).rx_ce, 1);
    CHECK_PASS(tx(pac, AT(10), 0, 1461, 0, ACK, 0));
    rx_data(pac, AT(20), 0, 1461, 1460);
    CHECK_PASS(tx(pac, AT(30), 0, 2921, 0, ACK, 1));
    CHECK_IN_FLIGHT(pac, 2 * MSS);
    end_pac();
}

/* Data from the VM that is not a request (the peer has unacknowledged data
 * in flight) makes the peer answer with a bare ACK: ACK_FRAME. */
static void
test_data_to_busy_peer(void)
{
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    rx_data(pac, AT(0), 0, 1, 3000);
    CHECK_PASS(tx(pac, AT(10), 0, 1001, 0, ACK, 0));   /* Base: MSS. */
    CHECK_IN_FLIGHT(pac, MSS);
    CHECK_PASS(tx(pac, AT(20), 0, 1001, 300, ACK, 1)); /* No new ACK. */
    CHECK_IN_FLIGHT(pac, MSS + ACK_FRAME);
    CHECK_PASS(tx(pac, AT(30), 0, 2001, 300, ACK, 2)); /* 1000 new. */
    CHECK_IN_FLIGHT(pac, MSS + ACK_FRAME + 1000 + MSS + ACK_FRAME);
    PAC_CHECK_EQ(get_stats(pac).request_triggers, 0);
    end_pac();
}

/* Algorithm 1: an ACK that would push in_flight over the threshold is held
 * and released exactly when enough data has arrived. */
static void
test_hold_and_release(void)
{
    uint64_t room = max_payload(10000);
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);
    PAC_CHECK_EQ(room, 9568);

    /* 6 MSS from earlier, acknowledged MSS by MSS. */
    rx_data(pac, AT(0), 0, 1, 6 * MSS);
    CHECK_PASS(tx(pac, AT(10), 0, 1461, 0, ACK, 0));   /* 1460 */
    CHECK_PASS(tx(pac, AT(20), 0, 2921, 0, ACK, 1));   /* 4380 */
    CHECK_PASS(tx(pac, AT(30), 0, 4381, 0, ACK, 2));   /* 7300 */
    CHECK_IN_FLIGHT(pac, 7300);

    /* 7300 + 2920 > room. */
    CHECK_HELD(tx(pac, AT(40), 0, 5841, 0, ACK, 3));
    CHECK_IN_FLIGHT(pac, 7300);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 1);
    PAC_CHECK_EQ(st.held_per_level[0], 1);
    PAC_CHECK_EQ(st.tx_held, 1);
    PAC_CHECK_EQ(st.tx_passed, 3);
    PAC_CHECK_EQ(st.max_held_seen, 1);
    CHECK_N_EMITTED(0);

    /* One byte short. */
    rx_data(pac, AT(50), 0, 6 * MSS + 1, 7300 - (room - 2920) - 1);
    CHECK_IN_FLIGHT(pac, room - 2920 + 1);
    CHECK_N_EMITTED(0);
    PAC_CHECK_EQ(get_stats(pac).held, 1);

    /* Released exactly at the threshold. */
    rx_data(pac, AT(60), 0, 6 * MSS + 1 + 7300 - (room - 2920) - 1, 1);
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 3);
    CHECK_IN_FLIGHT(pac, room);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 0);
    PAC_CHECK_EQ(st.held_per_level[0], 0);
    PAC_CHECK_EQ(st.released[PAC_REL_FIT], 1);
    PAC_CHECK_EQ(st.released[PAC_REL_MAX_HOLD], 0);
    PAC_CHECK_EQ(st.stale_drops, 0);
    end_pac();
    CHECK_N_EMITTED(1);
}

/* Algorithm 1: when nothing is in flight, any trigger is allowed. */
static void
test_empty_pipe_admits_anything(void)
{
    struct pac *pac;
    uint32_t seq;

    pac = make_test_pac_threshold(3000);
    PAC_CHECK(pac);

    seq = ack_flow(pac, AT(0), 0, 1460, 0);
    CHECK_IN_FLIGHT(pac, 0);

    /* 10 MSS acknowledged at once: trigger 20 MSS, ten times the
     * threshold. */
    rx_data(pac, AT(10), 0, seq, 9 * MSS);
    CHECK_PASS(tx(pac, AT(20), 0, seq + 9 * MSS, 0, ACK, 1));
    CHECK_IN_FLIGHT(pac, 20 * MSS);

    /* Now the next ACK does not fit. */
    seq += 9 * MSS;
    rx_data(pac, AT(30), 0, seq, MSS);
    CHECK_IN_FLIGHT(pac, 19 * MSS);
    CHECK_HELD(tx(pac, AT(40), 0, seq + MSS, 0, ACK, 2));

    /* Once all of it has arrived, the held ACK goes, though its own
     * trigger is over the threshold. */
    rx_data(pac, AT(50), 0, seq + MSS, 19 * MSS);
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 2);
    CHECK_IN_FLIGHT(pac, 2 * MSS);
    end_pac();
}

/* Requests: a data segment from the VM that
 * acknowledges everything received is a window trigger; the next one is
 * worth min(window, previous response).  VM as client, MSS 1000 (from its
 * SYN). */
static void
test_request_window_trigger(void)
{
    struct pac_flow_info info;
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    CHECK_PASS(vm_syn(pac, AT(0), 0, 1000, 0));
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.mss, 1000);
    PAC_CHECK_EQ(info.cwnd, 10 * 1000);
    CHECK_IN_FLIGHT(pac, SYNACK_FRAME); /* The SYN-ACK's frame... */

    peer_synack(pac, AT(100), 0, 5000, 1460); /* Not the VM's MSS. */
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.mss, 1000);
    CHECK_IN_FLIGHT(pac, 0);            /* ...which has arrived. */

    /* The request: a window, 10 * 1000, and 9 bytes for the frame of the
     * answer's short last segment (libpac's tail_frame_bytes(): the
     * answer is not a multiple of the default MSS, 1460, and its last
     * frame's headers take 66 * (1460 - 10000 % 1460) / 1526 bytes of
     * payload more than pac_fits() counts for that segment). */
    CHECK_PASS(tx(pac, AT(110), 0, 5001, 200, ACK, 1));
    CHECK_IN_FLIGHT(pac, 10000 + 9);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.request_triggers, 1);

    /* The response: 3000 bytes, acknowledged by one stretch ACK.  (The
     * 9 bytes of the last frame stay in the flow's budget until the answer
     * is seen to end.) */
    rx_data(pac, AT(200), 0, 5001, 1000);
    rx_data(pac, AT(201), 0, 6001, 1000);
    rx_data(pac, AT(202), 0, 7001, 1000);
    CHECK_IN_FLIGHT(pac, 7000 + 9);
    CHECK_PASS(tx(pac, AT(210), 0, 8001, 0, ACK, 2));
    CHECK_IN_FLIGHT(pac, 7000 + 9 + 6000);
    rx_data(pac, AT(220), 0, 8001, 1000);
    CHECK_IN_FLIGHT(pac, 12000 + 9);
    CHECK_PASS(tx(pac, AT(230), 0, 9001, 0, ACK, 3));
    CHECK_IN_FLIGHT(pac, 12000 + 9 + 2000);

    /* The answer ends there: the peer is idle when the next request
     * comes.  What the ACKs let out but the peer did not send leaves
     * in_flight, and the request's trigger is its new delta (none) plus
     * the window, 14000: a first answer says little of the next
     * (test_first_answer_small()).  Plus 25 for its last frame. */
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.cwnd, 10000 + 3000 + 1000);
    CHECK_PASS(tx(pac, AT(240), 0, 9001, 200, ACK, 4));
    CHECK_IN_FLIGHT(pac, 14000 + 25);
    PAC_CHECK_EQ(get_stats(pac).request_triggers, 2);

    /* A pipelined request before any answer (it acknowledges nothing new)
     * is not a window trigger: the peer answers it with a bare ACK. */
    CHECK_PASS(tx(pac, AT(250), 0, 9001, 200, ACK, 5));
    CHECK_IN_FLIGHT(pac, 14000 + 25 + ACK_FRAME);
    PAC_CHECK_EQ(get_stats(pac).request_triggers, 2);
    CHECK_N_EMITTED(0);
    end_pac();
}

/* The learned window: the peer's unclocked burst (bytes received between a
 * released request and the first released ACK that advances the ACK number)
 * when it is larger than IW.  ECE on the ACKs keeps PAC's own window
 * growth out of the way. */
static void
test_request_learned_window(void)
{
    struct pac_flow_info info;
    struct pac_config cfg;
    struct pac *pac;

    test_config(&cfg);
    cfg.init_window_segs = 2;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    CHECK_PASS(vm_syn(pac, AT(0), 0, 1000, 0));
    peer_synack(pac, AT(100), 0, 5000, 0);
    CHECK_PASS(tx(pac, AT(110), 0, 5001, 100, ACK, 1));
    CHECK_IN_FLIGHT(pac, 2000 + 39);   /* + the last frame, see above. */
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.cwnd, 2000);

    /* The peer sends 6000 bytes before it sees any ACK (the first 2000
     * were expected). */
    for (int i = 0; i < 6; i++) {
        rx_data(pac, AT(200 + i), 0, 5001 + 1000 * i, 1000);
    }
    CHECK_IN_FLIGHT(pac, 0);
    CHECK_PASS(tx(pac, AT(210), 0, 6001, 0, ACK | PAC_TCP_ECE, 2));
    CHECK_IN_FLIGHT(pac, 1000);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.cwnd, 6000);

    /* The rest of the burst and 4000 more bytes, clocked by the ACKs; the
     * measurement is over. */
    CHECK_PASS(tx(pac, AT(220), 0, 11001, 0, ACK | PAC_TCP_ECE, 3));
    CHECK_IN_FLIGHT(pac, 6000);
    rx_data(pac, AT(300), 0, 11001, 4000);
    CHECK_IN_FLIGHT(pac, 2000);
    CHECK_PASS(tx(pac, AT(310), 0, 15001, 0, ACK | PAC_TCP_ECE, 4));
    CHECK_IN_FLIGHT(pac, 6000);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.cwnd, 6000);

    /* Next request: the rest of the previous answer will not come; then
     * min(learned 6000, response 10000) = 6000, plus 56 for the last
     * frame. */
    CHECK_PASS(tx(pac, AT(400), 0, 15001, 100, ACK, 5));
    CHECK_IN_FLIGHT(pac, 6000 + 56);
    end_pac();
}

/* Opens 'flow' with the VM as client: SYN and SYN-ACK both carry 'mss'
 * (0: the peer's has no MSS option); the peer's data starts at 5001. */
static void
open_client_flow(struct pac *pac, uint64_t now, int flow, uint16_t peer_mss)
{
    CHECK_PASS(vm_syn(pac, now, flow, MSS, 1000 + flow));
    peer_synack(pac, now + 10, flow, 5000, peer_mss);
}

/* A segment shorter than a full one (by more than any TCP options) is all
 * the peer had to send: its answer is complete, the rest of its budget
 * leaves in_flight at once, and ACKs of it trigger nothing until it sends
 * again.  Full segments, old segments and flows whose peer MSS PAC has
 * not seen are not judged. */
static void
test_short_segment_ends_answer(void)
{
    struct pac *pac;
    uint64_t other;

    pac = make_test_pac();
    PAC_CHECK(pac);

    /* Flow 1 keeps something in flight, so that what fits is decided by
     * the triggers, not by an empty pipe. */
    open_client_flow(pac, AT(0), 1, MSS);
    CHECK_PASS(tx(pac, AT(20), 1, 5001, 100, ACK, 1));
    other = IW;
    CHECK_IN_FLIGHT(pac, other);

    open_client_flow(pac, AT(30), 0, MSS);
    CHECK_PASS(tx(pac, AT(50), 0, 5001, 100, ACK, 2));
    CHECK_IN_FLIGHT(pac, other + IW);

    /* Full segments, with up to 40 bytes of options, do not end it. */
    rx_data(pac, AT(100), 0, 5001, MSS);
    rx_data(pac, AT(101), 0, 5001 + MSS, MSS - 40);
    CHECK_IN_FLIGHT(pac, other + IW - (2 * MSS - 40));
    PAC_CHECK_EQ(get_stats(pac).answer_ends, 0);

    /* The short one does: flow 0 owes nothing any more. */
    rx_data(pac, AT(102), 0, 5001 + 2 * MSS - 40, 1000);
    CHECK_IN_FLIGHT(pac, other);
    PAC_CHECK_EQ(get_stats(pac).answer_ends, 1);

    /* Its ACK triggers nothing; nor does a copy of the short segment. */
    CHECK_PASS(tx(pac, AT(110), 0, 5001 + 2 * MSS + 960, 0, ACK, 3));
    CHECK_IN_FLIGHT(pac, other);
    rx_data(pac, AT(111), 0, 5001 + 2 * MSS - 40, 1000);
    CHECK_IN_FLIGHT(pac, other);
    PAC_CHECK_EQ(get_stats(pac).answer_ends, 1);

    /* The peer sends again before any new request: the verdict was
     * wrong (the short segment filled a window, or its application wrote
     * more), so the rest of what its triggers allowed counts again, and
     * ACKs of the new data trigger again, as eq. (3) says. */
    rx_data(pac, AT(120), 0, 5001 + 2 * MSS + 960, MSS);
    CHECK_IN_FLIGHT(pac, other + IW - (3 * MSS + 960));
    PAC_CHECK_EQ(get_stats(pac).reclaims_undone, 1);
    CHECK_PASS(tx(pac, AT(130), 0, 5001 + 3 * MSS + 960, 0, ACK, 4));
    CHECK_IN_FLIGHT(pac, other + IW - (3 * MSS + 960)
                         + 2 * MSS);            /* Slow start: 2 x acked. */

    /* Without the peer's MSS, the same short segment is not judged. */
    open_client_flow(pac, AT(200), 2, 0);
    CHECK_PASS(tx(pac, AT(220), 2, 5001, 100, ACK, 5));
    rx_data(pac, AT(230), 2, 5001, 1000);
    CHECK_IN_FLIGHT(pac, other + IW - (3 * MSS + 960) + 2 * MSS + IW - 1000);
    PAC_CHECK_EQ(get_stats(pac).answer_ends, 1);

    CHECK_N_EMITTED(0);
    end_pac();
}

/* 'n' full segments of flow 'flow' from 'seq' on, one per microsecond
 * from 'start'.  Returns the sequence number after them. */
static uint32_t
rx_full_segments(struct pac *pac, uint64_t start, int flow, uint32_t seq,
                 int n)
{
    for (int i = 0; i < n; i++) {
        rx_data(pac, start + i, flow, seq + i * MSS, MSS);
    }
    return seq + n * MSS;
}

/* A large answer of flow 'flow' from 'seq' on: 40 full segments from
 * 'start' and a 100-byte one 50 us after 'start', which ends it when the
 * flow's MSS options are known.  Returns the sequence number after it. */
static uint32_t
rx_large_answer(struct pac *pac, uint64_t start, int flow, uint32_t seq)
{
    seq = rx_full_segments(pac, start, flow, seq, 40);
    rx_data(pac, start + 50, flow, seq, 100);
    return seq + 100;
}

/* Opens flow 0 (the VM the client), requests, and receives the large
 * answer of rx_large_answer() from 5001 on; '*seq' becomes the sequence
 * number after it. */
static void
open_with_large_answer(struct pac *pac, uint32_t *seq)
{
    *seq = 5001;
    open_client_flow(pac, AT(0), 0, MSS);
    CHECK_PASS(tx(pac, AT(20), 0, *seq, 100, ACK, 1));
    *seq = rx_large_answer(pac, AT(100), 0, *seq);
}

/* Flow 0's peer answers 'bytes' from '*seq' on at 'start', in one segment
 * that ends the answer (the 'ends'-th end PAC has seen), and the VM sends
 * its next request, packet 'id', 100 us later.  '*added' is what that
 * request added to in_flight; '*seq' moves past the answer. */
static void
short_answer_then_request(struct pac *pac, uint64_t start, uint32_t *seq,
                          uint32_t bytes, uint64_t ends, int id,
                          uint64_t *added)
{
    uint64_t before;

    *added = 0;
    rx_data(pac, start, 0, *seq, bytes);
    PAC_CHECK_EQ(get_stats(pac).answer_ends, ends);
    *seq += bytes;
    before = in_flight(pac);
    CHECK_PASS(tx(pac, start + 100, 0, *seq, 100, ACK, id));
    *added = in_flight(pac) - before;
}

/* A connection that alternates a large answer and a small one (the incast
 * client reads each sender's counters between two rounds): PAC expects the
 * larger of the last two.  A request after the small one counts a window
 * as for the large one, not the small one's size; a short segment in the
 * large answer after half a window is a window's edge, not the answer's
 * end; the small answer's only segment still ends it. */
static void
test_answer_sizes_alternate(void)
{
    /* The window clamp: half the default threshold (96 000) in frames. */
    const uint32_t clamp = 96000 / 2 / (MSS + WIRE_OVERHEAD) * MSS;
    const uint32_t small = 56;
    uint64_t added, after;
    struct pac *pac;
    uint32_t seq;

    pac = make_test_pac();
    PAC_CHECK(pac);

    /* The large answer, then the small one: each ends in its short
     * segment. */
    open_with_large_answer(pac, &seq);
    PAC_CHECK_EQ(get_stats(pac).answer_ends, 1);
    CHECK_PASS(tx(pac, AT(200), 0, seq, 100, ACK, 2));

    /* The next request lets the peer send its window (the clamp), as
     * large an answer would, not only 'small' bytes; and no more: the
     * window ends 'clamp' bytes past the request's ACK, which acknowledges
     * the small answer. */
    short_answer_then_request(pac, AT(300), &seq, small, 2, 3, &added);
    PAC_CHECK_EQ(added, clamp);
    after = in_flight(pac);

    /* 16 full segments (more than half the window), then a short one: the
     * peer met an edge of the window PAC no longer knows of. */
    rx_data(pac, AT(520), 0, rx_full_segments(pac, AT(500), 0, seq, 16),
            500);
    PAC_CHECK_EQ(get_stats(pac).answer_ends, 2);
    CHECK_IN_FLIGHT(pac, after - (16 * MSS + 500));

    CHECK_N_EMITTED(0);
    end_pac();
}

/* A connection's first answer says little of its next (the incast client
 * reads each sender's counters before round 1): the request after it
 * counts the peer's whole window, not the first answer's size, which left
 * that window unbudgeted.  From the second answer on, a request counts no
 * more than the larger of the last two. */
static void
test_first_answer_small(void)
{
    const uint32_t small = 56;
    struct pac *pac;
    uint32_t seq = 5001;
    uint64_t added;

    pac = make_test_pac();
    PAC_CHECK(pac);

    open_client_flow(pac, AT(0), 0, MSS);
    CHECK_PASS(tx(pac, AT(20), 0, seq, 100, ACK, 1));
    short_answer_then_request(pac, AT(100), &seq, small, 1, 2, &added);
    PAC_CHECK_EQ(added, small + IW);

    /* After the second small answer, the next request counts it and the
     * short frame it ends in (tail_frame_bytes(): 66 * 1404 / 1526). */
    short_answer_then_request(pac, AT(300), &seq, small, 2, 3, &added);
    PAC_CHECK_EQ(added, small + small + 60);

    CHECK_N_EMITTED(0);
    end_pac();
}

/* A peer silent in the middle of an answer gets more dry times
 * (test-pac-control.c, test_dry_waits_mid_answer), but not while PAC holds
 * its ACKs: it may be waiting for them, and its budget may be more than its
 * window allows.  Its verdict then comes after one dry time, and the held
 * ACK goes out. */
static void
test_no_dry_waits_with_held_acks(void)
{
    struct pac *pac;
    uint32_t seq;
    uint64_t t;

    pac = make_test_pac();
    PAC_CHECK(pac);

    /* A large first answer, acknowledged: the next one is expected as
     * large. */
    open_with_large_answer(pac, &seq);
    CHECK_PASS(tx(pac, AT(160), 0, seq, 0, ACK, 2));

    /* The second answer stops after 16 segments, while four peers that
     * were asked and have not answered fill the threshold: the ACK of the
     * 16 segments does not fit.  (It carries ECE, so that its trigger is
     * the 16 segments whatever the peer's window: without ECE, a window
     * with room counts slow-start growth too, and the ACK would still not
     * fit after the verdict.) */
    CHECK_PASS(tx(pac, AT(200), 0, seq, 100, ACK, 3));
    rx_full_segments(pac, AT(300), 0, seq, 16);
    for (int flow = 1; flow <= 4; flow++) {
        open_client_flow(pac, AT(400 + flow), flow, MSS);
        CHECK_PASS(tx(pac, AT(420 + flow), flow, 5001, 100, ACK, 3 + flow));
    }
    CHECK_HELD(tx(pac, AT(500), 0, seq + 16 * MSS, 0, ACK | PAC_TCP_ECE,
                  10));

    /* The verdict comes some 600 us after the flow's last data (at 315).
     * With three dry times more, the silence reset (no data from anyone
     * for 1 ms) would come first, and no dry verdict at all. */
    for (t = 600; !get_stats(pac).dry_reclaims && t <= 1500; t += 100) {
        run(pac, AT(t));
    }
    PAC_CHECK_EQ(get_stats(pac).dry_reclaims, 1);
    PAC_CHECK_EQ(get_stats(pac).dry_waits, 0);
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 10);
    end_pac();
}

/* A burst smaller than IW does not lower the window below IW. */
static void
test_request_small_burst(void)
{
    struct pac_flow_info info;
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 0, 1, 0));
    CHECK_IN_FLIGHT(pac, IW);
    PAC_CHECK_EQ(get_stats(pac).request_triggers, 1);
    rx_data(pac, AT(100), 0, 1, 1500);
    CHECK_PASS(tx(pac, AT(110), 0, 1501, 0, ACK | PAC_TCP_ECE, 1));
    CHECK_IN_FLIGHT(pac, IW - 1500 + 1500);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.cwnd, IW);
    end_pac();
}

/* Handshake, VM as server: the SYN-ACK is a window trigger (with the VM's
 * MSS) and the RTT is measured from its release to the peer's ACK. */
static void
test_handshake_vm_server(void)
{
    struct pac_flow_info info;
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    peer_syn(pac, AT(1000), 0, 7000, 1460);
    PAC_CHECK_EQ(n_flows(pac), 1);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.rtt_us, 0);

    CHECK_PASS(vm_synack(pac, AT(1010), 0, 7000, 1200, 0));
    /* + 49 for the last frame (see test_request_window_trigger()). */
    CHECK_IN_FLIGHT(pac, 10 * 1200 + 49);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.handshake_triggers, 1);
    PAC_CHECK_EQ(st.request_triggers, 0);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.mss, 1200);

    rx(pac, AT(1260), 0, 7001, 0, ACK, PAC_ECN_NOT_ECT);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.rtt_us, 250);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.avg_rtt_us, 250);
    PAC_CHECK_EQ(st.control_interval_us, 250);

    /* Later ACKs do not measure again. */
    rx(pac, AT(1400), 0, 7001, 0, ACK, PAC_ECN_NOT_ECT);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.rtt_us, 250);
    CHECK_N_EMITTED(0);
    end_pac();
}

/* A window trigger right after another, before the peer has sent anything
 * (the window is pending), adds no second window: here a VM server that
 * speaks first (a banner) right after its SYN-ACK. */
static void
test_request_window_pending(void)
{
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    peer_syn(pac, AT(0), 0, 7000, 0);
    CHECK_PASS(vm_synack(pac, AT(10), 0, 7000, 0, 0));
    CHECK_IN_FLIGHT(pac, IW);
    rx(pac, AT(110), 0, 7001, 0, ACK, PAC_ECN_NOT_ECT);
    CHECK_PASS(tx(pac, AT(120), 0, 7001, 100, ACK, 1));
    CHECK_IN_FLIGHT(pac, IW);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.handshake_triggers, 1);
    PAC_CHECK_EQ(st.request_triggers, 1);

    /* Once the peer has answered (500 bytes), a request counts a window
     * again: the rest of the first one will not come; the new one is its
     * delta plus the window, 500 + IW (the peer's first answer says
     * little of its next: test_first_answer_small()). */
    rx_data(pac, AT(200), 0, 7001, 500);
    CHECK_IN_FLIGHT(pac, IW - 500);
    CHECK_PASS(tx(pac, AT(210), 0, 7501, 100, ACK, 2));
    CHECK_IN_FLIGHT(pac, 500 + IW);
    PAC_CHECK_EQ(get_stats(pac).request_triggers, 2);
    end_pac();
}

/* A held SYN-ACK: the RTT does not include PAC's own delay. */
static void
test_handshake_held_synack(void)
{
    struct pac_flow_info info;
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 1, 1, 0));          /* IW */
    peer_syn(pac, AT(10), 0, 7000, 0);
    CHECK_HELD(vm_synack(pac, AT(10), 0, 7000, 1200, 1));
    PAC_CHECK_EQ(get_stats(pac).handshake_triggers, 0);

    rx_data(pac, AT(50), 1, 1, IW);
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    CHECK_IN_FLIGHT(pac, 12000 + 49);          /* + the last frame. */
    PAC_CHECK_EQ(get_stats(pac).handshake_triggers, 1);

    rx(pac, AT(350), 0, 7001, 0, ACK, PAC_ECN_NOT_ECT);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.rtt_us, 300);
    end_pac();
}

/* Handshake, VM as client: the SYN passes and triggers nothing, the SYN-ACK
 * measures the RTT; the handshake ACK is the flow's first ACK (one MSS),
 * and the request that follows is the window trigger (the server answers
 * only that), replacing what the handshake ACK counted. */
static void
test_handshake_vm_client(void)
{
    struct pac_flow_info info;
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    CHECK_PASS(vm_syn(pac, AT(0), 0, 1400, 0));
    CHECK_IN_FLIGHT(pac, SYNACK_FRAME); /* The SYN-ACK's frame. */
    st = get_stats(pac);
    PAC_CHECK_EQ(st.tx_passed, 1);
    PAC_CHECK_EQ(st.handshake_triggers, 0);
    PAC_CHECK_EQ(st.flows_created, 1);

    peer_synack(pac, AT(80), 0, 9000, 0);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.rtt_us, 80);
    PAC_CHECK_EQ(info.mss, 1400);
    PAC_CHECK_EQ(get_stats(pac).avg_rtt_us, 80);

    CHECK_PASS(tx(pac, AT(90), 0, 9001, 0, ACK, 1));
    CHECK_IN_FLIGHT(pac, 1400);
    CHECK_PASS(tx(pac, AT(100), 0, 9001, 300, ACK, 2));
    CHECK_IN_FLIGHT(pac, 10 * 1400 + 25);      /* + the last frame. */
    st = get_stats(pac);
    PAC_CHECK_EQ(st.handshake_triggers, 0);
    PAC_CHECK_EQ(st.request_triggers, 1);
    end_pac();
}

/* Duplicate ACKs pass at once even over the threshold and behind held
 * packets of other flows, and count one MSS. */
static void
test_dup_ack_passes(void)
{
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);

    /* The data the ACKs below acknowledge (no trigger counted it). */
    rx_data(pac, AT(0), 0, 1, 5000);
    rx_data(pac, AT(0), 1, 1, 3000);
    CHECK_IN_FLIGHT(pac, 0);

    CHECK_PASS(tx(pac, AT(0), 1, 1001, 0, ACK, 0));    /* 1460 */
    CHECK_PASS(tx(pac, AT(1), 0, 1, 0, ACK, 1));       /* 2920 */
    CHECK_PASS(tx(pac, AT(2), 0, 1461, 0, ACK, 2));    /* 5840 */
    CHECK_PASS(tx(pac, AT(3), 0, 2921, 0, ACK, 3));    /* 8760 */
    CHECK_HELD(tx(pac, AT(4), 0, 4381, 0, ACK, 4));    /* 11680 */
    CHECK_IN_FLIGHT(pac, 8760);

    /* Same ACK number, no payload: a duplicate ACK of flow 1. */
    CHECK_PASS(tx(pac, AT(5), 1, 1001, 0, ACK, 5));
    CHECK_IN_FLIGHT(pac, 8760 + MSS);
    CHECK_PASS(tx(pac, AT(6), 1, 1001, 0, ACK, 6));
    CHECK_PASS(tx(pac, AT(7), 1, 1001, 0, ACK | PAC_TCP_ECE, 7));
    CHECK_IN_FLIGHT(pac, 8760 + 3 * MSS);

    /* A new ACK of flow 1 does not fit and waits. */
    CHECK_HELD(tx(pac, AT(8), 1, 2461, 0, ACK, 8));

    /* A duplicate on a flow with held packets keeps its place in line. */
    CHECK_HELD(tx(pac, AT(9), 0, 4381, 0, ACK, 9));
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 3);
    PAC_CHECK_EQ(st.stale_drops, 0);
    PAC_CHECK_EQ(st.tx_passed, 7);
    CHECK_N_EMITTED(0);
    end_pac();
    CHECK_N_EMITTED(3);
}

/* A flow is never reordered: a segment of a flow with held packets is
 * queued behind them even if it would fit. */
static void
test_no_reorder(void)
{
    uint64_t room = max_payload(10000);
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);

    rx_data(pac, AT(0), 0, 1, 5000);
    CHECK_PASS(tx(pac, AT(1), 0, 1001, 0, ACK, 0));    /* 1460 */
    CHECK_PASS(tx(pac, AT(2), 0, 3001, 0, ACK, 1));    /* 5460 */
    CHECK_PASS(tx(pac, AT(3), 0, 5001, 0, ACK, 2));    /* 9460 */
    rx_data(pac, AT(4), 0, 5001, 2000);                /* 7460 */
    CHECK_HELD(tx(pac, AT(5), 0, 7001, 0, ACK, 3));    /* +4000 */

    /* A FIN: trigger 0, it would fit, but it must follow packet 3. */
    CHECK_HELD(tx(pac, AT(6), 0, 7001, 0, ACK | PAC_TCP_FIN, 4));
    PAC_CHECK_EQ(get_stats(pac).held, 2);
    CHECK_IN_FLIGHT(pac, 7460);
    CHECK_N_EMITTED(0);

    rx_data(pac, AT(7), 0, 7001, 7460 - (room - 4000));
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(0, 3);
    CHECK_RELEASED(1, 4);
    CHECK_IN_FLIGHT(pac, room);
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    end_pac();
}

/* An RST from the VM sends the flow's held packets first (before pac_tx()
 * returns PAC_PASS for the RST) and removes the flow. */
static void
test_rst_from_vm(void)
{
    struct pac_flow_info info;
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 1, 1, 0));          /* IW */
    CHECK_PASS(tx(pac, AT(1), 0, 1, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(2), 0, 1461, 0, ACK, 2));
    CHECK_HELD(tx(pac, AT(3), 0, 2921, 0, ACK, 3));
    PAC_CHECK_EQ(n_flows(pac), 2);

    CHECK_PASS(tx(pac, AT(4), 0, 2921, 0, ACK | PAC_TCP_RST, 4));
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(0, 2);
    CHECK_RELEASED(1, 3);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 0);
    PAC_CHECK_EQ(st.flows, 1);
    PAC_CHECK_EQ(st.flows_closed, 1);
    PAC_CHECK_EQ(st.released[PAC_REL_FLUSH], 2);
    PAC_CHECK_EQ(n_flows(pac), 1);
    PAC_CHECK(!get_flow(pac, 0, &info));
    end_pac();
    CHECK_N_EMITTED(2);
}

/* Section III-D: a stale ACK drops the held pure ACKs that the newest held
 * one supersedes, moves the flow to level 0 and to slow start, and keeps
 * the rest in order. */
static void
test_stale_ack(void)
{
    uint64_t room = max_payload(10000);
    struct pac_flow_info info;
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);

    /* Flow 0 has received 20000 bytes (level 1), one CE-marked. */
    rx(pac, AT(0), 0, 1, 20000, ACK, PAC_ECN_CE);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.level, 1);
    PAC_CHECK(!info.slow_start);

    CHECK_PASS(request(pac, AT(1), 1, 1, 0));          /* 14600 */
    CHECK_PASS(tx(pac, AT(2), 0, 0, 0, ACK, 1));       /* Base: 16060. */
    CHECK_HELD(tx(pac, AT(3), 0, 1000, 0, ACK, 2));
    CHECK_HELD(tx(pac, AT(4), 0, 2000, 0, ACK, 3));
    CHECK_HELD(tx(pac, AT(5), 0, 3000, 0, ACK, 4));
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 3);
    PAC_CHECK_EQ(st.held_per_level[1], 3);

    /* The VM repeats ACK 2000. */
    CHECK_HELD(tx(pac, AT(6), 0, 2000, 0, ACK, 5));
    CHECK_N_EMITTED(2);
    CHECK_EMIT(0, 2, PAC_EMIT_DROP_STALE);
    CHECK_EMIT(1, 3, PAC_EMIT_DROP_STALE);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.stale_drops, 2);
    PAC_CHECK_EQ(st.stale_events, 1);
    PAC_CHECK_EQ(st.held, 2);
    PAC_CHECK_EQ(st.held_per_level[0], 2);
    PAC_CHECK_EQ(st.held_per_level[1], 0);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.level, 0);
    PAC_CHECK(info.slow_start);
    PAC_CHECK_EQ(info.held, 2);
    CHECK_IN_FLIGHT(pac, 16060);

    /* ACK 3000: 2 * 3000 in slow start. */
    rx_data(pac, AT(7), 1, 1, 16060 - (room - 6000));
    CHECK_N_EMITTED(3);
    CHECK_RELEASED(2, 4);
    CHECK_IN_FLIGHT(pac, room);

    /* Then, once flow 0's data has come, the duplicate: one MSS. */
    rx_data(pac, AT(8), 0, 20001, MSS + 6000);
    CHECK_N_EMITTED(4);
    CHECK_RELEASED(3, 5);
    CHECK_IN_FLIGHT(pac, room - MSS - 6000 + MSS);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 0);
    PAC_CHECK_EQ(st.released[PAC_REL_FIT], 2);
    end_pac();
    CHECK_N_EMITTED(4);
}

/* Section III-D: data segments (requests, FIN, data) are never dropped,
 * only pure ACKs superseded by a newer held pure ACK. */
static void
test_stale_keeps_data(void)
{
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);

    rx_data(pac, AT(0), 0, 1, 500);
    CHECK_PASS(request(pac, AT(1), 1, 1, 0));          /* 14600 */
    CHECK_PASS(tx(pac, AT(2), 0, 1, 0, ACK, 1));       /* Base. */
    CHECK_HELD(tx(pac, AT(3), 0, 501, 100, ACK, 2));   /* Request. */
    CHECK_HELD(tx(pac, AT(4), 0, 1000, 0, ACK, 3));    /* Pure ACK. */
    CHECK_HELD(tx(pac, AT(5), 0, 1000, 200, ACK, 4));  /* Data. */
    CHECK_HELD(tx(pac, AT(6), 0, 2000, 0, ACK | PAC_TCP_FIN, 5));
    CHECK_HELD(tx(pac, AT(7), 0, 3000, 0, ACK, 6));    /* Pure ACK. */
    CHECK_HELD(tx(pac, AT(8), 0, 1000, 0, ACK, 7));    /* Stale. */

    /* The superseded pure ACK 1000 is dropped when it reaches the head,
     * after the request. */
    CHECK_N_EMITTED(0);
    PAC_CHECK_EQ(get_stats(pac).stale_events, 1);
    PAC_CHECK_EQ(get_stats(pac).held, 6);

    pac_flush(pac, rec_emit, NULL);
    CHECK_N_EMITTED(6);
    CHECK_RELEASED(0, 2);
    CHECK_EMIT(1, 3, PAC_EMIT_DROP_STALE);
    CHECK_RELEASED(2, 4);
    CHECK_RELEASED(3, 5);
    CHECK_RELEASED(4, 6);
    CHECK_RELEASED(5, 7);
    PAC_CHECK_EQ(get_stats(pac).stale_drops, 1);
    PAC_CHECK_EQ(get_stats(pac).released[PAC_REL_FLUSH], 5);
    end_pac();
    CHECK_N_EMITTED(6);
}

/* A stale ACK with no newer held pure ACK drops nothing, but still counts
 * as an event and moves the flow up. */
static void
test_stale_without_newer(void)
{
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(1), 1, 1, 0));
    CHECK_PASS(tx(pac, AT(2), 0, 1, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(3), 0, 3000, 0, ACK, 2));
    CHECK_HELD(tx(pac, AT(4), 0, 3000, 0, ACK, 3));    /* Equal: stale. */
    st = get_stats(pac);
    PAC_CHECK_EQ(st.stale_events, 1);
    PAC_CHECK_EQ(st.stale_drops, 0);
    PAC_CHECK_EQ(st.held, 2);
    CHECK_N_EMITTED(0);
    end_pac();
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(0, 2);
    CHECK_RELEASED(1, 3);
}

/* Regression: a duplicate SYN-ACK (or any segment that would move rcv_nxt
 * backwards) does not change in_flight.  Crediting 'outstanding -
 * pac_flow_outstanding(f)' in pac_rx() as uint32_t would wrap and zero the
 * whole instance's in_flight. */
static void
test_dup_synack_keeps_in_flight(void)
{
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 1, 1, 0));          /* Flow 1: IW. */
    CHECK_PASS(vm_syn(pac, AT(0), 0, 0, 1));
    peer_synack(pac, AT(100), 0, 5000, 0);
    CHECK_PASS(tx(pac, AT(100), 0, 5001, 100, ACK, 2)); /* Flow 0: IW. */
    CHECK_IN_FLIGHT(pac, 2 * IW);
    rx_data(pac, AT(200), 0, 5001, 1000);
    CHECK_IN_FLIGHT(pac, 2 * IW - 1000);

    /* The peer's SYN-ACK again (a retransmission or a duplicate). */
    peer_synack(pac, AT(210), 0, 5000, 0);
    CHECK_IN_FLIGHT(pac, 2 * IW - 1000);
    end_pac();
}

/* Regression: when the state changes at the start of a pac_tx() call (here
 * the silence reset) so that held packets and the new one all fit, the new
 * one is passed (PAC_PASS, after the older ones are emitted), never emitted
 * by the call that returns PAC_HELD for it. */
static void
test_tx_own_packet_not_emitted(void)
{
    struct pac_config cfg;
    enum pac_verdict v;
    struct pac *pac;

    pac_config_init(&cfg);
    cfg.fast_path = false;      /* The tracked algorithm. */
    cfg.base_rtt_us = 1000;
    cfg.threshold = 10000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 9, 1, 0));          /* IW */
    rx(pac, AT(1), 0, 1, 0, ACK, PAC_ECN_ECT0);
    CHECK_PASS(tx(pac, AT(1), 0, 1, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(1), 0, 1461, 0, ACK, 2));
    rx(pac, AT(1), 1, 1, 0, ACK, PAC_ECN_ECT0);
    CHECK_PASS(tx(pac, AT(1), 1, 1, 0, ACK, 3));
    CHECK_N_EMITTED(0);

    /* 8 base RTTs without data: in_flight is reset at the start of this
     * call, so flow 0's ACK and this one both fit. */
    v = tx(pac, AT(8000), 1, 1461, 0, ACK, 4);
    PAC_CHECK_EQ(get_stats(pac).silence_resets, 1);
    PAC_CHECK_EQ(v, PAC_PASS);
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 2);
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    end_pac();
}

/* The configuration of the window clamp tests: threshold 20000, so that
 * the clamp is 9 segments of 1000 bytes, and an initial window of 30
 * segments, larger than the clamp. */
static void
clamp_config(struct pac_config *cfg)
{
    test_config(cfg);
    cfg->threshold = 20000;
    cfg->init_window_segs = 30;
}

/* A new instance of clamp_config(), or NULL. */
static struct pac *
make_clamp_pac(void)
{
    struct pac_config cfg;

    clamp_config(&cfg);
    return make_pac(&cfg);
}

/* The receiver's handshake on test flow 'flow': its SYN (MSS 1000, window
 * scale 'vm_ws', or none if negative), the peer's SYN-ACK (MSS 1000, scale
 * 'peer_ws' or none) at ISN 5000. */
static void
clamp_handshake(struct pac *pac, int flow, int vm_ws, int peer_ws, int pkt)
{
    struct pac_segment s = vm_syn_seg(flow, 1000);

    s.has_wscale = vm_ws >= 0;
    s.wscale = vm_ws >= 0 ? vm_ws : 0;
    CHECK_PASS(tx_at(pac, AT(0), &s, pkt));
    s = peer_synack_seg(flow, 5000, 1000);
    s.has_wscale = peer_ws >= 0;
    s.wscale = peer_ws >= 0 ? peer_ws : 0;
    rx_at(pac, AT(100), &s);
}

/* pac_tx() of a segment from the receiver with raw window 'window', which
 * passes and leaves with window 'expect'. */
static void
clamp_ack(struct pac *pac, uint64_t now, int flow, uint32_t ack,
          uint32_t len, uint16_t window, uint16_t expect, int pkt)
{
    struct pac_segment s = tx_seg(flow, ack, len, ACK);

    s.window = window;
    CHECK_PASS(pac_tx(pac, &s, P(pkt), now, rec_emit, NULL));
    PAC_CHECK_EQ(s.window, expect);
    PAC_CHECK_EQ(s.window_clamped, expect != window);
}

/* On a new instance of clamp_config() (the clamp 71 units): flow 0 sends a
 * request with raw window 'window' (leaving as 'expect'), and its peer
 * answers with the whole window: 1000-byte segments and a short one that
 * ends at the right edge.  The request counts the clamped window (9000
 * bytes, plus the frame of the short last segment it ends in, 66 * (1460 -
 * 240) / 1526 = 52), not the 30-segment initial window, or less if the
 * window it offers is smaller: the peer sends no further than its right
 * edge.  The short segment fills the window: it does not end the
 * answer. */
static void
clamped_answer(struct pac *pac, uint16_t window, uint16_t expect)
{
    uint32_t end = 5001 + expect * 128u;
    uint32_t seq;

    clamp_handshake(pac, 0, 7, 7, 0);
    clamp_ack(pac, AT(110), 0, 5001, 100, window, expect, 1);
    PAC_CHECK_EQ(get_stats(pac).in_flight,
                 expect == 71 ? 9000 + 52 : expect * 128u);
    for (seq = 5001; seq + 1000 < end; seq += 1000) {
        rx_data(pac, AT(200), 0, seq, 1000);
    }
    rx_data(pac, AT(200), 0, seq, end - seq);
    PAC_CHECK_EQ(get_stats(pac).answer_ends, 0);
}

/* clamp_window: the receiver's window is lowered to as many whole segments
 * as half the threshold holds frames of (20000 / 2 / 1066: 9 x 1000
 * bytes), in units of its scale (2^7, rounded up), only once the handshake
 * showed the scale; a request's window counts no more than that; a peer
 * that filled the window is window-limited (its ACKs count growth only up
 * to the window's right edge), and its short segment at the window's edge
 * does not end its answer. */
static void
test_window_clamp(void)
{
    struct pac_config cfg;
    uint64_t before;
    struct pac *pac;

    pac = make_clamp_pac();
    PAC_CHECK(pac);

    /* Scale 7 on both sides: at most ceil(9000 / 128) = 71. */
    clamp_handshake(pac, 0, 7, 8, 0);
    clamp_ack(pac, AT(110), 0, 5001, 0, 500, 71, 1);
    PAC_CHECK_EQ(get_stats(pac).windows_clamped, 1);
    clamp_ack(pac, AT(110), 0, 5001, 0, 50, 50, 2);
    PAC_CHECK_EQ(get_stats(pac).windows_clamped, 1);

    /* No handshake seen: the scale is unknown, the window stays. */
    clamp_ack(pac, AT(110), 1, 1, 0, 500, 500, 3);

    /* The peer sent no scale option: no scaling, the clamp in bytes. */
    clamp_handshake(pac, 2, 7, -1, 4);
    clamp_ack(pac, AT(110), 2, 5001, 0, 20000, 9000, 5);
    PAC_CHECK_EQ(get_stats(pac).windows_clamped, 2);
    end_pac();

    /* The peer sends nine full segments and 88 bytes more: its answer stops
     * at the window's right edge, 5001 + 71 * 128 = 14089. */
    pac = make_clamp_pac();
    PAC_CHECK(pac);
    clamped_answer(pac, 500, 71);

    /* Window-limited: an ACK of 1000 bytes lets the peer send 1000 bytes,
     * not 2000 as in slow start (test_ack_trigger_slow_start). */
    before = get_stats(pac).in_flight;
    clamp_ack(pac, AT(210), 0, 6001, 0, 500, 71, 2);
    PAC_CHECK_EQ(get_stats(pac).in_flight - before, 1000);
    end_pac();

    /* Window-limited, and the window grows: the receiver's application
     * reads, and the ACK of a window of 40 units (5 120 bytes, all sent:
     * five segments and a short one at its edge) offers 71.  The peer may
     * send up to the new right edge, 10121 + 71 * 128 = 19209: the flow's
     * budget reaches it (in_flight 9 088, the window), where counting only
     * the 5 120 acknowledged bytes would leave it 36 short (9 052). */
    pac = make_clamp_pac();
    PAC_CHECK(pac);
    clamped_answer(pac, 40, 40);
    clamp_ack(pac, AT(210), 0, 10121, 0, 71, 71, 2);
    PAC_CHECK_EQ(get_stats(pac).in_flight, 71 * 128);
    end_pac();

    /* Off: the window stays, the request counts the 30-segment window. */
    clamp_config(&cfg);
    cfg.clamp_window = false;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    clamp_handshake(pac, 0, 7, 7, 0);
    clamp_ack(pac, AT(110), 0, 5001, 100, 500, 500, 1);
    PAC_CHECK(get_stats(pac).in_flight >= 30000);
    PAC_CHECK_EQ(get_stats(pac).windows_clamped, 0);
    end_pac();
}

/* policy=rwnd, the receiver-window peer: nothing is held, and each
 * connection's window is lowered to the threshold divided by the
 * connections PAC tracks, in whole segments of frames (20000 / n / 1066),
 * at least two, in units of the scale (2^7, rounded up).  A window is
 * never shrunk: its right edge stays until the peer's data passes it.  A
 * peer without a window scale gets the share in bytes. */
static void
test_rwnd_policy(void)
{
    struct pac_config cfg;
    struct pac *pac;
    uint32_t edge, seq;

    clamp_config(&cfg);
    cfg.policy = PAC_POLICY_RWND;
    cfg.clamp_window = false;       /* The policy clamps regardless. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    /* One connection: 18 segments of 18 000 bytes, ceil(18000 / 128). */
    clamp_handshake(pac, 0, 7, 7, 0);
    clamp_ack(pac, AT(110), 0, 5001, 100, 500, 141, 1);

    /* Three more: 4 segments each.  Flow 0's window stays at its edge
     * (5001 + 141 * 128) until data passes it; the new flows get 32. */
    clamp_handshake(pac, 1, 7, 7, 2);
    clamp_handshake(pac, 2, 7, 7, 3);
    clamp_handshake(pac, 3, 7, 7, 4);
    clamp_ack(pac, AT(120), 1, 5001, 100, 500, 32, 5);
    clamp_ack(pac, AT(120), 0, 5001, 0, 500, 141, 6);
    edge = 5001 + 141 * 128;
    for (seq = 5001; seq < edge; seq += 1000) {
        rx_data(pac, AT(200), 0, seq, edge - seq < 1000 ? edge - seq : 1000);
    }
    clamp_ack(pac, AT(210), 0, edge, 0, 500, 32, 8);

    /* Twelve connections: 20000 / 12 / 1066 is 1 segment; the floor is
     * 2 (2 000 bytes, 16 units).  A peer without a scale: 2 000 bytes. */
    for (int flow = 4; flow < 11; flow++) {
        clamp_handshake(pac, flow, 7, 7, 10 + flow);
    }
    clamp_handshake(pac, 11, 7, -1, 30);
    clamp_ack(pac, AT(300), 4, 5001, 100, 500, 16, 31);
    clamp_ack(pac, AT(300), 11, 5001, 100, 20000, 2000, 32);

    /* Requests and ACKs all passed: nothing held, nothing budgeted. */
    PAC_CHECK_EQ(get_stats(pac).tx_held, 0);
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    PAC_CHECK_EQ(get_stats(pac).request_triggers, 0);
    PAC_CHECK(get_stats(pac).windows_clamped >= 6);
    end_pac();
}

/* policy=rdtcp, RDTCP's centralized scheduler: the windows of policy=rwnd,
 * and the receiver's segments held while what they let out does not fit.
 * A request counts its connection's whole share (not the peer's initial
 * window of 30 segments), an ACK only the bytes it acknowledges (no window
 * growth, in slow start too), every flow stays on the first level
 * whatever it received, and held requests go out in the order they came. */
static void
test_rdtcp_policy(void)
{
    struct pac_flow_info info;
    struct pac_config cfg;
    struct pac *pac;
    int first_held = -1;
    uint64_t before;
    uint32_t seq;

    clamp_config(&cfg);
    cfg.policy = PAC_POLICY_RDTCP;
    cfg.clamp_window = false;       /* The policy clamps regardless. */

    /* One connection: its share is 18 segments, 141 units of 2^7. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    clamp_handshake(pac, 0, 7, 7, 0);
    clamp_ack(pac, AT(110), 0, 5001, 100, 500, 141, 1);
    before = in_flight(pac);
    PAC_CHECK(before >= 18000 && before < 19000);

    /* 25 000 bytes come (past the 20 000 of the first MLFQ level) and are
     * acknowledged 1 000, then 4 000 bytes at a time: each ACK adds what it
     * acknowledges to in_flight, as the data took it away, and no more. */
    for (seq = 5001; seq < 5001 + 25000; seq += 1000) {
        rx_data(pac, AT(200), 0, seq, 1000);
        before = in_flight(pac);
        clamp_ack(pac, AT(210), 0, seq + 1000, 0, 500, 141, 2);
        PAC_CHECK_EQ(in_flight(pac), before + 1000);
    }
    rx_data(pac, AT(300), 0, seq, 4000);
    before = in_flight(pac);
    clamp_ack(pac, AT(310), 0, seq + 4000, 0, 500, 141, 3);
    PAC_CHECK_EQ(in_flight(pac), before + 4000);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.level, 0);
    PAC_CHECK(info.slow_start);
    PAC_CHECK_EQ(get_stats(pac).tx_held, 0);
    end_pac();

    /* Twelve connections, a share of 2 segments each (the floor): the
     * requests that fit the threshold pass, the rest wait, and the answer
     * of the first lets the first one held out, then the next. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    for (int flow = 0; flow < 12; flow++) {
        clamp_handshake(pac, flow, 7, 7, flow);
    }
    for (int flow = 0; flow < 12; flow++) {
        struct pac_segment s = tx_seg(flow, 5001, 100, ACK);
        enum pac_verdict v;

        s.window = 500;
        v = pac_tx(pac, &s, P(20 + flow), AT(110), rec_emit, NULL);
        PAC_CHECK_EQ(s.window, 16);
        if (v == PAC_HELD && first_held < 0) {
            first_held = flow;
        }
        PAC_CHECK_EQ(v, first_held < 0 ? PAC_PASS : PAC_HELD);
    }
    PAC_CHECK(first_held >= 8 && first_held < 11);
    PAC_CHECK_EQ(get_stats(pac).held, 12 - first_held);

    rx_data(pac, AT(200), 0, 5001, 1000);
    rx_data(pac, AT(201), 0, 6001, 1000);
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 20 + first_held);
    rx_data(pac, AT(210), 1, 5001, 1000);
    rx_data(pac, AT(211), 1, 6001, 1000);
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 20 + first_held + 1);
    end_pac();
}

/* The dry verdict under policy=rdtcp: a peer that sent 2 of the 9
 * segments its request allowed (the clamp, the share of two flows) and
 * then nothing for 8 ms, many times PAC's drain time, keeps its budget,
 * where PAC takes it back; RDTCP's counters fall only as data comes.  A
 * second flow's data, 1 000 bytes every 50 us, keeps the silence reset
 * away (and sets the drain time: threshold / peak rate, about 1 ms). */
static void
in_flight_after_slow_peer(uint32_t policy, uint64_t *left,
                          uint64_t *dry_reclaims)
{
    struct pac_config cfg;
    struct pac *pac;

    *left = *dry_reclaims = UINT64_MAX;
    clamp_config(&cfg);
    cfg.policy = policy;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    clamp_handshake(pac, 0, 7, 7, 0);
    clamp_handshake(pac, 1, 7, 7, 1);
    clamp_ack(pac, AT(110), 0, 5001, 100, 500, 71, 2);
    clamp_ack(pac, AT(110), 1, 5001, 100, 500, 71, 3);
    rx_data(pac, AT(200), 0, 5001, 1000);
    rx_data(pac, AT(200), 0, 6001, 1000);
    for (int i = 0; i < 160; i++) {
        rx_data(pac, AT(300 + 50 * i), 1, 5001 + 1000 * i, 1000);
        run(pac, AT(300 + 50 * i + 25));
    }
    *left = in_flight(pac);
    *dry_reclaims = get_stats(pac).dry_reclaims;
    PAC_CHECK_EQ(get_stats(pac).silence_resets, 0);
    end_pac();
}

static void
test_rdtcp_keeps_slow_budget(void)
{
    uint64_t pac_left, pac_reclaims, rdtcp_left, rdtcp_reclaims;

    in_flight_after_slow_peer(PAC_POLICY_PAC, &pac_left, &pac_reclaims);
    in_flight_after_slow_peer(PAC_POLICY_RDTCP, &rdtcp_left,
                              &rdtcp_reclaims);
    PAC_CHECK_EQ(pac_reclaims, 1);
    PAC_CHECK(pac_left < 1000);
    PAC_CHECK_EQ(rdtcp_reclaims, 0);
    PAC_CHECK(rdtcp_left >= 7000 && rdtcp_left < 8000);
}

/* A window-limited peer's short segment may stop at the edge of an ACK
 * older than the newest one PAC let out: its data waited in the switch
 * buffer while PAC let out more.  In a connection's first answer (no
 * expected size to tell) that segment must not end the answer, while a
 * short segment at no edge still does. */
static void
test_window_edge_older(void)
{
    struct pac *pac;
    uint32_t seq;

    pac = make_clamp_pac();
    PAC_CHECK(pac);
    clamped_answer(pac, 500, 71);

    /* The ACK of the whole window offers up to 14089 + 71 * 128 = 23177:
     * nine full segments and a short one of 88 bytes.  PAC lets out the
     * ACK of the first two (edge 25177) before the short one arrives. */
    clamp_ack(pac, AT(210), 0, 14089, 0, 500, 71, 2);
    for (seq = 14089; seq < 23089; seq += 1000) {
        rx_data(pac, AT(300), 0, seq, 1000);
    }
    clamp_ack(pac, AT(310), 0, 16089, 0, 500, 71, 3);
    rx_data(pac, AT(320), 0, 23089, 88);
    PAC_CHECK_EQ(get_stats(pac).answer_ends, 0);

    /* 100 bytes more, ending at no edge PAC let out: the answer's end. */
    rx_data(pac, AT(330), 0, 23177, 100);
    PAC_CHECK_EQ(get_stats(pac).answer_ends, 1);
    end_pac();
}

int
main(void)
{
    PAC_RUN_TEST(test_rx_lowers_in_flight);
    PAC_RUN_TEST(test_window_clamp);
    PAC_RUN_TEST(test_rwnd_policy);
    PAC_RUN_TEST(test_rdtcp_policy);
    PAC_RUN_TEST(test_rdtcp_keeps_slow_budget);
    PAC_RUN_TEST(test_window_edge_older);
    PAC_RUN_TEST(test_rx_credit_per_flow);
    PAC_RUN_TEST(test_ack_trigger_slow_start);
    PAC_RUN_TEST(test_ack_trigger_congestion_avoidance);
    PAC_RUN_TEST(test_ack_trigger_ca_window);
    PAC_RUN_TEST(test_ecn_off_keeps_slow_start);
    PAC_RUN_TEST(test_data_to_busy_peer);
    PAC_RUN_TEST(test_hold_and_release);
    PAC_RUN_TEST(test_empty_pipe_admits_anything);
    PAC_RUN_TEST(test_request_window_trigger);
    PAC_RUN_TEST(test_request_learned_window);
    PAC_RUN_TEST(test_request_small_burst);
    PAC_RUN_TEST(test_short_segment_ends_answer);
    PAC_RUN_TEST(test_answer_sizes_alternate);
    PAC_RUN_TEST(test_first_answer_small);
    PAC_RUN_TEST(test_no_dry_waits_with_held_acks);
    PAC_RUN_TEST(test_handshake_vm_server);
    PAC_RUN_TEST(test_request_window_pending);
    PAC_RUN_TEST(test_handshake_held_synack);
    PAC_RUN_TEST(test_handshake_vm_client);
    PAC_RUN_TEST(test_dup_ack_passes);
    PAC_RUN_TEST(test_no_reorder);
    PAC_RUN_TEST(test_rst_from_vm);
    PAC_RUN_TEST(test_stale_ack);
    PAC_RUN_TEST(test_stale_keeps_data);
    PAC_RUN_TEST(test_stale_without_newer);
    PAC_RUN_TEST(test_dup_synack_keeps_in_flight);
    PAC_RUN_TEST(test_tx_own_packet_not_emitted);
    drop_pac();
    PAC_TEST_MAIN_END;
}
