/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef PULSER_H
#define PULSER_H 1

/* Pulser with Explicit Incast Notifications (--scheme pulser): the
 * Pulser/EIN paper's switch marking (section 3.1, Algorithm 1) and sender
 * reaction (section 3.2), on top of DCTCP as the paper builds it.
 *
 *   - EinQueue: the ToR's bottleneck buffer.  Drop-tail with DCTCP's CE
 *     marking at enqueue (as MarkingQueue in pac-ns3.cc), and EIN at
 *     dequeue: the queue's gradient between consecutive dequeues, averaged
 *     over the last N = 50, sets EIN on the leaving packet while it exceeds
 *     0.25 x the line rate, and keeps setting it after that while the
 *     queue holds more than HighWaterMark packets.
 *   - EIN is one IP-header bit: DSCP's lowest bit (TOS 0x04), which ns-3
 *     keeps end to end (the ToR's forwarding copies the TOS byte; nothing
 *     else rewrites it).
 *   - EinEchoDevice: the receiver's network device.  ns-3's TCP has no
 *     spare header bit to echo EIN in (TcpHeader serialises 8 flag bits,
 *     all in use), so the device echoes it as the paper's TCP bit would:
 *     an ACK the receiver sends on a connection that received an
 *     EIN-marked packet since its previous ACK leaves with the next DSCP
 *     bit (TOS 0x08, "EIN echo") set in its IP header.
 *   - PulserTcp: the senders' congestion control, ns-3's TcpDctcp (with
 *     Linux's 2-segment floor on its cut, as LinuxDctcp) plus Pulser's
 *     reaction: on an ACK with the EIN echo it saves cwnd and sets it to
 *     4 segments (braking, eq. (1)); once a window's worth of data sent
 *     since the last echoed ACK is acknowledged with no echo, it restores
 *     the saved cwnd (eq. (2)).
 *
 * The senders see the echo on their device (each sender node has exactly
 * one connection), in the same simulator event in which ns-3 hands the
 * ACK up to TCP: pulser_watch_sender() records whether the packet being
 * received carries the echo, and PulserTcp reads it while that ACK is
 * processed. */

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include "pac-device.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3 {

/* The paper's parameters (section 3.1 and 4). */
const uint32_t EIN_SAMPLES = 50;        /* N. */
const double EIN_THRESHOLD = 0.25;      /* x the line rate. */
const uint32_t PULSER_SAFE_SEGMENTS = 4;        /* cwnd_safe. */

const uint8_t TOS_EIN = 0x04;
const uint8_t TOS_EIN_ECHO = 0x08;

/* What the three parts counted, over the run. */
struct PulserStats {
    uint64_t dequeued = 0;          /* Packets through the EIN logic. */
    uint64_t ein_marked = 0;        /* EIN set at the ToR. */
    uint64_t ein_gradient = 0;      /* ... by the gradient (line 7). */
    uint64_t ce_marked = 0;         /* DCTCP's CE set at the ToR. */
    uint64_t ein_received = 0;      /* EIN-marked packets at the receiver. */
    uint64_t echoed_acks = 0;       /* Receiver's ACKs with the echo. */
    uint64_t echo_acks_seen = 0;    /* Echoed ACKs the senders' TCP took. */
    uint64_t reactions = 0;         /* Braking phases started (eq. 1). */
    uint64_t restores = 0;          /* ... ended by eq. (2). */
};

extern PulserStats pulser_stats;

class EinQueue : public DropTailQueue<Packet> {
public:
    static TypeId GetTypeId(void);

    /* The bottleneck's buffer at 'rate_gbps': K as --scheme dctcp's
     * ('k_packets', or 0 for the DCTCP paper's), HighWaterMark 1.5 K. */
    static Ptr<EinQueue> Make(uint32_t k_packets, double rate_gbps);

    /* The detail line: the counts in pulser_stats. */
    void PrintStats(void) const;

    uint32_t k_packets = 20;        /* DCTCP's K. */
    uint32_t high_water = 30;       /* HighWaterMark, packets. */
    double threshold_Bps = 0;       /* EIN_threshold, bytes/s. */

    bool Enqueue(Ptr<Packet> packet) override;
    Ptr<Packet> Dequeue(void) override;

private:
    static bool SetTos(Ptr<Packet> packet, uint8_t set, uint8_t ect_to_ce);

    std::vector<double> m_gradients = std::vector<double>(EIN_SAMPLES);
    double m_sum = 0;
    uint32_t m_next = 0;
    uint32_t m_count = 0;
    uint32_t m_qlenPrev = 0;
    Time m_tPrev;
    bool m_einPrev = false;
};

class EinEchoDevice : public PacDevice {
public:
    static TypeId GetTypeId(void);

    bool Send(Ptr<Packet> packet, const Address &dest,
              uint16_t protocol) override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;

private:
    bool FromNetwork(Ptr<NetDevice> dev, Ptr<const Packet> packet,
                     uint16_t protocol, const Address &from);

    NetDevice::ReceiveCallback m_up;
    /* Connections (peer address, peer port, local port) with an
     * EIN-marked packet since their last ACK. */
    std::unordered_map<uint64_t, bool> m_pending;
};

class PulserTcp : public TcpDctcp {
public:
    static TypeId GetTypeId(void);

    PulserTcp() = default;
    PulserTcp(const PulserTcp &other) : TcpDctcp(other) {}

    std::string GetName() const override { return "Pulser"; }
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb,
                         uint32_t bytes_in_flight) override;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segments_acked,
                   const Time &rtt) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb,
                        uint32_t segments_acked) override;
    Ptr<TcpCongestionOps> Fork() override;

private:
    bool m_braking = false;
    uint32_t m_savedCwnd = 0;
    uint32_t m_savedSsThresh = 0;
    SequenceNumber32 m_batchEnd;
};

/* Watches a sender's device for the EIN echo on the ACKs it receives. */
void pulser_watch_sender(Ptr<NetDevice> dev);

} /* namespace ns3 */

#endif /* pulser.h */
