/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* The operator knobs of struct pac_config: the one place that gives each
 * its name in Open vSwitch's PAC table, unit, default and ranges.
 *
 * pac_config_init() takes the defaults from here and pac_config_check() the
 * ranges; pac_knob_parse() reads a knob's value as an operator writes it,
 * for ovs-vswitchd (vswitchd-ext/pac-bridge.c: PAC:other_config) and
 * pac-ns3's --pac-option alike, and pac_knob_parse_levels() the map of
 * MLFQ levels; ovs-vswitchd also checks the columns against their database
 * ranges and prints the configuration in "ovs-appctl pac/show" from these
 * rows.  The rules between values (pac_rules[], below: the MLFQ thresholds
 * increase with the level) are stated here too.
 *
 * tools/pac-knobs-dump prints the rows and the rules as JSON at build time:
 * ovs-pac-agent (ovn-config/) validates OVN's keys with that print, and
 * tests/check-pac-knobs.py in "make check" compares it with the copies that
 * cannot be generated, the database schema and vswitch.xml in
 * ovs-patch/0005-vswitchd-pac-config.patch and the knob tables of
 * docs/operator.md.
 *
 * Two ranges.  'min' and 'max' are what libpac accepts; 'db_min' and
 * 'db_max' are what an operator may set through the database, within the
 * former.  They differ only where the database is stricter than the
 * algorithm needs: the column max_hold takes 100 us to 150 ms, since a
 * hold bound near the guests' 200 ms minimum retransmission timeout brings
 * back the timeouts PAC is there to prevent, while libpac takes 1 us to
 * 10 s so that the simulator and the unit tests can exercise short and long
 * bounds.  An other_config key has no schema type: ovs-vswitchd parses it
 * with 'db_min' and 'db_max', which equal libpac's range, so that a bad
 * value is reported with the key's name rather than libpac's field name.
 *
 * Limits.  The flow and held-packet caps bound memory (see
 * pac_memory_size()); the idle timeout stays under half the 32-bit
 * microsecond wrap (71 minutes). */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pac.h"

#define PAC_MIN_THRESHOLD 3000
#define PAC_MAX_THRESHOLD (1u << 30)
#define PAC_MAX_FLOWS_LIMIT (1u << 22)
#define PAC_MAX_HELD_LIMIT (1u << 20)
/* Room for the largest IP packet (an IPv6 one of 65 535 bytes of payload)
 * and some more. */
#define PAC_MIN_HELD_BYTES (128u << 10)
#define PAC_MAX_IDLE_TIMEOUT_MS (30u * 60 * 1000)
#define PAC_MAX_HOLD_LIMIT_US (10u * 1000 * 1000)

/* A knob whose database range is libpac's. */
#define KNOB(NAME, WHERE, TYPE, FIELD, UNIT, DEF, MIN, MAX, DOC) \
    KNOB2(NAME, WHERE, TYPE, FIELD, UNIT, DEF, MIN, MAX, MIN, MAX, DOC)

#define KNOB2(NAME, WHERE, TYPE, FIELD, UNIT, DEF, MIN, MAX, DB_MIN, DB_MAX, \
              DOC) \
    { NAME, PAC_KNOB_##WHERE, PAC_KNOB_##TYPE, #FIELD, \
      offsetof(struct pac_config, FIELD), UNIT, DEF, MIN, MAX, \
      DB_MIN, DB_MAX, DOC, NULL, 0, 0 }

#define ARRAY_SIZE(A) (sizeof (A) / sizeof (A)[0])

/* A knob that takes one of the names NAMES (an array), by index. */
#define ENUM(NAME, WHERE, FIELD, UNIT, DEF, NAMES, DOC) \
    { NAME, PAC_KNOB_##WHERE, PAC_KNOB_ENUM, #FIELD, \
      offsetof(struct pac_config, FIELD), UNIT, DEF, 0, \
      ARRAY_SIZE(NAMES) - 1, 0, ARRAY_SIZE(NAMES) - 1, DOC, NAMES, 0, 0 }

/* The knob of the MLFQ levels, a map of at most DB_MAX levels, each at
 * VALUE_MIN to VALUE_MAX bytes (see PAC_KNOB_LEVELS in pac.h). */
#define LEVELS(NAME, FIELD, UNIT, DEF, MIN, MAX, DB_MIN, DB_MAX, \
               VALUE_MIN, VALUE_MAX, DOC) \
    { NAME, PAC_KNOB_COLUMN, PAC_KNOB_LEVELS, #FIELD, \
      offsetof(struct pac_config, FIELD), UNIT, DEF, MIN, MAX, \
      DB_MIN, DB_MAX, DOC, NULL, VALUE_MIN, VALUE_MAX }

static const char *const policy_names[PAC_N_POLICIES] = {
    [PAC_POLICY_PAC] = "pac",
    [PAC_POLICY_RWND] = "rwnd",
    [PAC_POLICY_RDTCP] = "rdtcp",
};

/* A boolean knob. */
#define FLAG(NAME, WHERE, FIELD, UNIT, DEF, DOC) \
    KNOB(NAME, WHERE, BOOL, FIELD, UNIT, DEF, 0, 1, DOC)

const struct pac_knob pac_knobs[] = {
    /* Columns. */
    KNOB("threshold", COLUMN, U32, threshold, "bytes", 96000,
         PAC_MIN_THRESHOLD, PAC_MAX_THRESHOLD,
         "Switch buffer in front of the receiver: the most bytes in flight "
         "toward it."),
    LEVELS("mlfq_thresholds", n_levels,
           "map level \u2192 bytes received", 20000,
           1, PAC_MAX_LEVELS, 1, PAC_MAX_LEVELS - 1, 1, UINT32_MAX,
           "Received bytes at which a flow moves to each lower-priority "
           "MLFQ level (paper Table I)."),
    FLAG("ecn", COLUMN, ecn, "boolean", true,
         "React to ECN CE marks: threshold control and congestion-avoidance "
         "inference."),
    KNOB2("max_hold", COLUMN, U32, max_hold_us, "microseconds", 20000,
          1, PAC_MAX_HOLD_LIMIT_US, 100, 150000,
          "Longest a flow goes without an ACK while PAC holds its ACKs."),

    /* Expert knobs, in other_config. */
    KNOB("max-hold-trigger-us", OTHER_CONFIG, U32, max_hold_trigger_us,
         "microseconds", 1000000, 1, PAC_MAX_HOLD_LIMIT_US,
         "Wait after which a held request or SYN-ACK goes ahead of its turn "
         "once its window fits."),
    KNOB("request-copy-us", OTHER_CONFIG, U32, request_copy_us,
         "microseconds", 3000, 0, PAC_MAX_HOLD_LIMIT_US,
         "Wait after which held data of the VM also goes out as a copy "
         "that gives the peer no room, so the VM's retransmission timer "
         "stops (less after the VM has timed out); 0 turns it off."),
    KNOB("new-flow-reserve", OTHER_CONFIG, U32, new_flow_reserve, "bytes",
         16384, 0, PAC_MAX_THRESHOLD,
         "Part of the threshold (at most a quarter) that only connections "
         "which have received fewer bytes than this may fill; they go "
         "ahead of held segments that wait for room.  0 turns it off."),
    KNOB("max-flows", OTHER_CONFIG, U32, max_flows, "connections", 16384,
         1, PAC_MAX_FLOWS_LIMIT,
         "Flow table capacity."),
    KNOB("max-held", OTHER_CONFIG, U32, max_held, "packets", 65536,
         1, PAC_MAX_HELD_LIMIT,
         "Most packets held at once; over it the longest-waiting flow head "
         "is released."),
    KNOB("max-held-bytes", OTHER_CONFIG, U32, max_held_bytes, "bytes",
         32u << 20, PAC_MIN_HELD_BYTES, UINT32_MAX,
         "Most IP bytes held at once; over it the longest-waiting flow "
         "heads are released."),
    KNOB("idle-timeout-ms", OTHER_CONFIG, U32, idle_timeout_ms,
         "milliseconds", 300000, 1000, PAC_MAX_IDLE_TIMEOUT_MS,
         "A flow with no packet for this long is forgotten."),
    KNOB("init-window", OTHER_CONFIG, U32, init_window_segs, "segments", 10,
         1, 1000,
         "Initial window of an idle peer: the data a request or SYN-ACK "
         "triggers."),
    KNOB("default-mss", OTHER_CONFIG, U32, default_mss, "bytes", 1460,
         64, 65495,
         "MSS assumed until a SYN's MSS option is seen."),
    KNOB("base-rtt-us", OTHER_CONFIG, U32, base_rtt_us, "microseconds", 100,
         1, 10000000,
         "RTT assumed before a handshake is measured."),
    KNOB("lambda-permille", OTHER_CONFIG, U32, lambda_permille,
         "thousandths", 800, 1, 999,
         "Lambda of section III-C: rate growth below it means the sender "
         "left slow start."),
    KNOB("loss-floor-permille", OTHER_CONFIG, U32, loss_floor_permille,
         "thousandths of threshold", 775, 100, 1000,
         "Lowest the loss cap takes the threshold; 1000 turns the cap "
         "off."),
    FLAG("clamp-window", OTHER_CONFIG, clamp_window, "true or false", true,
         "Lower the receiver's advertised window to what half the threshold "
         "holds."),
    FLAG("deviation-correction", OTHER_CONFIG, deviation_correction,
         "true or false", false,
         "The paper's deviation correction, eq. (6)."),
    ENUM("policy", OTHER_CONFIG, policy, "name", PAC_POLICY_PAC,
         policy_names,
         "pac: hold ACKs (PAC); rwnd: hold nothing, give each connection "
         "a window of threshold / connections (the receiver-window peer); "
         "rdtcp: that window, and ACKs held first come first served while "
         "the windows they open exceed the threshold (RDTCP)."),
    FLAG("fast-path", OTHER_CONFIG, fast_path, "true or false", true,
         "Track no connection until a burst of the VM's requests or "
         "SYN-ACKs, or answers growing together, could bring half the "
         "threshold."),
};

const size_t pac_n_knobs = sizeof pac_knobs / sizeof pac_knobs[0];

/* The rules between values (see struct pac_rule in pac.h): the one place
 * that states them; pac_rule_check() (pac-config.c) applies them. */
const struct pac_rule pac_rules[] = {
    { "mlfq-increasing", PAC_RULE_INCREASING, "mlfq_thresholds",
      "thresholds must increase with the level (level %"PRIu32": %"PRIu32
      " bytes, level %"PRIu32": %"PRIu32" bytes)",
      "A flow reaches each MLFQ level after more received bytes than the "
      "level before." },
};

const size_t pac_n_rules = sizeof pac_rules / sizeof pac_rules[0];

const struct pac_knob *
pac_knob_find(const char *name)
{
    for (size_t i = 0; i < pac_n_knobs; i++) {
        if (!strcmp(name, pac_knobs[i].name)) {
            return &pac_knobs[i];
        }
    }
    return NULL;
}

int
pac_knob_enum_value(const struct pac_knob *knob, const char *name)
{
    if (knob->type == PAC_KNOB_ENUM) {
        for (uint32_t i = 0; i <= knob->max; i++) {
            if (!strcmp(name, knob->names[i])) {
                return (int) i;
            }
        }
    }
    return -1;
}

/* Writes "is not A, B or C", the names of enum 'knob', into 'err'. */
static void
enum_error(const struct pac_knob *knob, const char *text,
           char *err, size_t err_size)
{
    size_t n = snprintf(err, err_size, "\"%s\" is not ", text);

    for (uint32_t i = 0; i <= knob->max && n < err_size; i++) {
        n += snprintf(err + n, err_size - n, "%s%s",
                      !i ? "" : i < knob->max ? ", " : " or ",
                      knob->names[i]);
    }
}

bool
pac_knob_parse(const struct pac_knob *knob, const char *text,
               uint32_t *value, char *err, size_t err_size)
{
    char scratch[1];

    if (!err) {
        err = scratch;
        err_size = sizeof scratch;
    }
    switch (knob->type) {
    case PAC_KNOB_BOOL:
        if (!strcmp(text, "true") || !strcmp(text, "false")) {
            *value = !strcmp(text, "true");
            return true;
        }
        snprintf(err, err_size, "\"%s\" is not true or false", text);
        return false;

    case PAC_KNOB_ENUM: {
        int x = pac_knob_enum_value(knob, text);

        if (x >= 0) {
            *value = x;
            return true;
        }
        enum_error(knob, text, err, err_size);
        return false;
    }

    case PAC_KNOB_U32: {
        unsigned long long int x;
        char *tail;

        /* strtoull() would take a sign, spaces or an empty string. */
        if (text[0] >= '0' && text[0] <= '9') {
            errno = 0;
            x = strtoull(text, &tail, 10);
            if (!errno && !*tail && x >= knob->db_min && x <= knob->db_max) {
                *value = x;
                return true;
            }
        }
        snprintf(err, err_size, "\"%s\" is not an integer in "
                 "[%"PRIu32", %"PRIu32"]", text, knob->db_min, knob->db_max);
        return false;
    }

    case PAC_KNOB_LEVELS:
    default:
        snprintf(err, err_size, "is a map");
        return false;
    }
}

static int
compare_int64(const void *a_, const void *b_)
{
    int64_t a = *(const int64_t *) a_;
    int64_t b = *(const int64_t *) b_;

    return a < b ? -1 : a > b;
}

bool
pac_knob_parse_levels(const struct pac_knob *knob, const int64_t levels[],
                      const int64_t bytes[], size_t n, struct pac_config *cfg,
                      char *err, size_t err_size)
{
    int64_t sorted[PAC_MAX_LEVELS];
    char scratch[1];

    if (!err) {
        err = scratch;
        err_size = sizeof scratch;
    }
    if (knob->type != PAC_KNOB_LEVELS) {
        snprintf(err, err_size, "is not a map");
        return false;
    }
    if (!n) {
        return true;            /* Keep the levels 'cfg' has. */
    }
    if (n > knob->db_max || n >= PAC_MAX_LEVELS) {
        snprintf(err, err_size, "at most %"PRIu32" levels may be given",
                 knob->db_max);
        return false;
    }
    memcpy(sorted, levels, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, compare_int64);
    for (size_t i = 0; i < n; i++) {
        if (sorted[i] != (int64_t) i + 1) {
            snprintf(err, err_size, "levels must be 1 to %zu without gaps "
                     "(level %zu is missing)", n, i + 1);
            return false;
        }
    }

    cfg->n_levels = n + 1;
    for (size_t i = 0; i < n; i++) {
        if (bytes[i] < knob->value_min || bytes[i] > knob->value_max) {
            snprintf(err, err_size, "level %"PRId64": %"PRId64" bytes is out "
                     "of range [%"PRIu32", %"PRIu32"]", levels[i], bytes[i],
                     knob->value_min, knob->value_max);
            return false;
        }
        cfg->level_bytes[levels[i] - 1] = bytes[i];
    }
    for (size_t i = 0; i < pac_n_rules; i++) {
        if (!strcmp(pac_rules[i].knob, knob->name)
            && !pac_rule_check(&pac_rules[i], cfg, err, err_size)) {
            return false;
        }
    }
    return true;
}

uint32_t
pac_knob_get(const struct pac_config *cfg, const struct pac_knob *knob)
{
    const char *p = (const char *) cfg + knob->offset;

    if (knob->type == PAC_KNOB_BOOL) {
        bool b;

        memcpy(&b, p, sizeof b);
        return b;
    } else {
        uint32_t x;

        memcpy(&x, p, sizeof x);
        return x;
    }
}

void
pac_knob_set(struct pac_config *cfg, const struct pac_knob *knob,
             uint32_t value)
{
    char *p = (char *) cfg + knob->offset;

    if (knob->type == PAC_KNOB_BOOL) {
        bool b = value != 0;

        memcpy(p, &b, sizeof b);
    } else {
        memcpy(p, &value, sizeof value);
    }
}
