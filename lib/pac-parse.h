/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef PAC_PARSE_H
#define PAC_PARSE_H 1

/* TCP/IP segment parser.
 *
 * Reads an IPv4 or IPv6 packet (starting at the IP header) and extracts what
 * PAC needs from the TCP header and its options.  It never reads past 'len'
 * and never trusts a length field: anything it cannot account for is reported
 * as truncated or malformed, and the caller lets that packet pass untouched. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TCP flag bits, as in the TCP header's flags byte. */
#define PAC_TCP_FIN 0x01
#define PAC_TCP_SYN 0x02
#define PAC_TCP_RST 0x04
#define PAC_TCP_PSH 0x08
#define PAC_TCP_ACK 0x10
#define PAC_TCP_URG 0x20
#define PAC_TCP_ECE 0x40
#define PAC_TCP_CWR 0x80

/* IP ECN codepoints (low two bits of the IPv4 TOS / IPv6 traffic class). */
#define PAC_ECN_NOT_ECT 0
#define PAC_ECN_ECT1 1
#define PAC_ECN_ECT0 2
#define PAC_ECN_CE 3

#define PAC_MAX_SACK_BLOCKS 4

struct pac_sack_block {
    uint32_t left;              /* Host byte order. */
    uint32_t right;
};

/* The largest window scale TCP uses: a larger option value counts as this
 * (RFC 7323, 2.3). */
#define PAC_MAX_WSCALE 14

/* One parsed TCP segment.  Integers are in host byte order.  IPv4 addresses
 * are stored IPv4-mapped (::ffff:a.b.c.d) so that both families share one
 * flow key. */
struct pac_segment {
    uint8_t src[16];
    uint8_t dst[16];
    uint16_t sport;
    uint16_t dport;
    uint8_t ip_version;         /* 4 or 6. */
    uint8_t ip_ecn;             /* PAC_ECN_*. */
    uint8_t tcp_flags;          /* PAC_TCP_*. */
    uint8_t n_sack;             /* Valid entries in 'sack'. */
    uint32_t seq;
    uint32_t ack;
    uint16_t window;            /* Raw (unscaled) window field. */
    bool window_clamped;        /* pac_tx() lowered 'window' (pac.h). */
    uint16_t l4_offset;         /* Of the TCP header, from the start of
                                 * what was parsed. */
    uint16_t mss;               /* MSS option, 0 if absent. */
    uint8_t wscale;             /* Window scale option, if 'has_wscale';
                                 * above PAC_MAX_WSCALE counts as it. */
    bool has_wscale;
    bool sack_permitted;
    bool has_timestamp;
    uint8_t ts_offset;          /* Of the timestamp value, from the TCP
                                 * header, if 'has_timestamp'. */
    uint32_t tsval;
    uint32_t tsecr;
    uint32_t payload_len;       /* TCP payload bytes, from the IP length. */
    uint32_t ip_len;            /* IP header(s) + TCP header + payload. */
    struct pac_sack_block sack[PAC_MAX_SACK_BLOCKS];

    /* Not parsed: pac_prefetch() caches the flow's hash here for the
     * pac_rx() or pac_tx() call that follows; the parser zeroes it. */
    const void *hashed_by;      /* The 'struct pac' that hashed, or NULL. */
    uint32_t flow_hash;
};

enum pac_parse_status {
    PAC_PARSE_OK,               /* A TCP segment; 'seg' is filled in. */
    PAC_PARSE_NOT_TCP,          /* Valid IP, but not TCP (or not IP). */
    PAC_PARSE_FRAGMENT,         /* A fragment of TCP (any, even the first). */
    PAC_PARSE_TRUNCATED,        /* Headers or IP payload beyond 'len'. */
    PAC_PARSE_MALFORMED,        /* Inconsistent lengths, bad offsets. */
};

/* Parses the IP packet at 'l3' ('len' bytes available).  Ethernet padding
 * after the IP payload is allowed; a buffer shorter than the IP length is
 * PAC_PARSE_TRUNCATED.  Malformed TCP options (bad length bytes) make the
 * segment PAC_PARSE_MALFORMED.  A segment that does not parse keeps what
 * was read before the problem (zero otherwise): 'ip_version' and the
 * addresses of a TCP packet whose IP header is sound, and its ports if its
 * TCP header's fixed part is there. */
enum pac_parse_status pac_parse_ip(const void *l3, size_t len,
                                   struct pac_segment *seg);

/* Like pac_parse_ip() for an Ethernet frame: skips the Ethernet header and up
 * to two VLAN tags (0x8100, 0x88a8) and dispatches on 0x0800 / 0x86dd. */
enum pac_parse_status pac_parse_eth(const void *frame, size_t len,
                                    struct pac_segment *seg);

/* Returns a static name for 'status', e.g. "truncated". */
const char *pac_parse_status_name(enum pac_parse_status status);

#endif /* pac-parse.h */
