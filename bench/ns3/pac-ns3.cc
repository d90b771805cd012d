/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* pac-ns3: the PAC paper's single-ToR incast in ns-3 3.37, with the real
 * libpac (lib/libpac.la, linked) on the receiver's host.
 *
 *   senders 1..N --(access links)--> ToR --(bottleneck)--> receiver
 *
 * Every sender has its own point-to-point link to the ToR switch (an ns-3
 * node that forwards IPv4); the ToR's port toward the receiver is the
 * bottleneck: a drop-tail queue of --buffer-kb bytes served at --rate-gbps.
 * No queue discs anywhere: a host's device queue is large (Linux's qdisc
 * and TSQ never drop a host's own segments), the ToR's is the switch buffer.
 *
 * The receiver (the client) opens one connection per sender, then runs
 * barrier-synchronised rounds: a --request-bytes request on every
 * connection at once, each sender answers --bytes, and the next round starts
 * when every answer has arrived (as sim/pac-sim and tools/incast-app do).
 * Both ends are ns-3's own, unmodified TCP (Linux-like Reno, NewReno or
 * Cubic; SACK, timestamps, window scaling, IW10, delayed ACKs, RTOmin
 * 200 ms).
 *
 * With --scheme dctcp, both ends run ns-3's TcpDctcp (ECN on, g = 1/16;
 * with Linux's floor of 2 segments on its cut, LinuxDctcp below)
 * and the bottleneck queue marks CE on an ECN-capable packet that arrives
 * while it holds more than K packets (--dctcp-k; the DCTCP paper's K:
 * 20 packets at 1 Gbit/s, 65 at 10 Gbit/s), dropping only when full.
 *
 * With --scheme pac, the receiver's network device is a PacDevice
 * (pac-device.h): libpac on the receiver's host, where a hypervisor switch
 * runs it.  With --scheme rwnd, the same device and libpac with policy
 * rwnd: ICTCP's and AC/DC TCP's receiver window, each connection's share
 * of the buffer written into the receiver's ACKs, nothing held.  With
 * --scheme rdtcp, libpac's policy rdtcp: that share, and the receiver's
 * ACKs held first come first served while the windows they open would
 * exceed the buffer (RDTCP's centralized scheduler).  Four
 * departures, all forced by ns-3 (docs/scale.md): libpac sees each SYN
 * with the MSS option a Linux stack adds (ns-3 sends none), and the
 * hosts' sockets take a zero window, keep to a window whose bytes are all
 * sent and measure RTT from send times, as Linux does
 * (linux-window-socket.h: ns-3 3.37 ignores the zero window of PAC's
 * copies of held requests, crashes sending an empty segment at a full
 * window in loss recovery, and takes RTT from millisecond timestamps).
 *
 * With --scheme ap, no PAC: every sender paces each connection by Adaptive
 * Pacing (the AP paper's eq. (16), as the testbed's tools/incast-app does;
 * ApPacing in incast-app.h), with ns-3's TCP pacing.
 *
 * With --scheme pulser, no PAC: Pulser with Explicit Incast Notifications
 * (pulser.h): EIN at the bottleneck's dequeue beside DCTCP's marking, the
 * receiver's device echoing it, the senders braking on it.
 *
 * The applications are in incast-app.h; this file holds the options, the
 * topology, the bottleneck's statistics and the output (the switches'
 * forwarding, the ToR's included, is FabricRouting in leaf-spine.h).
 * --topology leaf-spine puts the ToR in a two-tier fabric (leaf-spine.h;
 * the ToR is the receiver's leaf), and --bg-cdf adds background flows
 * (background.h), which get a second RESULT line.
 *
 * Output: one machine-readable line
 *
 *   RESULT sim=ns3 scheme=S rate_gbps=R senders=N goodput_mbps=X timeouts=K
 *          fct_p99_ms=Y queue_p99_kb=Q [more key=value fields]
 *
 * and a few indented detail lines.  Definitions:
 *   - goodput: 8 x answer bytes delivered during the rounds / the time from
 *     the first round's requests to the end of the last round (or to the
 *     --sim-ms limit, if the rounds did not finish).  warm_goodput_mbps:
 *     the same over the finished rounds after the first (0 if fewer than
 *     two finished): the first round is PAC's cold one (it knows no
 *     answer size yet, docs/libpac.md).
 *   - timeouts: the senders' retransmission-timer expiries (each doubling of
 *     a socket's RTO, traced from ns-3's "RTO" trace source); rcv_timeouts:
 *     the receiver's own (its SYNs and requests).  SYN-ACK expiries at the
 *     senders happen before ns-3 hands the socket to the application and
 *     are not counted (the receiver's SYN expires with them).
 *   - fct_p99_ms: per answer, from its request's issue to its last byte's
 *     arrival (nearest-rank p99 over all answers of the finished rounds).
 *   - queue_p99_kb: the bottleneck queue's bytes as each packet toward the
 *     receiver arrives at it (nearest-rank p99, kilobytes of 1000 bytes);
 *     queue_max_kb its high-water mark. */

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "background.h"
#include "incast-app.h"
#include "leaf-spine.h"
#include "pac-device.h"
#include "pulser.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

using namespace ns3;

namespace {

/* TCP payload per segment: 1500-byte MTU, 20 IP + 20 TCP + 12 timestamp
 * option bytes, as Linux sends. */
const uint32_t SEGMENT_SIZE = 1448;

struct Options {
    std::string scheme = "pac";         /* pac | tcp | dctcp | rwnd | rdtcp
                                         * | ap | pulser */
    /* linuxreno | newreno | cubic.  ns-3's NewReno and Cubic grow the
     * window by one segment per ACK in slow start whatever the ACK
     * covers; Linux, and TcpLinuxReno, by the segments it covers, which is
     * what libpac's trigger model (eq. 3) expects of the guests. */
    std::string cc = "linuxreno";
    uint32_t senders = 16;
    double rate_gbps = 1.0;             /* Bottleneck. */
    double access_gbps = 1.0;           /* Each sender's link (paper). */
    double buffer_kb = 96;              /* Bottleneck buffer, 1000 bytes. */
    double sim_ms = 10000;              /* Simulated-time limit. */
    uint32_t rtt_us = 100;              /* Base RTT, propagation only. */
    uint32_t threshold = 0;             /* PAC threshold; 0: the buffer. */
    uint32_t initial_cwnd = 10;         /* Segments (IW10, Linux's). */
    uint32_t dctcp_k = 0;               /* DCTCP's marking threshold in
                                         * packets; 0: the paper's K for
                                         * --rate-gbps. */
    bool delayed_ack = true;
    bool clamp_window = true;           /* pac_config's clamp_window. */
    bool syn_mss = true;                /* Show libpac SYNs' MSS option. */
    /* pac_config's request_copy_us (libpac's default, 50 ms); 0: no
     * zero-window copies of held requests. */
    uint32_t request_copy_us = 50000;
    /* --pac-option KEY=VALUE, in the order given. */
    std::vector<std::string> pac_options;
    IncastConfig incast;                /* Answer and request sizes,
                                         * rounds, jitter. */
    uint64_t seed = 1;
    std::string topology = "tor";       /* tor | leaf-spine */
    LeafSpineConfig fabric;             /* --topology leaf-spine. */
    BackgroundConfig bg;                /* bg.cdf empty: none. */
};

void
usage(void)
{
    printf("usage: pac-ns3 [OPTIONS]\n"
           "The PAC paper's single-ToR incast in ns-3, with libpac on the "
           "receiver's host.\n\n"
           "  --scheme pac|tcp|dctcp|rwnd|rdtcp|ap|pulser\n"
           "                        PAC on the receiver's host, plain TCP, "
           "DCTCP with\n"
           "                        ECN marking at the ToR, the "
           "receiver-window\n"
           "                        scheme (libpac's policy=rwnd) or "
           "RDTCP's\n"
           "                        scheduler (policy=rdtcp) on the "
           "receiver's host,\n"
           "                        Adaptive Pacing at the senders, or "
           "Pulser with\n"
           "                        EIN at the ToR (default pac)\n"
           "  --iw SEGMENTS         the hosts' initial window (default 10)\n"
           "  --dctcp-k K           DCTCP's marking threshold, packets "
           "(default 20 below\n"
           "                        10 Gbit/s, else 65 x rate / 10: the "
           "DCTCP paper's)\n"
           "  --cc linuxreno|newreno|cubic\n"
           "                        the hosts' congestion control (default "
           "linuxreno:\n"
           "                        in slow start it grows the window by "
           "the segments\n"
           "                        an ACK covers, as Linux does; ns-3's "
           "newreno and\n"
           "                        cubic by one segment per ACK)\n"
           "  --senders N           senders (default 16)\n"
           "  --rate-gbps R         bottleneck rate (default 1)\n"
           "  --access-gbps A       each sender's link (default 1)\n"
           "  --buffer-kb B         bottleneck drop-tail buffer, 1000 bytes "
           "(default 96)\n"
           "  --bytes S             answer per sender per round, bytes "
           "(default 65536)\n"
           "  --request-bytes Q     request per connection (default 100)\n"
           "  --rounds R            barrier-synchronised rounds (default 5)\n"
           "  --sim-ms T            simulated-time limit (default 10000)\n"
           "  --rtt-us U            base RTT, propagation only (default 100)\n"
           "  --threshold T         PAC threshold, bytes (default: the "
           "buffer)\n"
           "  --no-delayed-ack      the receiver ACKs every segment\n"
           "  --no-clamp            PAC leaves the receiver's window alone\n"
           "  --no-syn-mss          libpac sees ns-3's SYNs as they are, "
           "without the\n"
           "                        MSS option a Linux stack adds\n"
           "  --request-copy-us US  PAC's request_copy_us (default 50000, "
           "libpac's;\n"
           "                        0: no zero-window copies of held "
           "requests)\n"
           "  --pac-option K=V      a libpac knob by its PAC-table column "
           "or\n"
           "                        other_config key (e.g. max_hold=150000, "
           "init-window=4);\n"
           "                        repeatable, applied last\n"
           "  --jitter-ns J         each answer starts after a uniform 0..J "
           "ns host\n"
           "                        delay (default 1000), so that --seed "
           "matters\n"
           "  --seed X              ns-3's run number (default 1)\n"
           "  --topology tor|leaf-spine\n"
           "                        one ToR (default), or the receiver's "
           "leaf in a\n"
           "                        leaf-spine fabric with the senders "
           "over all leaves\n"
           "  --leaves L, --spines S, --fabric-gbps F\n"
           "                        the leaf-spine's size and leaf-spine "
           "links\n"
           "                        (default 8, 4, 10)\n"
           "  --bg-cdf websearch|datamining\n"
           "                        background flows of that size "
           "distribution between\n"
           "                        random pairs of --bg-hosts hosts, to "
           "the receiver\n"
           "                        among others (default: none)\n"
           "  --bg-load X           their mean load on the receiver's "
           "link (default 0.3)\n"
           "  --bg-hosts H          the receiver and H - 1 senders "
           "(default 16)\n"
           "  --bg-ms T             flows arrive for T ms (default 500)\n"
           "  -h, --help            this help\n");
}

/* Sets the libpac knob that --pac-option 'kv' ("KEY=VALUE") names in
 * 'cfg', or exits with the reason. */
static void
set_pac_option(pac_config *cfg, const std::string &kv)
{
    size_t eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    const pac_knob *knob = pac_knob_find(key.c_str());
    char err[256];
    uint32_t x;

    if (!knob || knob->type == PAC_KNOB_LEVELS || eq == std::string::npos) {
        fprintf(stderr, "pac-ns3: --pac-option %s: not KEY=VALUE of a "
                "libpac knob (mlfq_thresholds is not settable here)\n",
                kv.c_str());
        exit(2);
    }
    if (!pac_knob_parse(knob, value.c_str(), &x, err, sizeof err)) {
        fprintf(stderr, "pac-ns3: --pac-option %s: %s\n", key.c_str(), err);
        exit(2);
    }
    pac_knob_set(cfg, knob, x);
}

double
parse_number(const std::string &name, const char *s)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || *end || v < 0) {
        fprintf(stderr, "pac-ns3: bad value '%s' for --%s\n", s,
                name.c_str());
        exit(2);
    }
    return v;
}

/* Parses "--name value" and "--name=value".  Exits on errors. */
Options
parse_options(int argc, char **argv)
{
    Options o;

    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            usage();
            exit(0);
        }
        if (arg.compare(0, 2, "--")) {
            fprintf(stderr, "pac-ns3: unexpected argument '%s'\n", argv[i]);
            exit(2);
        }
        std::string name = arg.substr(2), value;
        size_t eq = name.find('=');
        if (name == "no-delayed-ack") {
            o.delayed_ack = false;
            continue;
        }
        if (name == "no-syn-mss") {
            o.syn_mss = false;
            continue;
        }
        if (name == "no-clamp") {
            o.clamp_window = false;
            continue;
        }
        if (eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            fprintf(stderr, "pac-ns3: --%s needs a value\n", name.c_str());
            exit(2);
        }
        const char *v = value.c_str();
        if (name == "scheme") {
            o.scheme = value;
        } else if (name == "cc") {
            o.cc = value;
        } else if (name == "senders") {
            o.senders = parse_number(name, v);
        } else if (name == "rate-gbps") {
            o.rate_gbps = parse_number(name, v);
        } else if (name == "access-gbps") {
            o.access_gbps = parse_number(name, v);
        } else if (name == "buffer-kb") {
            o.buffer_kb = parse_number(name, v);
        } else if (name == "bytes") {
            o.incast.bytes = parse_number(name, v);
        } else if (name == "request-bytes") {
            o.incast.request_bytes = parse_number(name, v);
        } else if (name == "rounds") {
            o.incast.rounds = parse_number(name, v);
        } else if (name == "sim-ms") {
            o.sim_ms = parse_number(name, v);
        } else if (name == "rtt-us") {
            o.rtt_us = parse_number(name, v);
        } else if (name == "threshold") {
            o.threshold = parse_number(name, v);
        } else if (name == "iw") {
            o.initial_cwnd = parse_number(name, v);
        } else if (name == "dctcp-k") {
            o.dctcp_k = parse_number(name, v);
        } else if (name == "request-copy-us") {
            o.request_copy_us = parse_number(name, v);
        } else if (name == "pac-option") {
            o.pac_options.push_back(value);
        } else if (name == "jitter-ns") {
            o.incast.jitter_ns = parse_number(name, v);
        } else if (name == "seed") {
            o.seed = parse_number(name, v);
        } else if (name == "topology") {
            o.topology = value;
        } else if (name == "leaves") {
            o.fabric.leaves = parse_number(name, v);
        } else if (name == "spines") {
            o.fabric.spines = parse_number(name, v);
        } else if (name == "fabric-gbps") {
            o.fabric.fabric_gbps = parse_number(name, v);
        } else if (name == "bg-cdf") {
            o.bg.cdf = value;
        } else if (name == "bg-load") {
            o.bg.load = parse_number(name, v);
        } else if (name == "bg-hosts") {
            o.bg.hosts = parse_number(name, v);
        } else if (name == "bg-ms") {
            o.bg.arrivals_ms = parse_number(name, v);
        } else {
            fprintf(stderr, "pac-ns3: unknown option --%s (see --help)\n",
                    name.c_str());
            exit(2);
        }
    }
    if (o.scheme != "pac" && o.scheme != "tcp" && o.scheme != "dctcp"
        && o.scheme != "rwnd" && o.scheme != "rdtcp" && o.scheme != "ap"
        && o.scheme != "pulser") {
        fprintf(stderr, "pac-ns3: --scheme is pac, tcp, dctcp, rwnd, rdtcp, "
                "ap or pulser\n");
        exit(2);
    }
    if (o.cc != "newreno" && o.cc != "linuxreno" && o.cc != "cubic") {
        fprintf(stderr, "pac-ns3: --cc is newreno, linuxreno or cubic\n");
        exit(2);
    }
    if (o.topology != "tor" && o.topology != "leaf-spine") {
        fprintf(stderr, "pac-ns3: --topology is tor or leaf-spine\n");
        exit(2);
    }
    if (!o.bg.cdf.empty() && !Background::MeanBytes(o.bg.cdf)) {
        fprintf(stderr, "pac-ns3: --bg-cdf is websearch or datamining\n");
        exit(2);
    }
    if (!o.bg.cdf.empty()
        && (o.bg.load <= 0 || o.bg.hosts < 2 || o.bg.hosts > o.senders + 1)) {
        fprintf(stderr, "pac-ns3: --bg-load > 0, 2 <= --bg-hosts <= "
                "senders + 1\n");
        exit(2);
    }
    if (o.fabric.leaves < 1 || o.fabric.spines < 1) {
        fprintf(stderr, "pac-ns3: --leaves and --spines >= 1\n");
        exit(2);
    }
    if (o.fabric.fabric_gbps <= 0) {
        fprintf(stderr, "pac-ns3: --fabric-gbps > 0\n");
        exit(2);
    }
    if (o.scheme == "dctcp" || o.scheme == "pulser") {
        o.cc = o.scheme;                /* What the RESULT line shows. */
    }
    if (o.senders < 1 || o.senders > 16000 || o.incast.rounds < 1
        || o.rate_gbps <= 0 || o.access_gbps <= 0 || o.buffer_kb < 2
        || o.incast.bytes < 1 || o.incast.request_bytes < 1
        || o.initial_cwnd < 1) {
        fprintf(stderr, "pac-ns3: option out of range (see --help)\n");
        exit(2);
    }
    return o;
}

/* Nearest-rank percentile of 'v' (sorted in place); 0 if empty. */
template <typename T>
double
percentile(std::vector<T> &v, double p)
{
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    size_t rank = (size_t) std::ceil(p / 100.0 * v.size());
    return (double) v[rank ? rank - 1 : 0];
}

/* --------------------------------------------------------------------- */
/* The bottleneck's observers. */

struct QueueStats {
    Ptr<Queue<Packet>> queue;
    std::vector<uint32_t> arrival_bytes;    /* Queue bytes per arrival. */
    uint32_t max_bytes = 0;
    uint64_t drops = 0;

    void Arrival(Ptr<const Packet>)
    {
        uint32_t bytes = queue->GetNBytes();
        arrival_bytes.push_back(bytes);
    }

    void Enqueued(Ptr<const Packet>)
    {
        max_bytes = std::max(max_bytes, queue->GetNBytes());
    }

    void Dropped(Ptr<const Packet>) { drops++; }
};

/* The bottleneck's buffer for --scheme dctcp: drop-tail, and DCTCP's
 * marking (the DCTCP paper, section 3.1): an arriving ECN-capable packet
 * is marked CE when the queue holds more than K packets, instantaneous
 * length, no averaging.  (ns-3's RedQueueDisc with MinTh = MaxTh = K does
 * the same as a queue disc; marking in the device queue keeps one queue,
 * the switch buffer, as for the other schemes.)  A packet in a
 * PointToPointNetDevice's queue starts with its PPP header. */
class MarkingQueue : public DropTailQueue<Packet> {
public:
    static TypeId GetTypeId(void)
    {
        static TypeId tid = TypeId("ovs-pac::MarkingQueue")
            .SetParent<DropTailQueue<Packet>>()
            .AddConstructor<MarkingQueue>();
        return tid;
    }

    uint32_t k_packets = 20;
    uint64_t marked = 0;

    bool Enqueue(Ptr<Packet> packet) override
    {
        if (GetNPackets() > k_packets) {
            Mark(packet);
        }
        return DropTailQueue<Packet>::Enqueue(packet);
    }

private:
    void Mark(Ptr<Packet> packet)
    {
        PppHeader ppp;
        Ipv4Header ip;

        packet->RemoveHeader(ppp);
        if (ppp.GetProtocol() == 0x0021) {      /* PPP's IPv4. */
            packet->RemoveHeader(ip);
            if (ip.GetEcn() == Ipv4Header::ECN_ECT0
                || ip.GetEcn() == Ipv4Header::ECN_ECT1) {
                ip.SetEcn(Ipv4Header::ECN_CE);
                marked++;
            }
            packet->AddHeader(ip);
        }
        packet->AddHeader(ppp);
    }
};

/* ns-3 3.37's TcpDctcp with Linux's floor on the window it cuts to.
 * TcpDctcp::GetSsThresh() returns (1 - alpha / 2) x cwnd with no floor:
 * from 2 segments and alpha near 1 it goes to 1 segment, then below one,
 * where ns-3's sender sends nothing (its silly-window check) and arms no
 * timer: the connection stalls for good (seen with --iw 2 --dctcp-k 10
 * --no-delayed-ack at 32 senders).  Linux's dctcp_ssthresh() keeps 2
 * segments at least; so does this. */
class LinuxDctcp : public TcpDctcp {
public:
    static TypeId GetTypeId(void)
    {
        static TypeId tid = TypeId("ovs-pac::LinuxDctcp")
            .SetParent<TcpDctcp>()
            .AddConstructor<LinuxDctcp>();
        return tid;
    }

    LinuxDctcp() = default;
    LinuxDctcp(const LinuxDctcp &other) : TcpDctcp(other) {}

    std::string GetName() const override { return "LinuxDctcp"; }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb,
                         uint32_t bytes_in_flight) override
    {
        return std::max(TcpDctcp::GetSsThresh(tcb, bytes_in_flight),
                        2 * tcb->m_segmentSize);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<LinuxDctcp>(this);
    }
};

/* A switch port's buffer other than the bottleneck's, for the
 * leaf-spine: the bottleneck's size, and DCTCP's marking at the K for the
 * port's rate. */
Ptr<Queue<Packet>>
switch_queue(const Options &o, double gbps)
{
    Ptr<Queue<Packet>> q;

    if (o.scheme == "dctcp") {
        Ptr<MarkingQueue> m = CreateObject<MarkingQueue>();
        m->k_packets = o.dctcp_k ? o.dctcp_k
                       : gbps < 10 ? 20 : (uint32_t) (65 * gbps / 10 + 0.5);
        q = m;
    } else {
        q = CreateObject<DropTailQueue<Packet>>();
    }
    q->SetMaxSize(QueueSize(QueueSizeUnit::BYTES,
                            (uint32_t) (o.buffer_kb * 1000)));
    return q;
}

void
remove_queue_discs(Ptr<Node> node)
{
    Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();

    for (uint32_t d = 0; d < node->GetNDevices(); d++) {
        Ptr<NetDevice> dev = node->GetDevice(d);
        if (tc && tc->GetRootQueueDiscOnDevice(dev)) {
            tc->DeleteRootQueueDiscOnDevice(dev);
        }
    }
}

std::string
rate_string(double gbps)
{
    char s[64];
    snprintf(s, sizeof s, "%.0fbps", gbps * 1e9);
    return s;
}

} /* namespace */

int
main(int argc, char **argv)
{
    Options o = parse_options(argc, argv);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(o.seed);

    /* The guests' TCP: Linux-like where ns-3 lets us.  TcpDctcp (a
     * TcpLinuxReno) turns ECN on for its sockets itself. */
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(o.scheme == "dctcp"
                                   ? LinuxDctcp::GetTypeId()
                                   : o.scheme == "pulser"
                                   ? PulserTcp::GetTypeId()
                                   : o.cc == "cubic"
                                   ? TcpCubic::GetTypeId()
                                   : o.cc == "linuxreno"
                                   ? TcpLinuxReno::GetTypeId()
                                   : TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(SEGMENT_SIZE));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(o.initial_cwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount",
                       UintegerValue(o.delayed_ack ? 2 : 1));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout",
                       TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize",
                       UintegerValue(1 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize",
                       UintegerValue(1 << 20));
    Config::SetDefault("ns3::TcpSocketBase::MinRto",
                       TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling",
                       BooleanValue(true));

    /* An address is a node's own only on the interface it arrived on: the
     * ToR need not compare each packet with its N + 1 interfaces. */
    Config::SetDefault("ns3::Ipv4::WeakEsModel",
                       BooleanValue(false));

    /* Nodes: the receiver, the ToR, the senders. */
    Ptr<Node> receiver = CreateObject<Node>();
    Ptr<Node> tor = CreateObject<Node>();
    NodeContainer senders;
    senders.Create(o.senders);

    InternetStackHelper stack;
    stack.Install(receiver);
    stack.Install(tor);
    stack.Install(senders);

    /* Propagation: sender -> ToR and ToR -> receiver rtt/4 each way;
     * in the leaf-spine, rtt/8 on each of the longest path's 4 links. */
    Time hop = NanoSeconds(o.rtt_us * 1000
                           / (o.topology == "tor" ? 4 : 8));

    /* Access links: big device queues (hosts never drop their own
     * segments; the ToR's side carries only ACKs). */
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate",
                              StringValue(rate_string(o.access_gbps)));
    access.SetChannelAttribute("Delay", TimeValue(hop));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                    QueueSizeValue(QueueSize("100000p")));

    Ptr<FabricRouting> tor_routing = CreateObject<FabricRouting>();
    DynamicCast<Ipv4ListRouting>(tor->GetObject<Ipv4>()->GetRoutingProtocol())
        ->AddRoutingProtocol(tor_routing, 10);

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    std::vector<Ipv4Address> sender_addrs;
    Ipv4StaticRoutingHelper routing;
    std::unique_ptr<LeafSpine> fabric;
    if (o.topology == "leaf-spine") {
        o.fabric.access_gbps = o.access_gbps;
        o.fabric.hop = hop;
        fabric.reset(new LeafSpine(
            o.fabric, tor, senders,
            [&o](double gbps) { return switch_queue(o, gbps); },
            [&tor_routing](Ipv4Address a, uint32_t i) {
                tor_routing->AddHost(a, i);
            }));
        sender_addrs = fabric->sender_addrs;
    }
    for (uint32_t i = 0; i < o.senders && !fabric; i++) {
        NetDeviceContainer devs = access.Install(senders.Get(i), tor);
        Ipv4InterfaceContainer ifs = addr.Assign(devs);
        addr.NewNetwork();
        sender_addrs.push_back(ifs.GetAddress(0));
        tor_routing->AddHost(ifs.GetAddress(0), ifs.Get(1).second);
        routing.GetStaticRouting(senders.Get(i)->GetObject<Ipv4>())
            ->SetDefaultRoute(ifs.GetAddress(1), 1);
    }

    /* The bottleneck: the ToR's port toward the receiver, and the
     * receiver's device, on which PAC runs. */
    Ptr<PointToPointChannel> channel = CreateObject<PointToPointChannel>();
    channel->SetAttribute("Delay", TimeValue(hop));

    Ptr<PointToPointNetDevice> tor_port = CreateObject<PointToPointNetDevice>();
    tor_port->SetAddress(Mac48Address::Allocate());
    tor_port->SetDataRate(DataRate(rate_string(o.rate_gbps)));
    Ptr<Queue<Packet>> buffer;
    Ptr<MarkingQueue> marking;
    Ptr<EinQueue> ein;
    if (o.scheme == "dctcp") {
        marking = CreateObject<MarkingQueue>();
        marking->k_packets = o.dctcp_k ? o.dctcp_k
                             : o.rate_gbps < 10 ? 20
                             : (uint32_t) (65 * o.rate_gbps / 10 + 0.5);
        buffer = marking;
    } else if (o.scheme == "pulser") {
        buffer = ein = EinQueue::Make(o.dctcp_k, o.rate_gbps);
    } else {
        buffer = CreateObject<DropTailQueue<Packet>>();
    }
    uint32_t buffer_bytes = (uint32_t) (o.buffer_kb * 1000);
    buffer->SetMaxSize(QueueSize(QueueSizeUnit::BYTES, buffer_bytes));
    tor_port->SetQueue(buffer);
    tor->AddDevice(tor_port);
    tor_port->Attach(channel);

    Ptr<PacDevice> nic = o.scheme == "pulser"
                         ? Ptr<PacDevice>(CreateObject<EinEchoDevice>())
                         : CreateObject<PacDevice>();
    nic->SetAddress(Mac48Address::Allocate());
    nic->SetDataRate(DataRate(rate_string(o.rate_gbps)));
    Ptr<Queue<Packet>> nic_queue = CreateObject<DropTailQueue<Packet>>();
    nic_queue->SetMaxSize(QueueSize("100000p"));
    nic->SetQueue(nic_queue);
    receiver->AddDevice(nic);
    nic->Attach(channel);

    NetDeviceContainer bottleneck;
    bottleneck.Add(tor_port);
    bottleneck.Add(nic);
    Ipv4AddressHelper baddr;
    baddr.SetBase("192.168.0.0", "255.255.255.252");
    Ipv4InterfaceContainer bifs = baddr.Assign(bottleneck);
    routing.GetStaticRouting(receiver->GetObject<Ipv4>())
        ->SetDefaultRoute(bifs.GetAddress(0), 1);
    tor_routing->AddHost(bifs.GetAddress(1), bifs.Get(0).second);
    if (fabric) {
        fabric->AddReceiver(bifs.GetAddress(1));
    }

    remove_queue_discs(receiver);
    remove_queue_discs(tor);
    for (uint32_t i = 0; i < o.senders; i++) {
        remove_queue_discs(senders.Get(i));
        if (ein) {
            pulser_watch_sender(senders.Get(i)->GetDevice(1));
        }
    }

    QueueStats qstats;
    qstats.queue = buffer;
    tor_port->TraceConnectWithoutContext(
        "MacTx", MakeCallback(&QueueStats::Arrival, &qstats));
    buffer->TraceConnectWithoutContext(
        "Enqueue", MakeCallback(&QueueStats::Enqueued, &qstats));
    buffer->TraceConnectWithoutContext(
        "Drop", MakeCallback(&QueueStats::Dropped, &qstats));

    if (o.scheme == "pac" || o.scheme == "rwnd" || o.scheme == "rdtcp") {
        pac_config cfg;
        pac_config_init(&cfg);
        cfg.hash_seed = 0x5ac0ffee;     /* The same layout every run. */
        cfg.threshold = o.threshold ? o.threshold : buffer_bytes;
        cfg.clamp_window = o.clamp_window;
        /* ns-3's TCP sends no MSS option: tell PAC the segment size. */
        cfg.default_mss = SEGMENT_SIZE;
        cfg.request_copy_us = o.request_copy_us;
        if (o.scheme == "rwnd") {
            /* Holds nothing: each connection's advertised window lowered
             * to threshold / connections, at least 2 segments, as the
             * testbed's rwnd (docs/libpac.md). */
            cfg.policy = PAC_POLICY_RWND;
        } else if (o.scheme == "rdtcp") {
            /* The same windows, and ACKs held while the windows they open
             * exceed the buffer, as the testbed's rdtcp (docs/libpac.md). */
            cfg.policy = PAC_POLICY_RDTCP;
            /* As the RDTCP paper runs it, queue_maxsize half the buffer
             * (40 of 80 packets), unless --threshold says otherwise.  And
             * RDTCP bounds no ACK's wait, while libpac's max_hold (20 ms
             * by default, a PAC default) forced ACKs out in bursts at
             * 2 048 senders: the most the PAC table allows, under the
             * senders' 200 ms RTOmin (docs/scale.md).  --pac-option
             * overrides either. */
            if (!o.threshold) {
                cfg.threshold = buffer_bytes / 2;
            }
            cfg.max_hold_us = 150000;
        }
        for (const std::string &kv : o.pac_options) {
            set_pac_option(&cfg, kv);
        }
        nic->StartPac(cfg, o.syn_mss);
    }

    /* Adaptive Pacing's inputs, in frames as the bottleneck counts them
     * (IP length + 2), for every sender. */
    ApPacing ap;
    if (o.scheme == "ap") {
        ap.frame = SEGMENT_SIZE + 52 + 2;
        ap.flows = o.senders;
        ap.buffer_frames = buffer_bytes / ap.frame;
        ap.rate_frames = o.rate_gbps * 1e9 / 8 / ap.frame;
        ap.x = CreateObject<UniformRandomVariable>();
        ap.x->SetAttribute("Min", DoubleValue(-1));
        ap.x->SetAttribute("Max", DoubleValue(1));
    }

    RtoCounter sender_rto;
    std::vector<Sender *> apps;
    for (uint32_t i = 0; i < o.senders; i++) {
        apps.push_back(new Sender(senders.Get(i), o.incast, &sender_rto,
                                  o.scheme == "ap" ? &ap : nullptr));
    }
    o.incast.stop_when_done = o.bg.cdf.empty();
    Receiver client(receiver, o.incast, sender_addrs);
    std::unique_ptr<Background> bg;
    if (!o.bg.cdf.empty()) {
        /* The receiver and an evenly spaced subset of the senders. */
        std::vector<Ptr<Node>> hosts = { receiver };
        std::vector<Ipv4Address> addrs = { bifs.GetAddress(1) };
        for (uint32_t h = 1; h < o.bg.hosts; h++) {
            uint32_t i = (uint64_t) (h - 1) * o.senders / (o.bg.hosts - 1);
            hosts.push_back(senders.Get(i));
            addrs.push_back(sender_addrs[i]);
        }
        o.bg.link_gbps = o.rate_gbps;
        bg.reset(new Background(o.bg, hosts, addrs,
                                [&client]() { return client.finished; }));
    }

    Simulator::Stop(MilliSeconds(o.sim_ms));
    Simulator::Run();
    Time end = Simulator::Now();

    pac_stats pst;
    memset(&pst, 0, sizeof pst);
    if (nic->Instance()) {
        pac_get_stats(nic->Instance(), &pst);
    }

    /* Goodput over the rounds: to the last round's end, or to the limit
     * when the rounds did not finish. */
    double goodput = 0;
    if (!client.first_round_start.IsNegative()) {
        Time stop = client.finished ? client.last_round_end : end;
        double secs = (stop - client.first_round_start).GetSeconds();
        goodput = secs > 0 ? client.delivered * 8 / secs / 1e6 : 0;
    }
    double warm_goodput = 0;
    if (client.rounds_done >= 2) {
        double secs = (client.last_round_end - client.first_round_end)
                      .GetSeconds();
        warm_goodput = (client.rounds_done - 1) * o.senders * o.incast.bytes * 8.0
                       / secs / 1e6;
    }
    double fct_p99 = percentile(client.fct_ms, 99);
    std::string round_list;
    for (double ms : client.round_ms) {
        char one[32];
        snprintf(one, sizeof one, " %.2f", ms);
        round_list += one;
    }
    double round_p50 = percentile(client.round_ms, 50);
    double queue_p99 = percentile(qstats.arrival_bytes, 99) / 1000;

    printf("RESULT sim=ns3 scheme=%s rate_gbps=%g senders=%u "
           "goodput_mbps=%.1f timeouts=%" PRIu64 " fct_p99_ms=%.2f "
           "queue_p99_kb=%.1f rcv_timeouts=%" PRIu64 " drops=%" PRIu64
           " rounds=%u/%u warm_goodput_mbps=%.1f queue_max_kb=%.1f"
           " buffer_kb=%g cc=%s delayed_ack=%d seed=%" PRIu64
           " topology=%s\n",
           o.scheme.c_str(), o.rate_gbps, o.senders, goodput,
           sender_rto.expiries, fct_p99, queue_p99, client.rto.expiries,
           qstats.drops, client.rounds_done, o.incast.rounds, warm_goodput,
           qstats.max_bytes / 1000.0, o.buffer_kb, o.cc.c_str(),
           o.delayed_ack, o.seed, o.topology.c_str());
    if (bg) {
        printf("RESULT sim=ns3 scheme=%s topology=%s %s fabric_drops=%"
               PRIu64 " senders=%u\n", o.scheme.c_str(), o.topology.c_str(),
               bg->Summary().c_str(), fabric ? fabric->Drops() : 0,
               o.senders);
    }
    if (bg) {
        printf("  background flows to the receiver (bytes@start_ms:fct_ms):"
               "%s\n", bg->ToReceiver().c_str());
    }
    if (fabric) {
        printf("  leaf-spine: %u leaves x %u hosts, %u spines at %g Gbit/s,"
               " drops outside the bottleneck %" PRIu64 ", packets by "
               "spine%s\n",
               o.fabric.leaves, fabric->HostsPerLeaf(), o.fabric.spines,
               o.fabric.fabric_gbps, fabric->Drops(),
               fabric->SpinePackets().c_str());
    }
    printf("  handshake %.2f ms, round p50 %.2f ms, simulated %.3f s, "
           "rounds (ms):%s\n",
           client.handshake_done.IsNegative()
           ? -1.0 : client.handshake_done.GetSeconds() * 1e3,
           round_p50, end.GetSeconds(), round_list.c_str());
    if (nic->Instance()) {
        printf("  pac: held %" PRIu64 " passed %" PRIu64 " max_held %"
               PRIu64 " stale_drops %" PRIu64 " request_copies %" PRIu64
               " windows_clamped %" PRIu64 " request_triggers %" PRIu64
               " parse_failures %" PRIu64 "\n"
               "  pac: released fit %" PRIu64 " max_hold %" PRIu64
               " cap %" PRIu64 " silence_resets %" PRIu64 " dry_reclaims %"
               PRIu64 " answer_ends %" PRIu64 " late_data %" PRIu64 "\n",
               pst.tx_held, pst.tx_passed, nic->held_max, nic->stale_drops,
               nic->request_copies, pst.windows_clamped,
               pst.request_triggers, nic->parse_failures,
               pst.released[PAC_REL_FIT], pst.released[PAC_REL_MAX_HOLD],
               pst.released[PAC_REL_CAP], pst.silence_resets,
               pst.dry_reclaims, pst.answer_ends, pst.late_data);
        printf("  pac: tracking_starts %" PRIu64 " tracking_stops %" PRIu64
               " fast_rx %" PRIu64 " fast_tx %" PRIu64 "\n",
               pst.tracking_starts, pst.tracking_stops, pst.fast_rx_packets,
               pst.fast_tx_packets);
    }

    if (o.scheme == "ap") {
        double interval_p50 = percentile(ap.interval_us, 50);
        printf("  ap: rates set %" PRIu64 ", paced %" PRIu64
               ", connections paced %" PRIu64 "/%u, interval p50 %.1f us"
               " (n %g, B %.1f frames, C %.0f frames/s)\n",
               ap.sets, ap.paced_sets, ap.paced_conns, o.senders,
               interval_p50, ap.flows, ap.buffer_frames, ap.rate_frames);
    }
    if (marking) {
        printf("  dctcp: K %u packets, marked %" PRIu64 "\n",
               marking->k_packets, marking->marked);
    }

    if (ein) {
        ein->PrintStats();
    }

    nic->StopPac();
    Simulator::Destroy();
    for (Sender *s : apps) {
        delete s;
    }
    return 0;
}
