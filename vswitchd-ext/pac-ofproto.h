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

#ifndef PAC_OFPROTO_H
#define PAC_OFPROTO_H 1

/* PAC instances of ofproto-dpif ports: one datapath instance per port with
 * PAC, under an id unique in this process. */

#include <stdint.h>

struct dpif;
struct pac_config;

/* Makes the port whose instance id is '*pac_id' (0: none) use 'config', or
 * no PAC if 'config' is NULL; updates '*pac_id'.  Returns 0, EOPNOTSUPP if
 * 'dpif' has no PAC (then '*pac_id' is 0), or another positive errno
 * value (then the port keeps no PAC). */
int pac_ofport_set(struct dpif *, uint32_t *pac_id,
                   const struct pac_config *config);

#endif /* pac-ofproto.h */
