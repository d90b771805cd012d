/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of libpac's knob table (lib/pac-knobs.c) against the functions
 * that use it: pac_config_init() gives each row's default,
 * pac_config_check() accepts exactly each row's range, pac_config_equal()
 * sees a change to every row, and no member of struct pac_config is left
 * out of both the rows and pac_config_equal(); pac_knob_parse() takes each
 * row's values and refuses the rest in the words operators see, and so
 * does pac_knob_parse_levels() for the map of MLFQ levels; the rules between
 * values (pac_rules[]) hold for pac_config_check() and the map alike.  The
 * table's copies outside libpac, and ovs-pac-agent's use of its print, are
 * checked by tests/check-pac-knobs.py. */

#include "pac.h"

#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include "pac-test.h"

static void
test_knob_rows(void)
{
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *k = &pac_knobs[i];

        PAC_CHECK(k->name && *k->name && k->field && *k->field);
        PAC_CHECK(k->unit && *k->unit && k->doc && *k->doc);
        PAC_CHECK(pac_knob_find(k->name) == k);
        PAC_CHECK(k->min <= k->max);
        PAC_CHECK(k->db_min <= k->db_max);
        PAC_CHECK(k->offset < sizeof(struct pac_config));
        if (k->type != PAC_KNOB_LEVELS) {
            PAC_CHECK(k->value_min == 0 && k->value_max == 0);
        }
        switch (k->type) {
        case PAC_KNOB_U32:
            /* The database may only narrow libpac's range. */
            PAC_CHECK(k->min <= k->db_min && k->db_max <= k->max);
            PAC_CHECK(k->db_min <= k->def && k->def <= k->db_max);
            if (k->where == PAC_KNOB_OTHER_CONFIG) {
                /* ovs-vswitchd parses the key with the database range;
                 * a narrower one would hide libpac's. */
                PAC_CHECK(k->min == k->db_min && k->max == k->db_max);
            }
            break;
        case PAC_KNOB_BOOL:
            PAC_CHECK(k->min == 0 && k->max == 1);
            PAC_CHECK(k->def <= 1);
            break;
        case PAC_KNOB_ENUM:
            /* Values 0 to 'max', each with its own name, found by it. */
            PAC_CHECK(k->min == 0 && k->db_min == 0 && k->db_max == k->max);
            PAC_CHECK(k->def <= k->max && k->names);
            for (uint32_t v = 0; v <= k->max; v++) {
                PAC_CHECK(k->names[v] && *k->names[v]);
                PAC_CHECK_EQ(pac_knob_enum_value(k, k->names[v]), v);
            }
            PAC_CHECK_EQ(pac_knob_enum_value(k, ""), -1);
            PAC_CHECK_EQ(pac_knob_enum_value(k, "no such name"), -1);
            break;
        case PAC_KNOB_LEVELS:
            /* n_levels from 1 to PAC_MAX_LEVELS; level numbers from 1 to
             * n_levels - 1. */
            PAC_CHECK(k->where == PAC_KNOB_COLUMN);
            PAC_CHECK(!strcmp(k->field, "n_levels"));
            PAC_CHECK(k->offset == offsetof(struct pac_config, n_levels));
            PAC_CHECK_EQ(k->min, 1);
            PAC_CHECK_EQ(k->max, PAC_MAX_LEVELS);
            PAC_CHECK_EQ(k->db_min, 1);
            PAC_CHECK_EQ(k->db_max, k->max - 1);
            PAC_CHECK(k->value_min >= 1 && k->value_min <= k->value_max);
            PAC_CHECK(k->value_min <= k->def && k->def <= k->value_max);
            break;
        default:
            PAC_CHECK(!"unknown knob type");
        }
        for (size_t j = 0; j < i; j++) {
            PAC_CHECK(strcmp(k->name, pac_knobs[j].name));
            PAC_CHECK(k->offset != pac_knobs[j].offset);
        }
    }
    PAC_CHECK(pac_knob_find("hash_seed") == NULL);
    PAC_CHECK(pac_knob_find("") == NULL);
}

static void
test_knob_defaults(void)
{
    struct pac_config cfg;

    memset(&cfg, 0xa5, sizeof cfg);
    pac_config_init(&cfg);
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *k = &pac_knobs[i];

        if (k->type == PAC_KNOB_LEVELS) {
            PAC_CHECK_EQ(cfg.n_levels, 2);
            PAC_CHECK_EQ(cfg.level_bytes[0], k->def);
        } else {
            PAC_CHECK_EQ(pac_knob_get(&cfg, k), k->def);
        }
    }
    PAC_CHECK(pac_config_check(&cfg, NULL, 0));
}

/* Sets 'k' to 'value' in a default configuration and returns
 * pac_config_check()'s verdict, with its message in 'err'. */
static bool
check_value(const struct pac_knob *k, uint32_t value, char *err,
            size_t err_size)
{
    struct pac_config cfg;

    pac_config_init(&cfg);
    if (k->type == PAC_KNOB_LEVELS) {
        cfg.n_levels = value;
        for (uint32_t i = 0; i + 1 < value && i + 1 < PAC_MAX_LEVELS; i++) {
            cfg.level_bytes[i] = 1000 * (i + 1);
        }
    } else {
        pac_knob_set(&cfg, k, value);
    }
    if (err) {
        err[0] = '\0';
    }
    return pac_config_check(&cfg, err, err_size);
}

static void
test_knob_ranges(void)
{
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *k = &pac_knobs[i];
        char err[256], expected[256];

        if (k->type == PAC_KNOB_BOOL) {
            continue;
        }
        PAC_CHECK(check_value(k, k->min, err, sizeof err));
        PAC_CHECK(check_value(k, k->max, err, sizeof err));
        PAC_CHECK(check_value(k, k->db_min, err, sizeof err));
        PAC_CHECK(check_value(k, k->db_max, err, sizeof err));
        if (k->min > 0) {
            PAC_CHECK(!check_value(k, k->min - 1, err, sizeof err));
            snprintf(expected, sizeof expected,
                     "%s: %"PRIu32" is out of range [%"PRIu32", %"PRIu32"]",
                     k->field, k->min - 1, k->min, k->max);
            if (strcmp(err, expected)) {
                fprintf(stderr, "got \"%s\", expected \"%s\"\n",
                        err, expected);
                PAC_CHECK(!"unexpected message");
            }
        }
        if (k->max < UINT32_MAX) {
            PAC_CHECK(!check_value(k, k->max + 1, err, sizeof err));
            snprintf(expected, sizeof expected,
                     "%s: %"PRIu32" is out of range [%"PRIu32", %"PRIu32"]",
                     k->field, k->max + 1, k->min, k->max);
            if (strcmp(err, expected)) {
                fprintf(stderr, "got \"%s\", expected \"%s\"\n",
                        err, expected);
                PAC_CHECK(!"unexpected message");
            }
        }
    }
}

/* Messages that operators and tests rely on, word for word. */
static void
test_knob_messages(void)
{
    struct pac_config cfg;
    char err[256];

    pac_config_init(&cfg);
    cfg.max_flows = 0;
    PAC_CHECK(!pac_config_check(&cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "max_flows: 0 is out of range [1, 4194304]"));

    pac_config_init(&cfg);
    cfg.threshold = 10;
    PAC_CHECK(!pac_config_check(&cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "threshold: 10 is out of range [3000, "
                      "1073741824]"));

    pac_config_init(&cfg);
    cfg.n_levels = 9;
    PAC_CHECK(!pac_config_check(&cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "n_levels: 9 is out of range [1, 8]"));

    /* With several bad fields, the first in the table's order is named. */
    pac_config_init(&cfg);
    cfg.loss_floor_permille = 0;
    cfg.max_hold_us = 0;
    cfg.n_levels = 0;
    PAC_CHECK(!pac_config_check(&cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "n_levels: 0 is out of range [1, 8]"));
}

/* pac_knob_parse(): what each type takes, what it refuses and the words it
 * refuses with, for every row, from the row's own range and names. */
static void
test_knob_parse(void)
{
    char err[256], text[32];
    uint32_t x;

    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *k = &pac_knobs[i];

        x = 12345;
        switch (k->type) {
        case PAC_KNOB_BOOL:
            PAC_CHECK(pac_knob_parse(k, "true", &x, err, sizeof err));
            PAC_CHECK_EQ(x, 1);
            PAC_CHECK(pac_knob_parse(k, "false", &x, err, sizeof err));
            PAC_CHECK_EQ(x, 0);
            PAC_CHECK(!pac_knob_parse(k, "yes", &x, err, sizeof err));
            PAC_CHECK(!strcmp(err, "\"yes\" is not true or false"));
            PAC_CHECK(!pac_knob_parse(k, "1", &x, NULL, 0));
            PAC_CHECK_EQ(x, 0);
            break;

        case PAC_KNOB_ENUM:
            for (uint32_t v = 0; v <= k->max; v++) {
                PAC_CHECK(pac_knob_parse(k, k->names[v], &x, err,
                                         sizeof err));
                PAC_CHECK_EQ(x, v);
            }
            PAC_CHECK(!pac_knob_parse(k, "0", &x, err, sizeof err));
            PAC_CHECK(!strncmp(err, "\"0\" is not ", 11));
            break;

        case PAC_KNOB_U32:
            snprintf(text, sizeof text, "%"PRIu32, k->db_min);
            PAC_CHECK(pac_knob_parse(k, text, &x, err, sizeof err));
            PAC_CHECK_EQ(x, k->db_min);
            snprintf(text, sizeof text, "%"PRIu32, k->db_max);
            PAC_CHECK(pac_knob_parse(k, text, &x, err, sizeof err));
            PAC_CHECK_EQ(x, k->db_max);
            snprintf(text, sizeof text, "%llu",
                     (unsigned long long) k->db_max + 1);
            PAC_CHECK(!pac_knob_parse(k, text, &x, err, sizeof err));
            PAC_CHECK_EQ(x, k->db_max);
            if (k->db_min) {
                snprintf(text, sizeof text, "%"PRIu32, k->db_min - 1);
                PAC_CHECK(!pac_knob_parse(k, text, &x, err, sizeof err));
            }
            /* What strtoull() alone would take. */
            PAC_CHECK(!pac_knob_parse(k, "", &x, err, sizeof err));
            PAC_CHECK(!pac_knob_parse(k, " 5", &x, err, sizeof err));
            PAC_CHECK(!pac_knob_parse(k, "-1", &x, err, sizeof err));
            PAC_CHECK(!pac_knob_parse(k, "+5", &x, err, sizeof err));
            PAC_CHECK(!pac_knob_parse(k, "5x", &x, err, sizeof err));
            PAC_CHECK(!pac_knob_parse(k, "99999999999999999999999", &x,
                                      err, sizeof err));
            PAC_CHECK_EQ(x, k->db_max);
            break;

        case PAC_KNOB_LEVELS:
            PAC_CHECK(!pac_knob_parse(k, "1", &x, err, sizeof err));
            PAC_CHECK(!strcmp(err, "is a map"));
            break;
        }
    }

    /* The words operators see in status:pac, prefixed there with
     * "other_config:KEY: ". */
    const struct pac_knob *policy = pac_knob_find("policy");
    PAC_CHECK(!pac_knob_parse(policy, "fast", &x, err, sizeof err));
    PAC_CHECK(!strcmp(err, "\"fast\" is not pac, rwnd or rdtcp"));
    const struct pac_knob *drops = pac_knob_find("loss-floor-permille");
    PAC_CHECK(drops != NULL);
    PAC_CHECK(!pac_knob_parse(drops, "1001", &x, err, sizeof err));
    PAC_CHECK(!strcmp(err, "\"1001\" is not an integer in [100, 1000]"));

    /* A short buffer gets a truncated, terminated message. */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    PAC_CHECK(!pac_knob_parse(policy, "fast", &x, tiny, sizeof tiny));
    PAC_CHECK(!strcmp(tiny, "\"fast\" "));
}

/* pac_rules[]: each names a knob of its kind's type; pac_rule_check() and
 * pac_config_check() refuse what breaks it, in its words. */
static void
test_rules(void)
{
    PAC_CHECK(pac_n_rules >= 1);
    for (size_t i = 0; i < pac_n_rules; i++) {
        const struct pac_rule *r = &pac_rules[i];
        const struct pac_knob *k = pac_knob_find(r->knob);
        struct pac_config cfg;
        char err[256], expected[256];

        PAC_CHECK(r->name && *r->name && r->message && *r->message);
        PAC_CHECK(r->doc && *r->doc);
        for (size_t j = 0; j < i; j++) {
            PAC_CHECK(strcmp(r->name, pac_rules[j].name));
        }
        PAC_CHECK(k != NULL);

        pac_config_init(&cfg);
        PAC_CHECK(pac_rule_check(r, &cfg, err, sizeof err));

        switch (r->kind) {
        case PAC_RULE_INCREASING:
            PAC_CHECK(k->type == PAC_KNOB_LEVELS);
            cfg.n_levels = 4;
            cfg.level_bytes[0] = 1000;
            cfg.level_bytes[1] = 5000;
            cfg.level_bytes[2] = 6000;
            PAC_CHECK(pac_rule_check(r, &cfg, NULL, 0));
            PAC_CHECK(pac_config_check(&cfg, NULL, 0));
            cfg.level_bytes[2] = 5000;
            PAC_CHECK(!pac_rule_check(r, &cfg, err, sizeof err));
            snprintf(expected, sizeof expected, r->message,
                     2u, 5000u, 3u, 5000u);
            PAC_CHECK(!strcmp(err, expected));
            PAC_CHECK(!pac_config_check(&cfg, err, sizeof err));
            PAC_CHECK(!strncmp(err, "level_bytes: ", 13));
            PAC_CHECK(!strcmp(err + 13, expected));
            /* Levels beyond n_levels do not count. */
            cfg.n_levels = 3;
            PAC_CHECK(pac_rule_check(r, &cfg, NULL, 0));
            break;
        default:
            PAC_CHECK(!"unknown rule kind");
        }
    }

    /* The words operators see in status:pac and the agent's errors. */
    struct pac_config cfg;
    char err[256];

    pac_config_init(&cfg);
    cfg.n_levels = 3;
    cfg.level_bytes[0] = 30000;
    cfg.level_bytes[1] = 10000;
    PAC_CHECK(!pac_config_check(&cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "level_bytes: thresholds must increase with the "
                      "level (level 1: 30000 bytes, level 2: 10000 bytes)"));
}

/* Parses 'n' entries of 'levels' and 'bytes' with pac_knob_parse_levels()
 * into a default configuration 'cfg'; returns its verdict, the reason in
 * 'err'. */
static bool
parse_levels(const int64_t levels[], const int64_t bytes[], size_t n,
             struct pac_config *cfg, char *err, size_t err_size)
{
    const struct pac_knob *k = pac_knob_find("mlfq_thresholds");

    pac_config_init(cfg);
    if (err) {
        err[0] = '\0';
    }
    return pac_knob_parse_levels(k, levels, bytes, n, cfg, err, err_size);
}

static void
test_knob_parse_levels(void)
{
    const struct pac_knob *k = pac_knob_find("mlfq_thresholds");
    int64_t levels[PAC_MAX_LEVELS + 1], bytes[PAC_MAX_LEVELS + 1];
    struct pac_config cfg;
    char err[256];

    PAC_CHECK(k && k->type == PAC_KNOB_LEVELS);

    /* Empty: libpac's default levels stay. */
    PAC_CHECK(parse_levels(levels, bytes, 0, &cfg, err, sizeof err));
    PAC_CHECK_EQ(cfg.n_levels, 2);
    PAC_CHECK_EQ(cfg.level_bytes[0], k->def);

    /* In any order. */
    levels[0] = 2, bytes[0] = 200000;
    levels[1] = 1, bytes[1] = 20000;
    PAC_CHECK(parse_levels(levels, bytes, 2, &cfg, err, sizeof err));
    PAC_CHECK_EQ(cfg.n_levels, 3);
    PAC_CHECK_EQ(cfg.level_bytes[0], 20000);
    PAC_CHECK_EQ(cfg.level_bytes[1], 200000);
    PAC_CHECK(pac_config_check(&cfg, NULL, 0));

    /* The most levels, at the edges of the byte range. */
    for (size_t i = 0; i < k->db_max; i++) {
        levels[i] = i + 1;
        bytes[i] = i + 1 < k->db_max ? k->value_min + i : k->value_max;
    }
    PAC_CHECK(parse_levels(levels, bytes, k->db_max, &cfg, err,
                           sizeof err));
    PAC_CHECK_EQ(cfg.n_levels, PAC_MAX_LEVELS);
    PAC_CHECK(pac_config_check(&cfg, NULL, 0));

    /* One too many. */
    levels[k->db_max] = k->db_max + 1;
    bytes[k->db_max] = k->value_max;
    PAC_CHECK(!parse_levels(levels, bytes, k->db_max + 1, &cfg, err,
                            sizeof err));
    PAC_CHECK(!strcmp(err, "at most 7 levels may be given"));

    /* Gaps and repeats. */
    levels[0] = 1, bytes[0] = 10000;
    levels[1] = 3, bytes[1] = 30000;
    PAC_CHECK(!parse_levels(levels, bytes, 2, &cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "levels must be 1 to 2 without gaps "
                      "(level 2 is missing)"));
    levels[1] = 1;
    PAC_CHECK(!parse_levels(levels, bytes, 2, &cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "levels must be 1 to 2 without gaps "
                      "(level 2 is missing)"));
    levels[0] = 0;
    PAC_CHECK(!parse_levels(levels, bytes, 1, &cfg, err, sizeof err));

    /* Byte counts out of range. */
    levels[0] = 1, bytes[0] = (int64_t) k->value_min - 1;
    PAC_CHECK(!parse_levels(levels, bytes, 1, &cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "level 1: 0 bytes is out of range "
                      "[1, 4294967295]"));
    bytes[0] = (int64_t) k->value_max + 1;
    PAC_CHECK(!parse_levels(levels, bytes, 1, &cfg, err, sizeof err));
    bytes[0] = -1;
    PAC_CHECK(!parse_levels(levels, bytes, 1, &cfg, err, sizeof err));

    /* The rule, in its words. */
    levels[0] = 1, bytes[0] = 30000;
    levels[1] = 2, bytes[1] = 10000;
    PAC_CHECK(!parse_levels(levels, bytes, 2, &cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "thresholds must increase with the level "
                      "(level 1: 30000 bytes, level 2: 10000 bytes)"));
    bytes[1] = 30000;
    PAC_CHECK(!parse_levels(levels, bytes, 2, &cfg, NULL, 0));

    /* Not a map knob. */
    PAC_CHECK(!pac_knob_parse_levels(pac_knob_find("threshold"), levels,
                                     bytes, 1, &cfg, err, sizeof err));
    PAC_CHECK(!strcmp(err, "is not a map"));
}

static void
test_knob_equal(void)
{
    struct pac_config a, b;

    pac_config_init(&a);
    pac_config_init(&b);
    PAC_CHECK(pac_config_equal(&a, &b));

    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *k = &pac_knobs[i];
        uint32_t v = pac_knob_get(&a, k);

        b = a;
        if (k->type == PAC_KNOB_LEVELS) {
            b.n_levels = v + 1;
        } else {
            pac_knob_set(&b, k, k->type == PAC_KNOB_BOOL ? !v : v + 1);
        }
        if (pac_config_equal(&a, &b)) {
            fprintf(stderr, "%s: a change is not seen\n", k->name);
            PAC_CHECK(!"change not seen");
        }
    }

    b = a;
    b.level_bytes[0]++;
    PAC_CHECK(!pac_config_equal(&a, &b));
    b = a;
    b.hash_seed++;
    PAC_CHECK(!pac_config_equal(&a, &b));

    /* Thresholds of levels not in use do not count. */
    b = a;
    b.level_bytes[PAC_MAX_LEVELS - 2] = 12345;
    PAC_CHECK(pac_config_equal(&a, &b));
    a.n_levels = b.n_levels = PAC_MAX_LEVELS;
    PAC_CHECK(!pac_config_equal(&a, &b));
}

/* One member of struct pac_config that pac_config_equal() compares. */
struct span {
    size_t offset, size, align;
};

static int
compare_spans(const void *a_, const void *b_)
{
    const struct span *a = a_, *b = b_;

    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* Every byte of struct pac_config is a knob's, level_bytes[]'s, hash_seed's
 * or padding: a member added without a knob row (and so not compared by
 * pac_config_equal()) shows as a gap wider than the alignment of what
 * follows it.  (A bool added into existing padding would not.) */
static void
test_knob_coverage(void)
{
    struct span spans[64];
    size_t n = 0;

    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *k = &pac_knobs[i];

        spans[n++] = k->type == PAC_KNOB_BOOL
            ? (struct span) { k->offset, sizeof(bool), alignof(bool) }
            : (struct span) { k->offset, sizeof(uint32_t),
                              alignof(uint32_t) };
    }
    spans[n++] = (struct span) {
        offsetof(struct pac_config, level_bytes),
        sizeof ((struct pac_config *) NULL)->level_bytes, alignof(uint32_t)
    };
    spans[n++] = (struct span) {
        offsetof(struct pac_config, hash_seed), sizeof(uint64_t),
        alignof(uint64_t)
    };
    spans[n++] = (struct span) {
        sizeof(struct pac_config), 0, alignof(struct pac_config)
    };
    qsort(spans, n, sizeof *spans, compare_spans);

    size_t end = 0;
    for (size_t i = 0; i < n; i++) {
        PAC_CHECK(spans[i].offset >= end);
        if (spans[i].offset - end >= spans[i].align) {
            fprintf(stderr, "bytes %zu to %zu of struct pac_config belong "
                    "to no knob\n", end, spans[i].offset - 1);
            PAC_CHECK(!"struct pac_config member without a knob");
        }
        end = spans[i].offset + spans[i].size;
    }
}

int
main(void)
{
    PAC_RUN_TEST(test_knob_rows);
    PAC_RUN_TEST(test_knob_defaults);
    PAC_RUN_TEST(test_knob_ranges);
    PAC_RUN_TEST(test_knob_messages);
    PAC_RUN_TEST(test_knob_parse);
    PAC_RUN_TEST(test_rules);
    PAC_RUN_TEST(test_knob_parse_levels);
    PAC_RUN_TEST(test_knob_equal);
    PAC_RUN_TEST(test_knob_coverage);
    PAC_TEST_MAIN_END;
}
