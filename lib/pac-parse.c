/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#include "pac-parse.h"

#include <string.h>

/* Parsing rules, and the choices made where the RFCs leave room:
 *
 *   - Every length field is checked against the bytes that are actually
 *     there.  The IP length (IPv4 total length, IPv6 40 + payload length) must
 *     fit in the buffer, otherwise the packet is PAC_PARSE_TRUNCATED; bytes
 *     after it (Ethernet padding) are ignored.  Once the IP length is known to
 *     fit, every header inside it must fit inside the IP length: a header that
 *     runs past it is PAC_PARSE_MALFORMED.
 *
 *   - A version nibble that is neither 4 nor 6 (or does not match the
 *     Ethernet type) is PAC_PARSE_MALFORMED.
 *
 *   - IPv6 payload length 0 (a jumbogram, RFC 2675, or an empty packet) is
 *     PAC_PARSE_NOT_TCP: jumbograms are not parsed, and a packet with no
 *     payload cannot carry TCP.
 *
 *   - At most PAC_MAX_EXT_HDRS IPv6 extension headers are walked; a chain
 *     longer than that is PAC_PARSE_NOT_TCP.  A hop-by-hop header anywhere but
 *     first is PAC_PARSE_MALFORMED (RFC 8200 section 4.3).
 *
 *   - A fragment of TCP is PAC_PARSE_FRAGMENT, even an atomic fragment: an
 *     IPv4 fragment with protocol 6, or an IPv6 fragment header whose next
 *     header is TCP or another extension header (all fragments carry it).
 *     A fragment of any other protocol is PAC_PARSE_NOT_TCP.
 *
 *   - A segment that is not PAC_PARSE_OK keeps what was read before the
 *     problem: the IP version and addresses once the IP header (and, for
 *     IPv4, the fragment check) is passed, the ports once the TCP header's
 *     fixed 20 bytes are inside the IP length.  The datapath uses them to
 *     keep such a segment behind its connection's held ones
 *     (pac_tx_unparsed()).
 *
 *   - A TCP option of a known kind with an unexpected length (e.g. MSS with
 *     length 6) is skipped by its length, as Linux does, rather than making
 *     the segment malformed.  When a kind appears twice, the later one wins.
 *     The window scale is clamped to 14 (RFC 7323 section 2.3). */

/* Most IPv6 extension headers walked before giving up. */
#define PAC_MAX_EXT_HDRS 8

#define ETH_HDR_LEN 14
#define VLAN_HDR_LEN 4
#define ETH_TYPE_IPV4 0x0800
#define ETH_TYPE_IPV6 0x86dd
#define ETH_TYPE_VLAN 0x8100
#define ETH_TYPE_QINQ 0x88a8

#define IPV4_HDR_LEN 20
#define IPV6_HDR_LEN 40
#define TCP_HDR_LEN 20

#define IPPROTO_HOPOPTS_ 0
#define IPPROTO_TCP_ 6
#define IPPROTO_ROUTING_ 43
#define IPPROTO_FRAGMENT_ 44
#define IPPROTO_AH_ 51
#define IPPROTO_DSTOPTS_ 60

#define IPV4_MF 0x2000
#define IPV4_FRAG_OFFSET 0x1fff

#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define TCPOPT_WSCALE 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_SACK 5
#define TCPOPT_TIMESTAMP 8

/* The IPv4 and TCP parsers are inlined into both entry points, so that a
 * segment costs one call, not three (bench/datapath --profile: parsing is
 * on every packet in both directions). */
#if defined(__GNUC__)
#define PAC_PARSE_INLINE static inline __attribute__((always_inline))
#else
#define PAC_PARSE_INLINE static inline
#endif

/* Loads big-endian integers a byte at a time, so that no alignment is
 * assumed. */
static uint16_t
get_be16(const uint8_t *p)
{
    return (uint16_t) (((unsigned int) p[0] << 8) | p[1]);
}

static uint32_t
get_be32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16)
           | ((uint32_t) p[2] << 8) | (uint32_t) p[3];
}

/* Parses the TCP options in 'opt' ('len' bytes: the TCP header past its
 * fixed 20 bytes) into 'seg'. */
static enum pac_parse_status
parse_tcp_options(const uint8_t *opt, size_t len, struct pac_segment *seg)
{
    size_t i = 0;

    while (i < len) {
        uint8_t kind = opt[i];
        uint8_t olen;

        if (kind == TCPOPT_EOL) {
            break;
        } else if (kind == TCPOPT_NOP) {
            i++;
            continue;
        }

        if (len - i < 2) {
            return PAC_PARSE_MALFORMED;
        }
        olen = opt[i + 1];
        if (olen < 2 || olen > len - i) {
            return PAC_PARSE_MALFORMED;
        }

        const uint8_t *o = &opt[i];
        switch (kind) {
        case TCPOPT_MSS:
            if (olen == 4) {
                seg->mss = get_be16(o + 2);
            }
            break;

        case TCPOPT_WSCALE:
            if (olen == 3) {
                seg->has_wscale = true;
                seg->wscale = o[2] > PAC_MAX_WSCALE ? PAC_MAX_WSCALE : o[2];
            }
            break;

        case TCPOPT_SACK_PERM:
            if (olen == 2) {
                seg->sack_permitted = true;
            }
            break;

        case TCPOPT_SACK:
            if (olen >= 10 && (olen - 2) % 8 == 0) {
                size_t n = (olen - 2) / 8;

                if (n > PAC_MAX_SACK_BLOCKS) {
                    n = PAC_MAX_SACK_BLOCKS;
                }
                memset(seg->sack, 0, sizeof seg->sack);
                for (size_t j = 0; j < n; j++) {
                    seg->sack[j].left = get_be32(o + 2 + 8 * j);
                    seg->sack[j].right = get_be32(o + 6 + 8 * j);
                }
                seg->n_sack = (uint8_t) n;
            }
            break;

        case TCPOPT_TIMESTAMP:
            if (olen == 10) {
                seg->has_timestamp = true;
                seg->ts_offset = (uint8_t) (TCP_HDR_LEN + i + 2);
                seg->tsval = get_be32(o + 2);
                seg->tsecr = get_be32(o + 6);
            }
            break;

        default:
            break;
        }
        i += olen;
    }
    return PAC_PARSE_OK;
}

/* Parses the TCP header at 'tcp'.  'len' is the rest of the IP packet (TCP
 * header and payload), all of it inside the buffer. */
PAC_PARSE_INLINE enum pac_parse_status
parse_tcp(const uint8_t *tcp, size_t len, struct pac_segment *seg)
{
    size_t hlen;

    if (len < TCP_HDR_LEN) {
        return PAC_PARSE_MALFORMED;
    }
    seg->sport = get_be16(tcp);
    seg->dport = get_be16(tcp + 2);
    hlen = (size_t) (tcp[12] >> 4) * 4;
    if (hlen < TCP_HDR_LEN || hlen > len) {
        return PAC_PARSE_MALFORMED;
    }

    seg->seq = get_be32(tcp + 4);
    seg->ack = get_be32(tcp + 8);
    seg->tcp_flags = tcp[13];
    seg->window = get_be16(tcp + 14);
    seg->payload_len = (uint32_t) (len - hlen);

    return (hlen > TCP_HDR_LEN
            ? parse_tcp_options(tcp + TCP_HDR_LEN, hlen - TCP_HDR_LEN, seg)
            : PAC_PARSE_OK);
}

PAC_PARSE_INLINE enum pac_parse_status
parse_ipv4(const uint8_t *ip, size_t len, struct pac_segment *seg)
{
    size_t ihl, tot_len;
    uint16_t frag;

    if (len < IPV4_HDR_LEN) {
        return PAC_PARSE_TRUNCATED;
    }
    if (ip[0] >> 4 != 4) {
        return PAC_PARSE_MALFORMED;
    }
    ihl = (size_t) (ip[0] & 0x0f) * 4;
    if (ihl < IPV4_HDR_LEN) {
        return PAC_PARSE_MALFORMED;
    }
    if (ihl > len) {
        return PAC_PARSE_TRUNCATED;
    }
    tot_len = get_be16(ip + 2);
    if (tot_len < ihl) {
        return PAC_PARSE_MALFORMED;
    }
    if (tot_len > len) {
        return PAC_PARSE_TRUNCATED;
    }

    if (ip[9] != IPPROTO_TCP_) {
        return PAC_PARSE_NOT_TCP;
    }

    seg->ip_version = 4;
    seg->ip_ecn = ip[1] & 0x03;
    seg->ip_len = (uint32_t) tot_len;
    memset(seg->src, 0, 10);
    seg->src[10] = seg->src[11] = 0xff;
    memcpy(&seg->src[12], ip + 12, 4);
    memset(seg->dst, 0, 10);
    seg->dst[10] = seg->dst[11] = 0xff;
    memcpy(&seg->dst[12], ip + 16, 4);
    frag = get_be16(ip + 6);
    if (frag & (IPV4_MF | IPV4_FRAG_OFFSET)) {
        return PAC_PARSE_FRAGMENT;
    }
    seg->l4_offset += ihl;

    return parse_tcp(ip + ihl, tot_len - ihl, seg);
}

/* Fills in what the IPv6 header at 'ip' ('end' bytes long) gives 'seg'. */
static void
ipv6_addresses(const uint8_t *ip, size_t end, struct pac_segment *seg)
{
    seg->ip_version = 6;
    seg->ip_ecn = (ip[1] >> 4) & 0x03;
    seg->ip_len = (uint32_t) end;
    memcpy(seg->src, ip + 8, 16);
    memcpy(seg->dst, ip + 24, 16);
}

static enum pac_parse_status
parse_ipv6(const uint8_t *ip, size_t len, struct pac_segment *seg)
{
    size_t plen, end, off;
    uint8_t nh;

    if (len < IPV6_HDR_LEN) {
        return PAC_PARSE_TRUNCATED;
    }
    if (ip[0] >> 4 != 6) {
        return PAC_PARSE_MALFORMED;
    }
    plen = get_be16(ip + 4);
    if (plen == 0) {
        /* Jumbogram (RFC 2675) or empty: either way, no TCP to parse. */
        return PAC_PARSE_NOT_TCP;
    }
    end = IPV6_HDR_LEN + plen;
    if (end > len) {
        return PAC_PARSE_TRUNCATED;
    }

    nh = ip[6];
    off = IPV6_HDR_LEN;
    for (int n = 0; nh != IPPROTO_TCP_; n++) {
        size_t hlen;

        if (n >= PAC_MAX_EXT_HDRS) {
            return PAC_PARSE_NOT_TCP;
        }
        switch (nh) {
        case IPPROTO_HOPOPTS_:
            if (n != 0) {
                return PAC_PARSE_MALFORMED;
            }
            /* Fall through. */
        case IPPROTO_ROUTING_:
        case IPPROTO_DSTOPTS_:
            if (end - off < 2) {
                return PAC_PARSE_MALFORMED;
            }
            hlen = ((size_t) ip[off + 1] + 1) * 8;
            break;

        case IPPROTO_AH_:
            if (end - off < 2) {
                return PAC_PARSE_MALFORMED;
            }
            hlen = ((size_t) ip[off + 1] + 2) * 4;
            break;

        case IPPROTO_FRAGMENT_:
            if (end - off < 8) {
                return PAC_PARSE_MALFORMED;
            }
            switch (ip[off]) {
            case IPPROTO_TCP_:
            case IPPROTO_ROUTING_:
            case IPPROTO_DSTOPTS_:
            case IPPROTO_AH_:
                ipv6_addresses(ip, end, seg);
                return PAC_PARSE_FRAGMENT;
            default:
                return PAC_PARSE_NOT_TCP;
            }

        default:
            /* ESP, no next header, UDP, ICMPv6, ...: nothing to parse. */
            return PAC_PARSE_NOT_TCP;
        }
        if (hlen > end - off) {
            return PAC_PARSE_MALFORMED;
        }
        nh = ip[off];
        off += hlen;
    }

    ipv6_addresses(ip, end, seg);
    seg->l4_offset += off;

    return parse_tcp(ip + off, end - off, seg);
}

/* Zeroes 'seg'.  A copy of a zero segment compiles to a few vector
 * stores; memset() of this size to "rep stos", which costs tens of cycles
 * to start, on every packet. */
static void
clear_segment(struct pac_segment *seg)
{
    static const struct pac_segment zero_segment;

    *seg = zero_segment;
}

enum pac_parse_status
pac_parse_ip(const void *l3, size_t len, struct pac_segment *seg)
{
    const uint8_t *ip = l3;

    clear_segment(seg);
    if (len < 1) {
        return PAC_PARSE_TRUNCATED;
    }
    switch (ip[0] >> 4) {
    case 4:
        return parse_ipv4(ip, len, seg);
    case 6:
        return parse_ipv6(ip, len, seg);
    default:
        return PAC_PARSE_MALFORMED;
    }
}

enum pac_parse_status
pac_parse_eth(const void *frame, size_t len, struct pac_segment *seg)
{
    const uint8_t *eth = frame;
    size_t off = ETH_HDR_LEN;
    uint16_t type;

    clear_segment(seg);
    if (len < ETH_HDR_LEN) {
        return PAC_PARSE_TRUNCATED;
    }
    type = get_be16(eth + 12);
    for (int n = 0; n < 2; n++) {
        if (type != ETH_TYPE_VLAN && type != ETH_TYPE_QINQ) {
            break;
        }
        if (len - off < VLAN_HDR_LEN) {
            return PAC_PARSE_TRUNCATED;
        }
        type = get_be16(eth + off + 2);
        off += VLAN_HDR_LEN;
    }

    seg->l4_offset = off;
    switch (type) {
    case ETH_TYPE_IPV4:
        return parse_ipv4(eth + off, len - off, seg);
    case ETH_TYPE_IPV6:
        return parse_ipv6(eth + off, len - off, seg);
    default:
        /* ARP, a third VLAN tag, MPLS, ...: not parsed. */
        return PAC_PARSE_NOT_TCP;
    }
}

const char *
pac_parse_status_name(enum pac_parse_status status)
{
    switch (status) {
    case PAC_PARSE_OK:
        return "ok";
    case PAC_PARSE_NOT_TCP:
        return "not_tcp";
    case PAC_PARSE_FRAGMENT:
        return "fragment";
    case PAC_PARSE_TRUNCATED:
        return "truncated";
    case PAC_PARSE_MALFORMED:
        return "malformed";
    }
    return "unknown";
}
