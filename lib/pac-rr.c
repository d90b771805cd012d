/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The index of the MLFQ round-robin rings: the next matching flow from a
 * cursor in O(log n).
 *
 * The scheduler serves the first flow, in ring order from a level's cursor,
 * whose head is eligible (pac-sched.c).  With many flows holding packets
 * most of them are not eligible, and walking the ring to the first one
 * that is would make every packet cost O(flows holding).  So a long ring
 * (more than PAC_RR_INDEX_ON flows) is mirrored by a treap ordered like the
 * ring (a ring cut anywhere: ranks count from an arbitrary flow, and a
 * cyclic range of ranks stands for a stretch of the ring).  Each flow
 * carries keys that say when its head is eligible (struct pac_rr_keys,
 * computed by the scheduler's pac_rr_keys_fn), and each subtree the
 * combination of its flows' keys, so that the first flow at or after a
 * rank that matches a query is found in O(log n).
 *
 * pac_rr_iter_next() hides whether a ring is indexed: a short ring is
 * walked, its flows' keys computed as they are visited, and the visit order
 * and the matches are the same either way.
 *
 * The keys depend only on the flow's own state and pac->epoch.  Code that
 * changes them marks the flow (pac_rr_mark()); the keys of marked flows are
 * recomputed before each search of an index.  A search therefore sees
 * every change made before it, whenever the flow was marked: libpac's
 * entry points change flows first and search last (pac_schedule()). */

#include <stdlib.h>
#include "pac-private.h"

static uint32_t
node_size(const struct pac *pac, uint32_t x)
{
    return x == PAC_NONE ? 0 : pac->rr_nodes[x].tr_size;
}

/* Recomputes node 'x's size and aggregates from its children, and makes it
 * their parent. */
static void
pull(struct pac *pac, uint32_t x)
{
    struct pac_rr_node *f = &pac->rr_nodes[x];
    uint32_t kids[2] = { f->tr_left, f->tr_right };

    f->tr_size = 1;
    f->ag_bits = f->tr_bits;
    f->ag_out_min = f->tr_out;
    f->ag_mss_min = f->tr_mss;
    for (int i = 0; i < 2; i++) {
        if (kids[i] != PAC_NONE) {
            struct pac_rr_node *k = &pac->rr_nodes[kids[i]];

            k->tr_parent = x;
            f->tr_size += k->tr_size;
            f->ag_bits |= k->ag_bits;
            if (k->ag_out_min < f->ag_out_min) {
                f->ag_out_min = k->ag_out_min;
            }
            if (k->ag_mss_min < f->ag_mss_min) {
                f->ag_mss_min = k->ag_mss_min;
            }
        }
    }
}

/* Recomputes the aggregates of 'x' and its ancestors after a key of 'x'
 * or of a child changed (sizes are up to date).  An ancestor's aggregates
 * can change only if its child's did. */
static void
pull_up(struct pac *pac, uint32_t x)
{
    for (; x != PAC_NONE; x = pac->rr_nodes[x].tr_parent) {
        const struct pac_rr_node *n = &pac->rr_nodes[x];
        uint8_t bits = n->ag_bits;
        uint32_t out = n->ag_out_min;
        uint32_t mss = n->ag_mss_min;

        pull(pac, x);
        if (n->ag_bits == bits && n->ag_out_min == out
            && n->ag_mss_min == mss) {
            break;
        }
    }
}

/* Any fixed pseudo-random priority keeps the treap balanced: here, a hash
 * of the flow's index (murmur3's finalizer; a multiplicative hash alone is
 * too regular over consecutive indices). */
static uint32_t
prio(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

/* Allocates the index of 'pac''s rings; 'keys' computes a flow's keys. */
bool
pac_rr_init(struct pac *pac, pac_rr_keys_fn *keys)
{
    pac->rr_nodes = pac_zalloc_lines(pac->cfg.max_flows,
                                     sizeof *pac->rr_nodes);
    pac->rr_dirty = calloc(pac->cfg.max_flows, sizeof *pac->rr_dirty);
    pac->n_rr_dirty = 0;
    pac->rr_keys = keys;
    for (int l = 0; l < PAC_MAX_LEVELS; l++) {
        pac->tr_root[l] = PAC_NONE;
        pac->rr_indexed[l] = false;
    }
    return pac->rr_nodes && pac->rr_dirty;
}

void
pac_rr_free(struct pac *pac)
{
    free(pac->rr_nodes);
    pac->rr_nodes = NULL;
    free(pac->rr_dirty);
    pac->rr_dirty = NULL;
}

/* Returns the rank of flow 'idx' in the treap of its level. */
static uint32_t
rr_rank(const struct pac *pac, uint32_t idx)
{
    uint32_t rank = node_size(pac, pac->rr_nodes[idx].tr_left);

    for (uint32_t p = pac->rr_nodes[idx].tr_parent; p != PAC_NONE;
         idx = p, p = pac->rr_nodes[p].tr_parent) {
        if (pac->rr_nodes[p].tr_right == idx) {
            rank += node_size(pac, pac->rr_nodes[p].tr_left) + 1;
        }
    }
    return rank;
}

/* Makes node 'x' take the place of its parent (a tree rotation). */
static void
rotate_up(struct pac *pac, int level, uint32_t x)
{
    struct pac_rr_node *n = &pac->rr_nodes[x];
    uint32_t p = n->tr_parent;
    struct pac_rr_node *pn = &pac->rr_nodes[p];
    uint32_t g = pn->tr_parent;

    if (pn->tr_left == x) {
        pn->tr_left = n->tr_right;
        n->tr_right = p;
    } else {
        pn->tr_right = n->tr_left;
        n->tr_left = p;
    }
    pull(pac, p);
    pull(pac, x);
    n->tr_parent = g;
    if (g == PAC_NONE) {
        pac->tr_root[level] = x;
    } else if (pac->rr_nodes[g].tr_left == p) {
        pac->rr_nodes[g].tr_left = x;
    } else {
        pac->rr_nodes[g].tr_right = x;
    }
}

/* Adds flow 'idx' to the treap of its level, just before flow 'before'
 * (PAC_NONE if the treap is empty), with keys that match nothing (so that
 * no aggregate but the sizes changes), and marks it. */
void
pac_rr_insert(struct pac *pac, uint32_t idx, uint32_t before)
{
    struct pac_rr_node *n = &pac->rr_nodes[idx];
    int level = pac->flows[idx].level;

    n->tr_left = n->tr_right = n->tr_parent = PAC_NONE;
    n->tr_bits = 0;
    n->tr_out = n->tr_mss = UINT32_MAX;
    pull(pac, idx);
    if (before == PAC_NONE) {
        pac->tr_root[level] = idx;
    } else {
        /* A leaf just before 'before': its left child, or the last node of
         * its left subtree.  Then up by priority. */
        struct pac_rr_node *b = &pac->rr_nodes[before];
        uint32_t parent = before;

        if (b->tr_left == PAC_NONE) {
            b->tr_left = idx;
        } else {
            parent = b->tr_left;
            while (pac->rr_nodes[parent].tr_right != PAC_NONE) {
                parent = pac->rr_nodes[parent].tr_right;
            }
            pac->rr_nodes[parent].tr_right = idx;
        }
        n->tr_parent = parent;
        for (uint32_t a = parent; a != PAC_NONE;
             a = pac->rr_nodes[a].tr_parent) {
            pac->rr_nodes[a].tr_size++;
        }
        while (n->tr_parent != PAC_NONE
               && prio(idx) > prio(n->tr_parent)) {
            rotate_up(pac, level, idx);
        }
    }
    pac_rr_mark_dirty(pac, idx);
}

/* Removes flow 'idx' from the treap of its level. */
void
pac_rr_remove(struct pac *pac, uint32_t idx)
{
    struct pac_rr_node *n = &pac->rr_nodes[idx];
    int level = pac->flows[idx].level;
    uint32_t p;

    /* Down to a leaf, then out. */
    while (n->tr_left != PAC_NONE || n->tr_right != PAC_NONE) {
        uint32_t c = (n->tr_left == PAC_NONE ? n->tr_right
                      : n->tr_right == PAC_NONE ? n->tr_left
                      : prio(n->tr_left) > prio(n->tr_right) ? n->tr_left
                      : n->tr_right);

        rotate_up(pac, level, c);
    }
    p = n->tr_parent;
    if (p == PAC_NONE) {
        pac->tr_root[level] = PAC_NONE;
    } else {
        if (pac->rr_nodes[p].tr_left == idx) {
            pac->rr_nodes[p].tr_left = PAC_NONE;
        } else {
            pac->rr_nodes[p].tr_right = PAC_NONE;
        }
        for (uint32_t a = p; a != PAC_NONE; a = pac->rr_nodes[a].tr_parent) {
            pac->rr_nodes[a].tr_size--;
        }
        pull_up(pac, p);
    }
    n->tr_parent = PAC_NONE;
}

/* Indexes the ring of 'level': every flow, in ring order from the cursor,
 * marked so that its keys are computed before the next search. */
void
pac_rr_build(struct pac *pac, int level)
{
    uint32_t first = pac->rr_cursor[level];
    uint32_t idx = first;

    pac->rr_indexed[level] = true;
    pac->tr_root[level] = PAC_NONE;
    do {
        pac_rr_insert(pac, idx, idx == first ? PAC_NONE : first);
        idx = pac->flows[idx].rr_next;
    } while (idx != first);
}

/* Drops the index of every ring that has fewer than PAC_RR_INDEX_OFF
 * flows. */
void
pac_rr_trim(struct pac *pac)
{
    for (int level = 0; level < PAC_MAX_LEVELS; level++) {
        if (pac->rr_indexed[level]
            && pac->rr_n_flows[level] < PAC_RR_INDEX_OFF) {
            pac->rr_indexed[level] = false;
            pac->tr_root[level] = PAC_NONE;
        }
    }
}

/* Sets the keys of flow 'idx', which is in a treap. */
static void
set_keys(struct pac *pac, uint32_t idx, const struct pac_rr_keys *k)
{
    struct pac_rr_node *f = &pac->rr_nodes[idx];

    if (f->tr_bits != k->bits || f->tr_out != k->out || f->tr_mss != k->mss) {
        f->tr_bits = k->bits;
        f->tr_out = k->out;
        f->tr_mss = k->mss;
        pull_up(pac, idx);
    }
}

/* Brings the keys of every marked flow that is in an index up to date. */
static void
flush(struct pac *pac)
{
    while (pac->n_rr_dirty) {
        uint32_t idx = pac->rr_dirty[--pac->n_rr_dirty];
        struct pac_flow *f = &pac->flows[idx];

        f->flags &= ~PAC_F_RR_DIRTY;
        if ((f->flags & PAC_F_IN_USE) && f->n_held
            && pac->rr_indexed[f->level]) {
            struct pac_rr_keys k;

            pac->rr_keys(pac, idx, &k);
            set_keys(pac, idx, &k);
        }
    }
}

/* Marks every flow that holds packets (their keys depend on pac->epoch). */
void
pac_rr_mark_all(struct pac *pac)
{
    for (int level = 0; level < PAC_MAX_LEVELS; level++) {
        uint32_t first = pac->rr_cursor[level];
        uint32_t idx = first;

        if (idx != PAC_NONE) {
            do {
                pac_rr_mark(pac, idx);
                idx = pac->flows[idx].rr_next;
            } while (idx != first);
        }
    }
}

static bool
match(const struct pac_rr_query *q, uint8_t bits, uint32_t out, uint32_t mss)
{
    return ((bits & q->bits)
            || out < q->out_below
            || (int64_t) mss <= q->mss_upto);
}

/* Returns the first flow in treap 't' (whose first node has rank 'base')
 * with rank in [lo, hi) that matches 'q', or PAC_NONE; its rank goes into
 * '*rankp'. */
static uint32_t
find(const struct pac *pac, uint32_t t, uint32_t base, uint32_t lo,
     uint32_t hi, const struct pac_rr_query *q, uint32_t *rankp)
{
    while (t != PAC_NONE) {
        const struct pac_rr_node *f = &pac->rr_nodes[t];
        uint32_t rank;
        uint32_t x;

        if (hi <= base || lo >= base + f->tr_size
            || !match(q, f->ag_bits, f->ag_out_min, f->ag_mss_min)) {
            return PAC_NONE;
        }
        x = find(pac, f->tr_left, base, lo, hi, q, rankp);
        if (x != PAC_NONE) {
            return x;
        }
        rank = base + node_size(pac, f->tr_left);
        if (rank >= lo && rank < hi
            && match(q, f->tr_bits, f->tr_out, f->tr_mss)) {
            *rankp = rank;
            return t;
        }
        base = rank + 1;
        t = f->tr_right;
    }
    return PAC_NONE;
}

/* Returns the first flow of 'level' that matches 'q' among the 'n' flows
 * that follow, in ring order, the flow of rank 'start' (itself included),
 * or PAC_NONE.  Its distance from 'start' goes into '*offsetp'.  'n' must
 * not exceed the treap's size. */
static uint32_t
rr_find(const struct pac *pac, int level, uint32_t start, uint32_t n,
        const struct pac_rr_query *q, uint32_t *offsetp)
{
    uint32_t root = pac->tr_root[level];
    uint32_t size = node_size(pac, root);
    uint32_t lo = start;
    uint32_t hi = lo + n;
    uint32_t rank;
    uint32_t x;

    if (!n) {
        return PAC_NONE;
    }
    if (lo >= size) {
        lo -= size;
        hi -= size;
    }
    x = find(pac, root, 0, lo, hi < size ? hi : size, q, &rank);
    if (x == PAC_NONE && hi > size) {
        x = find(pac, root, 0, 0, hi - size, q, &rank);
    }
    if (x != PAC_NONE) {
        *offsetp = rank >= start ? rank - start : rank + size - start;
    }
    return x;
}

/* Starts a look at the 'n' flows of 'level' (at most the flows on its ring)
 * that follow its cursor in ring order, the cursor's flow first. */
void
pac_rr_iter_init(struct pac_rr_iter *it, const struct pac *pac, int level,
                 uint32_t n)
{
    it->level = level;
    it->next = pac->rr_cursor[level];
    it->left = it->next == PAC_NONE ? 0 : n;
}

/* Returns the next flow of the look whose head matches 'q', or PAC_NONE if
 * none is left; the look goes on after it.  'q' may change from one call to
 * the next.  Between two calls the caller may release the packets of the
 * flow it got, and no other flow's: after releasing another's, it starts a
 * new look. */
uint32_t
pac_rr_iter_next(struct pac *pac, struct pac_rr_iter *it,
                 const struct pac_rr_query *q)
{
    if (pac->rr_indexed[it->level]) {
        uint32_t offset, idx;

        flush(pac);
        if (!it->left) {
            return PAC_NONE;
        }
        idx = rr_find(pac, it->level, rr_rank(pac, it->next), it->left, q,
                      &offset);
        if (idx == PAC_NONE) {
            it->left = 0;
        } else {
            it->left -= offset + 1;
            it->next = pac->flows[idx].rr_next;
        }
        return idx;
    }
    while (it->left) {
        uint32_t idx = it->next;
        struct pac_rr_keys k;

        pac->rr_keys(pac, idx, &k);
        it->next = pac->flows[idx].rr_next;
        it->left--;
        if (match(q, k.bits, k.out, k.mss)) {
            return idx;
        }
    }
    return PAC_NONE;
}
