/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef SIM_PRIVATE_H
#define SIM_PRIVATE_H 1

/* Internals shared by the simulator's files, top down:
 *
 *   sim.c           configuration, run loop and event dispatch, the
 *                   application (rounds), output.
 *   sim-sender.c    the senders' TCP (NewReno servers).
 *   sim-receiver.c  the receiver's TCP (the client).
 *   sim-net.c       sender NICs, the bottleneck switch, the reverse path,
 *                   and libpac on the receiver's port.
 *   sim-pkt.c       packets: pool, byte-level IPv4/TCP building, checks.
 *   sim-timer.c     timers on the event queue.
 *   sim-rtt.c       RTT estimator, RTO, TCP timestamp clock.
 *   sim-random.c    the random number generator.
 *   sim-stats.c     counters, samples and the figures of the results.
 *   sim-trace.c     the event trace.
 *   sim-heap.c      event queue.
 *
 * Each file calls only into the files below it.  The receiver and the
 * senders report to the application through 'struct sim_app'; a segment
 * reaches the senders' and the receiver's TCP through sim.c's dispatch of
 * its arrival event, so the TCPs call the network to send and the network
 * never calls a TCP. */

#include <stdbool.h>
#include <stdint.h>

#include "pac.h"
#include "sim.h"
#include "sim-heap.h"

#define SIM_NS_PER_US 1000ULL
#define SIM_NS_PER_MS 1000000ULL
#define SIM_NS_PER_S 1000000000ULL
#define SIM_NEVER UINT64_MAX

/* Largest RTO after backoff (Linux's TCP_RTO_MAX). */
#define SIM_RTO_MAX_NS (120 * SIM_NS_PER_S)

/* Receive buffer the receiver advertises, and its window scale. */
#define SIM_RCV_WSCALE 7
#define SIM_RCV_BUFFER (6u * 1024 * 1024)

/* Port every sender listens on. */
#define SIM_SERVER_PORT 5001

enum sim_event_type {
    SIM_EV_SWITCH_ARRIVE,       /* 'ptr' packet reaches the ToR switch. */
    SIM_EV_SWITCH_DONE,         /* The bottleneck sent its head packet. */
    SIM_EV_RCV_ARRIVE,          /* 'ptr' packet reaches the receiver. */
    SIM_EV_SND_ARRIVE,          /* 'ptr' packet reaches sender 'idx'. */
    SIM_EV_SND_TIMER,           /* Sender 'idx': RTO / SYN-ACK timer. */
    SIM_EV_RCV_TIMER,           /* Receiver side of 'idx': RTO timer. */
    SIM_EV_DELACK_TIMER,        /* Receiver side of 'idx': delayed ACK. */
    SIM_EV_PAC_TIMER,           /* pac_run() is due. */
    SIM_EV_ROUND_START,         /* The receiver issues the next round. */
};

/* A timer that queues at most one live event: re-arming it later than the
 * queued event costs nothing (the event re-queues itself when it fires
 * early); only re-arming it earlier queues another event. */
struct sim_timer {
    uint64_t deadline;          /* SIM_NEVER: disarmed. */
    uint64_t queued_at;         /* Time of the live queued event. */
    bool queued;
};

/* One TCP segment on the wire.  The fields are exactly what sim-pkt.c
 * writes into the IPv4/TCP header when the packet is built. */
struct sim_pkt {
    struct sim_pkt *next;       /* Switch queue or free list. */
    uint32_t conn;              /* Connection index (= sender index). */
    bool to_receiver;           /* Direction. */
    bool held;                  /* Owned by libpac right now. */
    uint8_t flags;              /* PAC_TCP_*. */
    uint32_t seq;               /* Wire sequence number. */
    uint32_t ack;               /* Wire acknowledgement number. */
    uint32_t len;               /* TCP payload bytes. */
    uint32_t tsval;
    uint32_t tsecr;
    uint16_t window;            /* Raw window field. */
    uint64_t born_ns;           /* When its endpoint emitted it. */
};

/* RFC 6298 estimator; the RTO is srtt + max(4 * rttvar, RTOmin) like
 * Linux's. */
struct sim_rtt {
    uint64_t srtt_ns;
    uint64_t rttvar_ns;
    bool valid;
};

/* A data segment a sender has sent at least once. */
struct sim_seg {
    uint64_t start;             /* Stream offset of its first byte. */
    uint64_t sent_ns;           /* Its last transmission. */
    uint32_t len;
    bool retransmitted;         /* Karn: no RTT sample. */
};

enum sim_tcp_state {
    SIM_TCP_CLOSED,
    SIM_TCP_SYN_SENT,           /* Receiver: SYN out. */
    SIM_TCP_SYN_RCVD,           /* Sender: SYN-ACK out. */
    SIM_TCP_ESTABLISHED,
    SIM_TCP_FIN_SENT,           /* Receiver: FIN out. */
    SIM_TCP_LAST_ACK,           /* Sender: FIN out after the peer's. */
    SIM_TCP_DONE,
};

/* A sender: the server side of one connection, TCP NewReno. */
struct sim_snd {
    enum sim_tcp_state state;
    uint32_t iss;               /* Our initial sequence number. */
    uint32_t irs;               /* The receiver's. */
    uint32_t ts_offset;         /* Our timestamp clock's origin. */
    uint32_t ts_recent;         /* Peer's latest TSval. */

    /* Requests received (byte offsets in the receiver's stream). */
    uint64_t rcv_nxt;
    uint64_t requests_served;

    /* Response data (byte offsets in our stream, 0 = first data byte). */
    uint64_t snd_una;
    uint64_t snd_max;           /* Highest byte sent + 1. */
    uint64_t app_end;           /* Bytes the application has written. */
    struct sim_seg *segs;       /* Ring of segments [una_i, max_i). */
    uint64_t seg_cap;
    uint64_t una_i;             /* First unacknowledged segment. */
    uint64_t nxt_i;             /* Next segment to (re)send. */
    uint64_t max_i;             /* Segments created. */
    uint64_t snd_wnd;           /* The receiver's window, bytes from
                                 * snd_una. */

    /* Congestion control, in segments. */
    uint32_t cwnd;
    uint32_t cwnd_cnt;
    uint32_t ssthresh;
    uint32_t dupacks;
    bool in_recovery;
    bool recover_valid;
    uint64_t recover;           /* NewReno's 'recover'. */
    bool is_cwnd_limited;       /* Linux's cwnd validation. */
    uint32_t max_packets_out;
    uint64_t cwnd_usage_seq;

    /* Retransmission timer. */
    struct sim_rtt rtt;
    uint32_t backoff;
    bool loss_episode;          /* ssthresh already cut for this RTO run. */
    struct sim_timer timer;
    uint64_t last_send_ns;      /* Last data transmission. */
    uint64_t synack_ns;         /* SYN-ACK (first) transmission. */
    bool synack_retx;

    uint64_t nic_free_ns;       /* Access link busy until. */
    uint64_t emitted;           /* Segments sent, of any kind. */
};

/* The receiver's side of one connection: the client. */
struct sim_rcv_ooo {
    uint64_t start;
    uint64_t end;
};

struct sim_rcv {
    enum sim_tcp_state state;
    uint32_t iss;
    uint32_t irs;
    uint16_t port;              /* Our ephemeral port. */
    uint32_t ts_offset;
    uint32_t ts_recent;

    /* Response data received (offsets in the sender's stream). */
    uint64_t rcv_nxt;
    struct sim_rcv_ooo *ooo;    /* Out-of-order ranges, sorted, disjoint. */
    uint32_t n_ooo;
    uint32_t ooo_cap;
    uint64_t expect_end;        /* End of the response awaited. */
    bool awaiting;              /* A response of this round is due. */
    uint64_t request_ns;        /* When this round's request was issued. */

    /* Requests sent (offsets in our stream). */
    uint64_t snd_una;
    uint64_t snd_nxt;
    uint64_t req_sent_ns;
    bool req_retx;
    struct sim_rtt rtt;
    uint32_t backoff;
    struct sim_timer timer;     /* SYN or request retransmission. */
    uint64_t syn_ns;
    bool syn_retx;
    bool fin_acked;

    /* Delayed ACK. */
    uint32_t unacked_segs;
    struct sim_timer delack;
};

struct sim_chunk;
struct sim;

/* The application on top of the TCP endpoints (sim.c's rounds).  The
 * receiver and the senders report to it through these hooks, which
 * sim_run() installs in 'sim->app'. */
struct sim_app {
    /* The receiver's side of connection 'i' is established. */
    void (*conn_established)(struct sim *, uint32_t i);

    /* This round's response on connection 'i' has fully arrived. */
    void (*response_done)(struct sim *, uint32_t i);

    /* Sender 'i' got the last ACK of its connection. */
    void (*conn_closed)(struct sim *, uint32_t i);
};

struct sim {
    struct sim_config cfg;
    struct sim_result *res;
    struct sim_heap heap;
    uint64_t now;               /* Nanoseconds. */
    uint64_t rng;               /* splitmix64 state. */
    uint32_t n;
    struct sim_snd *snd;
    struct sim_rcv *rcv;
    uint64_t *resp_bytes;

    /* Network. */
    uint64_t d_snd_sw;          /* Sender -> switch propagation. */
    uint64_t d_sw_rcv;          /* Switch -> receiver propagation. */
    uint64_t d_rev;             /* Receiver -> sender, fixed. */
    struct sim_pkt *sw_head;    /* Bottleneck queue; head is on the wire. */
    struct sim_pkt *sw_tail;
    uint64_t sw_bytes;
    bool sw_busy;
    uint16_t ip_id;
    uint64_t fwd_payload;       /* Payload between sender NICs and the
                                 * receiver (for traces). */

    /* libpac. */
    struct pac *pac;
    struct sim_timer pac_timer;
    uint32_t held;              /* Packets libpac holds now. */
    struct sim_pkt *tx_pkt;     /* Packet inside pac_tx(), if any. */
    uint32_t pac_now_runs;      /* pac_run() calls in a row that left a
                                 * wakeup at once (the fast path's end of
                                 * tracking: a chunk per call). */

    /* Packet pool. */
    struct sim_pkt *free_pkts;
    struct sim_chunk *chunks;

    /* Rounds. */
    const struct sim_app *app;  /* The application's hooks. */
    uint32_t round;             /* 0: handshake; then 1..rounds. */
    bool in_round;
    uint64_t round_start_ns;
    uint32_t remaining;         /* Responses still due this round. */
    uint64_t round_timeouts;
    uint32_t established;
    uint32_t closed;
    bool finished;              /* Every round done, every FIN answered. */

    /* Samples. */
    uint64_t *rct_ns;
    size_t n_rct;
    size_t rct_cap;
    uint32_t *rtt_us;
    size_t n_rtt;
    size_t rtt_cap;
    uint64_t *round_ns;

    uint64_t trace_lines;

    /* Scratch space for building packets (IPv4 + TCP + payload). */
    uint8_t buf[65536];
};

/* sim-timer.c. */
void sim_timer_init(struct sim_timer *);
void sim_timer_arm(struct sim *, struct sim_timer *, uint64_t deadline,
                   uint32_t type, uint32_t idx);
void sim_timer_disarm(struct sim_timer *);
bool sim_timer_fire(struct sim *, struct sim_timer *,
                    const struct sim_event *);

/* sim-rtt.c. */
uint64_t sim_rto_ns(const struct sim *, const struct sim_rtt *,
                    uint32_t backoff);
void sim_rtt_sample(struct sim_rtt *, uint64_t rtt_ns);
uint32_t sim_ts_now(const struct sim *, uint32_t offset);

/* sim-random.c. */
uint64_t sim_random(struct sim *);

/* sim-stats.c. */
void sim_note_timeout(struct sim *, uint64_t *kind_counter);
void sim_note_rcv_timeout(struct sim *);
void sim_note_rtt(struct sim *, uint64_t rtt_ns);
void sim_note_rct(struct sim *, uint64_t rct_ns);
void sim_note_round(struct sim *, uint64_t dur_ns);
void sim_stats_finish(struct sim *);

/* sim-trace.c. */
void sim_trace(struct sim *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* sim-pkt.c. */
struct sim_pkt *sim_pkt_alloc(struct sim *, uint32_t conn, bool to_receiver);
void sim_pkt_free(struct sim *, struct sim_pkt *);
void sim_pkt_pool_destroy(struct sim *);
uint32_t sim_pkt_ip_len(const struct sim_pkt *);
uint32_t sim_pkt_wire_bytes(const struct sim *, const struct sim_pkt *);
size_t sim_pkt_build(struct sim *, const struct sim_pkt *);
bool sim_pkt_parse(struct sim *, const struct sim_pkt *, size_t len,
                   struct pac_segment *);

/* sim-net.c. */
void sim_net_snd_output(struct sim *, uint32_t i, struct sim_pkt *);
void sim_net_rcv_output(struct sim *, struct sim_pkt *);
void sim_net_switch_arrive(struct sim *, struct sim_pkt *);
void sim_net_switch_done(struct sim *);
void sim_net_rcv_arrive(struct sim *, struct sim_pkt *);
void sim_net_pac_timer(struct sim *, const struct sim_event *);
void sim_net_pac_copy(void *aux, void *pkt, const struct pac_copy *);
void sim_net_pac_finish(struct sim *);

/* sim-sender.c. */
void sim_snd_init(struct sim *, uint32_t i);
void sim_snd_destroy(struct sim *, uint32_t i);
void sim_snd_input(struct sim *, uint32_t i, const struct sim_pkt *);
void sim_snd_timer(struct sim *, uint32_t i, const struct sim_event *);

/* sim-receiver.c. */
void sim_rcv_init(struct sim *, uint32_t i);
void sim_rcv_destroy(struct sim *, uint32_t i);
void sim_rcv_connect(struct sim *, uint32_t i);
void sim_rcv_request(struct sim *, uint32_t i);
void sim_rcv_close(struct sim *, uint32_t i);
void sim_rcv_input(struct sim *, uint32_t i, const struct sim_pkt *);
void sim_rcv_timer(struct sim *, uint32_t i, const struct sim_event *);
void sim_rcv_delack_timer(struct sim *, uint32_t i,
                          const struct sim_event *);

/* Sequence arithmetic: the signed distance from wire number 'b' to 'a'. */
static inline int32_t
sim_seq_diff(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b);
}

/* Returns the stream offset of wire sequence number 'wire' in a stream whose
 * first data byte is numbered isn + 1: the offset nearest to 'near'. */
static inline uint64_t
sim_seq_offset(uint32_t wire, uint32_t isn, uint64_t near)
{
    return near + sim_seq_diff(wire, isn + 1 + (uint32_t) near);
}

#endif /* sim-private.h */
