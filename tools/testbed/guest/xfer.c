/*
 * Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE.
 *
 * xfer: the guest's end of one checked TCP transfer.
 *
 * A static C twin of tools/testbed/tcp_xfer.py for the busybox guests of
 * tests/vm (which have no Python): same wire protocol (the receiver reads
 * until EOF and sends back the 32-byte SHA-256 of what it read), same
 * "READY <port>" line and same one-line JSON result, so that either end of
 * a transfer can be the guest and the other tcp_xfer.py.
 *
 *     xfer recv --bind ADDR [--port P] [--idle-timeout S]
 *     xfer send --host ADDR --port P --bytes N [--idle-timeout S]
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

/* SHA-256 (FIPS 180-4). */
struct sha256 {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t n;
};

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha256_init(struct sha256 *s)
{
    static const uint32_t h0[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memcpy(s->h, h0, sizeof h0);
    s->len = 0;
    s->n = 0;
}

static void
sha256_block(struct sha256 *s, const uint8_t *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, h;
    int i;

    for (i = 0; i < 16; i++) {
        w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16
               | (uint32_t) p[4 * i + 2] << 8 | p[4 * i + 3];
    }
    for (i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3];
    e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
    for (i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25))
                      + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22))
                      + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

static void
sha256_update(struct sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;

    s->len += len;
    while (len) {
        size_t take = 64 - s->n < len ? 64 - s->n : len;

        if (!s->n && len >= 64) {
            sha256_block(s, p);
            p += 64;
            len -= 64;
            continue;
        }
        memcpy(s->buf + s->n, p, take);
        s->n += take;
        p += take;
        len -= take;
        if (s->n == 64) {
            sha256_block(s, s->buf);
            s->n = 0;
        }
    }
}

static void
sha256_final(struct sha256 *s, uint8_t out[32])
{
    uint64_t bits = s->len * 8;
    uint8_t pad[72] = { 0x80 };
    size_t padlen = (s->n < 56 ? 56 : 120) - s->n;
    int i;

    for (i = 0; i < 8; i++) {
        pad[padlen + i] = bits >> (56 - 8 * i);
    }
    sha256_update(s, pad, padlen + 8);
    for (i = 0; i < 8; i++) {
        out[4 * i] = s->h[i] >> 24;
        out[4 * i + 1] = s->h[i] >> 16;
        out[4 * i + 2] = s->h[i] >> 8;
        out[4 * i + 3] = s->h[i];
    }
}

static void
hex(const uint8_t *d, size_t n, char *out)
{
    size_t i;

    for (i = 0; i < n; i++) {
        sprintf(out + 2 * i, "%02x", d[i]);
    }
    out[2 * n] = '\0';
}

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
set_timeout(int fd, double seconds)
{
    struct timeval tv = { (time_t) seconds,
                          (suseconds_t) ((seconds - (time_t) seconds) * 1e6) };

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int
fail(const char *role, const char *what, unsigned long long bytes,
     struct sha256 *s, double start)
{
    uint8_t d[32];
    char h[65];

    sha256_final(s, d);
    hex(d, 32, h);
    printf("{\"role\": \"%s\", \"error\": \"%s: %s\", \"bytes\": %llu, "
           "\"sha256\": \"%s\", \"seconds\": %.6f}\n", role, what,
           strerror(errno), bytes, h, now() - start);
    return 2;
}

static int
do_recv(const char *bind_addr, int port, double idle)
{
    static uint8_t buf[1 << 20];
    struct sockaddr_in sin = { .sin_family = AF_INET };
    socklen_t slen = sizeof sin;
    unsigned long long total = 0;
    struct sha256 s;
    double start = now();
    uint8_t d[32];
    char h[65];
    int one = 1, srv, conn;

    sha256_init(&s);
    sin.sin_port = htons(port);
    if (inet_pton(AF_INET, bind_addr, &sin.sin_addr) != 1) {
        errno = EINVAL;
        return fail("recv", "bad --bind", 0, &s, start);
    }
    srv = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (srv < 0 || bind(srv, (struct sockaddr *) &sin, sizeof sin)
        || listen(srv, 1)
        || getsockname(srv, (struct sockaddr *) &sin, &slen)) {
        return fail("recv", "listen", 0, &s, start);
    }
    set_timeout(srv, idle);
    printf("READY %d\n", ntohs(sin.sin_port));
    fflush(stdout);
    conn = accept(srv, NULL, NULL);
    if (conn < 0) {
        return fail("recv", "accept", 0, &s, start);
    }
    set_timeout(conn, idle);
    start = now();
    for (;;) {
        ssize_t n = read(conn, buf, sizeof buf);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return fail("recv", "read", total, &s, start);
        }
        if (!n) {
            break;
        }
        sha256_update(&s, buf, n);
        total += n;
    }
    sha256_final(&s, d);
    if (write(conn, d, 32) != 32) {
        return fail("recv", "write", total, &s, start);
    }
    close(conn);
    hex(d, 32, h);
    printf("{\"role\": \"recv\", \"bytes\": %llu, \"sha256\": \"%s\", "
           "\"seconds\": %.6f}\n", total, h, now() - start);
    return 0;
}

static int
do_send(const char *host, int port, unsigned long long bytes, double idle)
{
    static uint8_t buf[CHUNK];
    struct sockaddr_in sin = { .sin_family = AF_INET };
    unsigned long long sent = 0;
    uint8_t d[32], peer[32];
    char h[65], ph[65];
    struct sha256 s;
    double start = now();
    size_t got = 0;
    int fd, rnd;

    sha256_init(&s);
    sin.sin_port = htons(port);
    if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
        errno = EINVAL;
        return fail("send", "bad --host", 0, &s, start);
    }
    rnd = open("/dev/urandom", O_RDONLY);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (rnd < 0 || fd < 0) {
        return fail("send", "open", 0, &s, start);
    }
    set_timeout(fd, idle);
    if (connect(fd, (struct sockaddr *) &sin, sizeof sin)) {
        return fail("send", "connect", 0, &s, start);
    }
    while (sent < bytes) {
        size_t len = bytes - sent < CHUNK ? bytes - sent : CHUNK;
        size_t off = 0;

        if (read(rnd, buf, len) != (ssize_t) len) {
            return fail("send", "urandom", sent, &s, start);
        }
        while (off < len) {
            ssize_t n = write(fd, buf + off, len - off);

            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return fail("send", "write", sent, &s, start);
            }
            off += n;
        }
        sha256_update(&s, buf, len);
        sent += len;
    }
    shutdown(fd, SHUT_WR);
    while (got < 32) {
        ssize_t n = read(fd, peer + got, 32 - got);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += n;
    }
    close(fd);
    sha256_final(&s, d);
    hex(d, 32, h);
    hex(peer, got, ph);
    printf("{\"role\": \"send\", \"bytes\": %llu, \"sha256\": \"%s\", "
           "\"peer_sha256\": \"%s\", \"seconds\": %.6f}\n", sent, h, ph,
           now() - start);
    return 0;
}

static void
usage(void)
{
    fprintf(stderr,
            "usage: xfer recv --bind ADDR [--port P] [--idle-timeout S]\n"
            "       xfer send --host ADDR --port P --bytes N "
            "[--idle-timeout S]\n");
    exit(1);
}

int
main(int argc, char *argv[])
{
    const char *addr = NULL;
    unsigned long long bytes = 0;
    double idle = 20.0;
    int port = 0, i;

    if (argc < 2) {
        usage();
    }
    for (i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--bind") || !strcmp(argv[i], "--host")) {
            addr = argv[i + 1];
        } else if (!strcmp(argv[i], "--port")) {
            port = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--bytes")) {
            bytes = strtoull(argv[i + 1], NULL, 10);
        } else if (!strcmp(argv[i], "--idle-timeout")) {
            idle = atof(argv[i + 1]);
        } else {
            usage();
        }
    }
    if (i != argc || !addr) {
        usage();
    }
    if (!strcmp(argv[1], "recv")) {
        return do_recv(addr, port, idle);
    } else if (!strcmp(argv[1], "send") && port) {
        return do_send(addr, port, bytes, idle);
    }
    usage();
    return 1;
}
