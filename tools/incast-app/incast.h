/*
 * incast: partition/aggregate traffic generator for the ovs-pac incast
 * testbed.  Shared definitions of the wire protocol, the payload pattern and
 * the kernel counters both modes use.
 */

#ifndef INCAST_H
#define INCAST_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Wire protocol (all integers big-endian).
 *
 * Request, client -> server, REQ_LEN bytes:
 *     u32 magic      REQ_MAGIC_DATA or REQ_MAGIC_STATS
 *     u32 round      round number, or request number with overlapping
 *                    requests (1-based; for STATS: any)
 *     u32 conn_id    client-wide connection index (seeds the pattern)
 *     u32 nbytes     size of the answer (DATA); 0 for STATS
 *
 * DATA answer: exactly 'nbytes' bytes of pattern_fill(seed(round, conn_id)).
 * STATS answer: STATS_LEN bytes, see struct incast_stats.
 *
 * Pacing, client -> server, REQ_LEN bytes, no answer: the connection's
 * later DATA answers are paced by Adaptive Pacing (see server.c):
 *     u32 magic      REQ_MAGIC_PACE
 *     u32 flows      concurrent flows into the bottleneck (AP's n)
 *     u32 buffer     the bottleneck's buffer, bytes (AP's B)
 *     u32 rate       the bottleneck's rate, Mbit/s (AP's C) */
#define REQ_MAGIC_DATA  0x494e4344u     /* "INCD" */
#define REQ_MAGIC_STATS 0x494e4353u     /* "INCS" */
#define REQ_MAGIC_PACE  0x494e4350u     /* "INCP" */
#define REQ_LEN 16

#define STATS_LEN 64

/* Sender-side counters, as seen by one server process. */
struct incast_stats {
    uint64_t netns_ino;       /* Inode of the server's network namespace, so
                               * the client can avoid double-counting
                               * netns-wide counters of co-located servers. */
    uint64_t netns_timeouts;  /* TcpExt TCPTimeouts of that netns. */
    uint64_t netns_retrans;   /* Tcp RetransSegs of that netns. */
    uint64_t sk_total_retrans;/* Sum of tcpi_total_retrans over this
                               * server's sockets (live + closed). */
    uint64_t sk_total_rto;    /* Sum of tcpi_total_rto over this server's
                               * sockets, or UINT64_MAX if the kernel is
                               * older than 6.7 and lacks the field. */
    uint64_t conns;           /* Live connections. */
    uint64_t requests;        /* DATA requests served. */
    uint64_t paced;           /* Writes of answer bytes that Adaptive Pacing
                               * paced (a finite SO_MAX_PACING_RATE). */
};

void put_u32(uint8_t *p, uint32_t v);
uint32_t get_u32(const uint8_t *p);
void stats_encode(const struct incast_stats *, uint8_t buf[STATS_LEN]);
void stats_decode(const uint8_t buf[STATS_LEN], struct incast_stats *);

uint64_t pattern_seed(uint32_t round, uint32_t conn_id);
void pattern_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t off);

/* Per-socket counters from TCP_INFO. */
struct sock_counters {
    uint32_t total_retrans;
    uint32_t total_rto;
    bool has_total_rto;
};
bool sock_counters_get(int fd, struct sock_counters *);

uint64_t proc_counter(const char *path, const char *prefix, const char *name);
uint64_t netns_inode(void);

int parse_addr(const char *s, bool passive, struct sockaddr_storage *ss,
               socklen_t *len);
int set_cc(int fd, const char *cc);
void raise_nofile(uint64_t want);
uint64_t now_ns(void);
int cmp_double(const void *, const void *);
double percentile(const double *sorted, int n, double p);

int server_main(int argc, char *argv[]);
int client_main(int argc, char *argv[]);
int rpc_main(int argc, char *argv[]);

#endif /* incast.h */
