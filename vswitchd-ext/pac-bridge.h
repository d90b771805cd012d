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

#ifndef PAC_BRIDGE_H
#define PAC_BRIDGE_H 1

/* PAC configuration of ovs-vswitchd's interfaces, from OVSDB.
 *
 * vswitchd/bridge.c calls these functions from a few hooks; they keep a
 * registry of interfaces (by name) with the PAC configuration last applied
 * to each one and its status.  Everything runs in the main thread.
 *
 *   - pac_bridge_iface_configure(): from bridge_reconfigure(), for every
 *     interface.  Translates the Interface's PAC row (if any) into a
 *     'struct pac_config', validates it and enables, replaces or disables
 *     PAC on the port through ofproto_port_set_pac(), only when something
 *     changed.
 *
 *   - pac_bridge_iface_destroy(): from iface_destroy__(), while the ofproto
 *     and its port still exist.  Disables PAC on the port.
 *
 *   - pac_bridge_status_changed() and pac_bridge_put_status(): from
 *     iface_refresh_netdev_status(), to add the "pac" key to
 *     Interface:status.
 *
 *   - pac_bridge_put_stats(): from iface_refresh_stats(), to add the
 *     "pac_*" keys to Interface:statistics.
 *
 * The "ovs-appctl pac/..." commands (pac-unixctl.c) read the registry
 * through pac_bridge_iface_find() and pac_bridge_ifaces_sorted(). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "openflow/openflow.h"
#include "openvswitch/hmap.h"

struct ds;
struct ofproto;
struct pac_config;
struct ovsrec_pac;
struct smap;

/* Values of Interface:status:pac. */
#define PAC_BRIDGE_STATUS_ENABLED "enabled"
#define PAC_BRIDGE_STATUS_UNSUPPORTED "unsupported by datapath type "
#define PAC_BRIDGE_STATUS_ERROR "error: "

/* One interface known to the bridge. */
struct pac_bridge_iface {
    struct hmap_node node;      /* In the registry, by 'name'. */
    char *name;                 /* Interface name. */
    struct ofproto *ofproto;    /* Its bridge. */
    char *br_name;              /* Its bridge's name. */
    char *dp_type;              /* Its bridge's datapath type. */
    ofp_port_t ofp_port;        /* Its OpenFlow port number. */

    bool configured;            /* Interface:pac references a PAC row. */
    bool enabled;               /* PAC runs on the port with 'cfg'. */
    bool attempted;             /* ofproto_port_set_pac() was last called
                                 * with 'cfg' (whatever its result). */
    int error;                  /* What that call returned. */
    struct pac_config *cfg;     /* Last config given to the datapath (the
                                 * header is free of libpac's, for
                                 * bridge.c). */
    char *status;               /* Interface:status:pac, NULL if none. */
    bool status_changed;        /* 'status' not yet written to OVSDB. */
    char *warnings;             /* Last warnings logged, to log once. */
};

void pac_bridge_iface_configure(struct ofproto *, const char *br_name,
                                const char *dp_type, const char *iface_name,
                                ofp_port_t, const struct ovsrec_pac *);
void pac_bridge_iface_destroy(const char *iface_name);

bool pac_bridge_status_changed(const char *iface_name);
void pac_bridge_put_status(const char *iface_name, struct smap *status);

/* The keys pac_bridge_stats_list() fills, in the order pac/show prints them,
 * as calls of three macros:
 *
 *   - STAT(GROUP, MEMBER): key "pac_MEMBER", the struct pac_stats member of
 *     that name, on the pac/show line GROUP.
 *
 *   - LEVEL(GROUP, N): key "pac_held_levelN", held_per_level[N], present if
 *     level N is in use; one for each of libpac's PAC_MAX_LEVELS.
 *
 *   - CAUSE(GROUP, NAME, CAUSE): key "pac_released_NAME", released[CAUSE];
 *     one for each of libpac's PAC_N_REL_CAUSES.
 *
 * The count of LEVEL and CAUSE entries is checked against libpac's in
 * pac-bridge.c: this header, which bridge.c includes, does not include
 * libpac's. */
#define PAC_BRIDGE_STATS(STAT, LEVEL, CAUSE)       \
    STAT(state, in_flight)                         \
    STAT(state, threshold)                         \
    STAT(state, alpha_permille)                    \
    STAT(state, control_interval_us)               \
    STAT(state, avg_rtt_us)                        \
    STAT(held, held)                               \
    LEVEL(held, 0)                                 \
    LEVEL(held, 1)                                 \
    LEVEL(held, 2)                                 \
    LEVEL(held, 3)                                 \
    LEVEL(held, 4)                                 \
    LEVEL(held, 5)                                 \
    LEVEL(held, 6)                                 \
    LEVEL(held, 7)                                 \
    STAT(held, max_held_seen)                      \
    STAT(held, held_bytes)                         \
    STAT(flows, flows)                             \
    STAT(flows, flows_created)                     \
    STAT(flows, flows_expired)                     \
    STAT(flows, flows_closed)                      \
    STAT(flows, evictions)                         \
    STAT(flows, untracked)                         \
    STAT(flows, chain_full)                        \
    STAT(flows, rst_ignored)                       \
    STAT(rx, rx_packets)                           \
    STAT(rx, rx_bytes)                             \
    STAT(rx, rx_ce)                                \
    STAT(rx, rx_holes)                             \
    STAT(tx, tx_packets)                           \
    STAT(tx, tx_passed)                            \
    STAT(tx, tx_held)                              \
    CAUSE(released, fit, PAC_REL_FIT)              \
    CAUSE(released, max_hold, PAC_REL_MAX_HOLD)    \
    CAUSE(released, cap, PAC_REL_CAP)              \
    STAT(released, released_bytes_cap)             \
    CAUSE(released, flush, PAC_REL_FLUSH)          \
    STAT(stale, stale_drops)                       \
    STAT(stale, stale_events)                      \
    STAT(corrections, corrections)                 \
    STAT(corrections, silence_resets)              \
    STAT(corrections, dry_reclaims)                \
    STAT(corrections, dry_bytes)                   \
    STAT(corrections, answer_ends)                 \
    STAT(corrections, dry_waits)                   \
    STAT(corrections, reclaims_undone)             \
    STAT(corrections, late_data)                   \
    STAT(corrections, late_us)                     \
    STAT(triggers, request_triggers)               \
    STAT(triggers, handshake_triggers)             \
    STAT(triggers, handshakes_wasted)              \
    STAT(triggers, handshakes_uncharged)           \
    STAT(triggers, handshakes_late_charged)        \
    STAT(triggers, handshake_flood)                \
    STAT(triggers, windows_clamped)                \
    STAT(triggers, request_copies)                 \
    STAT(triggers, vm_retransmits)                 \
    STAT(triggers, peer_retransmits)               \
    STAT(triggers, copy_delay_us)                  \
    STAT(fast, tracking)                           \
    STAT(fast, tracking_starts)                    \
    STAT(fast, tracking_stops)                     \
    STAT(fast, fast_rx_packets)                    \
    STAT(fast, fast_tx_packets)

/* Most keys pac_bridge_stats_list() fills: one per entry of
 * PAC_BRIDGE_STATS. */
#define PAC_BRIDGE_STATS_COUNT__(...) + 1
#define PAC_BRIDGE_MAX_STATS                                    \
    (0 PAC_BRIDGE_STATS(PAC_BRIDGE_STATS_COUNT__,               \
                        PAC_BRIDGE_STATS_COUNT__,               \
                        PAC_BRIDGE_STATS_COUNT__))

/* One PAC statistic: its Interface:statistics key ("pac_held"; pac/show
 * prints it without "pac_") and the pac/show line it is on ("held"). */
struct pac_bridge_stat {
    const char *group;
    const char *key;
    uint64_t value;
};

/* Fills 'list' (room for PAC_BRIDGE_MAX_STATS) with the statistics in 's'
 * of an instance with 'n_levels' MLFQ levels, grouped, in the order
 * pac/show prints them.  Returns how many. */
struct pac_stats;
size_t pac_bridge_stats_list(const struct pac_stats *s, uint32_t n_levels,
                             struct pac_bridge_stat list[]);
size_t pac_bridge_put_stats(const char *iface_name,
                            const char *keys[], int64_t values[]);

const struct pac_bridge_iface *pac_bridge_iface_find(const char *iface_name);
const struct pac_bridge_iface **pac_bridge_ifaces_sorted(size_t *n);

void pac_bridge_format_config(const struct pac_config *, struct ds *);

#endif /* pac-bridge.h */
