/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of the fast path (cfg.fast_path, lib/pac-watch.c): while no
 * burst of window triggers announces an incast, PAC tracks no connection
 * and sees only pac_watch_rx(), pac_watch_tx() and pac_watch_syn(); a
 * burst whose initial windows reach half the threshold starts tracking,
 * and a long enough quiet spell ends it, marking every flow PAC_F_RESYNC
 * (kept, with its MSS and window scales, its sequence state dropped).
 *
 * The tests drive PAC as a datapath does (dp_tx(), dp_rx()): through
 * pac_tx() and pac_rx() while pac_tracking(), or when pac_watch_tx() or
 * pac_watch_syn() says so, and through the watch calls otherwise.  They
 * check behaviour, not the formula: when tracking starts and stops, that
 * the segments then tracked are held or admitted as PAC without the fast
 * path would, that the window clamp works on connections whose handshake
 * passed untracked, and that every held packet comes back exactly once. */

#include "pac.h"
#include "pac-private.h"

#include "pac-test-fixture.h"

/* An answer of nine full segments and a short one: its last segment tells
 * PAC that the answer is complete. */
#define ANSWER (9 * MSS + 1000)

/* Half the default threshold, in initial windows of the default MSS: the
 * fourth of a burst of requests starts tracking. */
#define N_BEFORE 3

/* What the datapath did with each packet from the VM. */
enum fate {
    F_NONE,
    F_FAST,                     /* Passed untracked (pac_watch_tx()). */
    F_PASSED,                   /* pac_tx(): PAC_PASS. */
    F_HELD,                     /* pac_tx(): PAC_HELD. */
};

static uint8_t fate[N_PKTS];
static int next_pkt;

static void
dp_reset(void)
{
    memset(fate, 0, sizeof fate);
    next_pkt = 0;
}

/* Sends segment 's' from the VM as a datapath with the fast path does, as
 * the next test packet: a segment with SYN set goes whole to
 * pac_watch_syn().  A packet passed untracked is PAC_PASS, and its window
 * is the VM's.  pac_tx() may clamp the window of 's'. */
static enum pac_verdict
dp_tx_seg(struct pac *pac, uint64_t now, struct pac_segment *s)
{
    int pkt = next_pkt++;
    enum pac_verdict v;

    if (!pac_tracking(pac)
        && !(s->tcp_flags & PAC_TCP_SYN
             ? pac_watch_syn(pac, s, false, now)
             : pac_watch_tx(pac, s->tcp_flags, s->payload_len, now))) {
        fate[pkt] = F_FAST;
        return PAC_PASS;
    }
    v = pac_tx(pac, s, P(pkt), now, rec_emit, NULL);
    fate[pkt] = v == PAC_PASS ? F_PASSED : F_HELD;
    return v;
}

/* The same, leaving 's' as it is. */
static enum pac_verdict
dp_tx(struct pac *pac, uint64_t now, const struct pac_segment *s)
{
    struct pac_segment copy = *s;

    return dp_tx_seg(pac, now, &copy);
}

/* The same for segment 's' toward the VM. */
static void
dp_rx(struct pac *pac, uint64_t now, const struct pac_segment *s)
{
    if (pac_tracking(pac)) {
        rx_at(pac, now, s);
    } else if (s->tcp_flags & PAC_TCP_SYN) {
        PAC_CHECK(!pac_watch_syn(pac, s, true, now));
    } else {
        pac_watch_rx(pac, s->payload_len, now);
    }
}

/* The internal flags of test flow 'flow', or 0 if it is not in the
 * table. */
static uint16_t
flow_flags(const struct pac *pac, int flow)
{
    uint8_t vm[16], peer[16];

    flow_addrs(flow, vm, peer);
    for (uint32_t i = 0; i < pac->cfg.max_flows; i++) {
        const struct pac_flow *f = &pac->flows[i];

        if ((f->flags & PAC_F_IN_USE)
            && f->peer_port == flow_peer_port(flow)
            && !memcmp(f->peer_addr, peer, 16)) {
            return f->flags;
        }
    }
    return 0;
}

/* The sequence state that a flow marked PAC_F_RESYNC has dropped. */
#define SEQ_FLAGS (PAC_F_SYN_SENT | PAC_F_SYNACK_SENT | PAC_F_ACK_BASE \
                   | PAC_F_RCV_BASE | PAC_F_IN_RESP | PAC_F_BUDGET        \
                   | PAC_F_DRY | PAC_F_MEASURING | PAC_F_ON_OUT_LIST      \
                   | PAC_F_BUSY)

/* Whether every flow in the table is marked PAC_F_RESYNC, without sequence
 * state. */
static bool
all_resync(const struct pac *pac)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < pac->cfg.max_flows; i++) {
        const struct pac_flow *f = &pac->flows[i];

        if (!(f->flags & PAC_F_IN_USE)) {
            continue;
        }
        n++;
        if (!(f->flags & PAC_F_RESYNC) || (f->flags & SEQ_FLAGS)) {
            return false;
        }
    }
    return n == pac->n_resync && n == pac->n_flows;
}

/* A request (100 bytes, acknowledging the peer's data up to 'ack'). */
static enum pac_verdict
dp_request(struct pac *pac, uint64_t now, int flow, uint32_t ack)
{
    struct pac_segment s = tx_seg(flow, ack, 100, ACK);

    return dp_tx(pac, now, &s);
}

/* Whether test packet 'pkt' has been emitted. */
static bool
emitted(int pkt)
{
    for (size_t i = 0; i < n_rec && i < N_PKTS; i++) {
        if (rec[i].pkt == pkt) {
            return true;
        }
    }
    return false;
}

/* After end_pac(): every packet PAC held came back through emit exactly
 * once, and no other packet did. */
static bool
all_back_once(void)
{
    static uint16_t n_emits[N_PKTS];

    if (n_rec > N_PKTS) {
        return false;
    }
    memset(n_emits, 0, sizeof n_emits);
    for (size_t i = 0; i < n_rec; i++) {
        if (rec[i].pkt < 0 || rec[i].pkt >= next_pkt) {
            return false;
        }
        n_emits[rec[i].pkt]++;
    }
    for (int i = 0; i < next_pkt; i++) {
        if (n_emits[i] != (fate[i] == F_HELD ? 1 : 0)) {
            fprintf(stderr, "packet %d (fate %d) emitted %d times\n", i,
                    fate[i], n_emits[i]);
            return false;
        }
    }
    return true;
}

/* The peers of an incast: peer i is test flow 'first' + i, asked by
 * request packet req_pkt[i], its answer ANSWER bytes from sequence 1. */
struct incast {
    int first;
    int n;
    int req_pkt[64];
    uint32_t sent[64];
    uint64_t last_data;         /* When data last arrived. */
};

/* Sends the requests of 'in' at 'now', the whole burst at once. */
static void
incast_request(struct pac *pac, uint64_t now, struct incast *in)
{
    for (int i = 0; i < in->n; i++) {
        in->req_pkt[i] = next_pkt;
        dp_request(pac, now, in->first + i, 1);
    }
}

/* One step of 'in' at 'now': every peer whose request has left sends the
 * next segment of its answer, which the VM acknowledges at once; then
 * pac_run().  Returns true while an answer is unfinished. */
static bool
incast_step(struct pac *pac, uint64_t now, struct incast *in)
{
    bool more = false;

    for (int i = 0; i < in->n; i++) {
        int pkt = in->req_pkt[i];
        bool asked = fate[pkt] != F_HELD || emitted(pkt);

        if (asked && in->sent[i] < ANSWER) {
            uint32_t len = (ANSWER - in->sent[i] < MSS
                            ? ANSWER - in->sent[i] : MSS);
            struct pac_segment d = rx_seg(in->first + i, 1 + in->sent[i],
                                          len, ACK, PAC_ECN_ECT0);
            struct pac_segment a;

            dp_rx(pac, now, &d);
            in->sent[i] += len;
            in->last_data = now;
            a = tx_seg(in->first + i, 1 + in->sent[i], 0, ACK);
            dp_tx(pac, now, &a);
        }
        more |= in->sent[i] < ANSWER;
    }
    run(pac, now);
    return more;
}

/* Runs 'in' in steps of 20 us from 'now' until every answer has arrived;
 * returns the time then, or 0 if that took more than a second. */
static uint64_t
incast_finish(struct pac *pac, uint64_t now, struct incast *in)
{
    for (uint64_t end = now + 1000000; now < end; now += 20) {
        if (!incast_step(pac, now, in)) {
            return now;
        }
    }
    return 0;
}

/* Calls pac_run() every millisecond from 'now' on for at most 'max_us',
 * and again at once while it asks for that (the end of tracking marks the
 * flows a chunk per call), until PAC stops tracking; returns the time it
 * stopped, or 0. */
static uint64_t
run_until_untracked(struct pac *pac, uint64_t now, uint64_t max_us)
{
    for (uint64_t end = now + max_us; now <= end; now += 1000) {
        run(pac, now);
        for (int i = 0; i < 1000 && pac_tracking(pac)
                        && pac_next_wakeup(pac) <= now; i++) {
            run(pac, now);
        }
        if (!pac_tracking(pac)) {
            return now;
        }
    }
    return 0;
}

static void
watch_config(struct pac_config *cfg)
{
    pac_config_init(cfg);
    PAC_CHECK(cfg->fast_path);  /* The default. */
}

/* (1) Without fast_path PAC always tracks: pac_watch_tx() says so for every
 * segment and the datapath never uses the fast path. */
static void
test_watch_off(void)
{
    struct pac_config cfg;
    struct incast in = { .first = 0, .n = 8 };
    struct pac_stats st;
    struct pac *pac;

    pac_config_init(&cfg);
    cfg.fast_path = false;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK(pac_watch_tx(pac, ACK, 0, AT(0)));
    {
        struct pac_segment syn = vm_syn_seg(99, MSS);

        PAC_CHECK(pac_watch_syn(pac, &syn, false, AT(0)));
        PAC_CHECK_EQ(n_flows(pac), 0);
    }
    pac_watch_rx(pac, 5 * MSS, AT(0));

    incast_request(pac, AT(0), &in);
    PAC_CHECK(incast_finish(pac, AT(20), &in));
    PAC_CHECK(!run_until_untracked(pac, AT(100000), 300000));
    for (int i = 0; i < next_pkt; i++) {
        PAC_CHECK(fate[i] != F_FAST);
    }
    st = get_stats(pac);
    PAC_CHECK(st.tracking);
    PAC_CHECK_EQ(st.fast_rx_packets, 0);
    PAC_CHECK_EQ(st.fast_tx_packets, 0);
    PAC_CHECK_EQ(st.tracking_starts, 0);
    PAC_CHECK_EQ(st.tracking_stops, 0);
    PAC_CHECK_EQ(st.tx_packets, next_pkt);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (2) One bulk transfer (one request, then thousands of full segments in
 * and pure ACKs out) never starts tracking. */
static void
test_watch_bulk(void)
{
    struct pac_config cfg;
    struct pac_stats st;
    uint32_t seq = 1;
    struct pac *pac;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    PAC_CHECK(!pac_tracking(pac));
    PAC_CHECK_EQ(dp_request(pac, AT(0), 0, 1), PAC_PASS);
    for (int i = 0; i < 20000; i++) {
        struct pac_segment d = rx_seg(0, seq, MSS, ACK, PAC_ECN_ECT0);

        dp_rx(pac, AT(10 + i * 12), &d);
        seq += MSS;
        if (i % 2) {
            struct pac_segment a = tx_seg(0, seq, 0, ACK);

            PAC_CHECK_EQ(dp_tx(pac, AT(10 + i * 12), &a), PAC_PASS);
        }
        PAC_CHECK(!pac_tracking(pac));
    }
    run(pac, AT(300000));
    st = get_stats(pac);
    PAC_CHECK(!st.tracking);
    PAC_CHECK_EQ(st.tracking_starts, 0);
    PAC_CHECK_EQ(st.fast_rx_packets, 20000);
    PAC_CHECK_EQ(st.fast_tx_packets, 10001);
    PAC_CHECK_EQ(st.tx_packets, 0);
    PAC_CHECK_EQ(st.rx_packets, 0);
    PAC_CHECK_EQ(st.flows, 0);
    PAC_CHECK_EQ(st.in_flight, 0);
    PAC_CHECK_EQ(pac_next_wakeup(pac), UINT64_MAX);
    end_pac();
    PAC_CHECK_EQ(n_rec, 0);
}

/* (2b) Requests answered with at least their window before the next one
 * comes (a steady exchange of requests and answers, within the horizon of
 * one another) never add up: the data that arrives takes their windows
 * back. */
static void
test_watch_exchange(void)
{
    struct pac_config cfg;
    struct pac *pac;
    uint32_t seq = 1;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    for (int i = 0; i < 200; i++) {
        uint64_t t = AT(i * 1000);

        PAC_CHECK_EQ(dp_request(pac, t, i % 4, seq), PAC_PASS);
        for (int j = 0; j < 12; j++) {
            struct pac_segment d = rx_seg(i % 4, seq, MSS, ACK, PAC_ECN_ECT0);

            dp_rx(pac, t + 100, &d);
            seq += MSS;
        }
        PAC_CHECK(!pac_tracking(pac));
    }
    PAC_CHECK_EQ(get_stats(pac).tracking_starts, 0);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (2d) Answers that grow: two initial windows or more still to come are
 * answers under way together, in slow start, where each segment's ACK lets
 * twice as much out.  Three requests' windows (3 x 14 600 bytes) are under
 * half the default threshold, but as their answers' segments arrive the
 * estimate grows by them instead of shrinking (43 800 + 3 x 1 460 >=
 * 48 000), and the receiver's ACK after the third segment starts
 * tracking.  Past the horizon the receiver's segments forget the
 * estimate: a later ACK passes untracked. */
/* N_BEFORE requests at T0 into a fresh fast-path instance: they pass
 * untracked. */
static void
slow_start_requests(struct pac *pac)
{
    dp_reset();
    for (int i = 0; i < N_BEFORE; i++) {
        PAC_CHECK_EQ(dp_request(pac, AT(0), i, 1), PAC_PASS);
    }
}

/* The i-th full segment of those requests' answers, round robin, at
 * 'now', and the receiver's ACK of it, which PAC passes. */
static void
slow_start_segment(struct pac *pac, uint64_t now, int i)
{
    struct pac_segment d = rx_seg(i % N_BEFORE, 1 + (i / N_BEFORE) * MSS,
                                  MSS, ACK, PAC_ECN_ECT0);
    struct pac_segment a = tx_seg(i % N_BEFORE,
                                  1 + (i / N_BEFORE + 1) * MSS, 0, ACK);

    dp_rx(pac, now, &d);
    PAC_CHECK_EQ(dp_tx(pac, now, &a), PAC_PASS);
}

static void
test_watch_slow_start(void)
{
    struct pac_config cfg;
    struct pac *pac;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    slow_start_requests(pac);
    for (int i = 0; i < 4; i++) {
        slow_start_segment(pac, AT(100 + i), i);
        PAC_CHECK_EQ(fate[next_pkt - 1], (i < 2 ? F_FAST : F_PASSED));
        PAC_CHECK_EQ(pac_tracking(pac), i >= 2);
    }
    PAC_CHECK_EQ(get_stats(pac).tracking_starts, 1);
    end_pac();
    PAC_CHECK(all_back_once());

    /* The same requests, their answers' segments after the horizon. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    slow_start_requests(pac);
    for (int i = 0; i < 12; i++) {
        slow_start_segment(pac, AT(6000 + i), i);
        PAC_CHECK(!pac_tracking(pac));
    }
    PAC_CHECK_EQ(get_stats(pac).tracking_starts, 0);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (2c) Small answers do not add up: one connection's 1 KB answers to
 * requests 1 ms apart, a thousand of them, never start tracking.  Each
 * request counts a whole initial window, and each answer's short segment
 * ends it: the window goes back whole, not only the answer's bytes. */
static void
test_watch_small_answers(void)
{
    struct pac_config cfg;
    struct pac *pac;
    uint32_t seq = 1;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    for (int i = 0; i < 1000; i++) {
        uint64_t t = AT(i * 1000);
        struct pac_segment d = rx_seg(0, seq, 1000, ACK, PAC_ECN_ECT0);
        struct pac_segment a;

        PAC_CHECK_EQ(dp_request(pac, t, 0, seq), PAC_PASS);
        dp_rx(pac, t + 100, &d);
        seq += 1000;
        a = tx_seg(0, seq, 0, ACK);
        PAC_CHECK_EQ(dp_tx(pac, t + 100, &a), PAC_PASS);
        if (i % 10 == 0) {
            run(pac, t + 500);
        }
        PAC_CHECK(!pac_tracking(pac));
    }
    PAC_CHECK_EQ(get_stats(pac).tracking_starts, 0);
    PAC_CHECK_EQ(get_stats(pac).fast_tx_packets, 2000);
    PAC_CHECK_EQ(get_stats(pac).fast_rx_packets, 1000);
    PAC_CHECK_EQ(n_flows(pac), 0);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (3) A burst of requests whose initial windows reach half the threshold:
 * tracking starts at the right one, which goes to pac_tx() with the rest
 * of the burst, and those are held or admitted as PAC without the fast
 * path holds or admits them: in_flight counts the requests that passed
 * untracked, so the requests beyond the threshold are held. */
static void
test_watch_burst(void)
{
    enum pac_verdict ref[10];
    struct pac_config cfg;
    uint64_t ref_in_flight;
    struct pac_stats st;
    struct pac *pac;

    /* PAC without the fast path. */
    pac = make_test_pac();
    PAC_CHECK(pac);
    dp_reset();
    for (int i = 0; i < 10; i++) {
        ref[i] = dp_request(pac, AT(0), i, 1);
    }
    ref_in_flight = in_flight(pac);
    for (int i = 0; i < 10; i++) {
        PAC_CHECK_EQ(ref[i], i < 6 ? PAC_PASS : PAC_HELD);
    }
    end_pac();

    watch_config(&cfg);
    cfg.base_rtt_us = 10000000;     /* No control interval ends. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    for (int i = 0; i < 10; i++) {
        enum pac_verdict v = dp_request(pac, AT(0), i, 1);

        PAC_CHECK_EQ(v, ref[i]);
        PAC_CHECK_EQ(fate[i], (i < N_BEFORE ? F_FAST
                               : ref[i] == PAC_PASS ? F_PASSED : F_HELD));
        PAC_CHECK_EQ(pac_tracking(pac), i >= N_BEFORE);
    }
    st = get_stats(pac);
    PAC_CHECK(st.tracking);
    PAC_CHECK_EQ(st.tracking_starts, 1);
    PAC_CHECK_EQ(st.fast_tx_packets, N_BEFORE);
    PAC_CHECK_EQ(st.tx_packets, 10 - N_BEFORE);
    PAC_CHECK_EQ(st.in_flight, ref_in_flight);
    PAC_CHECK_EQ(st.held, 4);
    PAC_CHECK_EQ(n_flows(pac), 10 - N_BEFORE);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (3b) When tracking starts, the initial windows of the requests that
 * passed untracked, and of the tracked ones whose flows have no sequence
 * number yet, belong to no flow.  Each flow's first data claims the rest of
 * its window, so the window's data is credited where it was counted, not
 * against the budget of the flow's first ACKs: once every answer has come
 * and ended, nothing is in flight and nothing is left to no flow.  (Without
 * the claim, the windows' data went against the ACKs' budgets and a
 * round's initial windows stayed in in_flight, holding the next rounds'
 * requests.) */
static void
test_watch_unattributed(void)
{
    struct incast in = { .first = 0, .n = 10 };
    struct pac_config cfg;
    struct pac *pac;

    watch_config(&cfg);
    cfg.base_rtt_us = 10000000;     /* No control interval ends. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    incast_request(pac, AT(0), &in);
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK(pac->unattributed >= (uint64_t) N_BEFORE * IW);

    /* Every asked peer's first segment: each claims its window's rest, and
     * its answer starts there (the next request measures its size). */
    PAC_CHECK(incast_step(pac, AT(20), &in));
    PAC_CHECK_EQ(pac->unattributed, 0);
    for (int i = 0; i < N_BEFORE; i++) {
        PAC_CHECK(flow_flags(pac, i) & PAC_F_IN_RESP);
    }

    PAC_CHECK(incast_finish(pac, AT(40), &in));
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    PAC_CHECK_EQ(pac->unattributed, 0);
    PAC_CHECK_EQ(in_flight(pac), 0);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (4) After the incast's data has arrived and PAC has been quiet for
 * 100 ms, tracking stops: every flow stays in the table, marked
 * PAC_F_RESYNC, its budget back and its sequence state dropped; nothing is
 * in flight; pac_run() still has the flows' idle expiry to do.  A later
 * lone request passes untracked.  When PAC tracks again, a marked flow's
 * first segment picks it up afresh, as one first seen mid-stream. */
static void
test_watch_stop(void)
{
    struct incast in = { .first = 0, .n = 10 };
    struct incast again = { .first = 0, .n = 10 };
    uint64_t done, stop, t;
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;
    uint16_t flags;

    watch_config(&cfg);
    cfg.idle_timeout_ms = 10000;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    incast_request(pac, AT(0), &in);
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK(get_stats(pac).held > 0);
    done = incast_finish(pac, AT(20), &in);
    PAC_CHECK(done);
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK(pac_next_wakeup(pac) < UINT64_MAX);
    PAC_CHECK(flow_flags(pac, in.n - 1) & PAC_F_RCV_BASE);
    PAC_CHECK(!(flow_flags(pac, in.n - 1) & PAC_F_RESYNC));

    stop = run_until_untracked(pac, done + 1000, 400000);
    PAC_CHECK(stop);
    PAC_CHECK(stop >= in.last_data + 100000);
    st = get_stats(pac);
    PAC_CHECK(!st.tracking);
    PAC_CHECK_EQ(st.tracking_starts, 1);
    PAC_CHECK_EQ(st.tracking_stops, 1);
    PAC_CHECK_EQ(st.flows, in.n);
    PAC_CHECK_EQ(n_flows(pac), in.n);
    PAC_CHECK(all_resync(pac));
    PAC_CHECK_EQ(st.held, 0);
    PAC_CHECK_EQ(st.in_flight, 0);
    PAC_CHECK_EQ(pac->unattributed, 0);
    /* The flows' idle expiry: pac_run() scans them untracked too. */
    PAC_CHECK(pac_next_wakeup(pac) <= stop + 1000000);

    /* A lone request later passes untracked, and so does its answer. */
    t = stop + 1000000;
    PAC_CHECK_EQ(dp_request(pac, t, 0, 1 + ANSWER), PAC_PASS);
    PAC_CHECK_EQ(fate[next_pkt - 1], F_FAST);
    PAC_CHECK(!pac_tracking(pac));
    st = get_stats(pac);
    PAC_CHECK_EQ(st.tracking_starts, 1);
    PAC_CHECK_EQ(st.flows, in.n);
    PAC_CHECK(flow_flags(pac, 0) & PAC_F_RESYNC);

    /* Another round on the same connections (their answers from 1 +
     * ANSWER on): the flows kept are picked up afresh, each from its
     * request, and every held packet comes back. */
    t += 10000;
    for (int i = 0; i < again.n; i++) {
        again.req_pkt[i] = next_pkt;
        dp_request(pac, t, i, 1 + ANSWER);
    }
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(get_stats(pac).tracking_starts, 2);
    flags = flow_flags(pac, N_BEFORE);
    PAC_CHECK(!(flags & PAC_F_RESYNC));
    PAC_CHECK(flags & PAC_F_IN_RESP);
    PAC_CHECK(flow_flags(pac, 0) & PAC_F_RESYNC);    /* Not seen yet. */
    for (int i = 0; i < again.n; i++) {
        again.sent[i] = 0;
    }
    for (uint64_t now = t + 20; now < t + 1000000; now += 20) {
        bool more = false;

        for (int i = 0; i < again.n; i++) {
            int pkt = again.req_pkt[i];
            uint32_t len;

            if ((fate[pkt] == F_HELD && !emitted(pkt))
                || again.sent[i] >= ANSWER) {
                more |= again.sent[i] < ANSWER;
                continue;
            }
            len = MIN(ANSWER - again.sent[i], MSS);
            {
                struct pac_segment d = rx_seg(i, 1 + ANSWER + again.sent[i],
                                              len, ACK, PAC_ECN_ECT0);
                struct pac_segment a;

                dp_rx(pac, now, &d);
                again.sent[i] += len;
                a = tx_seg(i, 1 + ANSWER + again.sent[i], 0, ACK);
                dp_tx(pac, now, &a);
            }
            more |= again.sent[i] < ANSWER;
        }
        run(pac, now);
        if (!more) {
            break;
        }
    }
    for (int i = 0; i < again.n; i++) {
        PAC_CHECK_EQ(again.sent[i], ANSWER);
    }
    /* The round's requests had no sequence number to attach their
     * windows to (larger than an initial window now: the flows kept their
     * windows), so they went to the unattributed part; each flow's first
     * data took its own back, and the answers' ends the rest. */
    PAC_CHECK_EQ(get_stats(pac).held, 0);
    PAC_CHECK_EQ(pac->unattributed, 0);
    PAC_CHECK_EQ(in_flight(pac), 0);
    PAC_CHECK(run_until_untracked(pac, t + 1000000, 400000));
    PAC_CHECK_EQ(get_stats(pac).tracking_stops, 2);
    PAC_CHECK(all_resync(pac));

    /* Idle for the idle timeout: the flows leave the table, though PAC
     * tracks none, and pac_run() then has nothing to do. */
    t += 20000000;
    run(pac, t);
    run(pac, t + 1000000);
    PAC_CHECK_EQ(get_stats(pac).flows, 0);
    PAC_CHECK(get_stats(pac).flows_expired >= (uint64_t) in.n);
    PAC_CHECK_EQ(pac_next_wakeup(pac), UINT64_MAX);
    PAC_CHECK_EQ(pac->n_resync, 0);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (4b) One request every 100 ms, with a 1 KB answer, each on a connection
 * of its own (whose answer sizes PAC has not learned): tracking, started
 * by a burst, stops, and does not start again.  The request's whole
 * initial window stays in flight until its answer ends or goes dry; at
 * most a quarter of the threshold counts as quiet, which one window is
 * (an eighth was not: each request found PAC busy again, and tracking
 * never ended). */
static void
test_watch_light_stop(void)
{
    struct incast in = { .first = 0, .n = N_BEFORE + 1 };
    struct pac_config cfg;
    const uint32_t seq = 1;
    uint64_t done, t;
    struct pac *pac;
    int stopped_at = -1;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    incast_request(pac, AT(0), &in);
    PAC_CHECK(pac_tracking(pac));
    done = incast_finish(pac, AT(20), &in);
    PAC_CHECK(done);

    for (int i = 0; i < 40; i++) {
        struct pac_segment d, a;

        t = done + 1000 + (uint64_t) i * 100000;
        /* The request, then pac_run() at once (the datapath runs it at
         * its wakeup, which may come before the answer). */
        dp_request(pac, t, 100 + i, seq);
        run(pac, t);
        d = rx_seg(100 + i, seq, 1000, ACK, PAC_ECN_ECT0);
        dp_rx(pac, t + 200, &d);
        a = tx_seg(100 + i, seq + 1000, 0, ACK);
        dp_tx(pac, t + 200, &a);
        for (uint64_t r = t + 1000; r < t + 100000; r += 1000) {
            run(pac, r);
            for (int k = 0; k < 100 && pac_tracking(pac)
                            && pac_next_wakeup(pac) <= r; k++) {
                run(pac, r);
            }
        }
        if (stopped_at < 0 && !pac_tracking(pac)) {
            stopped_at = i;
        }
    }
    PAC_CHECK(stopped_at >= 0 && stopped_at <= 3);
    PAC_CHECK(!pac_tracking(pac));
    PAC_CHECK_EQ(get_stats(pac).tracking_starts, 1);
    PAC_CHECK_EQ(get_stats(pac).tracking_stops, 1);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (4c) The window clamp works on a connection whose handshake passed
 * untracked (pac_watch_syn() noted its MSS and window scales), from its
 * first tracked segment on, and again after tracking stopped and started
 * anew: the flow, kept, keeps them. */
static void
test_watch_clamp(void)
{
    const int conn = 60;
    /* threshold / 2 in whole frames of MSS, in units of 2^7 bytes. */
    const uint16_t clamp = ((96000 / 2 / (MSS + WIRE_OVERHEAD)) * MSS + 127)
                           >> 7;
    struct incast in = { .first = 0, .n = N_BEFORE + 1 };
    struct incast in2 = { .first = 10, .n = N_BEFORE + 1 };
    struct pac_segment s, a;
    struct pac_config cfg;
    struct pac_flow_info info;
    uint32_t seq = 1001;
    uint64_t done, stop;
    struct pac *pac;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();

    /* The peer opens a connection, untracked: its SYN and the VM's SYN-ACK
     * go to pac_watch_syn(), which does not start tracking. */
    s = rx_seg(conn, 1000, 0, PAC_TCP_SYN, PAC_ECN_NOT_ECT);
    s.mss = MSS;
    s.has_wscale = true;
    s.wscale = 7;
    dp_rx(pac, AT(0), &s);
    s = tx_seg(conn, 1001, 0, PAC_TCP_SYN | ACK);
    s.mss = MSS;
    s.has_wscale = true;
    s.wscale = 7;
    PAC_CHECK_EQ(dp_tx(pac, AT(100), &s), PAC_PASS);
    PAC_CHECK_EQ(fate[next_pkt - 1], F_FAST);
    PAC_CHECK(!pac_tracking(pac));
    GET_FLOW(pac, conn, &info);
    PAC_CHECK_EQ(info.mss, MSS);
    PAC_CHECK((flow_flags(pac, conn) & (PAC_F_RESYNC | SEQ_FLAGS))
              == PAC_F_RESYNC);
    PAC_CHECK_EQ(in_flight(pac), 0);

    /* Its data and ACKs pass untouched, windows unclamped. */
    for (int i = 0; i < 20; i++) {
        s = rx_seg(conn, seq, MSS, ACK, PAC_ECN_ECT0);
        dp_rx(pac, AT(1000 + i), &s);
        seq += MSS;
        a = tx_seg(conn, seq, 0, ACK);
        PAC_CHECK_EQ(dp_tx_seg(pac, AT(1000 + i), &a), PAC_PASS);
        PAC_CHECK_EQ(a.window, 65535);
        PAC_CHECK(!a.window_clamped);
    }

    /* An incast starts tracking: the connection's next ACK is its first
     * tracked segment, and its window is clamped. */
    incast_request(pac, AT(10000), &in);
    PAC_CHECK(pac_tracking(pac));
    s = rx_seg(conn, seq, MSS, ACK, PAC_ECN_ECT0);
    dp_rx(pac, AT(10010), &s);
    seq += MSS;
    a = tx_seg(conn, seq, 0, ACK);
    dp_tx_seg(pac, AT(10010), &a);
    PAC_CHECK(a.window_clamped);
    PAC_CHECK_EQ(a.window, clamp);
    PAC_CHECK(!(flow_flags(pac, conn) & PAC_F_RESYNC));

    /* Tracking stops; the flow stays, marked, with its MSS and scales. */
    done = incast_finish(pac, AT(10020), &in);
    PAC_CHECK(done);
    stop = run_until_untracked(pac, done + 1000, 400000);
    PAC_CHECK(stop);
    PAC_CHECK(all_resync(pac));
    GET_FLOW(pac, conn, &info);
    PAC_CHECK_EQ(info.mss, MSS);
    a = tx_seg(conn, seq, 0, ACK);
    PAC_CHECK_EQ(dp_tx_seg(pac, stop + 1000, &a), PAC_PASS);
    PAC_CHECK(!a.window_clamped);

    /* Tracking again: clamped again, from the first tracked segment. */
    incast_request(pac, stop + 10000, &in2);
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(get_stats(pac).tracking_starts, 2);
    s = rx_seg(conn, seq, MSS, ACK, PAC_ECN_ECT0);
    dp_rx(pac, stop + 10010, &s);
    seq += MSS;
    a = tx_seg(conn, seq, 0, ACK);
    dp_tx_seg(pac, stop + 10010, &a);
    PAC_CHECK(a.window_clamped);
    PAC_CHECK_EQ(a.window, clamp);
    PAC_CHECK(incast_finish(pac, stop + 10020, &in2));
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (4d) A handshake seen untracked whose SYN-ACK starts tracking: the
 * VM's SYN-ACK goes to pac_tx(), which finds the flow pac_watch_syn()
 * made of the peer's SYN and takes it from there: the window clamp has
 * both scales, and nothing counted twice.  A new SYN on the ports of a
 * flow PAC no longer follows replaces that flow. */
static void
test_watch_syn(void)
{
    struct pac_config cfg;
    struct pac_segment s;
    struct pac *pac;
    int i;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    for (i = 0; i <= N_BEFORE; i++) {
        s = rx_seg(i, 5000, 0, PAC_TCP_SYN, PAC_ECN_NOT_ECT);
        s.mss = 1400;
        s.has_wscale = true;
        s.wscale = 7;
        dp_rx(pac, AT(i), &s);
        PAC_CHECK(!pac_tracking(pac));
        PAC_CHECK_EQ(in_flight(pac), 0);

        s = tx_seg(i, 5001, 0, PAC_TCP_SYN | ACK);
        s.mss = MSS;
        s.has_wscale = true;
        s.wscale = 7;
        PAC_CHECK_EQ(dp_tx(pac, AT(i), &s), PAC_PASS);
    }
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(fate[next_pkt - 1], F_PASSED);
    PAC_CHECK_EQ(get_stats(pac).handshake_triggers, 1);
    PAC_CHECK_EQ(get_stats(pac).fast_rx_packets, N_BEFORE + 1);
    PAC_CHECK_EQ(get_stats(pac).fast_tx_packets, N_BEFORE);
    PAC_CHECK_EQ(get_stats(pac).flows, N_BEFORE + 1);
    PAC_CHECK(!(flow_flags(pac, N_BEFORE) & PAC_F_RESYNC));
    PAC_CHECK(flow_flags(pac, N_BEFORE) & PAC_F_SYNACK_SENT);
    PAC_CHECK(flow_flags(pac, 0) & PAC_F_RESYNC);
    {
        struct pac_flow_info info;

        GET_FLOW(pac, N_BEFORE, &info);
        PAC_CHECK_EQ(info.mss, 1400);
    }
    /* The SYN-ACKs that passed untracked count an initial window of the
     * default MSS each; the one that started tracking, of the
     * connection's (and the short last segment's frame). */
    PAC_CHECK(in_flight(pac) >= (uint64_t) N_BEFORE * IW + 10 * 1400);
    PAC_CHECK(in_flight(pac) <= (uint64_t) N_BEFORE * IW + 10 * 1400
                                + WIRE_OVERHEAD);
    end_pac();
    PAC_CHECK(all_back_once());

    /* Untracked, a new SYN on a marked flow's ports replaces it: the new
     * connection's MSS is its own. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    s = rx_seg(0, 5000, 0, PAC_TCP_SYN, PAC_ECN_NOT_ECT);
    s.mss = 1000;
    dp_rx(pac, AT(0), &s);
    s = rx_seg(0, 90000, 0, PAC_TCP_SYN, PAC_ECN_NOT_ECT);
    s.mss = 1400;
    dp_rx(pac, AT(100000), &s);
    {
        struct pac_flow_info info;

        GET_FLOW(pac, 0, &info);
        PAC_CHECK_EQ(info.mss, 1400);
    }
    PAC_CHECK_EQ(get_stats(pac).flows_closed, 1);
    PAC_CHECK_EQ(pac->n_resync, 1);
    end_pac();
}

/* (5) A packet held while tracking ends abandons the walk that marks the
 * flows: the flows left unmarked stay so, and the walk starts again after
 * another quiet spell. */
static void
test_watch_stop_abandoned(void)
{
    struct incast in = { .first = 5000, .n = 7 };
    uint32_t before, after;
    struct pac_config cfg;
    uint64_t now, done;
    struct pac_stats st;
    struct pac *pac;
    uint32_t n_extra = 3000;

    watch_config(&cfg);
    cfg.max_flows = 8192;
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();

    /* Tracking starts; then many connections show up. */
    for (int i = 0; i <= N_BEFORE; i++) {
        dp_request(pac, AT(0), i, 1);
    }
    PAC_CHECK(pac_tracking(pac));
    for (uint32_t i = 0; i < n_extra; i++) {
        struct pac_segment s = rx_seg(100 + i, 1, 0, ACK, PAC_ECN_ECT0);

        dp_rx(pac, AT(10), &s);
    }
    PAC_CHECK_EQ(get_stats(pac).flows, n_extra + 1);
    PAC_CHECK_EQ(pac->n_resync, 0);

    /* Quiet: the walk starts, and takes more than one pac_run(). */
    for (now = AT(1000); now < AT(400000); now += 1000) {
        run(pac, now);
        if (pac->n_resync) {
            break;
        }
    }
    st = get_stats(pac);
    PAC_CHECK(pac->n_resync > 0 && pac->n_resync < n_extra);
    PAC_CHECK_EQ(st.flows, n_extra + 1);
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(pac_next_wakeup(pac), now);

    /* An incast now: the seventh request is held, which abandons the
     * walk. */
    incast_request(pac, now, &in);
    PAC_CHECK(get_stats(pac).held > 0);
    before = pac->n_resync;
    run(pac, now);
    after = pac->n_resync;
    PAC_CHECK_EQ(after, before);
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK(pac_next_wakeup(pac) > now);

    done = incast_finish(pac, now + 20, &in);
    PAC_CHECK(done);
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(get_stats(pac).tracking_stops, 0);

    /* Then the walk runs again, to its end. */
    PAC_CHECK(run_until_untracked(pac, done + 1000, 400000)
              >= in.last_data + 100000);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.tracking_starts, 1);
    PAC_CHECK_EQ(st.tracking_stops, 1);
    PAC_CHECK_EQ(st.flows, n_extra + 1 + in.n);
    PAC_CHECK(all_resync(pac));
    PAC_CHECK_EQ(st.in_flight, 0);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (6) SYN-ACKs start tracking like requests; full-sized data from the VM
 * (a bulk upload, with or without TCP options, or TSO) and RSTs never
 * count. */
static void
test_watch_triggers(void)
{
    struct pac_config cfg;
    struct pac *pac;
    int i;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    for (i = 0; i < 300; i++) {
        struct pac_segment full = tx_seg(0, 1, MSS, ACK);
        struct pac_segment ts = tx_seg(1, 1, MSS - 12, ACK);
        struct pac_segment tso = tx_seg(2, 1, 40 * MSS, ACK);
        struct pac_segment rst = tx_seg(3 + i % 2, 1, 0, PAC_TCP_RST | ACK);
        struct pac_segment rst_data = tx_seg(5, 1, 100, PAC_TCP_RST | ACK);

        PAC_CHECK_EQ(dp_tx(pac, AT(i), &full), PAC_PASS);
        PAC_CHECK_EQ(dp_tx(pac, AT(i), &ts), PAC_PASS);
        PAC_CHECK_EQ(dp_tx(pac, AT(i), &tso), PAC_PASS);
        PAC_CHECK_EQ(dp_tx(pac, AT(i), &rst), PAC_PASS);
        PAC_CHECK_EQ(dp_tx(pac, AT(i), &rst_data), PAC_PASS);
    }
    PAC_CHECK(!pac_tracking(pac));

    /* None of them counted: the fourth request starts tracking, as in a
     * fresh instance. */
    for (i = 0; i < N_BEFORE; i++) {
        dp_request(pac, AT(400), 10 + i, 1);
        PAC_CHECK(!pac_tracking(pac));
    }
    dp_request(pac, AT(400), 10 + i, 1);
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(fate[next_pkt - 1], F_PASSED);
    PAC_CHECK_EQ(get_stats(pac).fast_tx_packets, 5 * 300 + N_BEFORE);
    end_pac();
    PAC_CHECK(all_back_once());

    /* The VM answering connections: a burst of its SYN-ACKs. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    for (i = 0; i <= N_BEFORE; i++) {
        struct pac_segment s = tx_seg(i, 1001, 0, PAC_TCP_SYN | ACK);

        s.mss = MSS;
        PAC_CHECK(!pac_tracking(pac));
        PAC_CHECK_EQ(dp_tx(pac, AT(i), &s), PAC_PASS);
    }
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(fate[N_BEFORE], F_PASSED);
    PAC_CHECK_EQ(get_stats(pac).handshake_triggers, 1);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (7) A connection first seen mid-stream once tracking has started (its
 * data came untracked; PAC first sees the VM's pure ACKs of data it never
 * saw) is tracked from its next segments, and nothing is lost: every held
 * packet comes back exactly once. */
static void
test_watch_midstream(void)
{
    struct incast in = { .first = 0, .n = 8 };
    const int mid = 50;
    struct pac_flow_info info;
    struct pac_config cfg;
    uint32_t seq = 1;
    uint64_t now;
    struct pac *pac;
    bool more;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();

    /* A long answer under way, untracked. */
    for (int i = 0; i < 20; i++) {
        struct pac_segment d = rx_seg(mid, seq, MSS, ACK, PAC_ECN_ECT0);
        struct pac_segment a;

        dp_rx(pac, AT(i), &d);
        seq += MSS;
        a = tx_seg(mid, seq, 0, ACK);
        dp_tx(pac, AT(i), &a);
    }
    PAC_CHECK(!pac_tracking(pac));

    /* An incast starts tracking; the VM acknowledges more of the long
     * answer (which PAC never saw) before any of it shows again. */
    incast_request(pac, AT(100), &in);
    PAC_CHECK(pac_tracking(pac));
    for (int i = 0; i < 3; i++) {
        struct pac_segment a = tx_seg(mid, seq + (i + 1) * MSS, 0, ACK);

        dp_tx(pac, AT(101), &a);
    }
    seq += 3 * MSS;
    PAC_CHECK(get_flow(pac, mid, &info));

    /* Both go on together. */
    now = AT(120);
    do {
        struct pac_segment d = rx_seg(mid, seq, MSS, ACK, PAC_ECN_ECT0);
        struct pac_segment a;

        more = incast_step(pac, now, &in);
        if (seq < 200 * MSS) {
            dp_rx(pac, now, &d);
            seq += MSS;
            a = tx_seg(mid, seq, 0, ACK);
            dp_tx(pac, now, &a);
            more = true;
        }
        now += 20;
    } while (more && now < AT(1000000));
    PAC_CHECK(!more);
    PAC_CHECK(get_stats(pac).tx_held > 0);
    GET_FLOW(pac, mid, &info);
    PAC_CHECK(info.rx_bytes > 0);
    run(pac, now + 50000);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (7b) A connection whose request passed untracked is first seen, once
 * tracking has started, by its answer's data: the receiver's first ACK
 * counts the segments it acknowledges and the window's growth (a delayed
 * ACK of two segments: four), not one segment as a duplicate ACK. */
static void
test_watch_midstream_ack(void)
{
    struct pac_segment d, a;
    struct pac_config cfg;
    uint64_t before;
    struct pac *pac;

    watch_config(&cfg);
    cfg.base_rtt_us = 10000000;     /* No control interval ends. */
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    for (int i = 0; i <= N_BEFORE; i++) {
        dp_request(pac, AT(0), i, 1);
    }
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(fate[0], F_FAST);
    CHECK_IN_FLIGHT(pac, (N_BEFORE + 1) * IW);

    d = rx_seg(0, 1, MSS, ACK, PAC_ECN_ECT0);
    dp_rx(pac, AT(100), &d);
    d = rx_seg(0, 1 + MSS, MSS, ACK, PAC_ECN_ECT0);
    dp_rx(pac, AT(112), &d);
    before = in_flight(pac);
    PAC_CHECK_EQ(before, (N_BEFORE + 1) * IW - 2 * MSS);
    a = tx_seg(0, 1 + 2 * MSS, 0, ACK);
    PAC_CHECK_EQ(dp_tx(pac, AT(112), &a), PAC_PASS);
    CHECK_IN_FLIGHT(pac, before + 4 * MSS);
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (3b) Tracking starts afresh after a long untracked spell: the in-flight
 * estimate of the requests that passed untracked survives the first
 * control intervals, and the loss cap has grown back for the spell as it
 * grows while PAC tracks. */
static void
test_watch_restart(void)
{
    struct pac_config cfg;
    uint64_t stop, t, resets;
    uint32_t seq = 1;
    struct pac *pac;
    int i;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    PAC_CHECK_EQ(get_stats(pac).control_interval_us, 100);

    /* Tracking, with losses upstream (data past holes), interval after
     * interval: the loss cap takes the threshold down to its floor. */
    for (i = 0; i <= N_BEFORE; i++) {
        dp_request(pac, AT(0), i, 1);
    }
    PAC_CHECK(pac_tracking(pac));
    for (i = 0; i < 8; i++) {
        struct pac_segment d = rx_seg(N_BEFORE, seq, MSS, ACK, PAC_ECN_ECT0);

        dp_rx(pac, AT(100 + i * 200), &d);
        seq += 2 * MSS;
        run(pac, AT(200 + i * 200));
    }
    PAC_CHECK(get_stats(pac).rx_holes > 0);
    PAC_CHECK_EQ(get_stats(pac).threshold, 96000 * 775 / 1000);
    stop = run_until_untracked(pac, AT(2000), 400000);
    PAC_CHECK(stop);

    /* Thirty seconds later, without a pac_run() in between (only the
     * flows' idle expiry to do): a burst. */
    PAC_CHECK(pac_next_wakeup(pac) <= stop + 1000000);
    resets = get_stats(pac).silence_resets;
    t = stop + 30000000;
    for (i = 0; i <= N_BEFORE; i++) {
        dp_request(pac, t, 10 + i, 1);
    }
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(in_flight(pac), (N_BEFORE + 1) * IW);
    PAC_CHECK_EQ(get_stats(pac).threshold, 96000);
    for (i = 1; i <= 5; i++) {
        run(pac, t + i * 100);
        PAC_CHECK_EQ(in_flight(pac), (N_BEFORE + 1) * IW);
        PAC_CHECK_EQ(get_stats(pac).silence_resets, resets);
    }
    end_pac();
    PAC_CHECK(all_back_once());
}

/* (8) Triggers further apart than the horizon (5 ms) never add up, however
 * many; closer ones do. */
static void
test_watch_horizon(void)
{
    struct pac_config cfg;
    struct pac *pac;
    int i;

    watch_config(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    dp_reset();
    for (i = 0; i < 50; i++) {
        dp_request(pac, AT(i * 5001), i, 1);
        PAC_CHECK(!pac_tracking(pac));
    }
    for (i = 0; i < N_BEFORE; i++) {
        dp_request(pac, AT(300000 + i * 4000), 100 + i, 1);
        PAC_CHECK(!pac_tracking(pac));
    }
    dp_request(pac, AT(300000 + i * 4000), 100 + i, 1);
    PAC_CHECK(pac_tracking(pac));
    PAC_CHECK_EQ(get_stats(pac).tracking_starts, 1);
    end_pac();
    PAC_CHECK(all_back_once());
}

int
main(void)
{
    PAC_RUN_TEST(test_watch_off);
    PAC_RUN_TEST(test_watch_bulk);
    PAC_RUN_TEST(test_watch_exchange);
    PAC_RUN_TEST(test_watch_small_answers);
    PAC_RUN_TEST(test_watch_slow_start);
    PAC_RUN_TEST(test_watch_burst);
    PAC_RUN_TEST(test_watch_unattributed);
    PAC_RUN_TEST(test_watch_restart);
    PAC_RUN_TEST(test_watch_stop);
    PAC_RUN_TEST(test_watch_light_stop);
    PAC_RUN_TEST(test_watch_clamp);
    PAC_RUN_TEST(test_watch_syn);
    PAC_RUN_TEST(test_watch_stop_abandoned);
    PAC_RUN_TEST(test_watch_triggers);
    PAC_RUN_TEST(test_watch_midstream);
    PAC_RUN_TEST(test_watch_midstream_ack);
    PAC_RUN_TEST(test_watch_horizon);
    drop_pac();
    PAC_TEST_MAIN_END;
}
