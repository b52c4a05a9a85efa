// SPDX-License-Identifier: GPL-2.0-or-later
/* qmp_cpus.c - typed helpers: query-cpus-fast and query-hotpluggable-cpus. */
#include "qmp.h"
#include "alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"

#define CPUS_MAX 65536          /* more vCPU entries than any QEMU allows */
#define ID_MAX 1000000          /* bound on any topology id or cpu-index */

LLCD_DEFINE_NEW(qmp_cpus_new, struct qmp_cpus)

void
qmp_cpus_free(struct qmp_cpus *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->cpu[i].qom_path);
		free(c->cpu[i].target);
	}
	free(c->cpu);
	free(c);
}

LLCD_DEFINE_NEW(qmp_hotcpus_new, struct qmp_hotcpus)

void
qmp_hotcpus_free(struct qmp_hotcpus *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->cpu[i].type);
		free(c->cpu[i].qom_path);
	}
	free(c->cpu);
	free(c);
}

/* Member key of o as an integer in [lo, hi]: 1 found, 0 absent, -1 error. */
static int
member_int(struct json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *v,
           const char *what, size_t idx, struct llcd_err *err)
{
	switch (jget_int(o, key, lo, hi, v)) {
	case JGET_OK:
		return 1;
	case JGET_ABSENT:
		return 0;
	case JGET_RANGE:
		return llcd_err_set(err, "%s[%zu]: \"%s\" %lld out of range %lld-%lld", what, idx,
		                    key, (long long)*v, (long long)lo, (long long)hi);
	default:
		return llcd_err_set(err, "%s[%zu]: \"%s\" is not an integer", what, idx, key);
	}
}

/* Member key as a fresh string: 1 found, 0 absent, -1 error. */
static int
member_str(struct json_object *o, const char *key, char **s, const char *what, size_t idx,
           struct llcd_err *err)
{
	const char *v;
	enum jget r = jget_str(o, key, &v);

	if (r == JGET_ABSENT)
		return 0;
	if (r != JGET_OK)
		return llcd_err_set(err, "%s[%zu]: \"%s\" is not a string", what, idx, key);
	*s = strdup(v);
	if (*s == NULL)
		return llcd_err_set(err, "out of memory");
	return 1;
}

/* A required member: 0 found, -1 absent ("no \"key\"") or invalid. */
static int
need_int(struct json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *v,
         const char *what, size_t idx, struct llcd_err *err)
{
	int r = member_int(o, key, lo, hi, v, what, idx, err);

	if (r == 0)
		llcd_err_set(err, "%s[%zu]: no \"%s\"", what, idx, key);
	return r == 1 ? 0 : -1;
}

static int
need_str(struct json_object *o, const char *key, char **s, const char *what, size_t idx,
         struct llcd_err *err)
{
	int r = member_str(o, key, s, what, idx, err);

	if (r == 0)
		llcd_err_set(err, "%s[%zu]: no \"%s\"", what, idx, key);
	return r == 1 ? 0 : -1;
}

static int
parse_props(struct json_object *e, struct qmp_cpu_props *p, const char *what, size_t idx,
            struct llcd_err *err)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "node-id", offsetof(struct qmp_cpu_props, node_id) },
		{ "socket-id", offsetof(struct qmp_cpu_props, socket_id) },
		{ "die-id", offsetof(struct qmp_cpu_props, die_id) },
		{ "cluster-id", offsetof(struct qmp_cpu_props, cluster_id) },
		{ "core-id", offsetof(struct qmp_cpu_props, core_id) },
		{ "thread-id", offsetof(struct qmp_cpu_props, thread_id) },
	};
	struct json_object *props;
	enum jget r;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		*(int *)((char *)p + keys[i].off) = -1;
	r = jget_typed(e, "props", json_type_object, &props);
	if (r == JGET_ABSENT)
		return 0;
	if (r != JGET_OK)
		return llcd_err_set(err, "%s[%zu]: \"props\" is not an object", what, idx);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int64_t v;
		int got = member_int(props, keys[i].key, 0, ID_MAX, &v, what, idx, err);

		if (got == -1)
			return llcd_err_prefix(err, "props");
		if (got == 1)
			*(int *)((char *)p + keys[i].off) = (int)v;
	}
	return 0;
}

/* RET must be an array of at most CPUS_MAX objects. *arr gets one zeroed
 * element of SIZE bytes per member, and parse() fills element i from member
 * i; *n counts the elements parse() has been given, which the caller's free
 * function releases, also after a failure. */
static int
parse_array(struct json_object *ret, const char *what, void **arr, size_t size, size_t *n,
            int (*parse)(struct json_object *e, void *elem, const char *what, size_t i,
                         struct llcd_err *err),
            struct llcd_err *err)
{
	size_t len;

	if (!json_object_is_type(ret, json_type_array))
		return llcd_err_set(err, "%s: reply is not an array", what);
	len = json_object_array_length(ret);
	if (len > CPUS_MAX)
		return llcd_err_set(err, "%s: %zu entries, more than %d", what, len, CPUS_MAX);
	if (len > 0 && (*arr = calloc(len, size)) == NULL)
		return llcd_err_set(err, "out of memory");
	for (size_t i = 0; i < len; i++) {
		struct json_object *e = json_object_array_get_idx(ret, i);

		*n = i + 1;
		if (!json_object_is_type(e, json_type_object))
			return llcd_err_set(err, "%s[%zu]: not an object", what, i);
		if (parse(e, (char *)*arr + i * size, what, i, err) == -1)
			return -1;
	}
	return 0;
}

static int
parse_cpu(struct json_object *e, void *elem, const char *what, size_t i, struct llcd_err *err)
{
	struct qmp_cpu *cpu = elem;
	int64_t v;

	if (need_int(e, "cpu-index", 0, ID_MAX, &v, what, i, err) == -1)
		return -1;
	cpu->cpu_index = (int)v;
	if (need_int(e, "thread-id", 1, INT32_MAX, &v, what, i, err) == -1)
		return -1;
	cpu->tid = (pid_t)v;
	if (parse_props(e, &cpu->props, what, i, err) == -1 ||
	    member_str(e, "qom-path", &cpu->qom_path, what, i, err) == -1 ||
	    member_str(e, "target", &cpu->target, what, i, err) == -1)
		return -1;
	return 0;
}

int
qmp_cpus_parse(struct json_object *ret, struct qmp_cpus **out, struct llcd_err *err)
{
	struct qmp_cpus *c = qmp_cpus_new();

	*out = NULL;
	if (c == NULL)
		return llcd_err_set(err, "out of memory");
	if (parse_array(ret, "query-cpus-fast", (void **)&c->cpu, sizeof(c->cpu[0]), &c->n,
	    parse_cpu, err) == -1) {
		qmp_cpus_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

static int
parse_hotcpu(struct json_object *e, void *elem, const char *what, size_t i, struct llcd_err *err)
{
	struct qmp_hotcpu *cpu = elem;
	int64_t v;

	if (need_str(e, "type", &cpu->type, what, i, err) == -1 ||
	    need_int(e, "vcpus-count", 1, ID_MAX, &v, what, i, err) == -1)
		return -1;
	cpu->vcpus_count = (int)v;
	if (parse_props(e, &cpu->props, what, i, err) == -1 ||
	    member_str(e, "qom-path", &cpu->qom_path, what, i, err) == -1)
		return -1;
	return 0;
}

int
qmp_hotcpus_parse(struct json_object *ret, struct qmp_hotcpus **out, struct llcd_err *err)
{
	struct qmp_hotcpus *c = qmp_hotcpus_new();

	*out = NULL;
	if (c == NULL)
		return llcd_err_set(err, "out of memory");
	if (parse_array(ret, "query-hotpluggable-cpus", (void **)&c->cpu, sizeof(c->cpu[0]),
	    &c->n, parse_hotcpu, err) == -1) {
		qmp_hotcpus_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

enum qmp_rc
qmp_query_cpus_fast(struct qmp *q, int timeout_ms, struct qmp_cpus **out,
                    struct llcd_err *err)
{
	struct json_object *ret;
	enum qmp_rc rc;

	*out = NULL;
	rc = qmp_execute(q, "query-cpus-fast", NULL, timeout_ms, &ret, err);
	if (rc == QMP_OK && qmp_cpus_parse(ret, out, err) == -1)
		rc = QMP_ERR_REPLY;
	json_object_put(ret);
	return rc;
}

enum qmp_rc
qmp_query_hotpluggable_cpus(struct qmp *q, int timeout_ms, struct qmp_hotcpus **out,
                            struct llcd_err *err)
{
	struct json_object *ret;
	enum qmp_rc rc;

	*out = NULL;
	rc = qmp_execute(q, "query-hotpluggable-cpus", NULL, timeout_ms, &ret, err);
	if (rc == QMP_OK && qmp_hotcpus_parse(ret, out, err) == -1)
		rc = QMP_ERR_REPLY;
	json_object_put(ret);
	return rc;
}
