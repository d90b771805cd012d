/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Flow table: a chained hash of fixed-size entries allocated once.
 *
 * The key is (VM address, VM port, peer address, peer port), so both
 * directions of a connection find the same entry without canonicalising.
 * The hash is seeded per instance (cfg.hash_seed) so that peers cannot aim
 * at one chain.  When the table is full, pac_flow_pick_victim() samples a
 * few entries from a clock hand and returns the least recently seen one that
 * holds no packets: eviction never touches a held packet. */

#include <stdlib.h>
#include <string.h>
#include "pac-private.h"

/* Entries sampled when looking for an eviction victim. */
#define PAC_EVICT_SAMPLE 32

static inline uint64_t
mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* The 128-bit product of 'a' and 'b', its halves folded together. */
static inline uint64_t
mul_fold(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    unsigned __int128 p = (unsigned __int128) a * b;

    return (uint64_t) p ^ (uint64_t) (p >> 64);
#else
    return mix64(a ^ mix64(b));
#endif
}

/* Keyed hash of a flow's key.  Each key word is XORed with a secret key
 * and multiplied with its neighbour (as in wyhash): the two products over
 * the addresses do not depend on each other, so the processor overlaps
 * them, and one more product mixes in the ports.  Three multiplications
 * instead of the eight of four chained mix64() rounds, on every packet
 * (bench/datapath --profile). */
static uint32_t
flow_hash(const uint64_t keys[PAC_N_HASH_KEYS], const uint8_t vm_addr[16],
          uint16_t vm_port, const uint8_t peer_addr[16], uint16_t peer_port)
{
    uint64_t ports = ((uint64_t) vm_port << 16) | peer_port;
    uint64_t words[4];
    uint64_t vm, peer, h;

    memcpy(&words[0], vm_addr, 16);
    memcpy(&words[2], peer_addr, 16);
    vm = mul_fold(words[0] ^ keys[0], words[1] ^ keys[1]);
    peer = mul_fold(words[2] ^ keys[2], words[3] ^ keys[3]);
    h = mul_fold(vm ^ ports ^ keys[4], peer ^ keys[5]);
    return (uint32_t) (h ^ (h >> 32));
}

uint32_t
pac_flow_hash(const struct pac *pac, const uint8_t vm_addr[16],
              uint16_t vm_port, const uint8_t peer_addr[16],
              uint16_t peer_port)
{
    return flow_hash(pac->hash_keys, vm_addr, vm_port, peer_addr, peer_port);
}

#if defined(__GNUC__)
#define PAC_PREFETCH(addr) __builtin_prefetch(addr)
#else
#define PAC_PREFETCH(addr) ((void) (addr))
#endif

/* Starts loading the bucket of 'hash'. */
void
pac_flow_prefetch_bucket(const struct pac *pac, uint32_t hash)
{
    PAC_PREFETCH(&pac->buckets[hash & pac->bucket_mask]);
}

/* Starts loading the first flow in the bucket of 'hash' (both cache lines:
 * the key, then the flags and counters every packet updates), and its
 * window state.  Best after pac_flow_prefetch_bucket() had time to land. */
void
pac_flow_prefetch_entry(const struct pac *pac, uint32_t hash)
{
    uint32_t idx = pac->buckets[hash & pac->bucket_mask];

    if (idx != PAC_NONE) {
        const char *f = (const char *) &pac->flows[idx];

        PAC_PREFETCH(f);
        PAC_PREFETCH(f + sizeof pac->flows[idx] - 1);
        PAC_PREFETCH(&pac->flow_wnd[idx]);
    }
}

/* Compares two 16-byte addresses as two words: memcmp() is a library call
 * on every lookup. */
static inline bool
addr_eq(const uint8_t a[16], const uint8_t b[16])
{
    uint64_t wa[2], wb[2];

    memcpy(wa, a, 16);
    memcpy(wb, b, 16);
    return !((wa[0] ^ wb[0]) | (wa[1] ^ wb[1]));
}

static bool
flow_matches(const struct pac_flow *f, const uint8_t vm_addr[16],
             uint16_t vm_port, const uint8_t peer_addr[16],
             uint16_t peer_port)
{
    return (f->vm_port == vm_port && f->peer_port == peer_port
            && addr_eq(f->vm_addr, vm_addr)
            && addr_eq(f->peer_addr, peer_addr));
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
        pac->hash_keys[i] = mix64(pac->cfg.hash_seed
                                  + (i + 1) * UINT64_C(0x9e3779b97f4a7c15));
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

/* Returns the index of the flow with the given key, or PAC_NONE.  'hash'
 * is the key's pac_flow_hash(). */
uint32_t
pac_flow_lookup(const struct pac *pac, const uint8_t vm_addr[16],
                uint16_t vm_port, const uint8_t peer_addr[16],
                uint16_t peer_port, uint32_t hash)
{
    for (uint32_t i = pac->buckets[hash & pac->bucket_mask]; i != PAC_NONE;
         i = pac->flows[i].hash_next) {
        const struct pac_flow *f = &pac->flows[i];

        if (flow_matches(f, vm_addr, vm_port, peer_addr, peer_port)) {
            return i;
        }
    }
    return PAC_NONE;
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
    uint32_t hash = flow_hash(pac->hash_keys, f->vm_addr, f->vm_port,
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
