/*
 * incast client: the receiver ("VM").  Opens all connections once, then runs
 * one of two workloads.  Rounds (the default) are barrier-synchronised:
 * every connection gets its request at the same moment, and the next round
 * starts only when every answer has fully arrived and has been verified.
 * Overlapping requests (--poisson-rps) arrive at Poisson times, each to a
 * random subset of the connections, whether or not earlier answers are
 * still flowing.
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

/* One answer of an overlapping request (--poisson-rps), queued on its
 * connection: the server answers a connection's requests in order. */
struct answer {
    struct answer *next;        /* Next answer queued on the connection. */
    struct cconn *conn;
    uint32_t req;               /* Index of its request. */
    uint64_t seed, expect, got;
};

struct cconn {
    int fd;
    uint32_t id;                /* Client-wide index; seeds the pattern. */
    int server;                 /* Index into the server list. */
    enum cmode mode;
    bool dead;                  /* Failed; removed from epoll. */
    uint64_t seed, expect, got;
    uint64_t t_rx;              /* When its answer's bytes last came. */
    uint8_t stats_buf[STATS_LEN];
    /* Overlapping requests: the answers outstanding on a data connection,
     * oldest first, and whether this is a server's stats connection. */
    struct answer *head, *tail;
    int queued;
    bool stats_conn;
};

struct round_rec {
    double rct_ms;
    uint64_t bytes;
    bool ok;
    int64_t rtos;               /* Sender RTOs during the round; -1 unknown. */
    uint64_t retrans;           /* Sender retransmitted segments. */
    int stalls;                 /* Answers that stalled (see 'stall_ns'). */
    double max_gap_ms;          /* Longest wait within an answer. */
    double max_gap_at_ms;       /* When that wait ended, since the round's
                                 * requests went out. */
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
    uint64_t t_phase;           /* When the current phase began. */
    uint64_t max_gap_at_ns;     /* When its longest wait ended, since then. */
    int errors;
    /* Of 'errors', answers whose bytes were wrong (a mismatch, or bytes
     * nobody asked for): the path corrupted or mixed up data.  The others
     * are connections that failed or gave up waiting. */
    int corrupt;
    bool overlap;               /* Overlapping requests are running. */
    uint8_t buf[RECV_BUF], want[RECV_BUF];
} cli;

static void
conn_fail(struct cconn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reports an error on 'c' (with round and server) and takes the connection
 * out of the run: its state is unknown from now on. */
/* Opens 'path' for the --json document; on failure reports it, counts an
 * error and returns NULL. */
static FILE *
json_open(const char *path)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        fprintf(stderr, "incast: %s: %s\n", path, strerror(errno));
        cli.errors++;
    }
    return f;
}

/* Closes the --json document 'f' written to 'path', reporting and
 * counting a write error. */
static void
json_close(FILE *f, const char *path)
{
    if (fclose(f)) {
        fprintf(stderr, "incast: %s: %s\n", path, strerror(errno));
        cli.errors++;
    }
}

static void
conn_fail(struct cconn *c, const char *fmt, ...)
{
    va_list args;

    if (c->head) {
        fprintf(stderr, "incast: request %" PRIu32 ": ", c->head->req + 1);
    } else if (cli.round) {
        fprintf(stderr, "incast: round %" PRIu32 ": ", cli.round);
    } else if (cli.overlap) {
        fprintf(stderr, "incast: %s: ", c->stats_conn ? "stats" : "idle");
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
            cli.max_gap_at_ns = now - cli.t_phase;
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
        cli.corrupt++;
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
            cli.corrupt++;
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
 * connection).  Fills 'st' (one per server); returns false on failure, or
 * if a server has no live connection left (after reading the answers of
 * those asked). */
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
        if (i == cli.n_conns) {
            /* Every connection to it failed: its counters are unknown. */
            run_phase(now_ns() + timeout_ns, "sender stats");
            return false;
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

/* Answer writes the servers paced (Adaptive Pacing) between two stats
 * snapshots. */
static uint64_t
paced_delta(const struct incast_stats *a, const struct incast_stats *b)
{
    uint64_t paced = 0;
    int s;

    for (s = 0; s < cli.n_servers; s++) {
        paced += b[s].paced - a[s].paced;
    }
    return paced;
}

/* Asks the server of every data connection to pace its answers by Adaptive
 * Pacing (see server.c), with 'flows' concurrent flows into a bottleneck of
 * 'buffer' bytes and 'rate_mbps'.  Each connection is idle and its send
 * buffer empty, so a 16-byte write cannot be partial. */
static bool
ask_pacing(uint32_t flows, uint32_t buffer, uint32_t rate_mbps)
{
    uint8_t req[REQ_LEN];
    int i;

    put_u32(req, REQ_MAGIC_PACE);
    put_u32(req + 4, flows);
    put_u32(req + 8, buffer);
    put_u32(req + 12, rate_mbps);
    for (i = 0; i < cli.n_conns; i++) {
        struct cconn *c = &cli.conns[i];

        if (send(c->fd, req, REQ_LEN, MSG_NOSIGNAL) != REQ_LEN) {
            conn_fail(c, "sending the pacing message: %s", strerror(errno));
            return false;
        }
    }
    return true;
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

/* The summary of a run whose connections could not all be set up: no
 * round ran.  Printed so that a scheme under which the connection storm
 * itself collapses reports figures (its set-up timeouts, the failed
 * connection) rather than nothing. */
static void
print_setup_failure(uint64_t vm_t0)
{
    printf("RTO timeout_rounds=0 stall_rounds=0 sender_rtos=0 "
           "sender_retrans=0 vm_timeouts=0 setup_vm_timeouts=%" PRIu64
           " sender_paced=0 incomplete=1\n", vm_timeouts() - vm_t0);
    printf("RESULT senders=%d rounds=0 goodput_mbps=0.0 rct_p50_ms=0.000 "
           "rct_p99_ms=0.000 bytes=0 errors=%d corrupt=%d setup_failed=1\n",
           cli.n_conns, cli.errors, cli.corrupt);
    fflush(stdout);
}

/* Overlapping requests (--poisson-rps).
 *
 * Request j is sent at t0 + arrival[j], the arrival times a Poisson process
 * of rate 'rps' drawn from 'seed', to 'fanout' connections drawn at random
 * without repetition, whether or not earlier answers are still coming.  A
 * connection may so have several requests outstanding; its server answers
 * them in order, so its bytes belong to the oldest answer queued on it.
 *
 * Sender counters cannot be asked for over the data connections without
 * queueing the query behind answers, so every server gets one more
 * connection, used only for INCS queries, sampled every 'stats_ms' (one
 * query at a time) rather than per request: the cost is bounded by the
 * interval, not by the request rate. */

struct ov_request {
    uint64_t t_send;            /* Its requests were sent. */
    uint64_t t_done;            /* The last byte of its last answer came. */
    uint64_t bytes;             /* Verified answer bytes. */
    uint64_t vm_send, vm_done;  /* vm_timeouts() at send and completion. */
    int answers;                /* Answers asked for (non-empty ones). */
    int left;                   /* Answers not complete yet. */
    int outstanding;            /* Requests outstanding once it was sent,
                                 * itself included. */
    int stalls;                 /* Answers that stalled (see 'stall_ns'). */
    uint64_t max_gap_ns;
    bool done;
    int64_t rtos;               /* Sender RTOs in its window; -1 unknown. */
    uint64_t retrans;
};

/* One reading of every server's counters: taken by the servers between
 * 't_sent' and 't_done', totals since the baseline. */
struct ov_sample {
    uint64_t t_sent, t_done;
    int64_t rtos;
    uint64_t retrans;
};

struct ov_opts {
    double rps;
    long long fanout, requests, stats_ms, per, total;
    uint64_t seed;
};

static struct {
    struct ov_request *reqs;
    struct answer *answers;     /* 'fanout' per request. */
    uint64_t *arrival;          /* Offsets from t0, ns. */
    int n, fanout;
    int *perm;                  /* Connection indices, for drawing. */
    uint64_t rng;
    struct cconn *sconns;       /* One stats connection per server. */
    struct incast_stats *st_base, *st_cur;
    struct ov_sample *samples;
    int n_samples, cap_samples;
    bool sampling;              /* A query is out. */
    bool stats_failed;
    uint64_t t_sample;          /* When it was sent. */
    int outstanding, max_outstanding, max_queue;
    int n_sent, n_done;
} ov;

/* splitmix64 as a generator: reproducible on every libc. */
static uint64_t
ov_rand(void)
{
    uint64_t x = (ov.rng += 0x9e3779b97f4a7c15ULL);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Uniform in [0, 1). */
static double
ov_uniform(void)
{
    return (ov_rand() >> 11) * (1.0 / 9007199254740992.0);
}

/* Sends request 'j': draws its connections and queues an answer on each. */
static void
ov_send(int j, const struct ov_opts *o)
{
    struct ov_request *r = &ov.reqs[j];
    int f;

    r->t_send = now_ns();
    r->vm_send = vm_timeouts();
    r->outstanding = ++ov.outstanding;
    if (ov.outstanding > ov.max_outstanding) {
        ov.max_outstanding = ov.outstanding;
    }
    ov.n_sent++;
    for (f = 0; f < ov.fanout; f++) {
        int k = f + (int) (ov_rand() % (uint64_t) (cli.n_conns - f));
        int t = ov.perm[f];
        struct answer *a = &ov.answers[(size_t) j * ov.fanout + f];
        struct cconn *c;
        uint8_t req[REQ_LEN];
        uint64_t n;
        ssize_t w;

        ov.perm[f] = ov.perm[k];
        ov.perm[k] = t;
        c = &cli.conns[ov.perm[f]];
        n = o->per >= 0 ? (uint64_t) o->per
            : (uint64_t) o->total / ov.fanout
              + ((uint64_t) f < (uint64_t) o->total % ov.fanout);
        if (!n || c->dead) {
            continue;
        }
        a->conn = c;
        a->req = j;
        a->seed = pattern_seed(j + 1, c->id);
        a->expect = n;
        a->got = 0;
        a->next = NULL;
        if (c->tail) {
            c->tail->next = a;
        } else {
            c->head = a;
        }
        c->tail = a;
        if (++c->queued > ov.max_queue) {
            ov.max_queue = c->queued;
        }
        r->answers++;
        r->left++;

        put_u32(req, REQ_MAGIC_DATA);
        put_u32(req + 4, j + 1);
        put_u32(req + 8, c->id);
        put_u32(req + 12, n);
        /* The send buffer holds at most the few requests still queued on
         * the connection, 16 bytes each: a write cannot be partial. */
        w = send(c->fd, req, REQ_LEN, MSG_NOSIGNAL);
        if (w != REQ_LEN) {
            conn_fail(c, "sending request: %s",
                      w < 0 ? strerror(errno) : "short write");
        }
    }
    if (!r->left) {
        r->done = true;
        r->t_done = r->t_send;
        r->vm_done = r->vm_send;
        ov.outstanding--;
        ov.n_done++;
    }
}

static void
ov_complete(struct ov_request *r, uint64_t now)
{
    r->t_done = now;
    r->vm_done = vm_timeouts();
    r->done = true;
    ov.outstanding--;
    ov.n_done++;
}

/* Reads bytes of the oldest answer queued on data connection 'c'. */
static void
ov_readable(struct cconn *c)
{
    struct answer *a = c->head;
    uint64_t left = a ? a->expect - a->got : 0;
    size_t want = left == 0 ? RECV_BUF : left < RECV_BUF ? left : RECV_BUF;
    ssize_t n = read(c->fd, cli.buf, want);
    struct ov_request *r;
    uint64_t now;

    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            conn_fail(c, "read: %s (after %" PRIu64 " of %" PRIu64
                      " bytes)", strerror(errno), a ? a->got : 0,
                      a ? a->expect : 0);
        }
        return;
    } else if (n == 0) {
        conn_fail(c, "connection closed by server after %" PRIu64 " of %"
                  PRIu64 " bytes", a ? a->got : 0, a ? a->expect : 0);
        return;
    } else if (!a) {
        cli.corrupt++;
        conn_fail(c, "%zd unexpected bytes with no request outstanding", n);
        return;
    }

    pattern_fill(cli.want, n, a->seed, a->got);
    if (memcmp(cli.buf, cli.want, n)) {
        ssize_t i = 0;

        while (cli.buf[i] == cli.want[i]) {
            i++;
        }
        cli.corrupt++;
        conn_fail(c, "verification mismatch at byte %" PRIu64 " of %" PRIu64
                  " (expected 0x%02x, got 0x%02x)", a->got + i, a->expect,
                  cli.want[i], cli.buf[i]);
        return;
    }
    r = &ov.reqs[a->req];
    now = now_ns();
    if (a->got) {
        /* As in rounds: only waits after the answer's first byte. */
        uint64_t gap = now - c->t_rx;

        if (gap > r->max_gap_ns) {
            r->max_gap_ns = gap;
        }
        if (cli.stall_ns && gap >= cli.stall_ns) {
            r->stalls++;
        }
    }
    c->t_rx = now;
    a->got += n;
    r->bytes += n;
    if (a->got == a->expect) {
        c->head = a->next;
        if (!c->head) {
            c->tail = NULL;
        }
        c->queued--;
        if (!--r->left) {
            ov_complete(r, now);
        }
    }
}

/* Sends an INCS query on every server's stats connection. */
static void
ov_stats_send(void)
{
    int s;

    ov.t_sample = now_ns();
    ov.sampling = true;
    for (s = 0; s < cli.n_servers; s++) {
        conn_request(&ov.sconns[s], REQ_MAGIC_STATS, 0, STATS_LEN);
    }
}

/* Records the sample once every server answered. */
static void
ov_stats_check(void)
{
    struct ov_sample *sm;
    int s;

    if (!ov.sampling || cli.pending > 0) {
        return;
    }
    ov.sampling = false;
    for (s = 0; s < cli.n_servers; s++) {
        struct cconn *c = &ov.sconns[s];

        if (c->dead) {
            ov.stats_failed = true;
            return;
        }
        stats_decode(c->stats_buf, &ov.st_cur[s]);
        c->mode = C_IDLE;
    }
    if (ov.n_samples == ov.cap_samples) {
        ov.cap_samples = ov.cap_samples ? 2 * ov.cap_samples : 64;
        ov.samples = realloc(ov.samples,
                             ov.cap_samples * sizeof *ov.samples);
        if (!ov.samples) {
            perror("incast");
            exit(1);
        }
    }
    sm = &ov.samples[ov.n_samples++];
    sm->t_sent = ov.t_sample;
    sm->t_done = now_ns();
    stats_delta(ov.st_base, ov.st_cur, &sm->rtos, &sm->retrans);
}

/* Waits for events until 'deadline' (ns) at the latest, and handles them. */
static void
ov_poll(uint64_t deadline)
{
    struct epoll_event evs[256];
    uint64_t now = now_ns();
    uint64_t wait_ms = deadline > now ? (deadline - now + 999999) / 1000000
                                      : 0;
    int i, n;

    n = epoll_wait(cli.ep, evs, 256, wait_ms < 1000 ? (int) wait_ms : 1000);
    if (n < 0 && errno != EINTR) {
        perror("incast: epoll_wait");
        exit(1);
    }
    for (i = 0; i < n; i++) {
        struct cconn *c = evs[i].data.ptr;

        if (c->stats_conn) {
            conn_readable(c);
        } else {
            ov_readable(c);
        }
    }
    ov_stats_check();
}

/* Takes one sample and waits for it (after any still out).  Returns false
 * if a server did not answer in time. */
static bool
ov_sample_now(uint64_t timeout_ns)
{
    uint64_t deadline = now_ns() + timeout_ns;
    bool sent = false;

    while (!cli.errors && !ov.stats_failed && now_ns() < deadline) {
        if (!ov.sampling) {
            if (sent) {
                return true;
            }
            ov_stats_send();
            sent = true;
        }
        ov_poll(deadline);
    }
    if (ov.sampling && !cli.errors && !ov.stats_failed) {
        fprintf(stderr, "incast: stats: timed out waiting for the servers' "
                "counters\n");
        cli.errors++;
    }
    return false;
}

/* The sender counters that moved while request 'r' was outstanding: from
 * the last sample taken before it was sent to the first one taken after it
 * completed.  Servers count per server, not per connection, so every
 * request outstanding within a sampling interval of an RTO is charged with
 * it. */
static void
ov_attribute(struct ov_request *r)
{
    const struct ov_sample *lo = NULL, *hi = NULL;
    int i;

    for (i = 0; i < ov.n_samples; i++) {
        const struct ov_sample *sm = &ov.samples[i];

        if (sm->t_done <= r->t_send) {
            lo = sm;
        }
        if (!hi && sm->t_sent >= r->t_done) {
            hi = sm;
        }
    }
    if (lo && hi) {
        r->rtos = hi->rtos - lo->rtos;
        r->retrans = hi->retrans - lo->retrans;
    } else {
        r->rtos = -1;
        r->retrans = 0;
    }
}

static int
run_overlap(const struct ov_opts *o, const struct sockaddr_storage *addrs,
            const socklen_t *alens, const char *cc, long long timeout_ms,
            uint64_t vm_t0, const char *json)
{
    uint64_t timeout_ns = (uint64_t) timeout_ms * 1000000;
    uint64_t stats_ns = (uint64_t) o->stats_ms * 1000000;
    uint64_t t0, t_next_stats, t_end, vm_start, vm_setup, vm_end;
    uint64_t vm_stats = 0;
    uint64_t total_bytes = 0, ok_bytes = 0;
    double *sorted, t = 0, goodput, p50, p99, span_s;
    int64_t total_rtos = 0;
    uint64_t total_retrans = 0;
    int timeout_reqs = 0, stall_reqs = 0, n_ok = 0, next = 0, oldest = 0;
    bool rto_known;
    int i, s;

    ov.n = o->requests;
    ov.fanout = o->fanout;
    ov.rng = o->seed;
    ov.reqs = calloc(ov.n, sizeof *ov.reqs);
    ov.answers = calloc((size_t) ov.n * ov.fanout, sizeof *ov.answers);
    ov.arrival = calloc(ov.n, sizeof *ov.arrival);
    ov.perm = calloc(cli.n_conns, sizeof *ov.perm);
    ov.sconns = calloc(cli.n_servers, sizeof *ov.sconns);
    ov.st_base = calloc(cli.n_servers, sizeof *ov.st_base);
    ov.st_cur = calloc(cli.n_servers, sizeof *ov.st_cur);
    sorted = calloc(ov.n, sizeof *sorted);
    if (!ov.reqs || !ov.answers || !ov.arrival || !ov.perm || !ov.sconns
        || !ov.st_base || !ov.st_cur || !sorted) {
        perror("incast");
        return 1;
    }
    /* Arrivals first, then the draws of connections: the times do not
     * depend on the fanout. */
    for (i = 0; i < ov.n; i++) {
        t += -log(1.0 - ov_uniform()) / o->rps;
        ov.arrival[i] = (uint64_t) (t * 1e9);
    }
    for (i = 0; i < cli.n_conns; i++) {
        ov.perm[i] = i;
    }

    /* The stats connections, after the data connections. */
    for (s = 0; s < cli.n_servers; s++) {
        struct cconn *c = &ov.sconns[s];
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

        c->id = cli.n_conns + s;
        c->server = s;
        c->stats_conn = true;
        if (connect_one(c, &addrs[s], alens[s], cc, (int) timeout_ms)) {
            fprintf(stderr, "incast: could not set up the stats connection "
                    "to %s\n", cli.names[s]);
            print_setup_failure(vm_t0);
            return 1;
        }
        epoll_ctl(cli.ep, EPOLL_CTL_ADD, c->fd, &ev);
    }
    cli.overlap = true;
    /* The baseline: the first sample, with its totals as the origin. */
    if (!ov_sample_now(timeout_ns)) {
        return 1;
    }
    memcpy(ov.st_base, ov.st_cur, cli.n_servers * sizeof *ov.st_cur);
    ov.samples[0].rtos = 0;
    ov.samples[0].retrans = 0;
    vm_start = vm_timeouts();
    vm_setup = vm_start - vm_t0;

    t0 = now_ns();
    t_next_stats = t0 + stats_ns;
    while (!cli.errors && !ov.stats_failed) {
        uint64_t now = now_ns(), wake = UINT64_MAX;

        while (next < ov.n && t0 + ov.arrival[next] <= now) {
            ov_send(next++, o);
        }
        if (next == ov.n && ov.n_done == ov.n) {
            break;
        }
        if (stats_ns && !ov.sampling && now >= t_next_stats) {
            ov_stats_send();
            t_next_stats = now + stats_ns;
        }
        /* Every time below is compared with one at or before 'now'. */
        now = now_ns();
        while (oldest < next && ov.reqs[oldest].done) {
            oldest++;
        }
        if (oldest < next && now - ov.reqs[oldest].t_send >= timeout_ns) {
            struct ov_request *r = &ov.reqs[oldest];
            int f;

            fprintf(stderr, "incast: request %d: timed out, %d of %d "
                    "answers complete\n", oldest + 1, r->answers - r->left,
                    r->answers);
            for (f = 0; f < ov.fanout; f++) {
                struct answer *a = &ov.answers[(size_t) oldest * ov.fanout
                                               + f];

                if (a->conn && a->got < a->expect) {
                        const struct answer *q;
                    int before = 0;

                    for (q = a->conn->head; q && q != a; q = q->next) {
                        before++;
                    }
                    fprintf(stderr, "incast: request %d: conn %" PRIu32
                            " (%s): got %" PRIu64 " of %" PRIu64 " bytes, "
                            "%d answers queued before it\n", oldest + 1,
                            a->conn->id, cli.names[a->conn->server], a->got,
                            a->expect, before);
                }
            }
            cli.errors++;
            break;
        }
        if (ov.sampling && now - ov.t_sample >= timeout_ns) {
            fprintf(stderr, "incast: stats: timed out waiting for the "
                    "servers' counters\n");
            cli.errors++;
            break;
        }
        if (next < ov.n) {
            wake = t0 + ov.arrival[next];
        }
        if (stats_ns && !ov.sampling && t_next_stats < wake) {
            wake = t_next_stats;
        }
        if (oldest < next && ov.reqs[oldest].t_send + timeout_ns < wake) {
            wake = ov.reqs[oldest].t_send + timeout_ns;
        }
        if (ov.sampling && ov.t_sample + timeout_ns < wake) {
            wake = ov.t_sample + timeout_ns;
        }
        ov_poll(wake);
    }
    vm_end = vm_timeouts();
    /* The last sample, after every completion, closes every window. */
    rto_known = !ov.stats_failed && !cli.errors
                && ov_sample_now(timeout_ns);
    cli.overlap = false;

    t_end = t0;
    for (i = 0; i < ov.n_sent; i++) {
        struct ov_request *r = &ov.reqs[i];
        bool timed_out;

        total_bytes += r->bytes;
        if (!r->done) {
            r->rtos = -1;
            fprintf(stderr, "request=%d t_ms=%.3f ok=0 bytes=%" PRIu64 "\n",
                    i + 1, (r->t_send - t0) / 1e6, r->bytes);
            continue;
        }
        ov_attribute(r);
        timed_out = r->rtos > 0 || r->stalls > 0 || r->vm_done > r->vm_send;
        timeout_reqs += timed_out;
        stall_reqs += r->stalls > 0;
        sorted[n_ok++] = (r->t_done - r->t_send) / 1e6;
        ok_bytes += r->bytes;
        if (r->t_done > t_end) {
            t_end = r->t_done;
        }
        fprintf(stderr, "request=%d t_ms=%.3f rct_ms=%.3f bytes=%" PRIu64
                " ok=1 answers=%d outstanding=%d sender_rtos=%" PRId64
                " sender_retrans=%" PRIu64 " stalls=%d max_gap_ms=%.1f"
                " vm_timeouts=%" PRIu64 "\n", i + 1, (r->t_send - t0) / 1e6,
                (r->t_done - r->t_send) / 1e6, r->bytes, r->answers,
                r->outstanding, r->rtos, r->retrans, r->stalls,
                r->max_gap_ns / 1e6, r->vm_done - r->vm_send);
    }
    /* The VM's own RTOs on the stats connections (their sockets' own
     * counters): the measurement's share of vm_timeouts. */
    for (s = 0; s < cli.n_servers; s++) {
        struct sock_counters sc;

        if (sock_counters_get(ov.sconns[s].fd, &sc)) {
            vm_stats += sc.total_rto;
        }
    }
    if (rto_known) {
        total_rtos = ov.samples[ov.n_samples - 1].rtos;
        total_retrans = ov.samples[ov.n_samples - 1].retrans;
    }
    qsort(sorted, n_ok, sizeof *sorted, cmp_double);
    span_s = n_ok ? (t_end - ov.reqs[0].t_send) / 1e9 : 0;
    goodput = span_s > 0 ? ok_bytes * 8 / span_s / 1e6 : 0;
    p50 = percentile(sorted, n_ok, 50);
    p99 = percentile(sorted, n_ok, 99);

    if (json) {
        FILE *f = json_open(json);

        if (f) {
            fprintf(f, "{\n  \"workload\": \"overlap\", \"senders\": %d, "
                    "\"servers\": %d, \"conns_per_server\": %d,\n",
                    cli.n_conns, cli.n_servers, cli.n_conns / cli.n_servers);
            fprintf(f, "  \"bytes_per_sender\": %lld, \"total_bytes\": %lld, "
                    "\"cc\": \"%s\", \"timeout_ms\": %lld,\n", o->per,
                    o->total, cc ? cc : "", timeout_ms);
            fprintf(f, "  \"poisson_rps\": %g, \"fanout\": %d, "
                    "\"n_requests\": %d, \"seed\": %" PRIu64 ", "
                    "\"stats_ms\": %lld,\n", o->rps, ov.fanout, ov.n,
                    o->seed, o->stats_ms);
            fprintf(f, "  \"requests\": [\n");
            for (i = 0; i < ov.n_sent; i++) {
                struct ov_request *r = &ov.reqs[i];

                fprintf(f, "    {\"request\": %d, \"t_ms\": %.3f, "
                        "\"rct_ms\": %.3f, \"bytes\": %" PRIu64 ", "
                        "\"ok\": %s, \"answers\": %d, \"outstanding\": %d, "
                        "\"sender_rtos\": %" PRId64 ", "
                        "\"sender_retrans\": %" PRIu64 ", "
                        "\"stalls\": %d, \"max_gap_ms\": %.3f, "
                        "\"vm_timeouts\": %" PRIu64 "}%s\n", i + 1,
                        (r->t_send - t0) / 1e6,
                        r->done ? (r->t_done - r->t_send) / 1e6 : 0.0,
                        r->bytes, r->done ? "true" : "false", r->answers,
                        r->outstanding, r->rtos, r->retrans, r->stalls,
                        r->max_gap_ns / 1e6,
                        r->done ? r->vm_done - r->vm_send : 0,
                        i + 1 < ov.n_sent ? "," : "");
            }
            fprintf(f, "  ],\n  \"summary\": {\"rounds\": %d, "
                    "\"goodput_mbps\": %.1f, \"rct_p50_ms\": %.3f, "
                    "\"rct_p99_ms\": %.3f, \"bytes\": %" PRIu64 ", "
                    "\"errors\": %d, \"timeout_rounds\": %d, "
                    "\"stall_rounds\": %d, "
                    "\"sender_rtos\": %" PRId64 ", \"sender_retrans\": %"
                    PRIu64 ", \"vm_timeouts\": %" PRIu64 ", "
                    "\"setup_vm_timeouts\": %" PRIu64 ", "
                    "\"max_outstanding\": %d, \"max_queue\": %d, "
                    "\"span_ms\": %.3f, \"samples\": %d, "
                    "\"stats_vm_timeouts\": %" PRIu64 "}\n}\n", ov.n_sent,
                    goodput, p50, p99, total_bytes, cli.errors, timeout_reqs,
                    stall_reqs, total_rtos, total_retrans, vm_end - vm_start,
                    vm_setup, ov.max_outstanding, ov.max_queue,
                    span_s * 1e3, ov.n_samples, vm_stats);
            json_close(f, json);
        }
    }

    printf("RTO timeout_rounds=%d stall_rounds=%d sender_rtos=%" PRId64
           " sender_retrans=%" PRIu64 " vm_timeouts=%" PRIu64
           " setup_vm_timeouts=%" PRIu64 " samples=%d"
           " stats_vm_timeouts=%" PRIu64 " sender_paced=%" PRIu64 "%s\n",
           timeout_reqs, stall_reqs, total_rtos, total_retrans,
           vm_end - vm_start, vm_setup, ov.n_samples, vm_stats,
           paced_delta(ov.st_base, ov.st_cur),
           rto_known ? "" : " incomplete=1");
    printf("RESULT senders=%d rounds=%d goodput_mbps=%.1f rct_p50_ms=%.3f "
           "rct_p99_ms=%.3f bytes=%" PRIu64 " errors=%d max_outstanding=%d "
           "max_queue=%d corrupt=%d\n", cli.n_conns, ov.n_sent, goodput, p50,
           p99, total_bytes, cli.errors, ov.max_outstanding, ov.max_queue,
           cli.corrupt);
    fflush(stdout);

    for (s = 0; s < cli.n_servers; s++) {
        close(ov.sconns[s].fd);
    }
    free(ov.reqs);
    free(ov.answers);
    free(ov.arrival);
    free(ov.perm);
    free(ov.sconns);
    free(ov.st_base);
    free(ov.st_cur);
    free(ov.samples);
    free(sorted);
    return cli.errors ? 1 : 0;
}

static void
client_usage(void)
{
    fprintf(stderr,
            "usage: incast client --servers ADDR:PORT[,ADDR:PORT...]\n"
            "           --conns-per-server K --rounds R\n"
            "           (--bytes-per-sender B | --total-bytes T)\n"
            "           [--cc NAME] [--timeout-ms MS] [--stall-ms MS]\n"
            "           [--json FILE] [--ap-buffer BYTES --ap-rate-mbps R]\n"
            "   or: incast client --servers ... --conns-per-server K\n"
            "           --poisson-rps R --fanout F --requests N\n"
            "           (--bytes-per-sender B | --total-bytes T)\n"
            "           [--seed S] [--stats-ms MS] [other options as above]\n"
            "A round times out if a sender's RTO fired, the client's own\n"
            "RTO fired (vm_timeouts: TCPTimeouts of its namespace), or an\n"
            "answer waited --stall-ms (default 180: 0.9 x Linux's RTOmin;\n"
            "0: RTOs only) between two of its bytes.\n"
            "Overlapping requests: N requests at Poisson times (R a second,\n"
            "drawn from seed S, default 1), each to F connections drawn at\n"
            "random, answering B bytes each (or T split over the F); they\n"
            "do not wait for earlier answers.  The servers' counters are\n"
            "sampled every --stats-ms (default 50) over one more connection\n"
            "per server.  A request times out like a round, counting what\n"
            "moved while it was outstanding.\n"
            "--ap-buffer/--ap-rate-mbps: the servers pace their answers by\n"
            "Adaptive Pacing for a bottleneck of that buffer and rate, every\n"
            "connection a flow (sender_paced: their paced writes).\n");
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
        { "poisson-rps", required_argument, NULL, 'p' },
        { "fanout", required_argument, NULL, 'f' },
        { "requests", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 'e' },
        { "stats-ms", required_argument, NULL, 'i' },
        { "ap-buffer", required_argument, NULL, 'B' },
        { "ap-rate-mbps", required_argument, NULL, 'R' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char *servers = NULL, *save, *tok;
    const char *cc = NULL, *json = NULL;
    long long k = 0, rounds = 0, per = -1, total = -1, timeout_ms = 10000;
    long long stall_ms = 180, ap_buffer = 0, ap_rate = 0;
    struct ov_opts o = { .seed = 1, .stats_ms = 50 };
    struct incast_stats *st_prev, *st_cur, *st_first;
    struct round_rec *recs;
    double *sorted, sum_s = 0;
    uint64_t total_bytes = 0, ok_bytes = 0, total_retrans = 0;
    uint64_t vm_t0, vm_setup, vm_prev, vm_cur, total_vm = 0;
    int64_t total_rtos = 0;
    int timeout_rounds = 0, stall_rounds = 0, n_ok = 0, r_done = 0;
    bool rto_known = true;
    int rc;
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
        case 'p': o.rps = atof(optarg); break;
        case 'f': o.fanout = atoll(optarg); break;
        case 'n': o.requests = atoll(optarg); break;
        case 'e': o.seed = strtoull(optarg, NULL, 0); break;
        case 'i': o.stats_ms = atoll(optarg); break;
        case 'B': ap_buffer = atoll(optarg); break;
        case 'R': ap_rate = atoll(optarg); break;
        default:
            client_usage();
            return opt == 'h' ? 0 : 2;
        }
    }
    if (o.rps > 0) {
        /* Overlapping requests: --requests instead of --rounds, and each
         * answer must be at least a byte. */
        rounds = 1;
        if (o.requests <= 0 || o.requests > 10000000 || o.fanout <= 0
            || (total >= 0 && total < o.fanout) || per == 0
            || total / o.fanout >= UINT32_MAX
            || o.stats_ms < 0 || o.stats_ms > 3600000) {
            client_usage();
            return 2;
        }
    } else if (o.requests || o.fanout) {
        client_usage();
        return 2;
    }
    if (!servers || k <= 0 || rounds <= 0 || optind != argc
        || (per < 0) == (total < 0) || per > UINT32_MAX
        || timeout_ms <= 0 || timeout_ms > 3600000
        || stall_ms < 0 || stall_ms > 3600000
        || (ap_buffer > 0) != (ap_rate > 0) || ap_buffer < 0 || ap_rate < 0
        || ap_buffer > UINT32_MAX || ap_rate > UINT32_MAX) {
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
    if (o.fanout > cli.n_conns) {
        fprintf(stderr, "incast: --fanout %lld is more than the %d "
                "connections\n", o.fanout, cli.n_conns);
        return 2;
    }
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
    st_first = calloc(cli.n_servers, sizeof *st_first);
    if (cli.ep < 0 || !cli.conns || !recs || !sorted || !st_prev || !st_cur
        || !st_first) {
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
            print_setup_failure(vm_t0);
            return 1;
        }
        epoll_ctl(cli.ep, EPOLL_CTL_ADD, c->fd, &ev);
    }
    /* Adaptive Pacing counts every open connection as a flow (the paper
     * counts SYNs and FINs). */
    if (ap_buffer && !ask_pacing(cli.n_conns, ap_buffer, ap_rate)) {
        return 1;
    }
    if (o.rps > 0) {
        o.per = per;
        o.total = total;
        rc = run_overlap(&o, addrs, alens, cc, timeout_ms, vm_t0, json);
        goto out;
    }
    if (!query_stats(st_prev, timeout_ms * 1000000ULL)) {
        return 1;
    }
    memcpy(st_first, st_prev, cli.n_servers * sizeof *st_prev);
    vm_prev = vm_timeouts();
    vm_setup = vm_prev - vm_t0;

    for (cli.round = 1; cli.round <= rounds; cli.round++) {
        struct round_rec *rec = &recs[cli.round - 1];
        uint64_t t0, bytes = 0;

        /* Barrier: every request leaves back to back, and only after the
         * previous round completed everywhere. */
        cli.t_last = cli.t_phase = t0 = now_ns();
        cli.stalls = 0;
        cli.max_gap_ns = cli.max_gap_at_ns = 0;
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
        rec->max_gap_at_ms = cli.max_gap_at_ns / 1e6;
        vm_cur = vm_timeouts();
        rec->vm_timeouts = vm_cur - vm_prev;
        vm_prev = vm_cur;
        total_vm += rec->vm_timeouts;
        total_bytes += bytes;
        r_done++;

        rec->rtos = -1;
        /* After a failed round too, over the live (idle) connections:
         * the failed ones were closed, and a collapse's sender RTOs are
         * its figures.  query_stats() fails if a server has none left. */
        if (query_stats(st_cur, timeout_ms * 1000000ULL)) {
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
                " stalls=%d max_gap_ms=%.1f max_gap_at_ms=%.1f"
                " vm_timeouts=%" PRIu64 "\n",
                cli.round, rec->rct_ms, rec->bytes, rec->ok, rec->rtos,
                rec->retrans, rec->stalls, rec->max_gap_ms,
                rec->max_gap_at_ms, rec->vm_timeouts);
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
        FILE *f = json_open(json);

        if (f) {
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
                        "\"max_gap_at_ms\": %.3f, "
                        "\"vm_timeouts\": %" PRIu64 "}%s\n",
                        i + 1, recs[i].rct_ms, recs[i].bytes,
                        recs[i].ok ? "true" : "false", recs[i].rtos,
                        recs[i].retrans, recs[i].stalls, recs[i].max_gap_ms,
                        recs[i].max_gap_at_ms, recs[i].vm_timeouts,
                        i + 1 < r_done ? "," : "");
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
            json_close(f, json);
        }
    }

    printf("RTO timeout_rounds=%d stall_rounds=%d sender_rtos=%" PRId64
           " sender_retrans=%" PRIu64 " vm_timeouts=%" PRIu64
           " setup_vm_timeouts=%" PRIu64 " sender_paced=%" PRIu64 "%s\n",
           timeout_rounds, stall_rounds, total_rtos, total_retrans, total_vm,
           vm_setup, paced_delta(st_first, st_prev),
           rto_known ? "" : " incomplete=1");
    printf("RESULT senders=%d rounds=%d goodput_mbps=%.1f rct_p50_ms=%.3f "
           "rct_p99_ms=%.3f bytes=%" PRIu64 " errors=%d corrupt=%d\n",
           cli.n_conns, r_done, goodput, p50, p99, total_bytes, cli.errors,
           cli.corrupt);
    fflush(stdout);
    rc = cli.errors ? 1 : 0;

out:
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
    free(st_first);
    free(st_cur);
    return rc;
}
