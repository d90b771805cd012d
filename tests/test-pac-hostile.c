/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of libpac against hostile or malformed traffic: segments a
 * tenant or a remote peer can craft (reused ports with new sequence
 * numbers, ACKs of data never sent, blind RSTs, colliding flow keys, long
 * held lists), and state that only long runs reach (epoch wrap, the first
 * rate sample).  Each test states what an attacker tries and what PAC must
 * keep.  Some look inside the instance (pac-private.h) to check that
 * in_flight is the sum of what the flows account for. */

#include <time.h>

#include "pac.h"

#include "pac-private.h"
#include "pac-flow.h"
#include "pac-test-fixture.h"

/* Whether in_flight is the sum of the flows' outstanding bytes and the
 * unattributed part, as pac-budget.c keeps it. */
static bool
in_flight_consistent(const struct pac *pac)
{
    uint64_t sum = pac->unattributed;

    for (uint32_t i = 0; i < pac->cfg.max_flows; i++) {
        const struct pac_flow *f = &pac->flows[i];

        if (f->flags & PAC_F_IN_USE) {
            sum += pac_flow_outstanding(f);
        }
    }
    if (sum != pac->in_flight) {
        fprintf(stderr, "in_flight %"PRIu64" != %"PRIu64" accounted\n",
                pac->in_flight, sum);
    }
    return sum == pac->in_flight;
}

/* The first window of the peak-rate filter starts when the instance is
 * created: a window counted from time 0 reads the first data as a rate of
 * a few bytes per hour, and the drain time of dry flows (threshold / peak
 * rate) goes to its cap of 100 ms. */
static void
test_first_rate_window(void)
{
    struct pac_config cfg;
    struct pac *pac;

    pac_config_init(&cfg);      /* Base RTT 100 us: short intervals. */
    cfg.fast_path = false;      /* Tracked from the first segment. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    for (int i = 0; i < 24; i++) {
        rx_data(pac, AT(1 + 50 * i), 0, 1 + i * MSS, MSS);
        PAC_CHECK(pac_dry_time(pac) < 10000);
    }
    PAC_CHECK(pac->bw_max > 20 && pac->bw_max < 40);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* A silence reset forgets every window PAC counted, pending ones too.  A
 * flow remembers the reset epoch in which it counted its window in 8 bits:
 * 256 resets later, the SYN-ACK of a peer that never answered looked
 * counted again, and the receiver's first data to that peer (a server that
 * speaks first) counted no window.  A peer can make PAC reset as often as
 * it likes by asking and not answering. */
static void
test_epoch_wrap(void)
{
    struct pac_config cfg;
    uint64_t t = 0, before;
    struct pac *pac;
    int pkt = 0;

    pac_config_init(&cfg);      /* Silence resets after 1 ms. */
    cfg.fast_path = false;      /* Tracked from the first segment. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    /* The VM is the server of flow 0; its peer goes silent. */
    peer_syn(pac, AT(t), 0, 1000, MSS);
    CHECK_PASS(vm_synack(pac, AT(t), 0, 1000, MSS, pkt++));
    PAC_CHECK(in_flight(pac) >= IW);

    /* 256 flows that are asked and never answer: one reset each. */
    for (int k = 0; k < 256; k++) {
        uint64_t resets = get_stats(pac).silence_resets;

        t += 10;
        CHECK_PASS(request(pac, AT(t), 1 + k, 1, pkt++));
        while (get_stats(pac).silence_resets == resets && t < 1000000) {
            t += 200;
            run(pac, AT(t));
        }
        PAC_CHECK_EQ(get_stats(pac).silence_resets, resets + 1);
    }
    PAC_CHECK_EQ(in_flight(pac), 0);

    /* The VM speaks first on flow 0: its data is a request, and nothing
     * counts the peer's answer but its window. */
    before = get_stats(pac).request_triggers;
    CHECK_PASS(tx(pac, AT(t + 1), 0, 1001, 100, ACK, pkt++));
    PAC_CHECK_EQ(get_stats(pac).request_triggers, before + 1);
    PAC_CHECK(in_flight(pac) >= IW);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* A remote host that knows a connection's addresses and ports but not its
 * sequence numbers sends RSTs.  Only an RST at the sequence number the
 * receiver expects next removes the flow's state (RFC 5961, as Linux
 * checks it): at rcv_nxt, or at the receiver's last ACK; a blind one is
 * passed to the receiver (its TCP decides) and changes nothing. */
static void
test_blind_rst(void)
{
    struct pac_segment s;
    struct pac *pac;
    uint32_t seq;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);

    /* Flow 0 has data in flight and ACKs held. */
    CHECK_PASS(request(pac, AT(0), 1, 1, 0));           /* Fills it. */
    seq = ack_flow(pac, AT(1), 0, 5000, 1);
    CHECK_HELD(tx(pac, AT(2), 0, seq, 0, ACK, 2));
    PAC_CHECK_EQ(get_stats(pac).held, 1);

    /* Blind RSTs: before, after, far from rcv_nxt. */
    s = rx_seg(0, seq + 1, 0, PAC_TCP_RST, PAC_ECN_NOT_ECT);
    rx_at(pac, AT(3), &s);
    s = rx_seg(0, seq - 1, 0, PAC_TCP_RST | ACK, PAC_ECN_NOT_ECT);
    rx_at(pac, AT(4), &s);
    s = rx_seg(0, seq + 0x40000000, 0, PAC_TCP_RST, PAC_ECN_NOT_ECT);
    rx_at(pac, AT(5), &s);
    PAC_CHECK_EQ(get_stats(pac).held, 1);
    PAC_CHECK_EQ(n_flows(pac), 2);
    PAC_CHECK_EQ(get_stats(pac).rst_ignored, 3);
    CHECK_N_EMITTED(0);

    /* The peer's real RST, at rcv_nxt: the held ACK goes, then the flow. */
    s = rx_seg(0, seq, 0, PAC_TCP_RST, PAC_ECN_NOT_ECT);
    rx_at(pac, AT(6), &s);
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    PAC_CHECK_EQ(n_flows(pac), 1);
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 2);

    /* An RST at the receiver's last ACK (its answer to a challenge ACK,
     * when data past a hole moved rcv_nxt on) is accepted too. */
    seq = ack_flow(pac, AT(10), 3, 5000, 3);
    rx_data(pac, AT(11), 3, seq + MSS, MSS);            /* Past a hole. */
    s = rx_seg(3, 5001, 0, PAC_TCP_RST, PAC_ECN_NOT_ECT);
    rx_at(pac, AT(12), &s);
    PAC_CHECK_EQ(n_flows(pac), 1);
    PAC_CHECK_EQ(get_stats(pac).rst_ignored, 3);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* The peer's SYN on flow 'flow' at 'isn', with window scale 'ws' (-1:
 * none). */
static void
peer_syn_ws(struct pac *pac, uint64_t now, int flow, uint32_t isn, int ws)
{
    struct pac_segment s = rx_seg(flow, isn, 0, PAC_TCP_SYN,
                                  PAC_ECN_NOT_ECT);

    s.mss = MSS;
    s.has_wscale = ws >= 0;
    s.wscale = ws >= 0 ? ws : 0;
    rx_at(pac, now, &s);
}

/* The VM's SYN-ACK on 'flow' acknowledging 'isn', window scale 'ws'. */
static enum pac_verdict
vm_synack_ws(struct pac *pac, uint64_t now, int flow, uint32_t isn, int ws,
             int pkt)
{
    struct pac_segment s = tx_seg(flow, isn + 1, 0, PAC_TCP_SYN | ACK);

    s.mss = MSS;
    s.has_wscale = ws >= 0;
    s.wscale = ws >= 0 ? ws : 0;
    return tx_at(pac, now, &s, pkt);
}

/* The window PAC lets the VM's first ACK advertise (65535 asked) after a
 * handshake whose SYN-ACK carried window scale 'ws' (the peer's: 7). */
static uint16_t
window_after_synack_ws(int ws)
{
    struct pac_segment s;
    struct pac *pac;

    pac = make_test_pac();
    if (!pac) {
        return 0;
    }
    peer_syn_ws(pac, AT(0), 0, 1000, 7);
    vm_synack_ws(pac, AT(1), 0, 1000, ws, 0);
    rx_data(pac, AT(10), 0, 1001, 100);
    s = tx_seg(0, 1101, 0, ACK);
    s.window = 65535;
    (void) pac_tx(pac, &s, P(1), AT(11), rec_emit, NULL);
    end_pac();
    return s.window;
}

/* A caller that fills struct pac_segment itself may pass a window scale
 * above 14 (the parser clamps the option, a caller need not): it counts
 * as 14, as RFC 7323 says, instead of a shift by 40 (undefined: on x86
 * it gave a window of 1 unit where 14 gives 4). */
static void
test_wscale_above_14(void)
{
    uint16_t w14 = window_after_synack_ws(14);

    PAC_CHECK(w14 < 65535);
    PAC_CHECK_EQ(window_after_synack_ws(40), w14);
    PAC_CHECK_EQ(window_after_synack_ws(255), w14);
}

/* The receiver's SYN-ACK offers its window unscaled (64 KB), before PAC
 * clamps anything.  The clamp of its first ACKs must not move the right
 * edge left of that (TCP forbids a receiver to shrink its window, and the
 * peer may have sent up to it), and the SYN-ACK's window is not scaled by
 * the option it carries: counted as scaled by 2^7, its edge was 8 MB on,
 * and a floor at it would have undone the clamp. */
static void
test_window_no_shrink(void)
{
    struct pac_segment s;
    struct pac_config cfg;
    struct pac *pac;
    uint32_t syn_edge = 1001 + 65535;
    uint32_t clamp_units;

    test_config(&cfg);
    cfg.clamp_window = true;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    peer_syn_ws(pac, AT(0), 0, 1000, 7);
    s = tx_seg(0, 1001, 0, PAC_TCP_SYN | ACK);
    s.mss = MSS;
    s.has_wscale = true;
    s.wscale = 7;
    s.window = 65535;
    CHECK_PASS(pac_tx(pac, &s, P(0), AT(1), rec_emit, NULL));
    PAC_CHECK_EQ(s.window, 65535);

    /* The peer's request (100 bytes); the receiver acknowledges it with a
     * window of 2000 << 7: lowered, but not left of the SYN-ACK's edge. */
    rx_data(pac, AT(10), 0, 1001, 100);
    s = tx_seg(0, 1101, 0, ACK);
    s.window = 2000;
    CHECK_PASS(pac_tx(pac, &s, P(1), AT(11), rec_emit, NULL));
    PAC_CHECK(s.window_clamped);
    PAC_CHECK(1101 + ((uint32_t) s.window << 7) >= syn_edge);
    PAC_CHECK(1101 + ((uint32_t) (s.window - 1) << 7) < syn_edge);

    /* Past that edge, the clamp alone (half the threshold, in units of
     * 2^7): no more than the first ACK's window. */
    clamp_units = s.window;
    for (uint32_t seq = 1101; seq < syn_edge; seq += MSS) {
        rx_data(pac, AT(20), 0, seq, MIN(MSS, syn_edge - seq));
    }
    s = tx_seg(0, syn_edge, 0, ACK);
    s.window = 2000;
    (void) pac_tx(pac, &s, P(2), AT(21), rec_emit, NULL);
    PAC_CHECK(s.window_clamped);
    PAC_CHECK(s.window < clamp_units);
    PAC_CHECK(((uint32_t) s.window << 7) <= cfg.threshold / 2 + 128);
    end_pac();
}

/* A segment of the receiver's that the datapath cannot parse (malformed
 * TCP options, a fragment) goes out unheld: it must not overtake what its
 * connection holds.  With its ports known, its connection's held segments
 * go first, in order, and no other connection's; without them (a fragment
 * after the first) every held segment goes first. */
static void
test_unparsed_keeps_order(void)
{
    struct pac_segment s;
    struct pac *pac;

    pac = make_test_pac_threshold(3000);
    PAC_CHECK(pac);
    /* Flow 1's request fills the threshold: flows 0 and 2 wait. */
    CHECK_PASS(request(pac, AT(0), 1, 1, 100));
    CHECK_HELD(tx(pac, AT(1), 0, 1, 100, ACK, 0));
    CHECK_HELD(tx(pac, AT(2), 0, 1, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(3), 2, 1, 100, ACK, 2));
    CHECK_N_EMITTED(0);

    /* Flow 0's malformed segment: the parser left its addresses and
     * ports. */
    s = tx_seg(0, 1, 0, ACK);
    pac_tx_unparsed(pac, &s, rec_emit, NULL);
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(0, 0);
    CHECK_RELEASED(1, 1);
    PAC_CHECK_EQ(get_stats(pac).held, 1);
    PAC_CHECK_EQ(get_stats(pac).released[PAC_REL_FLUSH], 2);

    /* A connection that holds nothing, or that PAC does not know:
     * nothing goes. */
    pac_tx_unparsed(pac, &s, rec_emit, NULL);
    s = tx_seg(7, 1, 0, ACK);
    pac_tx_unparsed(pac, &s, rec_emit, NULL);
    CHECK_N_EMITTED(2);

    /* A fragment without ports: everything held goes first. */
    s = tx_seg(0, 1, 0, ACK);
    s.sport = s.dport = 0;
    pac_tx_unparsed(pac, &s, rec_emit, NULL);
    CHECK_N_EMITTED(3);
    CHECK_RELEASED(2, 2);
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* A pure ACK that repeats the newest held ACK number with another window
 * is a window update (the receiver's application read), not the repeat
 * that tells PAC its peer retransmitted (section III-D): it must not drop
 * the held ACKs, move the flow to level 0 or restart its slow start.  A
 * tenant's stack sends such updates at will; counted as stale, each one
 * cost the flow its place and its window model. */
static void
test_window_update_not_stale(void)
{
    struct pac_flow_info info;
    struct pac_segment s;
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);
    rx(pac, AT(0), 0, 1, 20000, ACK, PAC_ECN_CE);      /* Level 1. */
    CHECK_PASS(request(pac, AT(1), 1, 1, 0));
    CHECK_PASS(tx(pac, AT(2), 0, 0, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(3), 0, 1000, 0, ACK, 2));
    CHECK_HELD(tx(pac, AT(4), 0, 2000, 0, ACK, 3));

    /* ACK 2000 again, its window grown: held behind, nothing dropped. */
    s = tx_seg(0, 2000, 0, ACK);
    s.window = 65535 - 1000;
    CHECK_HELD(tx_at(pac, AT(5), &s, 4));
    s.window = 65535;
    CHECK_HELD(tx_at(pac, AT(6), &s, 5));
    CHECK_N_EMITTED(0);
    PAC_CHECK_EQ(get_stats(pac).stale_events, 0);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.level, 1);
    PAC_CHECK(!info.slow_start);
    PAC_CHECK_EQ(info.held, 4);

    /* The same ACK and window once more: a duplicate, stale as before. */
    CHECK_HELD(tx_at(pac, AT(7), &s, 6));
    PAC_CHECK_EQ(get_stats(pac).stale_events, 1);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.level, 0);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* Attack 1 of the hardening issue: a peer abandons a handshake and opens
 * again from the same port with its ISN 2^30 further on.  The receiver
 * answers the new SYN; its SYN-ACK must count one window, not "its ACK
 * number minus the old connection's", 2^30 bytes that would stop every
 * other flow's ACKs until a silence reset. */
static void
test_syn_reuse_isn_jump(void)
{
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);
    peer_syn_ws(pac, AT(0), 0, 1000, 7);
    CHECK_PASS(vm_synack_ws(pac, AT(1), 0, 1000, 7, 0));
    PAC_CHECK(in_flight(pac) < 2 * IW);
    peer_syn_ws(pac, AT(2), 0, 1000 + (1u << 30), 7);
    CHECK_PASS(vm_synack_ws(pac, AT(3), 0, 1000 + (1u << 30), 7, 1));
    PAC_CHECK(in_flight(pac) < 2 * IW);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* The same with the window scale: the first connection's peer offered one,
 * the second's does not, so the receiver's window is not scaled.  A window
 * scale bit kept from the first handshake made PAC clamp the window field
 * as if scaled: a window of a few hundred bytes. */
static void
test_syn_reuse_wscale(void)
{
    struct pac_segment s;
    struct pac *pac;
    uint32_t isn2 = 1000 + (1u << 30);

    pac = make_test_pac();
    PAC_CHECK(pac);
    peer_syn_ws(pac, AT(0), 0, 1000, 7);
    CHECK_PASS(vm_synack_ws(pac, AT(1), 0, 1000, 7, 0));
    peer_syn_ws(pac, AT(2), 0, isn2, -1);
    CHECK_PASS(vm_synack_ws(pac, AT(3), 0, isn2, 7, 1));
    s = tx_seg(0, isn2 + 1, 100, ACK);
    (void) pac_tx(pac, &s, P(2), AT(4), rec_emit, NULL);
    PAC_CHECK(s.window >= 2 * MSS);
    end_pac();
}

/* A SYN with another ISN on a connection that has exchanged data is not
 * believed (RFC 5961: the receiver answers it with a challenge ACK): PAC
 * keeps the flow as it was.  If the receiver accepts it (its SYN-ACK
 * acknowledges the new ISN: its own connection was gone), the flow starts
 * afresh from that SYN-ACK. */
static void
test_syn_on_established(void)
{
    uint32_t isn2 = 1000 + (1u << 30);
    struct pac_flow_info info;
    uint32_t seq, rcv_nxt;
    struct pac *pac;
    uint32_t idx;

    pac = make_test_pac();
    PAC_CHECK(pac);
    peer_syn_ws(pac, AT(0), 0, 1000, 7);
    CHECK_PASS(vm_synack_ws(pac, AT(1), 0, 1000, 7, 0));
    rx_data(pac, AT(2), 0, 1001, 100);
    CHECK_PASS(tx(pac, AT(3), 0, 1101, 0, ACK, 1));
    seq = 1101;
    rx_data(pac, AT(4), 0, seq, MSS);
    seq += MSS;

    /* A blind SYN: nothing changes. */
    for (idx = 0; !(pac->flows[idx].flags & PAC_F_IN_USE); idx++) {
        continue;
    }
    rcv_nxt = pac->flows[idx].rcv_nxt;
    PAC_CHECK_EQ(rcv_nxt, seq);
    peer_syn_ws(pac, AT(5), 0, isn2, -1);
    PAC_CHECK_EQ(pac->flows[idx].rcv_nxt, rcv_nxt);
    PAC_CHECK(pac->flow_wnd[idx].bits & PAC_W_PEER_WS);
    PAC_CHECK(in_flight_consistent(pac));

    /* The receiver takes it as a new connection. */
    CHECK_PASS(vm_synack_ws(pac, AT(6), 0, isn2, -1, 2));
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.last_ack, isn2 + 1);
    PAC_CHECK(in_flight(pac) < 2 * IW);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* What one flow may add to in_flight is bounded by what its peer can send
 * unacknowledged, PAC_MAX_WINDOW, and stays the flow's to pay back: a
 * trigger of 2^31 bytes or more (the receiver's ACK far beyond what it
 * received, or of a peer's data far apart) wrapped budget_end, so that the
 * flow owed nothing while in_flight kept the bytes until a silence reset;
 * and a segment far beyond the receiver's window (a blind peer's) moved
 * rcv_nxt, and with it the ACKs' deltas. */
static void
test_trigger_arithmetic(void)
{
    uint32_t seq;
    struct pac *pac;

    /* Flow 0: an ACK 2^30 beyond the data received. */
    pac = make_test_pac();
    PAC_CHECK(pac);
    rx_data(pac, AT(0), 0, 1, 1000);
    CHECK_PASS(tx(pac, AT(1), 0, 1001, 0, ACK, 0));
    tx(pac, AT(2), 0, 1001 + (1u << 30), 0, ACK, 1);
    run(pac, AT(30000));
    PAC_CHECK(in_flight(pac) <= PAC_MAX_WINDOW + 4 * IW);
    PAC_CHECK(in_flight_consistent(pac));

    /* Flow 1: a segment 2^31 - 2^16 beyond rcv_nxt is outside any window
     * and leaves rcv_nxt alone. */
    pac = make_test_pac();
    PAC_CHECK(pac);
    rx_data(pac, AT(0), 1, 1, 1000);
    CHECK_PASS(tx(pac, AT(1), 1, 1001, 0, ACK, 2));
    rx_data(pac, AT(2), 1, 1001 + 0x7fff0000u, 1000);
    PAC_CHECK_EQ(pac->flows[0].rcv_nxt, 1001);
    PAC_CHECK(in_flight_consistent(pac));

    /* Flow 2: two segments each within 2^30 of rcv_nxt (PAC knows no
     * window of this flow), then an ACK of both: 2^31 - 2000 bytes newly
     * acknowledged, which slow start doubles. */
    pac = make_test_pac();
    PAC_CHECK(pac);
    rx_data(pac, AT(0), 2, 1, 1000);
    CHECK_PASS(tx(pac, AT(1), 2, 1001, 0, ACK, 4));
    seq = 1001 + (1u << 30) - 2000;
    rx_data(pac, AT(2), 2, seq, 1000);
    seq += 1000;
    rx_data(pac, AT(3), 2, seq + (1u << 30) - 2000, 1000);
    seq += (1u << 30) - 2000 + 1000;
    PAC_CHECK_EQ(pac->flows[0].rcv_nxt, seq);
    tx(pac, AT(4), 2, seq, 0, ACK, 5);
    run(pac, AT(30000));
    PAC_CHECK(in_flight_consistent(pac));
    PAC_CHECK(in_flight(pac) <= PAC_MAX_WINDOW + 4 * IW);
    end_pac();
}

/* Hash flooding: a peer that knew the flow hash's keys could send SYNs
 * whose keys all land in one bucket and make every lookup walk them.  With
 * hash_seed 0, each instance draws its keys from a random source, so two
 * instances (two ports, two hosts) hash the same key differently; and a
 * bucket's chain never grows beyond PAC_MAX_CHAIN: a new flow whose chain
 * is full is not tracked (its segments pass unheld, chain_full). */
static void
test_hash_flooding(void)
{
    struct pac_config cfg;
    uint64_t keys[PAC_N_HASH_KEYS];
    uint32_t target = 0, n = 0, chain = 0;
    struct pac *pac;

    pac_config_init(&cfg);
    cfg.hash_seed = 0;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    memcpy(keys, pac->hash_keys, sizeof keys);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    PAC_CHECK(memcmp(keys, pac->hash_keys, sizeof keys));

    /* A known seed (an attacker's guess, or a test's): 64 SYNs that share
     * a bucket of a 64-bucket table. */
    cfg.hash_seed = 12345;
    cfg.max_flows = 64;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    for (uint32_t port = 1; port <= 65535 && n < 64; port++) {
        struct pac_segment s = rx_seg(0, 1000, 0, PAC_TCP_SYN,
                                      PAC_ECN_NOT_ECT);
        uint32_t hash;

        s.sport = port;
        hash = pac_flow_hash(pac, s.dst, s.dport, s.src, s.sport);
        if (!n) {
            target = hash & pac->bucket_mask;
        } else if ((hash & pac->bucket_mask) != target) {
            continue;
        }
        rx_at(pac, AT(n), &s);
        n++;
    }
    PAC_CHECK_EQ(n, 64);
    for (uint32_t i = pac->buckets[target]; i != PAC_NONE;
         i = pac->flows[i].hash_next) {
        chain++;
    }
    PAC_CHECK_EQ(chain, PAC_MAX_CHAIN);
    PAC_CHECK_EQ(get_stats(pac).chain_full, 64 - PAC_MAX_CHAIN);
    PAC_CHECK_EQ(n_flows(pac), PAC_MAX_CHAIN);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}


/* A VM sends large (TSO) segments that PAC holds: the count cap alone
 * would let 65 536 of them, up to 64 KB each, stay out of the port's
 * buffer pool.  max_held_bytes bounds their bytes: over it the oldest
 * head is released (never dropped), and the statistics show which cap
 * fired. */
static void
test_held_bytes_cap(void)
{
    const uint32_t big = 60000;
    const uint32_t ip_bytes = 20 + 20 + big;
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;

    test_config(&cfg);
    cfg.threshold = 3000;
    cfg.max_held_bytes = 128 * 1024;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    /* Another flow's request fills the threshold, so flow 0's segments
     * wait. */
    CHECK_PASS(request(pac, AT(0), 1, 1, 100));
    CHECK_HELD(tx(pac, AT(1), 0, 1, big, ACK, 0));
    CHECK_HELD(tx(pac, AT(2), 0, 1, big, ACK, 1));
    CHECK_N_EMITTED(0);
    PAC_CHECK_EQ(get_stats(pac).held_bytes, 2 * ip_bytes);

    /* A third would exceed 128 KB: the oldest goes first, in order. */
    CHECK_HELD(tx(pac, AT(3), 0, 1, big, ACK, 2));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 0);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 2);
    PAC_CHECK_EQ(st.held_bytes, 2 * ip_bytes);
    PAC_CHECK(st.held_bytes <= cfg.max_held_bytes);
    PAC_CHECK_EQ(st.released[PAC_REL_CAP], 1);
    PAC_CHECK_EQ(st.released_bytes_cap, 1);

    /* Small segments still fit beside them; nothing is ever dropped. */
    CHECK_HELD(tx(pac, AT(4), 0, 1, 0, ACK, 3));
    PAC_CHECK_EQ(get_stats(pac).held_bytes, 2 * ip_bytes + 40);
    PAC_CHECK_EQ(get_stats(pac).stale_drops, 0);
    end_pac();
    CHECK_N_EMITTED(4);
    CHECK_RELEASED(1, 1);
    CHECK_RELEASED(2, 2);
    CHECK_RELEASED(3, 3);
}

/* A VM acknowledges data its peer never sent: ACK numbers that jump by
 * 2^29 each.  The peer's TCP ignores such an ACK (it frees none of its
 * window), so PAC must not count what it "acknowledges" as data to come:
 * with each jump counted, one VM's own in_flight grew to 10^10 bytes and
 * its every later trigger waited for silence resets. */
static void
test_ack_beyond_received(void)
{
    struct pac_config cfg;
    uint64_t before;
    struct pac *pac;

    test_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 0, 1, 0));          /* IW. */
    rx_data(pac, AT(10), 0, 1, 1000);
    before = in_flight(pac);

    /* Acknowledges the 1000 bytes received, and 2^29 more; sent (a
     * flush sends what waits, with its triggers). */
    tx(pac, AT(20), 0, 1001 + (1u << 29), 0, ACK, 1);
    pac_flush(pac, rec_emit, NULL);
    PAC_CHECK(in_flight(pac) <= before + 1000 + 2 * MSS + ACK_FRAME);
    before = in_flight(pac);

    /* And again, 1000 times: nothing more received, one segment's worth
     * at most each (a duplicate ACK's). */
    for (uint32_t i = 2; i < 1002; i++) {
        tx(pac, AT(20 + i), 0, 1001 + i * (1u << 29), 0, ACK, i);
    }
    pac_flush(pac, rec_emit, NULL);
    PAC_CHECK(in_flight(pac) <= before + 1000 * (MSS + ACK_FRAME));
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* SYNs toward the VM from hosts that never complete the handshake (a SYN
 * flood, spoofed sources), and a client that completes it and stays
 * silent: each SYN-ACK the VM answers counts a window.  A peer the VM
 * accepted that sends nothing within a dry time gives its window back
 * then, not after 16 dry times as a peer asked for an answer may think,
 * acknowledged handshake or not: otherwise a flood of either kind keeps
 * the in-flight estimate at the threshold.  Both count as wasted
 * handshakes; a late peer's data restores its window. */
static void
test_unanswered_synack(void)
{
    struct pac_config cfg;
    struct pac *pac;
    uint32_t dry;

    pac_config_init(&cfg);      /* Base RTT 100 us: a dry time under 1 ms,
                                 * before any silence reset. */
    cfg.fast_path = false;      /* Tracked from the first segment. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    /* Flow 0 is a flood's SYN, flow 1 a silent client's. */
    peer_syn(pac, AT(0), 0, 7000, 1460);
    peer_syn(pac, AT(0), 1, 9000, 1460);
    CHECK_PASS(vm_synack(pac, AT(10), 0, 7000, 1460, 0));
    CHECK_PASS(vm_synack(pac, AT(10), 1, 9000, 1460, 1));
    CHECK_IN_FLIGHT(pac, 2 * IW);
    rx(pac, AT(110), 1, 9001, 0, ACK, PAC_ECN_NOT_ECT);
    dry = pac_dry_time(pac);
    PAC_CHECK(dry < 1000);

    /* After a dry time, both windows are gone. */
    run(pac, AT(10 + dry + 1));
    CHECK_IN_FLIGHT(pac, 0);
    PAC_CHECK_EQ(get_stats(pac).dry_reclaims, 2);
    PAC_CHECK_EQ(get_stats(pac).handshakes_wasted, 2);
    PAC_CHECK_EQ(get_stats(pac).silence_resets, 0);
    PAC_CHECK(in_flight_consistent(pac));

    /* A late peer's data (a full segment) counts again. */
    rx_data(pac, AT(20 + dry), 0, 7001, MSS);
    PAC_CHECK_EQ(get_stats(pac).reclaims_undone, 1);
    CHECK_IN_FLIGHT(pac, IW - MSS);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* An established flow 100 into the VM (the VM's client connection, 30 KB
 * received: MLFQ level 1) and the connection of a spoofed SYN on each of
 * flows 0..n-1, the VM answering each at once; returns how many of the
 * SYN-ACKs PAC held.  The sequence number flow 100 expects next is in
 * '*seq'. */
static int
synack_flood(struct pac *pac, uint64_t at, int n, uint32_t *seq)
{
    int held = 0;

    *seq = ack_flow(pac, at, 100, 30000, 100);
    for (int i = 0; i < n; i++) {
        peer_syn(pac, at + 10 + i, i, 7000 + i, 1460);
        held += vm_synack(pac, at + 10 + i, i, 7000 + i, 1460, 200 + i)
                == PAC_HELD;
    }
    return held;
}

/* A SYN flood toward the VM: each SYN-ACK counts its peer's initial
 * window, and enough of them would fill the threshold with windows that
 * never come, so that the ACKs of an established connection wait for room
 * that never frees.  The windows of accepted connections whose peer has
 * sent nothing yet have half the threshold at most (three initial windows
 * of 96 000 bytes), and the established connection's ACK goes at once,
 * passing the SYN-ACKs that wait. */
static void
test_synack_flood_half_threshold(void)
{
    struct pac_config cfg;
    struct pac *pac;
    uint32_t seq;
    int held;

    pac_config_init(&cfg);
    cfg.fast_path = false;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    held = synack_flood(pac, AT(0), 40, &seq);
    PAC_CHECK_EQ(held, 40 - 3);
    PAC_CHECK(in_flight(pac) <= cfg.threshold / 2 + 2 * MSS);

    rx_data(pac, AT(100), 100, seq, MSS);
    CHECK_PASS(tx(pac, AT(101), 100, seq + MSS, 0, ACK, 300));
    PAC_CHECK_EQ(get_stats(pac).held, 40 - 3);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* A flood goes on: the held SYN-ACKs' windows, given their turn one by
 * one, each go dry, wasted.  Once more than PAC_HS_FLOOD_MIN are wasted and
 * none answered, PAC is in a flood: a SYN-ACK that does not fit goes out at
 * once, uncharged (the SYN-ACKs that waited too); a client whose handshake
 * is real then acknowledges it, and its window is charged then. */
static void
test_synack_flood_uncharged(void)
{
    struct pac_config cfg;
    struct pac *pac;
    uint64_t t = AT(0);
    uint32_t seq;
    uint32_t dry;

    pac_config_init(&cfg);
    cfg.fast_path = false;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    synack_flood(pac, t, 40, &seq);
    dry = pac_dry_time(pac);
    for (int k = 1; k <= 4 && !get_stats(pac).handshake_flood; k++) {
        t += dry + 1;
        run(pac, t);
    }
    PAC_CHECK(get_stats(pac).handshake_flood);
    PAC_CHECK(get_stats(pac).handshakes_wasted >= 8);
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    PAC_CHECK(get_stats(pac).handshakes_uncharged > 0);

    /* A new SYN-ACK goes at once, whatever the pool holds. */
    peer_syn(pac, t + 1, 50, 9000, 1460);
    CHECK_PASS(vm_synack(pac, t + 1, 50, 9000, 1460, 400));

    /* Its client acknowledges it after the pool emptied: charged. */
    t += dry + 1;
    run(pac, t);
    {
        uint64_t before = in_flight(pac);

        rx(pac, t + 1, 50, 9001, 0, ACK, PAC_ECN_NOT_ECT);
        PAC_CHECK_EQ(get_stats(pac).handshakes_late_charged, 1);
        PAC_CHECK_EQ(in_flight(pac), before + IW);
    }
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* A peer that announced no MSS option drips a byte every 500 us, faster
 * than a dry time, and the VM acknowledges each: every ACK lets the peer
 * send a full segment more, which it never does.  Its segments are
 * shorter than any MSS it may have, so each ends its answer and the window
 * goes back: in_flight stays within a few segments instead of growing to
 * the threshold. */
static void
test_drip_without_mss(void)
{
    struct pac_config cfg;
    struct pac *pac;
    uint32_t seq = 7001;

    pac_config_init(&cfg);
    cfg.fast_path = false;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    peer_syn(pac, AT(0), 0, 7000, 0);
    vm_synack(pac, AT(10), 0, 7000, 1460, 0);
    rx(pac, AT(110), 0, seq, 0, ACK, PAC_ECN_NOT_ECT);
    for (int i = 0; i < 400; i++) {
        uint64_t t = AT(200 + 500 * i);

        rx_data(pac, t, 0, seq, 1);
        seq += 1;
        tx(pac, t + 1, 0, seq, 0, ACK, 1 + i);
        run(pac, t + 2);
    }
    PAC_CHECK(in_flight(pac) <= 4 * MSS);
    PAC_CHECK(in_flight_consistent(pac));
    end_pac();
}

/* CPU seconds since 'start'. */
static double
cpu_seconds_since(clock_t start)
{
    return (double) (clock() - start) / CLOCKS_PER_SEC;
}

/* A VM makes PAC hold tens of thousands of segments of one connection and
 * then repeats its ACK on every segment (each one a stale-ACK detection)
 * or retransmits its request (each one compared with the held requests).
 * Walking the connection's held packets on each would cost 50 000 steps a
 * segment, tens of seconds of a PMD thread here; each step must be O(1).
 * The bound is CPU time, with a margin of about 10 against what the walks
 * cost (21 s of CPU) and of about 50 over what it costs now. */
static void
test_long_held_list(void)
{
    const int n = 50000;        /* 2.25 n packets: within N_PKTS. */
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;
    clock_t start;
    int pkt = 0;

    test_config(&cfg);
    cfg.threshold = 3000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    CHECK_PASS(request(pac, AT(0), 1, 1, pkt++));

    start = clock();
    /* A request, then data with the same ACK number: all held. */
    for (int i = 0; i < n; i++) {
        CHECK_HELD(tx(pac, AT(1), 0, 1, 1, ACK, pkt++));
    }
    /* The same ACK number again, pure: a stale-ACK detection each. */
    for (int i = 0; i < n; i++) {
        tx(pac, AT(2), 0, 1, 0, ACK, pkt++);
    }
    /* Retransmissions of the request, with new data held behind them. */
    for (int i = 0; i < n / 4; i++) {
        tx(pac, AT(3), 0, 1, 1, ACK, pkt++);
    }
    PAC_CHECK(cpu_seconds_since(start) < 2.0);

    st = get_stats(pac);
    PAC_CHECK_EQ(st.stale_events, n);
    PAC_CHECK(st.held <= cfg.max_held);
    PAC_CHECK_EQ(st.request_triggers, 2);   /* Flow 1's and flow 0's. */
    end_pac();
    PAC_CHECK_EQ(n_rec, (size_t) pkt - 1);  /* All but flow 1's request. */
}

int
main(void)
{
    PAC_RUN_TEST(test_first_rate_window);
    PAC_RUN_TEST(test_epoch_wrap);
    PAC_RUN_TEST(test_blind_rst);
    PAC_RUN_TEST(test_syn_reuse_isn_jump);
    PAC_RUN_TEST(test_syn_reuse_wscale);
    PAC_RUN_TEST(test_wscale_above_14);
    PAC_RUN_TEST(test_syn_on_established);
    PAC_RUN_TEST(test_trigger_arithmetic);
    PAC_RUN_TEST(test_hash_flooding);
    PAC_RUN_TEST(test_held_bytes_cap);
    PAC_RUN_TEST(test_long_held_list);
    PAC_RUN_TEST(test_ack_beyond_received);
    PAC_RUN_TEST(test_unanswered_synack);
    PAC_RUN_TEST(test_synack_flood_half_threshold);
    PAC_RUN_TEST(test_synack_flood_uncharged);
    PAC_RUN_TEST(test_drip_without_mss);
    PAC_RUN_TEST(test_window_no_shrink);
    PAC_RUN_TEST(test_unparsed_keeps_order);
    PAC_RUN_TEST(test_window_update_not_stale);
    drop_pac();
    PAC_TEST_MAIN_END;
}
