/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The flow table's per-packet operations: hashing a key, prefetching its
 * entry, looking it up.  They run on every segment in both directions and
 * are a few instructions each, so they are inline here rather than calls
 * into pac-flow.c (as calls they took about 10 cycles more per packet,
 * bench/datapath --profile at 1 000 flows).  The table itself, inserts,
 * removals and eviction: pac-flow.c. */

#ifndef PAC_FLOW_H
#define PAC_FLOW_H 1

#include "pac-private.h"

static inline uint64_t
pac_mix64(uint64_t x)
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
pac_mul_fold(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    unsigned __int128 p = (unsigned __int128) a * b;

    return (uint64_t) p ^ (uint64_t) (p >> 64);
#else
    return pac_mix64(a ^ pac_mix64(b));
#endif
}

/* Keyed hash of a flow's key.  Each key word is XORed with a secret key
 * and multiplied with its neighbour (as in wyhash): the two products over
 * the addresses do not depend on each other, so the processor overlaps
 * them, and one more product mixes in the ports.  Three multiplications
 * instead of the eight of four chained pac_mix64() rounds, on every packet
 * (bench/datapath --profile). */
static inline uint32_t
pac_flow_hash(const struct pac *pac, const uint8_t vm_addr[16],
              uint16_t vm_port, const uint8_t peer_addr[16],
              uint16_t peer_port)
{
    const uint64_t *keys = pac->hash_keys;
    uint64_t ports = ((uint64_t) vm_port << 16) | peer_port;
    uint64_t words[4];
    uint64_t vm, peer, h;

    memcpy(&words[0], vm_addr, 16);
    memcpy(&words[2], peer_addr, 16);
    vm = pac_mul_fold(words[0] ^ keys[0], words[1] ^ keys[1]);
    peer = pac_mul_fold(words[2] ^ keys[2], words[3] ^ keys[3]);
    h = pac_mul_fold(vm ^ ports ^ keys[4], peer ^ keys[5]);
    return (uint32_t) (h ^ (h >> 32));
}

/* Starts loading the cache line at 'addr'.  GCC deletes a loop whose only
 * effect is __builtin_prefetch() of an address it loads (pac_prefetch()'s
 * second pass, with these functions inline): the empty volatile asm that
 * takes the address keeps it.  tests/check-prefetch.sh checks that it
 * does. */
#if defined(__GNUC__)
#define PAC_PREFETCH(addr)                          \
    do {                                            \
        __builtin_prefetch(addr);                   \
        __asm__ volatile ("" : : "r" (addr));       \
    } while (0)
#else
#define PAC_PREFETCH(addr) ((void) (addr))
#endif

/* Starts loading the bucket of 'hash'. */
static inline void
pac_flow_prefetch_bucket(const struct pac *pac, uint32_t hash)
{
    PAC_PREFETCH(&pac->buckets[hash & pac->bucket_mask]);
}

/* Starts loading the first flow in the bucket of 'hash' (both cache lines:
 * the key, then the flags and counters every packet updates), and its
 * window state.  Best after pac_flow_prefetch_bucket() had time to land. */
static inline void
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
pac_addr_eq(const uint8_t a[16], const uint8_t b[16])
{
    uint64_t wa[2], wb[2];

    memcpy(wa, a, 16);
    memcpy(wb, b, 16);
    return !((wa[0] ^ wb[0]) | (wa[1] ^ wb[1]));
}

static inline bool
pac_flow_matches(const struct pac_flow *f, const uint8_t vm_addr[16],
                 uint16_t vm_port, const uint8_t peer_addr[16],
                 uint16_t peer_port)
{
    return (f->vm_port == vm_port && f->peer_port == peer_port
            && pac_addr_eq(f->vm_addr, vm_addr)
            && pac_addr_eq(f->peer_addr, peer_addr));
}

/* Returns the index of the flow with the given key, or PAC_NONE.  'hash'
 * is the key's pac_flow_hash(). */
static inline uint32_t
pac_flow_lookup(const struct pac *pac, const uint8_t vm_addr[16],
                uint16_t vm_port, const uint8_t peer_addr[16],
                uint16_t peer_port, uint32_t hash)
{
    for (uint32_t i = pac->buckets[hash & pac->bucket_mask]; i != PAC_NONE;
         i = pac->flows[i].hash_next) {
        const struct pac_flow *f = &pac->flows[i];

        if (pac_flow_matches(f, vm_addr, vm_port, peer_addr, peer_port)) {
            return i;
        }
    }
    return PAC_NONE;
}

#endif /* pac-flow.h */
