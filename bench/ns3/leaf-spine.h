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
 * case, and its routing to its own hosts is a FabricRouting (below) of
 * pac-ns3's with those hosts and no uplinks; this file adds the rest.  Every other switch port has a queue
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
#include <unordered_map>
#include <vector>

namespace ns3 {

struct LeafSpineConfig {
    uint32_t spines = 4;
    uint32_t leaves = 8;
    double access_gbps = 1;             /* Host <-> leaf. */
    double fabric_gbps = 10;            /* Leaf <-> spine. */
    Time hop;                           /* Propagation per link. */
};

/* A switch's forwarding, one hash lookup per packet: a packet for a host
 * in the table leaves through that host's interface; any other through one
 * of the uplinks, chosen by a hash of its flow.  A packet it has no route
 * for goes to the next routing protocol.  The ToR (leaf 0) has one with
 * its hosts and no uplinks, ahead of its fabric one: ns-3's static routing
 * scans every route (one per sender link) for each packet, which made the
 * ToR cost O(N) per packet. */
class FabricRouting : public Ipv4RoutingProtocol {
public:
    static TypeId GetTypeId(void)
    {
        static TypeId tid = TypeId("ovs-pac::FabricRouting")
            .SetParent<Ipv4RoutingProtocol>();
        return tid;
    }

    void AddHost(Ipv4Address host, uint32_t interface)
    {
        m_hosts[host.Get()] = interface;
    }

    void AddUplink(uint32_t interface) { m_uplinks.push_back(interface); }

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p, const Ipv4Header &header,
                               Ptr<NetDevice>,
                               Socket::SocketErrno &sockerr) override
    {
        Ptr<Ipv4Route> route = Lookup(p, header);
        sockerr = route ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
        return route;
    }

    bool RouteInput(Ptr<const Packet> p, const Ipv4Header &header,
                    Ptr<const NetDevice>, UnicastForwardCallback ucb,
                    MulticastForwardCallback, LocalDeliverCallback,
                    ErrorCallback) override
    {
        Ptr<Ipv4Route> route = Lookup(p, header);
        if (!route) {
            return false;
        }
        ucb(route, p, header);
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void SetIpv4(Ptr<Ipv4> ipv4) override { m_ipv4 = ipv4; }
    void PrintRoutingTable(Ptr<OutputStreamWrapper>, Time::Unit) const
        override {}

private:
    Ptr<Ipv4Route> Lookup(Ptr<const Packet> p, const Ipv4Header &header)
    {
        auto it = m_hosts.find(header.GetDestination().Get());
        if (it != m_hosts.end()) {
            return Route(it->second);
        }
        if (m_uplinks.empty()) {
            return nullptr;
        }
        return Route(m_uplinks[FlowHash(p, header) % m_uplinks.size()]);
    }

    /* The flow's addresses, protocol and (TCP or UDP) ports, mixed.  The
     * packet starts at the transport header: ns-3 has taken the IP header
     * off before routing. */
    static uint32_t FlowHash(Ptr<const Packet> p, const Ipv4Header &header)
    {
        uint8_t ports[4] = { 0, 0, 0, 0 };
        if (p && (header.GetProtocol() == 6 || header.GetProtocol() == 17)) {
            p->CopyData(ports, sizeof ports);
        }
        uint64_t h = header.GetSource().Get();
        h = h * 0x9e3779b97f4a7c15ull ^ header.GetDestination().Get();
        h = h * 0x9e3779b97f4a7c15ull ^ header.GetProtocol();
        h = h * 0x9e3779b97f4a7c15ull
            ^ ((uint32_t) ports[0] << 24 | (uint32_t) ports[1] << 16
               | (uint32_t) ports[2] << 8 | ports[3]);
        h ^= h >> 29;
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 32;
        return (uint32_t) h;
    }

    /* One route per output interface, made once: the next hop is the
     * other end of a point-to-point link, so the route names only the
     * device (gateway 0.0.0.0: the packet's destination is the target). */
    Ptr<Ipv4Route> Route(uint32_t interface)
    {
        if (interface >= m_routes.size()) {
            m_routes.resize(interface + 1);
        }
        Ptr<Ipv4Route> &route = m_routes[interface];
        if (!route) {
            route = Create<Ipv4Route>();
            route->SetGateway(Ipv4Address::GetAny());
            route->SetSource(m_ipv4->GetAddress(interface, 0).GetLocal());
            route->SetOutputDevice(m_ipv4->GetNetDevice(interface));
        }
        return route;
    }

    Ptr<Ipv4> m_ipv4;
    std::unordered_map<uint32_t, uint32_t> m_hosts;
    std::vector<uint32_t> m_uplinks;
    std::vector<Ptr<Ipv4Route>> m_routes;
};


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
