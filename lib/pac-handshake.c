/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Connections the receiver accepts: their share of the threshold, and
 * floods of handshakes that never bring data.
 *
 * A SYN-ACK lets the peer's initial window loose, so PAC budgets it as a
 * window trigger.  But anyone can make the receiver send SYN-ACKs: a
 * spoofed SYN flood gets one per SYN, to hosts that never answer, and a
 * client can complete handshakes and then stay silent.  Each such window
 * stays in in_flight until PAC gives it up as dry, and a few thousand a
 * second fill the threshold with windows that never come: established
 * connections' ACKs then wait for room that never frees.
 *
 * So the windows of accepted connections whose peer has sent nothing yet
 * ('quiet' flows, PAC_W_HS_QUIET: from the receiver's SYN-ACK to the
 * peer's first data) form a pool of at most half the threshold
 * (pac_handshake_room()), counted in initial windows, whatever the rest
 * of in_flight is: established traffic always keeps the other half.  A
 * quiet flow's window goes back after one dry time, not after the longer
 * wait a request's peer gets to think (pac-budget.c).
 *
 * The pool alone would make a flood's SYN-ACKs, and a legitimate client's
 * among them, wait their turn for hundreds of milliseconds.  PAC tells a
 * flood by its outcome: quiet windows given up as dry ('wasted') against
 * those whose peer sent data ('answered'), both halved every
 * PAC_HS_DECAY_US.  While more are wasted than answered (at least
 * PAC_HS_FLOOD_MIN), the pool keeps one window, a sample whose outcome
 * tells when the flood is over, and a window trigger of a quiet flow that
 * does not fit goes out at once, uncharged (PAC_W_HS_UNCHARGED: its
 * trigger is its frame, pac-trigger.c), as plain OVS would send it; the
 * peer's handshake ACK, the proof that the connection is real, charges it
 * an initial window only if that one place is free
 * (pac_handshake_confirmed()): a client that completes handshakes and
 * stays silent takes one window at most.  Outside a flood, a quiet flow's
 * trigger waits for room; the scheduler passes it over while the pool is
 * full or for max_hold at most (pac-sched.c), and once it has waited its
 * hold bound it goes uncharged if the pool is still full. */

#include "pac-private.h"

/* The share of the threshold that quiet flows' windows may hold, as a
 * divisor.  Half, as the window clamp's share (pac-window.c): a burst of
 * new peers' initial windows still gets as much of the buffer as one
 * peer's window may take, and the receiver's established connections keep
 * the other half whatever a flood does (three initial windows of the
 * default 96 000-byte threshold in the pool). */
#define PAC_HS_POOL_DIVISOR 2

/* The outcomes of quiet windows are halved this often, or every four dry
 * times if that is longer (a slow link gives windows back seldom, and a
 * flood must still show): a flood's verdict follows the last few hundred
 * milliseconds. */
#define PAC_HS_DECAY_US 100000

/* A flood needs at least this many wasted windows (after decay): a few
 * idle connections of a pool that a client opens ahead are not one. */
#define PAC_HS_FLOOD_MIN 8

/* The initial window a quiet flow's window is counted as in the pool. */
static uint32_t
pool_unit(const struct pac *pac)
{
    return MAX(pac_init_window(pac, pac->cfg.default_mss), 1);
}

/* How many quiet flows' windows the pool holds at most: at least one, and
 * in a flood only one (a sample, whose outcome tells when the flood
 * ends). */
static uint32_t
pool_slots(const struct pac *pac)
{
    return (pac_handshake_flood(pac) ? 1
            : MAX(pac->threshold / PAC_HS_POOL_DIVISOR / pool_unit(pac), 1));
}

/* How often the outcome counts are halved. */
static uint64_t
decay_period(const struct pac *pac)
{
    return MAX(PAC_HS_DECAY_US, 4 * (uint64_t) pac_dry_time(pac));
}

/* How many times the outcome counts have to be halved by now. */
static unsigned int
halvings(const struct pac *pac)
{
    uint64_t elapsed = pac->now - pac->hs_decay_start;

    return MIN(elapsed / decay_period(pac), 32);
}

/* 'count' halved 'n' times (at most 32, halvings()). */
static uint32_t
halved(uint32_t count, unsigned int n)
{
    return n < 32 ? count >> n : 0;
}

/* Halves the outcome counts once per decay period that passed, before one
 * of them grows. */
static void
decay_outcomes(struct pac *pac)
{
    unsigned int n = halvings(pac);

    if (n) {
        pac->hs_wasted = halved(pac->hs_wasted, n);
        pac->hs_answered = halved(pac->hs_answered, n);
        pac->hs_decay_start += n * decay_period(pac);
        if (n == 32) {
            pac->hs_decay_start = pac->now;
        }
    }
}

/* Whether quiet windows are mostly wasted now: a flood of handshakes that
 * bring no data. */
bool
pac_handshake_flood(const struct pac *pac)
{
    unsigned int n = halvings(pac);
    uint32_t wasted = halved(pac->hs_wasted, n);
    uint32_t answered = halved(pac->hs_answered, n);

    return wasted >= PAC_HS_FLOOD_MIN && wasted > answered;
}

static void
pool_leave(struct pac *pac, struct pac_flow_wnd *w)
{
    w->bits &= ~PAC_W_HS_POOL;
    pac->n_hs_pool--;
}

/* The receiver sent a SYN-ACK on flow 'f': it accepts the connection,
 * whose peer has sent nothing yet. */
void
pac_handshake_accepted(struct pac *pac, struct pac_flow *f)
{
    pac_flow_wnd(pac, f)->bits |= PAC_W_HS_QUIET;
}

/* Whether window trigger 'd' of flow 'f' may take budget: it does unless
 * the flow is quiet, not in the pool yet, and the pool is full. */
bool
pac_handshake_room(const struct pac *pac, const struct pac_flow *f,
                   const struct pac_held *d)
{
    uint16_t bits;

    if (d->kind == PAC_K_ACK) {
        return true;            /* Without touching the flow's other line. */
    }
    bits = pac_flow_wnd(pac, f)->bits;
    return (!(bits & PAC_W_HS_QUIET) || (bits & PAC_W_HS_POOL)
            || pac->n_hs_pool < pool_slots(pac));
}

/* Window trigger 'd' of flow 'f', quiet, goes out uncharged: its trigger
 * is its frame from now on, until its peer answers. */
void
pac_handshake_uncharge(struct pac *pac, struct pac_flow *f)
{
    pac_flow_wnd(pac, f)->bits |= PAC_W_HS_UNCHARGED;
    pac->stats.handshakes_uncharged++;
}

/* Window trigger 'd' of flow 'f' does not fit: whether it goes out now,
 * uncharged (a flood is under way and the flow is quiet). */
bool
pac_handshake_pass_uncharged(struct pac *pac, struct pac_flow *f,
                             const struct pac_held *d)
{
    if (d->kind == PAC_K_ACK
        || !(pac_flow_wnd(pac, f)->bits & PAC_W_HS_QUIET)
        || !pac_handshake_flood(pac)) {
        return false;
    }
    pac_handshake_uncharge(pac, f);
    return true;
}

/* Window trigger 'd' of flow 'f' got 'trigger' payload bytes of budget: a
 * quiet flow's window joins the pool.  (An ACK's trigger does not: the
 * pool admits window triggers only, pac_handshake_room().) */
void
pac_handshake_charged(struct pac *pac, struct pac_flow *f,
                      const struct pac_held *d, uint32_t trigger)
{
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    if (trigger && d->kind != PAC_K_ACK && (w->bits & PAC_W_HS_QUIET)
        && !(w->bits & PAC_W_HS_POOL)) {
        w->bits |= PAC_W_HS_POOL;
        pac->n_hs_pool++;
    }
}

/* Flow 'idx's outstanding bytes are taken back: it leaves the pool.  If
 * 'dry' (its peer sent nothing for a dry time), a quiet flow's window was
 * wasted. */
void
pac_handshake_reclaimed(struct pac *pac, uint32_t idx, bool dry)
{
    struct pac_flow_wnd *w = pac_flow_wnd(pac, &pac->flows[idx]);

    if (w->bits & PAC_W_HS_POOL) {
        pool_leave(pac, w);
        if (dry) {
            decay_outcomes(pac);
            pac->hs_wasted++;
            pac->stats.handshakes_wasted++;
        }
    }
}

/* The peer of flow 'f' sent data: the flow is no longer quiet. */
void
pac_handshake_answered(struct pac *pac, struct pac_flow *f)
{
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    if (w->bits & PAC_W_HS_POOL) {
        pool_leave(pac, w);
        decay_outcomes(pac);
        pac->hs_answered++;
    }
    w->bits &= ~(PAC_W_HS_QUIET | PAC_W_HS_UNCHARGED);
}

/* The peer of flow 'idx' acknowledged the receiver's SYN-ACK: the
 * connection is real.  A SYN-ACK that went uncharged now charges the
 * initial window that its peer may send next, if the pool has room;
 * otherwise its data comes unbudgeted, as through plain OVS. */
void
pac_handshake_confirmed(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);
    uint32_t window = pac_init_window(pac, f->mss);

    if (!(w->bits & PAC_W_HS_UNCHARGED)) {
        return;
    }
    /* Charged or not, the connection's later triggers count in full. */
    w->bits &= ~PAC_W_HS_UNCHARGED;
    if ((w->bits & PAC_W_HS_POOL) || pac->n_hs_pool >= pool_slots(pac)
        || !(f->flags & PAC_F_RCV_BASE) || pac_flow_outstanding(f)) {
        return;
    }
    pac->in_flight += window;
    f->budget_end = f->rcv_nxt + window;
    f->flags |= PAC_F_BUDGET;
    w->bits &= ~PAC_W_RECLAIMED;
    w->bits |= PAC_W_HS_POOL;
    pac->n_hs_pool++;
    pac->stats.handshakes_late_charged++;
    pac_rr_mark(pac, idx);
    pac_out_list_update(pac, idx, true);
}
