/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The event trace: one line per event worth noting, stamped with the
 * simulated time in microseconds, written to the configuration's 'trace'
 * stream if it has one. */

#include <stdarg.h>
#include <stdio.h>

#include "sim-private.h"

void
sim_trace(struct sim *sim, const char *fmt, ...)
{
    if (!sim->cfg.trace) {
        return;
    }

    va_list args;
    fprintf(sim->cfg.trace, "%14.3f ", sim->now / 1000.0);
    va_start(args, fmt);
    vfprintf(sim->cfg.trace, fmt, args);
    va_end(args);
    fputc('\n', sim->cfg.trace);
}
