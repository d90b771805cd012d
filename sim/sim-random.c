/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The simulator's only source of randomness: a splitmix64 generator seeded
 * from the configuration (sim_run()).  It draws the initial sequence
 * numbers, timestamp clock origins, ephemeral ports and the host send
 * jitter, so a run depends only on its configuration. */

#include "sim-private.h"

/* splitmix64. */
uint64_t
sim_random(struct sim *sim)
{
    uint64_t z = (sim->rng += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
