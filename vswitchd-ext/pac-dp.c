/*
 * Copyright (c) 2026 ovs-pac authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

#include <config.h>

#include "pac-ext/pac-dp.h"

#include <errno.h>

#include "cmap.h"
#include "coverage.h"
#include "csum.h"
#include "dp-packet.h"
#include "hash.h"
#include "netlink.h"
#include "odp-netlink.h"
#include "openvswitch/hmap.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "pac.h"
#include "packets.h"
#include "timeval.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(pac_dp);

COVERAGE_DEFINE(pac_dp_held);
COVERAGE_DEFINE(pac_dp_released);
COVERAGE_DEFINE(pac_dp_stale_drop);
COVERAGE_DEFINE(pac_dp_not_tcp);
COVERAGE_DEFINE(pac_dp_bad_tcp);
COVERAGE_DEFINE(pac_dp_no_instance);
COVERAGE_DEFINE(pac_dp_no_slot);
COVERAGE_DEFINE(pac_dp_request_copy);
COVERAGE_DEFINE(pac_dp_out_handoff);
COVERAGE_DEFINE(pac_dp_out_source_break);

/* Interned nested actions of held packets.  Many held packets share one
 * list (the output to the uplink), so a held packet costs a reference, not
 * a copy, and steady state allocates nothing. */
struct pac_dp_actions {
    struct hmap_node node;      /* In the instance's 'actions'. */
    struct atomic_count refs;   /* Held or in-flight packets using it. */
    size_t len;
    uint64_t data[];            /* 'len' bytes of OVS_ACTION_ATTR_*. */
};

/* Keep at most this many unreferenced lists before sweeping them. */
#define PAC_DP_MAX_ACTIONS 1024

/* What a held packet needs to run later.  libpac's handle for it. */
struct pac_dp_slot {
    union {
        struct dp_packet *packet;       /* In use. */
        struct pac_dp_slot *next_free;  /* Free. */
    };
    struct pac_dp_actions *actions;
    uint8_t ip_version;
};

struct pac_dp {
    char *name;                     /* Datapath name, for logs. */
    struct ovs_mutex mutex;         /* Serialises set/del. */
    struct cmap instances;          /* pac_dp_instance by 'id'. */
    atomic_uint64_t next_wakeup_us; /* <= every instance's. */
};

/* Packets to send, in order.  An entry's actions are either a held
 * packet's interned list ('ref') or the action being executed.  A released
 * packet's entry may first hold only its 'slot' (see pac_dp_emit()). */
struct pac_dp_out_entry {
    struct dp_packet *packet;
    const struct nlattr *actions;
    size_t actions_len;
    struct pac_dp_actions *ref;     /* Unreferenced once sent, or NULL. */
    struct pac_dp_slot *slot;       /* Not read yet, or NULL. */
    uint8_t ip_version;
};

/* An out list's entries beyond its on-stack stub. */
struct pac_dp_out_heap {
    size_t allocated;
    struct pac_dp_out_entry entries[];
};

struct pac_dp_out {
    struct pac_dp_out_entry *entries;   /* 'stub' or heap->entries. */
    size_t n, allocated;
    struct pac_dp_out_heap *heap;       /* NULL while 'stub' is used. */
    struct pac_dp_out_entry stub[NETDEV_MAX_BURST * 2];
};

struct pac_dp_instance {
    struct cmap_node node;          /* In 'pac_dp->instances'. */
    uint32_t id;
    struct pac_config config;

    /* Held by the one thread that sends the instance's decisions, until
     * 'pending' is empty; only try-locked, while 'mutex' is held (see
     * pac_dp_out_finish()). */
    struct ovs_mutex out_mutex;

    struct ovs_mutex mutex;
    struct pac *pac OVS_GUARDED;
    /* Decided by threads that found 'out_mutex' taken, for the thread
     * holding it to send: one of 'hand_offs', the other being the list
     * that thread is sending (owned by 'out_mutex').  Both keep the array
     * they grew to, so that a hand-off allocates only when it is larger
     * than any before (pac_dp_out_finish()). */
    struct pac_dp_out *pending OVS_GUARDED;
    struct pac_dp_out hand_offs[2];
    bool dead OVS_GUARDED;          /* Deleted or replaced: pass all. */
    struct pac_dp_slot *slots OVS_GUARDED;      /* config.max_held + 1. */
    size_t n_slots;
    struct pac_dp_slot *free_slots OVS_GUARDED;
    struct hmap actions OVS_GUARDED;            /* pac_dp_actions. */

    atomic_uint64_t next_wakeup_us; /* pac_next_wakeup(), UINT64_MAX. */
};

/* Per thread: the largest out-list array this thread has used, kept for
 * its next out list that outgrows the stub (a flush, a burst of releases),
 * so that a thread allocates only when it meets a larger release than ever
 * before, not on every one.  Freed when the thread exits. */
DEFINE_PER_THREAD_MALLOCED_DATA(struct pac_dp_out_heap *, pac_dp_spare);

/* Out lists. */

/* Returns an array of at least 'n' entries: this thread's spare if it is
 * large enough, otherwise a new one. */
static struct pac_dp_out_heap *
pac_dp_heap_get(size_t n)
{
    struct pac_dp_out_heap *heap = pac_dp_spare_get();

    if (heap && heap->allocated >= n) {
        pac_dp_spare_set_unsafe(NULL);
        return heap;
    }
    heap = xmalloc(sizeof *heap + n * sizeof heap->entries[0]);
    heap->allocated = n;
    return heap;
}

/* Keeps 'heap' (may be NULL) as this thread's spare if it is larger than
 * the one kept; frees the smaller. */
static void
pac_dp_heap_put(struct pac_dp_out_heap *heap)
{
    struct pac_dp_out_heap *spare;

    if (!heap) {
        return;
    }
    spare = pac_dp_spare_get();
    if (!spare || spare->allocated < heap->allocated) {
        pac_dp_spare_set_unsafe(heap);
        heap = spare;
    }
    free(heap);
}

static void
pac_dp_out_init(struct pac_dp_out *out)
{
    out->entries = out->stub;
    out->n = 0;
    out->allocated = ARRAY_SIZE(out->stub);
    out->heap = NULL;
}

static void
pac_dp_out_destroy(struct pac_dp_out *out)
{
    pac_dp_heap_put(out->heap);
    out->heap = NULL;
}

static void
pac_dp_out_add(struct pac_dp_out *out, struct dp_packet *packet,
               const struct nlattr *actions, size_t actions_len,
               struct pac_dp_actions *ref, uint8_t ip_version)
{
    if (out->n >= out->allocated) {
        struct pac_dp_out_heap *heap = pac_dp_heap_get(out->allocated * 2);

        memcpy(heap->entries, out->entries, out->n * sizeof *out->entries);
        pac_dp_heap_put(out->heap);
        out->heap = heap;
        out->entries = heap->entries;
        out->allocated = heap->allocated;
    }
    out->entries[out->n++] = (struct pac_dp_out_entry) {
        packet, actions, actions_len, ref, NULL, ip_version,
    };
}

/* Whether 'a' and 'b' run the same actions: a passed packet's are the
 * datapath flow's, a released one's the interned copy, and both kinds
 * follow each other in one out list. */
static bool
pac_dp_same_actions(const struct pac_dp_out_entry *a,
                    const struct pac_dp_out_entry *b)
{
    return (a->actions_len == b->actions_len
            && (a->actions == b->actions
                || !memcmp(a->actions, b->actions, a->actions_len)));
}

/* Sends every entry of 'out' through 'exec', in order, in batches of
 * consecutive packets with the same actions, IP version and buffer source.
 *
 * netdev-dpdk decides from a batch's first packet whether to copy the batch
 * into mbufs, and dpif-netdev's output action, which gathers batches per
 * port, flushes when a batch's first packet has another source than what it
 * gathered.  So every batch must have one source.  The out-list mixes them: a
 * copy of a held request is malloc'd (pac_dp_copy()) where the held packets
 * it leaves with may be mbufs from a DPDK port, and a DPDK port that is
 * sent such a batch frees the copies as mbufs. */
static void
pac_dp_out_send(struct pac_dp_out *out, const struct pac_dp_exec *exec)
{
    struct dp_packet_batch batch;
    size_t i = 0;

    while (i < out->n) {
        const struct pac_dp_out_entry *first = &out->entries[i];
        size_t j;

        dp_packet_batch_init(&batch);
        for (j = i; j < out->n && !dp_packet_batch_is_full(&batch); j++) {
            const struct pac_dp_out_entry *e = &out->entries[j];

            ovs_assert(!e->slot);
            /* Against the previous entry: a run of released packets
             * shares one pointer, so memcmp() only where runs meet. */
            if (e->ip_version != first->ip_version
                || (j > i && !pac_dp_same_actions(e, e - 1))) {
                break;
            }
            if (e->packet->source != first->packet->source) {
                COVERAGE_INC(pac_dp_out_source_break);
                break;
            }
            dp_packet_batch_add(&batch, e->packet);
        }
        exec->run(exec->ctx, &batch, first->actions, first->actions_len);
        for (; i < j; i++) {
            if (out->entries[i].ref) {
                atomic_count_dec(&out->entries[i].ref->refs);
            }
        }
    }
    out->n = 0;
}

/* Interned actions. */

static struct pac_dp_actions *
pac_dp_actions_ref(struct pac_dp_instance *inst,
                   const struct nlattr *actions, size_t len)
    OVS_REQUIRES(inst->mutex)
{
    uint32_t hash = hash_bytes(actions, len, 0);
    struct pac_dp_actions *pa;

    HMAP_FOR_EACH_WITH_HASH (pa, node, hash, &inst->actions) {
        if (pa->len == len && !memcmp(pa->data, actions, len)) {
            atomic_count_inc(&pa->refs);
            return pa;
        }
    }

    if (hmap_count(&inst->actions) >= PAC_DP_MAX_ACTIONS) {
        struct pac_dp_actions *next;

        HMAP_FOR_EACH_SAFE (pa, next, node, &inst->actions) {
            if (!atomic_count_get(&pa->refs)) {
                hmap_remove(&inst->actions, &pa->node);
                free(pa);
            }
        }
    }

    pa = xmalloc(sizeof *pa + len);
    atomic_count_init(&pa->refs, 1);
    pa->len = len;
    memcpy(pa->data, actions, len);
    hmap_insert(&inst->actions, &pa->node, hash);
    return pa;
}

/* Sending.
 *
 * A thread that has decided about packets (under the instance's 'mutex')
 * sends them only if it can take the instance's 'out_mutex' at once;
 * otherwise it hands them to the thread holding 'out_mutex', which sends
 * them after its own, in the order they were decided.  So packets leave in
 * the order libpac decided, whichever threads are involved, and no thread
 * ever waits for another's sending: a flush of one VM's 65 536 held packets
 * does not stall the PMD thread of another port, and a PAC action nested in
 * the actions of a release (VM to VM on one host) cannot deadlock. */

/* Appends 'out' to 'inst''s pending list, for the thread that holds
 * 'out_mutex'.  A passed packet's actions are the datapath flow's, valid
 * only while this thread is in the datapath: they are interned. */
static void
pac_dp_out_hand_off(struct pac_dp_instance *inst, struct pac_dp_out *out)
    OVS_REQUIRES(inst->mutex)
{
    for (size_t i = 0; i < out->n; i++) {
        const struct pac_dp_out_entry *e = &out->entries[i];
        struct pac_dp_actions *ref = e->ref;

        ovs_assert(!e->slot);
        if (!ref) {
            ref = pac_dp_actions_ref(inst, e->actions, e->actions_len);
        }
        pac_dp_out_add(inst->pending, e->packet,
                       (const struct nlattr *) ref->data, ref->len, ref,
                       e->ip_version);
    }
    out->n = 0;
    COVERAGE_INC(pac_dp_out_handoff);
}

/* Sends 'out', which this thread decided under 'inst''s 'mutex' (held by
 * the caller), and then whatever other threads hand off meanwhile; or, if
 * another thread is sending, hands 'out' to it.  Drops 'mutex'. */
static void
pac_dp_out_finish(struct pac_dp_instance *inst, struct pac_dp_out *out,
                  const struct pac_dp_exec *exec)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    if (!out->n) {
        /* Anything pending has a thread sending it. */
        ovs_mutex_unlock(&inst->mutex);
        return;
    }
    if (ovs_mutex_trylock(&inst->out_mutex)) {
        pac_dp_out_hand_off(inst, out);
        ovs_mutex_unlock(&inst->mutex);
        return;
    }
    ovs_mutex_unlock(&inst->mutex);
    pac_dp_out_send(out, exec);

    for (;;) {
        struct pac_dp_out *pending;

        ovs_mutex_lock(&inst->mutex);
        pending = inst->pending;
        if (!pending->n) {
            /* Dropped under 'mutex': a thread that decides after this finds
             * 'out_mutex' free, one before it has handed off already. */
            ovs_mutex_unlock(&inst->out_mutex);
            ovs_mutex_unlock(&inst->mutex);
            return;
        }
        /* Hand-offs go to the other list (empty: sent last time) while
         * this thread sends 'pending'. */
        inst->pending = &inst->hand_offs[pending == &inst->hand_offs[0]];
        ovs_mutex_unlock(&inst->mutex);
        pac_dp_out_send(pending, exec);
    }
}

/* Instances. */

static struct pac_dp_instance *
pac_dp_lookup(const struct pac_dp *dp, uint32_t id)
{
    struct pac_dp_instance *inst;

    CMAP_FOR_EACH_WITH_HASH (inst, node, hash_int(id, 0), &dp->instances) {
        if (inst->id == id) {
            return inst;
        }
    }
    return NULL;
}

static void
pac_dp_lower_wakeup(atomic_uint64_t *wakeup, uint64_t when)
{
    uint64_t cur;

    atomic_read(wakeup, &cur);
    while (when < cur
           && !atomic_compare_exchange_weak(wakeup, &cur, when)) {
        continue;
    }
}

/* Publishes 'inst''s next deadline after libpac ran. */
static void
pac_dp_update_wakeup(struct pac_dp *dp, struct pac_dp_instance *inst)
    OVS_REQUIRES(inst->mutex)
{
    uint64_t when = pac_next_wakeup(inst->pac);

    atomic_store(&inst->next_wakeup_us, when);
    pac_dp_lower_wakeup(&dp->next_wakeup_us, when);
}

struct pac_dp_emit_ctx {
    struct pac_dp_instance *inst;
    struct pac_dp_out *out;

    /* If true, a released packet's slot is read by pac_dp_emit_finish(),
     * which must run before 'inst''s mutex is dropped.  A slot was last
     * written when its packet was held, so it is rarely in the cache; this
     * way its load overlaps libpac's next decisions instead of stalling. */
    bool defer;
    size_t n_resolved;              /* Entries of 'out' known to be read. */
};

static void
pac_dp_slot_free(struct pac_dp_instance *inst, struct pac_dp_slot *slot)
    OVS_REQUIRES(inst->mutex)
{
    slot->next_free = inst->free_slots;
    inst->free_slots = slot;
}

/* Fills out entry 'e' from the held packet in its slot, and frees the
 * slot. */
static void
pac_dp_out_fill(struct pac_dp_instance *inst, struct pac_dp_out_entry *e)
    OVS_REQUIRES(inst->mutex)
{
    struct pac_dp_slot *slot = e->slot;

    e->packet = slot->packet;
    e->actions = (const struct nlattr *) slot->actions->data;
    e->actions_len = slot->actions->len;
    e->ref = slot->actions;
    e->ip_version = slot->ip_version;
    e->slot = NULL;
    pac_dp_slot_free(inst, slot);
}

/* Fills in the out entries that pac_dp_emit() deferred. */
static void
pac_dp_emit_finish(struct pac_dp_emit_ctx *ctx)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct pac_dp_out *out = ctx->out;

    for (size_t i = ctx->n_resolved; i < out->n; i++) {
        if (out->entries[i].slot) {
            pac_dp_out_fill(ctx->inst, &out->entries[i]);
        }
    }
    ctx->n_resolved = out->n;
}

/* libpac hands back a held packet. */
static void
pac_dp_emit(void *ctx_, void *pkt, enum pac_emit emit)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct pac_dp_emit_ctx *ctx = ctx_;
    struct pac_dp_instance *inst = ctx->inst;
    struct pac_dp_slot *slot = pkt;

    if (emit == PAC_EMIT_RELEASE) {
        struct pac_dp_out_entry *e;

        COVERAGE_INC(pac_dp_released);
        pac_dp_out_add(ctx->out, NULL, NULL, 0, NULL, 0);
        e = &ctx->out->entries[ctx->out->n - 1];
        e->slot = slot;
        if (ctx->defer) {
            OVS_PREFETCH(slot);
        } else {
            pac_dp_out_fill(inst, e);
        }
    } else {
        COVERAGE_INC(pac_dp_stale_drop);
        dp_packet_delete(slot->packet);
        atomic_count_dec(&slot->actions->refs);
        pac_dp_slot_free(inst, slot);
    }
}

static void
pac_dp_instance_free(struct pac_dp_instance *inst)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct pac_dp_actions *pa;
    struct pac_dp_out out;
    struct pac_dp_emit_ctx ctx = { .inst = inst, .out = &out };

    /* Killed instances hold nothing; this only matters when the whole
     * datapath goes away with packets still held, and then there is no
     * port left to send them to. */
    pac_dp_out_init(&out);
    for (size_t i = 0; i < ARRAY_SIZE(inst->hand_offs); i++) {
        struct pac_dp_out *hand_off = &inst->hand_offs[i];

        for (size_t j = 0; j < hand_off->n; j++) {
            dp_packet_delete(hand_off->entries[j].packet);
        }
        pac_dp_out_destroy(hand_off);
    }
    pac_destroy(inst->pac, pac_dp_emit, &ctx);
    if (out.n) {
        VLOG_INFO("PAC instance %"PRIu32": datapath destroyed with %"PRIuSIZE
                  " held packets, freed", inst->id, out.n);
    }
    for (size_t i = 0; i < out.n; i++) {
        dp_packet_delete(out.entries[i].packet);
    }
    pac_dp_out_destroy(&out);

    HMAP_FOR_EACH_POP (pa, node, &inst->actions) {
        free(pa);
    }
    hmap_destroy(&inst->actions);
    free(inst->slots);
    ovs_mutex_destroy(&inst->mutex);
    ovs_mutex_destroy(&inst->out_mutex);
    free(inst);
}

static void pac_dp_copy(void *ctx_, void *pkt, const struct pac_copy *);

static struct pac_dp_instance *
pac_dp_instance_create(uint32_t id, const struct pac_config *config,
                       uint64_t now_us)
{
    struct pac_dp_instance *inst = xzalloc(sizeof *inst);
    struct pac *pac = pac_create(config, now_us);

    if (!pac) {
        free(inst);
        return NULL;
    }

    pac_set_copy_cb(pac, pac_dp_copy);
    inst->id = id;
    inst->config = *config;
    ovs_mutex_init(&inst->out_mutex);
    ovs_mutex_init(&inst->mutex);
    inst->pac = pac;
    /* One slot per packet libpac may hold, and one for the packet of the
     * pac_tx() call in progress: at the cap libpac makes room for it by
     * releasing a held one, whose slot is free only after the call. */
    inst->n_slots = config->max_held + 1;
    inst->slots = xcalloc(inst->n_slots, sizeof *inst->slots);
    for (size_t i = inst->n_slots; i-- > 0;) {
        inst->slots[i].next_free = inst->free_slots;
        inst->free_slots = &inst->slots[i];
    }
    hmap_init(&inst->actions);
    for (size_t i = 0; i < ARRAY_SIZE(inst->hand_offs); i++) {
        pac_dp_out_init(&inst->hand_offs[i]);
    }
    inst->pending = &inst->hand_offs[0];
    atomic_init(&inst->next_wakeup_us, pac_next_wakeup(pac));
    return inst;
}

/* Marks 'inst' dead and sends everything it holds, in per-flow order.
 * After this, threads that still find it pass packets untouched, and it is
 * freed once they are done (RCU). */
static void
pac_dp_instance_kill(struct pac_dp_instance *inst,
                     const struct pac_dp_exec *exec)
{
    struct pac_dp_out out;
    struct pac_dp_emit_ctx ctx = { .inst = inst, .out = &out };
    struct pac_stats stats;

    pac_dp_out_init(&out);
    ovs_mutex_lock(&inst->mutex);
    inst->dead = true;
    pac_get_stats(inst->pac, &stats);
    pac_flush(inst->pac, pac_dp_emit, &ctx);
    atomic_store(&inst->next_wakeup_us, UINT64_MAX);
    pac_dp_out_finish(inst, &out, exec);
    pac_dp_out_destroy(&out);

    VLOG_DBG("PAC instance %"PRIu32" stopped: released %"PRIu32" held "
             "packets", inst->id, stats.held);
    ovsrcu_postpone(pac_dp_instance_free, inst);
}

struct pac_dp *
pac_dp_create(const char *dp_name)
{
    struct pac_dp *dp = xzalloc(sizeof *dp);

    dp->name = xstrdup(dp_name);
    ovs_mutex_init(&dp->mutex);
    cmap_init(&dp->instances);
    atomic_init(&dp->next_wakeup_us, UINT64_MAX);
    return dp;
}

void
pac_dp_destroy(struct pac_dp *dp)
{
    struct pac_dp_instance *inst;

    if (!dp) {
        return;
    }
    CMAP_FOR_EACH (inst, node, &dp->instances) {
        cmap_remove(&dp->instances, &inst->node, hash_int(inst->id, 0));
        ovsrcu_postpone(pac_dp_instance_free, inst);
    }
    cmap_destroy(&dp->instances);
    ovs_mutex_destroy(&dp->mutex);
    free(dp->name);
    free(dp);
}

int
pac_dp_set(struct pac_dp *dp, uint32_t id, const struct pac_config *config,
           const struct pac_dp_exec *exec)
{
    struct pac_dp_instance *old, *inst;
    char err[128];

    if (!pac_config_check(config, err, sizeof err)) {
        VLOG_WARN("%s: PAC instance %"PRIu32": %s", dp->name, id, err);
        return EINVAL;
    }

    ovs_mutex_lock(&dp->mutex);
    old = pac_dp_lookup(dp, id);
    if (old && pac_config_equal(&old->config, config)) {
        ovs_mutex_unlock(&dp->mutex);
        return 0;
    }

    inst = pac_dp_instance_create(id, config, time_usec());
    if (!inst) {
        ovs_mutex_unlock(&dp->mutex);
        VLOG_WARN("%s: PAC instance %"PRIu32": out of memory (%"PRIuSIZE
                  " bytes)", dp->name, id, pac_memory_size(config));
        return ENOMEM;
    }
    if (old) {
        cmap_replace(&dp->instances, &old->node, &inst->node,
                     hash_int(id, 0));
    } else {
        cmap_insert(&dp->instances, &inst->node, hash_int(id, 0));
    }
    pac_dp_lower_wakeup(&dp->next_wakeup_us, pac_next_wakeup(inst->pac));
    ovs_mutex_unlock(&dp->mutex);

    if (old) {
        pac_dp_instance_kill(old, exec);
    }
    VLOG_DBG("%s: PAC instance %"PRIu32" %s", dp->name, id,
             old ? "reconfigured" : "created");
    return 0;
}

int
pac_dp_del(struct pac_dp *dp, uint32_t id, const struct pac_dp_exec *exec)
{
    struct pac_dp_instance *inst;

    ovs_mutex_lock(&dp->mutex);
    inst = pac_dp_lookup(dp, id);
    if (inst) {
        cmap_remove(&dp->instances, &inst->node, hash_int(id, 0));
    }
    ovs_mutex_unlock(&dp->mutex);

    if (!inst) {
        return ENOENT;
    }
    pac_dp_instance_kill(inst, exec);
    return 0;
}

int
pac_dp_get(struct pac_dp *dp, uint32_t id, struct pac_stats *stats,
           void (*flow_cb)(void *aux, const struct pac_flow_info *),
           void *aux)
{
    struct pac_dp_instance *inst = pac_dp_lookup(dp, id);

    if (!inst) {
        return ENOENT;
    }
    ovs_mutex_lock(&inst->mutex);
    pac_get_stats(inst->pac, stats);
    if (flow_cb) {
        pac_dump_flows(inst->pac, flow_cb, aux);
    }
    ovs_mutex_unlock(&inst->mutex);
    return 0;
}

/* Execution. */

static enum pac_parse_status
pac_dp_parse(const struct dp_packet *packet, struct pac_segment *seg)
{
    const uint8_t *l3 = dp_packet_l3(packet);

    if (l3) {
        const uint8_t *end = (const uint8_t *) dp_packet_tail(packet)
                             - dp_packet_l2_pad_size(packet);

        return pac_parse_ip(l3, end - l3, seg);
    }
    return pac_parse_eth(dp_packet_data(packet), dp_packet_size(packet),
                         seg);
}

/* The TCP header of 'packet', which pac_dp_parse() parsed into 'seg'. */
static struct tcp_header *
pac_dp_tcp_header(struct dp_packet *packet, const struct pac_segment *seg)
{
    uint8_t *base = dp_packet_l3(packet);

    if (!base) {
        base = dp_packet_data(packet);
    }
    return ALIGNED_CAST(struct tcp_header *, base + seg->l4_offset);
}

/* Writes the window that libpac chose for 'seg' into 'packet', which
 * pac_dp_parse() parsed into 'seg'.  A checksum that a NIC or the guest's
 * virtio will still complete holds no sum of the header yet, so it is left
 * alone; a complete one is updated (RFC 1624). */
static void
pac_dp_write_window(struct dp_packet *packet, const struct pac_segment *seg)
{
    struct tcp_header *tcp = pac_dp_tcp_header(packet, seg);
    ovs_be16 old, new;

    old = tcp->tcp_winsz;
    new = htons(seg->window);
    tcp->tcp_winsz = new;
    if (!dp_packet_hwol_tx_l4_checksum(packet)) {
        tcp->tcp_csum = recalc_csum16(tcp->tcp_csum, old, new);
    }
}

/* Writes 32-bit 'value' at 'offset' bytes into the TCP header of
 * 'packet', which pac_dp_parse() parsed into 'seg', and updates the
 * checksum as pac_dp_write_window() does.  'offset' is a multiple of 2
 * (the ACK number's, or a timestamp's after the options' usual NOPs), as
 * the incremental update needs; pac_dp_copy() checks a timestamp's. */
static void
pac_dp_write_be32(struct dp_packet *packet, const struct pac_segment *seg,
                  size_t offset, uint32_t value)
{
    struct tcp_header *tcp = pac_dp_tcp_header(packet, seg);
    ovs_be32 old, new = htonl(value);

    memcpy(&old, (uint8_t *) tcp + offset, sizeof old);
    memcpy((uint8_t *) tcp + offset, &new, sizeof new);
    if (!dp_packet_hwol_tx_l4_checksum(packet)) {
        tcp->tcp_csum = recalc_csum32(tcp->tcp_csum, old, new);
    }
}

/* libpac asks for a copy of held data (see request-copy-us), with the ACK
 * number, window and timestamp value it gives in 'how': the copy joins
 * the packets to send, with the held packet's actions, and the held packet
 * stays held.  One allocation per segment that waits that long, none on
 * the per-packet path. */
static void
pac_dp_copy(void *ctx_, void *pkt, const struct pac_copy *how)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct pac_dp_emit_ctx *ctx = ctx_;
    struct pac_dp_slot *slot = pkt;
    struct dp_packet *copy = dp_packet_clone(slot->packet);
    struct pac_segment seg;

    if (pac_dp_parse(copy, &seg) != PAC_PARSE_OK) {
        /* It parsed when it was held: cannot happen. */
        dp_packet_delete(copy);
        return;
    }
    pac_dp_write_be32(copy, &seg, offsetof(struct tcp_header, tcp_ack),
                      how->ack);
    seg.window = how->window;
    pac_dp_write_window(copy, &seg);
    if (how->tsval_from && seg.has_timestamp && !(seg.ts_offset % 2)) {
        const struct pac_dp_slot *from = how->tsval_from;
        struct pac_segment from_seg;

        if (pac_dp_parse(from->packet, &from_seg) == PAC_PARSE_OK
            && from_seg.has_timestamp) {
            pac_dp_write_be32(copy, &seg, seg.ts_offset, from_seg.tsval);
        }
    }
    COVERAGE_INC(pac_dp_request_copy);
    atomic_count_inc(&slot->actions->refs);
    pac_dp_out_add(ctx->out, copy,
                   (const struct nlattr *) slot->actions->data,
                   slot->actions->len, slot->actions, slot->ip_version);
}

/* pac_dp_parse(), with the packets that do not parse counted. */
static enum pac_parse_status
pac_dp_parse_counted(const struct dp_packet *packet, struct pac_segment *seg)
{
    enum pac_parse_status status = pac_dp_parse(packet, seg);

    if (status == PAC_PARSE_NOT_TCP) {
        COVERAGE_INC(pac_dp_not_tcp);
    } else if (status != PAC_PARSE_OK) {
        /* Fragments, truncated or malformed TCP: not ours to judge. */
        COVERAGE_INC(pac_dp_bad_tcp);
    }
    return status;
}

static bool
pac_dp_parse_ok(const struct dp_packet *packet, struct pac_segment *seg)
{
    return pac_dp_parse_counted(packet, seg) == PAC_PARSE_OK;
}

/* The attributes of a PAC action. */
struct pac_dp_action {
    uint32_t id;
    bool rx;
    const struct nlattr *actions;
    size_t actions_len;
};

static bool
pac_dp_action_parse(const struct nlattr *a, struct pac_dp_action *pa)
{
    const struct nlattr *nla;
    bool has_id = false;
    size_t left;

    memset(pa, 0, sizeof *pa);
    NL_NESTED_FOR_EACH_UNSAFE (nla, left, a) {
        switch (nl_attr_type(nla)) {
        case OVS_PAC_ATTR_ID:
            pa->id = nl_attr_get_u32(nla);
            has_id = true;
            break;
        case OVS_PAC_ATTR_RX:
            pa->rx = true;
            break;
        case OVS_PAC_ATTR_ACTIONS:
            pa->actions = nl_attr_get(nla);
            pa->actions_len = nl_attr_get_size(nla);
            break;
        }
    }
    return has_id && pa->rx != !!pa->actions;
}

/* pac(id=N,rx): observe; the packets stay in 'batch'. */
static void
pac_dp_execute_rx(struct pac_dp *dp, struct pac_dp_instance *inst,
                  struct dp_packet_batch *batch, uint64_t now_us,
                  struct pac_dp_out *out)
    OVS_REQUIRES(inst->mutex)
{
    struct pac_dp_emit_ctx ctx = {
        .inst = inst, .out = out, .defer = true, .n_resolved = out->n,
    };
    struct pac_segment segs[NETDEV_MAX_BURST];
    struct pac_segment *parsed[NETDEV_MAX_BURST];
    struct dp_packet *packet;
    size_t n_parsed = 0;

    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        if (pac_dp_parse_ok(packet, &segs[n_parsed])) {
            parsed[n_parsed] = &segs[n_parsed];
            n_parsed++;
        }
    }
    pac_prefetch(inst->pac, parsed, n_parsed, true);

    /* One scheduler pass for the burst: what it releases leaves with the
     * output of this batch either way (pac.h, "Bursts"). */
    pac_batch_begin(inst->pac);
    for (size_t i = 0; i < n_parsed; i++) {
        pac_rx(inst->pac, parsed[i], now_us, pac_dp_emit, &ctx);
    }
    pac_batch_end(inst->pac, pac_dp_emit, &ctx);
    pac_dp_emit_finish(&ctx);
    pac_dp_update_wakeup(dp, inst);
}

/* pac(id=N,actions(...)): every packet of 'batch' (owned by PAC now) goes
 * to 'out' with the nested actions, or is held. */
static void
pac_dp_execute_tx(struct pac_dp *dp, struct pac_dp_instance *inst,
                  struct dp_packet_batch *batch,
                  const struct pac_dp_action *pa, uint64_t now_us,
                  struct pac_dp_out *out)
    OVS_REQUIRES(inst->mutex)
{
    struct pac_dp_emit_ctx ctx = {
        .inst = inst, .out = out, .defer = true, .n_resolved = out->n,
    };
    /* The batch's actions, interned at its first held packet: the others
     * only take a reference (no hash of the actions, no lookup).  Entries
     * are freed only by pac_dp_actions_ref() and the instance's
     * destruction, and neither runs during the batch. */
    struct pac_dp_actions *held_actions = NULL;
    struct pac_segment segs[NETDEV_MAX_BURST];
    struct pac_segment *parsed[NETDEV_MAX_BURST];
    enum pac_parse_status status[NETDEV_MAX_BURST];
    struct dp_packet *packet;
    size_t n_parsed = 0;

    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        status[i] = pac_dp_parse_counted(packet, &segs[i]);
        if (status[i] == PAC_PARSE_OK) {
            parsed[n_parsed++] = &segs[i];
        }
    }
    pac_prefetch(inst->pac, parsed, n_parsed, false);

    pac_batch_begin(inst->pac);
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        struct pac_segment *seg = &segs[i];
        struct pac_dp_slot *slot;
        enum pac_verdict verdict;

        if (!inst->free_slots) {
            /* Released packets' slots not read yet. */
            pac_dp_emit_finish(&ctx);
        }
        slot = inst->free_slots;

        if (status[i] != PAC_PARSE_OK) {
            if (status[i] != PAC_PARSE_NOT_TCP) {
                /* TCP that PAC cannot read: it goes after what its
                 * connection holds. */
                pac_tx_unparsed(inst->pac, seg, pac_dp_emit, &ctx);
            }
            pac_dp_out_add(out, packet, pa->actions, pa->actions_len, NULL,
                           0);
            continue;
        }
        if (!slot) {
            /* Cannot happen while libpac honours max_held (n_slots); a
             * segment that passes here may overtake its flow's held
             * ones. */
            COVERAGE_INC(pac_dp_no_slot);
            pac_dp_out_add(out, packet, pa->actions, pa->actions_len, NULL,
                           seg->ip_version);
            continue;
        }

        inst->free_slots = slot->next_free;
        slot->packet = packet;
        slot->actions = NULL;
        slot->ip_version = seg->ip_version;
        verdict = pac_tx(inst->pac, seg, slot, now_us, pac_dp_emit, &ctx);
        if (seg->window_clamped) {
            pac_dp_write_window(packet, seg);
        }
        if (verdict == PAC_HELD) {
            COVERAGE_INC(pac_dp_held);
            if (!held_actions) {
                held_actions = pac_dp_actions_ref(inst, pa->actions,
                                                  pa->actions_len);
            } else {
                atomic_count_inc(&held_actions->refs);
            }
            slot->actions = held_actions;
        } else {
            pac_dp_slot_free(inst, slot);
            pac_dp_out_add(out, packet, pa->actions, pa->actions_len, NULL,
                           seg->ip_version);
        }
    }
    pac_batch_end(inst->pac, pac_dp_emit, &ctx);
    pac_dp_emit_finish(&ctx);
    pac_dp_update_wakeup(dp, inst);
}

/* The fast path (libpac's pac_watch_*(): see pac.h).  While PAC tracks no
 * connection of a port, a segment costs reading two fields of the TCP
 * header that OVS's flow extraction already found: no parse, no hash, no
 * flow lookup. */

/* Reads the TCP flags and payload length of 'packet' from the header that
 * OVS's flow extraction located.  Returns false if it located none (a
 * packet executed without extraction) or the header is cut short. */
static bool
pac_dp_peek_tcp(const struct dp_packet *packet, uint8_t *flags,
                uint32_t *payload)
{
    const struct tcp_header *th = dp_packet_l4(packet);
    size_t l4_size, header_len;

    if (!th) {
        return false;
    }
    l4_size = dp_packet_l4_size(packet);
    if (l4_size < TCP_HEADER_LEN) {
        return false;
    }
    header_len = TCP_OFFSET(th->tcp_ctl) * 4;
    if (header_len < TCP_HEADER_LEN || header_len > l4_size) {
        return false;
    }
    *flags = TCP_FLAGS(th->tcp_ctl);
    *payload = l4_size - header_len;
    return true;
}

/* Tells libpac of one segment of a port it does not track: 'rx' if toward
 * the receiver.  A segment with SYN set is parsed whole, for the MSS and
 * window scale options that the window clamp needs once PAC tracks; the
 * others cost a look at the header OVS located.  TCP that cannot be read
 * triggers nothing that can be known.  Returns true if PAC starts tracking
 * with this segment (one from the receiver): it then goes to pac_tx(). */
static bool
pac_dp_watch(struct pac_dp_instance *inst, const struct dp_packet *packet,
             bool rx, uint64_t now_us)
    OVS_REQUIRES(inst->mutex)
{
    struct pac_segment seg;
    uint8_t flags;
    uint32_t len;

    if (!pac_dp_peek_tcp(packet, &flags, &len)) {
        if (pac_dp_parse(packet, &seg) != PAC_PARSE_OK) {
            return false;
        }
        flags = seg.tcp_flags;
        len = seg.payload_len;
    } else if ((flags & TCP_SYN)
               && pac_dp_parse(packet, &seg) != PAC_PARSE_OK) {
        return false;
    }
    if (flags & TCP_SYN) {
        /* Only the receiver's SYN-ACK is a trigger. */
        bool track = pac_watch_syn(inst->pac, &seg, rx, now_us);

        return track && !rx;
    }
    if (rx) {
        pac_watch_rx(inst->pac, len, now_us);
        return false;
    }
    return pac_watch_tx(inst->pac, flags, len, now_us);
}

/* pac(id=N,...) while 'inst' tracks nothing: tells libpac of each segment
 * of 'batch' until one makes it start tracking.  Returns how many segments
 * pass untracked: all of them, or those before the one that started
 * tracking, which goes to pac_tx() with the rest ('rx' segments never
 * start it). */
static size_t
pac_dp_watch_batch(struct pac_dp_instance *inst,
                   const struct dp_packet_batch *batch, bool rx,
                   uint64_t now_us)
    OVS_REQUIRES(inst->mutex)
{
    struct dp_packet *packet;

    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        if (pac_dp_watch(inst, packet, rx, now_us)) {
            return i;
        }
    }
    return dp_packet_batch_size(batch);
}

/* Runs the nested actions of 'pa' on 'batch' without PAC. */
static void
pac_dp_pass(struct dp_packet_batch *batch, const struct pac_dp_action *pa,
            bool should_steal, const struct pac_dp_exec *exec)
{
    if (pa->rx) {
        return;
    }
    if (!should_steal) {
        struct dp_packet_batch copy;

        dp_packet_batch_clone(&copy, batch);
        exec->run(exec->ctx, &copy, pa->actions, pa->actions_len);
    } else {
        exec->run(exec->ctx, batch, pa->actions, pa->actions_len);
        dp_packet_batch_init(batch);
    }
}

void
pac_dp_execute_action(struct pac_dp *dp, struct dp_packet_batch *batch,
                      const struct nlattr *a, bool should_steal,
                      uint64_t now_us, const struct pac_dp_exec *exec)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct pac_dp_instance *inst;
    struct dp_packet_batch copy;
    struct pac_dp_action pa;
    struct pac_dp_out out;
    size_t n_passed = 0;

    if (!pac_dp_action_parse(a, &pa)) {
        /* odp-util never builds one; drop like an unknown action. */
        dp_packet_delete_batch(batch, should_steal);
        return;
    }

    inst = pac_dp_lookup(dp, pa.id);
    if (!inst) {
        COVERAGE_INC(pac_dp_no_instance);
        pac_dp_pass(batch, &pa, should_steal, exec);
        goto done;
    }

    ovs_mutex_lock(&inst->mutex);
    if (inst->dead) {
        ovs_mutex_unlock(&inst->mutex);
        pac_dp_pass(batch, &pa, should_steal, exec);
        goto done;
    }

    if (!pac_tracking(inst->pac)) {
        size_t n_untracked = pac_dp_watch_batch(inst, batch, pa.rx, now_us);

        if (n_untracked == dp_packet_batch_size(batch)) {
            ovs_mutex_unlock(&inst->mutex);
            pac_dp_pass(batch, &pa, should_steal, exec);
            goto done;
        }
        n_passed = n_untracked;
    }

    pac_dp_out_init(&out);
    if (pa.rx) {
        pac_dp_execute_rx(dp, inst, batch, now_us, &out);
    } else {
        struct dp_packet_batch *mine = batch;
        size_t n = dp_packet_batch_size(batch);

        if (!should_steal) {
            dp_packet_batch_clone(&copy, batch);
            mine = &copy;
        }
        /* Tracking started in the middle of the batch: the segments
         * before it pass, first, and pac_tx() gets the rest. */
        for (size_t i = 0; i < n_passed; i++) {
            pac_dp_out_add(&out, mine->packets[i], pa.actions,
                           pa.actions_len, NULL, 0);
        }
        memmove(mine->packets, &mine->packets[n_passed],
                (n - n_passed) * sizeof mine->packets[0]);
        mine->count = n - n_passed;
        pac_dp_execute_tx(dp, inst, mine, &pa, now_us, &out);
        dp_packet_batch_init(mine);
    }
    pac_dp_out_finish(inst, &out, exec);
    pac_dp_out_destroy(&out);

done:
    if (pa.rx && should_steal) {
        /* pac(rx) as the last action: nothing else wants the packets. */
        dp_packet_delete_batch(batch, true);
    }
}

bool
pac_dp_actions_need_flow(const struct nlattr *actions, size_t actions_len)
{
    const struct nlattr *a;
    size_t left;

    NL_ATTR_FOR_EACH_UNSAFE (a, left, actions, actions_len) {
        switch (nl_attr_type(a)) {
        case OVS_ACTION_ATTR_OUTPUT:
        case OVS_ACTION_ATTR_SET:
        case OVS_ACTION_ATTR_SET_MASKED:
        case OVS_ACTION_ATTR_PUSH_VLAN:
        case OVS_ACTION_ATTR_POP_VLAN:
        case OVS_ACTION_ATTR_TRUNC:
        case OVS_ACTION_ATTR_RECIRC:
            break;
        default:
            return true;
        }
    }
    return false;
}

uint64_t
pac_dp_next_wakeup(const struct pac_dp *dp)
{
    uint64_t when;

    atomic_read(&CONST_CAST(struct pac_dp *, dp)->next_wakeup_us, &when);
    return when;
}

void
pac_dp_run(struct pac_dp *dp, uint64_t now_us, const struct pac_dp_exec *exec)
    OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct pac_dp_instance *inst;
    uint64_t seen, next = UINT64_MAX;

    atomic_read(&dp->next_wakeup_us, &seen);
    if (now_us < seen) {
        return;
    }

    CMAP_FOR_EACH (inst, node, &dp->instances) {
        struct pac_dp_emit_ctx ctx;
        struct pac_dp_out out;
        uint64_t when;

        atomic_read(&inst->next_wakeup_us, &when);
        if (now_us < when) {
            next = MIN(next, when);
            continue;
        }
        if (ovs_mutex_trylock(&inst->mutex)) {
            /* Busy elsewhere: look again next time. */
            next = MIN(next, when);
            continue;
        }
        if (inst->dead) {
            ovs_mutex_unlock(&inst->mutex);
            continue;
        }
        pac_dp_out_init(&out);
        ctx = (struct pac_dp_emit_ctx) { .inst = inst, .out = &out };
        pac_run(inst->pac, now_us, pac_dp_emit, &ctx);
        when = pac_next_wakeup(inst->pac);
        atomic_store(&inst->next_wakeup_us, when);
        next = MIN(next, when);
        pac_dp_out_finish(inst, &out, exec);
        pac_dp_out_destroy(&out);
    }

    /* Publish the new earliest deadline unless another thread lowered it
     * meanwhile; then keep the lower of the two. */
    if (!atomic_compare_exchange_strong(&dp->next_wakeup_us, &seen, next)) {
        pac_dp_lower_wakeup(&dp->next_wakeup_us, next);
    }
}
