/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef PAC_H
#define PAC_H 1

/* libpac: Proactive ACK Control (Bai et al., "PAC: Taming TCP Incast
 * Congestion using Proactive ACK Control", ICNP 2014) as a plain C library.
 *
 * One 'struct pac' instance guards one receiver (one VM port).  The caller
 * feeds it:
 *
 *   - pac_rx(): every TCP segment travelling toward the receiver (data from
 *     the network).  It lowers the in-flight estimate (paper eq. 5), learns
 *     per-flow state and may release held packets.
 *
 *   - pac_tx(): every TCP segment leaving the receiver (its ACKs and
 *     requests).  PAC either lets it pass at once or holds it; a held packet
 *     is owned by PAC until it is handed back through the emit callback.
 *
 *   - pac_run(): timers (max_hold, control interval, idle flows), at or after
 *     pac_next_wakeup().
 *
 * Held packets are opaque pointers to the caller ('void *pkt'); PAC never
 * looks inside them.  Every held packet comes back through the emit callback
 * exactly once: PAC_EMIT_RELEASE (send it now) or PAC_EMIT_DROP_STALE (a
 * stale ACK the paper drops, section III-D; free it).  pac_destroy() releases
 * whatever is still held.
 *
 * Time is always passed in by the caller, in microseconds from any fixed
 * origin; libpac never reads a clock.  Nothing is allocated after
 * pac_create().  An instance is not thread-safe: the caller serialises calls
 * (one lock per instance).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pac-parse.h"

#define PAC_VERSION_STRING "0.1.0"

/* Returns libpac's version, e.g. "0.1.0". */
const char *pac_version(void);

#define PAC_MAX_LEVELS 8

/* Configuration.  pac_config_init() fills in the defaults (in brackets). */
/* What bounds the data toward the receiver (struct pac_config's 'policy'). */
enum pac_policy {
    /* PAC: hold the receiver's ACKs so that the data they trigger fits the
     * threshold (the paper), with the window clamp. */
    PAC_POLICY_PAC,
    /* The receiver-window peer (ICTCP / AC/DC TCP style): hold nothing,
     * lower each connection's advertised window to its share of the
     * threshold, threshold / connections, at least PAC_RWND_MIN_SEGS
     * segments (pac-window.c).  For comparison with PAC on the same
     * datapath. */
    PAC_POLICY_RWND,
    /* RDTCP's centralized scheduler (Ren et al.): the receiver-window
     * share of PAC_POLICY_RWND on every connection, and the receiver's
     * ACKs held in one first-come queue while the windows they open would
     * exceed the threshold.  A window trigger counts the connection's
     * whole share and an ACK only the bytes it acknowledges (an RDTCP
     * sender takes the receiver's window as its congestion window); no
     * flow priority (one MLFQ level whatever 'n_levels' says), no
     * threshold control.  For comparison with PAC on the same datapath
     * (docs/libpac.md lists the departures from the paper). */
    PAC_POLICY_RDTCP,
    PAC_N_POLICIES
};

struct pac_config {
    /* Switch buffer in front of the receiver, in bytes: the initial and
     * maximum in-flight threshold (paper section III-B).  [96000] */
    uint32_t threshold;

    /* An enum pac_policy.  [PAC_POLICY_PAC] */
    uint32_t policy;

    /* MLFQ: number of priority levels (1..8) and the received-bytes
     * thresholds at which a flow is demoted to the next level (n_levels - 1
     * strictly increasing values).  [2 levels, 20000 bytes: paper Table I] */
    uint32_t n_levels;
    uint32_t level_bytes[PAC_MAX_LEVELS - 1];

    /* React to ECN CE marks: threshold control (eq. 2) and congestion-
     * avoidance inference.  [true] */
    bool ecn;

    /* Longest time a flow goes without an ACK while PAC holds its ACKs, in
     * microseconds (measured from when the oldest held packet became the
     * flow's head: the peer's retransmission timer re-arms on every ACK of
     * new data).  Keep it well under the guests' RTOmin (200 ms on
     * Linux).  [20000] */
    uint32_t max_hold_us;

    /* Time after which a window trigger to an idle peer (a request or a
     * SYN-ACK) at its flow's head goes out ahead of its turn, as soon as
     * its window fits, in microseconds.  Holding such a segment delays only
     * the peer's start, not a running sender, so it may wait much longer
     * than an ACK: in a large incast the last request goes out only when
     * the earlier answers have drained.  [1000000] */
    uint32_t max_hold_trigger_us;

    /* Time after which a held segment carrying the receiver's data also
     * goes out at once as a copy, in microseconds; 0 turns it off.  A
     * request that PAC expects to wait that long in all (the answers of
     * the window triggers held ahead of it, at the receive rate measured)
     * is copied as soon as it is held.  The peer acknowledges the copy,
     * which stops the receiver's retransmission timer, and the held
     * segment still goes at its turn.
     * A copy gives the peer nothing more to send (docs/libpac.md): a
     * request at its flow's head is copied with a window that ends where
     * the data the peer sent ends (closed for an idle peer), or with an
     * old ACK number while an answer is still due; data queued behind
     * other held segments of its flow is copied with an old ACK number
     * (the newest, and a closed window, to a peer none of whose data has
     * been acknowledged, which would drop an old one).
     * A held request that data passes goes as an ACK instead, under
     * max_hold_us.  So data may wait its turn longer than the receiver's
     * RTO without timing the receiver out.  Once the receiver has sent a
     * held request again (its timer ran out), requests are copied after
     * half the least wait at which it did, if that is less.  The default
     * is under an RTOmin of 5 ms.
     * Needs a caller that copies packets (pac_set_copy_cb()).  [3000] */
    uint32_t request_copy_us;

    /* The part of the threshold, in bytes, that only new connections may
     * fill: a connection is new until it has received that many bytes (a
     * handshake, a short exchange, the first window of a longer one).
     * Everything else fits under the threshold less this reserve; new
     * connections' segments fit under the whole threshold, and go ahead
     * of a head that waits for room.  So a short flow that starts during
     * an incast waits for room of its own, not for the incast's budget to
     * drain.  At most a quarter of the threshold counts; 0 turns it off.
     * [16384] */
    uint32_t new_flow_reserve;

    /* Flow table capacity.  [16384] */
    uint32_t max_flows;

    /* Most packets held at once; over the cap, the flow head that waited
     * longest is released (never dropped).  [65536] */
    uint32_t max_held;

    /* Most IP bytes of the packets held at once: with TSO a held packet
     * may be up to 64 KB, so the count cap alone does not bound the memory
     * a port's traffic can keep out of its buffer pool.  Over it, like
     * over max_held, the flow head that waited longest is released (never
     * dropped) until the packet to hold fits.  [33554432: 32 MiB] */
    uint32_t max_held_bytes;

    /* A flow with no packet in either direction for this long is forgotten
     * (paper: 5 minutes).  At most 30 minutes.  [300000] */
    uint32_t idle_timeout_ms;

    /* Initial window of an idle peer, in segments: the trigger of a request
     * or a SYN-ACK before anything is learned.  [10] */
    uint32_t init_window_segs;

    /* MSS assumed until a SYN's MSS option is seen.  [1460] */
    uint32_t default_mss;

    /* RTT assumed before any handshake is measured, microseconds.  [100] */
    uint32_t base_rtt_us;

    /* Lower the receive window of the receiver's segments to the whole
     * segments whose frames 'threshold' bytes hold, once a flow's handshake
     * showed its window scale.  A peer may then never have more than the
     * switch buffer outstanding, however far its congestion window grew:
     * without it, one window trigger to a warm peer can release more than
     * the buffer holds, which no holding of ACKs can take back.  [true] */
    bool clamp_window;

    /* Lambda of section III-C, in thousandths.  [800] */
    uint32_t lambda_permille;

    /* The paper's deviation correction, eq. (6): a control interval whose
     * receive rate falls to lambda of the smoothed rate scales in_flight
     * down with it.  Off by default: where PAC's control interval is tens
     * of microseconds (a PMD thread), the rate of one interval is mostly
     * the datapath's batching, and the correction takes the budgets of data
     * still queued in the switch (docs/libpac.md, "Why these defaults").
     * Dry flows give their budgets back without it.  [false] */
    bool deviation_correction;

    /* Lowest the loss cap takes the threshold, in thousandths of
     * 'threshold': each control interval in which data arrives past a gap
     * in its connection (a drop upstream) lowers the threshold's ceiling by
     * 1/16 of 'threshold', down to this; it grows back one MSS per second
     * without loss.  1000 turns the loss cap off.  [775] */
    uint32_t loss_floor_permille;

    /* Seed for the flow hash's keys; 0 draws a random one per instance
     * (getrandom(), once, in pac_create()), so that no peer can aim its
     * connections at one hash chain.  A test or a model that wants the
     * same table layout on every run sets one.  [0] */
    uint64_t hash_seed;

    /* The fast path (lib/pac-watch.c): while no burst of window triggers
     * announces an incast, PAC tracks no connection and the caller passes
     * every segment at once, telling PAC only what pac_watch_rx() and
     * pac_watch_tx() take.  PAC starts tracking when the initial windows
     * that the receiver's recent requests and SYN-ACKs may bring, or
     * answers under way together growing in slow start, reach half the
     * threshold, and stops once it has held nothing and had little in
     * flight for a while, keeping the connections it knows (MSS, window
     * scales) but not their sequence numbers.
     * [true] */
    bool fast_path;
};

/* Fills 'cfg' with the defaults. */
void pac_config_init(struct pac_config *cfg);

/* Checks 'cfg'.  Returns true if it is usable.  Otherwise returns false and
 * writes a message naming the offending field into 'err' (if nonnull). */
bool pac_config_check(const struct pac_config *cfg,
                      char *err, size_t err_size);

/* Returns true if 'a' and 'b' configure the same behaviour: every knob of
 * pac_knobs[] (the used entries of level_bytes[] with n_levels) and
 * hash_seed. */
bool pac_config_equal(const struct pac_config *a, const struct pac_config *b);

/* Bytes that pac_create() will allocate for 'cfg'. */
size_t pac_memory_size(const struct pac_config *cfg);

/* Operator knobs (lib/pac-knobs.c): one row per member of struct pac_config
 * that an operator sets, with its name in Open vSwitch's PAC table, unit,
 * default and ranges.  pac_config_init(), pac_config_check() and
 * pac_config_equal() work from these rows, and so do ovs-vswitchd's parser
 * of the PAC table and "ovs-appctl pac/show".  hash_seed has no row. */
enum pac_knob_type {
    PAC_KNOB_U32,               /* A uint32_t member. */
    PAC_KNOB_BOOL,              /* A bool member. */
    PAC_KNOB_LEVELS,            /* n_levels and level_bytes[]: see below. */
    PAC_KNOB_ENUM,              /* A uint32_t member, 0 to 'max', each value
                                 * with its name in 'names'. */
};

/* Where a knob is in Open vSwitch's PAC table. */
enum pac_knob_where {
    PAC_KNOB_COLUMN,            /* A column of its own. */
    PAC_KNOB_OTHER_CONFIG,      /* A key of the other_config column. */
};

struct pac_knob {
    const char *name;           /* Column name or other_config key. */
    enum pac_knob_where where;
    enum pac_knob_type type;
    const char *field;          /* The struct pac_config member, as
                                 * pac_config_check()'s messages name it. */
    size_t offset;              /* offsetof(struct pac_config, field). */
    const char *unit;
    uint32_t def;               /* Default (0 or 1 for a bool). */
    uint32_t min, max;          /* pac_config_check()'s range. */
    uint32_t db_min, db_max;    /* The range the database gives it: the
                                 * schema's for a column, the range that
                                 * ovs-vswitchd parses for an other_config
                                 * key.  Within [min, max]. */
    const char *doc;            /* One line. */
    const char *const *names;   /* PAC_KNOB_ENUM: the name of each value,
                                 * 0 to 'max'; otherwise NULL. */
    uint32_t value_min, value_max;  /* PAC_KNOB_LEVELS: the range of each
                                     * level's bytes; otherwise 0. */
};

/* The PAC_KNOB_LEVELS row is the column mlfq_thresholds, a map from level
 * number (1, 2, ...) to the received bytes at which a flow reaches that
 * level.  Its 'field' is n_levels (the map's size plus one), 'min' and 'max'
 * bound n_levels, 'db_min' and 'db_max' bound the level numbers (so the map
 * has at most 'db_max' entries, numbered 1 to their number without gaps),
 * and the default is the map {1=def}: two levels.  Byte counts
 * (level_bytes[]) are 'value_min' to 'value_max' and strictly increase with
 * the level (a rule of pac_rules[], below), for libpac and the database
 * alike. */

/* The rows, in the order of the PAC table's documentation. */
extern const struct pac_knob pac_knobs[];
extern const size_t pac_n_knobs;

/* Returns the knob named 'name' (a column name or other_config key), or
 * NULL. */
const struct pac_knob *pac_knob_find(const char *name);

/* The value of 'knob' in 'cfg' (a bool as 0 or 1; n_levels for the
 * PAC_KNOB_LEVELS row). */
uint32_t pac_knob_get(const struct pac_config *cfg,
                      const struct pac_knob *knob);

/* The value of PAC_KNOB_ENUM 'knob' named 'name', or -1 if none is. */
int pac_knob_enum_value(const struct pac_knob *knob, const char *name);

/* Parses 'text' as a value of 'knob', as an operator writes it: "true" or
 * "false" for a bool, one of 'names' for an enum, a decimal integer within
 * [db_min, db_max] otherwise.  Returns true and stores the value (a bool as
 * 0 or 1) in '*value', or returns false and writes into 'err' (if nonnull)
 * why not, e.g. "\"fast\" is not pac, rwnd or rdtcp", without the knob's
 * name, for the caller to prefix with where the text came from.  Not for
 * the PAC_KNOB_LEVELS row, which is a map (false, "is a map"). */
bool pac_knob_parse(const struct pac_knob *knob, const char *text,
                    uint32_t *value, char *err, size_t err_size);

/* Sets 'knob' in 'cfg' to 'value' (a bool to 'value' != 0).  Not for the
 * PAC_KNOB_LEVELS row. */
void pac_knob_set(struct pac_config *cfg, const struct pac_knob *knob,
                  uint32_t value);

/* Sets the levels of 'cfg' (n_levels and level_bytes[]) from the map that
 * the PAC_KNOB_LEVELS row 'knob' is in the database: 'n' entries, level
 * 'levels[i]' at 'bytes[i]' bytes, in any order.  An empty map keeps 'cfg''s
 * levels.  Checks what the map can get wrong, in this order: at most
 * 'db_max' entries, levels 1 to 'n' without gaps, each byte count within
 * 'value_min' and 'value_max', and the rules of pac_rules[] on 'knob'
 * (pac_rule_check()).  Returns true, or false with the reason in 'err' (if
 * nonnull), e.g. "levels must be 1 to 2 without gaps (level 2 is missing)",
 * without the knob's name, as pac_knob_parse() does.  'cfg' may then hold
 * part of the map. */
bool pac_knob_parse_levels(const struct pac_knob *knob,
                           const int64_t levels[], const int64_t bytes[],
                           size_t n, struct pac_config *cfg,
                           char *err, size_t err_size);

/* Rules between values, beyond each knob's own range.  pac_config_check()
 * enforces every rule (after the ranges), pac_knob_parse_levels() the rules
 * of its knob, both in the words of the rule's 'message'.  tools/pac-knobs-dump
 * prints the rules with the knobs, so that ovs-pac-agent applies each by its
 * kind and says the same words. */
enum pac_rule_kind {
    /* The byte counts of PAC_KNOB_LEVELS knob 'knob' strictly increase with
     * the level: level_bytes[i] > level_bytes[i - 1] for the levels in use.
     * 'message' is a printf format of four uint32_t: a level, its bytes, the
     * next level and its bytes, for the first pair out of order. */
    PAC_RULE_INCREASING,
};

struct pac_rule {
    const char *name;           /* Unique, e.g. "mlfq-increasing". */
    enum pac_rule_kind kind;
    const char *knob;           /* The name of its pac_knobs[] row. */
    const char *message;        /* Why a configuration breaks it: see the
                                 * kind. */
    const char *doc;            /* One line. */
};

extern const struct pac_rule pac_rules[];
extern const size_t pac_n_rules;

/* Returns true if 'cfg' follows 'rule'.  Otherwise returns false and writes
 * the rule's message, without a field or knob name, into 'err' (if
 * nonnull). */
bool pac_rule_check(const struct pac_rule *rule, const struct pac_config *cfg,
                    char *err, size_t err_size);

struct pac;

/* Creates an instance.  Returns NULL if 'cfg' fails pac_config_check() or
 * memory is short. */
struct pac *pac_create(const struct pac_config *cfg, uint64_t now_us);

/* Why a held packet comes back. */
enum pac_emit {
    PAC_EMIT_RELEASE,           /* Send it (it is a held packet's turn). */
    PAC_EMIT_DROP_STALE,        /* A superseded stale ACK: free it. */
};

typedef void pac_emit_cb(void *aux, void *pkt, enum pac_emit emit);

/* What a copy of a held packet changes in it (pac_copy_cb). */
struct pac_copy {
    uint32_t ack;               /* ACK number to write. */
    uint16_t window;            /* Raw window field to write. */
    const void *tsval_from;     /* A held packet whose TCP timestamp value
                                 * the copy takes (if both carry the
                                 * option), or NULL: the copy keeps its
                                 * own. */
};

/* Sends a copy of held packet 'pkt' now, with the ACK number, window and
 * timestamp value that 'copy' gives and its checksum updated to match;
 * 'pkt' stays held.  'aux' is the one given to the call during which PAC
 * asks (pac_run(), pac_batch_end()). */
typedef void pac_copy_cb(void *aux, void *pkt, const struct pac_copy *copy);

/* Lets PAC send copies of long-held data segments through 'copy' (see
 * request_copy_us); NULL, the default, turns that off. */
void pac_set_copy_cb(struct pac *pac, pac_copy_cb *copy);

/* Releases every held packet (in per-flow order) through 'emit', then frees
 * the instance.  'pac' may be NULL. */
void pac_destroy(struct pac *pac, pac_emit_cb *emit, void *aux);

/* Releases every held packet (in per-flow order) but keeps flow state. */
void pac_flush(struct pac *pac, pac_emit_cb *emit, void *aux);

/* A segment toward the receiver.  'seg' is the parsed segment.  May release
 * held packets through 'emit'. */
void pac_rx(struct pac *pac, const struct pac_segment *seg, uint64_t now_us,
            pac_emit_cb *emit, void *aux);

enum pac_verdict {
    PAC_PASS,                   /* Send 'pkt' now (after anything emitted). */
    PAC_HELD,                   /* PAC owns 'pkt' until it emits it. */
};

/* A segment leaving the receiver; 'pkt' is the caller's handle for it.
 * Before returning, PAC may emit earlier held packets (so that a flow is
 * never reordered, they must be sent before 'pkt' if it passes).  'pkt'
 * itself is never emitted during this call: it is either passed or held.
 *
 * With clamp_window, PAC may lower the segment's window: it then sets
 * 'seg->window_clamped' and writes the new raw field into 'seg->window',
 * and the caller writes that into 'pkt' before 'pkt' is sent. */
enum pac_verdict pac_tx(struct pac *pac, struct pac_segment *seg,
                        void *pkt, uint64_t now_us,
                        pac_emit_cb *emit, void *aux);

/* A segment leaving the receiver that the caller could not parse (a TCP
 * fragment, a truncated or malformed TCP header or options: a status of
 * pac_parse_*() other than PAC_PARSE_OK and PAC_PARSE_NOT_TCP) and sends on
 * as it is.  So that it overtakes none of its connection's held segments,
 * PAC first releases them, in order, through 'emit': with 'seg' as the
 * parser left it, those of its connection if the parser read its ports,
 * every held packet otherwise (a fragment after the first carries no
 * ports).  They count as released by a flush.  Only a receiver that sends
 * such segments loses PAC's holding by them. */
void pac_tx_unparsed(struct pac *pac, const struct pac_segment *seg,
                     pac_emit_cb *emit, void *aux);

/* Bursts.  A datapath that handles packets in bursts brackets each burst
 * with pac_batch_begin() and pac_batch_end().  In between, pac_rx() and
 * pac_tx() update flow state, in-flight and the queues as usual but do not
 * run the scheduler; pac_batch_end() runs it once for the whole burst.
 *
 * What a burst releases leaves after the burst anyway (the datapath sends
 * its output batch when the burst is done), so deferring the decisions to
 * its end changes no departure time; it saves a scheduler pass per packet,
 * most of which, in the steady state of an incast, find that nothing fits.
 * What differs, within a burst: a segment that pac_tx() would have held
 * and released at once is PAC_HELD and comes back through 'emit' from
 * pac_batch_end(), so it may follow segments of other flows that passed
 * later in the burst (a flow's own segments stay in order); and data is
 * not credited to triggers still queued in the burst (they have not left).
 * Bursts do not nest; pac_run() may not be called inside one. */
void pac_batch_begin(struct pac *pac);
void pac_batch_end(struct pac *pac, pac_emit_cb *emit, void *aux);

/* Optional, for a burst: the 'n' segments in 'segs', all for pac_rx() if
 * 'rx' or all for pac_tx() otherwise, are about to be passed to it.  Hashes
 * their flows' keys (kept in each segment) and prefetches their entries of
 * the flow table, so that these cache misses overlap instead of following
 * one another, packet after packet.  Changes no decision. */
void pac_prefetch(const struct pac *pac, struct pac_segment *const segs[],
                  size_t n, bool rx);

/* The fast path (struct pac_config's 'fast_path').
 *
 * pac_tracking() tells whether PAC tracks connections now: then every
 * segment goes to pac_rx() and pac_tx() as usual.  While it returns false,
 * the caller passes every segment at once, untouched (no held packet, no
 * window clamp), and calls instead, for each segment:
 *
 *   - with SYN set, either way (rare: the caller may parse it whole):
 *     pac_watch_syn(), which notes the connection's MSS and window scales,
 *     so that the window clamp works on it once PAC tracks;
 *
 *   - toward the receiver: pac_watch_rx() with its TCP payload length;
 *
 *   - from the receiver: pac_watch_tx() with its TCP flags and payload
 *     length.
 *
 * If pac_watch_tx() or pac_watch_syn() returns true, PAC tracks from this
 * segment on: the caller hands this segment, and every one after it, to
 * pac_tx() (and pac_rx()) instead.  Connections whose sequence numbers PAC
 * has not followed are then picked up from their next segments, as after
 * an eviction.  pac_run() ends tracking. */
bool pac_tracking(const struct pac *pac);
bool pac_watch_syn(struct pac *pac, const struct pac_segment *seg, bool rx,
                   uint64_t now_us);
void pac_watch_rx(struct pac *pac, uint32_t payload, uint64_t now_us);
bool pac_watch_tx(struct pac *pac, uint8_t tcp_flags, uint32_t payload,
                  uint64_t now_us);

/* Runs timers due at 'now_us': max_hold releases, control-interval updates,
 * idle flow expiry, the end of tracking (fast path).  May emit. */
void pac_run(struct pac *pac, uint64_t now_us, pac_emit_cb *emit, void *aux);

/* Returns when pac_run() next has something to do (UINT64_MAX: nothing until
 * the next packet). */
uint64_t pac_next_wakeup(const struct pac *pac);

/* Why packets were released. */
enum pac_release_cause {
    PAC_REL_FIT,                /* In-flight + trigger fits the threshold. */
    PAC_REL_MAX_HOLD,           /* Held for max_hold_us. */
    PAC_REL_CAP,                /* Held-packet cap reached. */
    PAC_REL_FLUSH,              /* Flush, destroy, or flow reset/eviction. */
    PAC_N_REL_CAUSES
};

/* Instance statistics. */
struct pac_stats {
    uint64_t in_flight;             /* Estimated bytes in flight. */
    uint64_t threshold;             /* Current threshold, bytes. */
    uint32_t alpha_permille;        /* Last interval's CE fraction. */
    uint32_t control_interval_us;   /* Current control interval. */
    uint32_t avg_rtt_us;            /* Average base RTT + PAC delay. */
    uint32_t late_us;               /* Longest delivery delay seen:
                                     * silences shorter than this are not
                                     * taken as silence. */
    uint32_t flows;                 /* Flows in the table. */
    uint32_t held;                  /* Packets held now, all levels. */
    uint32_t held_per_level[PAC_MAX_LEVELS];
    uint32_t max_held_seen;         /* High-water mark of 'held'. */
    uint64_t held_bytes;            /* IP bytes of the held packets. */
    uint64_t released_bytes_cap;    /* Of released[PAC_REL_CAP], those
                                     * released because max_held_bytes
                                     * were held. */

    uint64_t rx_packets;            /* Segments seen toward the receiver. */
    uint64_t rx_bytes;              /* Their TCP payload. */
    uint64_t rx_ce;                 /* Of those, CE-marked. */
    uint64_t rx_holes;              /* Of those, past a gap in their flow's
                                     * data: a loss upstream. */
    uint64_t tx_packets;            /* Segments seen from the receiver. */
    uint64_t tx_passed;             /* Passed at once. */
    uint64_t tx_held;               /* Held (ever). */
    uint64_t released[PAC_N_REL_CAUSES];
    uint64_t stale_drops;           /* Stale ACKs dropped (III-D). */
    uint64_t stale_events;          /* Stale-ACK detections. */
    uint64_t corrections;           /* Deviation corrections (eq. 6). */
    uint64_t silence_resets;        /* In-flight reset after silence. */
    uint64_t request_copies;        /* Copies of held data segments sent
                                     * (request_copy_us): of requests at
                                     * their flow's head, and of data
                                     * queued behind held segments. */
    uint64_t vm_retransmits;        /* The receiver's retransmissions of a
                                     * request PAC held: its own timer or
                                     * tail loss probe ran out (a timeout
                                     * PAC caused). */
    uint64_t peer_retransmits;      /* Data a peer sent again while PAC
                                     * held the receiver's ACK of it: the
                                     * peer's timer ran out (a timeout, or a
                                     * tail loss probe, PAC caused). */
    uint32_t copy_delay_us;         /* The wait after which held requests
                                     * are copied now: request_copy_us, or
                                     * less after vm_retransmits. */
    uint64_t dry_reclaims;          /* Flows that left triggered data
                                     * unsent (answer complete). */
    uint64_t dry_bytes;             /* In-flight bytes so reclaimed. */
    uint64_t answer_ends;           /* Short segments that ended an answer:
                                     * the flow's unsent triggers reclaimed
                                     * at once. */
    uint64_t late_data;             /* Data that came after PAC had
                                     * stopped expecting it (delivery
                                     * delays: see late_us). */
    uint64_t dry_waits;             /* Dry times added to silences in the
                                     * middle of an answer (less of it
                                     * received than the larger of the
                                     * flow's last two answers). */
    uint64_t reclaims_undone;       /* Verdicts that a peer had sent all
                                     * (dry_reclaims, answer_ends) that
                                     * its next data proved wrong: the
                                     * reclaimed bytes counted again. */
    uint64_t windows_clamped;       /* Segments whose advertised window
                                     * PAC lowered (clamp_window). */
    uint64_t request_triggers;      /* Requests counted as a window. */
    uint64_t handshake_triggers;    /* SYN-ACKs counted as a window. */
    uint64_t handshakes_wasted;     /* Windows of connections the
                                     * receiver accepted that were given up
                                     * before the peer sent any data. */
    uint64_t handshakes_uncharged;  /* Window triggers of such connections
                                     * sent uncharged in a flood. */
    uint64_t handshakes_late_charged; /* Of those, charged a window when
                                       * the peer acknowledged the
                                       * SYN-ACK. */
    bool handshake_flood;           /* Such windows are mostly wasted now:
                                     * a flood (pac-handshake.c). */
    uint64_t flows_created;
    uint64_t flows_expired;         /* Idle timeout. */
    uint64_t flows_closed;          /* FIN/RST. */
    uint64_t evictions;             /* Table full: least recent evicted. */
    uint64_t untracked;             /* Table full, nothing evictable. */
    uint64_t chain_full;            /* New flows not tracked: their hash
                                     * chain held PAC_MAX_CHAIN flows. */
    bool tracking;                  /* pac_tracking() (fast path). */
    uint64_t tracking_starts;       /* Fast path: times PAC started and */
    uint64_t tracking_stops;        /* stopped tracking connections. */
    uint64_t fast_rx_packets;       /* Segments passed on the fast path, */
    uint64_t fast_tx_packets;       /* toward and from the receiver. */
    uint64_t rst_ignored;           /* RSTs toward the receiver whose
                                     * sequence number was not the one
                                     * expected: no flow state removed. */
};

void pac_get_stats(const struct pac *pac, struct pac_stats *stats);

/* One flow, for introspection.  "vm" is the receiver side. */
struct pac_flow_info {
    uint8_t vm_addr[16];
    uint8_t peer_addr[16];
    uint16_t vm_port;
    uint16_t peer_port;
    uint8_t level;              /* MLFQ level, 0 = highest priority. */
    bool slow_start;            /* Inferred phase. */
    uint16_t mss;
    uint32_t held;              /* Packets held now. */
    uint32_t rx_bytes;          /* Payload received (saturates). */
    uint32_t last_ack;          /* Last released ACK number. */
    uint32_t cwnd;              /* Modelled congestion window of the
                                 * peer, bytes. */
    uint32_t rtt_us;            /* Handshake RTT (0: not measured). */
    uint64_t idle_us;           /* Since the last packet. */
};

typedef void pac_flow_cb(void *aux, const struct pac_flow_info *info);

/* Calls 'cb' for every flow; returns the number of flows. */
size_t pac_dump_flows(const struct pac *pac, pac_flow_cb *cb, void *aux);

/* Returns a static name for 'cause', e.g. "max_hold". */
const char *pac_release_cause_name(enum pac_release_cause cause);

#endif /* pac.h */
