/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef PAC_TEST_FIXTURE_H
#define PAC_TEST_FIXTURE_H 1

/* Fixtures shared by the libpac algorithm tests (tests/test-pac-*.c): the
 * instances most tests start from, and the TCP handshakes that open a test
 * flow.  They set up; the checks stay in the tests.
 *
 * An instance fixture returns the new current instance (make_pac()), or
 * NULL if pac_create() refused the configuration: a test checks it with
 * PAC_CHECK(pac) before it goes on. */

#include "pac-test-seg.h"

/* Instances. */

/* A new instance of test_config(): the defaults (threshold 96000), and no
 * control interval ends within 100 ms of T0. */
static inline struct pac *
make_test_pac(void)
{
    struct pac_config cfg;

    test_config(&cfg);
    return make_pac(&cfg);
}

/* The same with a threshold of 'threshold' bytes.  At 10000 (6 MSS and a
 * half), one request's window (IW) fills it, so that the ACKs that follow
 * it are held. */
static inline struct pac *
make_test_pac_threshold(uint64_t threshold)
{
    struct pac_config cfg;

    test_config(&cfg);
    cfg.threshold = threshold;
    return make_pac(&cfg);
}

/* Handshakes.  A segment's 'mss' is its MSS option, 0 for none. */

/* The VM's SYN on 'flow' (it opens the connection as the client). */
static inline struct pac_segment
vm_syn_seg(int flow, uint16_t mss)
{
    struct pac_segment s = tx_seg(flow, 0, 0, PAC_TCP_SYN);

    s.mss = mss;
    return s;
}

/* The peer's SYN-ACK on 'flow', at sequence number 'isn': the peer's data
 * then starts at 'isn' + 1. */
static inline struct pac_segment
peer_synack_seg(int flow, uint32_t isn, uint16_t mss)
{
    struct pac_segment s = rx_seg(flow, isn, 0, PAC_TCP_SYN | ACK,
                                  PAC_ECN_NOT_ECT);

    s.mss = mss;
    return s;
}

/* pac_tx() of the VM's SYN on 'flow' as test packet 'pkt'. */
static inline enum pac_verdict
vm_syn(struct pac *pac, uint64_t now, int flow, uint16_t mss, int pkt)
{
    struct pac_segment s = vm_syn_seg(flow, mss);

    return tx_at(pac, now, &s, pkt);
}

/* pac_rx() of the peer's SYN-ACK on 'flow' at 'isn'. */
static inline void
peer_synack(struct pac *pac, uint64_t now, int flow, uint32_t isn,
            uint16_t mss)
{
    struct pac_segment s = peer_synack_seg(flow, isn, mss);

    rx_at(pac, now, &s);
}

/* pac_rx() of the peer's SYN on 'flow' at 'isn' (the VM is the server). */
static inline void
peer_syn(struct pac *pac, uint64_t now, int flow, uint32_t isn, uint16_t mss)
{
    struct pac_segment s = rx_seg(flow, isn, 0, PAC_TCP_SYN,
                                  PAC_ECN_NOT_ECT);

    s.mss = mss;
    rx_at(pac, now, &s);
}

/* pac_tx() of the VM's SYN-ACK on 'flow', acknowledging the peer's SYN at
 * 'isn', as test packet 'pkt'. */
static inline enum pac_verdict
vm_synack(struct pac *pac, uint64_t now, int flow, uint32_t isn,
          uint16_t mss, int pkt)
{
    struct pac_segment s = tx_seg(flow, isn + 1, 0, PAC_TCP_SYN | ACK);

    s.mss = mss;
    return tx_at(pac, now, &s, pkt);
}

#endif /* pac-test-fixture.h */
