/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Configuration defaults and validation. */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "pac-private.h"

/* Limits.  The flow and held-packet caps bound memory (see
 * pac_memory_size()); the idle timeout must stay under half the 32-bit
 * microsecond wrap (71 minutes). */
#define PAC_MIN_THRESHOLD 3000
#define PAC_MAX_THRESHOLD (1u << 30)
#define PAC_MAX_FLOWS_LIMIT (1u << 22)
#define PAC_MAX_HELD_LIMIT (1u << 20)
#define PAC_MAX_IDLE_TIMEOUT_MS (30u * 60 * 1000)
#define PAC_MAX_HOLD_LIMIT_US (10u * 1000 * 1000)

void
pac_config_init(struct pac_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->threshold = 96000;
    cfg->n_levels = 2;
    cfg->level_bytes[0] = 20000;
    cfg->ecn = true;
    cfg->max_hold_us = 20000;
    cfg->max_hold_trigger_us = 1000000;
    cfg->max_flows = 16384;
    cfg->max_held = 65536;
    cfg->idle_timeout_ms = 300000;
    cfg->init_window_segs = 10;
    cfg->default_mss = 1460;
    cfg->base_rtt_us = 100;
    cfg->lambda_permille = 800;
    cfg->loss_floor_permille = 775;
    cfg->clamp_window = true;
    cfg->deviation_correction = false;
    cfg->hash_seed = 0x5ac0ffee;
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
pac_config_check(const struct pac_config *cfg, char *err, size_t err_size)
{
    if (!check_range("threshold", cfg->threshold, PAC_MIN_THRESHOLD,
                     PAC_MAX_THRESHOLD, err, err_size)
        || !check_range("n_levels", cfg->n_levels, 1, PAC_MAX_LEVELS,
                        err, err_size)
        || !check_range("max_hold_us", cfg->max_hold_us, 1,
                        PAC_MAX_HOLD_LIMIT_US, err, err_size)
        || !check_range("max_hold_trigger_us", cfg->max_hold_trigger_us, 1,
                        PAC_MAX_HOLD_LIMIT_US, err, err_size)
        || !check_range("max_flows", cfg->max_flows, 1, PAC_MAX_FLOWS_LIMIT,
                        err, err_size)
        || !check_range("max_held", cfg->max_held, 1, PAC_MAX_HELD_LIMIT,
                        err, err_size)
        || !check_range("idle_timeout_ms", cfg->idle_timeout_ms, 1000,
                        PAC_MAX_IDLE_TIMEOUT_MS, err, err_size)
        || !check_range("init_window_segs", cfg->init_window_segs, 1, 1000,
                        err, err_size)
        || !check_range("default_mss", cfg->default_mss, 64, 65495,
                        err, err_size)
        || !check_range("base_rtt_us", cfg->base_rtt_us, 1, 10000000,
                        err, err_size)
        || !check_range("lambda_permille", cfg->lambda_permille, 1, 999,
                        err, err_size)
        || !check_range("loss_floor_permille", cfg->loss_floor_permille,
                        100, 1000, err, err_size)) {
        return false;
    }
    for (uint32_t i = 0; i + 1 < cfg->n_levels; i++) {
        if (!cfg->level_bytes[i]) {
            return config_error(err, err_size,
                                "level_bytes[%"PRIu32"]: must be positive",
                                i);
        }
        if (i && cfg->level_bytes[i] <= cfg->level_bytes[i - 1]) {
            return config_error(err, err_size,
                                "level_bytes: thresholds must increase "
                                "(%"PRIu32" after %"PRIu32")",
                                cfg->level_bytes[i], cfg->level_bytes[i - 1]);
        }
    }
    return true;
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
