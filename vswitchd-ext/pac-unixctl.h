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

#ifndef PAC_UNIXCTL_H
#define PAC_UNIXCTL_H 1

/* "ovs-appctl pac/..." commands of ovs-vswitchd.
 *
 * pac_unixctl_init() registers them.  ovs-vswitchd calls it once from
 * bridge_init(); further calls do nothing. */

void pac_unixctl_init(void);
void pac_unixctl_log_version(void);

#endif /* pac-unixctl.h */
