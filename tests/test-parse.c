/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of the TCP/IP segment parser (lib/pac-parse.c).
 *
 * Packets are built byte by byte by the helpers below.  Run as
 * "test-parse --write-corpus DIR" to write the fuzzer's seed inputs into DIR
 * instead of running the tests. */

#include "pac-parse.h"

#include <errno.h>
#include "pac-test.h"

#define PKT_MAX 2048

/* Byte writers. */

static void
put16(uint8_t *p, uint16_t x)
{
    p[0] = x >> 8;
    p[1] = x & 0xff;
}

static void
put32(uint8_t *p, uint32_t x)
{
    p[0] = x >> 24;
    p[1] = (x >> 16) & 0xff;
    p[2] = (x >> 8) & 0xff;
    p[3] = x & 0xff;
}

/* TCP options under construction. */
struct optbuf {
    uint8_t b[64];
    size_t n;
};

static void
opt_raw(struct optbuf *ob, const uint8_t *bytes, size_t n)
{
    memcpy(&ob->b[ob->n], bytes, n);
    ob->n += n;
}

static void
opt_nop(struct optbuf *ob)
{
    ob->b[ob->n++] = 1;
}

static void
opt_mss(struct optbuf *ob, uint16_t mss)
{
    ob->b[ob->n++] = 2;
    ob->b[ob->n++] = 4;
    put16(&ob->b[ob->n], mss);
    ob->n += 2;
}

static void
opt_wscale(struct optbuf *ob, uint8_t shift)
{
    ob->b[ob->n++] = 3;
    ob->b[ob->n++] = 3;
    ob->b[ob->n++] = shift;
}

static void
opt_sackperm(struct optbuf *ob)
{
    ob->b[ob->n++] = 4;
    ob->b[ob->n++] = 2;
}

static void
opt_sack(struct optbuf *ob, const struct pac_sack_block *blocks, size_t n)
{
    ob->b[ob->n++] = 5;
    ob->b[ob->n++] = 2 + 8 * n;
    for (size_t i = 0; i < n; i++) {
        put32(&ob->b[ob->n], blocks[i].left);
        put32(&ob->b[ob->n + 4], blocks[i].right);
        ob->n += 8;
    }
}

static void
opt_ts(struct optbuf *ob, uint32_t val, uint32_t ecr)
{
    ob->b[ob->n++] = 8;
    ob->b[ob->n++] = 10;
    put32(&ob->b[ob->n], val);
    put32(&ob->b[ob->n + 4], ecr);
    ob->n += 8;
}

/* The options of a Linux SYN: MSS, SACK-permitted, timestamps, NOP, window
 * scale (20 bytes). */
static void
opt_linux_syn(struct optbuf *ob)
{
    opt_mss(ob, 1460);
    opt_sackperm(ob);
    opt_ts(ob, 0xa1b2c3d4, 0);
    opt_nop(ob);
    opt_wscale(ob, 7);
}

/* A TCP header to build. */
struct tcp_spec {
    uint16_t sport;
    uint16_t dport;
    uint32_t seq;
    uint32_t ack;
    uint8_t flags;
    uint16_t window;
    const struct optbuf *opts;  /* Padded with EOL to a multiple of 4. */
    size_t payload_len;
};

static struct tcp_spec
default_tcp(void)
{
    struct tcp_spec t = {
        .sport = 12345,
        .dport = 80,
        .seq = 0x11223344,
        .ack = 0x8899aabb,
        .flags = PAC_TCP_ACK,
        .window = 0xfedc,
        .opts = NULL,
        .payload_len = 0,
    };
    return t;
}

/* Writes the TCP header, options and payload of 't' at 'p'.  Returns the
 * number of bytes written. */
static size_t
put_tcp(uint8_t *p, const struct tcp_spec *t)
{
    size_t opts_len = t->opts ? t->opts->n : 0;
    size_t hlen = 20 + (opts_len + 3) / 4 * 4;

    memset(p, 0, hlen);
    put16(p, t->sport);
    put16(p + 2, t->dport);
    put32(p + 4, t->seq);
    put32(p + 8, t->ack);
    p[12] = (hlen / 4) << 4;
    p[13] = t->flags;
    put16(p + 14, t->window);
    /* Checksum and urgent pointer stay zero: the parser ignores them. */
    if (opts_len) {
        memcpy(p + 20, t->opts->b, opts_len);
    }
    for (size_t i = 0; i < t->payload_len; i++) {
        p[hlen + i] = 0xa5 ^ (i & 0xff);
    }
    return hlen + t->payload_len;
}

#define V4_SRC 0x0a000001       /* 10.0.0.1 */
#define V4_DST 0xc0a80102       /* 192.168.1.2 */

#define IPV4_DF 0x4000
#define IPV4_MF 0x2000

/* Writes an IPv4 header (with 'ip_opts_len' bytes of NOP options) at 'p' for
 * 'l4_len' bytes of transport data.  Returns the header length. */
static size_t
put_ipv4(uint8_t *p, uint8_t tos, uint16_t frag, uint8_t proto,
         size_t ip_opts_len, size_t l4_len)
{
    size_t hlen = 20 + ip_opts_len;
    uint32_t sum = 0;

    memset(p, 0, hlen);
    p[0] = 0x40 | (hlen / 4);
    p[1] = tos;
    put16(p + 2, hlen + l4_len);
    put16(p + 4, 0x1234);
    put16(p + 6, frag);
    p[8] = 64;
    p[9] = proto;
    put32(p + 12, V4_SRC);
    put32(p + 16, V4_DST);
    memset(p + 20, 1, ip_opts_len);
    for (size_t i = 0; i < hlen; i += 2) {
        sum += (p[i] << 8) | p[i + 1];
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    put16(p + 10, ~sum & 0xffff);
    return hlen;
}

/* Builds an IPv4 TCP packet with 'tos' at 'buf'.  Returns its length. */
static size_t
make_v4_tos(uint8_t *buf, const struct tcp_spec *t, uint8_t tos)
{
    uint8_t tcp[PKT_MAX];
    size_t tcp_len = put_tcp(tcp, t);
    size_t hlen = put_ipv4(buf, tos, IPV4_DF, 6, 0, tcp_len);

    memcpy(buf + hlen, tcp, tcp_len);
    return hlen + tcp_len;
}

static size_t
make_v4(uint8_t *buf, const struct tcp_spec *t)
{
    return make_v4_tos(buf, t, 0);
}

static const uint8_t v6_src[16] = {
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
};
static const uint8_t v6_dst[16] = {
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44,
    0x55,
};

/* An IPv6 extension header to build: 'type' is its own protocol number. */
struct ext {
    uint8_t type;
    size_t len;                 /* Multiple of 8 (AH: of 4, at least 12). */
};

/* Builds an IPv6 packet with traffic class 'tc', the extension headers
 * 'exts[]' and then 'nh' with 'l4_len' bytes from 'l4'.  Returns its
 * length. */
static size_t
make_v6_raw(uint8_t *buf, uint8_t tc, const struct ext *exts, size_t n_exts,
            uint8_t nh, const uint8_t *l4, size_t l4_len)
{
    size_t off = 40;

    memset(buf, 0, 40);
    buf[0] = 0x60 | (tc >> 4);
    buf[1] = (tc & 0x0f) << 4 | 0x0a;      /* Flow label 0xabcde. */
    buf[2] = 0xbc;
    buf[3] = 0xde;
    buf[6] = n_exts ? exts[0].type : nh;
    buf[7] = 64;
    memcpy(buf + 8, v6_src, 16);
    memcpy(buf + 24, v6_dst, 16);

    for (size_t i = 0; i < n_exts; i++) {
        uint8_t *e = buf + off;
        size_t len = exts[i].len;

        memset(e, 0, len);
        e[0] = i + 1 < n_exts ? exts[i + 1].type : nh;
        switch (exts[i].type) {
        case 51:                /* AH: length in 4-byte units, minus 2. */
            e[1] = len / 4 - 2;
            put32(e + 4, 0x100);                /* SPI. */
            put32(e + 8, 7);                    /* Sequence number. */
            break;
        case 44:                /* Fragment: first fragment, M set. */
            put16(e + 2, 0x0001);
            put32(e + 4, 0xdeadbeef);
            break;
        case 43:                /* Routing: type 0, segments left 0. */
            e[1] = len / 8 - 1;
            break;
        default:                /* Options: one PadN. */
            e[1] = len / 8 - 1;
            e[2] = 1;
            e[3] = len - 4;
            break;
        }
        off += len;
    }
    if (l4_len) {
        memcpy(buf + off, l4, l4_len);
        off += l4_len;
    }
    put16(buf + 4, off - 40);
    return off;
}

static size_t
make_v6_ext(uint8_t *buf, const struct tcp_spec *t, uint8_t tc,
            const struct ext *exts, size_t n_exts)
{
    uint8_t tcp[PKT_MAX];
    size_t tcp_len = put_tcp(tcp, t);

    return make_v6_raw(buf, tc, exts, n_exts, 6, tcp, tcp_len);
}

static size_t
make_v6(uint8_t *buf, const struct tcp_spec *t)
{
    return make_v6_ext(buf, t, 0, NULL, 0);
}

/* Writes an Ethernet header with the VLAN tags 'tpids[]' (each with VID 100
 * + i) and then 'type' at 'p'.  Returns its length. */
static size_t
put_eth(uint8_t *p, const uint16_t *tpids, size_t n_tags, uint16_t type)
{
    static const uint8_t macs[12] = {
        0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01,
    };
    size_t off = 12;

    memcpy(p, macs, 12);
    for (size_t i = 0; i < n_tags; i++) {
        put16(p + off, tpids[i]);
        put16(p + off + 2, 100 + i);
        off += 4;
    }
    put16(p + off, type);
    return off + 2;
}

/* Parses 'len' bytes of 'data' from an exactly sized heap copy, so that
 * AddressSanitizer catches any read past 'len'. */
static enum pac_parse_status
parse_copy(bool eth, const uint8_t *data, size_t len, struct pac_segment *seg)
{
    uint8_t *copy = malloc(len ? len : 1);
    enum pac_parse_status status;

    if (!copy) {
        abort();
    }
    memcpy(copy, data, len);
    status = (eth ? pac_parse_eth : pac_parse_ip)(copy, len, seg);
    free(copy);
    return status;
}

static enum pac_parse_status
parse_ip(const uint8_t *data, size_t len, struct pac_segment *seg)
{
    return parse_copy(false, data, len, seg);
}

static enum pac_parse_status
parse_eth(const uint8_t *data, size_t len, struct pac_segment *seg)
{
    return parse_copy(true, data, len, seg);
}

static bool
is_v4_mapped(const uint8_t addr[16], uint32_t v4)
{
    static const uint8_t prefix[12] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
    };
    uint8_t b[4];

    put32(b, v4);
    return !memcmp(addr, prefix, 12) && !memcmp(addr + 12, b, 4);
}

/* Checks what must hold for any successfully parsed segment. */
static bool
seg_sane(const struct pac_segment *seg, size_t len)
{
    size_t min_ip = seg->ip_version == 4 ? 20 : 40;

    return ((seg->ip_version == 4 || seg->ip_version == 6)
            && seg->ip_len <= len
            && (uint64_t) seg->payload_len + 20 + min_ip <= seg->ip_len
            && seg->n_sack <= PAC_MAX_SACK_BLOCKS
            && seg->ip_ecn <= 3
            && (!seg->has_wscale || seg->wscale <= 14));
}

/* Checks that CALL returns STATUS (a pac_parse_status), naming what it
 * returned instead.  (PAC_CHECK_EQ's cast of an enum-returning call would
 * trip -Wbad-function-cast.) */
#define CHECK_STATUS(CALL, STATUS)                                      \
    do {                                                                \
        enum pac_parse_status status_ = (CALL);                         \
                                                                        \
        if (status_ != (STATUS)) {                                      \
            fprintf(stderr, "%s:%d: %s returned %s\n", __FILE__,        \
                    __LINE__, #CALL, pac_parse_status_name(status_));   \
        }                                                               \
        PAC_CHECK_EQ(status_, STATUS);                                  \
    } while (0)

/* Basic IPv4. */

static void
test_ipv4_basic(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    t.flags = PAC_TCP_SYN;
    len = make_v4(pkt, &t);
    PAC_CHECK_EQ(len, 40);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.ip_version, 4);
    PAC_CHECK_EQ(seg.sport, 12345);
    PAC_CHECK_EQ(seg.dport, 80);
    PAC_CHECK_EQ(seg.seq, 0x11223344);
    PAC_CHECK_EQ(seg.ack, 0x8899aabb);
    PAC_CHECK_EQ(seg.window, 0xfedc);
    PAC_CHECK_EQ(seg.tcp_flags, PAC_TCP_SYN);
    PAC_CHECK_EQ(seg.ip_ecn, PAC_ECN_NOT_ECT);
    PAC_CHECK_EQ(seg.payload_len, 0);
    PAC_CHECK_EQ(seg.ip_len, 40);
    PAC_CHECK_EQ(seg.mss, 0);
    PAC_CHECK(!seg.has_wscale);
    PAC_CHECK(!seg.sack_permitted);
    PAC_CHECK(!seg.has_timestamp);
    PAC_CHECK_EQ(seg.n_sack, 0);
}

static void
test_ipv4_payload(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    t.flags = PAC_TCP_ACK | PAC_TCP_PSH;
    t.payload_len = 1448;
    len = make_v4(pkt, &t);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.payload_len, 1448);
    PAC_CHECK_EQ(seg.ip_len, 1488);
    PAC_CHECK_EQ(seg.tcp_flags, PAC_TCP_ACK | PAC_TCP_PSH);
}

static void
test_ipv4_mapped_addr(void)
{
    static const uint8_t src[16] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1,
    };
    static const uint8_t dst[16] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 2,
    };
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    len = make_v4(pkt, &t);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    PAC_CHECK(!memcmp(seg.src, src, 16));
    PAC_CHECK(!memcmp(seg.dst, dst, 16));
    PAC_CHECK(is_v4_mapped(seg.src, V4_SRC));
    PAC_CHECK(is_v4_mapped(seg.dst, V4_DST));
}

static void
test_host_order(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    t.sport = 0x0102;
    t.dport = 0xfffe;
    t.seq = 0x01020304;
    t.ack = 0xfffefdfc;
    t.window = 0x0001;
    len = make_v4(pkt, &t);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.sport, 0x0102);
    PAC_CHECK_EQ(seg.dport, 0xfffe);
    PAC_CHECK_EQ(seg.seq, 0x01020304);
    PAC_CHECK_EQ(seg.ack, 0xfffefdfc);
    PAC_CHECK_EQ(seg.window, 1);
}

static void
test_all_flags(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    for (unsigned int flags = 0; flags < 256; flags++) {
        t.flags = flags;
        len = make_v4(pkt, &t);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.tcp_flags, flags);
    }
    /* The reserved bits next to the data offset are not flags. */
    pkt[20 + 12] |= 0x0f;
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.tcp_flags, 0xff);
}

static void
test_ecn_v4(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];

    for (unsigned int ecn = 0; ecn < 4; ecn++) {
        /* DSCP bits (none, EF, all) must not leak in. */
        static const uint8_t dscps[] = { 0, 46, 63 };

        for (size_t i = 0; i < sizeof dscps; i++) {
            size_t len = make_v4_tos(pkt, &t, (dscps[i] << 2) | ecn);

            CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
            PAC_CHECK_EQ(seg.ip_ecn, ecn);
        }
    }
    PAC_CHECK_EQ(PAC_ECN_CE, 3);
    PAC_CHECK_EQ(PAC_ECN_ECT0, 2);
    PAC_CHECK_EQ(PAC_ECN_ECT1, 1);
}

static void
test_ecn_v6(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];

    for (unsigned int ecn = 0; ecn < 4; ecn++) {
        size_t len = make_v6_ext(pkt, &t, 0xfc | ecn, NULL, 0);

        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.ip_ecn, ecn);
    }
    /* DSCP bits alone: not ECT. */
    {
        size_t len = make_v6_ext(pkt, &t, 0xfc, NULL, 0);

        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.ip_ecn, PAC_ECN_NOT_ECT);
    }
}

/* IPv4 header errors. */

static void
test_ipv4_options_skipped(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    uint8_t tcp[PKT_MAX];
    size_t tcp_len, hlen;

    t.payload_len = 10;
    tcp_len = put_tcp(tcp, &t);
    for (size_t opts = 4; opts <= 40; opts += 4) {
        hlen = put_ipv4(pkt, 0, 0, 6, opts, tcp_len);
        PAC_CHECK_EQ(hlen, 20 + opts);
        memcpy(pkt + hlen, tcp, tcp_len);
        CHECK_STATUS(parse_ip(pkt, hlen + tcp_len, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.sport, 12345);
        PAC_CHECK_EQ(seg.seq, 0x11223344);
        PAC_CHECK_EQ(seg.payload_len, 10);
        PAC_CHECK_EQ(seg.ip_len, hlen + tcp_len);
    }
}

static void
test_ipv4_bad_ihl(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    len = make_v4(pkt, &t);
    for (unsigned int ihl = 0; ihl < 5; ihl++) {
        pkt[0] = 0x40 | ihl;
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
    }

    /* IHL 15 (60 bytes) beyond a 40-byte buffer. */
    pkt[0] = 0x4f;
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_TRUNCATED);

    /* IHL 15 inside the buffer but beyond the total length. */
    t.payload_len = 100;
    len = make_v4(pkt, &t);
    pkt[0] = 0x4f;
    put16(pkt + 2, 40);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);

    /* IHL 6 takes TCP's first four bytes as IP options, so the data offset
     * is read from the (zero) TCP checksum. */
    len = make_v4(pkt, &t);
    pkt[0] = 0x46;
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
}

static void
test_ipv4_bad_total_len(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    t.payload_len = 20;
    len = make_v4(pkt, &t);
    PAC_CHECK_EQ(len, 60);

    /* Shorter than the IP header. */
    for (unsigned int tot = 0; tot < 20; tot++) {
        put16(pkt + 2, tot);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
    }

    /* Room for the IP header but not for a TCP header. */
    for (unsigned int tot = 20; tot < 40; tot++) {
        put16(pkt + 2, tot);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
    }

    /* Longer than the buffer. */
    put16(pkt + 2, 61);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_TRUNCATED);
    put16(pkt + 2, 0xffff);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_TRUNCATED);

    /* Shorter total length: the rest is padding, the payload shrinks. */
    put16(pkt + 2, 45);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.payload_len, 5);
    PAC_CHECK_EQ(seg.ip_len, 45);
}

static void
test_bad_version(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    len = make_v4(pkt, &t);
    for (unsigned int v = 0; v < 16; v++) {
        if (v != 4 && v != 6) {
            pkt[0] = (v << 4) | 5;
            CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
        }
    }
    CHECK_STATUS(parse_ip(pkt, 0, &seg), PAC_PARSE_TRUNCATED);
}

static void
test_ipv4_fragments(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    t.payload_len = 64;
    len = make_v4(pkt, &t);

    /* First fragment: MF set, offset 0. */
    put16(pkt + 6, IPV4_MF);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_FRAGMENT);

    /* Last fragment: MF clear, offset nonzero. */
    put16(pkt + 6, 185);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_FRAGMENT);
    put16(pkt + 6, IPV4_DF | 0x1fff);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_FRAGMENT);

    /* Middle fragment. */
    put16(pkt + 6, IPV4_MF | 1);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_FRAGMENT);

    /* A fragment keeps its addresses (the datapath keeps it behind what
     * PAC holds of the same hosts), but not the ports it may not carry. */
    PAC_CHECK_EQ(seg.ip_version, 4);
    PAC_CHECK(!memcmp(&seg.src[12], pkt + 12, 4));
    PAC_CHECK(!memcmp(&seg.dst[12], pkt + 16, 4));
    PAC_CHECK_EQ(seg.sport, 0);
    PAC_CHECK_EQ(seg.dport, 0);

    /* A fragment of another protocol is not TCP. */
    pkt[9] = 17;
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);
    pkt[9] = 6;

    /* DF alone, or nothing, is not a fragment. */
    put16(pkt + 6, IPV4_DF);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    put16(pkt + 6, 0);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
}

static void
test_ipv4_not_tcp(void)
{
    static const uint8_t protos[] = { 1, 17, 41, 47, 50, 51, 132, 255, 0 };
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    uint8_t udp[8 + 32];
    size_t hlen;

    memset(udp, 0x5a, sizeof udp);
    put16(udp, 5353);
    put16(udp + 2, 53);
    put16(udp + 4, sizeof udp);
    for (size_t i = 0; i < sizeof protos; i++) {
        hlen = put_ipv4(pkt, 0, 0, protos[i], 0, sizeof udp);
        memcpy(pkt + hlen, udp, sizeof udp);
        CHECK_STATUS(parse_ip(pkt, hlen + sizeof udp, &seg),
                     PAC_PARSE_NOT_TCP);
    }
}

/* TCP header errors. */

static void
test_tcp_bad_doff(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX] = { 0 };
    size_t len;

    t.payload_len = 12;
    len = make_v4(pkt, &t);
    PAC_CHECK_EQ(len, 52);
    for (unsigned int doff = 0; doff < 5; doff++) {
        pkt[20 + 12] = doff << 4;
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
    }

    /* Doff 8 = 32 bytes = all of the 32 bytes of IP payload: OK, no payload
     * (the "options" are payload bytes; 0xa5 is an unknown kind with a
     * length past the header, so that is malformed; make it NOPs). */
    pkt[20 + 12] = 8 << 4;
    memset(pkt + 40, 1, 12);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.payload_len, 0);

    /* Doff beyond the IP payload, though inside the buffer. */
    for (unsigned int doff = 9; doff < 16; doff++) {
        pkt[20 + 12] = doff << 4;
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
        CHECK_STATUS(parse_ip(pkt, len + 64, &seg), PAC_PARSE_MALFORMED);
    }
}

/* TCP options. */

/* Builds an IPv4 ACK with the options in 'ob' and parses it into 'seg'. */
static enum pac_parse_status
parse_with_opts(const struct optbuf *ob, struct pac_segment *seg)
{
    struct tcp_spec t = default_tcp();
    uint8_t pkt[PKT_MAX];
    size_t len;

    t.opts = ob;
    t.payload_len = 7;
    len = make_v4(pkt, &t);
    return parse_ip(pkt, len, seg);
}

static void
test_opt_mss(void)
{
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    opt_mss(&ob, 8960);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.mss, 8960);
    PAC_CHECK_EQ(seg.payload_len, 7);
    PAC_CHECK(!seg.has_wscale && !seg.sack_permitted && !seg.has_timestamp);

    ob.n = 0;
    opt_mss(&ob, 0xffff);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.mss, 0xffff);
}

static void
test_opt_wscale(void)
{
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    opt_nop(&ob);
    opt_wscale(&ob, 0);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK(seg.has_wscale);
    PAC_CHECK_EQ(seg.wscale, 0);

    ob.n = 0;
    opt_wscale(&ob, 14);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK(seg.has_wscale);
    PAC_CHECK_EQ(seg.wscale, 14);

    /* RFC 7323: a shift over 14 is used as 14. */
    ob.n = 0;
    opt_wscale(&ob, 200);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK(seg.has_wscale);
    PAC_CHECK_EQ(seg.wscale, 14);
}

static void
test_opt_sack_permitted(void)
{
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    opt_nop(&ob);
    opt_nop(&ob);
    opt_sackperm(&ob);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK(seg.sack_permitted);
    PAC_CHECK_EQ(seg.n_sack, 0);
}

static void
test_opt_sack_1(void)
{
    static const struct pac_sack_block b[] = { { 0xfffffff0, 0x00000100 } };
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    opt_nop(&ob);
    opt_nop(&ob);
    opt_sack(&ob, b, 1);
    PAC_CHECK_EQ(ob.n, 12);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.n_sack, 1);
    PAC_CHECK_EQ(seg.sack[0].left, 0xfffffff0);
    PAC_CHECK_EQ(seg.sack[0].right, 0x00000100);
    PAC_CHECK(!seg.sack_permitted);
}

static void
test_opt_sack_4(void)
{
    static const struct pac_sack_block b[] = {
        { 1000, 2000 }, { 3000, 4000 }, { 0x80000000, 0x80001000 },
        { 0x01020304, 0x05060708 },
    };
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    opt_nop(&ob);
    opt_nop(&ob);
    opt_sack(&ob, b, 4);
    PAC_CHECK_EQ(ob.n, 36);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.n_sack, 4);
    for (int i = 0; i < 4; i++) {
        PAC_CHECK_EQ(seg.sack[i].left, b[i].left);
        PAC_CHECK_EQ(seg.sack[i].right, b[i].right);
    }
    PAC_CHECK_EQ(seg.payload_len, 7);

    /* 2 and 3 blocks, with timestamps (the usual Linux layout). */
    for (size_t n = 2; n <= 3; n++) {
        ob.n = 0;
        opt_nop(&ob);
        opt_nop(&ob);
        opt_ts(&ob, 5, 6);
        opt_nop(&ob);
        opt_nop(&ob);
        opt_sack(&ob, b, n);
        CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.n_sack, n);
        PAC_CHECK_EQ(seg.sack[n - 1].right, b[n - 1].right);
        PAC_CHECK(seg.has_timestamp);
        PAC_CHECK_EQ(seg.tsval, 5);
    }
}

static void
test_opt_sack_bad_len(void)
{
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    /* Length 2 (no blocks) and 12 (not 2 + 8n): ignored, not malformed. */
    static const uint8_t empty[] = { 5, 2 };
    static const uint8_t odd[] = { 5, 12, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0 };

    opt_raw(&ob, empty, sizeof empty);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.n_sack, 0);

    ob.n = 0;
    opt_raw(&ob, odd, sizeof odd);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.n_sack, 0);
}

static void
test_opt_timestamp(void)
{
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    opt_nop(&ob);
    opt_nop(&ob);
    opt_ts(&ob, 0xdeadbeef, 0x01234567);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK(seg.has_timestamp);
    PAC_CHECK_EQ(seg.tsval, 0xdeadbeef);
    PAC_CHECK_EQ(seg.tsecr, 0x01234567);
}

static void
test_opt_linux_syn(void)
{
    struct tcp_spec t = default_tcp();
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    opt_linux_syn(&ob);
    t.opts = &ob;
    t.flags = PAC_TCP_SYN | PAC_TCP_ECE | PAC_TCP_CWR;
    len = make_v4(pkt, &t);
    PAC_CHECK_EQ(len, 60);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.tcp_flags, PAC_TCP_SYN | PAC_TCP_ECE | PAC_TCP_CWR);
    PAC_CHECK_EQ(seg.mss, 1460);
    PAC_CHECK(seg.sack_permitted);
    PAC_CHECK(seg.has_timestamp);
    PAC_CHECK_EQ(seg.tsval, 0xa1b2c3d4);
    PAC_CHECK_EQ(seg.tsecr, 0);
    PAC_CHECK(seg.has_wscale);
    PAC_CHECK_EQ(seg.wscale, 7);
    PAC_CHECK_EQ(seg.payload_len, 0);
    PAC_CHECK_EQ(seg.ip_len, 60);
}

static void
test_opt_eol(void)
{
    /* EOL ends the list: the garbage after it (a zero-length option) is not
     * parsed. */
    static const uint8_t opts[] = { 2, 4, 0x05, 0xb4, 0, 2, 0, 0x7f };
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    opt_raw(&ob, opts, sizeof opts);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.mss, 1460);

    /* An EOL first: nothing is parsed. */
    ob.n = 0;
    ob.b[ob.n++] = 0;
    opt_mss(&ob, 1000);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.mss, 0);
}

static void
test_opt_nop_only(void)
{
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    for (int i = 0; i < 40; i++) {
        opt_nop(&ob);
    }
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.payload_len, 7);
    PAC_CHECK_EQ(seg.ip_len, 20 + 60 + 7);
}

static void
test_opt_unknown_skipped(void)
{
    /* MD5 signature (19, length 18), an experimental option (254, length 4)
     * and an unknown kind with length 2, then timestamps. */
    static const uint8_t md5[18] = { 19, 18, 8, 10, 8, 10, 8, 10, 8, 10 };
    static const uint8_t exp[] = { 254, 4, 8, 10 };
    static const uint8_t empty[] = { 99, 2 };
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    opt_raw(&ob, md5, sizeof md5);
    opt_raw(&ob, exp, sizeof exp);
    opt_raw(&ob, empty, sizeof empty);
    opt_ts(&ob, 42, 43);
    PAC_CHECK_EQ(ob.n, 34);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK(seg.has_timestamp);
    PAC_CHECK_EQ(seg.tsval, 42);
    PAC_CHECK_EQ(seg.tsecr, 43);
    PAC_CHECK_EQ(seg.mss, 0);
}

static void
test_opt_wrong_len_ignored(void)
{
    /* Known kinds with unexpected lengths are skipped by their length. */
    static const uint8_t mss6[] = { 2, 6, 0x05, 0xb4, 0, 0 };
    static const uint8_t ws4[] = { 3, 4, 7, 0 };
    static const uint8_t sp3[] = { 4, 3, 0 };
    static const uint8_t ts8[] = { 8, 8, 0, 0, 0, 1, 0, 0 };
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    opt_raw(&ob, mss6, sizeof mss6);
    opt_raw(&ob, ws4, sizeof ws4);
    opt_raw(&ob, sp3, sizeof sp3);
    opt_raw(&ob, ts8, sizeof ts8);
    opt_mss(&ob, 536);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.mss, 536);
    PAC_CHECK(!seg.has_wscale);
    PAC_CHECK(!seg.sack_permitted);
    PAC_CHECK(!seg.has_timestamp);
}

static void
test_opt_malformed(void)
{
    struct optbuf ob;
    struct pac_segment seg;

    /* Option lengths 0 and 1, for a known and an unknown kind. */
    static const uint8_t kinds[] = { 2, 3, 4, 5, 8, 30 };
    for (size_t i = 0; i < sizeof kinds; i++) {
        for (uint8_t olen = 0; olen < 2; olen++) {
            ob.n = 0;
            ob.b[ob.n++] = kinds[i];
            ob.b[ob.n++] = olen;
            opt_mss(&ob, 1460);
            CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_MALFORMED);
        }
    }

    /* A length running past the header (into the payload). */
    ob.n = 0;
    opt_nop(&ob);
    opt_nop(&ob);
    ob.b[ob.n++] = 8;
    ob.b[ob.n++] = 10;
    memset(&ob.b[ob.n], 0, 4);
    ob.n += 4;          /* Header options: 8 bytes; TS claims 10 from 2. */
    PAC_CHECK_EQ(ob.n, 8);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_MALFORMED);

    /* A SACK option claiming 4 blocks in 12 bytes of options. */
    ob.n = 0;
    ob.b[ob.n++] = 5;
    ob.b[ob.n++] = 34;
    memset(&ob.b[ob.n], 0, 10);
    ob.n += 10;
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_MALFORMED);

    /* A kind byte in the last option byte, with no room for its length. */
    ob.n = 0;
    opt_nop(&ob);
    opt_nop(&ob);
    opt_nop(&ob);
    ob.b[ob.n++] = 2;
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_MALFORMED);
    /* Such a segment keeps its addresses and ports: the datapath keeps it
     * behind its connection's held segments. */
    PAC_CHECK_EQ(seg.sport, 12345);
    PAC_CHECK_EQ(seg.dport, 80);
    PAC_CHECK(seg.ip_version == 4 || seg.ip_version == 6);
    ob.b[ob.n - 1] = 1;
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
}

static void
test_opt_max_len(void)
{
    static const struct pac_sack_block b[] = {
        { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 },
    };
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    /* 40 bytes of options: 4 SACK blocks (34), MSS (4), 2 NOPs. */
    opt_sack(&ob, b, 4);
    opt_mss(&ob, 1200);
    opt_nop(&ob);
    opt_nop(&ob);
    PAC_CHECK_EQ(ob.n, 40);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.n_sack, 4);
    PAC_CHECK_EQ(seg.sack[3].right, 8);
    PAC_CHECK_EQ(seg.mss, 1200);
    PAC_CHECK_EQ(seg.ip_len, 20 + 60 + 7);
    PAC_CHECK_EQ(seg.payload_len, 7);
}

static void
test_opt_repeated(void)
{
    static const struct pac_sack_block b1[] = { { 1, 2 }, { 3, 4 } };
    static const struct pac_sack_block b2[] = { { 9, 10 } };
    struct optbuf ob = { .n = 0 };
    struct pac_segment seg;

    /* A later option of the same kind wins. */
    opt_mss(&ob, 1000);
    opt_mss(&ob, 1400);
    opt_sack(&ob, b1, 2);
    opt_sack(&ob, b2, 1);
    CHECK_STATUS(parse_with_opts(&ob, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.mss, 1400);
    PAC_CHECK_EQ(seg.n_sack, 1);
    PAC_CHECK_EQ(seg.sack[0].left, 9);
    PAC_CHECK_EQ(seg.sack[0].right, 10);
    PAC_CHECK_EQ(seg.sack[1].left, 0);
    PAC_CHECK_EQ(seg.sack[1].right, 0);
}

/* Truncation and mutation sweeps. */

static size_t
make_full_syn_v4(uint8_t *pkt)
{
    struct tcp_spec t = default_tcp();
    struct optbuf ob = { .n = 0 };

    opt_linux_syn(&ob);
    t.opts = &ob;
    t.flags = PAC_TCP_SYN;
    return make_v4(pkt, &t);
}

static size_t
make_full_syn_v6(uint8_t *pkt)
{
    static const struct ext exts[] = { { 0, 8 }, { 60, 16 } };
    struct tcp_spec t = default_tcp();
    struct optbuf ob = { .n = 0 };

    opt_linux_syn(&ob);
    t.opts = &ob;
    t.flags = PAC_TCP_SYN;
    return make_v6_ext(pkt, &t, 0, exts, 2);
}

/* Checks that every proper prefix of 'pkt' fails as truncated or
 * malformed, and that the whole of it parses. */
static void
check_prefixes(bool eth, const uint8_t *pkt, size_t len, bool *ok)
{
    struct pac_segment seg;

    *ok = false;
    for (size_t n = 0; n < len; n++) {
        enum pac_parse_status s = parse_copy(eth, pkt, n, &seg);

        if (s != PAC_PARSE_TRUNCATED && s != PAC_PARSE_MALFORMED) {
            fprintf(stderr, "prefix %zu of %zu: %s\n", n, len,
                    pac_parse_status_name(s));
            return;
        }
    }
    *ok = parse_copy(eth, pkt, len, &seg) == PAC_PARSE_OK;
}

static void
test_truncation_v4(void)
{
    uint8_t pkt[PKT_MAX];
    size_t len = make_full_syn_v4(pkt);
    bool ok;

    PAC_CHECK_EQ(len, 60);
    check_prefixes(false, pkt, len, &ok);
    PAC_CHECK(ok);
}

static void
test_truncation_v6(void)
{
    uint8_t pkt[PKT_MAX];
    size_t len = make_full_syn_v6(pkt);
    bool ok;

    PAC_CHECK_EQ(len, 40 + 24 + 40);
    check_prefixes(false, pkt, len, &ok);
    PAC_CHECK(ok);
}

static void
test_truncation_eth(void)
{
    static const uint16_t tags[] = { 0x88a8, 0x8100 };
    uint8_t frame[PKT_MAX];
    size_t hlen, len;
    bool ok;

    hlen = put_eth(frame, tags, 2, 0x0800);
    len = hlen + make_full_syn_v4(frame + hlen);
    check_prefixes(true, frame, len, &ok);
    PAC_CHECK(ok);

    hlen = put_eth(frame, NULL, 0, 0x86dd);
    len = hlen + make_full_syn_v6(frame + hlen);
    check_prefixes(true, frame, len, &ok);
    PAC_CHECK(ok);
}

/* Sets every byte of a full SYN to every value in turn: whatever parses must
 * be self-consistent. */
static void
test_mutations(void)
{
    uint8_t pkts[2][PKT_MAX];
    size_t lens[2];
    int n_ok = 0;

    lens[0] = make_full_syn_v4(pkts[0]);
    lens[1] = make_full_syn_v6(pkts[1]);
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < lens[k]; i++) {
            for (unsigned int v = 0; v < 256; v++) {
                uint8_t pkt[PKT_MAX];
                struct pac_segment seg;

                memcpy(pkt, pkts[k], lens[k]);
                pkt[i] = v;
                if (parse_ip(pkt, lens[k], &seg) == PAC_PARSE_OK) {
                    PAC_CHECK(seg_sane(&seg, lens[k]));
                    n_ok++;
                }
            }
        }
    }
    PAC_CHECK(n_ok > 0);
}

/* Padding. */

static void
test_padding(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    t.payload_len = 1;
    len = make_v4(pkt, &t);
    PAC_CHECK_EQ(len, 41);
    memset(pkt + len, 0xee, 32);
    for (size_t pad = 0; pad <= 32; pad++) {
        CHECK_STATUS(parse_ip(pkt, len + pad, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.ip_len, 41);
        PAC_CHECK_EQ(seg.payload_len, 1);
    }

    len = make_v6(pkt, &t);
    memset(pkt + len, 0xee, 32);
    for (size_t pad = 0; pad <= 32; pad++) {
        CHECK_STATUS(parse_ip(pkt, len + pad, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.ip_len, 61);
        PAC_CHECK_EQ(seg.payload_len, 1);
    }
}

static void
test_eth_min_frame_padding(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t frame[PKT_MAX];
    size_t hlen;

    /* A bare ACK is 54 bytes; Ethernet pads it to 60. */
    hlen = put_eth(frame, NULL, 0, 0x0800);
    PAC_CHECK_EQ(hlen + make_v4(frame + hlen, &t), 54);
    memset(frame + 54, 0, 6);
    CHECK_STATUS(parse_eth(frame, 60, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.ip_len, 40);
    PAC_CHECK_EQ(seg.payload_len, 0);
}

/* IPv6. */

static void
test_ipv6_basic(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    t.payload_len = 100;
    t.flags = PAC_TCP_FIN | PAC_TCP_ACK;
    len = make_v6(pkt, &t);
    PAC_CHECK_EQ(len, 160);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
    PAC_CHECK_EQ(seg.ip_version, 6);
    PAC_CHECK(!memcmp(seg.src, v6_src, 16));
    PAC_CHECK(!memcmp(seg.dst, v6_dst, 16));
    PAC_CHECK_EQ(seg.sport, 12345);
    PAC_CHECK_EQ(seg.dport, 80);
    PAC_CHECK_EQ(seg.seq, 0x11223344);
    PAC_CHECK_EQ(seg.ack, 0x8899aabb);
    PAC_CHECK_EQ(seg.tcp_flags, PAC_TCP_FIN | PAC_TCP_ACK);
    PAC_CHECK_EQ(seg.payload_len, 100);
    PAC_CHECK_EQ(seg.ip_len, 160);
    PAC_CHECK_EQ(seg.ip_ecn, 0);
}

static void
test_ipv6_ext_headers(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    t.payload_len = 33;

    /* Hop-by-hop + destination options. */
    {
        static const struct ext exts[] = { { 0, 8 }, { 60, 24 } };

        len = make_v6_ext(pkt, &t, 0, exts, 2);
        PAC_CHECK_EQ(len, 40 + 32 + 20 + 33);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.payload_len, 33);
        PAC_CHECK_EQ(seg.ip_len, len);
        PAC_CHECK_EQ(seg.sport, 12345);
        PAC_CHECK_EQ(seg.seq, 0x11223344);
    }

    /* Hop-by-hop, destination options, routing, AH, destination options. */
    {
        static const struct ext exts[] = {
            { 0, 16 }, { 60, 8 }, { 43, 24 }, { 51, 24 }, { 60, 8 },
        };

        len = make_v6_ext(pkt, &t, 0, exts, 5);
        PAC_CHECK_EQ(len, 40 + 80 + 20 + 33);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.payload_len, 33);
        PAC_CHECK_EQ(seg.dport, 80);
    }

    /* AH alone, with a 12-byte header (no ICV) and a 16-byte one: AH length
     * is in 4-byte units, so 16 is not a multiple of 8 and still valid. */
    for (size_t ah = 12; ah <= 16; ah += 4) {
        struct ext exts[] = { { 51, ah } };

        len = make_v6_ext(pkt, &t, 0, exts, 1);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);
        PAC_CHECK_EQ(seg.payload_len, 33);
        PAC_CHECK_EQ(seg.window, 0xfedc);
    }
}

static void
test_ipv6_ext_limit(void)
{
    struct tcp_spec t = default_tcp();
    struct ext exts[10];
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    for (int i = 0; i < 10; i++) {
        exts[i].type = 60;
        exts[i].len = 8;
    }

    /* Eight extension headers are walked. */
    len = make_v6_ext(pkt, &t, 0, exts, 8);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);

    /* Nine are not: not parsed as TCP. */
    len = make_v6_ext(pkt, &t, 0, exts, 9);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);
    len = make_v6_ext(pkt, &t, 0, exts, 10);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);
}

static void
test_ipv6_hop_by_hop_not_first(void)
{
    static const struct ext exts[] = { { 60, 8 }, { 0, 8 } };
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    len = make_v6_ext(pkt, &t, 0, exts, 2);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
}

static void
test_ipv6_ext_past_payload(void)
{
    static const struct ext exts[] = { { 0, 8 }, { 60, 8 } };
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX] = { 0 };
    size_t len;

    len = make_v6_ext(pkt, &t, 0, exts, 2);
    PAC_CHECK_EQ(len, 76);

    /* Destination options claiming 8 * 256 bytes. */
    pkt[48 + 1] = 255;
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
    CHECK_STATUS(parse_ip(pkt, PKT_MAX, &seg), PAC_PARSE_MALFORMED);
    pkt[48 + 1] = 0;

    /* Payload length covering only part of the headers or TCP. */
    for (unsigned int plen = 1; plen < 36; plen++) {
        put16(pkt + 4, plen);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
    }

    /* Payload length beyond the buffer. */
    put16(pkt + 4, 37);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_TRUNCATED);
    put16(pkt + 4, 36);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_OK);

    /* AH running past the payload. */
    {
        static const struct ext ah[] = { { 51, 12 } };

        len = make_v6_ext(pkt, &t, 0, ah, 1);
        pkt[40 + 1] = 200;
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);

        /* No room for AH's length byte. */
        put16(pkt + 4, 1);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
    }
}

static void
test_ipv6_fragment(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    {
        static const struct ext exts[] = { { 44, 8 } };

        len = make_v6_ext(pkt, &t, 0, exts, 1);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_FRAGMENT);

        /* An atomic fragment (offset 0, M clear) is still a fragment. */
        put16(pkt + 40 + 2, 0);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_FRAGMENT);
        PAC_CHECK_EQ(seg.ip_version, 6);
        PAC_CHECK(!memcmp(seg.src, v6_src, 16));
        PAC_CHECK(!memcmp(seg.dst, v6_dst, 16));
        PAC_CHECK_EQ(seg.sport, 0);

        /* A fragment of UDP is not TCP. */
        pkt[40] = 17;
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);

        /* A fragment header cut short by the IP length. */
        pkt[40] = 6;
        put16(pkt + 4, 4);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
    }
    {
        static const struct ext exts[] = { { 0, 8 }, { 60, 8 }, { 44, 8 } };

        len = make_v6_ext(pkt, &t, 0, exts, 3);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_FRAGMENT);
    }
}

static void
test_ipv6_not_tcp(void)
{
    static const uint8_t esp[16] = { 0, 0, 1, 0, 0, 0, 0, 1 };
    static const uint8_t udp[16] = { 0x14, 0xe9, 0, 53, 0, 16 };
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    /* ESP, directly and after hop-by-hop. */
    len = make_v6_raw(pkt, 0, NULL, 0, 50, esp, sizeof esp);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);
    {
        static const struct ext exts[] = { { 0, 8 } };

        len = make_v6_raw(pkt, 0, exts, 1, 50, esp, sizeof esp);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);
    }

    /* UDP, ICMPv6. */
    len = make_v6_raw(pkt, 0, NULL, 0, 17, udp, sizeof udp);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);
    len = make_v6_raw(pkt, 0, NULL, 0, 58, udp, sizeof udp);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);

    /* No next header, with and without bytes after it. */
    len = make_v6_raw(pkt, 0, NULL, 0, 59, udp, sizeof udp);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);
    {
        static const struct ext exts[] = { { 60, 8 } };

        len = make_v6_raw(pkt, 0, exts, 1, 59, NULL, 0);
        CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);
    }
}

static void
test_ipv6_jumbogram(void)
{
    static const struct ext exts[] = { { 0, 8 } };
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX];
    size_t len;

    /* Payload length 0 with a hop-by-hop header, as a jumbogram has (the
     * jumbo payload option itself is not parsed). */
    len = make_v6_ext(pkt, &t, 0, exts, 1);
    put16(pkt + 4, 0);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);

    /* And a header with nothing after it. */
    len = make_v6_raw(pkt, 0, NULL, 0, 6, NULL, 0);
    PAC_CHECK_EQ(len, 40);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_NOT_TCP);
}

static void
test_ipv6_tcp_short(void)
{
    static const uint8_t tcp[19] = { 0 };
    struct pac_segment seg;
    uint8_t pkt[PKT_MAX] = { 0 };
    size_t len;

    /* The payload length says there is less than a TCP header. */
    len = make_v6_raw(pkt, 0, NULL, 0, 6, tcp, sizeof tcp);
    CHECK_STATUS(parse_ip(pkt, len, &seg), PAC_PARSE_MALFORMED);
    CHECK_STATUS(parse_ip(pkt, len + 20, &seg), PAC_PARSE_MALFORMED);
}

/* Ethernet. */

static void
check_eth(const uint16_t *tags, size_t n_tags, bool v6, bool *ok)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t frame[PKT_MAX];
    size_t hlen, len;

    *ok = false;
    t.payload_len = 10;
    hlen = put_eth(frame, tags, n_tags, v6 ? 0x86dd : 0x0800);
    len = hlen + (v6 ? make_v6 : make_v4)(frame + hlen, &t);
    if (hlen != 14 + 4 * n_tags
        || parse_eth(frame, len, &seg) != PAC_PARSE_OK
        || seg.ip_version != (v6 ? 6 : 4)
        || seg.sport != 12345
        || seg.payload_len != 10
        || seg.ip_len != len - hlen) {
        return;
    }
    *ok = true;
}

static void
test_eth_vlans(void)
{
    static const uint16_t one[] = { 0x8100 };
    static const uint16_t one_ad[] = { 0x88a8 };
    static const uint16_t qinq[] = { 0x88a8, 0x8100 };
    static const uint16_t dot1q2[] = { 0x8100, 0x8100 };
    bool ok;

    for (int v6 = 0; v6 < 2; v6++) {
        check_eth(NULL, 0, v6, &ok);
        PAC_CHECK(ok);
        check_eth(one, 1, v6, &ok);
        PAC_CHECK(ok);
        check_eth(one_ad, 1, v6, &ok);
        PAC_CHECK(ok);
        check_eth(qinq, 2, v6, &ok);
        PAC_CHECK(ok);
        check_eth(dot1q2, 2, v6, &ok);
        PAC_CHECK(ok);
    }
}

static void
test_eth_not_tcp(void)
{
    static const uint16_t three[] = { 0x88a8, 0x8100, 0x8100 };
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t frame[PKT_MAX];
    size_t hlen, len;

    /* Three VLAN tags: not parsed. */
    hlen = put_eth(frame, three, 3, 0x0800);
    len = hlen + make_v4(frame + hlen, &t);
    CHECK_STATUS(parse_eth(frame, len, &seg), PAC_PARSE_NOT_TCP);

    /* ARP, MPLS, an 802.3 length field. */
    static const uint16_t types[] = { 0x0806, 0x8847, 0x0040, 0x9100 };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        hlen = put_eth(frame, NULL, 0, types[i]);
        len = hlen + make_v4(frame + hlen, &t);
        CHECK_STATUS(parse_eth(frame, len, &seg), PAC_PARSE_NOT_TCP);
    }

    /* A UDP packet inside a tag. */
    {
        static const uint16_t one[] = { 0x8100 };
        uint8_t udp[8] = { 0, 53, 0, 53, 0, 8, 0, 0 };

        hlen = put_eth(frame, one, 1, 0x0800);
        len = hlen + put_ipv4(frame + hlen, 0, 0, 17, 0, sizeof udp);
        memcpy(frame + len, udp, sizeof udp);
        len += sizeof udp;
        CHECK_STATUS(parse_eth(frame, len, &seg), PAC_PARSE_NOT_TCP);
    }
}

static void
test_eth_version_mismatch(void)
{
    struct tcp_spec t = default_tcp();
    struct pac_segment seg;
    uint8_t frame[PKT_MAX];
    size_t hlen, len;

    hlen = put_eth(frame, NULL, 0, 0x0800);
    len = hlen + make_v6(frame + hlen, &t);
    CHECK_STATUS(parse_eth(frame, len, &seg), PAC_PARSE_MALFORMED);

    hlen = put_eth(frame, NULL, 0, 0x86dd);
    len = hlen + make_v4(frame + hlen, &t);
    memset(frame + len, 0, 40);
    CHECK_STATUS(parse_eth(frame, len + 40, &seg), PAC_PARSE_MALFORMED);
}

static void
test_eth_short(void)
{
    static const uint16_t qinq[] = { 0x88a8, 0x8100 };
    struct pac_segment seg;
    uint8_t frame[PKT_MAX];
    size_t hlen;

    /* Every cut inside the Ethernet header and its tags. */
    hlen = put_eth(frame, qinq, 2, 0x0800);
    PAC_CHECK_EQ(hlen, 22);
    for (size_t n = 0; n <= hlen; n++) {
        CHECK_STATUS(parse_eth(frame, n, &seg), PAC_PARSE_TRUNCATED);
    }
}

static void
test_status_names(void)
{
    PAC_CHECK(!strcmp(pac_parse_status_name(PAC_PARSE_OK), "ok"));
    PAC_CHECK(!strcmp(pac_parse_status_name(PAC_PARSE_NOT_TCP), "not_tcp"));
    PAC_CHECK(!strcmp(pac_parse_status_name(PAC_PARSE_FRAGMENT),
                      "fragment"));
    PAC_CHECK(!strcmp(pac_parse_status_name(PAC_PARSE_TRUNCATED),
                      "truncated"));
    PAC_CHECK(!strcmp(pac_parse_status_name(PAC_PARSE_MALFORMED),
                      "malformed"));
    PAC_CHECK(!strcmp(pac_parse_status_name((enum pac_parse_status) 99),
                      "unknown"));
}

/* Fuzzer seeds. */

static bool
write_file(const char *dir, const char *name, const uint8_t *data,
           size_t len)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return false;
    }
    if (fwrite(data, 1, len, f) != len || fclose(f)) {
        fprintf(stderr, "%s: write failed\n", path);
        return false;
    }
    return true;
}

static int
write_corpus(const char *dir)
{
    static const struct pac_sack_block b[] = {
        { 1000, 2000 }, { 3000, 4000 }, { 5000, 6000 }, { 7000, 8000 },
    };
    static const uint16_t qinq[] = { 0x88a8, 0x8100 };
    struct tcp_spec t = default_tcp();
    struct optbuf ob = { .n = 0 };
    uint8_t pkt[PKT_MAX];
    size_t len, hlen;
    bool ok = true;

    len = make_full_syn_v4(pkt);
    ok &= write_file(dir, "v4-syn-options", pkt, len);

    len = make_full_syn_v6(pkt);
    ok &= write_file(dir, "v6-syn-hbh-dstopts", pkt, len);

    opt_nop(&ob);
    opt_nop(&ob);
    opt_ts(&ob, 1, 2);
    opt_nop(&ob);
    opt_nop(&ob);
    opt_sack(&ob, b, 3);
    t.opts = &ob;
    t.payload_len = 16;
    len = make_v4_tos(pkt, &t, 3);
    ok &= write_file(dir, "v4-ack-sack-ce", pkt, len);

    {
        static const struct ext exts[] = { { 43, 8 }, { 51, 24 } };

        len = make_v6_ext(pkt, &t, 2, exts, 2);
        ok &= write_file(dir, "v6-routing-ah", pkt, len);
    }
    {
        static const struct ext exts[] = { { 44, 8 } };

        len = make_v6_ext(pkt, &t, 0, exts, 1);
        ok &= write_file(dir, "v6-fragment", pkt, len);
    }

    t = default_tcp();
    hlen = put_ipv4(pkt, 0, 0, 6, 8, 20);
    len = hlen + put_tcp(pkt + hlen, &t);
    ok &= write_file(dir, "v4-ip-options", pkt, len);

    hlen = put_eth(pkt, qinq, 2, 0x0800);
    len = hlen + make_full_syn_v4(pkt + hlen);
    memset(pkt + len, 0, 8);
    ok &= write_file(dir, "eth-qinq-v4-syn-padded", pkt, len + 8);

    hlen = put_eth(pkt, NULL, 0, 0x86dd);
    len = hlen + make_full_syn_v6(pkt + hlen);
    ok &= write_file(dir, "eth-v6-syn", pkt, len);

    return ok ? 0 : 1;
}

int
main(int argc, char *argv[])
{
    if (argc == 3 && !strcmp(argv[1], "--write-corpus")) {
        return write_corpus(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [--write-corpus DIR]\n", argv[0]);
        return 2;
    }

    PAC_RUN_TEST(test_ipv4_basic);
    PAC_RUN_TEST(test_ipv4_payload);
    PAC_RUN_TEST(test_ipv4_mapped_addr);
    PAC_RUN_TEST(test_host_order);
    PAC_RUN_TEST(test_all_flags);
    PAC_RUN_TEST(test_ecn_v4);
    PAC_RUN_TEST(test_ecn_v6);
    PAC_RUN_TEST(test_ipv4_options_skipped);
    PAC_RUN_TEST(test_ipv4_bad_ihl);
    PAC_RUN_TEST(test_ipv4_bad_total_len);
    PAC_RUN_TEST(test_bad_version);
    PAC_RUN_TEST(test_ipv4_fragments);
    PAC_RUN_TEST(test_ipv4_not_tcp);
    PAC_RUN_TEST(test_tcp_bad_doff);
    PAC_RUN_TEST(test_opt_mss);
    PAC_RUN_TEST(test_opt_wscale);
    PAC_RUN_TEST(test_opt_sack_permitted);
    PAC_RUN_TEST(test_opt_sack_1);
    PAC_RUN_TEST(test_opt_sack_4);
    PAC_RUN_TEST(test_opt_sack_bad_len);
    PAC_RUN_TEST(test_opt_timestamp);
    PAC_RUN_TEST(test_opt_linux_syn);
    PAC_RUN_TEST(test_opt_eol);
    PAC_RUN_TEST(test_opt_nop_only);
    PAC_RUN_TEST(test_opt_unknown_skipped);
    PAC_RUN_TEST(test_opt_wrong_len_ignored);
    PAC_RUN_TEST(test_opt_malformed);
    PAC_RUN_TEST(test_opt_max_len);
    PAC_RUN_TEST(test_opt_repeated);
    PAC_RUN_TEST(test_truncation_v4);
    PAC_RUN_TEST(test_truncation_v6);
    PAC_RUN_TEST(test_truncation_eth);
    PAC_RUN_TEST(test_mutations);
    PAC_RUN_TEST(test_padding);
    PAC_RUN_TEST(test_eth_min_frame_padding);
    PAC_RUN_TEST(test_ipv6_basic);
    PAC_RUN_TEST(test_ipv6_ext_headers);
    PAC_RUN_TEST(test_ipv6_ext_limit);
    PAC_RUN_TEST(test_ipv6_hop_by_hop_not_first);
    PAC_RUN_TEST(test_ipv6_ext_past_payload);
    PAC_RUN_TEST(test_ipv6_fragment);
    PAC_RUN_TEST(test_ipv6_not_tcp);
    PAC_RUN_TEST(test_ipv6_jumbogram);
    PAC_RUN_TEST(test_ipv6_tcp_short);
    PAC_RUN_TEST(test_eth_vlans);
    PAC_RUN_TEST(test_eth_not_tcp);
    PAC_RUN_TEST(test_eth_version_mismatch);
    PAC_RUN_TEST(test_eth_short);
    PAC_RUN_TEST(test_status_names);

    PAC_TEST_MAIN_END;
}
