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

#include "pac-ext/pac-unixctl.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ofproto/ofproto.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "packets.h"
#include "pac-ext/pac-bridge.h"
#include "pac-ext/pac-ext-version.h"
#include "pac.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(pac_unixctl);

/* Prints the ovs-pac version and the version of the libpac it was linked
 * with, e.g. "ovs-pac 0.1.0 (libpac 0.1.0)". */
static void
pac_unixctl_version(struct unixctl_conn *conn, int argc OVS_UNUSED,
                    const char *argv[] OVS_UNUSED, void *aux OVS_UNUSED)
{
    struct ds reply = DS_EMPTY_INITIALIZER;

    ds_put_format(&reply, "ovs-pac %s (libpac %s)",
                  OVS_PAC_VERSION, pac_version());
    unixctl_command_reply(conn, ds_cstr(&reply));
    ds_destroy(&reply);
}

/* Looks up 'name' for a command that needs PAC configured there.  Returns
 * the interface, or NULL after replying with an error. */
static const struct pac_bridge_iface *
lookup_configured(struct unixctl_conn *conn, const char *name)
{
    const struct pac_bridge_iface *iface = pac_bridge_iface_find(name);
    char *error;

    if (!iface) {
        error = xasprintf("%s: no such interface", name);
    } else if (!iface->configured) {
        error = xasprintf("%s: PAC is not configured on this interface",
                          name);
    } else {
        return iface;
    }
    unixctl_command_reply_error(conn, error);
    free(error);
    return NULL;
}

static void
show_stats(const struct pac_bridge_iface *iface, struct ds *s)
{
    struct pac_stats st;
    int error;

    error = ofproto_port_get_pac(iface->ofproto, iface->ofp_port, &st,
                                 NULL, NULL);
    if (error) {
        ds_put_format(s, "  statistics unavailable (%s)\n",
                      ovs_strerror(error));
        return;
    }

    struct pac_bridge_stat list[PAC_BRIDGE_MAX_STATS];
    size_t n = pac_bridge_stats_list(&st, iface->cfg->n_levels, list);
    const char *group = NULL;

    for (size_t i = 0; i < n; i++) {
        if (!group || strcmp(group, list[i].group)) {
            group = list[i].group;
            ds_put_format(s, "%s  %s:", i ? "\n" : "", group);
        }
        ds_put_format(s, " %s=%"PRIu64, list[i].key + strlen("pac_"),
                      list[i].value);
    }
    ds_put_char(s, '\n');
}

static void
show_iface(const struct pac_bridge_iface *iface, struct ds *s)
{
    ds_put_format(s, "%s (bridge %s, port %"PRIu16", datapath %s): %s\n",
                  iface->name, iface->br_name, ofp_to_u16(iface->ofp_port),
                  iface->dp_type, iface->status ? iface->status : "unknown");
    if (iface->attempted) {
        ds_put_cstr(s, "  config: ");
        pac_bridge_format_config(iface->cfg, s);
        ds_put_char(s, '\n');
    }
    if (iface->enabled) {
        show_stats(iface, s);
    }
}

/* "pac/show [interface]": configuration, status and main statistics of PAC
 * on one interface, or on every interface where it is configured. */
static void
pac_unixctl_show(struct unixctl_conn *conn, int argc,
                 const char *argv[], void *aux OVS_UNUSED)
{
    struct ds reply = DS_EMPTY_INITIALIZER;

    if (argc > 1) {
        const struct pac_bridge_iface *iface = lookup_configured(conn,
                                                                 argv[1]);
        if (!iface) {
            return;
        }
        show_iface(iface, &reply);
    } else {
        const struct pac_bridge_iface **ifaces;
        size_t n;

        ifaces = pac_bridge_ifaces_sorted(&n);
        for (size_t i = 0; i < n; i++) {
            show_iface(ifaces[i], &reply);
        }
        if (!n) {
            ds_put_cstr(&reply, "PAC is not configured on any interface\n");
        }
        free(ifaces);
    }
    unixctl_command_reply(conn, ds_cstr(&reply));
    ds_destroy(&reply);
}

struct flow_dump {
    struct pac_flow_info *flows;
    size_t n, allocated;
};

/* Called under the PAC instance lock: only copies. */
static void
dump_flow_cb(void *dump_, const struct pac_flow_info *info)
{
    struct flow_dump *dump = dump_;

    if (dump->n >= dump->allocated) {
        dump->flows = x2nrealloc(dump->flows, &dump->allocated,
                                 sizeof *dump->flows);
    }
    dump->flows[dump->n++] = *info;
}

static int
compare_flows(const void *a_, const void *b_)
{
    const struct pac_flow_info *a = a_;
    const struct pac_flow_info *b = b_;
    int cmp;

    cmp = memcmp(a->vm_addr, b->vm_addr, sizeof a->vm_addr);
    if (!cmp) {
        cmp = a->vm_port < b->vm_port ? -1 : a->vm_port > b->vm_port;
    }
    if (!cmp) {
        cmp = memcmp(a->peer_addr, b->peer_addr, sizeof a->peer_addr);
    }
    if (!cmp) {
        cmp = a->peer_port < b->peer_port ? -1 : a->peer_port > b->peer_port;
    }
    return cmp;
}

/* Appends "ADDR:PORT", with ADDR in brackets if it is IPv6. */
static void
format_endpoint(const uint8_t addr[16], uint16_t port, struct ds *s)
{
    struct in6_addr in6;

    memcpy(&in6, addr, sizeof in6);
    if (IN6_IS_ADDR_V4MAPPED(&in6)) {
        ipv6_format_mapped(&in6, s);
    } else {
        ds_put_char(s, '[');
        ipv6_format_addr(&in6, s);
        ds_put_char(s, ']');
    }
    ds_put_format(s, ":%"PRIu16, port);
}

/* "pac/dump-flows interface": one line per flow that PAC tracks there. */
static void
pac_unixctl_dump_flows(struct unixctl_conn *conn, int argc OVS_UNUSED,
                       const char *argv[], void *aux OVS_UNUSED)
{
    const struct pac_bridge_iface *iface = lookup_configured(conn, argv[1]);
    struct flow_dump dump = { NULL, 0, 0 };
    struct ds reply = DS_EMPTY_INITIALIZER;
    int error;

    if (!iface) {
        return;
    }
    if (!iface->enabled) {
        char *msg = xasprintf("%s: PAC is not enabled (%s)", iface->name,
                              iface->status ? iface->status : "unknown");
        unixctl_command_reply_error(conn, msg);
        free(msg);
        return;
    }

    struct pac_stats stats;
    error = ofproto_port_get_pac(iface->ofproto, iface->ofp_port, &stats,
                                 dump_flow_cb, &dump);
    if (error) {
        char *msg = xasprintf("%s: cannot read PAC flows (%s)", iface->name,
                              ovs_strerror(error));
        unixctl_command_reply_error(conn, msg);
        free(msg);
        free(dump.flows);
        return;
    }

    qsort(dump.flows, dump.n, sizeof *dump.flows, compare_flows);
    for (size_t i = 0; i < dump.n; i++) {
        const struct pac_flow_info *f = &dump.flows[i];

        ds_put_cstr(&reply, "vm=");
        format_endpoint(f->vm_addr, f->vm_port, &reply);
        ds_put_cstr(&reply, " peer=");
        format_endpoint(f->peer_addr, f->peer_port, &reply);
        ds_put_format(&reply, " level=%"PRIu8" phase=%s mss=%"PRIu16
                      " held=%"PRIu32" rx_bytes=%"PRIu32" cwnd=%"PRIu32
                      " rtt_us=%"PRIu32" idle_us=%"PRIu64
                      " last_ack=%"PRIu32"\n",
                      f->level, f->slow_start ? "slow_start" : "cong_avoid",
                      f->mss, f->held, f->rx_bytes, f->cwnd, f->rtt_us,
                      f->idle_us, f->last_ack);
    }
    unixctl_command_reply(conn, ds_cstr(&reply));
    ds_destroy(&reply);
    free(dump.flows);
}

void
pac_unixctl_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        unixctl_command_register("pac/version", "", 0, 0,
                                 pac_unixctl_version, NULL);
        unixctl_command_register("pac/show", "[interface]", 0, 1,
                                 pac_unixctl_show, NULL);
        unixctl_command_register("pac/dump-flows", "interface", 1, 1,
                                 pac_unixctl_dump_flows, NULL);
        ovsthread_once_done(&once);
    }
}

/* Logs the versions once, next to OVS's own version line: after
 * daemonizing, so that nothing extra reaches the console of whoever
 * started ovs-vswitchd (OVS's testsuite checks that). */
void
pac_unixctl_log_version(void)
{
    VLOG_INFO_ONCE("ovs-pac %s (libpac %s)", OVS_PAC_VERSION, pac_version());
}
