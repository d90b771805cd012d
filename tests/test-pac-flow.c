/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of libpac's flow table: one entry per connection for both
 * directions, removal on FIN/RST and idle timeout, the table bound
 * (eviction of the least recently seen flow without held packets, or no
 * tracking at all), IPv6, how the keyed hash spreads incast keys, and
 * pac_prefetch(). */

#include "pac.h"
#include "pac-private.h"
#include "pac-flow.h"

#include "pac-test-fixture.h"

/* Both directions of a connection map to one flow. */
static void
test_flow_both_directions(void)
{
    struct pac_flow_info info;
    struct pac_stats st;
    uint8_t vm[16], peer[16];
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    rx_data(pac, AT(0), 0, 1, 1000);
    CHECK_PASS(tx(pac, AT(10), 0, 1001, 0, ACK, 0));
    PAC_CHECK_EQ(n_flows(pac), 1);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.flows, 1);
    PAC_CHECK_EQ(st.flows_created, 1);

    GET_FLOW(pac, 0, &info);
    flow_addrs(0, vm, peer);
    PAC_CHECK(!memcmp(info.vm_addr, vm, 16));
    PAC_CHECK(!memcmp(info.peer_addr, peer, 16));
    PAC_CHECK_EQ(info.vm_addr[10], 0xff);           /* IPv4-mapped. */
    PAC_CHECK_EQ(info.vm_addr[15], 1);
    PAC_CHECK_EQ(info.vm_port, VM_PORT);
    PAC_CHECK_EQ(info.peer_port, PEER_PORT_BASE);
    PAC_CHECK_EQ(info.rx_bytes, 1000);
    PAC_CHECK_EQ(info.last_ack, 1001);
    PAC_CHECK_EQ(info.held, 0);
    PAC_CHECK_EQ(info.idle_us, 0);
    run(pac, AT(510));
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.idle_us, 500);

    /* Another peer port is another flow. */
    rx_data(pac, AT(600), 1, 1, 1000);
    PAC_CHECK_EQ(n_flows(pac), 2);
    PAC_CHECK_EQ(get_stats(pac).flows_created, 2);
    end_pac();
}

/* FIN both ways, then 1 s without packets: pac_run() forgets the flow.  A
 * FIN one way is not enough. */
static void
test_flow_fin_close(void)
{
    struct pac_flow_info info;
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    rx_data(pac, AT(0), 0, 1, 1000);
    rx(pac, AT(0), 0, 1001, 0, ACK | PAC_TCP_FIN, PAC_ECN_ECT0);
    CHECK_PASS(tx(pac, AT(0), 0, 1002, 0, ACK | PAC_TCP_FIN, 0));
    rx(pac, AT(0), 1, 1, 0, ACK | PAC_TCP_FIN, PAC_ECN_ECT0);
    PAC_CHECK_EQ(n_flows(pac), 2);
    PAC_CHECK(pac_next_wakeup(pac) == AT(1000000));

    run(pac, AT(999999));
    PAC_CHECK_EQ(n_flows(pac), 2);
    run(pac, AT(1000000));
    PAC_CHECK_EQ(n_flows(pac), 1);
    PAC_CHECK(!get_flow(pac, 0, &info));
    GET_FLOW(pac, 1, &info);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.flows, 1);
    PAC_CHECK_EQ(st.flows_closed, 1);
    PAC_CHECK_EQ(st.flows_expired, 0);
    PAC_CHECK(pac_next_wakeup(pac) == AT(2000000));

    /* A new SYN on the half-closed flow's ports starts a new flow. */
    peer_syn(pac, AT(1000001), 1, 5000, 0);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.flows, 1);
    PAC_CHECK_EQ(st.flows_closed, 2);
    PAC_CHECK_EQ(st.flows_created, 3);
    end_pac();
}

/* A flow idle for idle_timeout_ms is forgotten at the next scan (scans run
 * every second); flows holding packets are not. */
static void
test_flow_idle_timeout(void)
{
    struct pac_flow_info info;
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;

    test_config(&cfg);
    cfg.idle_timeout_ms = 1000;
    cfg.max_hold_us = 10000000;
    cfg.threshold = 3000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    rx(pac, AT(10), 0, 1, 0, ACK, PAC_ECN_ECT0);
    rx(pac, AT(500000), 1, 1, 0, ACK, PAC_ECN_ECT0);

    /* Flow 2 holds an ACK (of data it received) behind flow 3's
     * window. */
    rx_data(pac, AT(15), 2, 1, 2000);
    CHECK_PASS(request(pac, AT(20), 3, 1, 0));
    CHECK_PASS(tx(pac, AT(20), 2, 1, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(20), 2, 1461, 0, ACK, 2));
    PAC_CHECK_EQ(n_flows(pac), 4);

    run(pac, AT(999999));
    PAC_CHECK_EQ(n_flows(pac), 4);
    run(pac, AT(1000009));      /* Scan: flow 0 idle 999999 us. */
    PAC_CHECK_EQ(n_flows(pac), 4);
    rx(pac, AT(1500000), 1, 1, 0, ACK, PAC_ECN_ECT0);
    run(pac, AT(2000008));
    PAC_CHECK_EQ(n_flows(pac), 4);
    run(pac, AT(2000009));      /* Next scan. */
    st = get_stats(pac);
    PAC_CHECK_EQ(st.flows_expired, 2);
    PAC_CHECK_EQ(st.flows, 2);
    PAC_CHECK(!get_flow(pac, 0, &info));
    PAC_CHECK(!get_flow(pac, 3, &info));
    GET_FLOW(pac, 1, &info);
    GET_FLOW(pac, 2, &info);
    PAC_CHECK_EQ(info.held, 1);
    CHECK_N_EMITTED(0);
    end_pac();
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 2);
}

/* An RST from the peer removes the flow, after releasing what it holds. */
static void
test_flow_rst_from_peer(void)
{
    struct pac_flow_info info;
    struct pac_stats st;
    struct pac *pac;

    pac = make_test_pac_threshold(10000);
    PAC_CHECK(pac);

    CHECK_PASS(request(pac, AT(0), 2, 1, 0));           /* 14600 */
    rx_data(pac, AT(1), 0, 1, 1000);
    CHECK_PASS(tx(pac, AT(2), 0, 1001, 0, ACK, 1));     /* 16060 */
    CHECK_HELD(tx(pac, AT(3), 0, 2461, 0, ACK, 2));
    CHECK_HELD(tx(pac, AT(4), 0, 3921, 0, ACK, 3));
    PAC_CHECK_EQ(get_stats(pac).held, 2);

    rx(pac, AT(5), 0, 1001, 0, PAC_TCP_RST, PAC_ECN_NOT_ECT);
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(0, 2);
    CHECK_RELEASED(1, 3);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.held, 0);
    PAC_CHECK_EQ(st.flows, 1);
    PAC_CHECK_EQ(st.flows_closed, 1);
    PAC_CHECK_EQ(st.released[PAC_REL_FLUSH], 2);
    PAC_CHECK(!get_flow(pac, 0, &info));
    end_pac();
    CHECK_N_EMITTED(2);
}

/* A full table evicts the least recently seen flow without held packets;
 * when every flow holds packets, a new flow is not tracked (its packets
 * pass) and no held packet is lost. */
static void
test_flow_table_full(void)
{
    struct pac_flow_info info;
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;

    test_config(&cfg);
    cfg.max_flows = 4;
    cfg.threshold = 10000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    for (int f = 0; f < 4; f++) {
        rx(pac, AT(1 + f), f, 1, 0, ACK, PAC_ECN_ECT0);
    }
    rx(pac, AT(5), 0, 1, 0, ACK, PAC_ECN_ECT0);        /* Seen again. */
    PAC_CHECK_EQ(n_flows(pac), 4);
    PAC_CHECK_EQ(get_stats(pac).evictions, 0);

    rx(pac, AT(6), 4, 1, 0, ACK, PAC_ECN_ECT0);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.evictions, 1);
    PAC_CHECK_EQ(st.flows, 4);
    PAC_CHECK_EQ(st.flows_created, 5);
    PAC_CHECK(!get_flow(pac, 1, &info));
    GET_FLOW(pac, 0, &info);
    GET_FLOW(pac, 2, &info);
    GET_FLOW(pac, 3, &info);
    GET_FLOW(pac, 4, &info);

    /* Every flow gets a held packet. */
    CHECK_PASS(tx(pac, AT(10), 0, 1, 100, ACK, 0));    /* IW */
    CHECK_PASS(tx(pac, AT(10), 2, 1, 0, ACK, 1));
    CHECK_PASS(tx(pac, AT(10), 3, 1, 0, ACK, 2));
    CHECK_PASS(tx(pac, AT(10), 4, 1, 0, ACK, 3));
    CHECK_HELD(tx(pac, AT(11), 0, 1461, 0, ACK, 4));
    CHECK_HELD(tx(pac, AT(11), 2, 1461, 0, ACK, 5));
    CHECK_HELD(tx(pac, AT(11), 3, 1461, 0, ACK, 6));
    CHECK_HELD(tx(pac, AT(11), 4, 1461, 0, ACK, 7));
    PAC_CHECK_EQ(get_stats(pac).held, 4);

    CHECK_PASS(tx(pac, AT(20), 5, 1, 0, ACK, 8));
    rx(pac, AT(21), 5, 1, 0, ACK, PAC_ECN_ECT0);
    CHECK_PASS(tx(pac, AT(22), 1, 1, 100, ACK, 9));
    st = get_stats(pac);
    PAC_CHECK_EQ(st.untracked, 3);
    PAC_CHECK_EQ(st.evictions, 1);
    PAC_CHECK_EQ(st.flows, 4);
    PAC_CHECK_EQ(st.flows_created, 5);
    PAC_CHECK_EQ(st.held, 4);
    PAC_CHECK(!get_flow(pac, 5, &info));
    CHECK_N_EMITTED(0);

    pac_flush(pac, rec_emit, NULL);
    CHECK_N_EMITTED(4);
    for (int i = 0; i < 4; i++) {
        PAC_CHECK_EQ(rec[i].emit, PAC_EMIT_RELEASE);
        for (int j = 0; j < i; j++) {
            PAC_CHECK(rec[i].pkt != rec[j].pkt);
        }
        PAC_CHECK(rec[i].pkt >= 4 && rec[i].pkt <= 7);
    }

    /* Nothing is held now: a new flow evicts again. */
    rx(pac, AT(30), 5, 1, 0, ACK, PAC_ECN_ECT0);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.evictions, 2);
    PAC_CHECK_EQ(st.untracked, 3);
    GET_FLOW(pac, 5, &info);
    end_pac();
    CHECK_N_EMITTED(4);
}

/* IPv6 flows: their own entries (even with the ports of an IPv4 flow), and
 * the same accounting. */
static void
test_flow_ipv6(void)
{
    struct pac_flow_info info;
    uint8_t vm[16], peer[16];
    struct pac *pac;

    pac = make_test_pac();
    PAC_CHECK(pac);

    rx_data(pac, AT(0), FLOW_V6, 1, 1460);
    rx_data(pac, AT(0), 0, 1, 1460);
    PAC_CHECK_EQ(n_flows(pac), 2);
    GET_FLOW(pac, FLOW_V6, &info);
    flow_addrs(FLOW_V6, vm, peer);
    PAC_CHECK(!memcmp(info.vm_addr, vm, 16));
    PAC_CHECK(!memcmp(info.peer_addr, peer, 16));
    PAC_CHECK_EQ(info.vm_addr[0], 0x20);
    PAC_CHECK_EQ(info.peer_port, PEER_PORT_BASE);
    PAC_CHECK_EQ(info.rx_bytes, 1460);

    CHECK_PASS(tx(pac, AT(10), FLOW_V6, 1461, 0, ACK, 0));
    CHECK_IN_FLIGHT(pac, MSS);
    rx_data(pac, AT(20), FLOW_V6, 1461, 1460);
    CHECK_IN_FLIGHT(pac, 0);
    CHECK_PASS(tx(pac, AT(30), FLOW_V6, 2921, 0, ACK, 1));
    CHECK_IN_FLIGHT(pac, 2 * MSS);
    GET_FLOW(pac, FLOW_V6, &info);
    PAC_CHECK_EQ(info.last_ack, 2921);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.last_ack, 0);
    end_pac();
}

/* Longest bucket chain and number of non-empty buckets of 'pac'. */
static void
chain_lengths(const struct pac *pac, uint32_t *longest, uint32_t *used)
{
    *longest = *used = 0;
    for (uint32_t b = 0; b <= pac->bucket_mask; b++) {
        uint32_t len = 0;

        for (uint32_t i = pac->buckets[b]; i != PAC_NONE;
             i = pac->flows[i].hash_next) {
            len++;
        }
        *longest = len > *longest ? len : *longest;
        *used += len > 0;
    }
}

/* An incast's keys differ in a few bits only (one VM address and port;
 * peers on a few hosts, consecutive ports).  Filling the whole table with
 * them must still spread like random keys: 16 384 keys in 16 384 buckets
 * leave about 1 - 1/e = 63 % of the buckets in use and chains of at most
 * 7-8.  Another seed puts the keys in other buckets. */
static void
test_flow_hash_spreads_incast_keys(void)
{
    static const uint64_t seeds[] = { 0x5ac0ffee, 0x5ac0ffef };
    uint32_t first_bucket[256];
    uint32_t moved = 0;

    for (int s = 0; s < 2; s++) {
        uint8_t vm[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };
        struct pac_config cfg;
        uint32_t longest, used;
        struct pac *pac;

        test_config(&cfg);
        cfg.hash_seed = seeds[s];
        pac = make_pac(&cfg);
        PAC_CHECK(pac);
        for (uint32_t n = 0; n < pac->cfg.max_flows; n++) {
            uint8_t peer[16] = { [10] = 0xff, [11] = 0xff, 10, 1,
                                 n % 64, 1 };
            uint16_t peer_port = 1024 + n / 64;
            uint32_t hash = pac_flow_hash(pac, vm, 5001, peer, peer_port);

            PAC_CHECK_EQ(pac_flow_lookup(pac, vm, 5001, peer, peer_port,
                                         hash), PAC_NONE);
            PAC_CHECK(pac_flow_insert(pac, vm, 5001, peer, peer_port, hash)
                      != PAC_NONE);
            if (n < 256) {
                uint32_t bucket = hash & pac->bucket_mask;

                if (s == 0) {
                    first_bucket[n] = bucket;
                } else {
                    moved += bucket != first_bucket[n];
                }
            }
        }
        chain_lengths(pac, &longest, &used);
        PAC_CHECK(longest <= 12);
        PAC_CHECK(used >= (pac->bucket_mask + 1) / 2);
        end_pac();
    }
    PAC_CHECK(moved >= 250);
}

/* pac_prefetch() hashes a burst's segments for the pac_rx() or pac_tx()
 * that follows: both directions must find the flow that the other created,
 * and a segment that another instance (another hash seed) prefetched must
 * not be looked up with that instance's hash. */
static void
test_flow_prefetch(void)
{
    enum { N = 8 };
    struct pac_segment rx_segs[N], tx_segs[N];
    struct pac_segment *rx_ptrs[N], *tx_ptrs[N];
    struct pac_config cfg, other_cfg;
    struct pac *pac, *other;

    test_config(&cfg);
    other_cfg = cfg;
    other_cfg.hash_seed = cfg.hash_seed + 1;
    other = pac_create(&other_cfg, T0);
    PAC_CHECK(other);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);

    for (int i = 0; i < N; i++) {
        rx_segs[i] = rx_seg(i, 1, 1000, ACK, PAC_ECN_ECT0);
        tx_segs[i] = tx_seg(i, 1001, 0, ACK);
        rx_ptrs[i] = &rx_segs[i];
        tx_ptrs[i] = &tx_segs[i];
    }

    /* Data creates the flows, ACKs (prefetched as tx) find them. */
    pac_prefetch(pac, rx_ptrs, N, true);
    for (int i = 0; i < N; i++) {
        rx_at(pac, AT(0), rx_ptrs[i]);
    }
    PAC_CHECK_EQ(n_flows(pac), N);
    pac_prefetch(pac, tx_ptrs, N, false);
    for (int i = 0; i < N; i++) {
        CHECK_PASS(tx_at(pac, AT(10), tx_ptrs[i], i));
    }
    PAC_CHECK_EQ(n_flows(pac), N);
    for (int i = 0; i < N; i++) {
        struct pac_flow_info info;

        GET_FLOW(pac, i, &info);
        PAC_CHECK_EQ(info.last_ack, 1001);
    }

    /* Hashed by 'other': 'pac' hashes them again. */
    for (int i = 0; i < N; i++) {
        rx_segs[i] = rx_seg(i, 1001, 1000, ACK, PAC_ECN_ECT0);
    }
    pac_prefetch(other, rx_ptrs, N, true);
    for (int i = 0; i < N; i++) {
        rx_at(pac, AT(20), rx_ptrs[i]);
    }
    PAC_CHECK_EQ(n_flows(pac), N);
    PAC_CHECK_EQ(get_stats(pac).flows_created, N);

    pac_destroy(other, rec_emit, NULL);
    end_pac();
}

int
main(void)
{
    PAC_RUN_TEST(test_flow_both_directions);
    PAC_RUN_TEST(test_flow_fin_close);
    PAC_RUN_TEST(test_flow_idle_timeout);
    PAC_RUN_TEST(test_flow_rst_from_peer);
    PAC_RUN_TEST(test_flow_table_full);
    PAC_RUN_TEST(test_flow_ipv6);
    PAC_RUN_TEST(test_flow_hash_spreads_incast_keys);
    PAC_RUN_TEST(test_flow_prefetch);
    drop_pac();
    PAC_TEST_MAIN_END;
}
