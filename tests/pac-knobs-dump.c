/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Prints libpac's knob table (pac_knobs[], lib/pac-knobs.c) as
 * tab-separated values, a header line first, for tests/check-pac-knobs.py:
 *
 *   name where type field unit default min max db_min db_max names doc
 *
 * 'where' is "column" or "other_config", 'type' "u32", "bool", "levels"
 * or "enum" (see struct pac_knob in lib/pac.h for the meaning of the
 * numbers of a "levels" row); numbers are decimal; 'names' are an "enum"
 * row's value names, comma-separated, in value order (empty otherwise). */

#include <inttypes.h>
#include <stdio.h>
#include "pac.h"

int
main(void)
{
    static const char *const types[] = {
        [PAC_KNOB_U32] = "u32",
        [PAC_KNOB_BOOL] = "bool",
        [PAC_KNOB_LEVELS] = "levels",
        [PAC_KNOB_ENUM] = "enum",
    };

    printf("name\twhere\ttype\tfield\tunit\tdefault\tmin\tmax\tdb_min\t"
           "db_max\tnames\tdoc\n");
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *k = &pac_knobs[i];

        printf("%s\t%s\t%s\t%s\t%s\t%"PRIu32"\t%"PRIu32"\t%"PRIu32"\t%"PRIu32
               "\t%"PRIu32"\t", k->name,
               k->where == PAC_KNOB_COLUMN ? "column" : "other_config",
               types[k->type], k->field, k->unit, k->def, k->min, k->max,
               k->db_min, k->db_max);
        for (uint32_t v = 0; k->type == PAC_KNOB_ENUM && v <= k->max; v++) {
            printf("%s%s", v ? "," : "", k->names[v]);
        }
        printf("\t%s\n", k->doc);
    }
    return 0;
}
