/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Flow table: a chained hash of fixed-size entries allocated once.
 *
 * The key is (VM address, VM port, peer address, peer port), so both
 * directions of a connection find the same entry without canonicalising.
 * The hash's keys come from cfg.hash_seed, or, if it is 0 (the default),
 * from getrandom() once per instance, so that peers cannot aim at one
 * chain; and no chain grows beyond PAC_MAX_CHAIN entries, so that a
 * lookup's walk is bounded even if they could (pac_flow_chain_full(): the
 * new flow is then not tracked).  When the table is full,
 * pac_flow_pick_victim() samples a few entries from a clock hand and
 * returns the least recently seen one that holds no packets: eviction
 * never touches a held packet. */

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "pac-private.h"
#include "pac-flow.h"

/* Entries sampled when looking for an eviction victim. */
#define PAC_EVICT_SAMPLE 32

/* The seed of the flow hash's keys: cfg.hash_seed, or if that is 0 a
 * random one.  Should getrandom() fail (no entropy yet, an old kernel),
 * the instance's address and a counter make the seed at least differ
 * between instances. */
static uint64_t
random_seed(const struct pac *pac)
{
    static uint64_t fallback;
    uint64_t seed = pac->cfg.hash_seed;

    if (!seed && getrandom(&seed, sizeof seed, GRND_NONBLOCK) != sizeof seed) {
        seed = pac_mix64((uintptr_t) pac ^ ++fallback);
    }
    return seed;
}

/* Whether the chain of the bucket of 'hash' holds PAC_MAX_CHAIN flows: a
 * walk of at most that many entries. */
bool
pac_flow_chain_full(const struct pac *pac, uint32_t hash)
{
    uint32_t n = 0;

    for (uint32_t i = pac->buckets[hash & pac->bucket_mask]; i != PAC_NONE;
         i = pac->flows[i].hash_next) {
        if (++n >= PAC_MAX_CHAIN) {
            return true;
        }
    }
    return false;
}

bool
pac_flow_table_init(struct pac *pac)
{
    uint32_t n = pac->cfg.max_flows;
    uint32_t n_buckets = 1;

    while (n_buckets < n) {
        n_buckets <<= 1;
    }
    pac->flows = pac_zalloc_lines(n, sizeof *pac->flows);
    pac->flow_wnd = calloc(n, sizeof *pac->flow_wnd);
    pac->buckets = malloc(n_buckets * sizeof *pac->buckets);
    if (!pac->flows || !pac->flow_wnd || !pac->buckets) {
        pac_flow_table_free(pac);
        return false;
    }
    for (uint32_t i = 0; i < n_buckets; i++) {
        pac->buckets[i] = PAC_NONE;
    }
    pac->bucket_mask = n_buckets - 1;
    for (int i = 0; i < PAC_N_HASH_KEYS; i++) {
        uint64_t step = (i + 1) * UINT64_C(0x9e3779b97f4a7c15);

        pac->hash_keys[i] = pac_mix64(random_seed(pac) + step);
    }
    for (uint32_t i = 0; i < n; i++) {
        pac->flows[i].hash_next = i + 1 < n ? i + 1 : PAC_NONE;
    }
    pac->flow_free = 0;
    pac->n_flows = 0;
    pac->clock_hand = 0;
    return true;
}

void
pac_flow_table_free(struct pac *pac)
{
    free(pac->flows);
    free(pac->flow_wnd);
    free(pac->buckets);
    pac->flows = NULL;
    pac->flow_wnd = NULL;
    pac->buckets = NULL;
}

/* Inserts a new, zeroed flow with the given key.  Returns its index, or
 * PAC_NONE if the table is full (the caller evicts first). */
uint32_t
pac_flow_insert(struct pac *pac, const uint8_t vm_addr[16], uint16_t vm_port,
                const uint8_t peer_addr[16], uint16_t peer_port,
                uint32_t hash)
{
    uint32_t idx = pac->flow_free;
    struct pac_flow *f;
    uint32_t *bucket;
    uint16_t dirty;

    if (idx == PAC_NONE) {
        return PAC_NONE;
    }
    f = &pac->flows[idx];
    pac->flow_free = f->hash_next;

    /* The flow may still be on pac->rr_dirty, which must list it once. */
    dirty = f->flags & PAC_F_RR_DIRTY;
    memset(f, 0, sizeof *f);
    memcpy(f->vm_addr, vm_addr, 16);
    memcpy(f->peer_addr, peer_addr, 16);
    f->vm_port = vm_port;
    f->peer_port = peer_port;
    f->rr_prev = f->rr_next = PAC_NONE;
    f->held_head = f->held_tail = PAC_NONE;
    f->flags = PAC_F_IN_USE | dirty;
    memset(&pac->flow_wnd[idx], 0, sizeof pac->flow_wnd[idx]);

    bucket = &pac->buckets[hash & pac->bucket_mask];
    f->hash_next = *bucket;
    *bucket = idx;
    pac->n_flows++;
    return idx;
}

/* Removes flow 'idx', which must hold no packets. */
void
pac_flow_remove(struct pac *pac, uint32_t idx)
{
    struct pac_flow *f = &pac->flows[idx];
    uint32_t hash = pac_flow_hash(pac, f->vm_addr, f->vm_port,
                                  f->peer_addr, f->peer_port);
    uint32_t *link = &pac->buckets[hash & pac->bucket_mask];

    while (*link != idx) {
        link = &pac->flows[*link].hash_next;
    }
    *link = f->hash_next;

    f->flags &= PAC_F_RR_DIRTY;     /* See pac_flow_insert(). */
    f->hash_next = pac->flow_free;
    pac->flow_free = idx;
    pac->n_flows--;
}

/* Returns the least recently seen flow without held packets among the next
 * PAC_EVICT_SAMPLE entries of the clock hand, or PAC_NONE if all of them
 * hold packets. */
uint32_t
pac_flow_pick_victim(struct pac *pac)
{
    uint32_t victim = PAC_NONE;
    uint32_t victim_idle = 0;

    for (int i = 0; i < PAC_EVICT_SAMPLE; i++) {
        uint32_t idx = pac->clock_hand;
        const struct pac_flow *f = &pac->flows[idx];

        pac->clock_hand = idx + 1 < pac->cfg.max_flows ? idx + 1 : 0;
        if ((f->flags & PAC_F_IN_USE) && !f->n_held) {
            uint32_t idle = pac_elapsed32(pac->now, f->last_seen);

            if (victim == PAC_NONE || idle > victim_idle) {
                victim = idx;
                victim_idle = idle;
            }
        }
    }
    return victim;
}
