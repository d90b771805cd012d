/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* pac-sim: runs the incast simulator from the command line.
 *
 *   pac-sim --mode both --senders 16,100,1000 --rounds 5
 *
 * prints one "SIM ..." line (plus a few indented detail lines) per run and,
 * with --mode both, a table comparing PAC off and on.  --mode rwnd runs
 * libpac's receiver-window policy instead (the ICTCP / AC/DC TCP peer,
 * docs/libpac.md). */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define MAX_SENDER_LISTS 64

static void
usage(void)
{
    printf("usage: pac-sim [OPTIONS]\n"
           "Simulates TCP incast through a drop-tail bottleneck, with and "
           "without PAC.\n\n"
           "  --mode off|pac|both|rwnd  PAC off, on, both, or libpac's "
           "receiver-window\n"
           "                            policy (default off)\n"
           "  --senders N[,N...]        numbers of senders (default 16)\n"
           "  --workload per-sender|total\n"
           "                            bytes per sender, or in total per "
           "round\n"
           "  --bytes S                 response bytes; k/m suffixes are "
           "binary\n"
           "                            (default 64k per sender, 1m "
           "total)\n"
           "  --buffer B                bottleneck buffer, bytes (default "
           "100000)\n"
           "  --rate-mbps C             bottleneck rate (default 1000)\n"
           "  --access-mbps A           sender access links (default "
           "10000)\n"
           "  --rtt-us R                base RTT, propagation only "
           "(default 100)\n"
           "  --rounds R                barrier-synchronised rounds "
           "(default 5)\n"
           "  --delayed-ack             receiver ACKs every 2nd segment / "
           "40 ms\n"
           "  --init-cwnd W             senders' initial window (default "
           "10)\n"
           "  --jitter-ns J             host send jitter (default 1000)\n"
           "  --seed X                  random seed (default 1)\n"
           "  --no-clamp                PAC leaves the receiver's window alone\n"
           "  --request-copy-us US      PAC's request_copy_us (0: no "
           "zero-window\n"
           "                            copies of held requests; default "
           "50000)\n"
           "  --fast-path               PAC's fast_path (the PAC table's "
           "default; the model\n"
           "                            runs without it): track no "
           "connection until a\n"
           "                            burst of requests could bring half "
           "the threshold\n"
           "  --threshold T             PAC threshold, bytes (default: "
           "the buffer)\n"
           "  --time-limit-s S          simulated time limit (default "
           "600)\n"
           "  --trace FILE              write an event trace ('-': "
           "stdout)\n"
           "  --quiet                   only the SIM lines\n"
           "  -h, --help                this help\n");
}

static uint64_t
parse_size(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);

    if (errno || end == s) {
        fprintf(stderr, "pac-sim: bad %s '%s'\n", what, s);
        exit(2);
    }
    if (*end == 'k' || *end == 'K') {
        v *= 1024;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        v *= 1024 * 1024;
        end++;
    }
    if (*end == 'b' || *end == 'B') {
        end++;
    }
    if (*end) {
        fprintf(stderr, "pac-sim: bad %s '%s'\n", what, s);
        exit(2);
    }
    return v;
}

static size_t
parse_senders(const char *s, uint32_t *list)
{
    size_t n = 0;
    char *copy = strdup(s);
    char *save = NULL;

    for (char *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == MAX_SENDER_LISTS) {
            fprintf(stderr, "pac-sim: too many sender counts\n");
            exit(2);
        }
        list[n++] = parse_size(tok, "sender count");
    }
    free(copy);
    if (!n) {
        fprintf(stderr, "pac-sim: no sender count\n");
        exit(2);
    }
    return n;
}

/* One sender count's runs, by mode: off, pac, rwnd. */
struct row {
    uint32_t n;
    bool have[3];
    struct sim_result res[3];
};

int
main(int argc, char *argv[])
{
    enum {
        OPT_MODE = 256, OPT_SENDERS, OPT_WORKLOAD, OPT_BYTES, OPT_BUFFER,
        OPT_RATE, OPT_ACCESS, OPT_RTT, OPT_ROUNDS, OPT_DELACK, OPT_IW,
        OPT_JITTER, OPT_SEED, OPT_THRESHOLD, OPT_TIME_LIMIT, OPT_TRACE,
        OPT_QUIET, OPT_NO_CLAMP, OPT_REQUEST_COPY, OPT_FAST_PATH,
    };
    static const struct option options[] = {
        {"mode", required_argument, NULL, OPT_MODE},
        {"senders", required_argument, NULL, OPT_SENDERS},
        {"workload", required_argument, NULL, OPT_WORKLOAD},
        {"bytes", required_argument, NULL, OPT_BYTES},
        {"buffer", required_argument, NULL, OPT_BUFFER},
        {"rate-mbps", required_argument, NULL, OPT_RATE},
        {"access-mbps", required_argument, NULL, OPT_ACCESS},
        {"rtt-us", required_argument, NULL, OPT_RTT},
        {"rounds", required_argument, NULL, OPT_ROUNDS},
        {"delayed-ack", no_argument, NULL, OPT_DELACK},
        {"init-cwnd", required_argument, NULL, OPT_IW},
        {"jitter-ns", required_argument, NULL, OPT_JITTER},
        {"seed", required_argument, NULL, OPT_SEED},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"time-limit-s", required_argument, NULL, OPT_TIME_LIMIT},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"no-clamp", no_argument, NULL, OPT_NO_CLAMP},
        {"request-copy-us", required_argument, NULL, OPT_REQUEST_COPY},
        {"fast-path", no_argument, NULL, OPT_FAST_PATH},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct sim_config cfg;
    uint32_t senders[MAX_SENDER_LISTS] = {16};
    size_t n_senders = 1;
    bool modes[3] = {true, false, false};
    bool bytes_set = false;
    bool quiet = false;
    int c;

    sim_config_init(&cfg);
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case OPT_MODE:
            modes[0] = !strcmp(optarg, "off") || !strcmp(optarg, "both");
            modes[1] = !strcmp(optarg, "pac") || !strcmp(optarg, "both");
            modes[2] = !strcmp(optarg, "rwnd");
            if (!modes[0] && !modes[1] && !modes[2]) {
                fprintf(stderr, "pac-sim: bad mode '%s'\n", optarg);
                return 2;
            }
            break;
        case OPT_SENDERS:
            n_senders = parse_senders(optarg, senders);
            break;
        case OPT_WORKLOAD:
            if (!strcmp(optarg, "per-sender")) {
                cfg.workload = SIM_WL_PER_SENDER;
            } else if (!strcmp(optarg, "total")) {
                cfg.workload = SIM_WL_TOTAL;
            } else {
                fprintf(stderr, "pac-sim: bad workload '%s'\n", optarg);
                return 2;
            }
            break;
        case OPT_BYTES:
            cfg.bytes = parse_size(optarg, "byte count");
            bytes_set = true;
            break;
        case OPT_BUFFER:
            cfg.buffer_bytes = parse_size(optarg, "buffer size");
            break;
        case OPT_RATE:
            cfg.rate_bps = parse_size(optarg, "rate") * 1000000ULL;
            break;
        case OPT_ACCESS:
            cfg.access_rate_bps = parse_size(optarg, "rate") * 1000000ULL;
            break;
        case OPT_RTT:
            cfg.rtt_us = parse_size(optarg, "RTT");
            break;
        case OPT_ROUNDS:
            cfg.rounds = parse_size(optarg, "round count");
            break;
        case OPT_DELACK:
            cfg.delayed_ack = true;
            break;
        case OPT_IW:
            cfg.init_cwnd = parse_size(optarg, "initial window");
            break;
        case OPT_JITTER:
            cfg.jitter_ns = parse_size(optarg, "jitter");
            break;
        case OPT_SEED:
            cfg.seed = parse_size(optarg, "seed");
            break;
        case OPT_THRESHOLD:
            cfg.threshold = parse_size(optarg, "threshold");
            break;
        case OPT_TIME_LIMIT:
            cfg.time_limit_ns = parse_size(optarg, "time limit")
                                * 1000000000ULL;
            break;
        case OPT_TRACE:
            cfg.trace = !strcmp(optarg, "-") ? stdout : fopen(optarg, "w");
            if (!cfg.trace) {
                fprintf(stderr, "pac-sim: %s: %s\n", optarg,
                        strerror(errno));
                return 2;
            }
            break;
        case OPT_NO_CLAMP:
            cfg.clamp_window = false;
            break;
        case OPT_REQUEST_COPY:
            cfg.request_copy_us = parse_size(optarg, "request copy time");
            break;
        case OPT_FAST_PATH:
            cfg.fast_path = true;
            break;
        case OPT_QUIET:
            quiet = true;
            break;
        case 'h':
            usage();
            return 0;
        default:
            usage();
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "pac-sim: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!bytes_set && cfg.workload == SIM_WL_TOTAL) {
        cfg.bytes = 1024 * 1024;
    }

    struct row *rows = calloc(n_senders, sizeof *rows);
    int status = 0;
    for (size_t k = 0; k < n_senders; k++) {
        rows[k].n = senders[k];
        static const enum sim_mode by_index[3] = {
            SIM_MODE_OFF, SIM_MODE_PAC, SIM_MODE_RWND,
        };

        for (int m = 0; m < 3; m++) {
            if (!modes[m]) {
                continue;
            }
            cfg.n_senders = senders[k];
            cfg.mode = by_index[m];
            if (sim_run(&cfg, &rows[k].res[m])) {
                status = 1;
                continue;
            }
            rows[k].have[m] = true;
            sim_print_line(stdout, &cfg, &rows[k].res[m]);
            if (!quiet) {
                sim_print_details(stdout, &cfg, &rows[k].res[m]);
            }
            fflush(stdout);
        }
    }

    if (modes[0] && modes[1]) {
        printf("\n%7s %12s %12s %9s %9s %9s %9s %12s %12s\n", "senders",
               "goodput_off", "goodput_pac", "tmo_off", "tmo_pac",
               "drops_off", "drops_pac", "rct99_off_ms", "rct99_pac_ms");
        for (size_t k = 0; k < n_senders; k++) {
            const struct row *r = &rows[k];

            if (!r->have[0] || !r->have[1]) {
                continue;
            }
            printf("%7u %12.1f %12.1f %9" PRIu64 " %9" PRIu64 " %9" PRIu64
                   " %9" PRIu64 " %12.3f %12.3f\n", r->n,
                   r->res[0].goodput_mbps, r->res[1].goodput_mbps,
                   r->res[0].timeouts, r->res[1].timeouts, r->res[0].drops,
                   r->res[1].drops, r->res[0].rct_p99_ms,
                   r->res[1].rct_p99_ms);
        }
    }
    free(rows);
    if (cfg.trace && cfg.trace != stdout) {
        fclose(cfg.trace);
    }
    return status;
}
