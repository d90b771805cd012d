/*
 * incast server: runs on each sender host.  Answers every DATA request with
 * exactly the requested number of pattern bytes, and STATS requests with its
 * sender-side retransmission/RTO counters.  A connection that sent a PACE
 * message paces its answers by Adaptive Pacing (ap_pace()).
 */

#define _GNU_SOURCE
#include "incast.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define SEND_CHUNK (64 * 1024)

struct sconn {
    int fd;
    uint32_t events;            /* Events currently registered in epoll. */
    uint8_t hdr[REQ_LEN];       /* Request being received. */
    size_t hdr_len;
    bool sending;               /* Answering; requests are not read now. */
    bool stats;                 /* Answer is 'stats_buf', not pattern. */
    uint64_t seed, off, len;    /* Answer: pattern seed, bytes sent, size. */
    uint8_t stats_buf[STATS_LEN];
    /* Adaptive Pacing's inputs from the client's PACE message; ap_flows 0:
     * not paced. */
    uint32_t ap_flows, ap_buffer, ap_rate_mbps;
};

static struct {
    int ep;
    const char *cc;
    struct sconn **conns;       /* Indexed by fd. */
    size_t n_conns_max;
    uint64_t accepted, active, requests, bytes_sent, paced;
    uint64_t closed_retrans, closed_rto; /* From sockets already closed. */
    bool has_rto;
    uint64_t base_timeouts, base_retrans;
    uint8_t buf[SEND_CHUNK];
} srv;

/* Tags for the two non-connection descriptors in epoll. */
static int listen_tag, signal_tag;

static void
set_events(struct sconn *c, uint32_t events)
{
    if (c->events != events) {
        struct epoll_event ev = { .events = events, .data.ptr = c };

        epoll_ctl(srv.ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->events = events;
    }
}

static void
collect(struct incast_stats *st)
{
    uint64_t retrans = srv.closed_retrans, rto = srv.closed_rto;
    size_t fd;

    srv.has_rto = true;
    for (fd = 0; fd < srv.n_conns_max; fd++) {
        struct sock_counters sc;

        if (srv.conns[fd] && sock_counters_get((int) fd, &sc)) {
            retrans += sc.total_retrans;
            rto += sc.total_rto;
            srv.has_rto = srv.has_rto && sc.has_total_rto;
        }
    }
    memset(st, 0, sizeof *st);
    st->netns_ino = netns_inode();
    st->netns_timeouts = proc_counter("/proc/net/netstat", "TcpExt:",
                                      "TCPTimeouts");
    st->netns_retrans = proc_counter("/proc/net/snmp", "Tcp:", "RetransSegs");
    st->sk_total_retrans = retrans;
    st->sk_total_rto = srv.has_rto ? rto : UINT64_MAX;
    st->conns = srv.active;
    st->requests = srv.requests;
    st->paced = srv.paced;
}

static void
print_stats(void)
{
    struct incast_stats st;

    collect(&st);
    printf("STATS accepted=%llu active=%llu requests=%llu bytes_sent=%llu "
           "total_retrans=%llu total_rto=%lld netns_timeouts=%llu "
           "netns_retrans_segs=%llu\n",
           (unsigned long long) srv.accepted,
           (unsigned long long) srv.active,
           (unsigned long long) srv.requests,
           (unsigned long long) srv.bytes_sent,
           (unsigned long long) st.sk_total_retrans,
           st.sk_total_rto == UINT64_MAX ? -1LL : (long long) st.sk_total_rto,
           (unsigned long long) (st.netns_timeouts - srv.base_timeouts),
           (unsigned long long) (st.netns_retrans - srv.base_retrans));
    fflush(stdout);
}

static void
conn_close(struct sconn *c, const char *why)
{
    struct sock_counters sc;

    /* Keep the counters of closed sockets so that totals never go back. */
    if (sock_counters_get(c->fd, &sc)) {
        srv.closed_retrans += sc.total_retrans;
        srv.closed_rto += sc.total_rto;
    }
    if (why) {
        fprintf(stderr, "incast server: closing connection fd %d: %s\n",
                c->fd, why);
    }
    srv.conns[c->fd] = NULL;
    srv.active--;
    close(c->fd);          /* Also removes it from epoll. */
    free(c);
}

/* Sends as much of the current answer as the socket takes.  Returns 0 when
 * the answer is complete, 1 if the socket is full, -1 on error. */
/* Resets every connection (SIGUSR2): an RST each, not a FIN, so that no
 * socket of an earlier client (one that gave up on its answers while the
 * bottleneck dropped them) keeps retransmitting into the next client's
 * run and is charged to it.  Their counters are kept (conn_close()). */
static void
reset_all(void)
{
    struct linger rst = { .l_onoff = 1, .l_linger = 0 };
    int n = 0;

    for (size_t fd = 0; fd < srv.n_conns_max; fd++) {
        struct sconn *c = srv.conns[fd];

        if (c) {
            setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &rst, sizeof rst);
            conn_close(c, NULL);
            n++;
        }
    }
    fprintf(stderr, "incast server: reset %d connections\n", n);
}

/* Adaptive Pacing (Adaptive Pacing paper, eq. 16): the interval between
 * two packets of a flow is
 *
 *     t = max(0, min(RTT / w, (n k w - B) / (C (w - 1))))
 *
 * with w the flow's congestion window and B the buffer in packets, C the
 * bottleneck in packets a second, n the concurrent flows and k the share of
 * flows that start in the same packet time (1 here: the incast's requests
 * leave together), randomised to t (1 + x), x uniform in [-1, 1], against
 * synchronisation.  The paper's sender paces each window; Linux paces a
 * socket at no more than SO_MAX_PACING_RATE (its internal pacing, no fq
 * needed), so the interval becomes that rate, recomputed from TCP_INFO
 * (cwnd, smoothed RTT, MSS) at every write of answer bytes, which is as
 * often as the socket's send buffer drains rather than once per window.
 * A packet is MSS + 66 bytes on the wire (Ethernet, IPv4, TCP with
 * timestamps), as the buffer holds frames. */
static void
ap_pace(struct sconn *c)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    unsigned long long rate = ~0ULL;
    double frame, w, rtt, buffer, link, t;

    memset(&ti, 0, sizeof ti);
    if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len)
        || !ti.tcpi_snd_mss || !ti.tcpi_snd_cwnd) {
        return;
    }
    frame = ti.tcpi_snd_mss + 66.0;
    w = ti.tcpi_snd_cwnd;
    rtt = ti.tcpi_rtt / 1e6;
    buffer = c->ap_buffer / frame;
    link = c->ap_rate_mbps * 1e6 / 8 / frame;
    t = rtt / w;
    if (w > 1) {
        t = fmin(t, (c->ap_flows * w - buffer) / (link * (w - 1)));
    }
    t = fmax(t, 0) * (1 + (2 * drand48() - 1));
    if (t > 0) {
        rate = (unsigned long long) (frame / t);
        srv.paced++;
    }
    setsockopt(c->fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate);
}

static int
conn_send(struct sconn *c)
{
    while (c->off < c->len) {
        uint64_t left = c->len - c->off;
        size_t chunk = left < SEND_CHUNK ? left : SEND_CHUNK;
        const uint8_t *p;
        ssize_t n;

        if (c->stats) {
            p = c->stats_buf + c->off;
        } else {
            pattern_fill(srv.buf, chunk, c->seed, c->off);
            p = srv.buf;
            if (c->ap_flows) {
                ap_pace(c);
            }
        }
        n = send(c->fd, p, chunk, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
        }
        c->off += n;
        if (!c->stats) {
            srv.bytes_sent += n;
        }
    }
    c->sending = false;
    return 0;
}

/* Reads one request header (never more, so that a pipelined next request
 * stays in the socket).  Returns 1 if a complete request was received, 0 if
 * more bytes are needed, -1 on EOF/error (with *why set). */
static int
conn_read_req(struct sconn *c, const char **why)
{
    while (c->hdr_len < REQ_LEN) {
        ssize_t n = read(c->fd, c->hdr + c->hdr_len, REQ_LEN - c->hdr_len);

        if (n > 0) {
            c->hdr_len += n;
        } else if (n == 0) {
            *why = c->hdr_len ? "EOF inside a request" : NULL;
            return -1;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return 0;
        } else {
            *why = strerror(errno);
            return -1;
        }
    }
    return 1;
}

static void
conn_event(struct sconn *c, uint32_t events)
{
    const char *why = NULL;
    int r;

    if (!c->sending) {
        uint32_t magic, round, id, nbytes;

        r = conn_read_req(c, &why);
        if (r <= 0) {
            if (r < 0) {
                conn_close(c, why);
            }
            return;
        }
        magic = get_u32(c->hdr);
        round = get_u32(c->hdr + 4);
        id = get_u32(c->hdr + 8);
        nbytes = get_u32(c->hdr + 12);
        c->hdr_len = 0;
        if (magic == REQ_MAGIC_PACE) {
            /* No answer: the next request may already wait (epoll is
             * level-triggered). */
            c->ap_flows = round;
            c->ap_buffer = id;
            c->ap_rate_mbps = nbytes;
            return;
        }
        c->off = 0;
        c->sending = true;
        if (magic == REQ_MAGIC_DATA) {
            c->stats = false;
            c->seed = pattern_seed(round, id);
            c->len = nbytes;
            srv.requests++;
        } else if (magic == REQ_MAGIC_STATS) {
            struct incast_stats st;

            collect(&st);
            stats_encode(&st, c->stats_buf);
            c->stats = true;
            c->len = STATS_LEN;
        } else {
            conn_close(c, "bad request magic");
            return;
        }
    } else if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        return;
    }

    r = conn_send(c);
    if (r < 0) {
        conn_close(c, strerror(errno));
    } else {
        /* Level-triggered: wait for room while answering, for the next
         * request otherwise. */
        set_events(c, r ? EPOLLOUT : EPOLLIN);
    }
}

static void
do_accept(int lfd)
{
    for (;;) {
        struct epoll_event ev;
        struct sconn *c;
        int one = 1;
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS
                || errno == ENOMEM) {
                /* The listener stays readable: pause instead of spinning. */
                fprintf(stderr, "incast server: accept: %s\n",
                        strerror(errno));
                usleep(100 * 1000);
            }
            return;
        }
        if ((size_t) fd >= srv.n_conns_max) {
            size_t n = (size_t) fd * 2;
            struct sconn **p = realloc(srv.conns, n * sizeof *p);

            if (!p) {
                close(fd);
                continue;
            }
            memset(p + srv.n_conns_max, 0,
                   (n - srv.n_conns_max) * sizeof *p);
            srv.conns = p;
            srv.n_conns_max = n;
        }
        /* The listener's congestion control is inherited, but set it again
         * in case it was changed system-wide meanwhile. */
        if (srv.cc) {
            set_cc(fd, srv.cc);
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        c->events = EPOLLIN;
        ev.events = EPOLLIN;
        ev.data.ptr = c;
        if (epoll_ctl(srv.ep, EPOLL_CTL_ADD, fd, &ev)) {
            perror("incast server: epoll_ctl");
            close(fd);
            free(c);
            continue;
        }
        srv.conns[fd] = c;
        srv.accepted++;
        srv.active++;
    }
}

static void
server_usage(void)
{
    fprintf(stderr,
            "usage: incast server --listen ADDR:PORT [--cc NAME] [--stats]\n"
            "  Prints a STATS line on SIGUSR1 and on exit (SIGINT/SIGTERM);\n"
            "  --stats also prints it once per second while active.\n"
            "  SIGUSR2 resets every connection (an RST each) and logs\n"
            "  \"incast server: reset N connections\".\n");
}

int
server_main(int argc, char *argv[])
{
    static const struct option opts[] = {
        { "listen", required_argument, NULL, 'l' },
        { "cc", required_argument, NULL, 'c' },
        { "stats", no_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct sockaddr_storage ss;
    struct epoll_event ev;
    const char *listen_addr = NULL;
    bool periodic = false;
    uint64_t last_print = 0, last_requests = 0;
    socklen_t slen;
    sigset_t mask;
    int lfd, sfd, opt, one = 1;

    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'l':
            listen_addr = optarg;
            break;
        case 'c':
            srv.cc = optarg;
            break;
        case 's':
            periodic = true;
            break;
        default:
            server_usage();
            return opt == 'h' ? 0 : 2;
        }
    }
    if (!listen_addr || optind != argc) {
        server_usage();
        return 2;
    }
    if (parse_addr(listen_addr, true, &ss, &slen)) {
        return 2;
    }
    raise_nofile(0);
    srand48((long) (now_ns() ^ getpid()));

    lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0) {
        perror("incast server: socket");
        return 1;
    }
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (set_cc(lfd, srv.cc)) {
        return 1;
    }
    if (bind(lfd, (struct sockaddr *) &ss, slen)
        || listen(lfd, SOMAXCONN > 4096 ? SOMAXCONN : 4096)) {
        fprintf(stderr, "incast server: %s: %s\n", listen_addr,
                strerror(errno));
        return 1;
    }

    /* Signals through signalfd, so the stats printout runs in the main loop
     * and never races with connection state. */
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGUSR2);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);

    srv.ep = epoll_create1(EPOLL_CLOEXEC);
    if (srv.ep < 0 || sfd < 0) {
        perror("incast server: epoll/signalfd");
        return 1;
    }
    ev.events = EPOLLIN;
    ev.data.ptr = &listen_tag;
    epoll_ctl(srv.ep, EPOLL_CTL_ADD, lfd, &ev);
    ev.data.ptr = &signal_tag;
    epoll_ctl(srv.ep, EPOLL_CTL_ADD, sfd, &ev);

    srv.n_conns_max = 1024;
    srv.conns = calloc(srv.n_conns_max, sizeof *srv.conns);
    srv.base_timeouts = proc_counter("/proc/net/netstat", "TcpExt:",
                                     "TCPTimeouts");
    srv.base_retrans = proc_counter("/proc/net/snmp", "Tcp:", "RetransSegs");
    fprintf(stderr, "incast server: listening on %s\n", listen_addr);

    for (;;) {
        struct epoll_event evs[256];
        int i, n;

        n = epoll_wait(srv.ep, evs, 256, periodic ? 1000 : -1);
        if (n < 0 && errno != EINTR) {
            perror("incast server: epoll_wait");
            return 1;
        }
        bool reset = false;

        for (i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;

            if (p == &listen_tag) {
                do_accept(lfd);
            } else if (p == &signal_tag) {
                struct signalfd_siginfo si;

                while (read(sfd, &si, sizeof si) == sizeof si) {
                    if (si.ssi_signo == SIGUSR2) {
                        /* After this batch: later events of it may be of
                         * the connections it closes. */
                        reset = true;
                        continue;
                    }
                    print_stats();
                    if (si.ssi_signo != SIGUSR1) {
                        return 0;
                    }
                }
            } else {
                conn_event(p, evs[i].events);
            }
        }
        if (reset) {
            reset_all();
        }
        if (periodic && now_ns() - last_print >= 1000000000ULL
            && srv.requests != last_requests) {
            last_print = now_ns();
            last_requests = srv.requests;
            print_stats();
        }
    }
}
