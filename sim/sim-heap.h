/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef SIM_HEAP_H
#define SIM_HEAP_H 1

/* The simulator's event queue: a binary min-heap ordered by time, then by
 * insertion order, so that events due at the same instant run first in,
 * first out and every run is reproducible. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_event {
    uint64_t time;              /* Nanoseconds. */
    uint64_t seq;               /* Insertion order, breaks ties. */
    void *ptr;                  /* Event argument (e.g. a packet). */
    uint32_t type;              /* What happens. */
    uint32_t idx;               /* Event argument (e.g. a connection). */
};

struct sim_heap {
    struct sim_event *ev;
    size_t n;
    size_t cap;
    uint64_t next_seq;
};

void sim_heap_init(struct sim_heap *);
void sim_heap_destroy(struct sim_heap *);
void sim_heap_push(struct sim_heap *, uint64_t time, uint32_t type,
                   uint32_t idx, void *ptr);
bool sim_heap_pop(struct sim_heap *, struct sim_event *);

#endif /* sim-heap.h */
