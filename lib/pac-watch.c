/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The fast path (cfg.fast_path): watching for an incast instead of tracking
 * every connection.
 *
 * An incast is the exception on a VM's port, and it announces itself: the
 * receiver sends a burst of window triggers (requests to idle peers, or
 * SYN-ACKs), each of which lets a peer's whole initial window loose at
 * once.  So while no such burst is under way, PAC tracks no connection:
 * the caller passes every segment untouched and tells PAC only the
 * segments' flags and payload (pac_watch_rx(), pac_watch_tx()), a few
 * instructions each.  PAC keeps one estimate, the payload that the
 * triggers passed in the last moments may still bring ('watch_est'):
 * each trigger adds an initial window (a SYN, its SYN-ACK's frame), data
 * toward the receiver takes its payload back (a SYN-ACK, its frame), and
 * a short segment, which ends an answer, takes back a whole initial window
 * besides (what is left of the answer's window will not come).  While two
 * initial windows or more, and a quarter of the threshold, are still to
 * come, answers are under way together, in slow start: their data adds its
 * payload instead (its ACK lets twice as much out), up to half the
 * threshold.  Tracking starts when the estimate reaches half the threshold
 * (PAC_WATCH_SHARE), at a trigger or at the receiver's next segment after
 * data made it grow.  The estimate so far becomes in_flight,
 * unattributed (no flow accounts for it), and every segment from the one
 * that started tracking on goes through pac_rx() and pac_tx().  Each flow's
 * first data then claims the rest of an initial window of it as its budget
 * (pac_note_first_data()); the data no flow asked for takes back the rest
 * (pac-budget.c).
 *
 * Segments with SYN set come to pac_watch_syn() (pac.c), which notes the
 * connection's MSS and window scales in its flow, marked PAC_F_RESYNC, and
 * no sequence state: the window clamp then works on the connection when
 * PAC tracks it, though PAC saw its handshake untracked.  A flow first seen
 * by its peer's data once PAC tracks takes that data's start for the
 * receiver's last ACK (pac_rx()), so that the receiver's first ACK counts
 * what it acknowledges.
 *
 * Tracking ends in pac_run(), once PAC has been quiet for PAC_WATCH_QUIET_US:
 * it held nothing and had at most a quarter of the threshold in flight.  It
 * then marks every flow PAC_F_RESYNC (pac_resync_flow(): its outstanding bytes
 * leave in_flight, its sequence state goes, its MSS and window scales stay), a
 * bounded chunk per pac_run() call (DESIGN section 12: work under the
 * instance's lock is bounded), and, once every flow is marked, returns to the
 * fast path.  The flows stay in the table, so that connections outlive quiet
 * spells, and leave it by the idle timeout as usual (pac_run() scans them
 * while PAC tracks none too).  When PAC tracks again, a marked flow's next
 * segment picks it up as one first seen mid-stream.  A packet held, or
 * in_flight above the bound, during the walk abandons it: the flows already
 * marked are picked up again from their next segments.  Nothing is held while
 * a flow is marked, so no held packet is lost or reordered.
 *
 * Without cfg.fast_path, PAC always tracks and nothing here runs. */

#include "pac-private.h"

/* Triggers older than this no longer count toward the burst: a peer's
 * answer begins within an RTT of its trigger (hundreds of microseconds in a
 * data centre, a few milliseconds with a busy host), and the data that
 * comes takes its bytes back from the estimate (pac_watch_rx()).  Triggers
 * spread wider than this are answered one after another, not at once, and
 * requests of steady traffic would otherwise add up forever. */
#define PAC_WATCH_HORIZON_US 5000

/* Tracking starts when the recent triggers' windows reach 1/PAC_WATCH_SHARE
 * of the threshold.  The triggers that passed untracked may bring up to
 * that much before PAC holds anything; the rest of the buffer is PAC's to
 * admit, as it admits any trigger, so the switch buffer never gets more
 * than the threshold in all.  Half, as the window clamp's share
 * (pac-window.c): one peer's burst, or a burst of peers', the buffer
 * absorbs whole. */
#define PAC_WATCH_SHARE 2

/* PAC is quiet while it holds nothing and has at most
 * 1/PAC_WATCH_QUIET_SHARE of the threshold in flight: what a few steady
 * connections keep in flight, far from an incast.  A quarter, because one
 * initial window must pass for quiet: under steady light traffic (a lone
 * request now and then), PAC counts the request's window until its answer
 * ends or goes dry, and an eighth of the default threshold (12 000 bytes)
 * is less than one window (14 600), so that a pac_run() in that window's
 * lifetime found PAC busy and tracking never ended.  No more than a
 * quarter, because what is still in flight when tracking ends and the
 * triggers that pass untracked before it starts again (under half,
 * PAC_WATCH_SHARE) must together stay under the threshold. */
#define PAC_WATCH_QUIET_SHARE 4

/* 1/QUIET_SHARE + 1/SHARE < 1. */
PAC_STATIC_ASSERT(PAC_WATCH_QUIET_SHARE + PAC_WATCH_SHARE
                  < PAC_WATCH_QUIET_SHARE * PAC_WATCH_SHARE,
                  "what is left in flight and the next burst fit");

/* Quiet this long ends tracking.  It is the longest control interval and
 * the longest drain time of a dry flow (PAC_MAX_INTERVAL_US): by then every
 * answer PAC budgeted has come or been given up, so taking the flows'
 * budgets back loses nothing that may still come.  An incast
 * application's rounds follow one another sooner than that and stay
 * tracked, with the loss cap PAC learned in the last round. */
#define PAC_WATCH_QUIET_US 100000

/* Flows marked per pac_run() call, and buckets of the flow table looked at per
 * call (4 bytes each), while tracking ends: a bounded piece of work under the
 * instance's lock (DESIGN section 12: at most 100 us at the configured
 * maxima), as sch_fq's garbage collection does a few flows per call.  A
 * bucket's chain (at most PAC_MAX_CHAIN flows) is marked whole, so a call
 * marks up to PAC_WATCH_MARK_CHUNK + PAC_MAX_CHAIN - 1. */
#define PAC_WATCH_MARK_CHUNK 256
#define PAC_WATCH_SCAN_CHUNK 16384

PAC_STATIC_ASSERT(PAC_WATCH_QUIET_US >= PAC_MAX_INTERVAL_US,
                  "tracking outlasts the longest drain time");

void
pac_watch_init(struct pac *pac)
{
    pac->tracking = !pac->cfg.fast_path;
    pac->watch_walking = false;
    pac->watch_cursor = 0;
    pac->n_resync = 0;
    pac->watch_est = 0;
    pac->watch_last_trigger = pac->now;
    pac->watch_quiet_since = pac->now;
    pac->watch_held_mark = 0;
}

bool
pac_tracking(const struct pac *pac)
{
    return pac->tracking;
}

/* Whether a segment of 'payload' bytes is shorter than a full one of the
 * default MSS: from the receiver, a request; toward it, the end of an
 * answer.  A full segment with TCP options (1448 bytes with Linux's
 * timestamps) is full, by the margin of PAC_MAX_TCP_OPTIONS; so is a
 * larger one (TSO, or a receive offload's merged segments). */
static bool
is_short(const struct pac *pac, uint32_t payload)
{
    return (payload
            && (uint64_t) payload + PAC_MAX_TCP_OPTIONS
               < pac->cfg.default_mss);
}

/* The estimate from which data toward the receiver makes it grow: two
 * initial windows still to come (answers under way together), and at least
 * half of what starts tracking (PAC_WATCH_SHARE), so that at a large
 * threshold a few answers together, which the buffer holds whatever their
 * windows do, grow nothing.  One answer alone, or answers that each come
 * before the next request, take their windows back: transfers whose
 * windows PAC leaves to TCP. */
static uint64_t
growth_floor(const struct pac *pac, uint32_t window)
{
    return MAX(2 * (uint64_t) window,
               pac->cfg.threshold / (2 * PAC_WATCH_SHARE));
}

/* Whether the last window trigger is older than the horizon: the estimate
 * no longer counts what the triggers before it brought. */
static bool
watch_expired(const struct pac *pac, uint64_t now_us)
{
    return (now_us > pac->watch_last_trigger
            && now_us - pac->watch_last_trigger > PAC_WATCH_HORIZON_US);
}

/* What a segment from the receiver with 'tcp_flags' and 'payload' bytes
 * may bring at once, as PAC counts it for a peer it knows nothing of
 * (pac-trigger.c), or 0 if it triggers nothing that counts:
 *
 *   - a window trigger, the receiver's SYN-ACK (a peer that opened a
 *     connection sends as soon as it is established) or data shorter than
 *     a full segment (a request: an idle peer answers with a whole
 *     window): an initial window of the default MSS;
 *
 *   - the receiver's SYN: its peer's SYN-ACK frame.  A frame is little,
 *     but the receiver opening a thousand connections at once gets a
 *     thousand SYN-ACKs at once (the paper's failure at 2 048 senders):
 *     untracked, such a storm overflowed the buffer of the 500 Mbit/s
 *     model at 1 024 senders, and 349 handshakes waited for their SYN's
 *     retransmission, a second.
 *
 * A bulk upload sends full segments, which trigger only bare ACKs.  An RST
 * triggers nothing. */
static uint32_t
trigger_bytes(const struct pac *pac, uint8_t tcp_flags, uint32_t payload)
{
    if (tcp_flags & PAC_TCP_RST) {
        return 0;
    } else if (((tcp_flags & PAC_TCP_SYN) && (tcp_flags & PAC_TCP_ACK))
               || is_short(pac, payload)) {
        return pac_init_window(pac, pac->cfg.default_mss);
    } else if (tcp_flags & PAC_TCP_SYN) {
        return PAC_SYNACK_FRAME;
    }
    return 0;
}

/* Starts tracking at 'now': 'est' bytes of the triggers that passed are
 * still to come. */
static void
watch_start(struct pac *pac, uint64_t now, uint64_t est)
{
    pac->tracking = true;
    pac->stats.tracking_starts++;
    if (now > pac->now) {
        pac->now = now;
    }

    /* The passed triggers' data, which no flow accounts for: the data of
     * flows that asked for nothing takes it back (pac_credit_rx()). */
    pac->in_flight = est;
    pac->unattributed = est;
    pac->watch_est = 0;

    pac_control_restart(pac);
    /* The passed triggers are window releases in their turn: the silence
     * reset and eq. (6) give their answers a round trip, and the hold
     * bound of window triggers counts from here. */
    pac->last_window_release = pac->now;
    pac->last_trigger_turn = pac->now;

    pac->watch_walking = false;
    pac->watch_quiet_since = pac->now;
    pac->watch_held_mark = pac->stats.tx_held;
}

/* Notes a segment from the receiver with 'tcp_flags' and 'payload' bytes,
 * at 'now_us', while PAC tracks nothing.  Returns true if it starts
 * tracking (the caller hands the segment to pac_tx()); counts nothing
 * else. */
bool
pac_watch_note_tx(struct pac *pac, uint8_t tcp_flags, uint32_t payload,
                  uint64_t now_us)
{
    uint32_t trigger = trigger_bytes(pac, tcp_flags, payload);
    uint64_t est;

    if (watch_expired(pac, now_us)) {
        pac->watch_est = 0;
    }
    if (!trigger) {
        /* Answers in slow start may have brought the estimate to half the
         * threshold (pac_watch_note_rx()): the receiver's next segment,
         * its ACK of their data, starts tracking. */
        if (pac->watch_est < pac->cfg.threshold / PAC_WATCH_SHARE) {
            return false;
        }
        watch_start(pac, now_us, pac->watch_est);
        return true;
    }
    pac->watch_last_trigger = MAX(pac->watch_last_trigger, now_us);

    est = pac->watch_est + trigger;
    if (est < pac->cfg.threshold / PAC_WATCH_SHARE) {
        pac->watch_est = est;
        return false;
    }
    watch_start(pac, now_us, pac->watch_est);
    return true;
}

bool
pac_watch_tx(struct pac *pac, uint8_t tcp_flags, uint32_t payload,
             uint64_t now_us)
{
    if (pac->tracking || pac_watch_note_tx(pac, tcp_flags, payload, now_us)) {
        return true;
    }
    pac->stats.fast_tx_packets++;
    return false;
}

/* Takes what a segment toward the receiver with 'payload' bytes brings
 * out of the estimate: its payload and, if it is a SYN-ACK ('synack'), its
 * frame. */
void
pac_watch_note_rx(struct pac *pac, bool synack, uint32_t payload)
{
    uint64_t back = (uint64_t) payload + (synack ? PAC_SYNACK_FRAME : 0);
    uint32_t window = pac_init_window(pac, pac->cfg.default_mss);

    if (is_short(pac, payload)) {
        /* The end of an answer: its peer sends no more of the window its
         * trigger counted, whatever the answer's size.  Without this, an
         * answer smaller than the window left the rest in the estimate,
         * and a connection's small answers added up to an incast: 1 KB
         * answers to requests 1 ms apart, four requests. */
        back += window;
    } else if (payload && pac->watch_est >= growth_floor(pac, window)) {
        /* Answers under way together, which their peers send in slow
         * start (a peer restarts its window after idleness): the ACK of
         * this segment lets twice as much out, so what is still to come
         * grows by its payload, up to where the receiver's next segment
         * starts tracking (pac_watch_note_tx(), which also forgets the
         * estimate past the horizon).  Initial windows alone miss an
         * incast whose windows grow past the buffer: 32 answers of 64 KB,
         * 467 KB of initial windows, overflowed a 1.5 MB buffer at
         * 40 Gbit/s. */
        pac->watch_est = MIN(pac->watch_est + payload,
                             pac->cfg.threshold / PAC_WATCH_SHARE);
        return;
    }
    pac->watch_est -= MIN(pac->watch_est, back);
}

void
pac_watch_rx(struct pac *pac, uint32_t payload, uint64_t now_us)
{
    (void) now_us;
    if (pac->tracking) {
        return;
    }
    pac->stats.fast_rx_packets++;
    pac_watch_note_rx(pac, false, payload);
}

/* Whether PAC holds nothing and has little in flight now. */
static bool
watch_light(const struct pac *pac)
{
    return (!pac->n_held
            && pac->in_flight <= pac->cfg.threshold / PAC_WATCH_QUIET_SHARE);
}

/* Whether PAC is quiet: light now, and it held nothing since it last saw
 * otherwise. */
static bool
watch_quiet(const struct pac *pac)
{
    return watch_light(pac) && pac->stats.tx_held == pac->watch_held_mark;
}

/* Marks PAC_F_RESYNC up to about PAC_WATCH_MARK_CHUNK flows not yet marked,
 * looking at up to PAC_WATCH_SCAN_CHUNK buckets of the flow table from the
 * cursor on.  The cursor goes round: a flow that a segment picked up again
 * behind it during the walk (PAC still tracks) is marked on its next
 * round. */
static void
mark_some(struct pac *pac)
{
    uint32_t marked = 0;
    uint32_t looked = 0;

    while (pac->n_resync < pac->n_flows && marked < PAC_WATCH_MARK_CHUNK
           && looked < PAC_WATCH_SCAN_CHUNK) {
        for (uint32_t idx = pac->buckets[pac->watch_cursor]; idx != PAC_NONE;
             idx = pac->flows[idx].hash_next) {
            if (!(pac->flows[idx].flags & PAC_F_RESYNC)) {
                pac_resync_flow(pac, idx);
                marked++;
            }
        }
        pac->watch_cursor = (pac->watch_cursor + 1) & pac->bucket_mask;
        looked++;
    }
}

void
pac_watch_run(struct pac *pac)
{
    if (!pac->cfg.fast_path || !pac->tracking) {
        return;
    }
    if (!watch_quiet(pac)) {
        /* Busy, or a packet was held since the last look: the quiet spell
         * starts again, and a walk under way is abandoned. */
        pac->watch_quiet_since = pac->now;
        pac->watch_held_mark = pac->stats.tx_held;
        pac->watch_walking = false;
        return;
    }
    if (!pac->watch_walking) {
        if (pac->now - pac->watch_quiet_since < PAC_WATCH_QUIET_US) {
            return;
        }
        pac->watch_walking = true;
    }

    mark_some(pac);
    if (pac->n_resync == pac->n_flows) {
        /* Every flow's share is gone; what is left of in_flight belongs to
         * no flow (at most a quarter of the threshold, from triggers whose
         * answers had PAC_WATCH_QUIET_US to come), and nothing is held. */
        pac->in_flight = 0;
        pac->unattributed = 0;
        pac->watch_est = 0;
        pac->watch_walking = false;
        pac->tracking = false;
        pac->stats.tracking_stops++;
    }
}

uint64_t
pac_watch_wakeup(const struct pac *pac)
{
    if (!pac->cfg.fast_path || !pac->tracking) {
        return UINT64_MAX;
    } else if (pac->watch_walking) {
        return pac->now;        /* The next chunk. */
    } else if (watch_light(pac)) {
        /* Quiet by then, unless a packet was held meanwhile, which that
         * pac_run() sees and starts the spell again. */
        return pac->watch_quiet_since + PAC_WATCH_QUIET_US;
    }
    /* Busy: the control interval and the hold bounds bring pac_run(). */
    return UINT64_MAX;
}
