/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef INCAST_APP_H
#define INCAST_APP_H 1

/* The incast's applications in ns-3, over ns-3's own TCP sockets: each
 * sender answers every request with a block; the receiver (the client)
 * opens one connection per sender, then runs barrier-synchronised rounds
 * (a request on every connection at once; the next round when every
 * answer has arrived), as sim/pac-sim and tools/incast-app do.  Also
 * the count of the sockets' retransmission-timer expiries, and Adaptive
 * Pacing at the senders (--scheme ap).  The sockets are LinuxWindowSocket:
 * ns-3's TCP with Linux's rules for windows. */

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include "linux-window-socket.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace ns3 {

const uint16_t INCAST_SERVER_PORT = 5001;

struct IncastConfig {
    uint64_t bytes = 64 * 1024;         /* Answer per sender per round. */
    uint32_t request_bytes = 100;
    uint32_t rounds = 5;
    uint32_t jitter_ns = 1000;          /* Each answer starts after a
                                         * uniform 0..jitter_ns host
                                         * delay: host noise that breaks
                                         * exact ties between senders. */
    bool stop_when_done = true;         /* Stop the simulation after the
                                         * last round (background traffic
                                         * stops it itself). */
};

/* Counts retransmission-timer expiries of the sockets it is connected to.
 * ns-3's TcpSocketBase doubles m_rto (capped at 60 s) on every expiry, its
 * SYN's timer included; an RTT sample never sets it to exactly twice the
 * old value. */
struct RtoCounter {
    uint64_t expiries = 0;

    void Changed(Time old_rto, Time new_rto)
    {
        if (old_rto.IsStrictlyPositive()
            && (new_rto == old_rto * 2
                || (new_rto == Seconds(60) && old_rto >= Seconds(30)))) {
            expiries++;
        }
    }
};

/* Adaptive Pacing at the senders (--scheme ap; the AP paper, eq. (16), as
 * tools/incast-app/server.c's ap_pace() implements it on the testbed): the
 * interval between two segments of a connection is
 *
 *     t = max(0, min(RTT / w, (n w - B) / (C (w - 1))))
 *
 * from its congestion window w (segments) and smoothed RTT, the
 * connections n, the buffer B and the bottleneck's rate C in frames,
 * randomised to t (1 + x), x uniform on [-1, 1] (the paper's
 * desynchronisation), and set as the socket's maximum pacing rate
 * (frame / t bytes per second; unlimited when t is 0).  Set before each
 * answer and again at each change of the congestion window (the paper
 * computes t per window).  One for all senders. */
struct ApPacing {
    double flows = 1;                   /* n. */
    double buffer_frames = 0;           /* B. */
    double rate_frames = 0;             /* C, frames per second. */
    double frame = 0;                   /* Bytes on the wire per segment. */
    Ptr<UniformRandomVariable> x;       /* Uniform on [-1, 1]. */
    uint64_t sets = 0;                  /* Rates set, ... */
    uint64_t paced_sets = 0;            /* ... of them finite. */
    uint64_t paced_conns = 0;           /* Connections ever paced. */
    std::vector<double> interval_us;    /* Each finite set's t (1 + x). */

    /* Sets 'socket''s pacing rate from its window and RTT now; returns
     * whether the rate is finite. */
    bool Pace(Ptr<LinuxWindowSocket> socket)
    {
        double w = socket->CwndSegments();
        double rtt = socket->SmoothedRtt().GetSeconds();
        if (!w || rtt <= 0) {
            return false;
        }
        double t = rtt / w;
        if (w > 1) {
            t = std::min(t, (flows * w - buffer_frames)
                            / (rate_frames * (w - 1)));
        }
        t = std::max(t, 0.0) * (1 + x->GetValue());
        sets++;
        if (t > 0) {
            paced_sets++;
            interval_us.push_back(t * 1e6);
            socket->SetMaxPacingRate(DataRate((uint64_t) (8 * frame / t)),
                                     true);
            return true;
        }
        socket->SetMaxPacingRate(DataRate(UINT64_MAX / 2), false);
        return false;
    }
};

/* A sender: answers each whole request on a connection with 'bytes'. */
class Sender {
public:
    Sender(Ptr<Node> node, const IncastConfig &cfg, RtoCounter *rto,
           ApPacing *ap = nullptr)
        : m_cfg(cfg), m_rto(rto), m_ap(ap)
    {
        m_listen = LinuxWindowSocket::Create(node);
        m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(),
                                         INCAST_SERVER_PORT));
        m_listen->Listen();
        m_jitter = CreateObject<UniformRandomVariable>();
        m_jitter->SetAttribute("Max", DoubleValue(cfg.jitter_ns));
        m_listen->SetAcceptCallback(
            MakeNullCallback<bool, Ptr<Socket>, const Address &>(),
            MakeCallback(&Sender::Accepted, this));
    }

private:
    void Accepted(Ptr<Socket> socket, const Address &)
    {
        m_socket = socket;
        socket->TraceConnectWithoutContext(
            "RTO", MakeCallback(&RtoCounter::Changed, m_rto));
        socket->SetRecvCallback(MakeCallback(&Sender::Readable, this));
        socket->SetSendCallback(MakeCallback(&Sender::Writable, this));
        if (m_ap) {
            socket->TraceConnectWithoutContext(
                "CongestionWindow", MakeCallback(&Sender::CwndChanged, this));
        }
    }

    /* Adaptive Pacing: a new window, a new interval. */
    void CwndChanged(uint32_t, uint32_t)
    {
        Pace();
    }

    void Pace(void)
    {
        if (m_ap && m_ap->Pace(DynamicCast<LinuxWindowSocket>(m_socket))
            && !m_paced) {
            m_paced = true;
            m_ap->paced_conns++;
        }
    }

    void Readable(Ptr<Socket> socket)
    {
        Ptr<Packet> p;
        while ((p = socket->Recv())) {
            m_requestBytes += p->GetSize();
        }
        bool asked = false;
        while (m_requestBytes >= m_cfg.request_bytes) {
            m_requestBytes -= m_cfg.request_bytes;
            m_toSend += m_cfg.bytes;
            asked = true;
        }
        if (asked) {
            Pace();
            /* Host noise that breaks the exact ties between senders. */
            Simulator::Schedule(NanoSeconds(m_jitter->GetInteger()),
                                &Sender::Pump, this);
        }
    }

    void Writable(Ptr<Socket>, uint32_t) { Pump(); }

    void Pump(void)
    {
        while (m_toSend) {
            uint32_t room = m_socket->GetTxAvailable();
            uint32_t n = std::min<uint64_t>(m_toSend, room);
            if (!n || m_socket->Send(Create<Packet>(n)) < 0) {
                return;
            }
            m_toSend -= n;
        }
    }

    const IncastConfig &m_cfg;
    RtoCounter *m_rto;
    ApPacing *m_ap;                     /* Null: not paced. */
    bool m_paced = false;
    Ptr<UniformRandomVariable> m_jitter;
    Ptr<Socket> m_listen;
    Ptr<Socket> m_socket;
    uint64_t m_requestBytes = 0;
    uint64_t m_toSend = 0;
};

/* The receiver: connects to every sender, then runs the rounds. */
class Receiver {
public:
    Receiver(Ptr<Node> node, const IncastConfig &cfg,
             const std::vector<Ipv4Address> &senders)
        : m_cfg(cfg), m_conns(senders.size())
    {
        for (size_t i = 0; i < senders.size(); i++) {
            Conn &c = m_conns[i];
            c.socket = LinuxWindowSocket::Create(node);
            c.socket->TraceConnectWithoutContext(
                "RTO", MakeCallback(&RtoCounter::Changed, &rto));
            c.socket->Bind();
            c.socket->SetConnectCallback(
                MakeCallback(&Receiver::Connected, this),
                MakeCallback(&Receiver::ConnectFailed, this));
            c.socket->SetRecvCallback(
                MakeBoundCallback(&Receiver::ReadableCb, this, i));
            c.socket->Connect(InetSocketAddress(senders[i], INCAST_SERVER_PORT));
        }
    }

    RtoCounter rto;                     /* The receiver's own expiries. */
    uint32_t rounds_done = 0;
    uint64_t delivered = 0;             /* Answer bytes, in rounds. */
    Time first_round_start = Seconds(-1);
    Time last_round_end;
    Time first_round_end;
    Time handshake_done = Seconds(-1);
    std::vector<double> fct_ms;         /* Finished rounds' answers. */
    std::vector<double> round_ms;
    bool finished = false;

private:
    struct Conn {
        Ptr<Socket> socket;
        uint64_t received = 0;          /* Answer bytes, whole run. */
        uint64_t expected = 0;          /* End of the awaited answer. */
        Time request_at;
        bool awaiting = false;
    };

    void Connected(Ptr<Socket>)
    {
        if (++m_established == m_conns.size()) {
            handshake_done = Simulator::Now();
            StartRound();
        }
    }

    void ConnectFailed(Ptr<Socket>)
    {
        fprintf(stderr, "pac-ns3: a connection failed\n");
    }

    void StartRound(void)
    {
        Time now = Simulator::Now();

        m_round_start = now;
        if (first_round_start.IsNegative()) {
            first_round_start = now;
        }
        m_remaining = m_conns.size();
        m_round_fct.clear();
        for (Conn &c : m_conns) {
            c.expected += m_cfg.bytes;
            c.awaiting = true;
            c.request_at = now;
            c.socket->Send(Create<Packet>(m_cfg.request_bytes));
        }
    }

    static void ReadableCb(Receiver *self, size_t i, Ptr<Socket> socket)
    {
        self->Readable(i, socket);
    }

    void Readable(size_t i, Ptr<Socket> socket)
    {
        Conn &c = m_conns[i];
        Ptr<Packet> p;

        while ((p = socket->Recv())) {
            c.received += p->GetSize();
            if (!first_round_start.IsNegative()) {
                delivered += p->GetSize();
            }
        }
        if (c.awaiting && c.received >= c.expected) {
            c.awaiting = false;
            m_round_fct.push_back((Simulator::Now() - c.request_at)
                                  .GetSeconds() * 1e3);
            if (--m_remaining == 0) {
                EndRound();
            }
        }
    }

    void EndRound(void)
    {
        Time now = Simulator::Now();

        rounds_done++;
        last_round_end = now;
        round_ms.push_back((now - m_round_start).GetSeconds() * 1e3);
        fct_ms.insert(fct_ms.end(), m_round_fct.begin(), m_round_fct.end());
        if (rounds_done == 1) {
            first_round_end = now;
        }
        if (rounds_done < m_cfg.rounds) {
            StartRound();
        } else {
            finished = true;
            if (m_cfg.stop_when_done) {
                Simulator::Stop();
            }
        }
    }

    const IncastConfig &m_cfg;
    std::vector<Conn> m_conns;
    size_t m_established = 0;
    size_t m_remaining = 0;
    Time m_round_start;
    std::vector<double> m_round_fct;
};

} /* namespace ns3 */

#endif /* incast-app.h */
