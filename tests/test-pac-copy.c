/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of the copies of held data (request_copy_us,
 * pac_set_copy_cb()): a request that waits its turn longer than the
 * receiver's retransmission timer allows goes out at once as a copy whose
 * window lets the peer send nothing new (closed, or ending where the data
 * the peer sent since ends; an old ACK while an answer is still due),
 * while the request itself stays held and opens the window at its turn;
 * data waiting behind held ACKs goes as a copy with an old ACK number.
 * The tests check when a copy goes (not before request_copy_us, only when
 * the peer's ACK of it fits), what it carries, that each request is
 * copied once, that the request still comes back, and that nothing is
 * copied without a callback or with the knob at 0. */

#include "pac.h"

#include "pac-test-fixture.h"

#define COPY_US 50000

/* Copies asked for, in order. */
static int copies[N_PKTS];
static size_t n_copies;

static struct pac_copy copy_how[N_PKTS];

static void
rec_copy(void *aux, void *pkt, const struct pac_copy *how)
{
    (void) aux;
    if (n_copies < N_PKTS) {
        copies[n_copies] = pkt_index(pkt);
        copy_how[n_copies] = *how;
    }
    n_copies++;
}

/* An instance of 'cfg' with the copy callback set if 'copy_cb', and no
 * copy recorded yet. */
static struct pac *
copy_pac_from(const struct pac_config *cfg, bool copy_cb)
{
    struct pac *pac = make_pac(cfg);

    n_copies = 0;
    if (pac && copy_cb) {
        pac_set_copy_cb(pac, rec_copy);
    }
    return pac;
}

/* The configuration of an instance whose threshold one request's window
 * (IW) fills, with request_copy_us 'copy_us' and max_hold_us
 * 'max_hold_us' (0: the default). */
static void
copy_config(struct pac_config *cfg, uint32_t copy_us, uint32_t max_hold_us)
{
    test_config(cfg);
    cfg->threshold = 10000;
    cfg->request_copy_us = copy_us;
    if (max_hold_us) {
        cfg->max_hold_us = max_hold_us;
    }
}

/* An instance of copy_config(), with the copy callback set if
 * 'copy_cb'. */
static struct pac *
copy_pac(bool copy_cb, uint32_t copy_us, uint32_t max_hold_us)
{
    struct pac_config cfg;

    copy_config(&cfg, copy_us, max_hold_us);
    return copy_pac_from(&cfg, copy_cb);
}

/* copy_pac() without max_hold_us: flow 0's request passes and fills the
 * threshold; flow 1's request (packet 1) is held behind it. */
static struct pac *
held_request(bool copy_cb, uint32_t copy_us)
{
    struct pac *pac = copy_pac(copy_cb, copy_us, 0);

    if (!pac) {
        return NULL;
    }
    if (request(pac, AT(0), 0, 1, 0) != PAC_PASS
        || request(pac, AT(0), 1, 1, 1) != PAC_HELD) {
        return NULL;
    }
    return pac;
}

/* A held request gets its copy once it has waited request_copy_us and the
 * peer's ACK of the copy fits; the request stays held and goes at its
 * turn, after the copy. */
static void
test_copy_when_due_and_fits(void)
{
    struct pac *pac = held_request(true, COPY_US);
    uint64_t before;

    PAC_CHECK(pac);
    run(pac, AT(COPY_US - 1));
    PAC_CHECK_EQ(n_copies, 0);

    /* Due, but flow 0's window fills the threshold: the ACK of a copy
     * would not fit, and no timer is set for it (data must come first). */
    run(pac, AT(COPY_US));
    PAC_CHECK_EQ(n_copies, 0);
    PAC_CHECK(pac_next_wakeup(pac) > AT(COPY_US));

    /* Most of flow 0's answer arrives: the ACK fits now, flow 1's window
     * does not yet. */
    before = in_flight(pac);
    rx_data(pac, AT(COPY_US + 10), 0, 1, IW - 2000);
    PAC_CHECK_EQ(n_copies, 1);
    PAC_CHECK_EQ(copies[0], 1);
    /* Nothing came after the request: its own ACK number, window closed. */
    PAC_CHECK_EQ(copy_how[0].ack, 1);
    PAC_CHECK_EQ(copy_how[0].window, 0);
    PAC_CHECK_EQ(get_stats(pac).request_copies, 1);
    PAC_CHECK_EQ(get_stats(pac).held, 1);
    /* The peer's ACK of the copy is a frame in flight. */
    PAC_CHECK(in_flight(pac) > before - (IW - 2000));
    CHECK_N_EMITTED(0);

    /* Copied once only, however long it still waits. */
    run(pac, AT(3 * COPY_US));
    PAC_CHECK_EQ(n_copies, 1);

    /* The answer drains; the request goes, as a release. */
    rx_data(pac, AT(3 * COPY_US + 10), 0, 1 + IW - 2000, 2000);
    rx(pac, AT(3 * COPY_US + 20), 1, 1, 0, ACK, PAC_ECN_ECT0);
    run(pac, AT(3 * COPY_US + 30));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    PAC_CHECK_EQ(n_copies, 1);
    end_pac();
}

/* Data past a held request's ACK number arrives (the answer before it was
 * still under way): the request becomes an ACK with data, which goes
 * under the ACKs' hold bound (max_hold_us) with no copy, so that neither
 * the peer's timer (its data waits for ACKs behind the request) nor the
 * VM's runs out. */
static void
test_request_passed_by_data_goes_as_ack(void)
{
    struct pac *pac = copy_pac(true, COPY_US, COPY_US / 2);

    PAC_CHECK(pac);
    PAC_CHECK_EQ(request(pac, AT(0), 0, 1, 0), PAC_PASS);
    PAC_CHECK_EQ(request(pac, AT(0), 1, 1, 1), PAC_HELD);
    rx_data(pac, AT(10), 1, 1, 2 * MSS);
    CHECK_HELD(tx(pac, AT(20), 1, 1 + 2 * MSS, 0, ACK, 2));

    run(pac, AT(COPY_US / 2 - 1));
    CHECK_N_EMITTED(0);
    run(pac, AT(COPY_US / 2));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    PAC_CHECK_EQ(get_stats(pac).released[PAC_REL_MAX_HOLD], 1);
    run(pac, AT(2 * COPY_US));
    PAC_CHECK_EQ(n_copies, 0);
    end_pac();
}

/* A request sent while PAC still expects data of the answer before it:
 * the peer may have sent anything up to the window it has, so no window
 * the copy could carry is sure to end past what the peer sent, and a copy
 * with the request's own ACK number would shrink the peer's window below
 * it.  The copy is an old ACK instead, one below the ACK number the peer
 * was last sent, which changes neither the peer's ACK number nor its
 * window; should a stack take its window, it ends no further than the
 * peer's already does.  The request stays held, and when the rest of the
 * answer arrives past its ACK number it goes as an ACK, once. */
static void
test_copy_of_request_while_answer_due(void)
{
    struct pac_segment req = tx_seg(1, 1, 100, ACK);
    /* max_hold_us long: only the copy is under test. */
    struct pac *pac = copy_pac(true, COPY_US, 10 * COPY_US);
    uint32_t sent_edge;

    PAC_CHECK(pac);
    rx(pac, AT(0), 1, 1, 0, ACK, PAC_ECN_ECT0);
    PAC_CHECK_EQ(pac_tx(pac, &req, P(0), AT(0), rec_emit, NULL), PAC_PASS);
    sent_edge = 1 + req.window;

    /* Four segments of the answer arrive, and the receiver's next request
     * acknowledges them while six are still to come. */
    rx_data(pac, AT(10), 1, 1, 4 * MSS);
    CHECK_HELD(tx(pac, AT(20), 1, 1 + 4 * MSS, 100, ACK, 1));

    run(pac, AT(20 + COPY_US - 1));
    PAC_CHECK_EQ(n_copies, 0);
    run(pac, AT(20 + COPY_US));
    PAC_CHECK_EQ(n_copies, 1);
    PAC_CHECK_EQ(copies[0], 1);
    PAC_CHECK_EQ(copy_how[0].ack, 0);
    PAC_CHECK(copy_how[0].ack + copy_how[0].window <= sent_edge);
    PAC_CHECK_EQ(get_stats(pac).request_copies, 1);
    PAC_CHECK_EQ(get_stats(pac).held, 1);
    CHECK_N_EMITTED(0);

    /* The peer acknowledges the copy's data, and the rest of the answer
     * arrives: the request goes, not copied again. */
    rx(pac, AT(25 + COPY_US), 1, 1 + 4 * MSS, 0, ACK, PAC_ECN_ECT0);
    rx_data(pac, AT(30 + COPY_US), 1, 1 + 4 * MSS, 6 * MSS);
    run(pac, AT(40 + COPY_US));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    run(pac, AT(4 * COPY_US));
    PAC_CHECK_EQ(n_copies, 1);
    end_pac();
}

/* Foresight.  An instance like copy_pac()'s whose control intervals end
 * (a base RTT of 200 us), so that it measures the receive rate.  Flow 0's
 * request passes and fills the threshold; 'n_held' requests of flows
 * 1...n_held (packets 1...n_held) are held at 'held_at', all alike, and
 * 8000 bytes of flow 0's answer arrive over 3.3 ms from 'data_at': a rate
 * for PAC to measure, and room for the peers' ACKs of copies, not for
 * another window.  Returns the instance, its requests all still held, or
 * NULL. */
static struct pac *
foresight_incast(int n_held, uint64_t held_at, uint64_t data_at)
{
    bool held_first = held_at < data_at;
    struct pac_config cfg;
    struct pac *pac;

    copy_config(&cfg, COPY_US, 0);
    cfg.base_rtt_us = 200;
    pac = copy_pac_from(&cfg, true);
    if (!pac || request(pac, AT(0), 0, 1, 0) != PAC_PASS) {
        return NULL;
    }
    for (int round = 0; round < 2; round++) {
        if ((round == 0) == held_first) {
            for (int f = 1; f <= n_held; f++) {
                if (request(pac, held_at, f, 1, f) != PAC_HELD) {
                    return NULL;
                }
            }
        } else {
            for (int i = 0; i < 4; i++) {
                rx_data(pac, data_at + i * 1100, 0, 1 + i * 2000, 2000);
            }
        }
    }
    return get_stats(pac).held == (uint64_t) n_held ? pac : NULL;
}

/* Which of flows 1...n_held have had a copy, in 'copied'; checks that
 * none had two, and that each carried its request's ACK number and a
 * closed window (nothing came after the requests). */
static void
copied_flows(int n_held, bool copied[])
{
    memset(copied, 0, (n_held + 1) * sizeof copied[0]);
    for (size_t i = 0; i < n_copies; i++) {
        PAC_CHECK(copies[i] >= 1 && copies[i] <= n_held);
        PAC_CHECK(!copied[copies[i]]);
        copied[copies[i]] = true;
        PAC_CHECK_EQ(copy_how[i].ack, 1);
        PAC_CHECK_EQ(copy_how[i].window, 0);
    }
}

/* The copies foreseen in an incast: with twenty requests held behind one
 * answer and a rate measured, those with the most window triggers ahead of
 * them go as copies at once, long before request_copy_us; those near the
 * front do not (their turn may come first).  Whether the requests come
 * before the answer's data (an incast's first round: nothing is known of
 * the rate when they are held) or after it.  The rest are copied when due,
 * and each request once. */
static void
test_copy_foreseen(void)
{
    enum { N = 20 };

    for (int held_first = 0; held_first < 2; held_first++) {
        uint64_t held_at = held_first ? AT(50) : AT(4500);
        uint64_t data_at = held_first ? AT(100) : AT(150);
        struct pac *pac = foresight_incast(N, held_at, data_at);
        uint64_t now = held_first ? data_at + 4000 : held_at;
        bool copied[N + 1];

        PAC_CHECK(pac);
        run(pac, now);
        PAC_CHECK(now + COPY_US / 2 < AT(COPY_US));
        copied_flows(N, copied);
        /* The front is not copied, the back is, and the copies are a
         * suffix of the requests (each has more ahead of it). */
        PAC_CHECK(!copied[1] && !copied[2]);
        PAC_CHECK(copied[N]);
        for (int f = 1; f < N; f++) {
            PAC_CHECK(!copied[f] || copied[f + 1]);
        }
        /* The others when due; none twice. */
        run(pac, held_at + COPY_US);
        copied_flows(N, copied);
        PAC_CHECK_EQ(n_copies, N);
        PAC_CHECK_EQ(get_stats(pac).request_copies, N);
        PAC_CHECK_EQ(get_stats(pac).held, N);
        run(pac, held_at + 3 * COPY_US);
        PAC_CHECK_EQ(n_copies, N);
        end_pac();
    }
}

/* Two requests held behind one answer at the same rate: neither is
 * expected to wait request_copy_us, and neither gets a copy when it is
 * held, where twenty got some (test_copy_foreseen()). */
static void
test_no_copy_foreseen_for_a_short_wait(void)
{
    struct pac *pac = foresight_incast(2, AT(4500), AT(150));

    PAC_CHECK(pac);
    run(pac, AT(4600));
    PAC_CHECK_EQ(get_stats(pac).held, 2);
    PAC_CHECK_EQ(n_copies, 0);
    end_pac();
}

/* The VM's retransmission of a held request shows its RTO: from then on
 * held requests are copied after half the wait at which it came
 * (pac_copy_delay()), here 8 ms: the held request, 8 ms old, gets its copy
 * as soon as data makes room for the copy's ACK frame (most of flow 0's
 * answer), where without the retransmission it waits for request_copy_us
 * (50 ms). */
static void
test_copy_delay_learns_vm_rto(void)
{
    for (int retransmit = 0; retransmit < 2; retransmit++) {
        struct pac *pac = held_request(true, COPY_US);

        PAC_CHECK(pac);
        PAC_CHECK_EQ(get_stats(pac).copy_delay_us, COPY_US);
        if (retransmit) {
            tx(pac, AT(8000), 1, 1, 100, ACK, 2);
            PAC_CHECK_EQ(get_stats(pac).vm_retransmits, 1);
            PAC_CHECK_EQ(get_stats(pac).copy_delay_us, 4000);
        }
        rx_data(pac, AT(8100), 0, 1, IW - 2000);
        PAC_CHECK_EQ(n_copies, retransmit ? 1 : 0);
        PAC_CHECK_EQ(get_stats(pac).vm_retransmits, retransmit ? 1 : 0);
        end_pac();
    }
}

/* A request released before request_copy_us gets no copy. */
static void
test_no_copy_when_released_early(void)
{
    struct pac *pac = held_request(true, COPY_US);

    PAC_CHECK(pac);
    rx_data(pac, AT(COPY_US / 2), 0, 1, IW);
    run(pac, AT(COPY_US / 2 + 10));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    run(pac, AT(2 * COPY_US));
    PAC_CHECK_EQ(n_copies, 0);
    PAC_CHECK_EQ(get_stats(pac).request_copies, 0);
    end_pac();
}

/* Off: request_copy_us 0, or no callback. */
static void
test_no_copy_when_off(void)
{
    for (int i = 0; i < 2; i++) {
        struct pac *pac = held_request(i == 0, i == 0 ? 0 : COPY_US);

        PAC_CHECK(pac);
        rx_data(pac, AT(10), 0, 1, 1000);
        run(pac, AT(2 * COPY_US));
        rx_data(pac, AT(2 * COPY_US + 10), 0, 1001, IW - 3000);
        PAC_CHECK_EQ(n_copies, 0);
        PAC_CHECK_EQ(get_stats(pac).request_copies, 0);
        PAC_CHECK_EQ(get_stats(pac).held, 1);
        end_pac();
    }
}

/* The copy's timer: pac_next_wakeup() asks for the moment a held request
 * becomes due, so that a datapath that sleeps until then sends it. */
static void
test_copy_wakeup(void)
{
    struct pac *pac = held_request(true, COPY_US);

    PAC_CHECK(pac);
    rx_data(pac, AT(10), 0, 1, IW - 2000);
    PAC_CHECK(pac_next_wakeup(pac) <= AT(COPY_US));
    run(pac, pac_next_wakeup(pac) > AT(COPY_US) ? AT(COPY_US)
        : pac_next_wakeup(pac));
    while (n_copies == 0 && pac_next_wakeup(pac) <= AT(COPY_US)) {
        run(pac, pac_next_wakeup(pac));
    }
    PAC_CHECK_EQ(n_copies, 1);
    end_pac();
}

/* Data that waits behind held ACKs of its flow (a request sent while the
 * answer before it still flows): after request_copy_us from its arrival
 * it goes as a copy that gives the peer nothing more to send: an ACK
 * number below the newest one sent (an old ACK, whose window TCP does not
 * take) and, if its window were taken, no edge beyond the one the peer
 * has, with the timestamp of the flow's oldest held segment.  The held
 * segments then go in order, and none is copied again. */
static void
test_copy_of_data_behind_held_acks(void)
{
    /* max_hold_us long: only the copy is under test. */
    struct pac *pac = copy_pac(true, COPY_US, 10 * COPY_US);
    struct pac_flow_info info;
    struct pac_segment req;
    uint32_t sent_edge, b;

    PAC_CHECK(pac);

    /* An earlier answer of flow 0 was acknowledged (an old ACK number is
     * one the peer takes only then: test_copy_behind_first_answer()). */
    b = ack_flow(pac, AT(0), 0, 2 * MSS, 9);

    /* Flow 0's request goes and puts its window in flight. */
    rx(pac, AT(0), 0, b, 0, ACK, PAC_ECN_ECT0);
    req = tx_seg(0, b, 100, ACK);
    PAC_CHECK_EQ(pac_tx(pac, &req, P(0), AT(0), rec_emit, NULL), PAC_PASS);
    sent_edge = b + req.window;

    /* Four segments of the answer arrive; the VM's ACK of two of them
     * does not fit and is held; then the VM sends data (acknowledging the
     * same), which waits behind that ACK. */
    rx_data(pac, AT(10), 0, b, 4 * MSS);
    CHECK_HELD(tx(pac, AT(20), 0, b + 2 * MSS, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(30), 0, b + 2 * MSS, 100, ACK, 2));
    /* More of it arrives: room for the copy's ACK. */
    rx_data(pac, AT(40), 0, b + 4 * MSS, 2 * MSS);

    run(pac, AT(30 + COPY_US - 1));
    PAC_CHECK_EQ(n_copies, 0);
    PAC_CHECK(pac_next_wakeup(pac) <= AT(30 + COPY_US));
    run(pac, AT(30 + COPY_US));
    PAC_CHECK_EQ(n_copies, 1);
    PAC_CHECK_EQ(copies[0], 2);
    PAC_CHECK_EQ(get_stats(pac).request_copies, 1);
    GET_FLOW(pac, 0, &info);
    PAC_CHECK_EQ(info.last_ack, b);
    PAC_CHECK_EQ(copy_how[0].ack, b - 1);
    PAC_CHECK(copy_how[0].ack + copy_how[0].window <= sent_edge);
    PAC_CHECK(copy_how[0].tsval_from == P(1));
    CHECK_N_EMITTED(0);
    PAC_CHECK_EQ(get_stats(pac).held, 2);

    /* The answer drains: the ACK and then the data go, in order, and the
     * data, now its flow's head, gets no second copy. */
    rx_data(pac, AT(2 * COPY_US), 0, b + 6 * MSS, IW - 6 * MSS);
    run(pac, AT(4 * COPY_US));
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(0, 1);
    CHECK_RELEASED(1, 2);
    PAC_CHECK_EQ(n_copies, 1);
    end_pac();
}

/* Data behind held segments of a flow whose peer has had none of its
 * data acknowledged: Linux drops a segment with an ACK number below its
 * newest then (its bytes_acked bounds how old an ACK may be), data and
 * all.  Behind a request to an idle peer the copy takes the newest ACK
 * number and a closed window, and the segment then goes right behind the
 * request; behind ACKs of a first answer under way it gets no copy and
 * goes as an ACK once it is the head. */
static void
test_copy_behind_first_answer(void)
{
    struct pac *pac = held_request(true, COPY_US);

    PAC_CHECK(pac);
    /* Behind flow 1's held request, the VM's next request (the same ACK
     * number: the peer has sent nothing). */
    CHECK_HELD(tx(pac, AT(10), 1, 1, 100, ACK, 2));
    /* Most of flow 0's answer arrives: room for the copies. */
    rx_data(pac, AT(COPY_US + 10), 0, 1, IW - 2000);
    PAC_CHECK_EQ(n_copies, 2);
    PAC_CHECK_EQ(copies[0], 1);
    PAC_CHECK_EQ(copies[1], 2);
    PAC_CHECK_EQ(copy_how[1].ack, 1);
    PAC_CHECK_EQ(copy_how[1].window, 0);
    PAC_CHECK(copy_how[1].tsval_from == P(1));

    /* Flow 0's answer drains: flow 1's request goes; the copied one,
     * an ACK now, follows under the ACKs' hold bound (the frame the peer
     * answers it with does not fit under the window just released). */
    rx_data(pac, AT(3 * COPY_US), 0, 1 + IW - 2000, 2000);
    /* The peer's ACKs of the two copies. */
    rx(pac, AT(3 * COPY_US + 10), 1, 1, 0, ACK, PAC_ECN_ECT0);
    rx(pac, AT(3 * COPY_US + 10), 1, 1, 0, ACK, PAC_ECN_ECT0);
    run(pac, AT(3 * COPY_US + 20));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    run(pac, AT(3 * COPY_US + 20 + 20000));
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 2);
    end_pac();

    /* A first answer under way, its ACK held (max_hold_us 2 x COPY_US),
     * data behind it: no copy, since no ACK of the answer has gone. */
    pac = copy_pac(true, COPY_US, 2 * COPY_US);
    PAC_CHECK(pac);
    PAC_CHECK_EQ(request(pac, AT(0), 0, 1, 0), PAC_PASS);
    rx_data(pac, AT(10), 0, 1, 4 * MSS);
    CHECK_HELD(tx(pac, AT(20), 0, 1 + 2 * MSS, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(30), 0, 1 + 2 * MSS, 100, ACK, 2));
    run(pac, AT(30 + COPY_US));
    PAC_CHECK_EQ(n_copies, 0);
    /* The ACK reaches its bound and goes; the data, the head now (an
     * ACK), goes under the same bound, uncopied. */
    run(pac, AT(20 + 2 * COPY_US));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    run(pac, AT(20 + 4 * COPY_US));
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 2);
    PAC_CHECK_EQ(n_copies, 0);
    end_pac();
}

/* Data that reaches its flow's head before request_copy_us gets no copy
 * from the waiting list; at the head, only a request is copied. */
static void
test_no_copy_of_data_that_reached_the_head(void)
{
    struct pac *pac = copy_pac(true, COPY_US, 0);
    struct pac_config cfg;

    PAC_CHECK(pac);
    test_config(&cfg);              /* For its max_hold_us. */
    CHECK_PASS(request(pac, AT(0), 0, 1, 0));
    rx_data(pac, AT(10), 0, 1, 3 * MSS);
    CHECK_HELD(tx(pac, AT(20), 0, 1 + 2 * MSS, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(30), 0, 1 + 2 * MSS, 100, ACK, 2));

    /* max_hold_us (20 ms) lets the ACK go: the data is the head now. */
    run(pac, AT(cfg.max_hold_us + 20));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);
    run(pac, AT(2 * COPY_US));
    PAC_CHECK_EQ(n_copies, 0);
    end_pac();
}

/* Data that queued behind held ACKs of its flow, and whose ACK number the
 * peer's data passed before it reached the head (pac_rx() converts heads
 * only), goes as an ACK once it is the head: under the ACKs' hold bound,
 * not as a window trigger that may wait max_hold_trigger_us with the
 * receiver's later ACKs behind it while the peer's retransmission timer
 * runs.  No copies here: the hold bound alone is under test. */
static void
test_request_behind_acks_passed_by_data_goes_as_ack(void)
{
    struct pac_segment req = tx_seg(0, 1, 100, ACK);
    struct pac *pac = copy_pac(false, 0, COPY_US / 2);

    PAC_CHECK(pac);
    rx(pac, AT(0), 0, 1, 0, ACK, PAC_ECN_ECT0);
    PAC_CHECK_EQ(pac_tx(pac, &req, P(0), AT(0), rec_emit, NULL), PAC_PASS);

    /* Four segments of the answer arrive; the VM's ACK of two of them is
     * held, and its next request, acknowledging all four, waits behind
     * it: a window trigger, as nothing has come after it yet.  Then more
     * of the answer comes, past the request's ACK number. */
    rx_data(pac, AT(10), 0, 1, 4 * MSS);
    CHECK_HELD(tx(pac, AT(20), 0, 1 + 2 * MSS, 0, ACK, 1));
    CHECK_HELD(tx(pac, AT(30), 0, 1 + 4 * MSS, 100, ACK, 2));
    rx_data(pac, AT(40), 0, 1 + 4 * MSS, 2 * MSS);

    /* The ACK reaches its hold bound; the request is the head now. */
    run(pac, AT(20 + COPY_US / 2));
    CHECK_N_EMITTED(1);
    CHECK_RELEASED(0, 1);

    /* Not a window trigger: it goes at the ACKs' bound from then on. */
    run(pac, AT(20 + COPY_US - 1));
    CHECK_N_EMITTED(1);
    run(pac, AT(20 + COPY_US));
    CHECK_N_EMITTED(2);
    CHECK_RELEASED(1, 2);
    PAC_CHECK_EQ(get_stats(pac).released[PAC_REL_MAX_HOLD], 2);
    end_pac();
}

int
main(void)
{
    PAC_RUN_TEST(test_copy_when_due_and_fits);
    PAC_RUN_TEST(test_request_passed_by_data_goes_as_ack);
    PAC_RUN_TEST(test_copy_of_request_while_answer_due);
    PAC_RUN_TEST(test_no_copy_when_released_early);
    PAC_RUN_TEST(test_no_copy_when_off);
    PAC_RUN_TEST(test_copy_wakeup);
    PAC_RUN_TEST(test_copy_foreseen);
    PAC_RUN_TEST(test_copy_delay_learns_vm_rto);
    PAC_RUN_TEST(test_no_copy_foreseen_for_a_short_wait);
    PAC_RUN_TEST(test_copy_of_data_behind_held_acks);
    PAC_RUN_TEST(test_copy_behind_first_answer);
    PAC_RUN_TEST(test_no_copy_of_data_that_reached_the_head);
    PAC_RUN_TEST(test_request_behind_acks_passed_by_data_goes_as_ack);
    drop_pac();
    PAC_TEST_MAIN_END;
}
