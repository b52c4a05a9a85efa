// SPDX-License-Identifier: GPL-2.0-or-later
/* gtopo.c - the guest's virtual LLCs from sysfs (see gtopo.h). */
#include "gtopo.h"

#include "fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read a small sysfs file into buf (newline stripped); -1 if absent. */
static int
read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* The shared_cpu_list of cpu's highest-level data/unified cache. */
static int
cpu_llc_list(const char *sys_root, int cpu, struct cpuset *out, int *level,
             struct llcd_err *err)
{
	char path[512], buf[4096];
	int best = 0;

	cpuset_zero(out);
	for (int i = 0; i < 16; i++) {
		int lvl;

		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%d/level",
		         sys_root, cpu, i);
		if (read_small(path, buf, sizeof(buf)) < 0)
			continue;
		lvl = atoi(buf);
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%d/type",
		         sys_root, cpu, i);
		if (read_small(path, buf, sizeof(buf)) == 0 && strcmp(buf, "Instruction") == 0)
			continue;
		if (lvl <= best)
			continue;
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
		         sys_root, cpu, i);
		int rc = llcd_read_cpulist(path, out, err);
		if (rc > 0)
			continue;
		if (rc < 0)
			return -1;
		best = lvl;
	}
	*level = best;
	return 0;
}

int
gtopo_read(struct gtopo *t, const char *sys_root, struct llcd_err *err)
{
	char path[512];
	int cpu;

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < CPUSET_MAX; i++)
		t->cpu_llc[i] = -1;
	t->max_cpu = -1;
	t->smt = 1;
	if (llcd_online_cpus(sys_root, &t->online, err) != 0)
		return -1;
	if (cpuset_empty(&t->online))
		return llcd_err_set(err, "%s/devices/system/cpu/online: no online CPU", sys_root);
	t->max_cpu = cpuset_last(&t->online);

	CPUSET_FOREACH(cpu, &t->online) {
		struct cpuset l;
		int level = 0, n;

		if (t->cpu_llc[cpu] >= 0)
			continue;
		if (cpu_llc_list(sys_root, cpu, &l, &level, err) < 0)
			return -1;
		cpuset_and(&l, &l, &t->online);
		if (!cpuset_isset(&l, cpu)) {   /* no cache info: one LLC of all */
			l = t->online;
			level = 0;
		}
		if (t->nllc >= GTOPO_MAX_LLC)
			return llcd_err_set(err, "more than %d LLCs", GTOPO_MAX_LLC);
		if (level > t->cache_level)
			t->cache_level = level;
		/* a CPU already placed keeps its LLC (inconsistent lists) */
		for (int c = cpuset_first(&l); c >= 0; c = cpuset_next(&l, c)) {
			if (t->cpu_llc[c] >= 0)
				cpuset_clr(&l, c);
		}
		CPUSET_FOREACH(n, &l)
			t->cpu_llc[n] = t->nllc;
		t->llc[t->nllc++] = l;
	}
	/* SMT width: the largest sibling list */
	CPUSET_FOREACH(cpu, &t->online) {
		struct cpuset sib;

		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology/thread_siblings_list",
		         sys_root, cpu);
		if (llcd_read_cpulist(path, &sib, NULL) == 0 && cpuset_count(&sib) > t->smt)
			t->smt = cpuset_count(&sib);
	}
	return 0;
}

int
gtopo_llc_of(const struct gtopo *t, int cpu)
{
	if (cpu < 0 || cpu >= CPUSET_MAX)
		return -1;
	return t->cpu_llc[cpu];
}
