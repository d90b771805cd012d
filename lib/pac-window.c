/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The receive-window clamp, and the right edges of the windows PAC let out.
 *
 * Holding ACKs bounds what ACKs trigger, but not a single window larger than
 * the switch buffer: a request to a peer whose window grew past it lets the
 * whole window loose at once.  So on connections whose handshake PAC saw
 * (it needs both window-scale options), PAC lowers the window the receiver
 * advertises to the whole segments whose frames fill 1/PAC_CLAMP_SHARE of
 * the threshold (pac_window_clamp(); the caller rewrites the packet).
 *
 * Each segment that leaves notes the right edge of the window it offers
 * (ACK + window).  A peer whose data comes within a segment of that edge
 * is window-limited (pac_window_note_fill()); a short segment that ends at
 * one of the last PAC_OLD_EDGES + 1 edges fills the window and does not end
 * an answer (pac_window_at_edge(), pac_window_may_fill()). */

#include "pac-private.h"

/* The window clamp gives each peer this share of the threshold, so that
 * answers overlap: with a whole threshold per peer, one request fills it,
 * and answers run one at a time with the bottleneck idle while each one
 * starts (the request's trip and the peer's wake-up).  Why a half and not
 * a quarter: docs/libpac.md, "Why these defaults". */
#define PAC_CLAMP_SHARE 2

/* The receiver-window policies' (PAC_POLICY_RWND, PAC_POLICY_RDTCP)
 * smallest window, in segments: ICTCP's floor.  A peer with a one-segment
 * window waits for the receiver's delayed ACK on every segment.  (RDTCP's
 * floor is one segment, with delayed ACKs turned off in the receiver,
 * which a hypervisor cannot do for its guests.) */
#define PAC_RWND_MIN_SEGS 2

/* The window clamp_window gives flow 'f': as many whole segments as a
 * PAC_CLAMP_SHARE'th of the threshold holds frames of (so that a
 * window-limited peer still sends full ones), at least two.  A peer may
 * send its whole window in one burst at its own line rate, which the switch
 * buffer must absorb.
 *
 * The receiver-window policies give each connection PAC tracks an equal
 * share of the threshold instead, at least PAC_RWND_MIN_SEGS: the window
 * that ICTCP's and AC/DC TCP's per-connection control converges to when
 * every connection is busy, here from the first ACK on.  With more
 * connections than the threshold holds frames of PAC_RWND_MIN_SEGS, the
 * windows add up to more than the buffer: the limit of window-based
 * control that holding ACKs removes (RDTCP's ACK queue, the same share
 * with ACKs held, is Algorithm 1 of its paper without flow priorities). */
static uint32_t
clamp_bytes(const struct pac *pac, const struct pac_flow *f)
{
    uint32_t frame = f->mss + PAC_WIRE_OVERHEAD;
    uint32_t segs;

    if (pac->cfg.policy != PAC_POLICY_PAC) {
        segs = pac->cfg.threshold / MAX(pac->n_flows, 1) / frame;
        return MAX(segs, PAC_RWND_MIN_SEGS) * f->mss;
    }
    segs = pac->cfg.threshold / PAC_CLAMP_SHARE / frame;
    return MAX(segs, 2) * f->mss;
}

/* 'bytes' in units of 2^'scale' bytes, rounded up. */
static uint32_t
scaled_units(uint32_t bytes, unsigned int scale)
{
    return (uint32_t) (((uint64_t) bytes + (1u << scale) - 1) >> scale);
}

/* Whether PAC clamps the windows of flow 'f': the clamp is on (always, for
 * the receiver-window policies, whose windows are their shares) and PAC
 * knows the scale of the receiver's window field from the handshake. */
static bool
window_clamped(const struct pac *pac, const struct pac_flow *f)
{
    return ((pac->cfg.clamp_window || pac->cfg.policy != PAC_POLICY_PAC)
            && ((pac_flow_wnd(pac, f)->bits & PAC_W_SCALE_KNOWN)
                == PAC_W_SCALE_KNOWN));
}

/* The largest window the peer of 'f' may use: the clamp, if any. */
uint32_t
pac_window_cap(const struct pac *pac, const struct pac_flow *f)
{
    return window_clamped(pac, f) ? clamp_bytes(pac, f) : PAC_MAX_CWND;
}

/* The scale of the receiver's window field on flow 'f', whose handshake
 * PAC saw: the receiver's option, if both sides sent one (RFC 7323). */
unsigned int
pac_window_scale(const struct pac *pac, const struct pac_flow *f)
{
    const struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    return ((w->bits & (PAC_W_VM_WS | PAC_W_PEER_WS))
            == (PAC_W_VM_WS | PAC_W_PEER_WS) ? w->vm_wscale : 0);
}

/* Notes a handshake segment's window scale option: the receiver's ('vm')
 * or the peer's.  The side's latest SYN decides, with or without the
 * option. */
void
pac_window_note_wscale(struct pac *pac, uint32_t flow_idx,
                       const struct pac_segment *seg, bool vm)
{
    struct pac_flow_wnd *w = &pac->flow_wnd[flow_idx];

    if (vm) {
        w->bits &= ~PAC_W_VM_WS;
        w->bits |= PAC_W_VM_SYN | (seg->has_wscale ? PAC_W_VM_WS : 0);
        /* Callers that fill the segment themselves may pass any value:
         * shifting by more than 31 would be undefined. */
        w->vm_wscale = (seg->has_wscale
                        ? MIN(seg->wscale, PAC_MAX_WSCALE) : 0);
    } else {
        w->bits &= ~PAC_W_PEER_WS;
        w->bits |= PAC_W_PEER_SYN | (seg->has_wscale ? PAC_W_PEER_WS : 0);
    }
}

/* The right edge of the window that segment 'd' of flow 'f' gives the
 * peer. */
static uint32_t
edge_of(const struct pac *pac, const struct pac_flow *f,
        const struct pac_held *d)
{
    /* A SYN-ACK's window is never scaled (RFC 7323, 2.2). */
    unsigned int scale = (d->kind == PAC_K_HANDSHAKE ? 0
                          : pac_window_scale(pac, f));

    return d->ack + ((uint32_t) d->window << scale);
}

/* How much more than the flow's triggers already allowed the peer of flow
 * 'f' may send once segment 'd' reaches it: up to the right edge of its
 * window then ('d''s own, or a further one that an earlier segment gave),
 * whatever its congestion window.  UINT32_MAX where PAC does not know the
 * edges (the clamp is off, or the handshake was not seen). */
uint32_t
pac_window_room(const struct pac *pac, const struct pac_flow *f,
                const struct pac_held *d)
{
    const struct pac_flow_wnd *w = pac_flow_wnd(pac, f);
    uint32_t edge, base;

    if (!window_clamped(pac, f) || (d->flags & PAC_H_SYN)
        || !(f->flags & PAC_F_ACK_BASE) || !(f->flags & PAC_F_RCV_BASE)) {
        return UINT32_MAX;
    }
    edge = edge_of(pac, f, d);
    if ((w->bits & PAC_W_EDGE) && pac_seq_gt(w->right_edge, edge)) {
        edge = w->right_edge;
    }
    base = pac_allowed_end(f);
    return pac_seq_gt(edge, base) ? edge - base : 0;
}

/* The raw window field that, with ACK number 'ack', gives flow 'f''s peer
 * the right edge it already has, or 0 if PAC does not know that edge. */
uint16_t
pac_window_to_edge(const struct pac *pac, const struct pac_flow *f,
                   uint32_t ack)
{
    const struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    if (!(w->bits & PAC_W_EDGE) || !pac_seq_gt(w->right_edge, ack)) {
        return 0;
    }
    return MIN((w->right_edge - ack) >> pac_window_scale(pac, f),
               UINT16_MAX);
}

/* The raw window field that, with ACK number 'ack', puts flow 'f''s right
 * edge at 'edge' or, by less than one unit of the scaled field, past it. */
uint16_t
pac_window_to(const struct pac *pac, const struct pac_flow *f, uint32_t ack,
              uint32_t edge)
{
    unsigned int scale = pac_window_scale(pac, f);
    uint32_t bytes = pac_seq_gt(edge, ack) ? edge - ack : 0;

    return MIN(((uint64_t) bytes + (1u << scale) - 1) >> scale, UINT16_MAX);
}

/* Notes the right edge of the window that segment 'd' of flow 'f', leaving
 * now, gives the peer. */
void
pac_window_note_edge(struct pac *pac, const struct pac_flow *f,
                     const struct pac_held *d)
{
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    if (window_clamped(pac, f) && !(d->flags & PAC_H_SYN)
        && (f->flags & PAC_F_ACK_BASE)) {
        uint32_t edge = edge_of(pac, f, d);

        if ((w->bits & PAC_W_EDGE) && edge != w->right_edge) {
            w->old_edges[w->old_edge_pos] = w->right_edge;
            w->old_edge_pos = (w->old_edge_pos + 1) % PAC_OLD_EDGES;
            w->n_old_edges = MIN(w->n_old_edges + 1, PAC_OLD_EDGES);
        }
        w->right_edge = edge;
        w->bits |= PAC_W_EDGE;
    }
}

/* Whether a segment of flow 'f' that ends at 'end' stops at the right edge
 * of the receiver's window: a window-limited peer sends a short segment to
 * fill it (Linux does, with TCP_NODELAY), which does not end its answer.
 * The peer's edge is that of the newest ACK that has reached it, which may
 * be one of the last PAC_OLD_EDGES before the newest PAC let out: its data
 * waited in the switch buffer while PAC let more ACKs out.  Comparing with
 * the newest edge alone would take such a segment in a connection's first
 * answer (where no expected size vetoes the verdict, see
 * pac_window_may_fill()) for the answer's end, and the ACKs that follow
 * would go out with no trigger. */
bool
pac_window_at_edge(const struct pac *pac, const struct pac_flow *f,
                   uint32_t end)
{
    const struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    if (!(w->bits & PAC_W_EDGE)) {
        return false;
    } else if (end == w->right_edge) {
        return true;
    }
    for (unsigned int i = 0; i < w->n_old_edges; i++) {
        if (end == w->old_edges[i]) {
            return true;
        }
    }
    return false;
}

/* Whether the peer of flow 'f', whose newest segment of 'len' bytes ended
 * at rcv_nxt, has sent enough of its current answer to have filled the
 * receiver's window, so that the segment may be short because it reached
 * the window's edge (one of the edges the peer may still be using, older
 * than those pac_window_at_edge() keeps).  Less than half the window, or the
 * answer's first segment, cannot have: the short segment ends the answer
 * (a small answer after a large one, whose size pac_answer_unfinished()
 * expects). */
bool
pac_window_may_fill(const struct pac *pac, const struct pac_flow *f,
                    uint32_t len)
{
    const struct pac_flow_wnd *w = pac_flow_wnd(pac, f);
    uint32_t sent = f->rcv_nxt - f->resp_start;

    if ((w->bits & PAC_W_EDGE) && (f->flags & PAC_F_ACK_BASE)
        && pac_seq_gt(w->right_edge, f->last_ack)) {
        return sent >= (w->right_edge - f->last_ack) / 2;
    }
    return sent > len;
}

/* Notes that the peer of flow 'f' sent up to 'end' (new data): if that
 * leaves less than a segment of the receiver's window, the peer is limited
 * by that window, not by its own, until it loses a packet or idles. */
void
pac_window_note_fill(struct pac *pac, const struct pac_flow *f, uint32_t end)
{
    struct pac_flow_wnd *w = pac_flow_wnd(pac, f);

    if ((w->bits & PAC_W_EDGE) && !pac_seq_lt(end + f->mss, w->right_edge)
        && !pac_seq_gt(end, w->right_edge)) {
        w->bits |= PAC_W_LIMITED;
    }
}

/* Lowers the window of segment 'seg' of flow 'f' to the clamp, if PAC
 * clamps the flow's windows and the receiver offers more.  Never left of
 * the right edge PAC let out last (a receiver's SYN-ACK offers its whole
 * window before any clamp): a receiver must not shrink its window (RFC
 * 9293, 3.8.6), and the peer may already have sent up to that edge. */
void
pac_window_clamp(struct pac *pac, const struct pac_flow *f,
                 struct pac_segment *seg)
{
    const struct pac_flow_wnd *w = pac_flow_wnd(pac, f);
    unsigned int scale;
    uint32_t limit;

    if (!window_clamped(pac, f)
        || (seg->tcp_flags & (PAC_TCP_SYN | PAC_TCP_RST))
        || !(seg->tcp_flags & PAC_TCP_ACK)) {
        return;
    }
    /* Rounded up: the window is at least the clamp, by less than one unit
     * of the scaled field. */
    scale = pac_window_scale(pac, f);
    limit = scaled_units(clamp_bytes(pac, f), scale);
    if ((w->bits & PAC_W_EDGE) && pac_seq_gt(w->right_edge, seg->ack)) {
        limit = MAX(limit, scaled_units(w->right_edge - seg->ack, scale));
    }
    limit = MIN(MAX(limit, 1), UINT16_MAX);
    if (seg->window > limit) {
        seg->window = limit;
        seg->window_clamped = true;
        pac->stats.windows_clamped++;
    }
}
