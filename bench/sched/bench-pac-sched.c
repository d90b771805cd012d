/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Microbenchmark of libpac's per-packet cost with many flows holding ACKs.
 *
 * Built by "make" (bench/sched/bench-pac-sched), never run by "make check":
 *
 *     bench/sched/bench-pac-sched [FLOWS[,FLOWS...]] [CALLS] [ANSWER]
 *
 * (defaults: 1,1000,10000 flows, 400000 pac_rx() + pac_tx() calls timed,
 * 65536-byte answers).
 *
 * A closed loop with one 1 Gb/s bottleneck and no propagation delay: the
 * receiver (the VM behind PAC) opens FLOWS connections and sends a request
 * on each; each peer answers a request with ANSWER bytes (64 kB), as fast
 * as its window (slow start up to 64 kB, from 10 segments) and the ACKs it
 * got allow, and the receiver sends the next request on a connection as
 * soon as it has the whole answer.  PAC admits only a few peers at a time
 * (admission control), so most flows hold a request, and the busy ones
 * hold ACKs.  Every data segment crosses the
 * bottleneck FIFO into pac_rx() and the receiver answers it at once with a
 * pure ACK through pac_tx(); an ACK reaches its peer when PAC passes or
 * releases it.  Time advances 12 us per segment (1500 bytes at 1 Gb/s);
 * pac_run() is called whenever pac_next_wakeup() is due.  With many flows
 * almost every ACK is held, and most flows are not eligible at any time
 * (their outstanding bytes exceed their share of the threshold).
 *
 * After a warm-up (until every peer has been asked, then half as many calls
 * as are timed), each
 * pac_rx() and pac_tx() call is timed with clock_gettime(), whose own cost
 * is printed as "timer_ns" (it is included in the per-call figures). */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pac.h"

#define BENCH_MSS 1460
#define BENCH_CWND_MAX (64 * 1024)
#define BENCH_SEG_US 12                 /* 1500 bytes at 1 Gb/s. */
#define BENCH_VM_ISN 1000u
#define BENCH_PEER_ISN 5000000u

/* A peer of the receiver. */
struct peer {
    uint32_t una;               /* Highest ACK it received. */
    uint32_t nxt;               /* Next sequence it sends. */
    uint32_t cwnd;
    uint32_t ans_end;           /* End of the answer it sends. */
    bool asked;                 /* Got a request. */
    uint32_t rcv_nxt;           /* The receiver's view of the flow: */
    uint32_t vm_seq;            /* its next sequence number, */
    uint32_t want;              /* the end of the answer it waits for. */
};

/* A segment on the bottleneck, toward the receiver. */
struct seg {
    uint32_t flow;
    uint32_t seq;
    uint16_t len;
    uint8_t flags;
};

/* A segment from the receiver: PAC's 'pkt'. */
struct out_pkt {
    uint32_t flow;
    uint32_t ack;
    uint8_t flags;
    struct out_pkt *next_free;
};

static struct peer *peers;
static struct seg *fifo;
static size_t fifo_cap, fifo_head, fifo_n;
static struct out_pkt *pool, *pool_free;
static uint64_t now;
static uint64_t n_emitted;
static uint32_t n_started;
static uint32_t answer_bytes = 65536;

#define BENCH_REQ_LEN 100

static void
fifo_push(uint32_t flow, uint32_t seq, uint16_t len, uint8_t flags)
{
    struct seg *s;

    if (fifo_n == fifo_cap) {
        fprintf(stderr, "bottleneck FIFO overflow\n");
        exit(1);
    }
    s = &fifo[(fifo_head + fifo_n++) % fifo_cap];
    s->flow = flow;
    s->seq = seq;
    s->len = len;
    s->flags = flags;
}

/* Peer 'flow' receives the receiver's segment 'p'. */
static void
deliver(const struct out_pkt *p)
{
    struct peer *pr = &peers[p->flow];

    if (p->flags & PAC_TCP_SYN) {
        fifo_push(p->flow, BENCH_PEER_ISN, 0, PAC_TCP_SYN | PAC_TCP_ACK);
        return;
    }
    if (!pr->cwnd) {
        pr->una = pr->nxt = BENCH_PEER_ISN + 1;
        pr->cwnd = 10 * BENCH_MSS;
    }
    if (p->flags & PAC_TCP_PSH) {
        /* A request. */
        if (!pr->asked) {
            pr->asked = true;
            n_started++;
        }
        pr->ans_end = pr->nxt + answer_bytes;
    }
    if ((int32_t) (p->ack - pr->una) > 0) {
        uint32_t acked = p->ack - pr->una;

        pr->una = p->ack;
        if (pr->cwnd < BENCH_CWND_MAX) {
            pr->cwnd += acked;
        }
    }
    while ((int32_t) (pr->ans_end - pr->nxt) > 0
           && (int32_t) (pr->una + pr->cwnd - (pr->nxt + BENCH_MSS)) >= 0) {
        uint32_t len = pr->ans_end - pr->nxt;

        len = len < BENCH_MSS ? len : BENCH_MSS;
        fifo_push(p->flow, pr->nxt, len, PAC_TCP_ACK);
        pr->nxt += len;
    }
}

static void
emit_cb(void *aux, void *pkt_, enum pac_emit emit)
{
    struct out_pkt *p = pkt_;

    (void) aux;
    if (emit == PAC_EMIT_RELEASE) {
        deliver(p);
    }
    n_emitted++;
    p->next_free = pool_free;
    pool_free = p;
}

static void
fill_addrs(struct pac_segment *s, uint32_t flow, bool to_vm)
{
    uint8_t vm[16], peer[16];

    memset(vm, 0, 16);
    memset(peer, 0, 16);
    vm[10] = vm[11] = peer[10] = peer[11] = 0xff;
    vm[12] = 10;
    vm[15] = 1;
    peer[12] = 11;
    peer[13] = flow >> 16;
    peer[14] = flow >> 8;
    peer[15] = flow;
    memcpy(to_vm ? s->dst : s->src, vm, 16);
    memcpy(to_vm ? s->src : s->dst, peer, 16);
    s->sport = to_vm ? 80 : 10000 + (flow & 0x7fff);
    s->dport = to_vm ? 10000 + (flow & 0x7fff) : 80;
    s->ip_version = 4;
}

struct timing {
    uint64_t ns;
    uint64_t calls;
};

static inline uint64_t
clock_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The receiver sends segment ('flags', 'ack') on 'flow'. */
static void
vm_send(struct pac *pac, uint32_t flow, uint8_t flags, uint32_t seq,
        uint32_t ack, struct timing *t)
{
    struct out_pkt *p = pool_free;
    struct pac_segment s;
    enum pac_verdict v;
    uint64_t t0 = 0;

    if (!p) {
        fprintf(stderr, "packet pool empty\n");
        exit(1);
    }
    pool_free = p->next_free;
    p->flow = flow;
    p->ack = ack;
    p->flags = flags;

    memset(&s, 0, sizeof s);
    fill_addrs(&s, flow, false);
    s.tcp_flags = flags;
    s.seq = seq;
    s.ack = ack;
    s.window = 65535;
    s.mss = flags & PAC_TCP_SYN ? BENCH_MSS : 0;
    s.payload_len = flags & PAC_TCP_PSH ? BENCH_REQ_LEN : 0;
    s.ip_len = 52 + s.payload_len;
    if (t) {
        t0 = clock_ns();
    }
    v = pac_tx(pac, &s, p, now, emit_cb, NULL);
    if (t) {
        t->ns += clock_ns() - t0;
        t->calls++;
    }
    if (v == PAC_PASS) {
        deliver(p);
        p->next_free = pool_free;
        pool_free = p;
    }
}

/* One bottleneck segment arrives at the receiver, which answers it. */
static void
step(struct pac *pac, struct timing *rx, struct timing *tx)
{
    struct seg sg = fifo[fifo_head];
    struct peer *pr = &peers[sg.flow];
    struct pac_segment s;
    uint64_t t0 = 0;

    fifo_head = (fifo_head + 1) % fifo_cap;
    fifo_n--;
    now += BENCH_SEG_US;

    memset(&s, 0, sizeof s);
    fill_addrs(&s, sg.flow, true);
    s.tcp_flags = sg.flags;
    s.seq = sg.seq;
    s.ack = BENCH_VM_ISN + 1;
    s.window = 65535;
    s.mss = sg.flags & PAC_TCP_SYN ? BENCH_MSS : 0;
    s.payload_len = sg.len;
    s.ip_len = 52 + sg.len;
    if (rx) {
        t0 = clock_ns();
    }
    pac_rx(pac, &s, now, emit_cb, NULL);
    if (rx) {
        rx->ns += clock_ns() - t0;
        rx->calls++;
    }

    if (sg.flags & PAC_TCP_SYN) {
        /* The handshake's ACK, then the first request. */
        pr->rcv_nxt = sg.seq + 1;
        pr->vm_seq = BENCH_VM_ISN + 1;
        vm_send(pac, sg.flow, PAC_TCP_ACK, pr->vm_seq, pr->rcv_nxt, tx);
    } else {
        if (sg.seq == pr->rcv_nxt) {
            pr->rcv_nxt += sg.len;
        }
        vm_send(pac, sg.flow, PAC_TCP_ACK, pr->vm_seq, pr->rcv_nxt, tx);
        if (pr->rcv_nxt != pr->want) {
            return;
        }
    }
    pr->want = pr->rcv_nxt + answer_bytes;
    vm_send(pac, sg.flow, PAC_TCP_ACK | PAC_TCP_PSH, pr->vm_seq, pr->rcv_nxt,
            tx);
    pr->vm_seq += BENCH_REQ_LEN;
}

static void
run_timers(struct pac *pac, struct timing *t)
{
    uint64_t t0 = 0;

    if (t) {
        t0 = clock_ns();
    }
    pac_run(pac, now, emit_cb, NULL);
    if (t) {
        t->ns += clock_ns() - t0;
        t->calls++;
    }
}

/* Runs 'calls' pac_rx() and pac_tx() calls, or until every peer has been
 * asked if 'calls' is 0. */
static void
run_calls(struct pac *pac, uint32_t n_flows, uint64_t calls,
          struct timing *rx, struct timing *tx, struct timing *run)
{
    uint64_t done = 0;

    while (calls ? done < calls : n_started < n_flows) {
        if (fifo_n) {
            step(pac, rx, tx);
            done += 2;
        } else {
            uint64_t next = pac_next_wakeup(pac);

            if (next == UINT64_MAX) {
                fprintf(stderr, "stuck: nothing queued, no wakeup\n");
                exit(1);
            }
            now = next > now ? next : now + 1;
        }
        if (pac_next_wakeup(pac) <= now) {
            run_timers(pac, run);
        }
    }
}

static void
bench(uint32_t n_flows, uint64_t calls)
{
    struct timing rx = { 0, 0 }, tx = { 0, 0 }, run = { 0, 0 };
    struct pac_config cfg;
    struct pac_stats st0, st;
    struct pac *pac;
    size_t pool_n;

    pac_config_init(&cfg);
    cfg.fast_path = false;      /* Every flow tracked and held. */
    if (cfg.max_flows < n_flows) {
        cfg.max_flows = n_flows;
    }
    now = UINT64_C(1000000000);
    pac = pac_create(&cfg, now);
    if (!pac) {
        fprintf(stderr, "pac_create failed\n");
        exit(1);
    }

    peers = calloc(n_flows, sizeof *peers);
    fifo_cap = (size_t) n_flows * (BENCH_CWND_MAX / BENCH_MSS + 4) + 16;
    fifo = calloc(fifo_cap, sizeof *fifo);
    fifo_head = fifo_n = 0;
    pool_n = cfg.max_held + 16;
    pool = calloc(pool_n, sizeof *pool);
    pool_free = NULL;
    for (size_t i = 0; i < pool_n; i++) {
        pool[i].next_free = pool_free;
        pool_free = &pool[i];
    }
    n_emitted = 0;

    /* Handshakes: the receiver opens every connection. */
    for (uint32_t i = 0; i < n_flows; i++) {
        vm_send(pac, i, PAC_TCP_SYN, BENCH_VM_ISN, 0, NULL);
    }
    n_started = 0;
    run_calls(pac, n_flows, 0, NULL, NULL, NULL);
    run_calls(pac, n_flows, calls / 2, NULL, NULL, NULL);

    pac_get_stats(pac, &st0);
    run_calls(pac, n_flows, calls, &rx, &tx, &run);
    pac_get_stats(pac, &st);

    {
        uint64_t t0 = clock_ns();
        uint64_t t1;

        for (int i = 0; i < 1000; i++) {
            (void) clock_ns();
        }
        t1 = clock_ns();
        printf("flows=%-6"PRIu32" rx_ns=%-8.1f tx_ns=%-8.1f "
               "run_ns=%-8.1f all_ns=%-8.1f timer_ns=%.1f\n",
               n_flows, (double) rx.ns / rx.calls, (double) tx.ns / tx.calls,
               run.calls ? (double) run.ns / run.calls : 0.0,
               (double) (rx.ns + tx.ns + run.ns) / (rx.calls + tx.calls),
               (double) (t1 - t0) / 1000);
    }
    fflush(stdout);
    printf("    rx_calls=%"PRIu64" tx_calls=%"PRIu64" run_calls=%"PRIu64
           " held_now=%"PRIu32" max_held=%"PRIu32
           " tx_held=%"PRIu64" tx_passed=%"PRIu64
           " released_fit=%"PRIu64" released_max_hold=%"PRIu64
           " in_flight=%"PRIu64" sim_ms=%.1f\n",
           rx.calls, tx.calls, run.calls, st.held, st.max_held_seen,
           st.tx_held - st0.tx_held, st.tx_passed - st0.tx_passed,
           st.released[PAC_REL_FIT] - st0.released[PAC_REL_FIT],
           st.released[PAC_REL_MAX_HOLD] - st0.released[PAC_REL_MAX_HOLD],
           st.in_flight, (double) (now - UINT64_C(1000000000)) / 1000);
    fflush(stdout);

    pac_destroy(pac, emit_cb, NULL);
    free(peers);
    free(fifo);
    free(pool);
}

int
main(int argc, char *argv[])
{
    const char *list = argc > 1 ? argv[1] : "1,1000,10000";
    uint64_t calls = argc > 2 ? strtoull(argv[2], NULL, 10) : 400000;
    char *copy = strdup(list);

    if (argc > 3) {
        answer_bytes = strtoul(argv[3], NULL, 10);
    }
    char *save = NULL;

    for (char *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        bench(strtoul(tok, NULL, 10), calls);
    }
    free(copy);
    return 0;
}
