/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* libFuzzer target for libpac's state: pac_rx(), pac_tx(), pac_run() and
 * the calls around them, driven by the fuzz input.
 *
 * The input is read as a program.  Its first bytes choose a configuration
 * from the knob table (lib/pac-knobs.c): each knob at its default, its
 * minimum, its maximum or a value in between (flow table and held-packet
 * cap kept small, so that inputs stay fast and the caps are reached), the
 * MLFQ levels and the hash seed; a few inputs first try the same
 * configuration with one value broken, which pac_config_check() and
 * pac_create() must refuse.  The rest is a sequence of operations on a
 * handful of connections (IPv4 and IPv6, so that state is reused):
 * segments toward the receiver (data in order, retransmitted or past a
 * hole, SYN, SYN-ACK, FIN, RST, CE marks, MSS and window-scale options)
 * through pac_rx(); segments from it (ACKs of all, part, none or more than
 * was received, duplicate and old ACKs, garbage, requests, SYN, SYN-ACK,
 * FIN, RST, ECE, any window) through pac_tx(); pac_run(); time steps from
 * none to tens of minutes, forward and backward; bursts (pac_batch_begin()
 * and pac_batch_end(), with pac_prefetch()); pac_flush(); segments the
 * parser could not read (pac_tx_unparsed()).  Segments are
 * what the parser can produce (tests/fuzz-parse.c checks that side).  With
 * the fast path (cfg.fast_path, drawn like every knob), the driver acts as
 * the datapath does: while pac_tracking() says no, a segment goes to
 * pac_watch_rx() or pac_watch_tx() instead, and passes, unless
 * pac_watch_tx() says to hand it to pac_tx().
 *
 * After every call it checks:
 *
 *   - every packet given to pac_tx() comes back exactly once: passed, or
 *     held and later emitted once, never during its own pac_tx() call and
 *     never while not held; pac_flush() leaves nothing held,
 *     pac_tx_unparsed() nothing of its connection (nothing at all without
 *     ports), and pac_destroy() returns the rest;
 *   - per connection, segments leave in the order of their pac_tx() calls:
 *     a released packet is its connection's oldest held one, a passed one's
 *     connection holds nothing (bursts included), and only a pure ACK
 *     superseded by a newer held pure ACK is dropped as stale;
 *   - a copy (request_copy_us, pac_set_copy_cb()) is of a held packet
 *     with payload, at most once, and only when it fits, like a release in
 *     turn; at its connection's head with its own timestamp, behind it
 *     with the head's; its ACK number one that the connection's segments
 *     carried or where one that arrived on it started or ended, or one
 *     below such a number (an old ACK);
 *   - held packets within max_held (libpac caps them by count only: there
 *     is no byte cap to check), the per-level and per-flow counts
 *     (pac_dump_flows()) equal to the packets held, the flow table within
 *     max_flows, the counters adding up;
 *   - the pool of accepted connections' windows (lib/pac-handshake.c)
 *     counts the flows marked in it, each quiet and owing bytes;
 *   - in_flight never exceeds what the flows account for: the sum over the
 *     flow table of each flow's outstanding budget plus the unattributed
 *     part (read from lib/pac-private.h, as the unit tests do);
 *   - fits() (tests/pac-test-fit.h): a segment that left in its turn did
 *     not take in_flight beyond the threshold, and in_flight rises only
 *     when a segment leaves;
 *   - a lowered window is never larger than the one the receiver sent;
 *   - the window triggers that the copies' foresight walk has looked at
 *     are the first of their age FIFO, as many as it counts;
 *   - while PAC does not track connections (the fast path): nothing is
 *     held, nothing is in flight, and every flow in the table is marked
 *     PAC_F_RESYNC with no sequence state (no base, budget, answer, edge,
 *     verdict; not busy, not on the outstanding list): its next tracked
 *     segment picks it up afresh; without the fast path PAC always tracks,
 *     no flow is ever so marked, and the fast path's counters stay 0;
 *   - after pac_run() at the latest time: no connection's oldest held ACK
 *     has been its oldest for max_hold_us, and pac_next_wakeup() is in the
 *     future, at the latest after two more pac_run() calls at its word
 *     (no busy loop).
 *
 * A violation prints the operation and calls abort().  Built with
 * -fsanitize=fuzzer,address,undefined by tests/run-fuzz.sh.  Built with
 * -DPAC_FUZZ_STANDALONE, it is a plain program that runs the files named on
 * its command line (to replay a reproducer without libFuzzer); -v as the
 * first argument prints every operation. */

#include "pac-private.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pac-test-fit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Connections: 0 .. N_V4 - 1 over IPv4, the rest over IPv6. */
#define N_CONNS 8
#define N_V4 6
#define VM_PORT 80
#define PEER_PORT_BASE 40000

/* Most operations and pac_tx() packets per input. */
#define MAX_OPS 3000
#define MAX_PKTS 4096

/* Bounds of the configurations tried: small tables keep an input fast and
 * reach the caps. */
#define FUZZ_MAX_FLOWS 12
#define FUZZ_MAX_HELD 48

/* Held packets one connection may have in the model (above max_held, so
 * that holding too many shows as a violation, not an overflow). */
#define MAX_CONN_HELD (FUZZ_MAX_HELD + 1)

/* Time steps are at most this long: per-flow and per-packet times are
 * 32-bit microseconds, which libpac compares as differences, so it
 * documents nothing beyond half their range (35 minutes; the idle timeout
 * is at most 30). */
#define MAX_STEP_US (UINT64_C(40) * 60 * 1000000)
#define MAX_AGE_US (UINT64_C(1) << 31)

enum pkt_state {
    PS_NEW,                     /* In its pac_tx() call. */
    PS_PASSED,
    PS_HELD,
    PS_RELEASED,
    PS_DROPPED,
};

struct fz_pkt {
    int conn;
    uint8_t flags;
    uint32_t len;
    uint32_t ack;
    enum pkt_state state;
    bool copied;                /* A zero-window copy of it went. */
};

/* What the fuzzer knows of one connection. */
struct fz_conn {
    uint32_t peer_seq;          /* Next byte the peer sends. */
    uint32_t vm_seq;            /* Next byte the receiver sends. */
    uint32_t vm_ack;            /* Highest ACK number the receiver sent. */
    int held[MAX_CONN_HELD];    /* Held packets, oldest first. */
    int n_held;
    uint64_t head_since;        /* When the oldest became the oldest. */
    /* The pure ACKs held since the connection last held nothing (the
     * first MAX_CONN_HELD of them; 'held_pure_more' if there were more): a
     * stale ACK drop may be superseded by any of them (libpac drops a
     * superseded ACK when it reaches the head, after the newer one may
     * have left, and ACK numbers more than 2^31 apart are not ordered, so
     * no one of them is the highest). */
    int held_pure[MAX_CONN_HELD];
    int n_held_pure;
    bool held_pure_more;
    uint64_t n_dropped;         /* Stale drops, ever. */
};

struct fz {
    const uint8_t *in;          /* Input not yet read. */
    size_t in_left;
    bool verbose;

    struct pac *pac;
    struct pac_config cfg;
    uint64_t now;               /* Time of the next call. */
    uint64_t latest;            /* Latest time given to libpac. */
    bool in_batch;
    int op;
    const char *call;           /* The call in progress. */

    struct fz_pkt pkts[MAX_PKTS];
    int n_pkts;

    /* The sequence numbers where the segments given to pac_rx() start and
     * end, with their connections: libpac's record of what arrived
     * (rcv_nxt) is one of them. */
    struct {
        int conn;
        uint32_t seq;
    } rx_seqs[2 * MAX_OPS];
    int n_rx_seqs;
    struct fz_conn conns[N_CONNS];
    int total_held;
    uint64_t n_emitted;
    uint64_t n_passed;
    uint64_t n_held_ever;
    uint64_t n_fast_tx;         /* Passed on the fast path (of n_passed). */
    int tx_pending;             /* 1 between a pac_watch_tx() that starts
                                 * tracking and the pac_tx() of its
                                 * segment. */
    uint64_t n_rx;              /* Segments toward the receiver. */
    uint64_t n_fast_rx;         /* Of those, given to pac_watch_rx(). */

    struct fz_conn *tx_conn;    /* Of the pac_tx() call in progress. */
    struct fit_watch fit;
};

static struct fz fz;

static void
report(const char *what, int pkt)
{
    fprintf(stderr, "fuzz-state: invariant violated: %s\n"
            "  operation %d (%s), time %"PRIu64" us (latest %"PRIu64"), "
            "packet %d, connection %d\n",
            what, fz.op, fz.call ? fz.call : "-", fz.now, fz.latest, pkt,
            pkt >= 0 && pkt < fz.n_pkts ? fz.pkts[pkt].conn : -1);
    abort();
}

#define FUZZ_ASSERT(COND, PKT)                                          \
    do {                                                                \
        if (!(COND)) {                                                  \
            report(#COND, PKT);                                         \
        }                                                               \
    } while (0)

/* Input. */

static uint8_t
in_u8(void)
{
    if (!fz.in_left) {
        return 0;
    }
    fz.in_left--;
    return *fz.in++;
}

static uint16_t
in_u16(void)
{
    uint16_t hi = in_u8();

    return hi << 8 | in_u8();
}

static uint32_t
in_u32(void)
{
    uint32_t hi = in_u16();

    return hi << 16 | in_u16();
}

/* A value in [lo, hi], from as few bytes as the range needs. */
static uint32_t
in_range(uint32_t lo, uint32_t hi)
{
    uint32_t span = hi - lo;
    uint32_t x = (span < 0x100 ? in_u8()
                  : span < 0x10000 ? in_u16() : in_u32());

    return span == UINT32_MAX ? x : lo + x % (span + 1);
}

/* Configuration. */

/* A value for 'knob' within its range. */
static uint32_t
pick_value(const struct pac_knob *knob)
{
    uint32_t lo = knob->min, hi = knob->max;

    if (!strcmp(knob->field, "max_flows")) {
        hi = FUZZ_MAX_FLOWS;
    } else if (!strcmp(knob->field, "max_held")) {
        hi = FUZZ_MAX_HELD;
    }
    switch (in_u8() % 8) {
    case 0:
        return knob->def >= lo && knob->def <= hi ? knob->def : lo;
    case 1:
        return lo;
    case 2:
        return hi;
    case 3:
    case 4:
        /* Near the bottom, where most of the behaviour is. */
        return lo + in_u8() % MIN(hi - lo + 1, 256);
    default:
        return in_range(lo, hi);
    }
}

static void
pick_levels(struct pac_config *cfg)
{
    uint32_t bytes = 0;

    cfg->n_levels = 1 + in_u8() % PAC_MAX_LEVELS;
    memset(cfg->level_bytes, 0, sizeof cfg->level_bytes);
    for (uint32_t i = 0; i + 1 < cfg->n_levels; i++) {
        uint32_t room = UINT32_MAX - bytes - (cfg->n_levels - 2 - i);
        uint32_t step = (in_u8() & 1 ? 1 + in_u16() * 4u
                         : 1 + in_u32() % 100000);

        bytes += MIN(step, room);
        cfg->level_bytes[i] = bytes;
    }
}

/* Fills 'cfg' from the input, within the accepted ranges. */
static void
pick_config(struct pac_config *cfg)
{
    pac_config_init(cfg);
    cfg->max_flows = MIN(cfg->max_flows, FUZZ_MAX_FLOWS);
    cfg->max_held = MIN(cfg->max_held, FUZZ_MAX_HELD);
    if (in_u8() & 1) {
        return;                 /* The defaults (with small tables). */
    }
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *knob = &pac_knobs[i];

        if (knob->type == PAC_KNOB_LEVELS) {
            pick_levels(cfg);
        } else if (knob->type == PAC_KNOB_BOOL) {
            pac_knob_set(cfg, knob, in_u8() & 1);
        } else {
            pac_knob_set(cfg, knob, pick_value(knob));
        }
    }
    if (in_u8() & 1) {
        cfg->hash_seed = (uint64_t) in_u32() << 32 | in_u32();
    }
}

/* Breaks one value of the valid 'cfg' and checks that libpac refuses the
 * result. */
static void
check_invalid_config(const struct pac_config *valid)
{
    struct pac_config cfg = *valid;
    size_t i = in_u8() % (pac_n_knobs + 2);
    char err[256];

    if (i < pac_n_knobs && pac_knobs[i].type == PAC_KNOB_U32) {
        const struct pac_knob *knob = &pac_knobs[i];

        if (knob->min > 0 && (in_u8() & 1 || knob->max == UINT32_MAX)) {
            pac_knob_set(&cfg, knob, in_range(0, knob->min - 1));
        } else if (knob->max < UINT32_MAX) {
            pac_knob_set(&cfg, knob, in_range(knob->max + 1, UINT32_MAX));
        } else {
            return;
        }
    } else if (i < pac_n_knobs) {
        /* The levels (a bool knob has no invalid value). */
        if (pac_knobs[i].type != PAC_KNOB_LEVELS) {
            return;
        }
        cfg.n_levels = in_u8() & 1 ? 0 : PAC_MAX_LEVELS + 1 + in_u8();
    } else if (cfg.n_levels >= 2) {
        /* A level threshold of 0, or one that does not increase. */
        uint32_t l = in_u8() % (cfg.n_levels - 1);

        cfg.level_bytes[l] = (i == pac_n_knobs || !l
                              ? 0 : cfg.level_bytes[l - 1]);
    } else {
        return;
    }
    err[0] = '\0';
    FUZZ_ASSERT(!pac_config_check(&cfg, err, sizeof err), -1);
    FUZZ_ASSERT(err[0] != '\0', -1);
    FUZZ_ASSERT(!pac_create(&cfg, fz.now), -1);
}

/* Segments. */

static void
conn_addrs(int conn, uint8_t vm[16], uint8_t peer[16])
{
    memset(vm, 0, 16);
    memset(peer, 0, 16);
    if (conn < N_V4) {
        vm[10] = vm[11] = peer[10] = peer[11] = 0xff;
        vm[12] = peer[12] = 10;
    } else {
        vm[0] = peer[0] = 0x20;
        vm[1] = peer[1] = 0x01;
        vm[2] = peer[2] = 0x0d;
        vm[3] = peer[3] = 0xb8;
    }
    vm[15] = 1;
    peer[15] = 2;
}

static int
conn_of_info(const struct pac_flow_info *info)
{
    int port = info->peer_port - PEER_PORT_BASE;
    bool v6 = info->peer_addr[0] == 0x20;

    if (info->vm_port != VM_PORT || port < 0
        || port >= (v6 ? N_CONNS - N_V4 : N_V4)) {
        return -1;
    }
    return v6 ? N_V4 + port : port;
}

/* A segment of connection 'conn', toward the receiver if 'rx'. */
static struct pac_segment
make_seg(int conn, bool rx, uint8_t flags, uint32_t seq, uint32_t ack,
         uint32_t len)
{
    struct pac_segment s;
    uint8_t vm[16], peer[16];
    uint16_t peer_port = PEER_PORT_BASE + (conn < N_V4 ? conn : conn - N_V4);

    memset(&s, 0, sizeof s);
    conn_addrs(conn, vm, peer);
    memcpy(s.src, rx ? peer : vm, 16);
    memcpy(s.dst, rx ? vm : peer, 16);
    s.sport = rx ? peer_port : VM_PORT;
    s.dport = rx ? VM_PORT : peer_port;
    s.ip_version = conn < N_V4 ? 4 : 6;
    s.ip_ecn = PAC_ECN_ECT0;
    s.tcp_flags = flags;
    s.seq = seq;
    s.ack = ack;
    s.window = UINT16_MAX;
    s.l4_offset = conn < N_V4 ? 20 : 40;
    s.payload_len = len;
    s.ip_len = s.l4_offset + 20 + len;
    return s;
}

/* Options of a SYN or SYN-ACK, as the parser gives them. */
static void
syn_options(struct pac_segment *s)
{
    uint8_t b = in_u8();

    s->mss = (b & 3) == 0 ? 0 : (b & 3) == 1 ? 1460 : in_u16();
    if (b & 4) {
        uint8_t wscale = in_u8() % 16;

        s->has_wscale = true;
        s->wscale = MIN(wscale, 14);
    }
}

/* A payload length. */
static uint32_t
pick_len(void)
{
    switch (in_u8() % 8) {
    case 0:
    case 1:
        return 0;
    case 2:
        return 1460;
    case 3:
        return 1448;
    case 4:
        return 1 + in_u8();
    case 5:
        return 1 + in_u16() % 9000;
    case 6:
        return 1 + in_u16() % 65000;   /* TSO. */
    default:
        return 100;
    }
}

/* Calls and their checks. */

static void check_all(void);

/* A segment without payload, SYN, FIN or RST: libpac takes it for a pure
 * ACK, with or without the ACK flag (without, it stands for the flow's
 * last ACK number). */
static bool
is_pure(const struct fz_pkt *p)
{
    return !p->len && !(p->flags & (PAC_TCP_SYN | PAC_TCP_FIN | PAC_TCP_RST));
}

/* Whether held pure ACK 'q' may supersede pure ACK 'p' (a newer ACK
 * number; the fuzzer does not know the number that a segment without the
 * ACK flag stands for). */
static bool
may_supersede(const struct fz_pkt *q, const struct fz_pkt *p)
{
    return (is_pure(q)
            && (!(q->flags & PAC_TCP_ACK) || !(p->flags & PAC_TCP_ACK)
                || pac_seq_gt(q->ack, p->ack)));
}

/* Reports a violation tests/pac-test-fit.h found. */
static void
check_fit(int pkt)
{
    if (fz.fit.err[0]) {
        report(fz.fit.err, pkt);
    }
}

static void
conn_held_remove(struct fz_conn *c, int pos)
{
    memmove(&c->held[pos], &c->held[pos + 1],
            (c->n_held - pos - 1) * sizeof c->held[0]);
    c->n_held--;
    fz.total_held--;
    if (!c->n_held && c != fz.tx_conn) {
        /* (During pac_tx(), libpac holds its segment too.) */
        c->n_held_pure = 0;
        c->held_pure_more = false;
    }
    if (!pos) {
        c->head_since = fz.latest;
    }
}

/* Whether 'ack' is an ACK number that the receiver's segments of
 * connection 'conn' carried, or where a segment that arrived on it started
 * or ended, or one below either.  A copy takes its own ACK number, or one
 * below the newest that left its flow (an old ACK), which libpac caps at
 * what has arrived.  Which of those is libpac's to know under hostile
 * sequence and ACK numbers (a segment without the ACK flag is held with
 * its flow's last, a flow forgotten and seen again starts over), so this
 * checks only that the number comes from the connection, not from another
 * flow or from nowhere. */
static bool
is_conn_ack(int conn, uint32_t ack)
{
    for (int i = 0; i < fz.n_pkts; i++) {
        const struct fz_pkt *q = &fz.pkts[i];

        if (q->conn == conn && (q->flags & PAC_TCP_ACK)
            && (q->ack == ack || q->ack == ack + 1)) {
            return true;
        }
    }
    for (int i = 0; i < fz.n_rx_seqs; i++) {
        if (fz.rx_seqs[i].conn == conn
            && (fz.rx_seqs[i].seq == ack || fz.rx_seqs[i].seq == ack + 1)) {
            return true;
        }
    }
    return false;
}

/* A copy of held data (request_copy_us): of a held packet with payload,
 * once; see the invariants above for its ACK number and timestamp. */
static void
fz_copy(void *aux, void *pkt_, const struct pac_copy *how)
{
    int pkt = (int) ((struct fz_pkt *) pkt_ - fz.pkts);
    const struct fz_conn *c;
    struct fz_pkt *p;

    FUZZ_ASSERT(aux == &fz, -1);
    FUZZ_ASSERT(pkt >= 0 && pkt < fz.n_pkts, pkt);
    p = &fz.pkts[pkt];
    FUZZ_ASSERT(p->state == PS_HELD, pkt);
    c = &fz.conns[p->conn];
    FUZZ_ASSERT(c->n_held, pkt);
    if (c->held[0] == pkt) {
        FUZZ_ASSERT(!how->tsval_from, pkt);
    } else {
        FUZZ_ASSERT(how->tsval_from == &fz.pkts[c->held[0]], pkt);
    }
    FUZZ_ASSERT(is_conn_ack(p->conn, how->ack), pkt);
    FUZZ_ASSERT(p->len > 0, pkt);
    FUZZ_ASSERT(!p->copied, pkt);
    p->copied = true;
    if (fz.verbose) {
        fprintf(stderr, "  copy of packet %d ack %"PRIu32" window %u\n", pkt,
                how->ack, (unsigned) how->window);
    }
    fit_watch_copy(&fz.fit, fz.pac);
    check_fit(pkt);
}

static void
fz_emit(void *aux, void *pkt_, enum pac_emit emit)
{
    int pkt = (int) ((struct fz_pkt *) pkt_ - fz.pkts);
    struct fz_pkt *p;
    struct fz_conn *c;
    int pos;

    FUZZ_ASSERT(aux == &fz, -1);
    FUZZ_ASSERT(pkt >= 0 && pkt < fz.n_pkts, pkt);
    p = &fz.pkts[pkt];
    FUZZ_ASSERT(p->state != PS_NEW, pkt);
    FUZZ_ASSERT(p->state == PS_HELD, pkt);
    c = &fz.conns[p->conn];
    for (pos = 0; pos < c->n_held && c->held[pos] != pkt; pos++) {
        continue;
    }
    FUZZ_ASSERT(pos < c->n_held, pkt);
    fz.n_emitted++;
    if (emit == PAC_EMIT_DROP_STALE) {
        bool superseded = false;

        FUZZ_ASSERT(is_pure(p), pkt);
        /* Dropped as it reaches the head: per-connection order. */
        FUZZ_ASSERT(pos == 0, pkt);
        for (int i = 0; i < c->n_held; i++) {
            const struct fz_pkt *q = &fz.pkts[c->held[i]];

            superseded |= may_supersede(q, p);
        }
        superseded |= c->held_pure_more;
        for (int i = 0; i < c->n_held_pure; i++) {
            superseded |= may_supersede(&fz.pkts[c->held_pure[i]], p);
        }
        FUZZ_ASSERT(superseded, pkt);
        p->state = PS_DROPPED;
        c->n_dropped++;
    } else {
        FUZZ_ASSERT(emit == PAC_EMIT_RELEASE, pkt);
        /* Per-connection order. */
        FUZZ_ASSERT(pos == 0, pkt);
        p->state = PS_RELEASED;
    }
    conn_held_remove(c, pos);
    if (fz.verbose) {
        fprintf(stderr, "  emit packet %d: %s\n", pkt,
                emit == PAC_EMIT_RELEASE ? "release" : "drop");
    }
    if (fz.pac) {
        fit_watch_emit(&fz.fit, fz.pac);
        check_fit(pkt);
    }
}

static void
set_time(void)
{
    fz.latest = MAX(fz.latest, fz.now);
}

static void
begin_call(const char *call)
{
    fz.call = call;
    set_time();
    if (fz.verbose) {
        fprintf(stderr, "op %d: %s at %"PRIu64"\n", fz.op, call, fz.now);
    }
}

static void
end_call(bool own_in_turn, bool own_left)
{
    if (fz.verbose) {
        struct pac_stats st;

        pac_get_stats(fz.pac, &st);
        fprintf(stderr, "  in_flight %"PRIu64" threshold %"PRIu64
                " unattributed %"PRIu64" held %"PRIu32"\n", st.in_flight,
                st.threshold, fz.pac->unattributed, st.held);
        if (fz.cfg.fast_path) {
            fprintf(stderr, "  tracking %d starts %"PRIu64" stops %"PRIu64
                    " flows %"PRIu32" resync %"PRIu32"\n", st.tracking,
                    st.tracking_starts, st.tracking_stops, st.flows,
                    fz.pac->n_resync);
        }
    }
    fit_watch_end(&fz.fit, fz.pac, own_in_turn, own_left);
    check_fit(-1);
    check_all();
    fz.call = NULL;
}

/* Sometimes hashes the segment first, as a burst would. */
static void
maybe_prefetch(struct pac_segment *s, bool rx)
{
    if (fz.in_batch && in_u8() & 1) {
        struct pac_segment *segs[1] = { s };

        pac_prefetch(fz.pac, segs, 1, rx);
    }
}

static void
do_rx(void)
{
    int conn = in_u8() % N_CONNS;
    struct fz_conn *c = &fz.conns[conn];
    uint8_t kind = in_u8();
    uint8_t flags = PAC_TCP_ACK;
    uint32_t len = pick_len();
    uint32_t seq = c->peer_seq;
    bool restart = false;       /* The peer starts a new sequence. */
    struct pac_segment s;
    uint32_t end;

    switch (kind % 16) {
    case 0:
        flags = PAC_TCP_SYN;
        len = 0;
        break;
    case 1:
        flags = PAC_TCP_SYN | PAC_TCP_ACK;
        len = 0;
        break;
    case 2:
        flags = PAC_TCP_RST | (kind & 0x10 ? PAC_TCP_ACK : 0);
        break;
    case 3:
        flags |= PAC_TCP_FIN;
        break;
    case 4:
        flags = in_u8();        /* Any flags. */
        break;
    default:
        break;
    }
    switch ((kind >> 5) % 8) {
    case 0:
        seq -= in_u16();        /* A retransmission. */
        break;
    case 1:
        seq += in_u16();        /* Past a hole. */
        break;
    case 2:
        seq = in_u32();         /* Anywhere. */
        restart = true;
        break;
    case 3:
        seq += UINT32_C(1) << 30;   /* A new connection's ISN. */
        restart = true;
        break;
    default:
        break;
    }
    s = make_seg(conn, true, flags, seq, c->vm_seq, len);
    s.ip_ecn = in_u8() % 4;
    s.window = in_u8() & 1 ? UINT16_MAX : in_u16();
    if (flags & PAC_TCP_SYN) {
        syn_options(&s);
    }
    end = seq + len + !!(flags & (PAC_TCP_SYN | PAC_TCP_FIN));
    if (restart || pac_seq_gt(end, c->peer_seq)) {
        c->peer_seq = end;
    }

    if (fz.n_rx_seqs + 2 <= (int) (sizeof fz.rx_seqs / sizeof *fz.rx_seqs)) {
        fz.rx_seqs[fz.n_rx_seqs].conn = conn;
        fz.rx_seqs[fz.n_rx_seqs++].seq = seq;
        fz.rx_seqs[fz.n_rx_seqs].conn = conn;
        fz.rx_seqs[fz.n_rx_seqs++].seq = end;
    }

    fz.n_rx++;
    if (!pac_tracking(fz.pac)) {
        /* The fast path: a segment with SYN set goes whole to
         * pac_watch_syn(), which never starts tracking with a segment
         * toward the receiver. */
        bool syn = flags & PAC_TCP_SYN;

        begin_call(syn ? "pac_watch_syn" : "pac_watch_rx");
        if (fz.verbose) {
            fprintf(stderr, "  conn %d flags %#x len %"PRIu32"\n", conn,
                    flags, len);
        }
        if (syn) {
            FUZZ_ASSERT(!pac_watch_syn(fz.pac, &s, true, fz.now), -1);
        } else {
            pac_watch_rx(fz.pac, len, fz.now);
        }
        FUZZ_ASSERT(!pac_tracking(fz.pac), -1);
        fz.n_fast_rx++;
        end_call(false, false);
        return;
    }
    begin_call("pac_rx");
    if (fz.verbose) {
        fprintf(stderr, "  conn %d flags %#x seq %"PRIu32" len %"PRIu32
                " ecn %d window %d mss %d wscale %d/%d\n", conn, flags, seq,
                len, s.ip_ecn, s.window, s.mss, s.has_wscale, s.wscale);
    }
    maybe_prefetch(&s, true);
    pac_rx(fz.pac, &s, fz.now, fz_emit, &fz);
    end_call(false, false);
}

static void
do_tx(void)
{
    int conn = in_u8() % N_CONNS;
    struct fz_conn *c = &fz.conns[conn];
    uint8_t kind = in_u8();
    uint8_t flags = PAC_TCP_ACK;
    uint32_t len = 0;
    uint32_t ack;
    int pkt = fz.n_pkts;
    struct fz_pkt *p;
    struct pac_segment s;
    enum pac_verdict v;
    bool held_before = c->n_held > 0;
    /* Stale drops during the call may leave the connection holding nothing
     * before libpac decides on the segment. */
    uint64_t dropped = c->n_dropped;

    if (pkt >= MAX_PKTS) {
        return;
    }
    switch ((kind >> 4) % 8) {
    case 0:
    case 1:
        ack = c->peer_seq;      /* All received. */
        break;
    case 2:
        ack = c->peer_seq - in_u16();
        break;
    case 3:
        ack = c->vm_ack;        /* A duplicate. */
        break;
    case 4:
        ack = c->vm_ack - in_u16();
        break;
    case 5:
        ack = in_u32();         /* Garbage. */
        break;
    case 6:
        ack = c->peer_seq + in_u16();   /* Beyond what was sent. */
        break;
    default:
        ack = c->peer_seq + (UINT32_C(1) << 30);
        break;
    }
    switch (kind % 16) {
    case 0:
    case 1:
    case 2:
        len = pick_len();       /* A request, or data. */
        break;
    case 3:
        flags = PAC_TCP_SYN;
        break;
    case 4:
        flags = PAC_TCP_SYN | PAC_TCP_ACK;
        break;
    case 5:
        flags |= PAC_TCP_FIN;
        break;
    case 6:
        flags = PAC_TCP_RST | (kind & 0x80 ? PAC_TCP_ACK : 0);
        break;
    case 7:
        flags = in_u8();
        len = in_u8() & 1 ? 0 : pick_len();
        break;
    default:
        break;
    }
    if (in_u8() & 1) {
        flags |= PAC_TCP_ECE;
    }
    if (flags & PAC_TCP_ACK && pac_seq_gt(ack, c->vm_ack)) {
        c->vm_ack = ack;
    }

    s = make_seg(conn, false, flags, c->vm_seq, ack, len);
    c->vm_seq += len + !!(flags & (PAC_TCP_SYN | PAC_TCP_FIN));
    switch (in_u8() % 4) {
    case 0:
        s.window = in_u16();
        break;
    case 1:
        s.window = in_u8();
        break;
    default:
        break;
    }
    if (flags & PAC_TCP_SYN) {
        syn_options(&s);
    }

    p = &fz.pkts[pkt];
    p->conn = conn;
    p->flags = flags;
    p->len = len;
    p->ack = ack;
    p->state = PS_NEW;
    p->copied = false;
    fz.n_pkts++;

    if (!pac_tracking(fz.pac)) {
        /* The fast path: the segment passes as it is, unless it starts
         * tracking, which counts what the triggers that passed may still
         * bring: in_flight rises as if they left now. */
        bool track;

        begin_call(flags & PAC_TCP_SYN ? "pac_watch_syn" : "pac_watch_tx");
        if (fz.verbose) {
            fprintf(stderr, "  packet %d conn %d flags %#x len %"PRIu32"\n",
                    pkt, conn, flags, len);
        }
        FUZZ_ASSERT(!fz.total_held, pkt);
        track = (flags & PAC_TCP_SYN
                 ? pac_watch_syn(fz.pac, &s, false, fz.now)
                 : pac_watch_tx(fz.pac, flags, len, fz.now));
        FUZZ_ASSERT(track == pac_tracking(fz.pac), pkt);
        if (!track) {
            p->state = PS_PASSED;
            fz.n_passed++;
            fz.n_fast_tx++;
            if (fz.verbose) {
                fprintf(stderr, "  passed untracked\n");
            }
        } else if (fz.verbose) {
            fprintf(stderr, "  tracking starts\n");
        }
        fz.tx_pending = track;
        end_call(false, true);
        fz.tx_pending = 0;
        if (!track) {
            return;
        }
    }

    begin_call("pac_tx");
    if (fz.verbose) {
        fprintf(stderr, "  packet %d conn %d flags %#x ack %"PRIu32" len %"
                PRIu32" window %d mss %d wscale %d/%d\n", pkt, conn, flags,
                ack, len, s.window, s.mss, s.has_wscale, s.wscale);
    }
    maybe_prefetch(&s, false);
    {
        uint16_t window = s.window;

        fz.tx_conn = c;
        v = pac_tx(fz.pac, &s, p, fz.now, fz_emit, &fz);
        fz.tx_conn = NULL;
        if (v == PAC_PASS && !c->n_held) {
            c->n_held_pure = 0;
            c->held_pure_more = false;
        }
        FUZZ_ASSERT(!s.window_clamped || s.window <= window, pkt);
        FUZZ_ASSERT(s.window_clamped || s.window == window, pkt);
    }
    FUZZ_ASSERT(p->state == PS_NEW, pkt);
    if (v == PAC_PASS) {
        p->state = PS_PASSED;
        fz.n_passed++;
        /* Per-connection order. */
        FUZZ_ASSERT(!c->n_held, pkt);
    } else {
        FUZZ_ASSERT(v == PAC_HELD, pkt);
        FUZZ_ASSERT(c->n_held < MAX_CONN_HELD, pkt);
        p->state = PS_HELD;
        if (is_pure(p)) {
            if (c->n_held_pure < MAX_CONN_HELD) {
                c->held_pure[c->n_held_pure++] = pkt;
            } else {
                c->held_pure_more = true;
            }
        }
        if (!c->n_held) {
            c->head_since = fz.latest;
        }
        c->held[c->n_held++] = pkt;
        fz.total_held++;
        fz.n_held_ever++;
    }
    /* A duplicate ACK passes at once whatever in_flight is; the fuzzer does
     * not tell one from other pure ACKs. */
    if (fz.verbose) {
        fprintf(stderr, "  %s\n", v == PAC_PASS ? "passed" : "held");
    }
    end_call(v == PAC_PASS
             && (!is_pure(p) || (held_before && c->n_dropped == dropped)),
             v == PAC_PASS);
}

static void
do_run(void)
{
    if (fz.in_batch) {
        begin_call("pac_batch_end");
        pac_batch_end(fz.pac, fz_emit, &fz);
        fz.in_batch = false;
        end_call(false, false);
    }
    begin_call("pac_run");
    pac_run(fz.pac, fz.now, fz_emit, &fz);
    end_call(false, false);

    if (fz.now == fz.latest) {
        uint64_t bound = fz.cfg.max_hold_us;

        for (int i = 0; i < N_CONNS; i++) {
            const struct fz_conn *c = &fz.conns[i];
            const struct fz_pkt *head;
            uint64_t age;

            if (!c->n_held) {
                continue;
            }
            /* A head with payload or SYN may be a window trigger, which
             * waits past its bound until it fits. */
            head = &fz.pkts[c->held[0]];
            age = fz.latest - c->head_since;
            if (!head->len && !(head->flags & PAC_TCP_SYN)
                && age < MAX_AGE_US) {
                FUZZ_ASSERT(age < bound, c->held[0]);
            }
        }
        /* pac_next_wakeup() may say "now" once more (the control interval
         * may have shrunk with the ACK delays just noted); a caller that
         * then runs pac_run() again gets a wakeup in the future. */
        for (int i = 0; i < 2 && pac_next_wakeup(fz.pac) <= fz.latest; i++) {
            begin_call("pac_run");
            pac_run(fz.pac, fz.now, fz_emit, &fz);
            end_call(false, false);
        }
        FUZZ_ASSERT(pac_next_wakeup(fz.pac) > fz.latest, -1);
    }
}

static void
do_time(void)
{
    uint8_t b = in_u8();
    uint64_t step;

    switch (b % 8) {
    case 0:
        step = 0;
        break;
    case 1:
    case 2:
        step = 1 + b / 8;
        break;
    case 3:
        step = in_u16();
        break;
    case 4:
        step = in_u32() % 2000000;
        break;
    case 5:
        step = in_u32() % MAX_STEP_US;
        break;
    case 6:
        /* Backward, a little or a lot. */
        step = b & 0x80 ? in_u16() : in_u32() % MAX_STEP_US;
        fz.now -= MIN(fz.now, step);
        return;
    default:
        /* To when libpac next has something to do. */
        step = pac_next_wakeup(fz.pac);
        if (step != UINT64_MAX && step > fz.now
            && step - fz.now <= MAX_STEP_US) {
            fz.now = step;
        }
        return;
    }
    fz.now += step;
}

static void
do_flush(void)
{
    begin_call("pac_flush");
    pac_flush(fz.pac, fz_emit, &fz);
    FUZZ_ASSERT(!fz.total_held, -1);
    end_call(false, false);
}

/* A segment of a connection that the parser could not read (a fragment,
 * malformed options): with its ports, or without (a later fragment). */
static void
do_unparsed(void)
{
    int conn = in_u8() % N_CONNS;
    bool ports = in_u8() & 1;
    struct pac_segment s = make_seg(conn, false, PAC_TCP_ACK,
                                    fz.conns[conn].vm_seq,
                                    fz.conns[conn].vm_ack, 0);

    if (!ports) {
        s.sport = s.dport = 0;
    }
    begin_call("pac_tx_unparsed");
    pac_tx_unparsed(fz.pac, &s, fz_emit, &fz);
    FUZZ_ASSERT(ports ? !fz.conns[conn].n_held : !fz.total_held, -1);
    end_call(false, false);
}

static void
do_batch(void)
{
    if (!fz.in_batch) {
        begin_call("pac_batch_begin");
        pac_batch_begin(fz.pac);
        fz.in_batch = true;
    } else {
        begin_call("pac_batch_end");
        pac_batch_end(fz.pac, fz_emit, &fz);
        fz.in_batch = false;
    }
    end_call(false, false);
}

/* Invariants. */

static void
count_cb(void *aux, const struct pac_flow_info *info)
{
    int *per_conn = aux;
    int conn = conn_of_info(info);

    per_conn[conn < 0 ? N_CONNS : conn] += info->held;
    per_conn[N_CONNS + 1]++;
}

/* Prints what each flow accounts for of in_flight. */
static void
dump_budgets(void)
{
    const struct pac *pac = fz.pac;

    fprintf(stderr, "in_flight %"PRIu64", unattributed %"PRIu64"\n",
            pac->in_flight, pac->unattributed);
    for (uint32_t i = 0; i < fz.cfg.max_flows; i++) {
        const struct pac_flow *f = &pac->flows[i];

        if (f->flags & PAC_F_IN_USE) {
            fprintf(stderr, "  flow %"PRIu32" (peer port %d): flags %#x "
                    "rcv_nxt %"PRIu32" budget_end %"PRIu32" last_ack %"
                    PRIu32" outstanding %"PRIu32"\n", i, f->peer_port,
                    f->flags, f->rcv_nxt, f->budget_end, f->last_ack,
                    pac_flow_outstanding(f));
        }
    }
}

/* While PAC tracks no connection: every flow is marked PAC_F_RESYNC and
 * keeps nothing of the sequence numbers it no longer follows. */
static void
check_untracked_flows(void)
{
    const struct pac *pac = fz.pac;
    uint32_t n = 0;

    FUZZ_ASSERT(pac->n_resync == pac->n_flows, -1);
    FUZZ_ASSERT(!pac->n_busy && !pac->n_outstanding, -1);
    FUZZ_ASSERT(pac->out_head == PAC_NONE, -1);
    for (uint32_t i = 0; i < pac->cfg.max_flows; i++) {
        const struct pac_flow *f = &pac->flows[i];
        const struct pac_flow_wnd *w = &pac->flow_wnd[i];

        if (!(f->flags & PAC_F_IN_USE)) {
            continue;
        }
        n++;
        FUZZ_ASSERT(f->flags & PAC_F_RESYNC, -1);
        FUZZ_ASSERT(!(f->flags & (PAC_F_SYN_SENT | PAC_F_SYNACK_SENT
                                  | PAC_F_ACK_BASE | PAC_F_RCV_BASE
                                  | PAC_F_IN_RESP | PAC_F_BUDGET | PAC_F_DRY
                                  | PAC_F_MEASURING | PAC_F_BUSY
                                  | PAC_F_ON_OUT_LIST)), -1);
        FUZZ_ASSERT(!(w->bits & ~PAC_W_KEPT_BITS), -1);
        FUZZ_ASSERT(!w->n_old_edges && !f->n_held, -1);
    }
    FUZZ_ASSERT(n == pac->n_flows, -1);
}

/* The pool of accepted connections' windows (lib/pac-handshake.c): its
 * count is the number of flows marked in it, each of them quiet (its peer
 * has sent nothing) and owing bytes. */
static void
check_handshake_pool(void)
{
    const struct pac *pac = fz.pac;
    uint32_t n = 0;

    for (uint32_t i = 0; i < pac->cfg.max_flows; i++) {
        const struct pac_flow_wnd *w = &pac->flow_wnd[i];

        if ((pac->flows[i].flags & PAC_F_IN_USE)
            && (w->bits & PAC_W_HS_POOL)) {
            n++;
            FUZZ_ASSERT(w->bits & PAC_W_HS_QUIET, -1);
            FUZZ_ASSERT(pac_flow_outstanding(&pac->flows[i]), -1);
        }
    }
    FUZZ_ASSERT(n == pac->n_hs_pool, -1);
}

static void
check_all(void)
{
    int per_conn[N_CONNS + 2];
    uint64_t released = 0, accounted = 0;
    struct pac_stats st;
    uint32_t sum = 0, h, last;
    size_t n;

    pac_get_stats(fz.pac, &st);
    check_handshake_pool();

    /* Held packets and their caps. */
    FUZZ_ASSERT(st.held == (uint32_t) fz.total_held, -1);
    FUZZ_ASSERT(st.held <= fz.cfg.max_held, -1);
    FUZZ_ASSERT(st.max_held_seen <= fz.cfg.max_held, -1);
    for (int l = 0; l < PAC_MAX_LEVELS; l++) {
        sum += st.held_per_level[l];
        FUZZ_ASSERT(l < (int) fz.cfg.n_levels || !st.held_per_level[l], -1);
    }
    FUZZ_ASSERT(sum == st.held, -1);

    /* Counters. */
    FUZZ_ASSERT(st.tx_packets + st.fast_tx_packets + fz.tx_pending
                == (uint64_t) fz.n_pkts, -1);
    FUZZ_ASSERT(st.fast_tx_packets == fz.n_fast_tx, -1);
    FUZZ_ASSERT(st.tx_passed == fz.n_passed - fz.n_fast_tx, -1);
    FUZZ_ASSERT(st.rx_packets + st.fast_rx_packets == fz.n_rx, -1);
    FUZZ_ASSERT(st.fast_rx_packets == fz.n_fast_rx, -1);

    /* The fast path: nothing held, tracked or in flight while PAC does not
     * track connections, and always tracking without it. */
    FUZZ_ASSERT(st.tracking == pac_tracking(fz.pac), -1);
    if (!fz.cfg.fast_path) {
        FUZZ_ASSERT(st.tracking, -1);
        FUZZ_ASSERT(!st.fast_rx_packets && !st.fast_tx_packets, -1);
        FUZZ_ASSERT(!st.tracking_starts && !st.tracking_stops, -1);
    } else {
        FUZZ_ASSERT(st.tracking_stops + st.tracking == st.tracking_starts,
                    -1);
    }
    if (!st.tracking) {
        FUZZ_ASSERT(!st.held && !fz.total_held, -1);
        FUZZ_ASSERT(!st.in_flight && !fz.pac->unattributed, -1);
        check_untracked_flows();
    }
    FUZZ_ASSERT(st.tx_held == fz.n_held_ever, -1);
    for (int c = 0; c < PAC_N_REL_CAUSES; c++) {
        released += st.released[c];
    }
    FUZZ_ASSERT(released + st.stale_drops == fz.n_emitted, -1);

    /* The flow table. */
    memset(per_conn, 0, sizeof per_conn);
    n = pac_dump_flows(fz.pac, count_cb, per_conn);
    FUZZ_ASSERT(n == st.flows, -1);
    FUZZ_ASSERT(n == (size_t) per_conn[N_CONNS + 1], -1);
    FUZZ_ASSERT(n <= fz.cfg.max_flows, -1);
    FUZZ_ASSERT(!per_conn[N_CONNS], -1);
    for (int i = 0; i < N_CONNS; i++) {
        FUZZ_ASSERT(per_conn[i] == fz.conns[i].n_held, -1);
    }

    /* The window triggers that the copies' foresight walk has looked at
     * (lib/pac-sched.c) are the first n_foreseen of their age FIFO, the
     * last of them foresight_last. */
    n = 0;
    h = fz.pac->age_head[PAC_CLASS_TRIGGER];
    last = PAC_NONE;
    for (; h != PAC_NONE && (fz.pac->held[h].flags & PAC_H_FORESEEN);
         h = fz.pac->held[h].age_next) {
        n++;
        last = h;
    }
    FUZZ_ASSERT(n == fz.pac->n_foreseen, -1);
    FUZZ_ASSERT(last == fz.pac->foresight_last, -1);
    for (; h != PAC_NONE; h = fz.pac->held[h].age_next) {
        FUZZ_ASSERT(!(fz.pac->held[h].flags & PAC_H_FORESEEN), -1);
    }

    /* in_flight and the flows' budgets; the flows marked PAC_F_RESYNC,
     * which only the fast path marks. */
    n = 0;
    for (uint32_t i = 0; i < fz.cfg.max_flows; i++) {
        const struct pac_flow *f = &fz.pac->flows[i];

        if (f->flags & PAC_F_IN_USE) {
            accounted += pac_flow_outstanding(f);
            n += (f->flags & PAC_F_RESYNC) != 0;
        }
    }
    FUZZ_ASSERT(n == fz.pac->n_resync, -1);
    FUZZ_ASSERT(fz.cfg.fast_path || !n, -1);
    accounted += fz.pac->unattributed;
    if (st.in_flight > accounted) {
        dump_budgets();
    }
    FUZZ_ASSERT(st.in_flight <= accounted, -1);
}

/* One input. */

static void
run_input(void)
{
    uint8_t b;

    fz.pac = pac_create(&fz.cfg, fz.now);
    FUZZ_ASSERT(fz.pac, -1);
    pac_set_copy_cb(fz.pac, fz_copy);
    fit_watch_init(&fz.fit, fz.pac, fz.cfg.default_mss);
    for (int i = 0; i < N_CONNS; i++) {
        fz.conns[i].peer_seq = in_u32();
        fz.conns[i].vm_seq = in_u32();
        fz.conns[i].vm_ack = fz.conns[i].peer_seq;
    }

    for (fz.op = 0; fz.in_left && fz.op < MAX_OPS; fz.op++) {
        b = in_u8();
        switch (b % 16) {
        case 0: case 1: case 2: case 3: case 4:
            do_rx();
            break;
        case 5: case 6: case 7: case 8:
            do_tx();
            break;
        case 9: case 10:
            do_time();
            break;
        case 11:
            do_run();
            break;
        case 12:
            do_time();
            do_run();
            break;
        case 13:
            do_batch();
            break;
        case 14:
            if (b & 0x80) {
                do_flush();
            } else if (b & 0x40) {
                do_unparsed();
            } else {
                do_time();
            }
            break;
        default:
            /* Several segments at one time. */
            for (int i = 1 + (b >> 4) % 4; i > 0; i--) {
                do_rx();
            }
            break;
        }
    }

    if (fz.in_batch) {
        begin_call("pac_batch_end");
        pac_batch_end(fz.pac, fz_emit, &fz);
        fz.in_batch = false;
        end_call(false, false);
    }
    begin_call("pac_destroy");
    {
        struct pac *pac = fz.pac;

        fz.pac = NULL;          /* fz_emit() must not look at it. */
        pac_destroy(pac, fz_emit, &fz);
    }
    FUZZ_ASSERT(!fz.total_held, -1);
    for (int i = 0; i < fz.n_pkts; i++) {
        enum pkt_state st = fz.pkts[i].state;

        FUZZ_ASSERT(st == PS_PASSED || st == PS_RELEASED || st == PS_DROPPED,
                    i);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool verbose = fz.verbose;
    uint8_t b;

    memset(&fz, 0, sizeof fz);
    fz.verbose = verbose;
    fz.in = data;
    fz.in_left = size;

    /* The start time: 0, an ordinary clock, or just before the 32-bit
     * microsecond stamps wrap. */
    b = in_u8();
    fz.now = (b % 4 == 0 ? 0
              : b % 4 == 1 ? UINT64_C(1000000000)
              : b % 4 == 2 ? (UINT64_C(1) << 32) - in_u16()
              : (uint64_t) in_u32() << 8);
    fz.latest = fz.now;

    pick_config(&fz.cfg);
    if (!pac_config_check(&fz.cfg, NULL, 0)) {
        report("pick_config() chose an invalid configuration", -1);
    }
    if (b & 0x80) {
        check_invalid_config(&fz.cfg);
    }
    run_input();
    return 0;
}

#ifdef PAC_FUZZ_STANDALONE
#include "fuzz-replay.h"

int
main(int argc, char *argv[])
{
    int first = 1;

    if (argc > 1 && !strcmp(argv[1], "-v")) {
        fz.verbose = true;
        first++;
    }
    return fuzz_replay_files(argc, argv, first);
}
#endif
