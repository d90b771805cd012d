/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef PAC_PRIVATE_H
#define PAC_PRIVATE_H 1

/* Internal data structures of libpac and the functions its files call in
 * one another.  The files call downward only, in this order (each may call
 * those below it): pac.c (entry points, flows), pac-watch.c (the fast
 * path), pac-sched.c (the release loop), pac-control.c (the control
 * interval), pac-budget.c (per-flow budgets and verdicts), pac-trigger.c
 * (triggers and the answer model), pac-window.c (the window clamp),
 * pac-queue.c (held packets, MLFQ rings), pac-rr.c (the rings' index),
 * pac-flow.c (the flow table); beside them pac-config.c and pac-knobs.c
 * (configuration) and pac-parse.c (the parser).  The one call upward is a
 * function pointer: the index computes a flow's keys with the scheduler's
 * rule, which pac.c hands to pac_rr_init().
 *
 * Everything lives in arrays allocated by pac_create() and is linked by
 * 32-bit indices (PAC_NONE terminates a list), so that the per-packet path
 * never allocates and a flow stays small.  Per-flow and per-packet times are
 * 32-bit microseconds (they wrap after 71 minutes; every comparison is of a
 * difference, and no flow lives idle longer than 30 minutes). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pac.h"

#define PAC_NONE UINT32_MAX

#ifndef MIN
#define MIN(A, B) ((A) < (B) ? (A) : (B))
#endif
#ifndef MAX
#define MAX(A, B) ((A) > (B) ? (A) : (B))
#endif

#define PAC_STATIC_ASSERT(COND, MSG) _Static_assert(COND, MSG)

/* Frame bytes around a segment's payload: Ethernet 14, IPv4 20, TCP 20,
 * timestamps option 12.  in_flight and triggers count payload; a switch
 * buffer holds frames. */
#define PAC_WIRE_OVERHEAD 66

/* Payload bytes that take as much switch buffer as a bare ACK frame (66
 * bytes) next to full segments. */
#define PAC_ACK_FRAME 63

/* The same for a SYN-ACK frame: 74 bytes with the options Linux sends
 * (MSS, SACK permitted, timestamps, window scale: 20 bytes). */
#define PAC_SYNACK_FRAME 71

/* TCP's largest window (65535 << 14, rounded up): no peer may send further
 * beyond what the receiver acknowledged.  One trigger, and one flow's
 * outstanding bytes, are bounded by it, so that budget_end stays within
 * 2^31 of rcv_nxt (sequence arithmetic) and one flow cannot pin more of
 * in_flight than its peer could ever send. */
#define PAC_MAX_WINDOW (1u << 30)

/* Bounds of the control interval (pac-control.c); the longest also bounds
 * the drain time of dry flows (pac-budget.c). */
#define PAC_MIN_INTERVAL_US 10
#define PAC_MAX_INTERVAL_US 100000

/* Most option bytes a TCP header carries: a full segment's payload is the
 * MSS less up to this many bytes (Linux's timestamps take 12). */
#define PAC_MAX_TCP_OPTIONS 40

/* At most this many connections opened within PAC_LONE_WINDOW_US
 * (pac-trigger.c) are opened on their own, not in a burst. */
#define PAC_LONE_MAX 4

/* The MSS of a peer that announced none (RFC 9293, 3.7.1; IPv4's, the
 * smaller): its segments are no shorter unless it has no more to send. */
#define PAC_DEFAULT_PEER_MSS 536

/* Returns 'n' zeroed elements of 'size' bytes starting on a cache line
 * (free() frees them), or NULL.  A 128-byte flow then fills exactly two
 * lines, where malloc()'s 16-byte alignment spreads each over three. */
static inline void *
pac_zalloc_lines(size_t n, size_t size)
{
    size_t bytes;
    void *p;

    if (size && n > SIZE_MAX / size) {
        return NULL;
    }
    bytes = n * size;
    if (posix_memalign(&p, 64, bytes > 0 ? bytes : 1)) {
        return NULL;
    }
    memset(p, 0, bytes);
    return p;
}

/* Keys of the flow hash (pac-flow.c), one per product input. */
#define PAC_N_HASH_KEYS 6

/* Most flows in one bucket's chain (pac-flow.c).  With random keys and at
 * least as many buckets as flows, a chain of 16 is far beyond what chance
 * makes (the longest of 16 384 is about 7); only keys aimed at one bucket
 * reach it. */
#define PAC_MAX_CHAIN 16

/* Flow flags. */
#define PAC_F_IN_USE        0x01
#define PAC_F_SLOW_START    0x02    /* Inferred TCP phase of the peer. */
#define PAC_F_MEASURING     0x04    /* Counting the peer's unclocked burst. */
#define PAC_F_SYN_SENT      0x08    /* Receiver sent a SYN (it is client). */
#define PAC_F_SYNACK_SENT   0x10    /* Receiver sent a SYN-ACK (server). */
#define PAC_F_FIN_VM        0x40
#define PAC_F_FIN_PEER      0x80
#define PAC_F_ACK_BASE      0x100   /* last_ack is valid. */
#define PAC_F_RCV_BASE      0x200   /* rcv_nxt is valid. */
#define PAC_F_IN_RESP       0x400   /* resp_start is valid. */
#define PAC_F_BUDGET        0x800   /* budget_end is valid. */
#define PAC_F_ON_OUT_LIST   0x1000  /* On the outstanding list. */
#define PAC_F_RR_DIRTY      0x20    /* On pac->rr_dirty (pac-rr.c). */
#define PAC_F_BUSY          0x4000  /* Counted in pac->n_busy. */
#define PAC_F_DRY           0x2000  /* The peer left triggered data unsent:
                                     * its ACKs trigger nothing. */
#define PAC_F_RESYNC        0x8000  /* Sequence state not followed: the
                                     * flow was seen, or kept, while PAC
                                     * tracked no connection (pac-watch.c);
                                     * its next tracked segment picks it up
                                     * as one first seen mid-stream. */

/* pac_flow's 'mss_from': 'mss' is the least MSS option of the handshake
 * segments seen, the receiver's and the peer's.  With both, it bounds the
 * payload of the peer's segments. */
#define PAC_MSS_VM          0x1
#define PAC_MSS_PEER        0x2

/* One TCP connection; both directions map here.  "vm" is the receiver.
 *
 * Two cache lines, the array starting on one (pac_zalloc_lines()): the
 * first holds what the lookup compares and what decides whether a segment
 * can pass at once (flags, held packets, level); the second the sequence
 * state of the algorithm (budget, answers, window model, intervals), which
 * every segment of a tracked flow then reads.  The state of the window
 * clamp and of the verdicts sits apart, in pac->flow_wnd[]. */
struct pac_flow {
    /* Cache line 0: identity, chains, what a segment checks first. */
    uint8_t vm_addr[16];
    uint8_t peer_addr[16];
    uint16_t vm_port;
    uint16_t peer_port;
    uint32_t hash_next;         /* Bucket chain, or free list. */
    uint16_t flags;             /* PAC_F_*. */
    uint16_t mss;
    uint16_t n_held;
    uint8_t level : 4;
    uint8_t slowdowns : 2;      /* Consecutive intervals of BW reduction,
                                 * up to 2 (all that matters). */
    uint8_t mss_from : 2;       /* PAC_MSS_*: whose MSS option 'mss' has
                                 * seen. */
    uint8_t window_epoch;       /* pac->epoch when a window was counted. */
    uint32_t last_seen;         /* Time of the last packet, either way. */
    uint32_t held_head;         /* FIFO of held packets (oldest first). */
    uint32_t rr_prev;           /* Round-robin ring of the flow's level, */
    uint32_t rr_next;           /* while it has held packets. */

    /* Cache line 1: budget, answers, window model, intervals. */
    uint32_t held_tail;
    uint32_t last_ack;          /* ACK number of the last segment sent. */
    uint32_t rcv_nxt;           /* End of the highest segment received. */
    uint32_t budget_end;        /* Sequence up to which the peer has been
                                 * allowed to send, by released triggers. */
    uint32_t resp_start;        /* Sequence where the response began. */
    uint32_t last_resp;         /* Size of the previous response. */
    uint32_t cwnd;              /* Modelled window of the peer; 0: IW. */
    uint32_t burst_bytes;       /* Bytes of the burst being measured. */
    union {
        uint32_t hs_time;       /* During the handshake: when the SYN or
                                 * SYN-ACK went out. */
        uint32_t last_data;     /* Then: when data last arrived or a
                                 * trigger last went out. */
    };
    uint32_t out_prev;          /* Outstanding list: flows with triggered */
    uint32_t out_next;          /* data still to come, oldest data first. */
    uint32_t rx_bytes;          /* Payload received (saturating at 2^32 - 1):
                                 * drives MLFQ demotion. */
    uint32_t iv_start;          /* Per-flow control interval (III-C). */
    uint32_t iv_bytes;
    uint32_t iv_prev_rate;      /* Bytes per millisecond, last interval. */
    uint32_t rtt_us;            /* Handshake RTT; 0 = not measured. */
};

PAC_STATIC_ASSERT(offsetof(struct pac_flow, held_tail) == 64,
                  "struct pac_flow: the second part starts a cache line");
PAC_STATIC_ASSERT(sizeof(struct pac_flow) == 128,
                  "struct pac_flow fills two cache lines");

/* How many right edges before the newest a flow remembers: a peer sends up
 * to the edge of the newest ACK that has reached it, and PAC may have let
 * out newer ones meanwhile (docs/libpac.md, "Why these defaults", says
 * why 16 in all). */
#define PAC_OLD_EDGES 15

/* Per-flow state kept apart like pac_rr_node (a flow fills its two cache
 * lines): what the window clamp needs (pac-window.c), the answer before
 * last_resp, and the
 * dry verdicts' (a reclaimed budget, waits).  pac->flow_wnd[i] belongs to
 * pac->flows[i]. */
struct pac_flow_wnd {
    uint32_t right_edge;        /* ACK + window of the receiver's last
                                 * segment sent, if PAC_W_EDGE. */
    uint32_t old_edges[PAC_OLD_EDGES];  /* Earlier distinct right edges,
                                         * 'n_old_edges' of them, a ring
                                         * whose next slot is
                                         * 'old_edge_pos'. */
    uint32_t prev_resp;         /* Size of the response before the
                                 * flow's last_resp. */
    uint32_t reclaimed_end;     /* budget_end when a verdict that the peer
                                 * had sent all took its outstanding bytes,
                                 * if PAC_W_RECLAIMED. */
    uint32_t request_held;      /* The newest held request (a held packet's
                                 * index), if PAC_W_REQUEST_HELD. */
    uint32_t pure_max;          /* Highest ACK number of the pure ACKs held
                                 * since the flow last held nothing, if
                                 * PAC_W_PURE_MAX. */
    uint32_t stale_below;       /* While PAC_W_STALE, after a stale-ACK */
    uint32_t stale_tail;        /* detection: pure_max then, and the flow's
                                 * tail then.  The pure ACKs up to that
                                 * tail below that ACK number are dropped
                                 * as they reach the head. */
    uint16_t bits;              /* PAC_W_*. */
    uint8_t vm_wscale;          /* Window scale option of the receiver. */
    uint8_t dry_waits;          /* Dry times the peer's silence mid-answer
                                 * has been given (pac_reclaim_dry()). */
    uint8_t n_old_edges;
    uint8_t old_edge_pos;
    uint16_t rx_max_len;        /* Largest payload of one segment from the
                                 * peer, of those no larger than the
                                 * flow's MSS (pac_is_short_segment()). */
    uint32_t own_unattributed;  /* What the flow's triggers added to the
                                 * unattributed part of in_flight while it
                                 * had no sequence number to attach them
                                 * to (pac_account_send()); its first data
                                 * claims it (pac_note_first_data()). */
};

#define PAC_W_VM_SYN    0x01    /* Receiver's SYN or SYN-ACK seen... */
#define PAC_W_VM_WS     0x02    /* ...with a window scale option. */
#define PAC_W_PEER_SYN  0x04    /* Peer's SYN or SYN-ACK seen... */
#define PAC_W_PEER_WS   0x08    /* ...with a window scale option. */
#define PAC_W_EDGE      0x10    /* 'right_edge' is valid. */
#define PAC_W_LIMITED   0x20    /* The peer filled the window: its own
                                 * window is at least the receiver's. */
#define PAC_W_RECLAIMED 0x40    /* 'reclaimed_end' is valid: no trigger
                                 * went out since the verdict. */
#define PAC_W_REQUEST_HELD 0x80  /* 'request_held' is valid. */
#define PAC_W_PURE_MAX  0x100   /* 'pure_max' is valid. */
#define PAC_W_STALE     0x200   /* 'stale_below' is valid. */
#define PAC_W_DATA      0x400   /* Data arrived since PAC follows the
                                 * flow's sequence numbers. */
#define PAC_W_HS_QUIET  0x800   /* The receiver accepted the connection and
                                 * its peer has sent no data since
                                 * (pac-handshake.c). */
#define PAC_W_HS_POOL   0x1000  /* A quiet flow whose window is in the
                                 * pool, counted in n_hs_pool. */
#define PAC_W_HS_UNCHARGED 0x2000  /* A quiet flow whose window trigger went
                                    * out uncharged in a flood. */
#define PAC_W_LONE      0x4000  /* The receiver opened or accepted the
                                 * connection on its own, not in a burst
                                 * of connections (pac_note_open()). */
#define PAC_W_SCALE_KNOWN (PAC_W_VM_SYN | PAC_W_PEER_SYN)
/* What the handshakes told of the window scales (pac_resync_flow() keeps
 * them). */
#define PAC_W_SCALE_BITS (PAC_W_VM_SYN | PAC_W_VM_WS | PAC_W_PEER_SYN \
                          | PAC_W_PEER_WS)
/* What describes the connection rather than where it stands: kept by
 * pac_resync_flow(). */
#define PAC_W_KEPT_BITS (PAC_W_SCALE_BITS | PAC_W_LONE)

/* Node of the treap that indexes a flow's MLFQ ring (pac-rr.c), while the
 * flow has held packets: pac->rr_nodes[i] belongs to pac->flows[i].  Kept
 * apart so that a flow stays within two cache lines.  Keys: when the flow's
 * head is eligible. */
struct pac_rr_node {
    uint32_t tr_out;            /* Eligible if below the fair share... */
    uint32_t tr_mss;            /* ...if admission allows this MSS. */
    uint32_t ag_out_min;        /* Least tr_out in the subtree. */
    uint32_t ag_mss_min;        /* Least tr_mss in the subtree. */
    uint32_t tr_left, tr_right, tr_parent;
    uint32_t tr_size;           /* Nodes in the subtree. */
    uint8_t tr_bits;            /* PAC_RR_* of the head. */
    uint8_t ag_bits;            /* OR of tr_bits over the subtree. */
};

/* Ring index keys (pac-rr.c): a flow's head... */
#define PAC_RR_ELIGIBLE 0x01    /* ...is eligible, whatever the totals; */
#define PAC_RR_CAPPED   0x02    /* ...is an ACK capped by
                                 * pac_response_room(); */
#define PAC_RR_FREE     0x04    /* ...triggers nothing; */
#define PAC_RR_WINDOW   0x08    /* ...is a window trigger subject to
                                 * admission (tr_mss is the flow's MSS); */
#define PAC_RR_NEW      0x10    /* ...is a new connection's
                                 * (pac_flow_is_new()); */
#define PAC_RR_SYN      0x20    /* ...is the receiver's SYN. */


/* What a search of a ring looks for (pac_rr_iter_next()): a flow whose
 * head's keys (struct pac_rr_keys) have one of 'bits', or an 'out' below
 * 'out_below', or an 'mss' of at most 'mss_upto'. */
struct pac_rr_query {
    uint8_t bits;
    uint64_t out_below;
    int64_t mss_upto;
};

/* A flow's head as the ring index sees it (pac_rr_keys_fn computes them,
 * pac-sched.c): the head matches a query whose 'bits' share one of 'bits',
 * or whose 'out_below' exceeds 'out', or whose 'mss_upto' is at least
 * 'mss'. */
struct pac_rr_keys {
    uint8_t bits;               /* PAC_RR_*. */
    uint32_t out;
    uint32_t mss;
};
struct pac;
typedef void pac_rr_keys_fn(const struct pac *, uint32_t flow_idx,
                            struct pac_rr_keys *);

/* Looks for flows whose heads match a query, in ring order from a level's
 * cursor, whether the ring is indexed or walked (pac_rr_iter_init()). */
struct pac_rr_iter {
    int level;
    uint32_t next;              /* The flow to look at next. */
    uint32_t left;              /* Flows left to look at. */
};

/* Held-packet classes: each has its own hold bound and age FIFO. */
enum pac_class {
    PAC_CLASS_ACK,              /* Clocks a running sender: max_hold_us. */
    PAC_CLASS_TRIGGER,          /* Starts an idle peer: max_hold_trigger. */
    PAC_N_CLASSES
};

/* Held-packet kinds. */
#define PAC_K_ACK       0       /* Anything ACK-like: trigger per eq. (3). */
#define PAC_K_REQUEST   1       /* Data to an idle peer. */
#define PAC_K_HANDSHAKE 2       /* SYN-ACK from the receiver. */

/* Held-packet flags. */
#define PAC_H_ECE   0x01        /* The segment carried ECE. */
#define PAC_H_PURE  0x02        /* Pure ACK: no payload, SYN, FIN or RST. */
#define PAC_H_SYN   0x04        /* The receiver's SYN. */
#define PAC_H_WAITING 0x08      /* Data behind its flow's head, on the
                                 * waiting list (pac-queue.c). */
#define PAC_H_COPIED 0x10       /* A request whose copy carried its own
                                 * ACK number (head_copy()): the peer has
                                 * that ACK number. */
#define PAC_H_NO_ACK 0x20       /* The segment carried no ACK number (the
                                 * receiver's SYN): 'ack' is its flow's
                                 * last_ack when it was held, which may
                                 * predate PAC_F_ACK_BASE. */
#define PAC_H_FORESEEN 0x40     /* A window trigger that the foresight
                                 * walk has looked at: it lies at or before
                                 * foresight_last in its age FIFO
                                 * (n_foreseen counts them). */
#define PAC_H_COPY_SENT 0x80    /* A copy of it went (pac-sched.c). */

/* One held packet. */
struct pac_held {
    void *pkt;                  /* The caller's packet. */
    uint32_t flow_next;         /* Next held packet of the same flow. */
    uint32_t age_prev;          /* Age FIFO of the class (heads), or */
    uint32_t age_next;          /* the waiting list (PAC_H_WAITING). */
    uint32_t flow;              /* Index of the flow. */
    uint32_t enq_time;          /* When it was queued. */
    uint32_t head_since;        /* When it became its flow's head: its hold
                                 * clock (see pac-queue.c). */
    uint32_t ack;
    uint32_t payload_len;
    uint32_t bytes;             /* The packet's IP bytes (held_bytes). */
    uint8_t kind;               /* PAC_K_*. */
    uint8_t flags;              /* PAC_H_*. */
    uint16_t window;            /* Raw window field, as it will be sent. */
};

struct pac {
    struct pac_config cfg;

    /* Flow table (pac-flow.c). */
    struct pac_flow *flows;     /* cfg.max_flows entries. */
    struct pac_flow_wnd *flow_wnd;  /* cfg.max_flows entries. */
    uint32_t *buckets;
    uint32_t bucket_mask;
    uint64_t hash_keys[PAC_N_HASH_KEYS];   /* From cfg.hash_seed. */
    uint32_t flow_free;         /* Free list through hash_next. */
    uint32_t n_flows;
    uint32_t clock_hand;        /* Eviction sampling position. */
    uint32_t n_resync;          /* Flows marked PAC_F_RESYNC (the fast
                                 * path, pac-watch.c). */

    /* Held packets and MLFQ (pac-queue.c). */
    struct pac_held *held;      /* cfg.max_held entries. */
    uint32_t held_free;         /* Free list through flow_next. */
    uint32_t n_held;
    uint64_t held_bytes;        /* Their IP bytes (cfg.max_held_bytes). */
    uint32_t age_head[PAC_N_CLASSES];
    uint32_t age_tail[PAC_N_CLASSES];
    /* The last window trigger of its age FIFO that pac_copy_requests() has
     * looked at (those before it were looked at too), or PAC_NONE. */
    uint32_t copy_last;
    /* The same for the walk that copies requests PAC expects to wait long
     * (pac-sched.c, copy_foreseen()), and how many of the window triggers
     * now in the FIFO it has looked at (PAC_H_FORESEEN): all those ahead of
     * the next one it looks at. */
    uint32_t foresight_last;
    uint32_t n_foreseen;
    /* Held segments with data that are not their flow's head and have no
     * copy yet, oldest first, through age_prev/age_next (pac-queue.c). */
    uint32_t wait_head;
    uint32_t wait_tail;
    pac_copy_cb *copy_cb;       /* pac_set_copy_cb(). */
    uint32_t rr_cursor[PAC_MAX_LEVELS];     /* Next flow to serve. */
    uint32_t rr_n_flows[PAC_MAX_LEVELS];    /* Flows on each ring. */
    uint32_t n_held_level[PAC_MAX_LEVELS];

    /* The rings' index (pac-rr.c). */
    bool rr_indexed[PAC_MAX_LEVELS];        /* The ring has an index: */
    uint32_t tr_root[PAC_MAX_LEVELS];       /* its treap. */
    struct pac_rr_node *rr_nodes;   /* cfg.max_flows entries. */
    uint32_t *rr_dirty;         /* Flows whose index keys are stale. */
    uint32_t n_rr_dirty;
    pac_rr_keys_fn *rr_keys;    /* Computes a flow's keys (pac-sched.c). */

    /* In-flight estimate (pac-budget.c) and threshold control
     * (pac-control.c). */
    uint64_t now;               /* Latest time seen. */
    uint64_t in_flight;         /* Outstanding bytes of all flows, plus: */
    uint64_t unattributed;      /* Triggers of flows with no rcv_nxt yet. */
    uint64_t threshold;
    uint64_t iv_start;          /* Instance control interval. */
    uint64_t iv_bytes;
    uint64_t iv_pkts;
    uint64_t iv_ce;
    uint64_t iv_holes;          /* Data segments past a gap (upstream loss). */
    uint64_t loss_cap;          /* Threshold ceiling lowered by losses. */
    uint64_t loss_cap_grown;    /* Last time it grew back. */
    double bw_smooth;           /* BW_S, bytes per microsecond. */
    double pkt_rate_smooth;     /* The same in segments (see eq. 6). */
    double in_flight_smooth;    /* in_flight_S. */
    double bw_max;              /* Peak receive rate, bytes per us, over
                                 * PAC_RATE_WINDOW_US windows. */
    uint64_t rate_start;        /* Start of the current rate window. */
    uint64_t rate_bytes;        /* Bytes received in it. */
    uint64_t silent_since;      /* Start of a spell with no data... */
    bool silent;                /* ...if there is one. */
    uint32_t tx_held;           /* pac_tx()'s own held packet, or PAC_NONE. */
    bool tx_pkt_released;       /* It was released during that call. */
    bool in_batch;              /* Between pac_batch_begin() and _end(): the
                                 * scheduler waits for the end. */
    uint64_t last_window_release;   /* Last window trigger sent. */
    uint64_t last_reset;        /* Last silence reset (0: none). */
    uint32_t out_head;          /* Outstanding list (see pac_flow). */
    uint32_t out_tail;
    uint32_t n_outstanding;     /* Flows on it. */
    uint32_t n_busy;            /* Flows answering or waiting for ACKs. */
    uint8_t epoch;              /* Bumped when in_flight is reset. */
    bool have_rtt;              /* avg_base_rtt_us was measured. */
    uint32_t avg_base_rtt_us;   /* EWMA of handshake RTTs. */
    uint32_t min_rtt_us;        /* Least handshake RTT: the path without
                                 * queues. */
    uint32_t avg_hold_us;       /* EWMA of PAC's delay of ACKs. */
    uint32_t late_us;           /* Longest silence after which data PAC
                                 * had stopped expecting came (decays). */
    uint64_t last_rx_data;      /* When data last arrived, any flow. */
    uint64_t last_trigger_turn; /* When a window trigger last left in its
                                 * turn (PAC_REL_FIT). */
    /* The room, in bytes on the wire, that a new connection's window
     * trigger waits for, and (new_wait_seen) when a scheduler pass last
     * found it waiting: while it waits, older flows leave it that room
     * (pac_flow_fits()). */
    uint32_t new_wait_bytes;
    /* The least time a held request had waited when the receiver sent it
     * again (its retransmission timer had run out), microseconds; 0 if it
     * never has.  Requests are copied after half of it (pac_copy_delay()). */
    uint32_t vm_rto_seen_us;
    uint64_t new_wait_seen;
    /* When the receiver last opened or accepted a connection
     * (pac_note_open()), 0 if never; older flows leave room to new ones
     * only for a while after it. */
    uint64_t new_flow_seen;
    /* The receiver's connection openings (SYNs and SYN-ACKs) since
     * open_burst_start, within PAC_LONE_WINDOW_US (pac_note_open()), up to
     * PAC_LONE_MAX + 1; the flows of the first PAC_LONE_MAX; new_flow_seen
     * before them. */
    uint64_t open_burst_start;
    uint32_t open_burst_n;
    uint32_t open_lone[PAC_LONE_MAX];
    uint64_t open_burst_prev_seen;

    /* Accepted connections whose peer has sent nothing yet
     * (pac-handshake.c): how many have their window in the pool, and the
     * recent outcomes of such windows, halved every PAC_HS_DECAY_US from
     * hs_decay_start. */
    uint32_t n_hs_pool;
    uint32_t hs_wasted;         /* Given up as dry. */
    uint32_t hs_answered;       /* Their peer sent data. */
    uint64_t hs_decay_start;
    uint64_t next_scan;         /* Idle-flow expiry. */

    /* The fast path (pac-watch.c).  'tracking' is pac_tracking(): always
     * true without cfg.fast_path. */
    bool tracking;
    bool watch_walking;         /* Marking the flows PAC_F_RESYNC, from... */
    uint32_t watch_cursor;      /* ...this bucket on. */
    uint64_t watch_est;         /* Payload the recent window triggers that
                                 * passed untracked may still bring. */
    uint64_t watch_last_trigger;    /* When the last of them passed. */
    uint64_t watch_quiet_since; /* While tracking: PAC last seen busy. */
    uint64_t watch_held_mark;   /* stats.tx_held then. */

    struct pac_stats stats;     /* Counters; gauges filled on demand. */
};

/* Wrap-safe elapsed time between two 32-bit microsecond stamps. */
static inline uint32_t
pac_elapsed32(uint64_t now, uint32_t then)
{
    return (uint32_t) now - then;
}

/* TCP sequence comparisons. */
static inline bool
pac_seq_lt(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) < 0;
}

static inline bool
pac_seq_gt(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) > 0;
}

/* Per-flow state kept beside the flow table. */
static inline struct pac_flow_wnd *
pac_flow_wnd(const struct pac *pac, const struct pac_flow *f)
{
    return &pac->flow_wnd[f - pac->flows];
}

/* The bytes flow 'f's released triggers allowed its peer to send that have
 * not arrived yet: its share of in_flight (pac-budget.c). */
static inline uint32_t
pac_flow_outstanding(const struct pac_flow *f)
{
    return ((f->flags & PAC_F_BUDGET) && (f->flags & PAC_F_RCV_BASE)
            && pac_seq_gt(f->budget_end, f->rcv_nxt)
            ? f->budget_end - f->rcv_nxt : 0);
}

/* Where the data that the peer of flow 'f' may have sent ends: the end of
 * its budget (what released triggers allowed), or what has arrived if
 * that is further or there is no budget. */
static inline uint32_t
pac_allowed_end(const struct pac_flow *f)
{
    return ((f->flags & PAC_F_BUDGET) && pac_seq_gt(f->budget_end, f->rcv_nxt)
            ? f->budget_end : f->rcv_nxt);
}

/* Whether held packet 'p' of flow 'f' is a request that data of the flow
 * has passed (arrived past its ACK number): an answer was still under way
 * when the receiver sent it, so it is an ACK with data, as pac_tx() would
 * have classified it had that data come first.  pac_rx() changes such a
 * head, pac_queue_unlink() one that becomes the head. */
static inline bool
pac_request_passed_by_data(const struct pac_flow *f,
                           const struct pac_held *p)
{
    return (p->kind == PAC_K_REQUEST && (f->flags & PAC_F_RCV_BASE)
            && pac_seq_gt(f->rcv_nxt, p->ack));
}

/* The initial window of an idle peer whose MSS is 'mss', in payload bytes:
 * what a request or a SYN-ACK to it lets loose before anything is learned
 * of it. */
static inline uint32_t
pac_init_window(const struct pac *pac, uint32_t mss)
{
    return pac->cfg.init_window_segs * mss;
}

/* pac-watch.c: the fast path. */
void pac_watch_init(struct pac *);
bool pac_watch_note_tx(struct pac *, uint8_t tcp_flags, uint32_t payload,
                       uint64_t now_us);
void pac_watch_note_rx(struct pac *, bool synack, uint32_t payload);
void pac_watch_run(struct pac *);
uint64_t pac_watch_wakeup(const struct pac *);

/* pac-sched.c: the release loop. */
void pac_schedule(struct pac *, pac_emit_cb *, void *aux);
void pac_release_head(struct pac *, uint32_t flow_idx,
                      enum pac_release_cause, pac_emit_cb *, void *aux);
void pac_release_flow(struct pac *, uint32_t flow_idx,
                      enum pac_release_cause, pac_emit_cb *, void *aux);
void pac_release_oldest(struct pac *, enum pac_release_cause,
                        pac_emit_cb *, void *aux);
void pac_release_expired(struct pac *, enum pac_class first,
                         pac_emit_cb *, void *aux);
void pac_drop_stale_heads(struct pac *, uint32_t flow_idx,
                          pac_emit_cb *, void *aux);
uint64_t pac_hold_deadline(const struct pac *);
void pac_copy_requests(struct pac *, void *aux);
uint64_t pac_copy_deadline(const struct pac *);
void pac_head_keys(const struct pac *, uint32_t flow_idx,
                   struct pac_rr_keys *);

/* pac-control.c: the control interval and its filters. */
void pac_set_now(struct pac *, uint64_t now);
void pac_control_restart(struct pac *);
uint32_t pac_control_interval(const struct pac *);
void pac_note_ack_delay(struct pac *, uint32_t delay_us);
void pac_note_rtt(struct pac *, struct pac_flow *);
void pac_flow_interval(struct pac *, struct pac_flow *, uint32_t bytes);

/* pac-budget.c: per-flow budgets, the outstanding list, verdicts. */
void pac_account_send(struct pac *, struct pac_flow *,
                      const struct pac_held *, uint32_t trigger);
void pac_credit_rx(struct pac *, uint32_t len, uint32_t credited, bool syn);
void pac_note_first_data(struct pac *, uint32_t flow_idx, uint32_t seq,
                         uint32_t len);
void pac_out_list_update(struct pac *, uint32_t flow_idx, bool data);
void pac_update_busy(struct pac *, uint32_t flow_idx);
uint32_t pac_dry_time(const struct pac *);
void pac_reclaim_dry(struct pac *);
void pac_reclaim_outstanding(struct pac *, uint32_t flow_idx);
void pac_forget_flow(struct pac *, uint32_t flow_idx);
void pac_resync_flow(struct pac *, uint32_t flow_idx);
void pac_reclaim_on_verdict(struct pac *, uint32_t flow_idx);
void pac_restore_reclaimed(struct pac *, struct pac_flow *,
                           const struct pac_segment *);
void pac_note_late_data(struct pac *);

/* pac-trigger.c: triggers and the answer model. */
uint32_t pac_trigger_bytes(const struct pac *, const struct pac_flow *,
                           const struct pac_held *);
bool pac_fits(const struct pac *, uint32_t trigger);
bool pac_flow_is_new(const struct pac *, const struct pac_flow *);
bool pac_flow_fits(const struct pac *, const struct pac_flow *,
                   uint32_t trigger);
void pac_note_new_wait(struct pac *, uint32_t trigger);
void pac_note_open(struct pac *, struct pac_flow *);
bool pac_head_fits(const struct pac *, const struct pac_flow *,
                   const struct pac_held *, uint32_t trigger);

/* pac-handshake.c: connections the receiver accepts. */
bool pac_handshake_flood(const struct pac *);
void pac_handshake_accepted(struct pac *, struct pac_flow *);
bool pac_handshake_room(const struct pac *, const struct pac_flow *,
                        const struct pac_held *);
void pac_handshake_uncharge(struct pac *, struct pac_flow *);
bool pac_handshake_pass_uncharged(struct pac *, struct pac_flow *,
                                  const struct pac_held *);
void pac_handshake_charged(struct pac *, struct pac_flow *,
                           const struct pac_held *, uint32_t trigger);
void pac_handshake_reclaimed(struct pac *, uint32_t idx, bool dry);
void pac_handshake_answered(struct pac *, struct pac_flow *);
void pac_handshake_confirmed(struct pac *, uint32_t idx);
uint32_t pac_copy_delay(const struct pac *);
void pac_foresight_restart(struct pac *);
uint32_t pac_peer_cwnd(const struct pac *, const struct pac_flow *);
uint32_t pac_ack_delta(const struct pac_flow *, uint32_t ack);
uint32_t pac_received_delta(const struct pac_flow *, uint32_t ack);
bool pac_is_dup_ack(const struct pac_flow *, const struct pac_held *);
bool pac_window_pending(const struct pac *, const struct pac_flow *);
bool pac_acks_no_new_answer(const struct pac_flow *, uint32_t ack);
bool pac_repeated_request(const struct pac_flow *, const struct pac_held *);
uint32_t pac_ack_frame_bytes(const struct pac_flow *,
                             const struct pac_held *);
uint32_t pac_answer_size(const struct pac_flow *, uint32_t ack);
uint32_t pac_expected_answer(const struct pac *, const struct pac_flow *,
                             const struct pac_held *);
bool pac_answer_unfinished(const struct pac *, const struct pac_flow *);
uint32_t pac_response_room(const struct pac *, const struct pac_flow *);
bool pac_is_short_segment(const struct pac *, const struct pac_flow *,
                          uint32_t len);

/* pac-window.c: the receive-window clamp and the window's right edges. */
/* What pac_window_cap() gives a flow whose window is not clamped. */
#define PAC_MAX_CWND (64u << 20)
uint32_t pac_window_cap(const struct pac *, const struct pac_flow *);
unsigned int pac_window_scale(const struct pac *, const struct pac_flow *);
void pac_window_note_wscale(struct pac *, uint32_t flow_idx,
                            const struct pac_segment *, bool vm);
uint32_t pac_window_room(const struct pac *, const struct pac_flow *,
                         const struct pac_held *);
uint16_t pac_window_to_edge(const struct pac *, const struct pac_flow *,
                            uint32_t ack);
uint16_t pac_window_to(const struct pac *, const struct pac_flow *,
                       uint32_t ack, uint32_t edge);
void pac_window_note_edge(struct pac *, const struct pac_flow *,
                          const struct pac_held *);
void pac_window_note_fill(struct pac *, const struct pac_flow *,
                          uint32_t end);
bool pac_window_at_edge(const struct pac *, const struct pac_flow *,
                        uint32_t end);
bool pac_window_may_fill(const struct pac *, const struct pac_flow *,
                         uint32_t len);
void pac_window_clamp(struct pac *, const struct pac_flow *,
                      struct pac_segment *);

/* pac-flow.c; its per-packet lookups are inline in pac-flow.h. */
bool pac_flow_table_init(struct pac *);
void pac_flow_table_free(struct pac *);
uint32_t pac_flow_insert(struct pac *, const uint8_t vm_addr[16],
                         uint16_t vm_port, const uint8_t peer_addr[16],
                         uint16_t peer_port, uint32_t hash);
void pac_flow_remove(struct pac *, uint32_t idx);
bool pac_flow_chain_full(const struct pac *, uint32_t hash);
uint32_t pac_flow_pick_victim(struct pac *);

/* pac-queue.c.  Pushing and unlinking may change whether a flow is busy:
 * the caller then calls pac_update_busy(). */
bool pac_queue_init(struct pac *);
void pac_queue_free(struct pac *);
uint32_t pac_queue_push(struct pac *, uint32_t flow_idx, void *pkt,
                        const struct pac_held *);
uint32_t pac_queue_pop_head(struct pac *, uint32_t flow_idx);
void pac_queue_unwait(struct pac *, uint32_t h);
void pac_queue_head_to_ack(struct pac *, uint32_t flow_idx);
void pac_queue_unlink(struct pac *, uint32_t flow_idx, uint32_t prev,
                      uint32_t h);
void pac_queue_set_level(struct pac *, uint32_t flow_idx, uint8_t level);
int pac_queue_top_level(const struct pac *);
enum pac_class pac_held_class(const struct pac_held *);

/* pac-rr.c.  A level's ring is indexed while it has more than
 * PAC_RR_INDEX_ON flows, and until it has fewer than PAC_RR_INDEX_OFF: a
 * short ring is walked faster than an index is kept up to date. */
#ifndef PAC_RR_INDEX_ON
#define PAC_RR_INDEX_ON 64
#endif
#ifndef PAC_RR_INDEX_OFF
#define PAC_RR_INDEX_OFF 32
#endif

bool pac_rr_init(struct pac *, pac_rr_keys_fn *);
void pac_rr_free(struct pac *);
void pac_rr_build(struct pac *, int level);
void pac_rr_trim(struct pac *);
void pac_rr_insert(struct pac *, uint32_t flow_idx, uint32_t before);
void pac_rr_remove(struct pac *, uint32_t flow_idx);
void pac_rr_mark_all(struct pac *);
void pac_rr_iter_init(struct pac_rr_iter *, const struct pac *, int level,
                      uint32_t n);
uint32_t pac_rr_iter_next(struct pac *, struct pac_rr_iter *,
                          const struct pac_rr_query *);

/* Lists flow 'idx' on pac->rr_dirty, once. */
static inline void
pac_rr_mark_dirty(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];

    if (!(f->flags & PAC_F_RR_DIRTY)) {
        f->flags |= PAC_F_RR_DIRTY;
        pac->rr_dirty[pac->n_rr_dirty++] = idx;
    }
}

/* Marks flow 'idx': its keys must be recomputed before the next search.
 * Only a flow in an index has keys, so a flow that holds nothing or whose
 * ring is walked is left alone (most packets, and all of them while PAC
 * holds nothing); pac_rr_insert() marks a flow when it enters an index.
 * Inline: pac_rx() and pac_tx() call it on every segment. */
static inline void
pac_rr_mark(struct pac *pac, uint32_t idx)
{
    const struct pac_flow *f = &pac->flows[idx];

    if (f->n_held && pac->rr_indexed[f->level]) {
        pac_rr_mark_dirty(pac, idx);
    }
}

#endif /* pac-private.h */
