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

#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "pac-ext/pac-ext-version.h"
#include "pac.h"
#include "unixctl.h"

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

void
pac_unixctl_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        unixctl_command_register("pac/version", "", 0, 0,
                                 pac_unixctl_version, NULL);
        VLOG_INFO("ovs-pac %s (libpac %s)", OVS_PAC_VERSION, pac_version());
        ovsthread_once_done(&once);
    }
}
