/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* libpac's verdict on knob values, for tests/check-pac-knobs.py to compare
 * ovs-pac-agent's with.  Reads lines "NAME<TAB>VALUE" on stdin and answers
 * each with one line on stdout: "ok VALUE" or "error: REASON".
 *
 * NAME is a knob of pac_knobs[].  For a "levels" knob VALUE is the map the
 * database would hold, "LEVEL=BYTES,LEVEL=BYTES,..." (decimal, any
 * order), parsed with pac_knob_parse_levels(); for the others it is the text
 * an operator writes, parsed with pac_knob_parse().  Then the configuration
 * (libpac's defaults and that value) must pass pac_config_check(), as in
 * ovs-vswitchd.  REASON is the parser's or pac_config_check()'s message;
 * VALUE in the answer is the knob's value as "ovs-appctl pac/show" prints
 * it (e.g. "{1=20000, 2=200000}", "true", "rdtcp", "96000").
 *
 * Exits 2 on a line it cannot read. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pac.h"

static void
fail(const char *line, const char *why)
{
    fprintf(stderr, "pac-knobs-check: %s: %s\n", line, why);
    exit(2);
}

/* Parses "L=B,L=B,..." into 'levels' and 'bytes' (room for 'max').  Returns
 * the number of entries. */
static size_t
parse_map(const char *line, char *text, int64_t levels[], int64_t bytes[],
          size_t max)
{
    size_t n = 0;

    for (char *save = NULL, *entry = strtok_r(text, ",", &save); entry;
         entry = strtok_r(NULL, ",", &save)) {
        char *eq, *end;

        if (n >= max || !(eq = strchr(entry, '='))) {
            fail(line, "not a map");
        }
        *eq = '\0';
        errno = 0;
        levels[n] = strtoll(entry, &end, 10);
        if (errno || *end || end == entry) {
            fail(line, "bad level");
        }
        bytes[n] = strtoll(eq + 1, &end, 10);
        if (errno || *end || end == eq + 1) {
            fail(line, "bad byte count");
        }
        n++;
    }
    return n;
}

static void
put_value(const struct pac_config *cfg, const struct pac_knob *knob)
{
    uint32_t value = pac_knob_get(cfg, knob);

    switch (knob->type) {
    case PAC_KNOB_U32:
        printf("%"PRIu32, value);
        break;
    case PAC_KNOB_BOOL:
        printf("%s", value ? "true" : "false");
        break;
    case PAC_KNOB_ENUM:
        printf("%s", knob->names[value]);
        break;
    case PAC_KNOB_LEVELS:
        putchar('{');
        for (uint32_t i = 0; i + 1 < value; i++) {
            printf("%s%"PRIu32"=%"PRIu32, i ? ", " : "", i + 1,
                   cfg->level_bytes[i]);
        }
        putchar('}');
        break;
    }
}

int
main(void)
{
    char line[4096];

    while (fgets(line, sizeof line, stdin)) {
        char *tab = strchr(line, '\t');
        const struct pac_knob *knob;
        struct pac_config cfg;
        char err[256];
        bool ok;

        line[strcspn(line, "\n")] = '\0';
        if (!tab) {
            fail(line, "no tab");
        }
        *tab = '\0';
        knob = pac_knob_find(line);
        if (!knob) {
            fail(line, "no such knob");
        }

        pac_config_init(&cfg);
        if (knob->type == PAC_KNOB_LEVELS) {
            int64_t levels[64], bytes[64];
            size_t n = parse_map(line, tab + 1, levels, bytes, 64);

            ok = pac_knob_parse_levels(knob, levels, bytes, n, &cfg,
                                       err, sizeof err);
        } else {
            uint32_t x;

            ok = pac_knob_parse(knob, tab + 1, &x, err, sizeof err);
            if (ok) {
                pac_knob_set(&cfg, knob, x);
            }
        }
        ok = ok && pac_config_check(&cfg, err, sizeof err);
        if (ok) {
            printf("ok ");
            put_value(&cfg, knob);
            printf("\n");
        } else {
            printf("error: %s\n", err);
        }
        fflush(stdout);
    }
    return 0;
}
