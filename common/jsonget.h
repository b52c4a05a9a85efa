// SPDX-License-Identifier: GPL-2.0-or-later
/* jsonget.h - bounded reads of one member of a json-c object, and a cpuset
 * as a JSON string. Each getter checks presence, type and range and says
 * which of them failed; the caller words the message for its own input
 * (a scenario path, a QMP reply's array index, a guest report). */
#ifndef LLCD_JSONGET_H
#define LLCD_JSONGET_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "cpuset.h"

enum jget {
	JGET_OK,        /* present, of the right type and in range: *v set */
	JGET_ABSENT,    /* no such member: *v untouched */
	JGET_NULL,      /* the member is JSON null: *v untouched */
	JGET_TYPE,      /* another type: *v untouched */
	JGET_RANGE,     /* out of range: *v holds the value read (for the message) */
};

/* An integer (JSON integer, not a number with a fraction) in [lo, hi]. */
enum jget jget_int(const json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *v);
/* A number (integer or not), finite and in [lo, hi]. */
enum jget jget_num(const json_object *o, const char *key, double lo, double hi, double *v);
enum jget jget_bool(const json_object *o, const char *key, bool *v);
/* A string, borrowed from o. */
enum jget jget_str(const json_object *o, const char *key, const char **v);
/* Any member of type t (json_type_object, json_type_array, ...), borrowed. */
enum jget jget_typed(const json_object *o, const char *key, json_type t, json_object **v);

/* A new JSON string holding the CPU list of s ("0-3,8"). */
json_object *cpuset_json(const struct cpuset *s);

#endif
