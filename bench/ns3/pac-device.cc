/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* PAC on the receiver's host in ns-3: see pac-device.h. */

#include "pac-device.h"

#include "ns3/internet-module.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace ns3 {

namespace {

const uint16_t IPV4_PROTO = 0x0800;

} /* namespace */

NS_OBJECT_ENSURE_REGISTERED(PacDevice);

TypeId
PacDevice::GetTypeId(void)
{
    static TypeId tid = TypeId("ovs-pac::PacDevice")
        .SetParent<PointToPointNetDevice>()
        .AddConstructor<PacDevice>();
    return tid;
}

void
PacDevice::StartPac(const pac_config &cfg, bool syn_mss)
{
    char err[256];

    m_synMss = syn_mss ? cfg.default_mss : 0;
    if (!pac_config_check(&cfg, err, sizeof err)) {
        fprintf(stderr, "pac-ns3: bad PAC configuration: %s\n", err);
        exit(2);
    }
    m_pac = pac_create(&cfg, NowUs());
    if (!m_pac) {
        fprintf(stderr, "pac-ns3: pac_create() failed\n");
        exit(1);
    }
    pac_set_copy_cb(m_pac, Copy);
}

/* Releases whatever libpac still holds (sent, as a datapath does when PAC
 * is turned off) and frees the instance. */
void
PacDevice::StopPac(void)
{
    if (m_pac) {
        pac_destroy(m_pac, Emit, this);
        m_pac = nullptr;
        m_timer.Cancel();
    }
}

/* Writes 'packet' (an IPv4 packet) as bytes and parses it as the datapath
 * does.  ns-3's payloads are zeros; its checksums are 0 unless enabled,
 * which libpac does not check. */
bool
PacDevice::Parse(Ptr<const Packet> packet, pac_segment *seg)
{
    if (m_synMss) {
        Ptr<const Packet> with_mss = WithMssOption(packet, m_synMss);
        if (with_mss) {
            packet = with_mss;
        }
    }

    uint32_t size = packet->GetSize();

    if (size > m_buf.size()) {
        m_buf.resize(size);
    }
    packet->CopyData(m_buf.data(), size);
    if (pac_parse_ip(m_buf.data(), size, seg) != PAC_PARSE_OK) {
        parse_failures++;
        return false;
    }
    return true;
}

/* ns-3's TCP puts no MSS option on its SYNs and SYN-ACKs; Linux (the
 * guests PAC is for) always does, and libpac judges a short segment to end
 * an answer only when both SYNs carried one (pac_is_short_segment()).
 * Returns a copy of 'packet' (IPv4 + TCP) with the option a Linux stack
 * would add ('mss'), if 'packet' is a SYN without one; otherwise NULL.
 * Only libpac sees the copy. */
Ptr<Packet>
PacDevice::WithMssOption(Ptr<const Packet> packet, uint16_t mss_value)
{
    Ptr<Packet> copy = packet->Copy();
    Ipv4Header ip;
    TcpHeader tcp;

    copy->RemoveHeader(ip);
    copy->RemoveHeader(tcp);
    if (!(tcp.GetFlags() & TcpHeader::SYN) || tcp.HasOption(TcpOption::MSS)) {
        return nullptr;
    }
    /* The MSS option first, as Linux orders them: the deserialised list
     * may end with padding (an end-of-options kind) that hides what
     * follows it from a parser. */
    TcpHeader with_mss;
    with_mss.SetSourcePort(tcp.GetSourcePort());
    with_mss.SetDestinationPort(tcp.GetDestinationPort());
    with_mss.SetSequenceNumber(tcp.GetSequenceNumber());
    with_mss.SetAckNumber(tcp.GetAckNumber());
    with_mss.SetFlags(tcp.GetFlags());
    with_mss.SetWindowSize(tcp.GetWindowSize());
    with_mss.SetUrgentPointer(tcp.GetUrgentPointer());
    Ptr<TcpOptionMSS> mss = CreateObject<TcpOptionMSS>();
    mss->SetMSS(mss_value);
    with_mss.AppendOption(mss);
    for (Ptr<const TcpOption> option : tcp.GetOptionList()) {
        if (option->GetKind() != TcpOption::END
            && option->GetKind() != TcpOption::NOP
            && !with_mss.AppendOption(option)) {
            return nullptr;
        }
    }
    ip.SetPayloadSize(with_mss.GetSerializedSize() + copy->GetSize());
    copy->AddHeader(with_mss);
    copy->AddHeader(ip);
    return copy;
}

/* Sets the raw TCP window field of 'packet' (IPv4 + TCP). */
void
PacDevice::SetWindow(Ptr<Packet> packet, uint16_t window)
{
    Ipv4Header ip;
    TcpHeader tcp;

    packet->RemoveHeader(ip);
    packet->RemoveHeader(tcp);
    tcp.SetWindowSize(window);
    packet->AddHeader(tcp);
    packet->AddHeader(ip);
}

void
PacDevice::Emit(void *aux, void *pkt, enum pac_emit emit)
{
    PacDevice *dev = static_cast<PacDevice *>(aux);
    HeldPacket *held = static_cast<HeldPacket *>(pkt);

    dev->held_now--;
    if (emit == PAC_EMIT_RELEASE) {
        dev->PointToPointNetDevice::Send(held->packet, held->dest,
                                         held->protocol);
    } else {
        dev->stale_drops++;
    }
    delete held;
}

/* Writes the ACK number, window and timestamp value that libpac chose for
 * a copy into 'packet' (IPv4 + TCP). */
void
PacDevice::SetCopyFields(Ptr<Packet> packet, const struct pac_copy *how)
{
    Ipv4Header ip;
    TcpHeader tcp;

    packet->RemoveHeader(ip);
    packet->RemoveHeader(tcp);
    tcp.SetAckNumber(SequenceNumber32(how->ack));
    tcp.SetWindowSize(how->window);
    if (how->tsval_from && tcp.HasOption(TcpOption::TS)) {
        const HeldPacket *from = static_cast<const HeldPacket *>(
            how->tsval_from);
        Ptr<Packet> from_copy = from->packet->Copy();
        Ipv4Header from_ip;
        TcpHeader from_tcp;

        from_copy->RemoveHeader(from_ip);
        from_copy->RemoveHeader(from_tcp);
        if (from_tcp.HasOption(TcpOption::TS)) {
            /* The header was just deserialised: its option objects are
             * this function's own. */
            Ptr<TcpOptionTS> ts = DynamicCast<TcpOptionTS>(
                ConstCast<TcpOption>(tcp.GetOption(TcpOption::TS)));
            Ptr<const TcpOptionTS> from_ts = DynamicCast<const TcpOptionTS>(
                from_tcp.GetOption(TcpOption::TS));

            ts->SetTimestamp(from_ts->GetTimestamp());
        }
    }
    packet->AddHeader(tcp);
    packet->AddHeader(ip);
}

/* A copy of held data (pac_config.request_copy_us): it stops the
 * receiver's retransmission timer while the data waits its turn.  ns-3
 * 3.37 drops the data of a segment whose ACK number is old
 * (TcpSocketBase::ProcessEstablished(), unlike RFC 9293 and Linux), so
 * there the copies of data queued behind held ACKs, which carry an old
 * ACK number, stop no timer. */
void
PacDevice::Copy(void *aux, void *pkt, const struct pac_copy *how)
{
    PacDevice *dev = static_cast<PacDevice *>(aux);
    const HeldPacket *held = static_cast<const HeldPacket *>(pkt);
    Ptr<Packet> copy = held->packet->Copy();

    SetCopyFields(copy, how);
    dev->request_copies++;
    dev->PointToPointNetDevice::Send(copy, held->dest, held->protocol);
}

bool
PacDevice::Send(Ptr<Packet> packet, const Address &dest, uint16_t protocol)
{
    pac_segment seg;

    if (!m_pac || protocol != IPV4_PROTO || !Parse(packet, &seg)) {
        return PointToPointNetDevice::Send(packet, dest, protocol);
    }
    if (!pac_tracking(m_pac) && !Watch(seg, false)) {
        /* The fast path: it goes as it is. */
        Schedule();
        return PointToPointNetDevice::Send(packet, dest, protocol);
    }

    HeldPacket *held = new HeldPacket{packet, dest, protocol};
    held_now++;
    enum pac_verdict verdict = pac_tx(m_pac, &seg, held, NowUs(), Emit,
                                      this);
    if (seg.window_clamped) {
        SetWindow(packet, seg.window);
    }
    bool ok = true;
    if (verdict == PAC_PASS) {
        held_now--;
        delete held;
        ok = PointToPointNetDevice::Send(packet, dest, protocol);
    } else {
        held_max = std::max(held_max, held_now);
    }
    Schedule();
    return ok;
}

void
PacDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    m_toStack = cb;
    PointToPointNetDevice::SetReceiveCallback(
        MakeCallback(&PacDevice::FromNetwork, this));
}

/* A packet from the ToR: libpac sees it before the receiver's stack. */
bool
PacDevice::FromNetwork(Ptr<NetDevice> dev, Ptr<const Packet> packet,
                       uint16_t protocol, const Address &from)
{
    pac_segment seg;

    if (m_pac && protocol == IPV4_PROTO && Parse(packet, &seg)) {
        if (pac_tracking(m_pac)) {
            pac_rx(m_pac, &seg, NowUs(), Emit, this);
        } else {
            Watch(seg, true);
        }
        Schedule();
    }
    return m_toStack(dev, packet, protocol, from);
}

/* Tells libpac, which tracks no connection, of segment 'seg' ('rx' if
 * toward the receiver), as the datapath does: a segment with SYN set goes
 * whole to pac_watch_syn(), the others' flags and payload to
 * pac_watch_rx() or pac_watch_tx().  Returns true if libpac starts
 * tracking with it (a segment from the receiver): it then goes to
 * pac_tx(). */
bool
PacDevice::Watch(const pac_segment &seg, bool rx)
{
    uint64_t now = NowUs();

    if (seg.tcp_flags & PAC_TCP_SYN) {
        return pac_watch_syn(m_pac, &seg, rx, now) && !rx;
    } else if (rx) {
        pac_watch_rx(m_pac, seg.payload_len, now);
        return false;
    }
    return pac_watch_tx(m_pac, seg.tcp_flags, seg.payload_len, now);
}

/* Keeps one timer event at libpac's next wakeup (or earlier). */
void
PacDevice::Schedule(void)
{
    uint64_t wakeup = pac_next_wakeup(m_pac);

    if (wakeup == UINT64_MAX
        || (m_timer.IsRunning() && m_timerAtUs <= wakeup)) {
        return;
    }
    uint64_t now = NowUs();
    uint64_t at = std::max(wakeup, now);
    m_timer.Cancel();
    m_timerAtUs = at;
    m_timer = Simulator::Schedule(MicroSeconds(at - now),
                                  &PacDevice::RunTimer, this);
}

void
PacDevice::RunTimer(void)
{
    uint64_t now = NowUs();

    m_timerAtUs = UINT64_MAX;
    pac_run(m_pac, now, Emit, this);
    if (pac_next_wakeup(m_pac) <= now) {
        /* pac_run() should have done what was due: do not spin. */
        m_timerAtUs = now + 1;
        m_timer = Simulator::Schedule(MicroSeconds(1), &PacDevice::RunTimer,
                                      this);
    } else {
        Schedule();
    }
}

} /* namespace ns3 */
