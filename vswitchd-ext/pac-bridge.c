/*
 * Copyright (c) 2026 ovs-pac authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

#include <config.h>

#include "pac-ext/pac-bridge.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "connectivity.h"
#include "hash.h"
#include "ofproto/ofproto.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "pac.h"
#include "seq.h"
#include "smap.h"
#include "util.h"
#include "vswitch-idl.h"

VLOG_DEFINE_THIS_MODULE(pac_bridge);

/* Config errors and warnings are logged when they change, and rate-limited
 * on top of that (a flapping database should not flood the log). */
static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

/* All interfaces of all bridges, by name (OVS interface names are unique
 * across bridges). */
static struct hmap ifaces = HMAP_INITIALIZER(&ifaces);

BUILD_ASSERT_DECL(PAC_BRIDGE_MAX_STATS
                  == 34 + PAC_N_REL_CAUSES + PAC_MAX_LEVELS);

/* Expert knobs in PAC:other_config.  The ranges are libpac's
 * (pac_config_check()), so that a refused value is named by its key. */
struct pac_knob {
    const char *key;
    size_t offset;              /* Of a uint32_t in struct pac_config. */
    uint32_t min, max;
};

#define PAC_KNOB(KEY, MEMBER, MIN, MAX) \
    { KEY, offsetof(struct pac_config, MEMBER), MIN, MAX }

static const struct pac_knob pac_knobs[] = {
    PAC_KNOB("max-hold-trigger-us", max_hold_trigger_us, 1, 10000000),
    PAC_KNOB("max-flows", max_flows, 1, 1u << 22),
    PAC_KNOB("max-held", max_held, 1, 1u << 20),
    PAC_KNOB("idle-timeout-ms", idle_timeout_ms, 1000, 30 * 60 * 1000),
    PAC_KNOB("init-window", init_window_segs, 1, 1000),
    PAC_KNOB("default-mss", default_mss, 64, 65495),
    PAC_KNOB("base-rtt-us", base_rtt_us, 1, 10000000),
    PAC_KNOB("lambda-permille", lambda_permille, 1, 999),
    PAC_KNOB("loss-floor-permille", loss_floor_permille, 100, 1000),
};

/* Boolean knobs in PAC:other_config, "true" or "false". */
struct pac_flag {
    const char *key;
    size_t offset;              /* Of a bool in struct pac_config. */
};

#define PAC_FLAG(KEY, MEMBER) { KEY, offsetof(struct pac_config, MEMBER) }

static const struct pac_flag pac_flags[] = {
    PAC_FLAG("clamp-window", clamp_window),
    PAC_FLAG("deviation-correction", deviation_correction),
};

static uint32_t
knob_get(const struct pac_config *cfg, const struct pac_knob *knob)
{
    return *ALIGNED_CAST(const uint32_t *, (const char *) cfg + knob->offset);
}

static bool
flag_get(const struct pac_config *cfg, const struct pac_flag *flag)
{
    return *(const bool *) ((const char *) cfg + flag->offset);
}

/* Returns the integer knob of PAC:other_config key 'key', or NULL. */
static const struct pac_knob *
knob_find(const char *key)
{
    for (size_t i = 0; i < ARRAY_SIZE(pac_knobs); i++) {
        if (!strcmp(key, pac_knobs[i].key)) {
            return &pac_knobs[i];
        }
    }
    return NULL;
}

/* Returns the flag of PAC:other_config key 'key', or NULL. */
static const struct pac_flag *
flag_find(const char *key)
{
    for (size_t i = 0; i < ARRAY_SIZE(pac_flags); i++) {
        if (!strcmp(key, pac_flags[i].key)) {
            return &pac_flags[i];
        }
    }
    return NULL;
}

static struct pac_bridge_iface *
iface_find(const char *name)
{
    struct pac_bridge_iface *iface;

    HMAP_FOR_EACH_WITH_HASH (iface, node, hash_string(name, 0), &ifaces) {
        if (!strcmp(iface->name, name)) {
            return iface;
        }
    }
    return NULL;
}

static bool
parse_knob(const struct pac_knob *knob, const char *value, uint32_t *out)
{
    unsigned long long int x;
    char *tail;

    if (value[0] < '0' || value[0] > '9') {
        return false;
    }
    errno = 0;
    x = strtoull(value, &tail, 10);
    if (errno || *tail || x < knob->min || x > knob->max) {
        return false;
    }
    *out = x;
    return true;
}

static int
compare_int64(const void *a_, const void *b_)
{
    int64_t a = *(const int64_t *) a_;
    int64_t b = *(const int64_t *) b_;

    return a < b ? -1 : a > b;
}

/* Fills 'mlfq' (n_levels, level_bytes) from PAC:mlfq_thresholds.  Returns
 * NULL or an error message (without the column name) for the caller to
 * free. */
static char *
parse_mlfq(const struct ovsrec_pac *row, struct pac_config *cfg)
{
    size_t n = row->n_mlfq_thresholds;
    int64_t levels[PAC_MAX_LEVELS];

    if (!n) {
        return NULL;            /* Keep libpac's default. */
    }
    if (n > PAC_MAX_LEVELS - 1) {
        return xasprintf("at most %d levels may be given", PAC_MAX_LEVELS - 1);
    }
    memcpy(levels, row->key_mlfq_thresholds, n * sizeof *levels);
    qsort(levels, n, sizeof *levels, compare_int64);
    for (size_t i = 0; i < n; i++) {
        if (levels[i] != (int64_t) i + 1) {
            return xasprintf("levels must be 1 to %"PRIuSIZE" without gaps "
                             "(level %"PRIuSIZE" is missing)", n, i + 1);
        }
    }

    cfg->n_levels = n + 1;
    for (size_t i = 0; i < n; i++) {
        int64_t level = row->key_mlfq_thresholds[i];
        int64_t bytes = row->value_mlfq_thresholds[i];

        if (bytes < 1 || bytes > UINT32_MAX) {
            return xasprintf("level %"PRId64": %"PRId64" bytes is out of "
                             "range [1, %"PRIu32"]", level, bytes,
                             UINT32_MAX);
        }
        cfg->level_bytes[level - 1] = bytes;
    }
    for (size_t i = 1; i < n; i++) {
        if (cfg->level_bytes[i] <= cfg->level_bytes[i - 1]) {
            return xasprintf("thresholds must increase with the level "
                             "(level %"PRIuSIZE": %"PRIu32" bytes, level "
                             "%"PRIuSIZE": %"PRIu32" bytes)",
                             i, cfg->level_bytes[i - 1],
                             i + 1, cfg->level_bytes[i]);
        }
    }
    return NULL;
}

/* Translates 'row' into 'cfg': libpac's defaults, then the columns, then
 * other_config.  Returns NULL if 'cfg' is usable, otherwise an error message
 * naming the column (and key) for the caller to free.  Appends warnings (for
 * unknown other_config keys) to 'warnings'. */
static char *
pac_config_from_row(const struct ovsrec_pac *row, struct pac_config *cfg,
                    struct ds *warnings)
{
    char libpac_err[256];
    char *error;

    pac_config_init(cfg);

    /* OVSDB enforces the ranges of the schema; check again in case the
     * database runs an older or edited schema. */
    if (row->n_threshold) {
        if (*row->threshold < 3000 || *row->threshold > (1 << 30)) {
            return xasprintf("threshold: %"PRId64" is out of range "
                             "[3000, %d]", *row->threshold, 1 << 30);
        }
        cfg->threshold = *row->threshold;
    }
    error = parse_mlfq(row, cfg);
    if (error) {
        char *msg = xasprintf("mlfq_thresholds: %s", error);

        free(error);
        return msg;
    }
    if (row->n_ecn) {
        cfg->ecn = *row->ecn;
    }
    if (row->n_max_hold) {
        if (*row->max_hold < 100 || *row->max_hold > 150000) {
            return xasprintf("max_hold: %"PRId64" is out of range "
                             "[100, 150000]", *row->max_hold);
        }
        cfg->max_hold_us = *row->max_hold;
    }

    struct smap_node *node;
    SMAP_FOR_EACH (node, &row->other_config) {
        const struct pac_flag *flag = flag_find(node->key);
        const struct pac_knob *knob;

        if (flag) {
            if (strcmp(node->value, "true") && strcmp(node->value, "false")) {
                return xasprintf("other_config:%s: \"%s\" is not "
                                 "true or false", flag->key, node->value);
            }
            *(bool *) ((char *) cfg + flag->offset)
                = !strcmp(node->value, "true");
            continue;
        }

        knob = knob_find(node->key);
        if (!knob) {
            ds_put_format(warnings, "%sother_config:%s: unknown key, ignored",
                          warnings->length ? "; " : "", node->key);
            continue;
        }
        if (!parse_knob(knob, node->value,
                        ALIGNED_CAST(uint32_t *,
                                     (char *) cfg + knob->offset))) {
            return xasprintf("other_config:%s: \"%s\" is not an integer in "
                             "[%"PRIu32", %"PRIu32"]", knob->key, node->value,
                             knob->min, knob->max);
        }
    }

    if (!pac_config_check(cfg, libpac_err, sizeof libpac_err)) {
        return xstrdup(libpac_err);
    }
    return NULL;
}

static bool
pac_config_equal(const struct pac_config *a, const struct pac_config *b)
{
    if (a->n_levels != b->n_levels) {
        return false;
    }
    /* Every knob, from the tables: a knob left out here would be parsed
     * but not applied to a running port. */
    for (size_t i = 0; i < ARRAY_SIZE(pac_knobs); i++) {
        if (knob_get(a, &pac_knobs[i]) != knob_get(b, &pac_knobs[i])) {
            return false;
        }
    }
    for (size_t i = 0; i < ARRAY_SIZE(pac_flags); i++) {
        if (flag_get(a, &pac_flags[i]) != flag_get(b, &pac_flags[i])) {
            return false;
        }
    }
    for (uint32_t i = 0; i + 1 < a->n_levels; i++) {
        if (a->level_bytes[i] != b->level_bytes[i]) {
            return false;
        }
    }
    return (a->threshold == b->threshold
            && a->ecn == b->ecn
            && a->max_hold_us == b->max_hold_us
            && a->hash_seed == b->hash_seed);
}

/* Takes ownership of 'status' (may be NULL). */
static void
iface_set_status(struct pac_bridge_iface *iface, char *status)
{
    if (!nullable_string_is_equal(iface->status, status)) {
        free(iface->status);
        iface->status = status;
        iface->status_changed = true;
        /* Wake up bridge.c's status update (run_status_update()). */
        seq_change(connectivity_seq_get());
    } else {
        free(status);
    }
}

/* Stops PAC on 'iface''s port if it might be running. */
static void
iface_disable(struct pac_bridge_iface *iface)
{
    if (iface->attempted) {
        int error = ofproto_port_set_pac(iface->ofproto, iface->ofp_port,
                                         NULL);
        if (iface->enabled) {
            VLOG_INFO("interface %s: PAC disabled", iface->name);
        }
        if (error && error != EOPNOTSUPP && error != ENOENT) {
            VLOG_WARN_RL(&rl, "interface %s: disabling PAC failed (%s)",
                         iface->name, ovs_strerror(error));
        }
    }
    iface->attempted = false;
    iface->error = 0;
    iface->enabled = false;
}

static void
iface_log_warnings(struct pac_bridge_iface *iface, struct ds *warnings)
{
    const char *w = warnings->length ? ds_cstr(warnings) : NULL;

    if (!nullable_string_is_equal(iface->warnings, w)) {
        if (w) {
            VLOG_WARN_RL(&rl, "interface %s: PAC: %s", iface->name, w);
        }
        free(iface->warnings);
        iface->warnings = nullable_xstrdup(w);
    }
}

static void
iface_apply(struct pac_bridge_iface *iface, const struct ovsrec_pac *row)
{
    struct ds warnings = DS_EMPTY_INITIALIZER;
    struct pac_config cfg;
    char *error;

    error = pac_config_from_row(row, &cfg, &warnings);
    iface_log_warnings(iface, &warnings);
    ds_destroy(&warnings);

    if (error) {
        char *status = xasprintf(PAC_BRIDGE_STATUS_ERROR "%s", error);

        if (!nullable_string_is_equal(iface->status, status)) {
            VLOG_WARN_RL(&rl, "interface %s: invalid PAC configuration, PAC "
                         "disabled: %s", iface->name, error);
        }
        free(error);
        iface_disable(iface);
        iface_set_status(iface, status);
        return;
    }

    if (iface->attempted && pac_config_equal(&cfg, iface->cfg)
        && (!iface->error || iface->error == EOPNOTSUPP)) {
        return;                 /* Nothing changed (retry other errors). */
    }

    int err = ofproto_port_set_pac(iface->ofproto, iface->ofp_port, &cfg);
    iface->attempted = true;
    iface->error = err;
    *iface->cfg = cfg;
    if (!err) {
        struct ds s = DS_EMPTY_INITIALIZER;

        pac_bridge_format_config(&cfg, &s);
        VLOG_INFO("interface %s: PAC %s (%s)", iface->name,
                  iface->enabled ? "reconfigured" : "enabled", ds_cstr(&s));
        ds_destroy(&s);
        iface->enabled = true;
        iface_set_status(iface, xstrdup(PAC_BRIDGE_STATUS_ENABLED));
    } else if (err == EOPNOTSUPP) {
        iface->enabled = false;
        char *status = xasprintf(PAC_BRIDGE_STATUS_UNSUPPORTED "%s",
                                 iface->dp_type);
        if (!nullable_string_is_equal(iface->status, status)) {
            VLOG_WARN_RL(&rl, "interface %s: PAC is not supported by "
                         "datapath type %s", iface->name, iface->dp_type);
        }
        iface_set_status(iface, status);
    } else {
        iface->enabled = false;
        VLOG_WARN_RL(&rl, "interface %s: enabling PAC failed (%s)",
                     iface->name, ovs_strerror(err));
        iface_set_status(iface, xasprintf(PAC_BRIDGE_STATUS_ERROR "%s",
                                          ovs_strerror(err)));
    }
}

static void
iface_free(struct pac_bridge_iface *iface)
{
    hmap_remove(&ifaces, &iface->node);
    free(iface->name);
    free(iface->br_name);
    free(iface->dp_type);
    free(iface->status);
    free(iface->warnings);
    free(iface->cfg);
    free(iface);
}

void
pac_bridge_iface_configure(struct ofproto *ofproto, const char *br_name,
                           const char *dp_type, const char *iface_name,
                           ofp_port_t ofp_port, const struct ovsrec_pac *row)
{
    struct pac_bridge_iface *iface = iface_find(iface_name);

    if (iface && (iface->ofproto != ofproto || iface->ofp_port != ofp_port)) {
        /* The interface moved without pac_bridge_iface_destroy() (which
         * should not happen): the old port is gone, start afresh. */
        iface_free(iface);
        iface = NULL;
    }
    if (!iface) {
        iface = xzalloc(sizeof *iface);
        iface->name = xstrdup(iface_name);
        iface->ofproto = ofproto;
        iface->br_name = xstrdup(br_name);
        iface->dp_type = xstrdup(dp_type);
        iface->ofp_port = ofp_port;
        iface->cfg = xmalloc(sizeof *iface->cfg);
        pac_config_init(iface->cfg);
        hmap_insert(&ifaces, &iface->node, hash_string(iface_name, 0));
    }

    iface->configured = row != NULL;
    if (row) {
        iface_apply(iface, row);
    } else {
        iface_disable(iface);
        free(iface->warnings);
        iface->warnings = NULL;
        iface_set_status(iface, NULL);
    }
}

void
pac_bridge_iface_destroy(const char *iface_name)
{
    struct pac_bridge_iface *iface = iface_find(iface_name);

    if (iface) {
        iface_disable(iface);
        iface_free(iface);
    }
}

bool
pac_bridge_status_changed(const char *iface_name)
{
    const struct pac_bridge_iface *iface = iface_find(iface_name);

    return iface && iface->status_changed;
}

/* Adds key "pac" to 'status' if PAC is configured on 'iface_name'. */
void
pac_bridge_put_status(const char *iface_name, struct smap *status)
{
    struct pac_bridge_iface *iface = iface_find(iface_name);

    if (iface) {
        if (iface->status) {
            smap_replace(status, "pac", iface->status);
        }
        iface->status_changed = false;
    }
}

/* Keys of the per-level held counts. */
static const char *const held_level_keys[PAC_MAX_LEVELS] = {
    "pac_held_level0", "pac_held_level1", "pac_held_level2",
    "pac_held_level3", "pac_held_level4", "pac_held_level5",
    "pac_held_level6", "pac_held_level7",
};

static const char *const released_keys[PAC_N_REL_CAUSES] = {
    [PAC_REL_FIT] = "pac_released_fit",
    [PAC_REL_MAX_HOLD] = "pac_released_max_hold",
    [PAC_REL_CAP] = "pac_released_cap",
    [PAC_REL_FLUSH] = "pac_released_flush",
};

size_t
pac_bridge_stats_list(const struct pac_stats *s, uint32_t n_levels,
                      struct pac_bridge_stat list[])
{
    size_t n = 0;

#define PUT(GROUP, KEY, VALUE) \
    list[n++] = (struct pac_bridge_stat) { GROUP, KEY, VALUE }

    PUT("state", "pac_in_flight", s->in_flight);
    PUT("state", "pac_threshold", s->threshold);
    PUT("state", "pac_alpha_permille", s->alpha_permille);
    PUT("state", "pac_control_interval_us", s->control_interval_us);
    PUT("state", "pac_avg_rtt_us", s->avg_rtt_us);
    PUT("held", "pac_held", s->held);
    for (uint32_t i = 0; i < n_levels && i < PAC_MAX_LEVELS; i++) {
        PUT("held", held_level_keys[i], s->held_per_level[i]);
    }
    PUT("held", "pac_max_held_seen", s->max_held_seen);
    PUT("flows", "pac_flows", s->flows);
    PUT("flows", "pac_flows_created", s->flows_created);
    PUT("flows", "pac_flows_expired", s->flows_expired);
    PUT("flows", "pac_flows_closed", s->flows_closed);
    PUT("flows", "pac_evictions", s->evictions);
    PUT("flows", "pac_untracked", s->untracked);
    PUT("rx", "pac_rx_packets", s->rx_packets);
    PUT("rx", "pac_rx_bytes", s->rx_bytes);
    PUT("rx", "pac_rx_ce", s->rx_ce);
    PUT("rx", "pac_rx_holes", s->rx_holes);
    PUT("tx", "pac_tx_packets", s->tx_packets);
    PUT("tx", "pac_tx_passed", s->tx_passed);
    PUT("tx", "pac_tx_held", s->tx_held);
    for (int i = 0; i < PAC_N_REL_CAUSES; i++) {
        PUT("released", released_keys[i], s->released[i]);
    }
    PUT("stale", "pac_stale_drops", s->stale_drops);
    PUT("stale", "pac_stale_events", s->stale_events);
    PUT("corrections", "pac_corrections", s->corrections);
    PUT("corrections", "pac_silence_resets", s->silence_resets);
    PUT("corrections", "pac_dry_reclaims", s->dry_reclaims);
    PUT("corrections", "pac_dry_bytes", s->dry_bytes);
    PUT("corrections", "pac_answer_ends", s->answer_ends);
    PUT("corrections", "pac_dry_waits", s->dry_waits);
    PUT("corrections", "pac_reclaims_undone", s->reclaims_undone);
    PUT("corrections", "pac_late_data", s->late_data);
    PUT("corrections", "pac_late_us", s->late_us);
    PUT("triggers", "pac_request_triggers", s->request_triggers);
    PUT("triggers", "pac_handshake_triggers", s->handshake_triggers);
    PUT("triggers", "pac_windows_clamped", s->windows_clamped);
#undef PUT

    ovs_assert(n <= PAC_BRIDGE_MAX_STATS);
    return n;
}

/* Appends the PAC statistics of 'iface_name', if PAC runs there, to 'keys'
 * and 'values' (room for PAC_BRIDGE_MAX_STATS).  Returns the number of keys
 * added. */
size_t
pac_bridge_put_stats(const char *iface_name,
                     const char *keys[], int64_t values[])
{
    const struct pac_bridge_iface *iface = iface_find(iface_name);
    struct pac_bridge_stat list[PAC_BRIDGE_MAX_STATS];
    struct pac_stats s;
    size_t n;

    if (!iface || !iface->enabled
        || ofproto_port_get_pac(iface->ofproto, iface->ofp_port, &s,
                                NULL, NULL)) {
        return 0;
    }

    n = pac_bridge_stats_list(&s, iface->cfg->n_levels, list);
    for (size_t i = 0; i < n; i++) {
        keys[i] = list[i].key;
        values[i] = MIN(list[i].value, INT64_MAX);
    }
    return n;
}

const struct pac_bridge_iface *
pac_bridge_iface_find(const char *iface_name)
{
    return iface_find(iface_name);
}

static int
compare_ifaces(const void *a_, const void *b_)
{
    const struct pac_bridge_iface *const *a = a_;
    const struct pac_bridge_iface *const *b = b_;

    return strcmp((*a)->name, (*b)->name);
}

/* Returns the interfaces with PAC configured, sorted by name, in an array
 * that the caller must free.  Stores their number in '*n'. */
const struct pac_bridge_iface **
pac_bridge_ifaces_sorted(size_t *n)
{
    const struct pac_bridge_iface **array;
    const struct pac_bridge_iface *iface;

    array = xmalloc((hmap_count(&ifaces) + 1) * sizeof *array);
    *n = 0;
    HMAP_FOR_EACH (iface, node, &ifaces) {
        if (iface->configured) {
            array[(*n)++] = iface;
        }
    }
    qsort(array, *n, sizeof *array, compare_ifaces);
    return array;
}

/* Appends 'cfg' to 's' in the terms of the PAC table, e.g. "threshold=96000
 * mlfq_thresholds={1=20000} ecn=true max_hold=20000 max-hold-trigger-us=..."
 * (every knob, defaults included). */
void
pac_bridge_format_config(const struct pac_config *cfg, struct ds *s)
{
    ds_put_format(s, "threshold=%"PRIu32" mlfq_thresholds={", cfg->threshold);
    for (uint32_t i = 0; i + 1 < cfg->n_levels; i++) {
        ds_put_format(s, "%s%"PRIu32"=%"PRIu32, i ? ", " : "", i + 1,
                      cfg->level_bytes[i]);
    }
    ds_put_format(s, "} ecn=%s max_hold=%"PRIu32,
                  cfg->ecn ? "true" : "false", cfg->max_hold_us);
    for (size_t i = 0; i < ARRAY_SIZE(pac_knobs); i++) {
        ds_put_format(s, " %s=%"PRIu32, pac_knobs[i].key,
                      knob_get(cfg, &pac_knobs[i]));
    }
    for (size_t i = 0; i < ARRAY_SIZE(pac_flags); i++) {
        ds_put_format(s, " %s=%s", pac_flags[i].key,
                      flag_get(cfg, &pac_flags[i]) ? "true" : "false");
    }
}
