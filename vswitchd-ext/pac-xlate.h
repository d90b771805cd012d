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

#ifndef PAC_XLATE_H
#define PAC_XLATE_H 1

/* Where ofproto-dpif-xlate puts the PAC action (see pac-dp.h for what it
 * does in the datapath).  Only TCP gets it, so the megaflow has to match
 * on what decides that: the Ethernet type and the IP protocol (the action
 * parses each segment itself, so no TCP field is un-wildcarded). */

#include <stddef.h>
#include <stdint.h>

struct flow;
struct flow_wildcards;
struct ofpbuf;

/* Appends pac(id=PAC_ID,rx) to 'odp_actions' before an output to a port
 * with PAC instance 'pac_id' (0: none) if 'flow' is TCP. */
void pac_xlate_observe(struct ofpbuf *odp_actions, uint32_t pac_id,
                       const struct flow *flow, struct flow_wildcards *wc);

/* For a packet received on a port with PAC instance 'pac_id', whose headers
 * on arrival are 'flow': if it is TCP, wraps all of 'odp_actions' into
 * pac(id=PAC_ID,actions(...)). */
void pac_xlate_wrap(struct ofpbuf *odp_actions, uint32_t pac_id,
                    const struct flow *flow, struct flow_wildcards *wc);

#endif /* pac-xlate.h */
