/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef PAC_TEST_H
#define PAC_TEST_H 1

/* A minimal test harness for the libpac unit tests.
 *
 * Each test program defines test functions and lists them in main() with
 * PAC_RUN_TEST().  A failed check prints file:line and the expression, marks
 * the current test failed and returns from it.  PAC_TEST_MAIN_END prints the
 * plain closing line "N passed, N failed" and exits non-zero on failure. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pac_test_passed;
static int pac_test_failed;
static int pac_test_cur_failed;

#define PAC_CHECK(COND)                                                 \
    do {                                                                \
        if (!(COND)) {                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n",                \
                    __FILE__, __LINE__, #COND);                         \
            pac_test_cur_failed = 1;                                    \
            return;                                                     \
        }                                                               \
    } while (0)

#define PAC_CHECK_EQ(A, B)                                              \
    do {                                                                \
        long long a_ = (A);                                             \
        long long b_ = (B);                                             \
        if (a_ != b_) {                                                 \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",   \
                    __FILE__, __LINE__, #A, #B, a_, b_);                \
            pac_test_cur_failed = 1;                                    \
            return;                                                     \
        }                                                               \
    } while (0)

#define PAC_RUN_TEST(FN)                                                \
    do {                                                                \
        pac_test_cur_failed = 0;                                        \
        FN();                                                           \
        if (pac_test_cur_failed) {                                      \
            pac_test_failed++;                                          \
            printf("FAIL: %s\n", #FN);                                  \
        } else {                                                        \
            pac_test_passed++;                                          \
            printf("ok: %s\n", #FN);                                    \
        }                                                               \
    } while (0)

#define PAC_TEST_MAIN_END                                               \
    do {                                                                \
        printf("%d passed, %d failed\n", pac_test_passed,               \
               pac_test_failed);                                        \
        return pac_test_failed ? 1 : 0;                                 \
    } while (0)

#endif /* pac-test.h */
