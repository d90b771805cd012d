/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef BACKGROUND_H
#define BACKGROUND_H 1

/* pac-ns3's background traffic (--bg-cdf, --bg-load): flows between
 * random pairs of a set of hosts, the receiver among them, alongside the
 * incast.
 *
 * Flows arrive as a Poisson process for --bg-ms; each picks a source
 * uniformly among the background hosts but the receiver, a different
 * destination uniformly among the rest, the receiver included, and a size
 * from the web-search (DCTCP paper) or data-mining (VL2 paper) flow-size
 * distribution.  The arrival rate makes the traffic offered to the
 * receiver's link --bg-load of its rate on average (and about as much to
 * each other host's): rate = load x link rate x (hosts - 1) / mean size.
 * The receiver sends no background flow: PAC is about the data coming to
 * it, and its own uploads' segments would go through pac_tx() as requests
 * do, a case this setup does not measure.  A flow is one new TCP
 * connection (ns-3's TCP, as the incast's): the source connects, sends
 * its bytes and closes; its completion time (FCT) runs from the connect
 * call to the destination's application holding the last byte, so it
 * includes the handshake's round trip.  The set of hosts is the receiver
 * and an evenly spaced subset of the senders (--bg-hosts in all), so that
 * the background's cost in simulation does not grow with the incast. */

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include "incast-app.h"

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3 {

const uint16_t BACKGROUND_PORT = 5002;

struct BackgroundConfig {
    std::string cdf;                    /* websearch | datamining; empty:
                                         * no background. */
    double load = 0.3;                  /* Of each host's link. */
    double link_gbps = 1;               /* The hosts' links. */
    uint32_t hosts = 16;                /* The receiver included. */
    double arrivals_ms = 500;           /* Flows arrive in [0, this). */
};

class Background {
public:
    /* hosts[0] is the receiver.  The simulation stops once 'incast_done'
     * and every flow has finished (or at the caller's limit). */
    Background(const BackgroundConfig &cfg,
               const std::vector<Ptr<Node>> &hosts,
               const std::vector<Ipv4Address> &addrs,
               std::function<bool()> incast_done);

    /* Mean of a distribution's sizes, bytes; 0 if it is unknown. */
    static double MeanBytes(const std::string &cdf);

    struct Flow {
        uint32_t src, dst;
        uint64_t bytes;
        uint64_t received = 0;
        uint64_t to_send;
        Time start;
        Time end = Seconds(-1);         /* Negative until it finishes. */
        Ptr<Socket> socket;             /* The source's. */
    };

    std::vector<Flow> flows;
    RtoCounter rto;                     /* Both ends' expiries. */

    /* The "RESULT ... bg=" line's fields after the scheme and topology. */
    std::string Summary(void) const;
    /* The flows to the receiver: "bytes@start_ms:fct_ms" each. */
    std::string ToReceiver(void) const;

private:
    void Arrival(void);
    static void ConnectedCb(Background *self, size_t f, Ptr<Socket>);
    static void WritableCb(Background *self, size_t f, Ptr<Socket>,
                           uint32_t);
    static void ReadableCb(Background *self, size_t f, Ptr<Socket> socket);
    void Pump(size_t f);
    void Accepted(Ptr<Socket> socket, const Address &from);
    void Readable(size_t f, Ptr<Socket> socket);
    void MaybeStop(void);
    uint64_t Size(void);

    BackgroundConfig m_cfg;
    std::vector<Ptr<Node>> m_hosts;
    std::vector<Ipv4Address> m_addrs;
    std::function<bool()> m_incastDone;
    std::vector<Ptr<Socket>> m_listen;
    /* The source's address and port -> flow, for the accepting end. */
    std::unordered_map<uint64_t, size_t> m_byPeer;
    Ptr<ExponentialRandomVariable> m_gap;
    Ptr<UniformRandomVariable> m_uniform;
    const std::vector<std::pair<double, double>> *m_table = nullptr;
    size_t m_active = 0;
};

} /* namespace ns3 */

#endif /* background.h */
