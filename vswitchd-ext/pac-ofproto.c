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

#include "pac-ext/pac-ofproto.h"

#include <errno.h>

#include "dpif.h"
#include "id-pool.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(pac_ofproto);

/* Instance ids, from the main thread only. */
static struct id_pool *pac_ids;

static uint32_t
pac_id_alloc(void)
{
    uint32_t id;

    if (!pac_ids) {
        pac_ids = id_pool_create(1, UINT32_MAX - 1);
    }
    return id_pool_alloc_id(pac_ids, &id) ? id : 0;
}

int
pac_ofport_set(struct dpif *dpif, uint32_t *pac_id,
               const struct pac_config *config)
{
    int error;

    if (!config || !dpif_supports_pac(dpif)) {
        if (*pac_id) {
            error = dpif_pac_del(dpif, *pac_id);
            if (error) {
                VLOG_WARN("%s: deleting PAC instance %"PRIu32" failed (%s)",
                          dpif_name(dpif), *pac_id, ovs_strerror(error));
            }
            id_pool_free_id(pac_ids, *pac_id);
            *pac_id = 0;
        }
        return config ? EOPNOTSUPP : 0;
    }

    bool created = !*pac_id;
    if (created) {
        *pac_id = pac_id_alloc();
        if (!*pac_id) {
            return ENOSPC;
        }
    }

    error = dpif_pac_set(dpif, *pac_id, config);
    if (error) {
        VLOG_WARN("%s: setting PAC instance %"PRIu32" failed (%s)",
                  dpif_name(dpif), *pac_id, ovs_strerror(error));
        if (!created) {
            dpif_pac_del(dpif, *pac_id);
        }
        id_pool_free_id(pac_ids, *pac_id);
        *pac_id = 0;
    }
    return error;
}
