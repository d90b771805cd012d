/* Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
 * Version 2.0 (the "License"); see LICENSE. */

/* Prints libpac's knob table (pac_knobs[]) and its rules between values
 * (pac_rules[], both in lib/pac-knobs.c) as one JSON object.  "make" writes
 * it to ovn-config/pac-knobs.json, which the packages install for
 * ovs-pac-agent; tests/check-pac-knobs.py reads it too.
 *
 *   {"libpac": VERSION,
 *    "knobs": [{"name", "where", "type", "field", "unit", "default", "min",
 *               "max", "db_min", "db_max", ["names"],
 *               ["value_min", "value_max"], "doc"}, ...],
 *    "rules": [{"name", "kind", "knob", "message", "doc"}, ...]}
 *
 * A knob's "where" is "column" (a column of the PAC table named "name") or
 * "other_config" (a key of that column); "type" is "u32", "bool", "levels"
 * or "enum"; numbers are JSON integers, with the meanings of struct
 * pac_knob in lib/pac.h ("db_min" and "db_max" are what the database
 * takes).  An "enum" knob has "names", its value names in value order; a
 * "levels" knob (a map level -> bytes, levels 1 to their number, at most
 * "db_max") has "value_min" and "value_max", the range of each level's
 * bytes.  A rule's "kind" is "increasing" (the bytes of "levels" knob
 * "knob" strictly increase with the level; "message", a printf format of
 * four unsigned integers, a level, its bytes, the next level and its bytes,
 * says why not, as libpac and ovs-vswitchd say it). */

#include <inttypes.h>
#include <stdio.h>
#include "pac.h"

/* Prints 's' as a JSON string. */
static void
put_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = *s;

        if (c == '"' || c == '\\') {
            printf("\\%c", c);
        } else if (c < 0x20) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

static void
put_key_string(const char *key, const char *value)
{
    printf(", \"%s\": ", key);
    put_string(value);
}

static void
put_key_u32(const char *key, uint32_t value)
{
    printf(", \"%s\": %"PRIu32, key, value);
}

static const char *
rule_kind_name(enum pac_rule_kind kind)
{
    switch (kind) {
    case PAC_RULE_INCREASING:
        return "increasing";
    }
    return "unknown";
}

int
main(void)
{
    static const char *const types[] = {
        [PAC_KNOB_U32] = "u32",
        [PAC_KNOB_BOOL] = "bool",
        [PAC_KNOB_LEVELS] = "levels",
        [PAC_KNOB_ENUM] = "enum",
    };

    printf("{\"libpac\": ");
    put_string(pac_version());
    printf(",\n \"knobs\": [\n");
    for (size_t i = 0; i < pac_n_knobs; i++) {
        const struct pac_knob *k = &pac_knobs[i];

        printf("  {\"name\": ");
        put_string(k->name);
        put_key_string("where", k->where == PAC_KNOB_COLUMN
                                ? "column" : "other_config");
        put_key_string("type", types[k->type]);
        put_key_string("field", k->field);
        put_key_string("unit", k->unit);
        put_key_u32("default", k->def);
        put_key_u32("min", k->min);
        put_key_u32("max", k->max);
        put_key_u32("db_min", k->db_min);
        put_key_u32("db_max", k->db_max);
        if (k->type == PAC_KNOB_ENUM) {
            printf(", \"names\": [");
            for (uint32_t v = 0; v <= k->max; v++) {
                printf("%s", v ? ", " : "");
                put_string(k->names[v]);
            }
            printf("]");
        }
        if (k->type == PAC_KNOB_LEVELS) {
            put_key_u32("value_min", k->value_min);
            put_key_u32("value_max", k->value_max);
        }
        put_key_string("doc", k->doc);
        printf("}%s\n", i + 1 < pac_n_knobs ? "," : "");
    }
    printf(" ],\n \"rules\": [\n");
    for (size_t i = 0; i < pac_n_rules; i++) {
        const struct pac_rule *r = &pac_rules[i];

        printf("  {\"name\": ");
        put_string(r->name);
        put_key_string("kind", rule_kind_name(r->kind));
        put_key_string("knob", r->knob);
        put_key_string("message", r->message);
        put_key_string("doc", r->doc);
        printf("}%s\n", i + 1 < pac_n_rules ? "," : "");
    }
    printf(" ]}\n");
    return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
