/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef LINUX_WINDOW_SOCKET_H
#define LINUX_WINDOW_SOCKET_H 1

/* ns-3 3.37's TCP socket with one change: it takes a zero window from a
 * segment whose sequence and acknowledgement numbers are those of the last
 * window update, as Linux and RFC 793 do.
 *
 * Why: libpac's zero-window copy of a held request (request_copy_us,
 * docs/libpac.md) carries the request's own sequence number, which equals
 * the one on the receiver's pure ACKs since its previous request.  Linux
 * (tcp_may_update_window(): "ack_seq == snd_wl1 && (nwin > snd_wnd ||
 * !nwin)") and RFC 793 (SND.WL1 = SEG.SEQ and SND.WL2 =< SEG.ACK) take the
 * zero window from it; ns-3 3.37's TcpSocketBase::UpdateWindowSize() takes
 * a window only from a segment with a higher sequence or acknowledgement
 * number, or a larger window for the same acknowledgement number, so it
 * ignores the zero window and answers the copy at once: from the second
 * round on every copy released its request's answer early, the answers
 * overflowed the buffer and ns-3's loss recovery then crashed
 * (docs/scale.md).  Everything else is ns-3's TcpSocketBase, unmodified. */

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

namespace ns3 {

class LinuxWindowSocket : public TcpSocketBase {
public:
    static TypeId GetTypeId(void)
    {
        static TypeId tid = TypeId("ovs-pac::LinuxWindowSocket")
            .SetParent<TcpSocketBase>()
            .AddConstructor<LinuxWindowSocket>();
        return tid;
    }

    LinuxWindowSocket() = default;
    LinuxWindowSocket(const LinuxWindowSocket &sock) : TcpSocketBase(sock) {}

    /* What TcpL4Protocol::CreateSocket() does (3.37 hard-codes
     * TcpSocketBase there), with this class and the protocol's configured
     * congestion control, recovery and RTT estimator. */
    static Ptr<Socket> Create(Ptr<Node> node)
    {
        Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
        TypeIdValue cc, recovery, rtt;
        ObjectFactory factory;

        tcp->GetAttribute("SocketType", cc);
        tcp->GetAttribute("RecoveryType", recovery);
        tcp->GetAttribute("RttEstimatorType", rtt);

        Ptr<LinuxWindowSocket> socket = CreateObject<LinuxWindowSocket>();
        socket->SetNode(node);
        socket->SetTcp(tcp);
        factory.SetTypeId(rtt.Get());
        socket->SetRtt(factory.Create<RttEstimator>());
        factory.SetTypeId(cc.Get());
        socket->SetCongestionControlAlgorithm(
            factory.Create<TcpCongestionOps>());
        factory.SetTypeId(recovery.Get());
        socket->SetRecoveryAlgorithm(factory.Create<TcpRecoveryOps>());
        return socket;
    }

protected:
    Ptr<TcpSocketBase> Fork(void) override
    {
        /* Connections accepted on a listening socket are its copies. */
        return CopyObject<LinuxWindowSocket>(this);
    }

    void DoForwardUp(Ptr<Packet> packet, const Address &from,
                     const Address &to) override
    {
        TcpHeader tcp;

        if (m_state == ESTABLISHED && m_rWnd.Get() != 0
            && packet->PeekHeader(tcp)
            && (tcp.GetFlags() & (TcpHeader::SYN | TcpHeader::RST
                                  | TcpHeader::ACK)) == TcpHeader::ACK
            && tcp.GetWindowSize() == 0
            && tcp.GetSequenceNumber() == m_highRxMark.Get()
            && tcp.GetAckNumber() == m_highRxAckMark.Get()
            && (!m_timestampEnabled || tcp.HasOption(TcpOption::TS))) {
            /* TcpSocketBase::DoForwardUp() then leaves the window at 0
             * and enters persist state, as for any zero window. */
            m_rWnd = 0;
        }
        TcpSocketBase::DoForwardUp(packet, from, to);
    }
};

} /* namespace ns3 */

#endif /* linux-window-socket.h */
