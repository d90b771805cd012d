/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#include "sim-heap.h"

#include <stdio.h>
#include <stdlib.h>

void
sim_heap_init(struct sim_heap *h)
{
    h->ev = NULL;
    h->n = 0;
    h->cap = 0;
    h->next_seq = 0;
}

void
sim_heap_destroy(struct sim_heap *h)
{
    free(h->ev);
    sim_heap_init(h);
}

static bool
sim_event_before(const struct sim_event *a, const struct sim_event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

void
sim_heap_push(struct sim_heap *h, uint64_t time, uint32_t type,
              uint32_t idx, void *ptr)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 1024;
        h->ev = realloc(h->ev, h->cap * sizeof *h->ev);
        if (!h->ev) {
            fprintf(stderr, "sim: out of memory\n");
            abort();
        }
    }

    struct sim_event e = {
        .time = time, .seq = h->next_seq++, .ptr = ptr,
        .type = type, .idx = idx,
    };
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!sim_event_before(&e, &h->ev[parent])) {
            break;
        }
        h->ev[i] = h->ev[parent];
        i = parent;
    }
    h->ev[i] = e;
}

bool
sim_heap_pop(struct sim_heap *h, struct sim_event *out)
{
    if (!h->n) {
        return false;
    }
    *out = h->ev[0];

    struct sim_event last = h->ev[--h->n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->n) {
            break;
        }
        if (child + 1 < h->n
            && sim_event_before(&h->ev[child + 1], &h->ev[child])) {
            child++;
        }
        if (!sim_event_before(&h->ev[child], &last)) {
            break;
        }
        h->ev[i] = h->ev[child];
        i = child;
    }
    if (h->n) {
        h->ev[i] = last;
    }
    return true;
}
