/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Timers on top of the event queue: the senders' and the receiver's
 * retransmission and delayed-ACK timers and libpac's run timer.  Each timer
 * keeps at most one live event in the queue (see struct sim_timer). */

#include "sim-private.h"

void
sim_timer_init(struct sim_timer *t)
{
    t->deadline = SIM_NEVER;
    t->queued_at = 0;
    t->queued = false;
}

void
sim_timer_arm(struct sim *sim, struct sim_timer *t, uint64_t deadline,
              uint32_t type, uint32_t idx)
{
    t->deadline = deadline;
    if (!t->queued || deadline < t->queued_at) {
        t->queued = true;
        t->queued_at = deadline;
        sim_heap_push(&sim->heap, deadline, type, idx, NULL);
    }
}

void
sim_timer_disarm(struct sim_timer *t)
{
    t->deadline = SIM_NEVER;
}

/* Called for a timer event 'ev'.  Returns true if the timer expires now;
 * re-queues it if it was pushed later, and ignores superseded events. */
bool
sim_timer_fire(struct sim *sim, struct sim_timer *t,
               const struct sim_event *ev)
{
    if (!t->queued || ev->time != t->queued_at) {
        return false;
    }
    t->queued = false;
    if (t->deadline == SIM_NEVER) {
        return false;
    }
    if (t->deadline > sim->now) {
        t->queued = true;
        t->queued_at = t->deadline;
        sim_heap_push(&sim->heap, t->deadline, ev->type, ev->idx, NULL);
        return false;
    }
    t->deadline = SIM_NEVER;
    return true;
}
