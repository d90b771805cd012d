/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Packets: a pool of 'struct sim_pkt', and their byte-level form.
 *
 * Every packet that passes libpac is first written out as a real IPv4/TCP
 * packet, the way Linux would send it, then parsed back with pac_parse_ip().
 * The parsed fields are checked against the packet they came from, so a bug
 * in either the builder or the parser shows up as a parse error instead of
 * silently feeding libpac something no real stack would send.
 *
 * Addresses: the receiver is 10.0.0.1, sender i is 10.1.0.0 + i + 1 (at most
 * 65534 senders), listening on port 5001; the receiver's ports are random
 * ephemeral ports.  Options: MSS, SACK-permitted, timestamps and window
 * scale on SYN and SYN-ACK (40-byte TCP header), timestamps on every other
 * segment (32-byte TCP header).  No SACK blocks. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-private.h"

#define SIM_PKT_CHUNK 4096

struct sim_chunk {
    struct sim_chunk *next;
    struct sim_pkt pkts[SIM_PKT_CHUNK];
};

struct sim_pkt *
sim_pkt_alloc(struct sim *sim, uint32_t conn, bool to_receiver)
{
    if (!sim->free_pkts) {
        struct sim_chunk *chunk = malloc(sizeof *chunk);
        if (!chunk) {
            fprintf(stderr, "sim: out of memory\n");
            abort();
        }
        chunk->next = sim->chunks;
        sim->chunks = chunk;
        for (size_t i = 0; i < SIM_PKT_CHUNK; i++) {
            chunk->pkts[i].next = sim->free_pkts;
            sim->free_pkts = &chunk->pkts[i];
        }
    }

    struct sim_pkt *pkt = sim->free_pkts;
    sim->free_pkts = pkt->next;
    memset(pkt, 0, sizeof *pkt);
    pkt->conn = conn;
    pkt->to_receiver = to_receiver;
    pkt->born_ns = sim->now;
    return pkt;
}

void
sim_pkt_free(struct sim *sim, struct sim_pkt *pkt)
{
    pkt->next = sim->free_pkts;
    sim->free_pkts = pkt;
}

void
sim_pkt_pool_destroy(struct sim *sim)
{
    while (sim->chunks) {
        struct sim_chunk *next = sim->chunks->next;
        free(sim->chunks);
        sim->chunks = next;
    }
    sim->free_pkts = NULL;
}

static uint32_t
sim_pkt_tcp_hdr_len(const struct sim_pkt *pkt)
{
    return pkt->flags & PAC_TCP_SYN ? 40 : 32;
}

/* Returns the IPv4 total length of 'pkt'. */
uint32_t
sim_pkt_ip_len(const struct sim_pkt *pkt)
{
    return 20 + sim_pkt_tcp_hdr_len(pkt) + pkt->len;
}

/* Returns the bytes 'pkt' occupies in a buffer and on a link: the IP packet
 * plus the configured layer-2 overhead (14: the Ethernet header; preamble,
 * inter-frame gap and FCS are not counted unless configured). */
uint32_t
sim_pkt_wire_bytes(const struct sim *sim, const struct sim_pkt *pkt)
{
    return sim_pkt_ip_len(pkt) + sim->cfg.l2_overhead;
}

static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

static void
put32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

static uint32_t
csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i + 1 < len; i += 2) {
        sum += (p[i] << 8) | p[i + 1];
    }
    if (len & 1) {
        sum += p[len - 1] << 8;
    }
    return sum;
}

static uint16_t
csum_fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return ~sum;
}

static uint32_t
sim_receiver_ip(void)
{
    return 0x0a000001;          /* 10.0.0.1 */
}

static uint32_t
sim_sender_ip(uint32_t i)
{
    return 0x0a010000 + i + 1;  /* 10.1.0.0 + i + 1 */
}

/* Writes 'pkt' as an IPv4 packet into sim->buf; returns its length.  The
 * payload is zeros, so the TCP checksum covers only the headers. */
size_t
sim_pkt_build(struct sim *sim, const struct sim_pkt *pkt)
{
    uint8_t *ip = sim->buf;
    uint32_t tcp_len = sim_pkt_tcp_hdr_len(pkt);
    uint32_t ip_len = sim_pkt_ip_len(pkt);
    uint32_t src, dst;
    uint16_t sport, dport;

    if (pkt->to_receiver) {
        src = sim_sender_ip(pkt->conn);
        dst = sim_receiver_ip();
        sport = SIM_SERVER_PORT;
        dport = sim->rcv[pkt->conn].port;
    } else {
        src = sim_receiver_ip();
        dst = sim_sender_ip(pkt->conn);
        sport = sim->rcv[pkt->conn].port;
        dport = SIM_SERVER_PORT;
    }

    /* IPv4 header: not ECN-capable, DF, TTL 64. */
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16(ip + 2, ip_len);
    put16(ip + 4, sim->ip_id++);
    put16(ip + 6, 0x4000);
    ip[8] = 64;
    ip[9] = 6;
    put32(ip + 12, src);
    put32(ip + 16, dst);
    put16(ip + 10, csum_fold(csum_add(0, ip, 20)));

    /* TCP header. */
    uint8_t *tcp = ip + 20;
    memset(tcp, 0, tcp_len);
    put16(tcp, sport);
    put16(tcp + 2, dport);
    put32(tcp + 4, pkt->seq);
    put32(tcp + 8, pkt->ack);
    tcp[12] = (tcp_len / 4) << 4;
    tcp[13] = pkt->flags;
    put16(tcp + 14, pkt->window);

    uint8_t *opt = tcp + 20;
    if (pkt->flags & PAC_TCP_SYN) {
        /* mss, sackOK, TS val ecr, nop, wscale: as Linux orders them. */
        opt[0] = 2;
        opt[1] = 4;
        put16(opt + 2, sim->cfg.mss);
        opt[4] = 4;
        opt[5] = 2;
        opt[6] = 8;
        opt[7] = 10;
        put32(opt + 8, pkt->tsval);
        put32(opt + 12, pkt->tsecr);
        opt[16] = 1;
        opt[17] = 3;
        opt[18] = 3;
        opt[19] = SIM_RCV_WSCALE;
    } else {
        opt[0] = 1;
        opt[1] = 1;
        opt[2] = 8;
        opt[3] = 10;
        put32(opt + 4, pkt->tsval);
        put32(opt + 8, pkt->tsecr);
    }

    memset(tcp + tcp_len, 0, pkt->len);

    uint8_t pseudo[12];
    put32(pseudo, src);
    put32(pseudo + 4, dst);
    pseudo[8] = 0;
    pseudo[9] = 6;
    put16(pseudo + 10, tcp_len + pkt->len);
    uint32_t sum = csum_add(csum_add(0, pseudo, sizeof pseudo), tcp, tcp_len);
    put16(tcp + 16, csum_fold(sum));

    return ip_len;
}

/* Parses the packet just built from 'pkt' into 'seg' and checks that it says
 * what 'pkt' says.  Returns false, counting a parse error, if not. */
bool
sim_pkt_parse(struct sim *sim, const struct sim_pkt *pkt, size_t len,
              struct pac_segment *seg)
{
    enum pac_parse_status status = pac_parse_ip(sim->buf, len, seg);
    const char *what = NULL;

    if (status != PAC_PARSE_OK) {
        what = pac_parse_status_name(status);
    } else if (seg->ip_version != 4 || seg->ip_ecn != PAC_ECN_NOT_ECT) {
        what = "ip";
    } else if (seg->seq != pkt->seq || seg->ack != pkt->ack) {
        what = "seq/ack";
    } else if (seg->tcp_flags != pkt->flags) {
        what = "flags";
    } else if (seg->payload_len != pkt->len
               || seg->ip_len != sim_pkt_ip_len(pkt)) {
        what = "length";
    } else if (seg->window != pkt->window) {
        what = "window";
    } else if (!seg->has_timestamp || seg->tsval != pkt->tsval
               || seg->tsecr != pkt->tsecr) {
        what = "timestamp";
    } else if ((pkt->to_receiver ? seg->dport : seg->sport)
               != sim->rcv[pkt->conn].port) {
        what = "ports";
    } else if (pkt->flags & PAC_TCP_SYN
               && (seg->mss != sim->cfg.mss || !seg->sack_permitted
                   || !seg->has_wscale || seg->wscale != SIM_RCV_WSCALE)) {
        what = "syn options";
    }

    if (what) {
        sim->res->parse_errors++;
        if (sim->res->parse_errors <= 5) {
            fprintf(stderr, "sim: packet of conn %u parsed wrong (%s)\n",
                    pkt->conn, what);
        }
        return false;
    }
    return true;
}
