/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* pac-ns3's leaf-spine topology: the switches, their links and their
 * forwarding (leaf-spine.h says what and why). */

#include "leaf-spine.h"

#include "ns3/traffic-control-module.h"

#include <unordered_map>

namespace ns3 {

namespace {

std::string
rate(double gbps)
{
    char s[64];
    snprintf(s, sizeof s, "%.0fbps", gbps * 1e9);
    return s;
}

Ptr<FabricRouting>
add_fabric_routing(Ptr<Node> node)
{
    Ptr<FabricRouting> r = CreateObject<FabricRouting>();
    DynamicCast<Ipv4ListRouting>(node->GetObject<Ipv4>()->GetRoutingProtocol())
        ->AddRoutingProtocol(r, 5);
    return r;
}

} /* namespace */

LeafSpine::LeafSpine(const LeafSpineConfig &cfg, Ptr<Node> leaf0,
                     NodeContainer senders, QueueFactory make_queue,
                     LocalHost local_host)
    : m_cfg(cfg)
{
    uint32_t n = senders.GetN();

    m_hostsPerLeaf = (n + 1 + cfg.leaves - 1) / cfg.leaves;

    switches.push_back(leaf0);
    NodeContainer more;
    more.Create(cfg.leaves - 1 + cfg.spines);
    InternetStackHelper stack;
    stack.Install(more);
    for (uint32_t i = 0; i < more.GetN(); i++) {
        switches.push_back(more.Get(i));
    }
    for (Ptr<Node> sw : switches) {
        m_routing.push_back(add_fabric_routing(sw));
    }

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");

    /* A point-to-point link whose ends get the given queues. */
    auto link = [&](Ptr<Node> a, Ptr<Node> b, double gbps,
                    Ptr<Queue<Packet>> qa, Ptr<Queue<Packet>> qb) {
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", StringValue(rate(gbps)));
        p2p.SetChannelAttribute("Delay", TimeValue(cfg.hop));
        NetDeviceContainer devs = p2p.Install(a, b);
        DynamicCast<PointToPointNetDevice>(devs.Get(0))->SetQueue(qa);
        DynamicCast<PointToPointNetDevice>(devs.Get(1))->SetQueue(qb);
        Ipv4InterfaceContainer ifs = addr.Assign(devs);
        addr.NewNetwork();
        return ifs;
    };
    auto host_queue = [](void) {
        Ptr<Queue<Packet>> q = CreateObject<DropTailQueue<Packet>>();
        q->SetMaxSize(QueueSize("100000p"));
        return q;
    };
    auto switch_queue = [&](double gbps) {
        Ptr<Queue<Packet>> q = make_queue(gbps);
        m_queues.push_back(q);
        return q;
    };

    /* Hosts: sender i on leaf (i + 1) % leaves. */
    Ipv4StaticRoutingHelper static_routing;
    std::vector<std::pair<Ipv4Address, uint32_t>> host_leaf;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = (i + 1) % cfg.leaves;
        Ptr<Node> leaf = switches[l];
        Ipv4InterfaceContainer ifs = link(senders.Get(i), leaf,
                                          cfg.access_gbps, host_queue(),
                                          switch_queue(cfg.access_gbps));
        sender_addrs.push_back(ifs.GetAddress(0));
        if (l == 0) {
            local_host(ifs.GetAddress(0), ifs.Get(1).second);
        } else {
            m_routing[l]->AddHost(ifs.GetAddress(0), ifs.Get(1).second);
        }
        static_routing.GetStaticRouting(senders.Get(i)->GetObject<Ipv4>())
            ->SetDefaultRoute(ifs.GetAddress(1), 1);
        host_leaf.emplace_back(ifs.GetAddress(0), l);
    }

    /* Every leaf to every spine. */
    m_spineDown.assign(cfg.spines, std::vector<uint32_t>(cfg.leaves));
    m_spineQueues.resize(cfg.spines);
    for (uint32_t s = 0; s < cfg.spines; s++) {
        Ptr<Node> spine = switches[cfg.leaves + s];
        for (uint32_t l = 0; l < cfg.leaves; l++) {
            Ptr<Queue<Packet>> down = switch_queue(cfg.fabric_gbps);
            m_spineQueues[s].push_back(down);
            Ipv4InterfaceContainer ifs = link(switches[l], spine,
                                              cfg.fabric_gbps,
                                              switch_queue(cfg.fabric_gbps),
                                              down);
            m_routing[l]->AddUplink(ifs.Get(0).second);
            m_spineDown[s][l] = ifs.Get(1).second;
        }
    }
    for (auto &h : host_leaf) {
        for (uint32_t s = 0; s < cfg.spines; s++) {
            m_routing[cfg.leaves + s]->AddHost(h.first,
                                              m_spineDown[s][h.second]);
        }
    }

    /* No queue discs (leaf 0's go with pac-ns3's ToR). */
    for (size_t i = 1; i < switches.size(); i++) {
        Ptr<Node> node = switches[i];
        Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; d < node->GetNDevices(); d++) {
            Ptr<NetDevice> dev = node->GetDevice(d);
            if (tc && tc->GetRootQueueDiscOnDevice(dev)) {
                tc->DeleteRootQueueDiscOnDevice(dev);
            }
        }
    }
}

LeafSpine::~LeafSpine() = default;

void
LeafSpine::AddReceiver(Ipv4Address receiver)
{
    for (uint32_t s = 0; s < m_cfg.spines; s++) {
        m_routing[m_cfg.leaves + s]->AddHost(receiver, m_spineDown[s][0]);
    }
}

std::string
LeafSpine::SpinePackets(void) const
{
    std::string s;

    for (const auto &queues : m_spineQueues) {
        uint64_t n = 0;
        for (const Ptr<Queue<Packet>> &q : queues) {
            n += q->GetTotalReceivedPackets();
        }
        s += " " + std::to_string(n);
    }
    return s;
}

uint64_t
LeafSpine::Drops(void) const
{
    uint64_t drops = 0;

    for (const Ptr<Queue<Packet>> &q : m_queues) {
        drops += q->GetTotalDroppedPackets();
    }
    return drops;
}

} /* namespace ns3 */
