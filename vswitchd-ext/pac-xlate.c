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

#include "pac-ext/pac-xlate.h"

#include "flow.h"
#include "netlink.h"
#include "odp-netlink.h"
#include "openvswitch/ofpbuf.h"
#include "packets.h"

/* Is 'flow' TCP?  Un-wildcards the fields read. */
static bool
pac_xlate_is_tcp(const struct flow *flow, struct flow_wildcards *wc)
{
    wc->masks.dl_type = OVS_BE16_MAX;
    if (!is_ip_any(flow)) {
        return false;
    }
    wc->masks.nw_proto = UINT8_MAX;
    return flow->nw_proto == IPPROTO_TCP;
}

void
pac_xlate_observe(struct ofpbuf *odp_actions, uint32_t pac_id,
                  const struct flow *flow, struct flow_wildcards *wc)
{
    if (pac_id && pac_xlate_is_tcp(flow, wc)) {
        size_t ofs = nl_msg_start_nested(odp_actions, OVS_ACTION_ATTR_PAC);

        nl_msg_put_u32(odp_actions, OVS_PAC_ATTR_ID, pac_id);
        nl_msg_put_flag(odp_actions, OVS_PAC_ATTR_RX);
        nl_msg_end_nested(odp_actions, ofs);
    }
}

void
pac_xlate_wrap(struct ofpbuf *odp_actions, uint32_t pac_id,
               const struct flow *flow, struct flow_wildcards *wc)
{
    /* A dropped packet has nothing to hold back. */
    if (!pac_id || !odp_actions->size || !pac_xlate_is_tcp(flow, wc)) {
        return;
    }

    struct ofpbuf *inner = ofpbuf_clone(odp_actions);
    size_t pac_ofs, actions_ofs;

    ofpbuf_clear(odp_actions);
    pac_ofs = nl_msg_start_nested(odp_actions, OVS_ACTION_ATTR_PAC);
    nl_msg_put_u32(odp_actions, OVS_PAC_ATTR_ID, pac_id);
    actions_ofs = nl_msg_start_nested(odp_actions, OVS_PAC_ATTR_ACTIONS);
    ofpbuf_put(odp_actions, inner->data, inner->size);
    nl_msg_end_nested(odp_actions, actions_ofs);
    nl_msg_end_nested(odp_actions, pac_ofs);
    ofpbuf_delete(inner);
}
