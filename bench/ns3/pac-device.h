/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef PAC_DEVICE_H
#define PAC_DEVICE_H 1

/* PAC on the receiver's host in ns-3: the receiver's network device, with
 * the real libpac between the wire and the receiver's IP stack, where a
 * hypervisor switch runs it.
 *
 * Every IPv4 packet the device receives goes through pac_rx() before the
 * stack sees it; every IPv4 packet the stack sends goes through pac_tx(),
 * which passes it or holds it.  A held packet (the ns-3 Ptr<Packet> with
 * its destination) goes out when libpac hands it back through the emit
 * callback.  libpac parses each packet's bytes (Packet::CopyData() and
 * pac_parse_ip(), as the datapath parses a dp_packet); a window it lowers
 * (clamp_window) is written back into the packet's TCP header; a
 * zero-window copy of a held request (request_copy_us) is sent as one;
 * the time is the simulator's; pac_run() runs at pac_next_wakeup().
 *
 * With the fast path (pac_config.fast_path, libpac's default), the device
 * does what the datapath does while libpac tracks no connection
 * (pac_tracking()): the packet passes at once, and libpac sees only
 * pac_watch_syn() (a segment with SYN set), pac_watch_rx() or
 * pac_watch_tx(); a segment from the receiver that starts tracking goes
 * to pac_tx(). */

extern "C" {
#include "pac.h"
}

#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <cstdint>
#include <vector>

namespace ns3 {

/* A packet libpac holds: the ns-3 packet and what Send() needs again. */
struct HeldPacket {
    Ptr<Packet> packet;
    Address dest;
    uint16_t protocol;
};

/* The receiver's network device, with libpac between it and the
 * receiver's IP stack.  Without an instance (scheme tcp) it is a plain
 * PointToPointNetDevice. */
class PacDevice : public PointToPointNetDevice {
public:
    static TypeId GetTypeId(void);

    /* Creates the libpac instance.  With 'syn_mss', libpac sees each SYN
     * that has no MSS option with one of cfg.default_mss. */
    void StartPac(const pac_config &cfg, bool syn_mss);
    void StopPac(void);
    bool Send(Ptr<Packet> packet, const Address &dest,
              uint16_t protocol) override;
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;

    pac *Instance(void) const { return m_pac; }
    uint64_t parse_failures = 0;
    uint64_t held_now = 0;
    uint64_t held_max = 0;
    uint64_t request_copies = 0;
    uint64_t stale_drops = 0;

private:
    static void Emit(void *aux, void *pkt, enum pac_emit emit);
    static void Copy(void *aux, void *pkt, const struct pac_copy *how);
    bool Parse(Ptr<const Packet> packet, pac_segment *seg);
    static void SetWindow(Ptr<Packet> packet, uint16_t window);
    static void SetCopyFields(Ptr<Packet> packet, const struct pac_copy *how);
    static Ptr<Packet> WithMssOption(Ptr<const Packet> packet,
                                     uint16_t mss);
    bool FromNetwork(Ptr<NetDevice> dev, Ptr<const Packet> packet,
                     uint16_t protocol, const Address &from);
    bool Watch(const pac_segment &seg, bool rx);
    void Schedule(void);
    void RunTimer(void);
    static uint64_t NowUs(void)
    {
        return Simulator::Now().GetMicroSeconds();
    }

    pac *m_pac = nullptr;
    uint16_t m_synMss = 0;             /* MSS shown on SYNs; 0: off. */
    NetDevice::ReceiveCallback m_toStack;
    EventId m_timer;
    uint64_t m_timerAtUs = UINT64_MAX;
    std::vector<uint8_t> m_buf = std::vector<uint8_t>(65536);
};

} /* namespace ns3 */

#endif /* pac-device.h */
