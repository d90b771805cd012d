/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Configuration defaults and validation. */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "pac-private.h"

/* Defaults and ranges come from pac_knobs[], the rules between values from
 * pac_rules[] (pac-knobs.c). */

void
pac_config_init(struct pac_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *knob = &pac_knobs[i];

        if (knob->type == PAC_KNOB_LEVELS) {
            cfg->n_levels = 2;
            cfg->level_bytes[0] = knob->def;
        } else {
            pac_knob_set(cfg, knob, knob->def);
        }
    }
    cfg->hash_seed = 0;         /* Random, per instance. */
}

static bool
config_error(char *err, size_t err_size, const char *format, ...)
{
    if (err && err_size) {
        va_list args;

        va_start(args, format);
        vsnprintf(err, err_size, format, args);
        va_end(args);
    }
    return false;
}

static bool
check_range(const char *name, uint32_t value, uint32_t min, uint32_t max,
            char *err, size_t err_size)
{
    if (value < min || value > max) {
        return config_error(err, err_size,
                            "%s: %"PRIu32" is out of range [%"PRIu32
                            ", %"PRIu32"]", name, value, min, max);
    }
    return true;
}

bool
pac_rule_check(const struct pac_rule *rule, const struct pac_config *cfg,
               char *err, size_t err_size)
{
    switch (rule->kind) {
    case PAC_RULE_INCREASING:
        /* level_bytes[i] is where level i + 1 starts. */
        for (uint32_t i = 1; i + 1 < cfg->n_levels && i + 1 < PAC_MAX_LEVELS;
             i++) {
            if (cfg->level_bytes[i] <= cfg->level_bytes[i - 1]) {
                return config_error(err, err_size, rule->message,
                                    i, cfg->level_bytes[i - 1],
                                    i + 1, cfg->level_bytes[i]);
            }
        }
        return true;
    }
    return config_error(err, err_size, "%s: unknown rule kind", rule->name);
}

/* The member of struct pac_config that pac_config_check() names when 'rule'
 * fails. */
static const char *
rule_field(const struct pac_rule *rule)
{
    switch (rule->kind) {
    case PAC_RULE_INCREASING:
        return "level_bytes";
    }
    return rule->name;
}

bool
pac_config_check(const struct pac_config *cfg, char *err, size_t err_size)
{
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *knob = &pac_knobs[i];

        if (knob->type != PAC_KNOB_BOOL
            && !check_range(knob->field, pac_knob_get(cfg, knob),
                            knob->min, knob->max, err, err_size)) {
            return false;
        }
    }
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *knob = &pac_knobs[i];

        if (knob->type != PAC_KNOB_LEVELS) {
            continue;
        }
        for (uint32_t j = 0; j + 1 < cfg->n_levels; j++) {
            uint32_t bytes = cfg->level_bytes[j];

            if (bytes < knob->value_min || bytes > knob->value_max) {
                return config_error(err, err_size,
                                    "level_bytes[%"PRIu32"]: %"PRIu32" is "
                                    "out of range [%"PRIu32", %"PRIu32"]",
                                    j, bytes, knob->value_min,
                                    knob->value_max);
            }
        }
    }
    for (size_t i = 0; i < pac_n_rules; i++) {
        const struct pac_rule *rule = &pac_rules[i];
        char reason[128];

        if (!pac_rule_check(rule, cfg, reason, sizeof reason)) {
            return config_error(err, err_size, "%s: %s",
                                rule_field(rule), reason);
        }
    }
    return true;
}

bool
pac_config_equal(const struct pac_config *a, const struct pac_config *b)
{
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *knob = &pac_knobs[i];

        if (pac_knob_get(a, knob) != pac_knob_get(b, knob)) {
            return false;
        }
    }
    /* The rows compared n_levels (the PAC_KNOB_LEVELS row); level_bytes[]
     * beyond the levels in use is ignored, as libpac does. */
    for (uint32_t i = 0; i + 1 < a->n_levels && i + 1 < PAC_MAX_LEVELS;
         i++) {
        if (a->level_bytes[i] != b->level_bytes[i]) {
            return false;
        }
    }
    return a->hash_seed == b->hash_seed;
}

size_t
pac_memory_size(const struct pac_config *cfg)
{
    size_t n_buckets = 1;

    while (n_buckets < cfg->max_flows) {
        n_buckets <<= 1;
    }
    return (sizeof(struct pac)
            + (size_t) cfg->max_flows * (sizeof(struct pac_flow)
                                         + sizeof(struct pac_flow_wnd)
                                         + sizeof(struct pac_rr_node)
                                         + sizeof(uint32_t))
            + n_buckets * sizeof(uint32_t)
            + (size_t) cfg->max_held * sizeof(struct pac_held));
}

const char *
pac_release_cause_name(enum pac_release_cause cause)
{
    switch (cause) {
    case PAC_REL_FIT:
        return "fit";
    case PAC_REL_MAX_HOLD:
        return "max_hold";
    case PAC_REL_CAP:
        return "cap";
    case PAC_REL_FLUSH:
        return "flush";
    case PAC_N_REL_CAUSES:
    default:
        return "unknown";
    }
}
