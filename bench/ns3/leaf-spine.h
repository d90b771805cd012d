/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef LEAF_SPINE_H
#define LEAF_SPINE_H 1

/* pac-ns3's two-tier topology (--topology leaf-spine): the hosts spread
 * over leaf switches, every leaf linked to every spine.
 *
 *   hosts --(access)--> leaf --(fabric)--> spine --> leaf --> host
 *
 * The receiver is host 0, on leaf 0; sender i is on leaf (i + 1) % leaves,
 * so the incast's senders are spread over all leaves (a few share the
 * receiver's leaf) and most answers cross a spine.  Leaf 0 is pac-ns3's
 * "ToR" node: its port toward the receiver (the bottleneck, with PAC's
 * device at the far end) is built by pac-ns3.cc as in the single-ToR
 * case, and its routing to its own hosts is pac-ns3's per-host hash
 * lookup; this file adds the rest.  Every other switch port has a queue
 * from the caller (the same buffer as the bottleneck's, marking for
 * DCTCP); hosts' own device queues are large, as in the single-ToR case.
 *
 * Forwarding: a leaf sends a packet for one of its hosts down that host's
 * port, any other up one of the spines, chosen by a hash of the packet's
 * flow (addresses, protocol, ports): per-flow ECMP, so that a TCP flow
 * keeps one path and sees no reordering.  A spine sends a packet down to
 * the destination's leaf.  Both are one hash lookup per packet (ns-3's
 * static routing scans its routes, O(hosts) per packet), and ECMP is not
 * ns-3's Ipv4GlobalRouting's (its RandomEcmpRouting picks a path per
 * packet, which reorders a flow's segments).
 *
 * Propagation: --rtt-us is the base RTT of the longest path (4 links each
 * way), so each link is rtt / 8 (the single-ToR's path has 2 links of
 * rtt / 4). */

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3 {

struct LeafSpineConfig {
    uint32_t spines = 4;
    uint32_t leaves = 8;
    double access_gbps = 1;             /* Host <-> leaf. */
    double fabric_gbps = 10;            /* Leaf <-> spine. */
    Time hop;                           /* Propagation per link. */
};

class FabricRouting;

class LeafSpine {
public:
    /* A switch port's queue for a port of 'gbps'. */
    typedef std::function<Ptr<Queue<Packet>>(double gbps)> QueueFactory;
    /* Registers a host on leaf 0 with leaf 0's own (per-host) routing. */
    typedef std::function<void(Ipv4Address host, uint32_t interface)>
        LocalHost;

    /* Builds the fabric around 'leaf0' (pac-ns3's ToR node, with its
     * stack installed) and attaches 'senders' (stack installed) to the
     * leaves.  The receiver's link on leaf 0 is the caller's: call
     * AddReceiver() once it has its address. */
    LeafSpine(const LeafSpineConfig &cfg, Ptr<Node> leaf0,
              NodeContainer senders, QueueFactory make_queue,
              LocalHost local_host);
    ~LeafSpine();

    void AddReceiver(Ipv4Address receiver);

    std::vector<Ipv4Address> sender_addrs;
    std::vector<Ptr<Node>> switches;    /* Leaves, then spines. */

    /* Packets dropped by every switch port but the bottleneck. */
    uint64_t Drops(void) const;
    uint32_t HostsPerLeaf(void) const { return m_hostsPerLeaf; }
    /* Packets each spine has forwarded, " a b c ...": ECMP's spread. */
    std::string SpinePackets(void) const;

private:
    LeafSpineConfig m_cfg;
    uint32_t m_hostsPerLeaf = 0;
    std::vector<Ptr<FabricRouting>> m_routing;  /* Per switch. */
    /* Spine s's interface toward leaf l: m_spineDown[s][l]. */
    std::vector<std::vector<uint32_t>> m_spineDown;
    std::vector<Ptr<Queue<Packet>>> m_queues;
    std::vector<std::vector<Ptr<Queue<Packet>>>> m_spineQueues;
};

} /* namespace ns3 */

#endif /* leaf-spine.h */
