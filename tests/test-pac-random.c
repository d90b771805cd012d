/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Randomised property test of libpac.
 *
 * A seeded PRNG drives a few thousand random pac_rx(), pac_tx(), pac_run()
 * and occasional pac_flush() calls across 20 flows (IPv4 and IPv6), with
 * random TCP flags (SYN, FIN, RST, ECE), ACK numbers (new, duplicate, old,
 * garbage), payloads, ECN marks and time steps, a small held-packet cap and
 * a small flow table.  After every call it checks:
 *
 *   - every packet given to pac_tx() is accounted exactly once: passed at
 *     once, or held and later emitted once (never emitted while it is not
 *     held, in particular not during its own pac_tx() call);
 *   - per flow, packets leave in the order of their pac_tx() calls: a
 *     released packet is its flow's oldest held one, and a passed packet's
 *     flow has nothing held; only pure ACKs are dropped as stale, and only
 *     when a newer held pure ACK of the flow (higher ACK number) stays;
 *   - stats.held equals the number of packets held, held_per_level sums to
 *     it, pac_dump_flows() reports the same per-flow counts, and the counters
 *     add up (tx_passed + tx_held, releases + stale drops = emits);
 *   - after pac_run(), no flow's oldest held packet has been its oldest for
 *     max_hold or longer (the hold bound limits how long a flow waits for
 *     its next packet to leave; with a per-packet bound this holds too);
 *   - the algorithm's admission rule (tests/pac-test-fit.h): a segment that
 *     leaves in its turn, released as PAC_REL_FIT or passed at once, never
 *     takes in_flight above what the threshold admits unless in_flight was
 *     0, and in_flight rises only when a segment leaves;
 *
 * and at the end that pac_destroy() returns every packet still held.  A
 * libpac whose fits() admits every trigger fails the admission check (in
 * each of the three configurations). */

#include "pac.h"

#include "pac-test-seg.h"
#include "pac-test-fit.h"

#define MAX(A, B) ((A) > (B) ? (A) : (B))

#define N_TEST_FLOWS 20
#define MAX_STEPS 4000
#define MAX_TX N_PKTS

enum pkt_state {
    PS_NEW,                     /* In the pac_tx() call. */
    PS_PASSED,
    PS_HELD,
    PS_RELEASED,
    PS_DROPPED,
};

struct sim_pkt {
    int flow;                   /* Test flow index, 0 .. N_TEST_FLOWS - 1. */
    uint8_t flags;
    uint32_t len;
    uint32_t ack;
    enum pkt_state state;
};

struct sim {
    struct pac *pac;
    struct pac_config cfg;
    uint64_t rng;
    uint64_t now;
    int step;

    struct sim_pkt pkts[MAX_TX];
    int n_tx;

    /* Held packets of each flow, oldest first, and since when the oldest
     * has been the oldest. */
    int held[N_TEST_FLOWS][64];
    int n_held[N_TEST_FLOWS];
    uint64_t head_since[N_TEST_FLOWS];
    int total_held;
    /* The ACK numbers of the pure ACKs of each flow held since the flow
     * last held nothing: what a stale ACK drop may be superseded by
     * (libpac drops a superseded ACK when it reaches its flow's head, after
     * the newer one may have left).  All of them, not the highest: ACK
     * numbers more than 2^31 apart are not ordered.  A pure ACK without the
     * ACK flag, which libpac gives the flow's last ACK number (unknown
     * here), or more than the array holds, may supersede any. */
    uint32_t held_pure_acks[N_TEST_FLOWS][128];
    int n_held_pure[N_TEST_FLOWS];
    bool held_pure_any[N_TEST_FLOWS];
    uint64_t n_dropped[N_TEST_FLOWS];  /* Stale drops, ever. */
    int tx_flow;                /* Flow of the pac_tx() call in progress,
                                 * or -1. */
    uint64_t n_emitted;
    uint64_t n_passed;
    uint64_t n_held_ever;

    /* A plausible TCP state per flow (but segments are often garbage). */
    uint32_t peer_seq[N_TEST_FLOWS];
    uint32_t vm_ack[N_TEST_FLOWS];

    struct fit_watch fit;       /* The admission rule. */
    char err[512];              /* First violation, or "". */
};

static struct sim sim;

/* Test flow 'i' as a pac-test-seg.h flow: 14 IPv4 flows and 6 IPv6 flows
 * (on the ports of IPv4 flows 0-5). */
static int
seg_flow(int i)
{
    return i < 14 ? i : FLOW_V6 + (i - 14);
}

static int
test_flow_of(const struct pac_flow_info *info)
{
    bool v6 = info->peer_addr[0] == 0x20;
    int port = info->peer_port - PEER_PORT_BASE;

    return v6 ? 14 + port : port;
}

static uint64_t
rnd(void)
{
    /* xorshift64*. */
    sim.rng ^= sim.rng >> 12;
    sim.rng ^= sim.rng << 25;
    sim.rng ^= sim.rng >> 27;
    return sim.rng * UINT64_C(2685821657736338717);
}

static uint32_t
rnd_below(uint32_t n)
{
    return (uint32_t) (rnd() >> 33) % n;
}

static bool
chance(int percent)
{
    return rnd_below(100) < (uint32_t) percent;
}

static void
fail(const char *what, int pkt)
{
    if (!sim.err[0]) {
        snprintf(sim.err, sizeof sim.err,
                 "step %d, t=+%"PRIu64" us: %s (packet %d, flow %d)",
                 sim.step, sim.now - T0, what, pkt,
                 pkt >= 0 && pkt < sim.n_tx ? sim.pkts[pkt].flow : -1);
    }
}

static bool
seq_gt(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) > 0;
}

static bool
is_pure(const struct sim_pkt *p)
{
    return (!p->len && (p->flags & ACK)
            && !(p->flags & (PAC_TCP_SYN | PAC_TCP_FIN | PAC_TCP_RST)));
}

static void
held_pure_reset(int flow)
{
    sim.n_held_pure[flow] = 0;
    sim.held_pure_any[flow] = false;
}

static void
held_remove(int flow, int pos)
{
    memmove(&sim.held[flow][pos], &sim.held[flow][pos + 1],
            (sim.n_held[flow] - pos - 1) * sizeof sim.held[flow][0]);
    sim.n_held[flow]--;
    sim.total_held--;
    if (!sim.n_held[flow] && flow != sim.tx_flow) {
        /* (During pac_tx(), libpac holds its segment too.) */
        held_pure_reset(flow);
    }
    if (!pos) {
        sim.head_since[flow] = sim.now;
    }
}

/* Packet 'p' of flow 'flow' is held: if it is a pure ACK, one that may
 * supersede a stale ACK the flow holds until it holds nothing.  libpac
 * takes a segment with no ACK flag, no payload and no SYN, FIN or RST for
 * a pure ACK too, with the flow's last ACK number, which the test does not
 * know: such a one may supersede any. */
static void
note_held_pure(int flow, const struct sim_pkt *p)
{
    if (p->len || (p->flags & (PAC_TCP_SYN | PAC_TCP_FIN | PAC_TCP_RST))) {
        return;
    }
    if (!(p->flags & ACK) || sim.n_held_pure[flow] >= 128) {
        sim.held_pure_any[flow] = true;
    } else {
        sim.held_pure_acks[flow][sim.n_held_pure[flow]++] = p->ack;
    }
}

static void
sim_emit(void *aux, void *pkt_, enum pac_emit emit)
{
    int pkt = pkt_index(pkt_);
    struct sim_pkt *p;
    int flow, pos;

    (void) aux;
    sim.n_emitted++;
    if (pkt < 0 || pkt >= sim.n_tx) {
        fail("emitted a packet never given to pac_tx()", pkt);
        return;
    }
    p = &sim.pkts[pkt];
    if (p->state == PS_NEW) {
        fail("emitted the packet of the pac_tx() call in progress", pkt);
        return;
    }
    if (p->state != PS_HELD) {
        fail("emitted a packet that is not held", pkt);
        return;
    }
    flow = p->flow;
    for (pos = 0; pos < sim.n_held[flow]; pos++) {
        if (sim.held[flow][pos] == pkt) {
            break;
        }
    }
    if (pos == sim.n_held[flow]) {
        fail("test bookkeeping lost a held packet", pkt);
        return;
    }
    if (emit == PAC_EMIT_DROP_STALE) {
        bool superseded = false;

        if (!is_pure(p)) {
            fail("dropped a segment that is not a pure ACK", pkt);
        }
        for (int i = 0; i < sim.n_held[flow]; i++) {
            const struct sim_pkt *q = &sim.pkts[sim.held[flow][i]];

            superseded |= is_pure(q) && seq_gt(q->ack, p->ack);
        }
        superseded |= sim.held_pure_any[flow];
        for (int i = 0; i < sim.n_held_pure[flow]; i++) {
            superseded |= seq_gt(sim.held_pure_acks[flow][i], p->ack);
        }
        if (!superseded) {
            fail("dropped a pure ACK that no ACK held with it supersedes",
                 pkt);
        }
        if (pos != 0) {
            fail("dropped ahead of an older held packet of its flow", pkt);
        }
        p->state = PS_DROPPED;
        sim.n_dropped[flow]++;
    } else if (emit == PAC_EMIT_RELEASE) {
        if (pos != 0) {
            fail("released ahead of an older held packet of its flow", pkt);
        }
        p->state = PS_RELEASED;
    } else {
        fail("unknown pac_emit value", pkt);
    }
    held_remove(flow, pos);
    if (sim.pac) {
        fit_watch_emit(&sim.fit, sim.pac);
    }
}

/* The admission rule, when a call returns (see tests/pac-test-fit.h). */
static void
check_fit(bool own_in_turn, bool own_left)
{
    fit_watch_end(&sim.fit, sim.pac, own_in_turn, own_left);
    if (sim.fit.err[0]) {
        fail(sim.fit.err, -1);
    }
}

static void
count_held_cb(void *aux, const struct pac_flow_info *info)
{
    int *per_flow = aux;
    int f = test_flow_of(info);

    if (f >= 0 && f < N_TEST_FLOWS) {
        per_flow[f] += info->held;
    } else {
        per_flow[N_TEST_FLOWS]++;       /* Unknown flow. */
    }
}

/* Checks the invariants after a call; 'after_run' adds the max_hold one. */
static void
check_invariants(bool after_run)
{
    int per_flow[N_TEST_FLOWS + 1];
    uint64_t released = 0;
    struct pac_stats st;
    uint32_t sum = 0;
    size_t n;

    if (sim.err[0]) {
        return;
    }
    pac_get_stats(sim.pac, &st);
    if (st.held != (uint32_t) sim.total_held) {
        fail("stats.held differs from the packets held", -1);
        return;
    }
    for (int l = 0; l < PAC_MAX_LEVELS; l++) {
        sum += st.held_per_level[l];
        if (l >= (int) sim.cfg.n_levels && st.held_per_level[l]) {
            fail("packets held beyond the last level", -1);
        }
    }
    if (sum != st.held) {
        fail("held_per_level does not sum to held", -1);
    }
    if (st.held > sim.cfg.max_held || st.max_held_seen > sim.cfg.max_held) {
        fail("more packets held than max_held", -1);
    }
    if (st.tx_packets != (uint64_t) sim.n_tx
        || st.tx_passed + st.tx_held != st.tx_packets
        || st.tx_passed != sim.n_passed || st.tx_held != sim.n_held_ever) {
        fail("tx counters do not add up", -1);
    }
    for (int c = 0; c < PAC_N_REL_CAUSES; c++) {
        released += st.released[c];
    }
    if (released + st.stale_drops != sim.n_emitted) {
        fail("release counters do not match the emits", -1);
    }

    memset(per_flow, 0, sizeof per_flow);
    n = pac_dump_flows(sim.pac, count_held_cb, per_flow);
    if (n != st.flows || n > sim.cfg.max_flows) {
        fail("pac_dump_flows() count differs from stats.flows", -1);
    }
    if (per_flow[N_TEST_FLOWS]) {
        fail("pac_dump_flows() reports an unknown flow", -1);
    }
    for (int f = 0; f < N_TEST_FLOWS; f++) {
        if (per_flow[f] != sim.n_held[f]) {
            fail("a flow's held count differs from pac_dump_flows()", -1);
        }
    }

    if (after_run) {
        uint64_t bound = MAX(sim.cfg.max_hold_us,
                             sim.cfg.max_hold_trigger_us);

        for (int f = 0; f < N_TEST_FLOWS; f++) {
            const struct sim_pkt *head;

            if (!sim.n_held[f]) {
                continue;
            }
            /* A head with payload or SYN may be a window trigger, which
             * waits past its bound until it fits. */
            head = &sim.pkts[sim.held[f][0]];
            if (!head->len && !(head->flags & PAC_TCP_SYN)
                && sim.now - sim.head_since[f] >= bound) {
                fail("a flow waited max_hold after pac_run()",
                     sim.held[f][0]);
            }
        }
    }
}

static void
do_rx(void)
{
    int f = rnd_below(N_TEST_FLOWS);
    uint8_t flags = ACK;
    uint32_t len = chance(30) ? 0 : 1 + rnd_below(2920);
    uint32_t seq = sim.peer_seq[f];
    struct pac_segment s;

    if (chance(3)) {
        flags = PAC_TCP_SYN | (chance(50) ? ACK : 0);
        len = 0;
    } else if (chance(3)) {
        flags |= PAC_TCP_FIN;
    } else if (chance(1)) {
        flags = PAC_TCP_RST | (chance(50) ? ACK : 0);
    }
    if (chance(5)) {
        seq -= rnd_below(10000);        /* A retransmission. */
    } else {
        sim.peer_seq[f] += len;
    }
    s = rx_seg(seg_flow(f), seq, len, flags,
               chance(10) ? PAC_ECN_CE : PAC_ECN_ECT0);
    if (flags & PAC_TCP_SYN) {
        s.mss = chance(50) ? 0 : 536 + rnd_below(9000);
    }
    pac_rx(sim.pac, &s, sim.now, sim_emit, NULL);
    check_fit(false, false);
}

static void
do_tx(void)
{
    int f = rnd_below(N_TEST_FLOWS);
    uint8_t flags = ACK;
    uint32_t len = chance(70) ? 0 : 1 + rnd_below(1460);
    uint32_t ack;
    struct pac_segment s;
    enum pac_verdict v;
    int pkt = sim.n_tx;
    int r = rnd_below(100);
    bool held_before = sim.n_held[f] > 0;
    /* Stale drops during the call may leave the flow holding nothing
     * before libpac decides on the segment. */
    uint64_t dropped = sim.n_dropped[f];

    if (pkt >= MAX_TX) {
        return;
    }
    if (r < 55) {
        ack = sim.peer_seq[f] - (chance(50) ? 0 : rnd_below(3000));
    } else if (r < 80) {
        ack = sim.vm_ack[f];                    /* Duplicate. */
    } else if (r < 92) {
        ack = sim.vm_ack[f] - rnd_below(5000);  /* Old. */
    } else {
        ack = (uint32_t) rnd();                 /* Garbage. */
    }
    if (seq_gt(ack, sim.vm_ack[f])) {
        sim.vm_ack[f] = ack;
    }
    if (chance(2)) {
        flags = PAC_TCP_SYN;
        len = 0;
    } else if (chance(3)) {
        flags = PAC_TCP_SYN | ACK;
        len = 0;
    } else if (chance(3)) {
        flags |= PAC_TCP_FIN;
    } else if (chance(1)) {
        flags = PAC_TCP_RST | (chance(50) ? ACK : 0);
    }
    if (chance(10)) {
        flags |= PAC_TCP_ECE;
    }

    s = tx_seg(seg_flow(f), ack, len, flags);
    if (flags & PAC_TCP_SYN) {
        s.mss = chance(50) ? 0 : 536 + rnd_below(9000);
    }
    sim.pkts[pkt].flow = f;
    sim.pkts[pkt].flags = flags;
    sim.pkts[pkt].len = len;
    sim.pkts[pkt].ack = ack;
    sim.pkts[pkt].state = PS_NEW;
    sim.n_tx++;

    sim.tx_flow = f;
    v = pac_tx(sim.pac, &s, P(pkt), sim.now, sim_emit, NULL);
    sim.tx_flow = -1;
    if (v == PAC_PASS && !sim.n_held[f]) {
        held_pure_reset(f);
    }
    /* A duplicate ACK passes at once whatever in_flight is: a segment that
     * libpac may take for one (no payload, SYN, FIN or RST) of a flow that
     * held nothing is not claimed to have left in its turn. */
    check_fit(v == PAC_PASS
              && (len || (flags & (PAC_TCP_SYN | PAC_TCP_FIN | PAC_TCP_RST))
                  || (held_before && sim.n_dropped[f] == dropped)),
              v == PAC_PASS);
    if (sim.pkts[pkt].state != PS_NEW) {
        return;                 /* Reported by sim_emit(). */
    }
    if (v == PAC_PASS) {
        sim.pkts[pkt].state = PS_PASSED;
        sim.n_passed++;
        if (sim.n_held[f]) {
            fail("passed ahead of held packets of its flow", pkt);
        }
    } else if (v == PAC_HELD) {
        if (sim.n_held[f] >= 64) {
            fail("test limit: too many packets held in one flow", pkt);
            return;
        }
        sim.pkts[pkt].state = PS_HELD;
        if (!sim.n_held[f]) {
            sim.head_since[f] = sim.now;
        }
        note_held_pure(f, &sim.pkts[pkt]);
        sim.held[f][sim.n_held[f]++] = pkt;
        sim.total_held++;
        sim.n_held_ever++;
    } else {
        fail("unknown verdict", pkt);
    }
}

static void
advance_time(void)
{
    int r = rnd_below(1000);

    if (r < 10) {
        sim.now += rnd_below(1500000);  /* Idle flows expire. */
    } else if (r < 300) {
        sim.now += 0;
    } else {
        sim.now += rnd_below(sim.cfg.max_hold_us / 4 + 1);
    }
}

/* Runs 'steps' random calls with 'seed'.  Returns false and fills
 * 'sim.err' on the first violation. */
static bool
sim_run(const struct pac_config *cfg, uint64_t seed, int steps)
{
    memset(&sim, 0, sizeof sim);
    sim.cfg = *cfg;
    sim.rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
    sim.tx_flow = -1;
    sim.now = T0;
    for (int f = 0; f < N_TEST_FLOWS; f++) {
        sim.peer_seq[f] = sim.vm_ack[f] = (uint32_t) rnd();
    }
    sim.pac = pac_create(cfg, sim.now);
    if (!sim.pac) {
        snprintf(sim.err, sizeof sim.err, "pac_create() failed");
        return false;
    }
    fit_watch_init(&sim.fit, sim.pac, cfg->default_mss);

    for (sim.step = 0; sim.step < steps && !sim.err[0]; sim.step++) {
        int r = rnd_below(100);

        advance_time();
        if (r < 38) {
            do_rx();
            check_invariants(false);
        } else if (r < 85) {
            do_tx();
            check_invariants(false);
        } else if (r < 99) {
            pac_run(sim.pac, sim.now, sim_emit, NULL);
            check_fit(false, false);
            check_invariants(true);
        } else {
            pac_flush(sim.pac, sim_emit, NULL);
            check_fit(false, false);
            if (sim.total_held) {
                fail("pac_flush() left packets held", -1);
            }
            check_invariants(false);
        }
    }

    {
        struct pac *pac = sim.pac;

        sim.pac = NULL;         /* sim_emit() must not look at it. */
        pac_destroy(pac, sim_emit, NULL);
    }
    if (!sim.err[0] && sim.total_held) {
        fail("pac_destroy() did not release every held packet", -1);
    }
    for (int i = 0; i < sim.n_tx && !sim.err[0]; i++) {
        enum pkt_state st = sim.pkts[i].state;

        if (st != PS_PASSED && st != PS_RELEASED && st != PS_DROPPED) {
            fail("a packet was never accounted for", i);
        }
    }
    return !sim.err[0];
}

static void
random_config(struct pac_config *cfg)
{
    pac_config_init(cfg);
    cfg->fast_path = false;     /* The tracked algorithm. */
    cfg->threshold = 20000;
    cfg->n_levels = 3;
    cfg->level_bytes[0] = 5000;
    cfg->level_bytes[1] = 30000;
    cfg->max_hold_us = 3000;
    cfg->max_hold_trigger_us = 3000;
    cfg->max_flows = 12;
    cfg->max_held = 16;
    cfg->idle_timeout_ms = 1000;
    cfg->init_window_segs = 4;
    cfg->base_rtt_us = 300;
}

static void
run_seeds(const struct pac_config *cfg, int n_seeds, const char *name)
{
    uint64_t n_tx = 0, n_held = 0, n_dropped = 0;

    for (int seed = 1; seed <= n_seeds; seed++) {
        if (!sim_run(cfg, seed, MAX_STEPS)) {
            fprintf(stderr, "%s, seed %d: %s\n", name, seed, sim.err);
            pac_test_cur_failed = 1;
            return;
        }
        n_tx += sim.n_tx;
        n_held += sim.n_held_ever;
        for (int i = 0; i < sim.n_tx; i++) {
            n_dropped += sim.pkts[i].state == PS_DROPPED;
        }
    }
    printf("%s: %d seeds, %"PRIu64" tx packets, %"PRIu64" held, "
           "%"PRIu64" stale drops\n", name, n_seeds, n_tx, n_held,
           n_dropped);
}

static void
test_random_default(void)
{
    struct pac_config cfg;

    random_config(&cfg);
    run_seeds(&cfg, 40, "small table");
}

/* A cap of 4 held packets and 4 flows: the cap and "untracked" paths. */
static void
test_random_tight(void)
{
    struct pac_config cfg;

    random_config(&cfg);
    cfg.max_held = 4;
    cfg.max_flows = 4;
    cfg.threshold = 3000;
    run_seeds(&cfg, 40, "tight");
}

/* One level, ECN off, larger table and cap, longer trigger hold. */
static void
test_random_one_level(void)
{
    struct pac_config cfg;

    random_config(&cfg);
    cfg.n_levels = 1;
    cfg.ecn = false;
    cfg.max_flows = 64;
    cfg.max_held = 64;
    cfg.max_hold_trigger_us = 20000;
    run_seeds(&cfg, 40, "one level");
}

int
main(void)
{
    PAC_RUN_TEST(test_random_default);
    PAC_RUN_TEST(test_random_tight);
    PAC_RUN_TEST(test_random_one_level);
    PAC_TEST_MAIN_END;
}
