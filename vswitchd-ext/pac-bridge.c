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
#include "ovsdb-data.h"
#include "ovsdb-idl.h"
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

/* The per-level and per-cause keys of PAC_BRIDGE_STATS are libpac's. */
#define COUNT_NONE(...)
#define COUNT_ONE(...) + 1
BUILD_ASSERT_DECL((0 PAC_BRIDGE_STATS(COUNT_NONE, COUNT_ONE, COUNT_NONE))
                  == PAC_MAX_LEVELS);
BUILD_ASSERT_DECL((0 PAC_BRIDGE_STATS(COUNT_NONE, COUNT_NONE, COUNT_ONE))
                  == PAC_N_REL_CAUSES);
#undef COUNT_NONE
#undef COUNT_ONE

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

/* Returns the PAC table's column 'name', or NULL. */
static const struct ovsdb_idl_column *
pac_column_find(const char *name)
{
    for (size_t i = 0; i < OVSREC_PAC_N_COLUMNS; i++) {
        if (!strcmp(ovsrec_pac_columns[i].name, name)) {
            return &ovsrec_pac_columns[i];
        }
    }
    return NULL;
}

/* Sets 'knob', a PAC_KNOB_COLUMN row, in 'cfg' from its column in 'row' if
 * the column is set.  Returns NULL or an error message naming the column for
 * the caller to free. */
static char *
knob_from_column(const struct ovsrec_pac *row, const struct pac_knob *knob,
                 struct pac_config *cfg)
{
    const struct ovsdb_idl_column *column;
    const struct ovsdb_datum *datum;

    if (knob->type == PAC_KNOB_LEVELS) {
        /* The map's levels, byte counts and the rules between them
         * (thresholds that increase with the level) are libpac's to
         * check. */
        char err[256];

        if (!pac_knob_parse_levels(knob, row->key_mlfq_thresholds,
                                   row->value_mlfq_thresholds,
                                   row->n_mlfq_thresholds, cfg,
                                   err, sizeof err)) {
            return xasprintf("%s: %s", knob->name, err);
        }
        return NULL;
    }

    column = pac_column_find(knob->name);
    if (!column
        || column->type.key.type != (knob->type == PAC_KNOB_BOOL
                                     ? OVSDB_TYPE_BOOLEAN
                                     : OVSDB_TYPE_INTEGER)) {
        return xasprintf("%s: no such column of the expected type in the "
                         "database schema", knob->name);
    }
    datum = ovsdb_idl_read(&row->header_, column);
    if (!datum->n) {
        return NULL;            /* Keep libpac's default. */
    }
    if (knob->type == PAC_KNOB_BOOL) {
        pac_knob_set(cfg, knob, datum->keys[0].boolean);
    } else {
        int64_t x = datum->keys[0].integer;

        /* OVSDB enforces the ranges of the schema; check again in case the
         * database runs an older or edited schema. */
        if (x < knob->db_min || x > knob->db_max) {
            return xasprintf("%s: %"PRId64" is out of range [%"PRIu32", "
                             "%"PRIu32"]", knob->name, x, knob->db_min,
                             knob->db_max);
        }
        pac_knob_set(cfg, knob, x);
    }
    return NULL;
}

/* Translates 'row' into 'cfg': libpac's defaults, then the columns, then
 * other_config, all as pac_knobs[] (libpac) describes them.  Returns NULL if
 * 'cfg' is usable, otherwise an error message naming the column (and key)
 * for the caller to free.  Appends warnings (for unknown other_config keys)
 * to 'warnings'. */
static char *
pac_config_from_row(const struct ovsrec_pac *row, struct pac_config *cfg,
                    struct ds *warnings)
{
    char libpac_err[256];

    pac_config_init(cfg);

    for (size_t i = 0; i < pac_n_knobs; i++) {
        if (pac_knobs[i].where == PAC_KNOB_COLUMN) {
            char *error = knob_from_column(row, &pac_knobs[i], cfg);

            if (error) {
                return error;
            }
        }
    }

    struct smap_node *node;
    SMAP_FOR_EACH (node, &row->other_config) {
        const struct pac_knob *knob = pac_knob_find(node->key);

        if (!knob || knob->where != PAC_KNOB_OTHER_CONFIG) {
            ds_put_format(warnings, "%sother_config:%s: unknown key, ignored",
                          warnings->length ? "; " : "", node->key);
            continue;
        }
        uint32_t x;

        if (!pac_knob_parse(knob, node->value, &x,
                            libpac_err, sizeof libpac_err)) {
            return xasprintf("other_config:%s: %s", knob->name, libpac_err);
        }
        pac_knob_set(cfg, knob, x);
    }

    if (!pac_config_check(cfg, libpac_err, sizeof libpac_err)) {
        return xstrdup(libpac_err);
    }
    return NULL;
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

size_t
pac_bridge_stats_list(const struct pac_stats *s, uint32_t n_levels,
                      struct pac_bridge_stat list[])
{
    size_t n = 0;

#define PUT(GROUP, KEY, VALUE) \
    list[n++] = (struct pac_bridge_stat) { GROUP, KEY, VALUE }
#define STAT(GROUP, MEMBER) \
    PUT(#GROUP, "pac_" #MEMBER, s->MEMBER);
#define LEVEL(GROUP, N) \
    if (N < n_levels) { \
        PUT(#GROUP, "pac_" #GROUP "_level" #N, s->held_per_level[N]); \
    }
#define CAUSE(GROUP, NAME, CAUSE) \
    PUT(#GROUP, "pac_" #GROUP "_" #NAME, s->released[CAUSE]);

    PAC_BRIDGE_STATS(STAT, LEVEL, CAUSE)
#undef PUT
#undef STAT
#undef LEVEL
#undef CAUSE

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
 * (every knob of pac_knobs[], defaults included). */
void
pac_bridge_format_config(const struct pac_config *cfg, struct ds *s)
{
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *knob = &pac_knobs[i];
        uint32_t value = pac_knob_get(cfg, knob);

        ds_put_format(s, "%s%s=", i ? " " : "", knob->name);
        switch (knob->type) {
        case PAC_KNOB_U32:
            ds_put_format(s, "%"PRIu32, value);
            break;
        case PAC_KNOB_BOOL:
            ds_put_cstr(s, value ? "true" : "false");
            break;
        case PAC_KNOB_ENUM:
            ds_put_cstr(s, value <= knob->max ? knob->names[value] : "?");
            break;
        case PAC_KNOB_LEVELS:
            ds_put_char(s, '{');
            for (uint32_t j = 0; j + 1 < value && j + 1 < PAC_MAX_LEVELS;
                 j++) {
                ds_put_format(s, "%s%"PRIu32"=%"PRIu32, j ? ", " : "",
                              j + 1, cfg->level_bytes[j]);
            }
            ds_put_char(s, '}');
            break;
        }
    }
}
