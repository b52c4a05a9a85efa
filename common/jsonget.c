// SPDX-License-Identifier: GPL-2.0-or-later
/* jsonget.c - bounded json-c member getters, cpuset as JSON. */
#include "jsonget.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

/* The member key of o: JGET_OK with *x set, JGET_ABSENT or JGET_NULL. */
static enum jget
member(const json_object *o, const char *key, json_object **x)
{
	if (o == NULL || !json_object_object_get_ex(o, key, x))
		return JGET_ABSENT;
	return *x == NULL ? JGET_NULL : JGET_OK;
}

enum jget
jget_typed(const json_object *o, const char *key, json_type t, json_object **v)
{
	json_object *x;
	enum jget r = member(o, key, &x);

	if (r != JGET_OK)
		return r;
	if (!json_object_is_type(x, t))
		return JGET_TYPE;
	*v = x;
	return JGET_OK;
}

enum jget
jget_int(const json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *v)
{
	json_object *x;
	enum jget r = jget_typed(o, key, json_type_int, &x);

	if (r != JGET_OK)
		return r;
	errno = 0;
	*v = json_object_get_int64(x);
	return errno == 0 && *v >= lo && *v <= hi ? JGET_OK : JGET_RANGE;
}

enum jget
jget_num(const json_object *o, const char *key, double lo, double hi, double *v)
{
	json_object *x;
	enum jget r = jget_typed(o, key, json_type_double, &x);

	if (r == JGET_TYPE)             /* an integer is a number too */
		r = jget_typed(o, key, json_type_int, &x);
	if (r != JGET_OK)
		return r;
	*v = json_object_get_double(x);
	return isfinite(*v) && *v >= lo && *v <= hi ? JGET_OK : JGET_RANGE;
}

enum jget
jget_bool(const json_object *o, const char *key, bool *v)
{
	json_object *x;
	enum jget r = jget_typed(o, key, json_type_boolean, &x);

	if (r == JGET_OK)
		*v = json_object_get_boolean(x);
	return r;
}

enum jget
jget_str(const json_object *o, const char *key, const char **v)
{
	json_object *x;
	enum jget r = jget_typed(o, key, json_type_string, &x);

	if (r == JGET_OK)
		*v = json_object_get_string(x);
	return r;
}

json_object *
cpuset_json(const struct cpuset *s)
{
	/* the longest list of CPUSET_MAX CPUs ("0,2,4,...,2046") fits */
	char buf[CPUSET_MAX * 5];

	if (cpuset_format(s, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "(%d CPUs)", cpuset_count(s));
	return json_object_new_string(buf);
}
