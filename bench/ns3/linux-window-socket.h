/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef LINUX_WINDOW_SOCKET_H
#define LINUX_WINDOW_SOCKET_H 1

/* ns-3 3.37's TCP socket with three changes, each what Linux does:
 *
 * 1. It takes a zero window from a segment whose sequence and
 *    acknowledgement numbers are those of the last window update, as Linux
 *    and RFC 793 do.
 * 2. It sends no new data past the right edge of the peer's window, in
 *    loss recovery too (AvailableWindow() below).
 * 3. It measures RTT from the acknowledged segment's send time rather
 *    than from the millisecond timestamp echo (EstimateRtt() below).
 *
 * Why 1: libpac's zero-window copy of a held request (request_copy_us,
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
 * (docs/scale.md).
 *
 * Why 2: with every byte of the peer's window sent (SND.NXT - SND.UNA =
 * rWnd), ns-3 3.37's TcpTxBuffer::NextSeg() (rule (2), "m_sentSize <=
 * m_rWndCallback()") still offers new data, a segment of zero bytes
 * (seqHigh = seq), and TcpSocketBase::SendPendingData() sends it whenever
 * its available window, min(cwnd, rWnd) less RFC 6675's pipe, is above 0:
 * in loss recovery, where lost and SACKed segments leave the pipe.
 * TcpTxBuffer::CopyFromSequence() returns null for zero bytes, and
 * TcpRateLinux::SkbSent() dereferences it: the crash.  A sender whose
 * window the receiver keeps small (the receiver-window scheme, or
 * libpac's zero windows) and who loses segments reaches that state; one
 * with a 1 MB window never does.  Linux's tcp_write_xmit() sends new data
 * only when the whole segment fits under the window's right edge
 * (tcp_snd_wnd_test()) and still retransmits lost segments.  This socket
 * reports no available window when ns-3's next segment would be that
 * empty one, so SendPendingData() stops there; lost segments that
 * NextSeg() offers first go as before.
 *
 * Why 3: ns-3 3.37's timestamps count milliseconds (TcpOptionTS::
 * NowToTsValue()), and with timestamps on TcpSocketBase::EstimateRtt()
 * takes its sample from the echo alone: 0 ms, recorded as 1 us, at our
 * 100 us RTTs, whole milliseconds under queueing.  Linux's timestamps
 * count milliseconds too, but tcp_ack_update_rtt() prefers the sample from
 * the send time of the segment the ACK covers (microseconds; Karn's rule:
 * none from a retransmission) and uses the echo only when it has none.
 * Adaptive Pacing's interval (RTT / cwnd) needs the real RTT, as does
 * ns-3's pacing rate (cwnd / RTT).  The RTO (at least 200 ms) is the same
 * either way at these RTTs.
 *
 * Everything else is ns-3's TcpSocketBase, unmodified. */

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

    /* Paces this socket's segments at 'rate' at most, as Linux's
     * SO_MAX_PACING_RATE does (--scheme ap, incast-app.h): the first
     * finite rate turns pacing on, initial window included, and it stays
     * on; ns-3's own rate is then min(rate, cwnd / smoothed RTT x 200 %
     * below half the slow-start threshold, 120 % above), as Linux's
     * internal pacing.  A rate's bytes are TCP payload bytes, as Linux
     * paces a segment's length. */
    void SetMaxPacingRate(DataRate rate, bool finite)
    {
        if (!finite && !m_tcb->m_pacing) {
            return;                     /* Linux: ~0 leaves pacing off. */
        }
        m_tcb->m_pacing = true;
        m_tcb->m_paceInitialWindow = true;
        m_tcb->m_maxPacingRate = rate;
        if (m_tcb->m_lastRtt.Get().IsStrictlyPositive()) {
            UpdatePacingRate();
        } else {
            m_tcb->m_pacingRate = rate;
        }
    }

    /* The congestion window in segments, and the smoothed RTT: what
     * Linux's TCP_INFO gives (tcpi_snd_cwnd, tcpi_rtt). */
    uint32_t CwndSegments(void) const
    {
        return m_tcb->m_cWnd.Get() / m_tcb->m_segmentSize;
    }

    Time SmoothedRtt(void) const { return m_rtt->GetEstimate(); }

protected:
    /* Change 2 above.  NextSeg() is what SendPendingData() asks next; it
     * walks the sent segments, so it is asked only when every byte of the
     * peer's window has been sent. */
    uint32_t AvailableWindow(void) const override
    {
        uint32_t room = TcpSocketBase::AvailableWindow();
        SequenceNumber32 next, high;

        if (room && m_tcb->m_highTxMark.Get() - m_txBuffer->HeadSequence()
                    >= (int32_t) m_rWnd.Get()
            && m_txBuffer->NextSeg(&next, &high,
                                   m_sackEnabled
                                   && m_tcb->m_congState
                                      == TcpSocketState::CA_RECOVERY)
            && next == high) {
            return 0;
        }
        return room;
    }

    /* Change 3 above: ns-3's own estimate, from the send history, which
     * it takes only without timestamps (it keeps the history either way,
     * with Karn's rule). */
    void EstimateRtt(const TcpHeader &header) override
    {
        bool timestamps = m_timestampEnabled;

        m_timestampEnabled = false;
        TcpSocketBase::EstimateRtt(header);
        m_timestampEnabled = timestamps;
    }

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
