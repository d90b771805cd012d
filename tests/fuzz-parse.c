/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* libFuzzer target for the TCP/IP segment parser.
 *
 * Every input is parsed as an IP packet and as an Ethernet frame, and the
 * results are checked against invariants; a violation calls abort().  See
 * tests/run-fuzz.sh.  Built with -DPAC_FUZZ_STANDALONE, it is a plain program
 * that runs the files named on its command line through the same checks (to
 * replay a corpus without libFuzzer). */

#include "pac-parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(COND)                                               \
    do {                                                                \
        if (!(COND)) {                                                  \
            fprintf(stderr, "%s:%d: invariant violated: %s\n",          \
                    __FILE__, __LINE__, #COND);                         \
            abort();                                                    \
        }                                                               \
    } while (0)

/* Bytes of Ethernet header (with one VLAN tag) and of padding put around the
 * input for the Ethernet checks. */
#define ETH_LEN 18
#define PAD_LEN 8

static const uint8_t v4_mapped_prefix[12] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
};

static void
check_status(enum pac_parse_status s)
{
    FUZZ_ASSERT(s == PAC_PARSE_OK || s == PAC_PARSE_NOT_TCP
                || s == PAC_PARSE_FRAGMENT || s == PAC_PARSE_TRUNCATED
                || s == PAC_PARSE_MALFORMED);
    FUZZ_ASSERT(strcmp(pac_parse_status_name(s), "unknown"));
}

/* Checks a segment that parsed OK from an IP packet of which 'avail' bytes
 * were available. */
static void
check_segment(const struct pac_segment *seg, size_t avail)
{
    size_t min_ip = seg->ip_version == 4 ? 20 : 40;

    FUZZ_ASSERT(seg->ip_version == 4 || seg->ip_version == 6);
    FUZZ_ASSERT(seg->ip_len <= avail);
    FUZZ_ASSERT((uint64_t) seg->payload_len + 20 + min_ip <= seg->ip_len);
    FUZZ_ASSERT(seg->n_sack <= PAC_MAX_SACK_BLOCKS);
    FUZZ_ASSERT(seg->ip_ecn <= PAC_ECN_CE);
    FUZZ_ASSERT(!seg->has_wscale || seg->wscale <= 14);
    FUZZ_ASSERT(seg->has_wscale || seg->wscale == 0);
    FUZZ_ASSERT(seg->has_timestamp || (!seg->tsval && !seg->tsecr));
    for (size_t i = seg->n_sack; i < PAC_MAX_SACK_BLOCKS; i++) {
        FUZZ_ASSERT(!seg->sack[i].left && !seg->sack[i].right);
    }
    if (seg->ip_version == 4) {
        FUZZ_ASSERT(!memcmp(seg->src, v4_mapped_prefix, 12));
        FUZZ_ASSERT(!memcmp(seg->dst, v4_mapped_prefix, 12));
    }
}

/* Checks an OK segment against the IP header bytes it came from. */
static void
check_against_header(const struct pac_segment *seg, const uint8_t *ip)
{
    if (seg->ip_version == 4) {
        size_t ihl = (ip[0] & 0x0f) * 4;
        const uint8_t *tcp = ip + ihl;

        FUZZ_ASSERT(ip[0] >> 4 == 4);
        FUZZ_ASSERT(seg->ip_len == ((size_t) ip[2] << 8 | ip[3]));
        FUZZ_ASSERT(!memcmp(seg->src + 12, ip + 12, 4));
        FUZZ_ASSERT(!memcmp(seg->dst + 12, ip + 16, 4));
        FUZZ_ASSERT(seg->ip_ecn == (ip[1] & 3));
        FUZZ_ASSERT(seg->l4_offset == ihl);
        FUZZ_ASSERT(seg->sport == ((unsigned int) tcp[0] << 8 | tcp[1]));
        FUZZ_ASSERT(seg->tcp_flags == tcp[13]);
        FUZZ_ASSERT(seg->payload_len
                    == seg->ip_len - ihl - (size_t) (tcp[12] >> 4) * 4);
    } else {
        FUZZ_ASSERT(ip[0] >> 4 == 6);
        FUZZ_ASSERT(seg->ip_len == 40 + ((size_t) ip[4] << 8 | ip[5]));
        FUZZ_ASSERT(!memcmp(seg->src, ip + 8, 16));
        FUZZ_ASSERT(!memcmp(seg->dst, ip + 24, 16));
        FUZZ_ASSERT(seg->ip_ecn == ((ip[1] >> 4) & 3));
        FUZZ_ASSERT(seg->l4_offset >= 40);
        FUZZ_ASSERT(seg->sport == ((unsigned int) ip[seg->l4_offset] << 8
                                   | ip[seg->l4_offset + 1]));
    }
}

static bool
same(enum pac_parse_status s1, const struct pac_segment *seg1,
     enum pac_parse_status s2, const struct pac_segment *seg2, size_t shift)
{
    struct pac_segment moved;

    if (s1 != s2 || s1 != PAC_PARSE_OK) {
        return s1 == s2;
    }
    /* 'seg2' was parsed 'shift' bytes further into its buffer. */
    moved = *seg2;
    moved.l4_offset -= shift;
    return !memcmp(seg1, &moved, sizeof *seg1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pac_segment seg, seg2;
    enum pac_parse_status s, s2;

    /* As an IP packet. */
    s = pac_parse_ip(data, size, &seg);
    check_status(s);
    if (s == PAC_PARSE_OK) {
        check_segment(&seg, size);
        check_against_header(&seg, data);
    }

    /* Parsing is a pure function of the bytes. */
    s2 = pac_parse_ip(data, size, &seg2);
    FUZZ_ASSERT(same(s, &seg, s2, &seg2, 0));

    /* As an Ethernet frame. */
    s2 = pac_parse_eth(data, size, &seg2);
    check_status(s2);
    if (s2 == PAC_PARSE_OK) {
        FUZZ_ASSERT(size >= 14);
        check_segment(&seg2, size - 14);
    }

    /* Wrapped in a VLAN-tagged Ethernet header, an IP packet parses exactly
     * as it does alone; with padding after it, too, unless it was truncated
     * (then the padding may complete it). */
    if (size && (data[0] >> 4 == 4 || data[0] >> 4 == 6)) {
        static const uint8_t eth[ETH_LEN - 2] = {
            0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x81, 0x00, 0x0f,
            0xff,
        };
        uint8_t *frame = malloc(ETH_LEN + size);
        uint8_t *padded = malloc(ETH_LEN + size + PAD_LEN);

        if (!frame || !padded) {
            abort();
        }
        memcpy(frame, eth, sizeof eth);
        frame[ETH_LEN - 2] = data[0] >> 4 == 4 ? 0x08 : 0x86;
        frame[ETH_LEN - 1] = data[0] >> 4 == 4 ? 0x00 : 0xdd;
        memcpy(frame + ETH_LEN, data, size);

        s2 = pac_parse_eth(frame, ETH_LEN + size, &seg2);
        FUZZ_ASSERT(same(s, &seg, s2, &seg2, ETH_LEN));

        memcpy(padded, frame, ETH_LEN + size);
        memset(padded + ETH_LEN + size, 0xff, PAD_LEN);
        s2 = pac_parse_eth(padded, ETH_LEN + size + PAD_LEN, &seg2);
        check_status(s2);
        if (s != PAC_PARSE_TRUNCATED) {
            FUZZ_ASSERT(same(s, &seg, s2, &seg2, ETH_LEN));
        } else if (s2 == PAC_PARSE_OK) {
            check_segment(&seg2, size + PAD_LEN);
        }

        free(frame);
        free(padded);
    }
    return 0;
}

#ifdef PAC_FUZZ_STANDALONE
#include "fuzz-replay.h"

int
main(int argc, char *argv[])
{
    return fuzz_replay_files(argc, argv, 1);
}
#endif
