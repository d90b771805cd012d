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

#ifndef PAC_DP_H
#define PAC_DP_H 1

/* The PAC instances of one userspace datapath (dpif-netdev) and the
 * execution of the OVS_ACTION_ATTR_PAC action.
 *
 * An instance guards one receiver port.  The action has two forms:
 *
 *   pac(id=N,rx)             A segment toward the receiver: libpac observes
 *                            it (in-flight, ECN, flow state); the packet
 *                            goes on with the actions that follow.
 *
 *   pac(id=N,actions(...))   A segment from the receiver: it runs the
 *                            nested actions at once, or later if libpac
 *                            holds it (the packet is stolen from the batch
 *                            together with a reference to its actions).
 *
 * Anything that is not a parseable TCP segment, and everything when
 * instance N does not exist, runs on untouched.
 *
 * Packets that PAC releases are sent by the thread that released them:
 * the one whose packet lowered in-flight, the one whose timer fired
 * (pac_dp_run()), or the one that reconfigured or deleted the instance.
 * The datapath supplies how to run actions on them ('struct pac_dp_exec').
 *
 * Locking: per instance.  Its 'mutex' guards libpac's state while a thread
 * decides; its 'out_mutex' is held by the one thread that sends what was
 * decided.  A thread that finds 'out_mutex' taken hands its packets to the
 * thread holding it, which sends them after its own: packets of one flow
 * leave in the order PAC chose, whichever threads are involved, and no
 * thread ever waits for another's sending. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dp_packet_batch;
struct nlattr;
struct pac_config;
struct pac_dp;
struct pac_flow_info;
struct pac_stats;

/* How the datapath runs 'actions' on packets that PAC sends: it takes
 * ownership of every packet in 'batch'.  'batch' holds packets of one IP
 * version with the same actions.  Called with no PAC lock that the
 * actions could need. */
struct pac_dp_exec {
    void (*run)(void *ctx, struct dp_packet_batch *batch,
                const struct nlattr *actions, size_t actions_len);
    void *ctx;
};

/* Whether 'run' needs the packets' flow to run 'actions' (dpif-netdev
 * reads it for conntrack only).  False if every action is one known not to
 * read it (output, set, VLAN push/pop, truncate, recirculation): then the
 * datapath need not parse the first packet again for each batch it sends. */
bool pac_dp_actions_need_flow(const struct nlattr *actions,
                              size_t actions_len);

struct pac_dp *pac_dp_create(const char *dp_name);
void pac_dp_destroy(struct pac_dp *);

/* Configuration, from the main thread.  pac_dp_set() creates instance
 * 'id' or replaces it (the old one releases everything it holds through
 * 'exec' and forgets its flows); it keeps the instance if its configuration
 * is pac_config_equal() to 'config'.  Returns 0 or a positive errno
 * value. */
int pac_dp_set(struct pac_dp *, uint32_t id, const struct pac_config *,
               const struct pac_dp_exec *exec);
int pac_dp_del(struct pac_dp *, uint32_t id, const struct pac_dp_exec *);
int pac_dp_get(struct pac_dp *, uint32_t id, struct pac_stats *,
               void (*flow_cb)(void *aux, const struct pac_flow_info *),
               void *aux);

/* Executes the PAC action 'a' on 'batch' at 'now_us' (OVS time, so that
 * time/warp drives it).  Follows the odp_execute conventions: with
 * 'should_steal' the packets are ours, otherwise they stay the caller's
 * (PAC holds or sends copies).  For pac(...,actions(...)) the batch is
 * empty on return if 'should_steal'. */
void pac_dp_execute_action(struct pac_dp *, struct dp_packet_batch *batch,
                           const struct nlattr *a, bool should_steal,
                           uint64_t now_us, const struct pac_dp_exec *exec);

/* Timers: runs every instance whose deadline is at or before 'now_us'.
 * Cheap when nothing is due (one atomic read).  Instances busy in another
 * thread are skipped; they are retried on the next call. */
void pac_dp_run(struct pac_dp *, uint64_t now_us,
                const struct pac_dp_exec *exec);

/* Earliest deadline of any instance, in OVS microseconds (UINT64_MAX if
 * none). */
uint64_t pac_dp_next_wakeup(const struct pac_dp *);

#endif /* pac-dp.h */
