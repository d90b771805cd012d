/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef PAC_TEST_SEG_H
#define PAC_TEST_SEG_H 1

/* Helpers shared by the libpac algorithm tests (tests/test-pac-*.c).
 *
 * Segments are built directly as 'struct pac_segment' values; no packet is
 * parsed.  A test flow is a small integer: flow N (N < FLOW_V6) is the IPv4
 * connection VM 10.0.0.1:80 <-> peer 10.0.0.2:(40000 + N); flow FLOW_V6 + N
 * is the same ports over IPv6 (2001:db8::1 <-> 2001:db8::2).
 *
 * Packets handed to pac_tx() are pointers into 'pkts', so that a packet is
 * named by its index there.  rec_emit() records every emitted packet with its
 * PAC_EMIT_* value, in order, into 'rec'.  Time is absolute microseconds;
 * tests create their instance at T0 and write AT(x) for "x us later". */

#include "pac.h"

#include "pac-test.h"

#define MSS 1460                /* pac_config_init()'s default_mss. */
#define IW (10 * MSS)           /* Default init_window_segs * MSS. */
#define ACK PAC_TCP_ACK

/* libpac counts frames, not only payload, against the threshold: a
 * segment of default_mss payload bytes takes WIRE_OVERHEAD bytes more of
 * the switch buffer (PAC_WIRE_OVERHEAD), and a bare ACK that the peer sends
 * back for data that is not a request counts as ACK_FRAME payload bytes
 * (PAC_ACK_FRAME), the SYN-ACK that answers the VM's SYN (74 bytes with
 * its options) as SYNACK_FRAME (PAC_SYNACK_FRAME). */
#define WIRE_OVERHEAD 66
#define ACK_FRAME 63
#define SYNACK_FRAME 71

/* A nonzero time origin, so that no test depends on time 0. */
#define T0 UINT64_C(1000000000)
#define AT(X) (T0 + (uint64_t) (X))

#define FLOW_V6 1000
#define VM_PORT 80
#define PEER_PORT_BASE 40000

#define N_PKTS (1 << 17)
static int pkts[N_PKTS];

/* The caller's handle for test packet 'i'. */
static inline void *
P(int i)
{
    return &pkts[i];
}

static inline int
pkt_index(const void *pkt)
{
    return (int) ((const int *) pkt - pkts);
}

/* Emitted packets, in order. */
struct emitted {
    int pkt;
    enum pac_emit emit;
};

static struct emitted rec[N_PKTS];
static size_t n_rec;

static inline void
rec_reset(void)
{
    n_rec = 0;
}

static inline void
rec_emit(void *aux, void *pkt, enum pac_emit emit)
{
    if (n_rec < N_PKTS) {
        rec[n_rec].pkt = pkt_index(pkt);
        rec[n_rec].emit = emit;
    }
    n_rec++;
}

/* Addresses. */

static inline void
addr_v4(uint8_t a[16], uint8_t last)
{
    memset(a, 0, 16);
    a[10] = a[11] = 0xff;
    a[12] = 10;
    a[15] = last;
}

static inline void
addr_v6(uint8_t a[16], uint8_t last)
{
    memset(a, 0, 16);
    a[0] = 0x20;
    a[1] = 0x01;
    a[2] = 0x0d;
    a[3] = 0xb8;
    a[15] = last;
}

static inline bool
flow_is_v6(int flow)
{
    return flow >= FLOW_V6;
}

static inline uint16_t
flow_peer_port(int flow)
{
    return PEER_PORT_BASE + (flow_is_v6(flow) ? flow - FLOW_V6 : flow);
}

/* Fills the VM and peer addresses of test flow 'flow'. */
static inline void
flow_addrs(int flow, uint8_t vm[16], uint8_t peer[16])
{
    if (flow_is_v6(flow)) {
        addr_v6(vm, 1);
        addr_v6(peer, 2);
    } else {
        addr_v4(vm, 1);
        addr_v4(peer, 2);
    }
}

/* Segments. */

/* A segment from the peer to the VM ("rx"): 'len' payload bytes at 'seq'. */
static inline struct pac_segment
rx_seg(int flow, uint32_t seq, uint32_t len, uint8_t flags, uint8_t ecn)
{
    struct pac_segment s;

    memset(&s, 0, sizeof s);
    flow_addrs(flow, s.dst, s.src);
    s.sport = flow_peer_port(flow);
    s.dport = VM_PORT;
    s.ip_version = flow_is_v6(flow) ? 6 : 4;
    s.ip_ecn = ecn;
    s.tcp_flags = flags;
    s.seq = seq;
    s.ack = 1;
    s.window = 65535;
    s.payload_len = len;
    s.ip_len = (flow_is_v6(flow) ? 40 : 20) + 20 + len;
    return s;
}

/* A segment from the VM to the peer ("tx"): acknowledges 'ack' and carries
 * 'len' payload bytes. */
static inline struct pac_segment
tx_seg(int flow, uint32_t ack, uint32_t len, uint8_t flags)
{
    struct pac_segment s;

    memset(&s, 0, sizeof s);
    flow_addrs(flow, s.src, s.dst);
    s.sport = VM_PORT;
    s.dport = flow_peer_port(flow);
    s.ip_version = flow_is_v6(flow) ? 6 : 4;
    s.ip_ecn = PAC_ECN_ECT0;
    s.tcp_flags = flags;
    s.seq = 1;
    s.ack = ack;
    s.window = 65535;
    s.payload_len = len;
    s.ip_len = (flow_is_v6(flow) ? 40 : 20) + 20 + len;
    return s;
}

/* Calls with the recorder. */

static inline void
rx_at(struct pac *pac, uint64_t now, const struct pac_segment *s)
{
    pac_rx(pac, s, now, rec_emit, NULL);
}

static inline enum pac_verdict
tx_at(struct pac *pac, uint64_t now, const struct pac_segment *s, int pkt)
{
    struct pac_segment copy = *s;   /* pac_tx() may clamp its window. */

    return pac_tx(pac, &copy, P(pkt), now, rec_emit, NULL);
}

/* Data (or any segment) from the peer. */
static inline void
rx(struct pac *pac, uint64_t now, int flow, uint32_t seq, uint32_t len,
   uint8_t flags, uint8_t ecn)
{
    struct pac_segment s = rx_seg(flow, seq, len, flags, ecn);

    rx_at(pac, now, &s);
}

/* 'len' bytes of plain data from the peer of 'flow'. */
static inline void
rx_data(struct pac *pac, uint64_t now, int flow, uint32_t seq, uint32_t len)
{
    rx(pac, now, flow, seq, len, ACK, PAC_ECN_ECT0);
}

/* An ACK, request or other segment from the VM as test packet 'pkt'. */
static inline enum pac_verdict
tx(struct pac *pac, uint64_t now, int flow, uint32_t ack, uint32_t len,
   uint8_t flags, int pkt)
{
    struct pac_segment s = tx_seg(flow, ack, len, flags);

    return tx_at(pac, now, &s, pkt);
}

/* A request from the VM on 'flow' (100 bytes, acknowledging 'seq'), after a
 * segment without payload from the peer that gives the flow its receive
 * sequence 'seq': with nothing else in flight, it puts the flow's window
 * (IW for a new flow) in flight, as the flow's own share, which the
 * peer's answer (data from 'seq' on) then pays back. */
static inline enum pac_verdict
request(struct pac *pac, uint64_t now, int flow, uint32_t seq, int pkt)
{
    rx(pac, now, flow, seq, 0, ACK, PAC_ECN_ECT0);
    return tx(pac, now, flow, seq, 100, ACK, pkt);
}

static inline void
run(struct pac *pac, uint64_t now)
{
    pac_run(pac, now, rec_emit, NULL);
}

/* The most payload in flight (in_flight + trigger) that 'threshold' admits
 * with the default MSS: libpac's fits() admits P bytes if
 * P * (MSS + WIRE_OVERHEAD) / MSS <= threshold. */
static inline uint64_t
max_payload(uint64_t threshold)
{
    uint64_t p = threshold * MSS / (MSS + WIRE_OVERHEAD);

    while ((p + 1) * (MSS + WIRE_OVERHEAD) / MSS <= threshold) {
        p++;
    }
    while (p && p * (MSS + WIRE_OVERHEAD) / MSS > threshold) {
        p--;
    }
    return p;
}

/* Makes 'flow' an established receiving flow that owes nothing: the peer
 * has sent 'first' bytes from sequence 1 (not asked for by PAC), the VM's
 * first ACK (test packet 'pkt', acknowledging all of it; it counts one MSS
 * since no earlier ACK is known, and passes at once like a duplicate ACK)
 * went out, and the MSS it let out has arrived.  in_flight is as before.
 * Returns the flow's next sequence number: the VM has acknowledged all but
 * the last MSS. */
static inline uint32_t
ack_flow(struct pac *pac, uint64_t now, int flow, uint32_t first, int pkt)
{
    rx_data(pac, now, flow, 1, first);
    tx(pac, now, flow, 1 + first, 0, ACK, pkt);
    rx_data(pac, now, flow, 1 + first, MSS);
    return 1 + first + MSS;
}

/* Instances.  At most one "current" instance is tracked, so that a test that
 * fails half-way does not leak it (the next make_pac() or the end of main()
 * destroys it). */

static struct pac *cur_pac;

static inline void
drop_pac(void)
{
    if (cur_pac) {
        pac_destroy(cur_pac, rec_emit, NULL);
        cur_pac = NULL;
    }
}

static inline struct pac *
make_pac(const struct pac_config *cfg)
{
    drop_pac();
    rec_reset();
    cur_pac = pac_create(cfg, T0);
    return cur_pac;
}

/* Destroys the current instance, recording what it releases. */
static inline void
end_pac(void)
{
    drop_pac();
}

/* The configuration most tests use: the defaults, but a base RTT so large
 * that the control interval is at its 100 ms cap, so that no control
 * interval ends (no threshold change, no deviation correction) in a test
 * that stays within 100 ms of T0, and without the fast path: these tests
 * drive the tracked algorithm with a few connections, which would not
 * start tracking (test-pac-watch.c tests the fast path), nor the new
 * connections' reserve, which their exact fits predate. */
static inline void
test_config(struct pac_config *cfg)
{
    pac_config_init(cfg);
    cfg->base_rtt_us = 10000000;
    cfg->fast_path = false;
    cfg->new_flow_reserve = 0;
}

/* Introspection. */

static inline struct pac_stats
get_stats(const struct pac *pac)
{
    struct pac_stats s;

    pac_get_stats(pac, &s);
    return s;
}

static inline uint64_t
in_flight(const struct pac *pac)
{
    return get_stats(pac).in_flight;
}

struct flow_query {
    uint16_t peer_port;
    bool v6;
    int found;
    struct pac_flow_info info;
};

static inline void
flow_query_cb(void *aux, const struct pac_flow_info *info)
{
    struct flow_query *q = aux;
    bool v6 = !(info->peer_addr[10] == 0xff && info->peer_addr[11] == 0xff
                && !info->peer_addr[0]);

    if (info->peer_port == q->peer_port && v6 == q->v6) {
        q->found++;
        q->info = *info;
    }
}

/* Looks up test flow 'flow' with pac_dump_flows().  Returns true and fills
 * '*info' if it is in the table exactly once. */
static inline bool
get_flow(const struct pac *pac, int flow, struct pac_flow_info *info)
{
    struct flow_query q;

    memset(&q, 0, sizeof q);
    q.peer_port = flow_peer_port(flow);
    q.v6 = flow_is_v6(flow);
    pac_dump_flows(pac, flow_query_cb, &q);
    if (q.found == 1) {
        *info = q.info;
        return true;
    }
    return false;
}

static inline void
count_cb(void *aux, const struct pac_flow_info *info)
{
    (void) info;
    ++*(size_t *) aux;
}

/* Number of flows pac_dump_flows() reports. */
static inline size_t
n_flows(const struct pac *pac)
{
    size_t n = 0;
    size_t ret = pac_dump_flows(pac, count_cb, &n);

    return ret == n ? n : (size_t) -1;
}

/* Checks. */

#define CHECK_IN_FLIGHT(PAC, V)                                         \
    do {                                                                \
        uint64_t if_ = in_flight(PAC);                                  \
        PAC_CHECK_EQ(if_, (V));                                         \
    } while (0)
#define CHECK_N_EMITTED(N) PAC_CHECK_EQ(n_rec, (N))
#define CHECK_EMIT(I, PKT, EMIT)                                        \
    do {                                                                \
        PAC_CHECK((size_t) (I) < n_rec);                                \
        PAC_CHECK_EQ(rec[I].pkt, (PKT));                                \
        PAC_CHECK_EQ(rec[I].emit, (EMIT));                              \
    } while (0)
#define CHECK_RELEASED(I, PKT) CHECK_EMIT(I, PKT, PAC_EMIT_RELEASE)
#define CHECK_VERDICT(EXPR, V)                                          \
    do {                                                                \
        enum pac_verdict v_ = (EXPR);                                   \
        PAC_CHECK_EQ(v_, (V));                                          \
    } while (0)
#define CHECK_PASS(EXPR) CHECK_VERDICT(EXPR, PAC_PASS)
#define CHECK_HELD(EXPR) CHECK_VERDICT(EXPR, PAC_HELD)

/* Fetches test flow 'FLOW' into 'INFO' or fails. */
#define GET_FLOW(PAC, FLOW, INFO) PAC_CHECK(get_flow(PAC, FLOW, INFO))

#endif /* pac-test-seg.h */
