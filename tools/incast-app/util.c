/*
 * incast: helpers shared by client and server.
 */

#define _GNU_SOURCE
#include "incast.h"

#include <endian.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

void
put_u32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

uint32_t
get_u32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16)
           | ((uint32_t) p[2] << 8) | p[3];
}

static void
put_u64(uint8_t *p, uint64_t v)
{
    put_u32(p, v >> 32);
    put_u32(p + 4, v);
}

static uint64_t
get_u64(const uint8_t *p)
{
    return ((uint64_t) get_u32(p) << 32) | get_u32(p + 4);
}

void
stats_encode(const struct incast_stats *st, uint8_t buf[STATS_LEN])
{
    put_u64(buf, st->netns_ino);
    put_u64(buf + 8, st->netns_timeouts);
    put_u64(buf + 16, st->netns_retrans);
    put_u64(buf + 24, st->sk_total_retrans);
    put_u64(buf + 32, st->sk_total_rto);
    put_u64(buf + 40, st->conns);
    put_u64(buf + 48, st->requests);
    put_u64(buf + 56, st->paced);
}

void
stats_decode(const uint8_t buf[STATS_LEN], struct incast_stats *st)
{
    st->netns_ino = get_u64(buf);
    st->netns_timeouts = get_u64(buf + 8);
    st->netns_retrans = get_u64(buf + 16);
    st->sk_total_retrans = get_u64(buf + 24);
    st->sk_total_rto = get_u64(buf + 32);
    st->conns = get_u64(buf + 40);
    st->requests = get_u64(buf + 48);
    st->paced = get_u64(buf + 56);
}

/* splitmix64 finalizer: cheap, and every bit of the input affects every bit
 * of the output, so a shifted, truncated or cross-connection answer is
 * caught by verification. */
static uint64_t
mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t
pattern_seed(uint32_t round, uint32_t conn_id)
{
    return mix64(((uint64_t) round << 32) | conn_id);
}

/* Fills 'buf' with the pattern bytes at stream offsets [off, off + len).
 * The stream is a sequence of 64-bit words mix64(seed + word_index), each
 * laid out least significant byte first, so any offset can be produced
 * without generating the bytes before it.
 *
 * Whole words are stored 8 bytes at a time: the servers fill every answer
 * and the client every verified read, and on this testbed they share the
 * hypervisor's CPUs.  Byte by byte (1.7 GB/s) the servers took most of a
 * CPU for a third of a second when 4 096 requests of 64 KB arrived
 * together, and ovs-vswitchd's main thread waited that long behind them
 * (docs/benchmarks.md, "What limits the figures"). */
void
pattern_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t off)
{
    uint64_t word = off >> 3;
    unsigned int b = off & 7;
    size_t i = 0;

    if (b) {
        uint64_t v = mix64(seed + word++);

        for (; b < 8 && i < len; b++, i++) {
            buf[i] = v >> (b * 8);
        }
    }
    for (; len - i >= 8; i += 8) {
        uint64_t v = htole64(mix64(seed + word++));

        memcpy(buf + i, &v, sizeof v);
    }
    if (i < len) {
        uint64_t v = mix64(seed + word);

        for (b = 0; i < len; b++, i++) {
            buf[i] = v >> (b * 8);
        }
    }
}

/* Layout of the kernel's struct tcp_info up to tcpi_total_rto_time (Linux
 * 6.7+).  The installed headers may be older, so mirror it here; the optlen
 * returned by the kernel says which fields it filled. */
struct tcp_info_67 {
    uint8_t state, ca_state, retransmits, probes, backoff, options;
    uint8_t wscale, flags;
    uint32_t rto, ato, snd_mss, rcv_mss;
    uint32_t unacked, sacked, lost, retrans, fackets;
    uint32_t last_data_sent, last_ack_sent, last_data_recv, last_ack_recv;
    uint32_t pmtu, rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd;
    uint32_t advmss, reordering;
    uint32_t rcv_rtt, rcv_space;
    uint32_t total_retrans;
    uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
    uint32_t segs_out, segs_in;
    uint32_t notsent_bytes, min_rtt, data_segs_in, data_segs_out;
    uint64_t delivery_rate;
    uint64_t busy_time, rwnd_limited, sndbuf_limited;
    uint32_t delivered, delivered_ce;
    uint64_t bytes_sent, bytes_retrans;
    uint32_t dsack_dups, reord_seen;
    uint32_t rcv_ooopack;
    uint32_t snd_wnd, rcv_wnd;
    uint32_t rehash;
    uint16_t total_rto, total_rto_recoveries;
    uint32_t total_rto_time;
};
_Static_assert(sizeof(struct tcp_info_67) == 248, "tcp_info layout");

bool
sock_counters_get(int fd, struct sock_counters *sc)
{
    struct tcp_info_67 ti;
    socklen_t len = sizeof ti;

    memset(&ti, 0, sizeof ti);
    memset(sc, 0, sizeof *sc);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len)) {
        return false;
    }
    sc->total_retrans = ti.total_retrans;
    sc->has_total_rto = len >= offsetof(struct tcp_info_67, total_rto)
                               + sizeof ti.total_rto;
    sc->total_rto = ti.total_rto;
    return true;
}

/* Returns counter 'name' from a /proc/net/{netstat,snmp} style file, where a
 * line "<prefix> name1 name2..." is followed by "<prefix> val1 val2...".
 * /proc/net is per network namespace, so this is the caller's netns.
 * Returns 0 if not found. */
uint64_t
proc_counter(const char *path, const char *prefix, const char *name)
{
    char names[8192], values[8192];
    uint64_t result = 0;
    FILE *f = fopen(path, "r");

    if (!f) {
        return 0;
    }
    while (fgets(names, sizeof names, f) && fgets(values, sizeof values, f)) {
        char *sn, *sv;
        char *n, *v;

        if (strncmp(names, prefix, strlen(prefix))) {
            continue;
        }
        n = strtok_r(names, " \n", &sn);
        v = strtok_r(values, " \n", &sv);
        while (n && v) {
            if (!strcmp(n, name)) {
                result = strtoull(v, NULL, 10);
                goto out;
            }
            n = strtok_r(NULL, " \n", &sn);
            v = strtok_r(NULL, " \n", &sv);
        }
    }
out:
    fclose(f);
    return result;
}

uint64_t
netns_inode(void)
{
    struct stat st;

    return stat("/proc/self/ns/net", &st) ? 0 : st.st_ino;
}

/* Parses "ADDR:PORT" or "[V6ADDR]:PORT" (numeric addresses only, so that a
 * testbed never depends on name resolution). */
int
parse_addr(const char *s, bool passive, struct sockaddr_storage *ss,
           socklen_t *len)
{
    char host[256];
    const char *colon, *port;
    struct addrinfo hints, *ai;
    size_t hlen;
    int err;

    colon = strrchr(s, ':');
    if (!colon || !colon[1]) {
        fprintf(stderr, "incast: %s: expected ADDR:PORT\n", s);
        return -1;
    }
    port = colon + 1;
    hlen = colon - s;
    if (hlen >= 2 && s[0] == '[' && s[hlen - 1] == ']') {
        s++;
        hlen -= 2;
    }
    if (hlen >= sizeof host) {
        fprintf(stderr, "incast: %s: address too long\n", s);
        return -1;
    }
    memcpy(host, s, hlen);
    host[hlen] = '\0';

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
                     | (passive ? AI_PASSIVE : 0);
    err = getaddrinfo(hlen ? host : NULL, port, &hints, &ai);
    if (err) {
        fprintf(stderr, "incast: %s: %s\n", s, gai_strerror(err));
        return -1;
    }
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

int
set_cc(int fd, const char *cc)
{
    if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc))) {
        fprintf(stderr, "incast: setting TCP_CONGESTION to \"%s\": %s\n",
                cc, strerror(errno));
        return -1;
    }
    return 0;
}

/* Thousands of connections need thousands of descriptors: raise the soft
 * limit to the hard limit, and warn if even that is too low. */
void
raise_nofile(uint64_t want)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl)) {
        return;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (want && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        fprintf(stderr, "incast: warning: RLIMIT_NOFILE is %llu, need about "
                "%llu descriptors\n", (unsigned long long) rl.rlim_cur,
                (unsigned long long) want);
    }
}

uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int
cmp_double(const void *a_, const void *b_)
{
    double a = *(const double *) a_, b = *(const double *) b_;

    return a < b ? -1 : a > b;
}

/* Nearest-rank percentile of sorted 'v'. */
double
percentile(const double *v, int n, double p)
{
    int k;

    if (!n) {
        return 0;
    }
    k = (int) ceil(p / 100.0 * n) - 1;
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}
