/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

#ifndef FUZZ_REPLAY_H
#define FUZZ_REPLAY_H 1

/* Replaying libFuzzer inputs without libFuzzer: a fuzz target built with
 * -DPAC_FUZZ_STANDALONE is a plain program whose main() passes each file
 * named on its command line to LLVMFuzzerTestOneInput(), to reproduce a
 * crash under a debugger or with extra output. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs the fuzz target on files argv[first] ... argv[argc - 1], each an
 * input of at most 1 MB.  Returns 0, or 1 if a file cannot be read. */
static inline int
fuzz_replay_files(int argc, char *argv[], int first)
{
    for (int i = first; i < argc; i++) {
        static uint8_t buf[1 << 20];
        FILE *f = fopen(argv[i], "rb");
        uint8_t *copy;
        size_t n;

        if (!f) {
            perror(argv[i]);
            return 1;
        }
        n = fread(buf, 1, sizeof buf, f);
        fclose(f);

        /* An exactly sized copy, so that sanitizers see over-reads. */
        copy = malloc(n ? n : 1);
        if (!copy) {
            abort();
        }
        memcpy(copy, buf, n);
        LLVMFuzzerTestOneInput(copy, n);
        free(copy);
    }
    return 0;
}

#endif /* fuzz-replay.h */
