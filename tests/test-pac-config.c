/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Unit tests of libpac's configuration, sizes and instance lifetime:
 * pac_config_init(), pac_config_check(), pac_create(), pac_memory_size(). */

#include "pac.h"

#include "pac-private.h"
#include "pac-test-seg.h"

static void
test_config_defaults(void)
{
    struct pac_config cfg;
    char err[128] = "untouched";

    memset(&cfg, 0xa5, sizeof cfg);
    pac_config_init(&cfg);
    PAC_CHECK_EQ(cfg.threshold, 96000);
    PAC_CHECK_EQ(cfg.n_levels, 2);
    PAC_CHECK_EQ(cfg.level_bytes[0], 20000);
    for (int i = 1; i < PAC_MAX_LEVELS - 1; i++) {
        PAC_CHECK_EQ(cfg.level_bytes[i], 0);
    }
    PAC_CHECK(cfg.ecn);
    PAC_CHECK_EQ(cfg.max_hold_us, 20000);
    PAC_CHECK_EQ(cfg.max_hold_trigger_us, 1000000);
    PAC_CHECK_EQ(cfg.max_flows, 16384);
    PAC_CHECK_EQ(cfg.max_held, 65536);
    PAC_CHECK_EQ(cfg.idle_timeout_ms, 300000);
    PAC_CHECK_EQ(cfg.init_window_segs, 10);
    PAC_CHECK_EQ(cfg.default_mss, 1460);
    PAC_CHECK_EQ(cfg.base_rtt_us, 100);
    PAC_CHECK_EQ(cfg.lambda_permille, 800);
    PAC_CHECK_EQ(cfg.loss_floor_permille, 775);
    PAC_CHECK(cfg.clamp_window);
    PAC_CHECK(!cfg.deviation_correction);
    PAC_CHECK(cfg.hash_seed == 0);

    PAC_CHECK(pac_config_check(&cfg, err, sizeof err));
    PAC_CHECK(pac_config_check(&cfg, NULL, 0));
}

/* Refused configurations: each entry names the field that its error message
 * must start with (followed by ':' or '['); bad_config_apply() makes the
 * change. */
struct bad_config {
    const char *what;
    const char *field;
};

static const struct bad_config bad_configs[] = {
    { "threshold 2999", "threshold" },
    { "threshold 2^30 + 1", "threshold" },
    { "n_levels 0", "n_levels" },
    { "n_levels 9", "n_levels" },
    { "level_bytes equal", "level_bytes" },
    { "level_bytes decreasing", "level_bytes" },
    { "level_bytes zero", "level_bytes" },
    { "idle_timeout_ms > 30 min", "idle_timeout_ms" },
    { "idle_timeout_ms < 1 s", "idle_timeout_ms" },
    { "lambda 0", "lambda_permille" },
    { "lambda 1000", "lambda_permille" },
    { "max_hold_us 0", "max_hold_us" },
    { "max_hold_us > 10 s", "max_hold_us" },
    { "max_hold_trigger_us 0", "max_hold_trigger_us" },
    { "max_flows 0", "max_flows" },
    { "max_flows > 2^22", "max_flows" },
    { "max_held 0", "max_held" },
    { "max_held > 2^20", "max_held" },
    { "init_window_segs 0", "init_window_segs" },
    { "init_window_segs 1001", "init_window_segs" },
    { "default_mss 63", "default_mss" },
    { "default_mss 65496", "default_mss" },
    { "base_rtt_us 0", "base_rtt_us" },
    { "loss_floor_permille 99", "loss_floor_permille" },
    { "loss_floor_permille 1001", "loss_floor_permille" },
};

static void
bad_config_apply(size_t i, struct pac_config *c)
{
    switch (i) {
    case 0:
        c->threshold = 2999;
        break;
    case 1:
        c->threshold = (1u << 30) + 1;
        break;
    case 2:
        c->n_levels = 0;
        break;
    case 3:
        c->n_levels = 9;
        break;
    case 4:
        c->n_levels = 3;
        c->level_bytes[0] = 20000;
        c->level_bytes[1] = 20000;
        break;
    case 5:
        c->n_levels = 4;
        c->level_bytes[0] = 1000;
        c->level_bytes[1] = 5000;
        c->level_bytes[2] = 4000;
        break;
    case 6:
        c->level_bytes[0] = 0;
        break;
    case 7:
        c->idle_timeout_ms = 30 * 60 * 1000 + 1;
        break;
    case 8:
        c->idle_timeout_ms = 999;
        break;
    case 9:
        c->lambda_permille = 0;
        break;
    case 10:
        c->lambda_permille = 1000;
        break;
    case 11:
        c->max_hold_us = 0;
        break;
    case 12:
        c->max_hold_us = 10 * 1000 * 1000 + 1;
        break;
    case 13:
        c->max_hold_trigger_us = 0;
        break;
    case 14:
        c->max_flows = 0;
        break;
    case 15:
        c->max_flows = (1u << 22) + 1;
        break;
    case 16:
        c->max_held = 0;
        break;
    case 17:
        c->max_held = (1u << 20) + 1;
        break;
    case 18:
        c->init_window_segs = 0;
        break;
    case 19:
        c->init_window_segs = 1001;
        break;
    case 20:
        c->default_mss = 63;
        break;
    case 21:
        c->default_mss = 65496;
        break;
    case 22:
        c->base_rtt_us = 0;
        break;
    case 23:
        c->loss_floor_permille = 99;
        break;
    case 24:
        c->loss_floor_permille = 1001;
        break;
    default:
        abort();
    }
}

static void
test_config_refusals(void)
{
    for (size_t i = 0; i < sizeof bad_configs / sizeof bad_configs[0]; i++) {
        const struct bad_config *b = &bad_configs[i];
        size_t n = strlen(b->field);
        struct pac_config cfg;
        char err[256];

        pac_config_init(&cfg);
        bad_config_apply(i, &cfg);
        err[0] = '\0';
        if (pac_config_check(&cfg, err, sizeof err)) {
            fprintf(stderr, "accepted: %s\n", b->what);
            PAC_CHECK(!"bad configuration accepted");
        }
        if (strncmp(err, b->field, n) || (err[n] != ':' && err[n] != '[')) {
            fprintf(stderr, "%s: message \"%s\" does not name %s\n",
                    b->what, err, b->field);
            PAC_CHECK(!"message does not name the field");
        }
        PAC_CHECK(!pac_config_check(&cfg, NULL, 0));
        PAC_CHECK(pac_create(&cfg, T0) == NULL);
    }
}

static void
test_config_boundaries(void)
{
    struct pac_config cfg;
    char err[256];

    pac_config_init(&cfg);
    cfg.threshold = 3000;
    cfg.idle_timeout_ms = 30 * 60 * 1000;
    cfg.lambda_permille = 1;
    cfg.loss_floor_permille = 100;
    cfg.n_levels = 8;
    for (int i = 0; i < PAC_MAX_LEVELS - 1; i++) {
        cfg.level_bytes[i] = 1000 * (i + 1);
    }
    PAC_CHECK(pac_config_check(&cfg, err, sizeof err));
    cfg.lambda_permille = 999;
    cfg.loss_floor_permille = 1000;
    cfg.n_levels = 1;
    cfg.level_bytes[0] = 0;     /* Unused with one level. */
    cfg.threshold = 1u << 30;
    PAC_CHECK(pac_config_check(&cfg, err, sizeof err));

    /* A short buffer gets a truncated, terminated message. */
    cfg.n_levels = 0;
    memset(err, 'x', sizeof err);
    PAC_CHECK(!pac_config_check(&cfg, err, 5));
    PAC_CHECK(!strcmp(err, "n_le"));
}

static void
test_create_bad_config(void)
{
    struct pac_config cfg;

    pac_config_init(&cfg);
    cfg.threshold = 100;
    PAC_CHECK(pac_create(&cfg, T0) == NULL);
    pac_config_init(&cfg);
    cfg.n_levels = 3;
    cfg.level_bytes[1] = 100;
    PAC_CHECK(pac_create(&cfg, T0) == NULL);
    pac_destroy(NULL, rec_emit, NULL);
}

static void
test_create_initial_state(void)
{
    struct pac_config cfg;
    struct pac_stats st;
    struct pac *pac;

    pac_config_init(&cfg);
    pac = make_pac(&cfg);
    PAC_CHECK(pac);
    st = get_stats(pac);
    PAC_CHECK_EQ(st.in_flight, 0);
    PAC_CHECK_EQ(st.threshold, 96000);
    PAC_CHECK_EQ(st.alpha_permille, 0);
    PAC_CHECK_EQ(st.control_interval_us, 100);
    PAC_CHECK_EQ(st.avg_rtt_us, 100);
    PAC_CHECK_EQ(st.flows, 0);
    PAC_CHECK_EQ(st.held, 0);
    PAC_CHECK_EQ(st.tx_packets + st.rx_packets + st.flows_created, 0);
    PAC_CHECK_EQ(n_flows(pac), 0);
    /* Nothing to do until a packet comes. */
    PAC_CHECK(pac_next_wakeup(pac) == UINT64_MAX);
    end_pac();
    CHECK_N_EMITTED(0);
}

static void
test_memory_size(void)
{
    struct pac_config cfg;
    size_t base, flow;

    pac_config_init(&cfg);
    base = sizeof(struct pac);
    /* Per flow: the entry, its flow_wnd[] state, its ring index node and
     * a dirty-list slot. */
    flow = sizeof(struct pac_flow) + sizeof(struct pac_flow_wnd)
           + sizeof(struct pac_rr_node) + sizeof(uint32_t);
    PAC_CHECK_EQ(pac_memory_size(&cfg),
                 base + 16384 * flow
                 + 16384 * sizeof(uint32_t)
                 + 65536 * sizeof(struct pac_held));

    /* Buckets round up to a power of two. */
    cfg.max_flows = 5;
    cfg.max_held = 7;
    PAC_CHECK_EQ(pac_memory_size(&cfg),
                 base + 5 * flow + 8 * sizeof(uint32_t)
                 + 7 * sizeof(struct pac_held));
    cfg.max_flows = 1;
    cfg.max_held = 1;
    PAC_CHECK_EQ(pac_memory_size(&cfg),
                 base + flow + sizeof(uint32_t)
                 + sizeof(struct pac_held));
}

/* The sizes docs/libpac.md ("Bounds and memory"), docs/operator.md
 * (max-flows) and docs/benchmarks.md (memory table) state: a flow entry
 * fills two cache lines, a held packet takes 48 bytes, a connection 272
 * bytes in all, and an instance with the defaults 7 603 448 bytes.  A
 * change of any of them must change those documents too. */
static void
test_struct_sizes(void)
{
    struct pac_config cfg;

    PAC_CHECK_EQ(sizeof(struct pac_flow), 128);
    PAC_CHECK_EQ(sizeof(struct pac_flow_wnd), 100);
    PAC_CHECK_EQ(sizeof(struct pac_rr_node), 36);
    PAC_CHECK_EQ(sizeof(struct pac_held), 48);
    PAC_CHECK_EQ(sizeof(struct pac_flow) + sizeof(struct pac_flow_wnd)
                 + sizeof(struct pac_rr_node) + 2 * sizeof(uint32_t), 272);
    pac_config_init(&cfg);
    PAC_CHECK_EQ(pac_memory_size(&cfg), 7603448);
}

static void
test_names(void)
{
    PAC_CHECK(!strcmp(pac_version(), "0.1.0"));
    PAC_CHECK(!strcmp(pac_version(), PAC_VERSION_STRING));
    PAC_CHECK(!strcmp(pac_release_cause_name(PAC_REL_FIT), "fit"));
    PAC_CHECK(!strcmp(pac_release_cause_name(PAC_REL_MAX_HOLD),
                      "max_hold"));
    PAC_CHECK(!strcmp(pac_release_cause_name(PAC_REL_CAP), "cap"));
    PAC_CHECK(!strcmp(pac_release_cause_name(PAC_REL_FLUSH), "flush"));
    PAC_CHECK(!strcmp(pac_release_cause_name(PAC_N_REL_CAUSES),
                      "unknown"));
}

int
main(void)
{
    PAC_RUN_TEST(test_config_defaults);
    PAC_RUN_TEST(test_config_refusals);
    PAC_RUN_TEST(test_config_boundaries);
    PAC_RUN_TEST(test_create_bad_config);
    PAC_RUN_TEST(test_create_initial_state);
    PAC_RUN_TEST(test_memory_size);
    PAC_RUN_TEST(test_struct_sizes);
    PAC_RUN_TEST(test_names);
    drop_pac();
    PAC_TEST_MAIN_END;
}
