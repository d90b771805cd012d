/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Search index of the MLFQ round-robin rings.
 *
 * The scheduler serves the first flow, in ring order from a level's cursor,
 * whose head is eligible (see schedule_one() in pac.c).  With many flows
 * holding packets most of them are not eligible, and walking the ring to
 * the first one that is made every packet cost O(flows holding).  So each
 * level's ring is mirrored by a treap ordered like the ring (a ring cut
 * anywhere: ranks count from an arbitrary flow, and a cyclic range of ranks
 * stands for a stretch of the ring).  Each flow carries keys that say when
 * its head is eligible (pac.c computes them, see pac_rr_set_keys()), and
 * each subtree the combination of its flows' keys, so that the first
 * eligible flow at or after a rank is found in O(log n).
 *
 * Only long rings are indexed (see PAC_RR_INDEX_ON); the scheduler walks
 * the others.
 *
 * The keys depend only on the flow's own state and pac->epoch.  Code that
 * changes them marks the flow (pac_rr_mark()); pac.c recomputes the keys of
 * marked flows before it searches (rr_flush() there). */

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

uint32_t
pac_rr_size(const struct pac *pac, int level)
{
    return node_size(pac, pac->tr_root[level]);
}

/* Returns the rank of flow 'idx' in the treap of its level. */
uint32_t
pac_rr_rank(const struct pac *pac, uint32_t idx)
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
void
pac_rr_set_keys(struct pac *pac, uint32_t idx, uint8_t bits,
                uint32_t out, uint32_t mss)
{
    struct pac_rr_node *f = &pac->rr_nodes[idx];

    if (f->tr_bits != bits || f->tr_out != out || f->tr_mss != mss) {
        f->tr_bits = bits;
        f->tr_out = out;
        f->tr_mss = mss;
        pull_up(pac, idx);
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
 * that follow, in ring order, the first 'skip' flows from the flow of rank
 * 'start' (itself included), or PAC_NONE.  Its distance from 'start' goes
 * into '*offsetp'.  'skip + n' must not exceed the treap's size. */
uint32_t
pac_rr_find(const struct pac *pac, int level, uint32_t start, uint32_t skip,
            uint32_t n, const struct pac_rr_query *q, uint32_t *offsetp)
{
    uint32_t root = pac->tr_root[level];
    uint32_t size = node_size(pac, root);
    uint32_t lo = start + skip;
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
