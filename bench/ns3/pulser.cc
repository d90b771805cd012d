/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Pulser with Explicit Incast Notifications: see pulser.h. */

#include "pulser.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace ns3 {

PulserStats pulser_stats;

namespace {

const uint16_t PPP_IPV4 = 0x0021;
const uint16_t IPV4_PROTO = 0x0800;

/* Whether the packet a sender's device is handing up to its stack carries
 * the EIN echo.  ns-3 hands a received packet up through IP to TCP within
 * the device's receive event, so the ACK PulserTcp is processing is the
 * one this describes; each sender node has one connection.  The
 * receiver's device clears it: the receiver's own PulserTcp (its requests'
 * window) must not take a sender's echo that no PulserTcp took. */
bool echo_on_current_ack = false;

/* (address, port, port) as one key. */
uint64_t
conn_key(uint32_t addr, uint16_t peer_port, uint16_t local_port)
{
    return ((uint64_t) addr << 32) | ((uint64_t) peer_port << 16)
           | local_port;
}

void
sender_rx(Ptr<const Packet> packet)
{
    /* PPP header (2 bytes), then the IPv4 header: TOS is its byte 1. */
    uint8_t head[4];

    echo_on_current_ack = packet->CopyData(head, sizeof head) == sizeof head
                          && head[0] == 0x00 && head[1] == PPP_IPV4
                          && (head[3] & TOS_EIN_ECHO);
}

} /* namespace */

/* --------------------------------------------------------------------- */
/* The switch: Algorithm 1 at the bottleneck's dequeue. */

NS_OBJECT_ENSURE_REGISTERED(EinQueue);

TypeId
EinQueue::GetTypeId(void)
{
    static TypeId tid = TypeId("ovs-pac::EinQueue")
        .SetParent<DropTailQueue<Packet>>()
        .AddConstructor<EinQueue>();
    return tid;
}

Ptr<EinQueue>
EinQueue::Make(uint32_t k_packets, double rate_gbps)
{
    Ptr<EinQueue> q = CreateObject<EinQueue>();

    /* The DCTCP paper's K (as --scheme dctcp): 20 packets at 1 Gbit/s,
     * 65 at 10 Gbit/s. */
    q->k_packets = k_packets ? k_packets
                   : rate_gbps < 10 ? 20
                   : (uint32_t) (65 * rate_gbps / 10 + 0.5);
    /* The paper sets HighWaterMark above the ECN threshold "to avoid
     * throughput loss" and gives no value. */
    q->high_water = q->k_packets * 3 / 2;
    /* EIN_threshold in the gradient's unit, bytes per second. */
    q->threshold_Bps = EIN_THRESHOLD * rate_gbps * 1e9 / 8;
    return q;
}

void
EinQueue::PrintStats(void) const
{
    const PulserStats &ps = pulser_stats;

    printf("  pulser: EIN marked %" PRIu64 " of %" PRIu64 " (gradient %"
           PRIu64 ", HighWaterMark %u packets), CE marked %" PRIu64
           " (K %u), echoed ACKs %" PRIu64 ", taken %" PRIu64
           ", senders reacted %" PRIu64 ", restored %" PRIu64 "\n",
           ps.ein_marked, ps.dequeued, ps.ein_gradient, high_water,
           ps.ce_marked, k_packets, ps.echoed_acks, ps.echo_acks_seen,
           ps.reactions, ps.restores);
}

/* Sets 'set' in the TOS byte of the IPv4 packet behind 'packet''s PPP
 * header and, with 'ect_to_ce', turns ECT(0)/ECT(1) into CE.  Returns
 * whether the ECN field was marked CE. */
bool
EinQueue::SetTos(Ptr<Packet> packet, uint8_t set, uint8_t ect_to_ce)
{
    PppHeader ppp;
    Ipv4Header ip;
    bool ce = false;

    packet->RemoveHeader(ppp);
    if (ppp.GetProtocol() == PPP_IPV4) {
        packet->RemoveHeader(ip);
        ip.SetTos(ip.GetTos() | set);
        if (ect_to_ce && (ip.GetEcn() == Ipv4Header::ECN_ECT0
                          || ip.GetEcn() == Ipv4Header::ECN_ECT1)) {
            ip.SetEcn(Ipv4Header::ECN_CE);
            ce = true;
        }
        packet->AddHeader(ip);
    }
    packet->AddHeader(ppp);
    return ce;
}

/* DCTCP's marking, as MarkingQueue: the paper builds Pulser on DCTCP and
 * keeps its ECN (section 4). */
bool
EinQueue::Enqueue(Ptr<Packet> packet)
{
    if (GetNPackets() > k_packets && SetTos(packet, 0, 1)) {
        pulser_stats.ce_marked++;
    }
    return DropTailQueue<Packet>::Enqueue(packet);
}

Ptr<Packet>
EinQueue::Dequeue(void)
{
    Ptr<Packet> packet = DropTailQueue<Packet>::Dequeue();
    if (!packet) {
        return packet;
    }
    pulser_stats.dequeued++;

    /* Lines 2-6: the gradient against the previous dequeue, in a sliding
     * window of N.  Qlen is the queue's bytes once this packet has left;
     * two dequeues at the same instant (none at a busy port, which
     * serialises) give no sample. */
    uint32_t qlen = GetNBytes();
    Time now = Simulator::Now();
    if (now > m_tPrev) {
        double gradient = ((double) qlen - m_qlenPrev)
                          / (now - m_tPrev).GetSeconds();
        if (m_count == EIN_SAMPLES) {
            m_sum -= m_gradients[m_next];
        } else {
            m_count++;
        }
        m_gradients[m_next] = gradient;
        m_sum += gradient;
        m_next = (m_next + 1) % EIN_SAMPLES;
    }
    m_qlenPrev = qlen;
    m_tPrev = now;

    /* Lines 7-18. */
    bool ein = false;
    if (m_count && m_sum / m_count > threshold_Bps) {
        ein = true;
        m_einPrev = true;
        pulser_stats.ein_gradient++;
    } else if (m_einPrev) {
        if (GetNPackets() > high_water) {
            ein = true;
        } else {
            m_einPrev = false;
        }
    }
    if (ein) {
        SetTos(packet, TOS_EIN, 0);
        pulser_stats.ein_marked++;
    }
    return packet;
}

/* --------------------------------------------------------------------- */
/* The receiver: the EIN echo on its ACKs. */

NS_OBJECT_ENSURE_REGISTERED(EinEchoDevice);

TypeId
EinEchoDevice::GetTypeId(void)
{
    static TypeId tid = TypeId("ovs-pac::EinEchoDevice")
        .SetParent<PacDevice>()
        .AddConstructor<EinEchoDevice>();
    return tid;
}

void
EinEchoDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    m_up = cb;
    PacDevice::SetReceiveCallback(
        MakeCallback(&EinEchoDevice::FromNetwork, this));
}

/* A packet from the ToR, its PPP header removed: notes an EIN mark for its
 * connection. */
bool
EinEchoDevice::FromNetwork(Ptr<NetDevice> dev, Ptr<const Packet> packet,
                           uint16_t protocol, const Address &from)
{
    uint8_t h[24];

    echo_on_current_ack = false;
    if (protocol == IPV4_PROTO
        && packet->CopyData(h, sizeof h) == sizeof h
        && (h[1] & TOS_EIN) && h[9] == 6 && (h[0] & 0x0f) == 5) {
        uint32_t src = (uint32_t) h[12] << 24 | h[13] << 16 | h[14] << 8
                       | h[15];
        m_pending[conn_key(src, h[20] << 8 | h[21], h[22] << 8 | h[23])]
            = true;
        pulser_stats.ein_received++;
    }
    return m_up(dev, packet, protocol, from);
}

/* A packet from the receiver's stack: a TCP segment on a connection with a
 * pending mark leaves with the echo, and the mark is cleared. */
bool
EinEchoDevice::Send(Ptr<Packet> packet, const Address &dest,
                    uint16_t protocol)
{
    uint8_t h[24];

    if (protocol == IPV4_PROTO && !m_pending.empty()
        && packet->CopyData(h, sizeof h) == sizeof h
        && h[9] == 6 && (h[0] & 0x0f) == 5) {
        uint32_t dst = (uint32_t) h[16] << 24 | h[17] << 16 | h[18] << 8
                       | h[19];
        auto it = m_pending.find(conn_key(dst, h[22] << 8 | h[23],
                                          h[20] << 8 | h[21]));
        if (it != m_pending.end()) {
            Ipv4Header ip;
            packet->RemoveHeader(ip);
            ip.SetTos(ip.GetTos() | TOS_EIN_ECHO);
            packet->AddHeader(ip);
            m_pending.erase(it);
            pulser_stats.echoed_acks++;
        }
    }
    return PacDevice::Send(packet, dest, protocol);
}

/* --------------------------------------------------------------------- */
/* The senders. */

void
pulser_watch_sender(Ptr<NetDevice> dev)
{
    dev->TraceConnectWithoutContext("MacRx", MakeCallback(&sender_rx));
}

NS_OBJECT_ENSURE_REGISTERED(PulserTcp);

TypeId
PulserTcp::GetTypeId(void)
{
    static TypeId tid = TypeId("ovs-pac::PulserTcp")
        .SetParent<TcpDctcp>()
        .AddConstructor<PulserTcp>();
    return tid;
}

/* DCTCP's cut with Linux's floor of 2 segments (LinuxDctcp in
 * pac-ns3.cc says why). */
uint32_t
PulserTcp::GetSsThresh(Ptr<const TcpSocketState> tcb,
                       uint32_t bytes_in_flight)
{
    return std::max(TcpDctcp::GetSsThresh(tcb, bytes_in_flight),
                    2 * tcb->m_segmentSize);
}

/* Called for every ACK that acknowledges data, in every congestion state
 * (IncreaseWindow not in all of them), so the reaction is here. */
void
PulserTcp::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segments_acked,
                     const Time &rtt)
{
    TcpDctcp::PktsAcked(tcb, segments_acked, rtt);

    uint32_t safe = PULSER_SAFE_SEGMENTS * tcb->m_segmentSize;
    if (echo_on_current_ack) {
        echo_on_current_ack = false;    /* One reaction per ACK. */
        pulser_stats.echo_acks_seen++;
        if (!m_braking) {
            /* Eq. (1).  The slow-start threshold goes down with the
             * window: ns-3 sets cwnd to it when CWR or recovery ends
             * and paces those states' sends toward it (PRR), which
             * would end the braking early. */
            m_braking = true;
            m_savedCwnd = tcb->m_cWnd;
            m_savedSsThresh = tcb->m_ssThresh;
            pulser_stats.reactions++;
        }
        /* Never up: after an RTO the window is below cwnd_safe. */
        tcb->m_cWnd = std::min<uint32_t>(tcb->m_cWnd, safe);
        tcb->m_ssThresh = std::min<uint32_t>(tcb->m_ssThresh, safe);
        /* The batch: what is in flight now.  Its last byte acknowledged
         * with no echo meanwhile ends the incast for this sender. */
        m_batchEnd = tcb->m_highTxMark;
    } else if (m_braking && tcb->m_lastAckedSeq >= m_batchEnd
               && tcb->m_congState == TcpSocketState::CA_OPEN) {
        /* Eq. (2). */
        m_braking = false;
        tcb->m_cWnd = std::max<uint32_t>(tcb->m_cWnd, m_savedCwnd);
        tcb->m_ssThresh = std::max<uint32_t>(tcb->m_ssThresh,
                                             m_savedSsThresh);
        pulser_stats.restores++;
    }
}

/* While braking the window grows no further than cwnd_safe: a sender
 * whose window an RTO took below it (1 segment) climbs back to it rather
 * than waiting at 1 segment for the whole batch to be acknowledged. */
void
PulserTcp::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segments_acked)
{
    uint32_t safe = PULSER_SAFE_SEGMENTS * tcb->m_segmentSize;

    if (!m_braking) {
        TcpDctcp::IncreaseWindow(tcb, segments_acked);
    } else if (tcb->m_cWnd < safe) {
        TcpDctcp::IncreaseWindow(tcb, segments_acked);
        tcb->m_cWnd = std::min<uint32_t>(tcb->m_cWnd, safe);
    }
}

Ptr<TcpCongestionOps>
PulserTcp::Fork()
{
    return CopyObject<PulserTcp>(this);
}

} /* namespace ns3 */
