/*
 * incast rpc: short request/response exchanges, each on a new connection;
 * the latency probe of the do-no-harm benchmark (tools/incast noharm).
 *
 * RPC i starts at t0 + i / rate, whether or not earlier ones have finished
 * (a slow one never delays the next), on a new TCP connection to server
 * i mod n: connect, one DATA request of the incast protocol (REQ_LEN bytes),
 * an answer of --bytes bytes read and verified, close.  Its latency is from
 * connect() to the answer's last byte; it is "retransmitted" when its
 * socket retransmitted anything (tcpi_total_retrans, the SYN included: a
 * lost or held handshake shows there), and failed when it did not finish
 * within --timeout-ms or the answer was wrong.  With --count 0 RPCs start
 * until SIGTERM or SIGINT; those under way then finish, and the report
 * follows (the testbed runs it so beside an incast).
 */

#define _GNU_SOURCE
#include "incast.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* Connection ids of the RPCs' answers (the pattern's seed): far above the
 * incast client's, so that no answer of one is mistaken for the other's. */
#define RPC_CONN_ID_BASE 0x80000000u

/* Set by SIGTERM and SIGINT: start no more RPCs. */
static volatile sig_atomic_t stop_starting;

enum rpc_state { RPC_WAITING, RPC_CONNECTING, RPC_READING, RPC_DONE };

struct rpc {
    enum rpc_state state;
    int fd;
    uint64_t t_start, t_end;    /* now_ns() at connect() and at the end. */
    uint64_t t_connected;       /* now_ns() when the handshake was done. */
    uint32_t got;               /* Answer bytes verified so far. */
    uint32_t retrans;           /* tcpi_total_retrans at the end. */
    bool ok;
    bool corrupt;               /* Its answer differed from the pattern. */
    const char *error;          /* Why it failed, for stderr. */
};

static void
rpc_usage(void)
{
    fprintf(stderr,
            "usage: incast rpc --servers ADDR:PORT[,ADDR:PORT...]\n"
            "           --count N [--rate-rps R] [--bytes B]\n"
            "           [--timeout-ms MS] [--json FILE]\n"
            "N RPCs (0: until SIGTERM or SIGINT, then those under way\n"
            "finish), one every 1/R s (default 50 a second), each on a new\n"
            "connection to the next server in turn: a request, an answer of\n"
            "B bytes (default 2048), verified, close.  stdout ends with\n"
            "  RPC count=N ok=K failed=F retransmitted=T p50_ms=.. "
            "p99_ms=.. max_ms=..\n"
            "over the RPCs that finished.  An RPC fails when it takes\n"
            "longer than --timeout-ms (default 5000).  Exit status 1 if an\n"
            "answer's bytes were wrong.\n");
}

/* Ends RPC 'r': records its retransmissions and closes its socket. */
static void
rpc_finish(struct rpc *r, bool ok, const char *error)
{
    struct sock_counters sc;

    r->t_end = now_ns();
    r->ok = ok;
    r->error = error;
    if (sock_counters_get(r->fd, &sc)) {
        r->retrans = sc.total_retrans;
    }
    close(r->fd);
    r->fd = -1;
    r->state = RPC_DONE;
}

/* Starts RPC 'i' toward 'addr'; returns false if no socket could be made
 * (the RPC is then failed). */
static bool
rpc_start(struct rpc *r, int ep, uint32_t i,
          const struct sockaddr_storage *addr, socklen_t alen)
{
    struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = i };

    r->t_start = now_ns();
    r->fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (r->fd < 0) {
        r->state = RPC_DONE;
        r->error = strerror(errno);
        return false;
    }
    if ((connect(r->fd, (const struct sockaddr *) addr, alen)
         && errno != EINPROGRESS)
        || epoll_ctl(ep, EPOLL_CTL_ADD, r->fd, &ev)) {
        rpc_finish(r, false, strerror(errno));
        return false;
    }
    r->state = RPC_CONNECTING;
    return true;
}

/* The connection of RPC 'i' is writable: the handshake is done, send the
 * request. */
static void
rpc_connected(struct rpc *r, int ep, uint32_t i, uint32_t bytes)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };
    uint8_t req[REQ_LEN];
    socklen_t len = sizeof(int);
    int err = 0;

    r->t_connected = now_ns();
    if (getsockopt(r->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
        rpc_finish(r, false, strerror(err ? err : errno));
        return;
    }
    put_u32(req, REQ_MAGIC_DATA);
    put_u32(req + 4, i + 1);
    put_u32(req + 8, RPC_CONN_ID_BASE + i);
    put_u32(req + 12, bytes);
    /* REQ_LEN bytes always fit a new connection's send buffer. */
    if (write(r->fd, req, sizeof req) != sizeof req
        || epoll_ctl(ep, EPOLL_CTL_MOD, r->fd, &ev)) {
        rpc_finish(r, false, strerror(errno));
        return;
    }
    r->state = RPC_READING;
}

/* Answer bytes of RPC 'i' are readable: verifies them. */
static void
rpc_readable(struct rpc *r, uint32_t i, uint32_t bytes, uint8_t *buf,
             uint8_t *want, size_t buf_size)
{
    uint32_t left = bytes - r->got;
    ssize_t n = read(r->fd, buf, left < buf_size ? left : buf_size);

    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            rpc_finish(r, false, strerror(errno));
        }
        return;
    } else if (n == 0) {
        rpc_finish(r, false, "closed by the server before the answer's end");
        return;
    }
    pattern_fill(want, n, pattern_seed(i + 1, RPC_CONN_ID_BASE + i), r->got);
    if (memcmp(buf, want, n)) {
        r->corrupt = true;
        rpc_finish(r, false, "answer bytes differ from the pattern");
        return;
    }
    r->got += n;
    if (r->got == bytes) {
        rpc_finish(r, true, NULL);
    }
}

static void
on_stop_signal(int sig)
{
    (void) sig;
    stop_starting = 1;
}

static int
rpc_report(const struct rpc *rpcs, uint32_t count, uint64_t t0,
           const char *json)
{
    double *lat = calloc(count ? count : 1, sizeof *lat);
    uint32_t ok = 0, retransmitted = 0, i;
    FILE *f = NULL;
    int rc = 0;

    if (!lat) {
        perror("incast rpc");
        return 1;
    }
    for (i = 0; i < count; i++) {
        const struct rpc *r = &rpcs[i];

        if (r->ok) {
            lat[ok++] = (r->t_end - r->t_start) / 1e6;
        } else {
            fprintf(stderr, "incast rpc: RPC %" PRIu32 " failed after "
                    "%.1f ms: %s\n", i + 1,
                    (r->t_end - r->t_start) / 1e6,
                    r->error ? r->error : "timed out");
        }
        retransmitted += r->retrans > 0;
        rc |= r->corrupt;
    }
    qsort(lat, ok, sizeof *lat, cmp_double);
    printf("RPC count=%" PRIu32 " ok=%" PRIu32 " failed=%" PRIu32
           " retransmitted=%" PRIu32 " p50_ms=%.3f p99_ms=%.3f"
           " max_ms=%.3f\n", count, ok, count - ok, retransmitted,
           percentile(lat, ok, 50), percentile(lat, ok, 99),
           ok ? lat[ok - 1] : 0.0);
    free(lat);

    if (json) {
        f = fopen(json, "w");
        if (!f) {
            fprintf(stderr, "incast rpc: %s: %s\n", json, strerror(errno));
            return 1;
        }
        fprintf(f, "{\"rpcs\": [\n");
        for (i = 0; i < count; i++) {
            const struct rpc *r = &rpcs[i];

            fprintf(f, "  {\"start_ms\": %.3f, \"latency_ms\": %.3f, "
                    "\"connect_ms\": %.3f, \"ok\": %d, \"retrans\": %"
                    PRIu32 "}%s\n", (r->t_start - t0) / 1e6,
                    (r->t_end - r->t_start) / 1e6,
                    r->t_connected ? (r->t_connected - r->t_start) / 1e6
                                   : -1.0, r->ok, r->retrans,
                    i + 1 < count ? "," : "");
        }
        fprintf(f, "]}\n");
        if (fclose(f)) {
            fprintf(stderr, "incast rpc: %s: %s\n", json, strerror(errno));
            rc = 1;
        }
    }
    return rc;
}

int
rpc_main(int argc, char *argv[])
{
    static const struct option opts[] = {
        { "servers", required_argument, NULL, 's' },
        { "count", required_argument, NULL, 'n' },
        { "rate-rps", required_argument, NULL, 'r' },
        { "bytes", required_argument, NULL, 'b' },
        { "timeout-ms", required_argument, NULL, 'T' },
        { "json", required_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    enum { BUF_SIZE = 64 * 1024 };
    struct sockaddr_storage addrs[256];
    socklen_t alens[256];
    char *servers = NULL, *save, *tok;
    const char *json = NULL;
    long long count = 0, bytes = 2048, timeout_ms = 5000;
    double rate = 50;
    uint32_t n_servers = 0, started = 0, done = 0, oldest = 0, i;
    uint64_t t0, interval_ns, timeout_ns;
    static uint8_t buf[BUF_SIZE], want[BUF_SIZE];
    struct rpc *rpcs;
    int ep, opt, rc;

    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 's': servers = optarg; break;
        case 'n': count = atoll(optarg); break;
        case 'r': rate = atof(optarg); break;
        case 'b': bytes = atoll(optarg); break;
        case 'T': timeout_ms = atoll(optarg); break;
        case 'j': json = optarg; break;
        default:
            rpc_usage();
            return opt == 'h' ? 0 : 2;
        }
    }
    if (!servers || optind != argc || count < 0 || count > 1000000
        || !(rate > 0 && rate <= 100000) || bytes <= 0 || bytes > UINT32_MAX
        || timeout_ms <= 0 || timeout_ms > 3600000) {
        rpc_usage();
        return 2;
    }
    for (tok = strtok_r(servers, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n_servers == sizeof addrs / sizeof addrs[0]) {
            fprintf(stderr, "incast rpc: at most %zu servers\n",
                    sizeof addrs / sizeof addrs[0]);
            return 2;
        }
        if (parse_addr(tok, false, &addrs[n_servers], &alens[n_servers])) {
            return 2;
        }
        n_servers++;
    }
    if (!n_servers) {
        rpc_usage();
        return 2;
    }
    if (!count) {
        /* Until a signal: room for an hour of RPCs, or a million. */
        struct sigaction sa = { .sa_handler = on_stop_signal };

        count = rate * 3600 < 1000000 ? (long long) (rate * 3600) + 1
                                      : 1000000;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
    }
    rpcs = calloc(count, sizeof *rpcs);
    ep = epoll_create1(0);
    if (!rpcs || ep < 0) {
        perror("incast rpc");
        return 1;
    }
    raise_nofile(0);

    interval_ns = (uint64_t) (1e9 / rate);
    timeout_ns = (uint64_t) timeout_ms * 1000000;
    t0 = now_ns();
    while (done < count) {
        struct epoll_event evs[64];
        uint64_t now = now_ns(), wake = UINT64_MAX;
        int n, e;

        if (stop_starting) {
            count = started;
        }
        /* Start what is due, fail what is overdue. */
        while (started < count && now >= t0 + started * interval_ns) {
            if (!rpc_start(&rpcs[started], ep, started,
                           &addrs[started % n_servers],
                           alens[started % n_servers])) {
                done++;
            }
            started++;
        }
        while (oldest < started && rpcs[oldest].state == RPC_DONE) {
            oldest++;
        }
        for (i = oldest; i < started; i++) {
            struct rpc *r = &rpcs[i];

            if (r->state == RPC_CONNECTING || r->state == RPC_READING) {
                if (now >= r->t_start + timeout_ns) {
                    rpc_finish(r, false, "timed out");
                    done++;
                } else if (r->t_start + timeout_ns < wake) {
                    wake = r->t_start + timeout_ns;
                }
            }
        }
        if (started < count && t0 + started * interval_ns < wake) {
            wake = t0 + started * interval_ns;
        }
        if (done == count) {
            break;
        }

        n = epoll_wait(ep, evs, 64, wake == UINT64_MAX ? -1
                       : wake <= now ? 0 : (int) ((wake - now) / 1000000) + 1);
        if (n < 0 && errno != EINTR) {
            perror("incast rpc: epoll_wait");
            return 1;
        }
        for (e = 0; e < n; e++) {
            uint32_t j = evs[e].data.u32;
            struct rpc *r = &rpcs[j];

            if (r->state == RPC_CONNECTING) {
                rpc_connected(r, ep, j, bytes);
            } else if (r->state == RPC_READING) {
                rpc_readable(r, j, bytes, buf, want, sizeof buf);
            }
            done += r->state == RPC_DONE;
        }
    }
    rc = rpc_report(rpcs, count, t0, json);
    free(rpcs);
    close(ep);
    return rc;
}
