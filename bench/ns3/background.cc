/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* pac-ns3's background traffic: the flow-size distributions, the flows'
 * applications and their statistics (background.h says what). */

#include "background.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace ns3 {

namespace {

/* Flow-size distributions as (bytes, cumulative probability) points,
 * sampled by linear interpolation between points, the tables used by the
 * pFabric, PIAS and HPCC simulations.
 *
 * Web search: the DCTCP paper's query and background traffic of a
 * production web-search cluster (Alizadeh et al., "Data Center TCP",
 * SIGCOMM 2010, Fig. 4), read off as: 15 % of flows up to 10 KB, about
 * half under 80 KB, 30 % over 1 MB, the largest 30 MB.  Mean 1.71 MB. */
const std::vector<std::pair<double, double>> WEBSEARCH = {
    { 0, 0 },
    { 10e3, 0.15 },
    { 20e3, 0.20 },
    { 30e3, 0.30 },
    { 50e3, 0.40 },
    { 80e3, 0.53 },
    { 200e3, 0.60 },
    { 1e6, 0.70 },
    { 2e6, 0.80 },
    { 5e6, 0.90 },
    { 10e6, 0.97 },
    { 30e6, 1.00 },
};

/* Data mining: the VL2 paper's flow sizes in a data-mining cluster
 * (Greenberg et al., "VL2", SIGCOMM 2009, Fig. 2), in 1 460-byte packets
 * as those simulations tabulate it: half the flows one packet, 80 % up to
 * 7 packets, 1 % over 66 667 (97 MB), the largest 666 667 (973 MB).
 * Mean 7.5 MB. */
const double PKT = 1460;
const std::vector<std::pair<double, double>> DATAMINING = {
    { 1 * PKT, 0 },
    { 1 * PKT, 0.50 },
    { 2 * PKT, 0.60 },
    { 3 * PKT, 0.70 },
    { 7 * PKT, 0.80 },
    { 267 * PKT, 0.90 },
    { 2107 * PKT, 0.95 },
    { 66667 * PKT, 0.99 },
    { 666667 * PKT, 1.00 },
};

const std::vector<std::pair<double, double>> *
table(const std::string &cdf)
{
    return cdf == "websearch" ? &WEBSEARCH
           : cdf == "datamining" ? &DATAMINING : nullptr;
}

/* Flows under this are short, as in the peers' papers (pFabric, PIAS);
 * at this or over it long. */
const uint64_t SHORT_BYTES = 100000;
const uint64_t LONG_BYTES = 1000000;

template <typename T>
double
nearest_rank(std::vector<T> v, double p)
{
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    size_t rank = (size_t) std::ceil(p / 100.0 * v.size());
    return (double) v[rank ? rank - 1 : 0];
}

} /* namespace */

double
Background::MeanBytes(const std::string &cdf)
{
    const std::vector<std::pair<double, double>> *t = table(cdf);
    double mean = 0;

    if (!t) {
        return 0;
    }
    for (size_t i = 1; i < t->size(); i++) {
        mean += ((*t)[i].second - (*t)[i - 1].second)
                * ((*t)[i].first + (*t)[i - 1].first) / 2;
    }
    return mean;
}

Background::Background(const BackgroundConfig &cfg,
                       const std::vector<Ptr<Node>> &hosts,
                       const std::vector<Ipv4Address> &addrs,
                       std::function<bool()> incast_done)
    : m_cfg(cfg), m_hosts(hosts), m_addrs(addrs), m_incastDone(incast_done)
{
    m_table = table(cfg.cdf);
    m_uniform = CreateObject<UniformRandomVariable>();
    m_gap = CreateObject<ExponentialRandomVariable>();
    double per_s = cfg.load * cfg.link_gbps * 1e9 / 8 * (hosts.size() - 1)
                   / MeanBytes(cfg.cdf);
    m_gap->SetAttribute("Mean", DoubleValue(1 / per_s));

    for (size_t h = 0; h < hosts.size(); h++) {
        Ptr<Socket> s = LinuxWindowSocket::Create(hosts[h]);
        s->Bind(InetSocketAddress(Ipv4Address::GetAny(), BACKGROUND_PORT));
        s->Listen();
        s->SetAcceptCallback(
            MakeNullCallback<bool, Ptr<Socket>, const Address &>(),
            MakeCallback(&Background::Accepted, this));
        m_listen.push_back(s);
    }
    Simulator::Schedule(Seconds(m_gap->GetValue()), &Background::Arrival,
                        this);
    Simulator::Schedule(MilliSeconds(cfg.arrivals_ms),
                        &Background::MaybeStop, this);
}

/* Inverse of the piecewise-linear distribution at a uniform draw. */
uint64_t
Background::Size(void)
{
    const std::vector<std::pair<double, double>> &t = *m_table;
    double u = m_uniform->GetValue();

    for (size_t i = 1; i < t.size(); i++) {
        if (u <= t[i].second) {
            double span = t[i].second - t[i - 1].second;
            double x = t[i - 1].first
                       + (span > 0 ? (u - t[i - 1].second) / span : 1)
                       * (t[i].first - t[i - 1].first);
            return std::max<uint64_t>(1, (uint64_t) (x + 0.5));
        }
    }
    return (uint64_t) t.back().first;
}

void
Background::Arrival(void)
{
    Time now = Simulator::Now();
    if (now >= MilliSeconds(m_cfg.arrivals_ms)) {
        return;
    }

    uint32_t n = m_hosts.size();
    Flow f;
    f.src = m_uniform->GetInteger(1, n - 1);
    f.dst = m_uniform->GetInteger(0, n - 2);
    if (f.dst >= f.src) {
        f.dst++;
    }
    f.bytes = f.to_send = Size();
    f.start = now;
    f.socket = LinuxWindowSocket::Create(m_hosts[f.src]);
    f.socket->TraceConnectWithoutContext(
        "RTO", MakeCallback(&RtoCounter::Changed, &rto));
    f.socket->Bind();
    Address local;
    f.socket->GetSockName(local);
    uint16_t port = InetSocketAddress::ConvertFrom(local).GetPort();
    size_t id = flows.size();
    m_byPeer[(uint64_t) m_addrs[f.src].Get() << 16 | port] = id;
    flows.push_back(f);
    m_active++;

    Ptr<Socket> s = f.socket;
    s->SetConnectCallback(MakeBoundCallback(&Background::ConnectedCb, this, id),
                          MakeNullCallback<void, Ptr<Socket>>());
    s->SetSendCallback(MakeBoundCallback(&Background::WritableCb, this, id));
    s->Connect(InetSocketAddress(m_addrs[f.dst], BACKGROUND_PORT));

    Simulator::Schedule(Seconds(m_gap->GetValue()), &Background::Arrival,
                        this);
}

void
Background::ConnectedCb(Background *self, size_t f, Ptr<Socket>)
{
    self->Pump(f);
}

void
Background::WritableCb(Background *self, size_t f, Ptr<Socket>, uint32_t)
{
    self->Pump(f);
}

/* Queues the flow's bytes as the send buffer takes them.  The source
 * closes only when the destination has them all (Readable()): ns-3 3.37's
 * sender crashed in SendDataPacket() while recovering losses with its FIN
 * queued behind the data. */
void
Background::Pump(size_t id)
{
    Flow &f = flows[id];

    while (f.to_send) {
        uint32_t room = f.socket->GetTxAvailable();
        uint32_t n = std::min<uint64_t>(f.to_send, room);
        if (!n || f.socket->Send(Create<Packet>(n)) < 0) {
            return;
        }
        f.to_send -= n;
    }
}

void
Background::Accepted(Ptr<Socket> socket, const Address &from)
{
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    auto it = m_byPeer.find((uint64_t) peer.GetIpv4().Get() << 16
                            | peer.GetPort());
    if (it == m_byPeer.end()) {
        fprintf(stderr, "pac-ns3: background connection from an unknown "
                "flow\n");
        return;
    }
    socket->TraceConnectWithoutContext(
        "RTO", MakeCallback(&RtoCounter::Changed, &rto));
    socket->SetRecvCallback(MakeBoundCallback(&Background::ReadableCb, this,
                                              it->second));
    m_byPeer.erase(it);
}

void
Background::ReadableCb(Background *self, size_t f, Ptr<Socket> socket)
{
    self->Readable(f, socket);
}

void
Background::Readable(size_t id, Ptr<Socket> socket)
{
    Flow &f = flows[id];
    Ptr<Packet> p;

    while ((p = socket->Recv())) {
        f.received += p->GetSize();
    }
    if (f.end.IsNegative() && f.received >= f.bytes) {
        f.end = Simulator::Now();
        socket->Close();
        f.socket->Close();
        m_active--;
    }
}

/* After the arrivals' window: stops the simulation once the incast is
 * done and every flow has finished. */
void
Background::MaybeStop(void)
{
    if (!m_active && m_incastDone()) {
        Simulator::Stop();
        return;
    }
    Simulator::Schedule(MilliSeconds(1), &Background::MaybeStop, this);
}

std::string
Background::Summary(void) const
{
    std::vector<double> short_fct, rcv_short_fct;
    double short_sum = 0, long_mbps = 0;
    uint64_t done = 0, n_long = 0, to_rcv = 0, rcv_done = 0;

    for (const Flow &f : flows) {
        to_rcv += f.dst == 0;
        if (f.end.IsNegative()) {
            continue;
        }
        done++;
        rcv_done += f.dst == 0;
        double ms = (f.end - f.start).GetSeconds() * 1e3;
        if (f.bytes < SHORT_BYTES) {
            short_fct.push_back(ms);
            short_sum += ms;
            if (f.dst == 0) {
                rcv_short_fct.push_back(ms);
            }
        } else if (f.bytes >= LONG_BYTES) {
            long_mbps += f.bytes * 8 / ms / 1e3;
            n_long++;
        }
    }

    char s[512];
    snprintf(s, sizeof s,
             "bg=%s load=%g short_fct_p99_ms=%.2f short_fct_avg_ms=%.2f "
             "long_goodput_mbps=%.1f bg_flows=%" PRIu64 " bg_timeouts=%"
             PRIu64 " bg_started=%zu short_flows=%zu long_flows=%" PRIu64
             " rcv_short_fct_p99_ms=%.2f rcv_short_flows=%zu rcv_flows=%"
             PRIu64 "/%" PRIu64 " bg_hosts=%zu",
             m_cfg.cdf.c_str(), m_cfg.load, nearest_rank(short_fct, 99),
             short_fct.empty() ? 0 : short_sum / short_fct.size(),
             n_long ? long_mbps / n_long : 0, done, rto.expiries,
             flows.size(), short_fct.size(), n_long,
             nearest_rank(rcv_short_fct, 99), rcv_short_fct.size(),
             rcv_done, to_rcv, m_hosts.size());
    return s;
}

std::string
Background::ToReceiver(void) const
{
    std::string s;

    for (const Flow &f : flows) {
        if (f.dst) {
            continue;
        }
        char one[96];
        if (f.end.IsNegative()) {
            snprintf(one, sizeof one, " %" PRIu64 "@%.2f:-", f.bytes,
                     f.start.GetSeconds() * 1e3);
        } else {
            snprintf(one, sizeof one, " %" PRIu64 "@%.2f:%.2f", f.bytes,
                     f.start.GetSeconds() * 1e3,
                     (f.end - f.start).GetSeconds() * 1e3);
        }
        s += one;
    }
    return s;
}

} /* namespace ns3 */
