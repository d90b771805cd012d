/*
 * incast client: the receiver ("VM").  Opens all connections once, then runs
 * barrier-synchronised rounds: every connection gets its request at the same
 * moment, and the next round starts only when every answer has fully
 * arrived and has been verified.
 */

#define _GNU_SOURCE
#include "incast.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define RECV_BUF (256 * 1024)

enum cmode { C_IDLE, C_DATA, C_STATS };

struct cconn {
    int fd;
    uint32_t id;                /* Client-wide index; seeds the pattern. */
    int server;                 /* Index into the server list. */
    enum cmode mode;
    bool dead;                  /* Failed; removed from epoll. */
    uint64_t seed, expect, got;
    uint64_t t_rx;              /* When its answer's bytes last came. */
    uint8_t stats_buf[STATS_LEN];
};

struct round_rec {
    double rct_ms;
    uint64_t bytes;
    bool ok;
    int64_t rtos;               /* Sender RTOs during the round; -1 unknown. */
    uint64_t retrans;           /* Sender retransmitted segments. */
    int stalls;                 /* Answers that stalled (see 'stall_ns'). */
    double max_gap_ms;          /* Longest wait within an answer. */
    uint64_t vm_timeouts;       /* The client's own RTOs (vm_timeouts()). */
};

static struct {
    const char **names;         /* Server address strings. */
    int n_servers;
    struct cconn *conns;
    int n_conns;
    int ep;
    uint32_t round;
    int pending;                /* Connections with bytes still to come. */
    uint64_t t_last;            /* Time the last byte of the phase arrived. */
    /* A wait of at least this long between two reads of one answer, after
     * its first byte, is a loss that a timer repaired: the sender's RTO,
     * or a tail loss probe, which Linux delays by RTOmin when only one
     * segment is unacknowledged and which no RTO counter sees.  Fast
     * retransmits take a few RTTs; PAC holds a flow's ACKs for
     * milliseconds (max-hold-us), and its requests only before the first
     * byte.  0: not judged. */
    uint64_t stall_ns;
    int stalls;                 /* Stalled answers in the current phase. */
    uint64_t max_gap_ns;        /* Longest such wait in the current phase. */
    int errors;
    uint8_t buf[RECV_BUF], want[RECV_BUF];
} cli;

static void
conn_fail(struct cconn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reports an error on 'c' (with round and server) and takes the connection
 * out of the run: its state is unknown from now on. */
static void
conn_fail(struct cconn *c, const char *fmt, ...)
{
    va_list args;

    if (cli.round) {
        fprintf(stderr, "incast: round %" PRIu32 ": ", cli.round);
    } else {
        fprintf(stderr, "incast: setup: ");
    }
    fprintf(stderr, "conn %" PRIu32 " (%s): ", c->id, cli.names[c->server]);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    cli.errors++;
    if (!c->dead && c->got < c->expect) {
        cli.pending--;
    }
    c->dead = true;
    epoll_ctl(cli.ep, EPOLL_CTL_DEL, c->fd, NULL);
}

/* Notes that bytes of 'c''s answer arrived now, and how long it waited for
 * them since the previous ones. */
static void
note_gap(struct cconn *c)
{
    uint64_t now = now_ns();

    if (c->got && c->mode == C_DATA) {
        uint64_t gap = now - c->t_rx;

        if (gap > cli.max_gap_ns) {
            cli.max_gap_ns = gap;
        }
        if (cli.stall_ns && gap >= cli.stall_ns) {
            cli.stalls++;
        }
    }
    c->t_rx = now;
}

static void
conn_readable(struct cconn *c)
{
    uint64_t left = c->expect - c->got;
    size_t want = left == 0 ? RECV_BUF : left < RECV_BUF ? left : RECV_BUF;
    ssize_t n = read(c->fd, cli.buf, want);

    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            conn_fail(c, "read: %s (after %" PRIu64 " of %" PRIu64
                      " bytes)", strerror(errno), c->got, c->expect);
        }
        return;
    } else if (n == 0) {
        conn_fail(c, "connection closed by server after %" PRIu64 " of %"
                  PRIu64 " bytes", c->got, c->expect);
        return;
    } else if (left == 0) {
        conn_fail(c, "%zd unexpected bytes after the answer", n);
        return;
    }

    if (c->mode == C_DATA) {
        pattern_fill(cli.want, n, c->seed, c->got);
        if (memcmp(cli.buf, cli.want, n)) {
            ssize_t i = 0;

            while (cli.buf[i] == cli.want[i]) {
                i++;
            }
            conn_fail(c, "verification mismatch at byte %" PRIu64
                      " of %" PRIu64 " (expected 0x%02x, got 0x%02x)",
                      c->got + i, c->expect, cli.want[i], cli.buf[i]);
            return;
        }
    } else {
        memcpy(c->stats_buf + c->got, cli.buf, n);
    }
    note_gap(c);
    c->got += n;
    if (c->got == c->expect) {
        cli.pending--;
        cli.t_last = c->t_rx;
    }
}

/* Sends a request on 'c' and arms it to expect 'expect' answer bytes. */
static void
conn_request(struct cconn *c, uint32_t magic, uint32_t nbytes,
             uint64_t expect)
{
    uint8_t req[REQ_LEN];
    ssize_t n;

    put_u32(req, magic);
    put_u32(req + 4, cli.round);
    put_u32(req + 8, c->id);
    put_u32(req + 12, nbytes);
    c->mode = magic == REQ_MAGIC_DATA ? C_DATA : C_STATS;
    c->seed = pattern_seed(cli.round, c->id);
    c->expect = expect;
    c->got = 0;
    cli.pending++;

    /* The socket is idle (previous answer fully read), so its send buffer
     * is empty and a 16-byte write cannot be partial. */
    n = send(c->fd, req, REQ_LEN, MSG_NOSIGNAL);
    if (n != REQ_LEN) {
        conn_fail(c, "sending request: %s",
                  n < 0 ? strerror(errno) : "short write");
    }
}

/* Runs the event loop until every armed connection has its answer or the
 * deadline passes.  Returns false if anything failed. */
static bool
run_phase(uint64_t deadline, const char *what)
{
    int errors = cli.errors;
    int i;

    while (cli.pending > 0) {
        struct epoll_event evs[256];
        uint64_t now = now_ns();
        int n, timeout;

        if (now >= deadline) {
            break;
        }
        timeout = (int) ((deadline - now + 999999) / 1000000);
        n = epoll_wait(cli.ep, evs, 256, timeout);
        if (n < 0 && errno != EINTR) {
            perror("incast: epoll_wait");
            exit(1);
        }
        for (i = 0; i < n; i++) {
            conn_readable(evs[i].data.ptr);
        }
    }
    for (i = 0; i < cli.n_conns; i++) {
        struct cconn *c = &cli.conns[i];

        if (!c->dead && c->got < c->expect) {
            conn_fail(c, "timed out waiting for %s: got %" PRIu64 " of %"
                      PRIu64 " bytes", what, c->got, c->expect);
        }
    }
    return cli.errors == errors;
}

/* Asks every server for its sender-side counters (on its first live
 * connection).  Fills 'st' (one per server); returns false on failure. */
static bool
query_stats(struct incast_stats *st, uint64_t timeout_ns)
{
    int s, i;

    for (s = 0; s < cli.n_servers; s++) {
        for (i = 0; i < cli.n_conns; i++) {
            struct cconn *c = &cli.conns[i];

            if (c->server == s && !c->dead) {
                conn_request(c, REQ_MAGIC_STATS, 0, STATS_LEN);
                break;
            }
        }
    }
    if (!run_phase(now_ns() + timeout_ns, "sender stats")) {
        return false;
    }
    memset(st, 0, cli.n_servers * sizeof *st);
    for (i = 0; i < cli.n_conns; i++) {
        struct cconn *c = &cli.conns[i];

        if (c->mode == C_STATS && !c->dead) {
            stats_decode(c->stats_buf, &st[c->server]);
            c->mode = C_IDLE;
        }
    }
    return true;
}

/* The client's own retransmission timeouts so far: TcpExt TCPTimeouts of
 * its network namespace, which holds only its sockets on the testbed (the
 * receiving VM).  A held request, SYN or ACK that waits past the client's
 * RTO shows here. */
static uint64_t
vm_timeouts(void)
{
    return proc_counter("/proc/net/netstat", "TcpExt:", "TCPTimeouts");
}

/* Sender-side RTOs and retransmissions between two stats snapshots. */
static void
stats_delta(const struct incast_stats *a, const struct incast_stats *b,
            int64_t *rtos, uint64_t *retrans)
{
    bool per_socket = true;
    int s, t;

    *rtos = 0;
    *retrans = 0;
    for (s = 0; s < cli.n_servers; s++) {
        per_socket = per_socket && b[s].sk_total_rto != UINT64_MAX;
        *retrans += b[s].sk_total_retrans - a[s].sk_total_retrans;
    }
    if (per_socket) {
        /* Exact: only the sockets serving this client's connections. */
        for (s = 0; s < cli.n_servers; s++) {
            *rtos += b[s].sk_total_rto - a[s].sk_total_rto;
        }
        return;
    }
    /* Pre-6.7 kernel: fall back to the netns-wide TCPTimeouts, counted once
     * per namespace. */
    for (s = 0; s < cli.n_servers; s++) {
        bool seen = false;

        for (t = 0; t < s; t++) {
            seen = seen || b[t].netns_ino == b[s].netns_ino;
        }
        if (!seen) {
            *rtos += b[s].netns_timeouts - a[s].netns_timeouts;
        }
    }
}

static int
connect_one(struct cconn *c, const struct sockaddr_storage *ss,
            socklen_t slen, const char *cc, int timeout_ms)
{
    struct pollfd pfd;
    int one = 1, err = 0;
    socklen_t elen = sizeof err;

    c->fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                   0);
    if (c->fd < 0) {
        conn_fail(c, "socket: %s", strerror(errno));
        return -1;
    }
    if (set_cc(c->fd, cc)) {
        cli.errors++;
        return -1;
    }
    /* Requests are single small writes: never delay them. */
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (const struct sockaddr *) ss, slen)
        && errno != EINPROGRESS) {
        err = errno;
    } else {
        pfd.fd = c->fd;
        pfd.events = POLLOUT;
        if (poll(&pfd, 1, timeout_ms) != 1) {
            err = ETIMEDOUT;
        } else {
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &elen);
        }
    }
    if (err) {
        conn_fail(c, "connect: %s", strerror(err));
        return -1;
    }
    return 0;
}

static int
cmp_double(const void *a_, const void *b_)
{
    double a = *(const double *) a_, b = *(const double *) b_;

    return a < b ? -1 : a > b;
}

/* Nearest-rank percentile of sorted 'v'. */
static double
percentile(const double *v, int n, double p)
{
    int k;

    if (!n) {
        return 0;
    }
    k = (int) ceil(p / 100.0 * n) - 1;
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

static void
client_usage(void)
{
    fprintf(stderr,
            "usage: incast client --servers ADDR:PORT[,ADDR:PORT...]\n"
            "           --conns-per-server K --rounds R\n"
            "           (--bytes-per-sender B | --total-bytes T)\n"
            "           [--cc NAME] [--timeout-ms MS] [--stall-ms MS]\n"
            "           [--json FILE]\n"
            "A round times out if a sender's RTO fired, the client's own\n"
            "RTO fired (vm_timeouts: TCPTimeouts of its namespace), or an\n"
            "answer waited --stall-ms (default 180: 0.9 x Linux's RTOmin;\n"
            "0: RTOs only) between two of its bytes.\n");
}

int
client_main(int argc, char *argv[])
{
    static const struct option opts[] = {
        { "servers", required_argument, NULL, 's' },
        { "conns-per-server", required_argument, NULL, 'k' },
        { "rounds", required_argument, NULL, 'r' },
        { "bytes-per-sender", required_argument, NULL, 'b' },
        { "total-bytes", required_argument, NULL, 't' },
        { "cc", required_argument, NULL, 'c' },
        { "timeout-ms", required_argument, NULL, 'T' },
        { "stall-ms", required_argument, NULL, 'S' },
        { "json", required_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char *servers = NULL, *save, *tok;
    const char *cc = NULL, *json = NULL;
    long long k = 0, rounds = 0, per = -1, total = -1, timeout_ms = 10000;
    long long stall_ms = 180;
    struct incast_stats *st_prev, *st_cur;
    struct round_rec *recs;
    double *sorted, sum_s = 0;
    uint64_t total_bytes = 0, ok_bytes = 0, total_retrans = 0;
    uint64_t vm_t0, vm_setup, vm_prev, vm_cur, total_vm = 0;
    int64_t total_rtos = 0;
    int timeout_rounds = 0, stall_rounds = 0, n_ok = 0, r_done = 0;
    bool rto_known = true;
    int opt, i, s;

    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 's': servers = optarg; break;
        case 'k': k = atoll(optarg); break;
        case 'r': rounds = atoll(optarg); break;
        case 'b': per = atoll(optarg); break;
        case 't': total = atoll(optarg); break;
        case 'c': cc = optarg; break;
        case 'T': timeout_ms = atoll(optarg); break;
        case 'S': stall_ms = atoll(optarg); break;
        case 'j': json = optarg; break;
        default:
            client_usage();
            return opt == 'h' ? 0 : 2;
        }
    }
    if (!servers || k <= 0 || rounds <= 0 || optind != argc
        || (per < 0) == (total < 0) || per > UINT32_MAX
        || timeout_ms <= 0 || timeout_ms > 3600000
        || stall_ms < 0 || stall_ms > 3600000) {
        client_usage();
        return 2;
    }

    cli.stall_ns = (uint64_t) stall_ms * 1000000;

    /* Resolve every server before connecting anything. */
    struct sockaddr_storage *addrs = NULL;
    socklen_t *alens = NULL;
    for (tok = strtok_r(servers, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        s = cli.n_servers++;
        cli.names = realloc(cli.names, cli.n_servers * sizeof *cli.names);
        addrs = realloc(addrs, cli.n_servers * sizeof *addrs);
        alens = realloc(alens, cli.n_servers * sizeof *alens);
        cli.names[s] = tok;
        if (parse_addr(tok, false, &addrs[s], &alens[s])) {
            return 2;
        }
    }
    cli.n_conns = cli.n_servers * k;
    if (total >= 0 && (uint64_t) total / cli.n_conns >= UINT32_MAX) {
        fprintf(stderr, "incast: --total-bytes too large\n");
        return 2;
    }
    raise_nofile(cli.n_conns + 64);
    signal(SIGPIPE, SIG_IGN);

    cli.ep = epoll_create1(EPOLL_CLOEXEC);
    cli.conns = calloc(cli.n_conns, sizeof *cli.conns);
    recs = calloc(rounds, sizeof *recs);
    sorted = calloc(rounds, sizeof *sorted);
    st_prev = calloc(cli.n_servers, sizeof *st_prev);
    st_cur = calloc(cli.n_servers, sizeof *st_cur);
    if (cli.ep < 0 || !cli.conns || !recs || !sorted || !st_prev || !st_cur) {
        perror("incast");
        return 1;
    }

    /* Connections are persistent: set them all up before round 1, one at a
     * time so that handshakes do not themselves form an incast. */
    vm_t0 = vm_timeouts();
    for (i = 0; i < cli.n_conns; i++) {
        struct cconn *c = &cli.conns[i];
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

        c->id = i;
        c->server = i / k;
        c->fd = -1;
        if (connect_one(c, &addrs[c->server], alens[c->server], cc,
                        (int) timeout_ms)) {
            fprintf(stderr, "incast: could not set up %d connections to %d "
                    "servers\n", cli.n_conns, cli.n_servers);
            return 1;
        }
        epoll_ctl(cli.ep, EPOLL_CTL_ADD, c->fd, &ev);
    }
    if (!query_stats(st_prev, timeout_ms * 1000000ULL)) {
        return 1;
    }
    vm_prev = vm_timeouts();
    vm_setup = vm_prev - vm_t0;

    for (cli.round = 1; cli.round <= rounds; cli.round++) {
        struct round_rec *rec = &recs[cli.round - 1];
        uint64_t t0, bytes = 0;

        /* Barrier: every request leaves back to back, and only after the
         * previous round completed everywhere. */
        cli.t_last = t0 = now_ns();
        cli.stalls = 0;
        cli.max_gap_ns = 0;
        for (i = 0; i < cli.n_conns; i++) {
            struct cconn *c = &cli.conns[i];
            uint64_t n = per >= 0 ? (uint64_t) per
                         : (uint64_t) total / cli.n_conns
                           + ((uint64_t) i < (uint64_t) total % cli.n_conns);

            if (n) {
                conn_request(c, REQ_MAGIC_DATA, n, n);
            } else {
                c->expect = c->got = 0;
            }
        }
        rec->ok = run_phase(t0 + timeout_ms * 1000000ULL, "answer");
        rec->rct_ms = (cli.t_last - t0) / 1e6;
        for (i = 0; i < cli.n_conns; i++) {
            bytes += cli.conns[i].mode == C_DATA ? cli.conns[i].got : 0;
        }
        rec->bytes = bytes;
        rec->stalls = cli.stalls;
        rec->max_gap_ms = cli.max_gap_ns / 1e6;
        vm_cur = vm_timeouts();
        rec->vm_timeouts = vm_cur - vm_prev;
        vm_prev = vm_cur;
        total_vm += rec->vm_timeouts;
        total_bytes += bytes;
        r_done++;

        rec->rtos = -1;
        if (rec->ok && query_stats(st_cur, timeout_ms * 1000000ULL)) {
            stats_delta(st_prev, st_cur, &rec->rtos, &rec->retrans);
            memcpy(st_prev, st_cur, cli.n_servers * sizeof *st_cur);
            total_rtos += rec->rtos;
            total_retrans += rec->retrans;
        } else {
            rto_known = false;
        }
        timeout_rounds += rec->rtos > 0 || rec->stalls > 0
                          || rec->vm_timeouts > 0;
        stall_rounds += rec->stalls > 0;
        fprintf(stderr, "round=%" PRIu32 " rct_ms=%.3f bytes=%" PRIu64
                " ok=%d sender_rtos=%" PRId64 " sender_retrans=%" PRIu64
                " stalls=%d max_gap_ms=%.1f vm_timeouts=%" PRIu64 "\n",
                cli.round, rec->rct_ms, rec->bytes, rec->ok, rec->rtos,
                rec->retrans, rec->stalls, rec->max_gap_ms,
                rec->vm_timeouts);
        if (!rec->ok) {
            /* Connection state is unknown after a failure: stop here. */
            break;
        }
        sorted[n_ok++] = rec->rct_ms;
        ok_bytes += rec->bytes;
        sum_s += rec->rct_ms / 1e3;
    }

    qsort(sorted, n_ok, sizeof *sorted, cmp_double);
    /* Only completed rounds have a meaningful duration. */
    double goodput = sum_s > 0 ? ok_bytes * 8 / sum_s / 1e6 : 0;
    double p50 = percentile(sorted, n_ok, 50), p99 = percentile(sorted,
                                                               n_ok, 99);

    if (json) {
        FILE *f = fopen(json, "w");

        if (!f) {
            fprintf(stderr, "incast: %s: %s\n", json, strerror(errno));
            cli.errors++;
        } else {
            fprintf(f, "{\n  \"senders\": %d, \"servers\": %d, "
                    "\"conns_per_server\": %lld,\n", cli.n_conns,
                    cli.n_servers, k);
            fprintf(f, "  \"bytes_per_sender\": %lld, \"total_bytes\": %lld, "
                    "\"cc\": \"%s\", \"timeout_ms\": %lld,\n",
                    per, total, cc ? cc : "", timeout_ms);
            fprintf(f, "  \"rounds\": [\n");
            for (i = 0; i < r_done; i++) {
                fprintf(f, "    {\"round\": %d, \"rct_ms\": %.3f, "
                        "\"bytes\": %" PRIu64 ", \"ok\": %s, "
                        "\"sender_rtos\": %" PRId64 ", "
                        "\"sender_retrans\": %" PRIu64 ", "
                        "\"stalls\": %d, \"max_gap_ms\": %.3f, "
                        "\"vm_timeouts\": %" PRIu64 "}%s\n",
                        i + 1, recs[i].rct_ms, recs[i].bytes,
                        recs[i].ok ? "true" : "false", recs[i].rtos,
                        recs[i].retrans, recs[i].stalls, recs[i].max_gap_ms,
                        recs[i].vm_timeouts, i + 1 < r_done ? "," : "");
            }
            fprintf(f, "  ],\n  \"summary\": {\"rounds\": %d, "
                    "\"goodput_mbps\": %.1f, \"rct_p50_ms\": %.3f, "
                    "\"rct_p99_ms\": %.3f, \"bytes\": %" PRIu64 ", "
                    "\"errors\": %d, \"timeout_rounds\": %d, "
                    "\"stall_rounds\": %d, "
                    "\"sender_rtos\": %" PRId64 ", \"sender_retrans\": %"
                    PRIu64 ", \"vm_timeouts\": %" PRIu64 ", "
                    "\"setup_vm_timeouts\": %" PRIu64 "}\n}\n", r_done,
                    goodput, p50, p99, total_bytes, cli.errors,
                    timeout_rounds, stall_rounds, total_rtos, total_retrans,
                    total_vm, vm_setup);
            if (fclose(f)) {
                fprintf(stderr, "incast: %s: %s\n", json, strerror(errno));
                cli.errors++;
            }
        }
    }

    printf("RTO timeout_rounds=%d stall_rounds=%d sender_rtos=%" PRId64
           " sender_retrans=%" PRIu64 " vm_timeouts=%" PRIu64
           " setup_vm_timeouts=%" PRIu64 "%s\n", timeout_rounds,
           stall_rounds, total_rtos, total_retrans, total_vm, vm_setup,
           rto_known ? "" : " incomplete=1");
    printf("RESULT senders=%d rounds=%d goodput_mbps=%.1f rct_p50_ms=%.3f "
           "rct_p99_ms=%.3f bytes=%" PRIu64 " errors=%d\n", cli.n_conns,
           r_done, goodput, p50, p99, total_bytes, cli.errors);
    fflush(stdout);

    for (i = 0; i < cli.n_conns; i++) {
        close(cli.conns[i].fd);
    }
    close(cli.ep);
    free(cli.conns);
    free(cli.names);
    free(addrs);
    free(alens);
    free(recs);
    free(sorted);
    free(st_prev);
    free(st_cur);
    return cli.errors ? 1 : 0;
}
