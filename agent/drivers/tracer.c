// SPDX-License-Identifier: GPL-2.0-or-later
/* tracer.c - user-space half of llcd's in-kernel tracer (tracer.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "tracer.h"
#include "tracer_abi.h"
#include "tracer.skel.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

struct dom_user {
	bool used;
	uint32_t id;
	uint64_t prev_dropped;          /* domains[].dropped at the last drain */
	uint64_t dropped;               /* since the drain before the last */
	int first, n;                   /* its edges in t->out after a drain */
};

struct tracer {
	struct tracer_bpf *skel;
	struct tracer_slot *slots;      /* mmap of threads */
	struct tracer_domain *doms;     /* mmap of domains */
	size_t slots_len, doms_len;
	int edges_fd;
	struct dom_user du[TRACER_MAX_DOMAINS];
	uint32_t next_gen;
	int free_slot_hint, nthreads, ndomains;
	/* drain buffers */
	struct tracer_edge_key *keys;
	uint64_t *vals;
	struct tracer_edge *out;        /* sorted by domain, then count */
	int nout;
	struct tracer_stats st;
	bool irq_check;                 /* interrupt-context wakeups are told apart */
	bool added;                     /* a thread registered since the last refresh */
};

/* ---- libbpf's messages: the last warnings, for the reason on failure ---- */

static char bpf_msg[LLCD_ERR_MSG];

static int
capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static char line[65536];        /* a verifier log arrives as one message */
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' '))
		line[--n] = '\0';
	/* a verifier log: its last line before the statistics names the
	 * cause; else keep the first warning of a failure */
	if (strstr(line, "-- BEGIN PROG LOAD LOG --") != NULL) {
		const char *cause = NULL;
		char *save = NULL;
		for (char *l = strtok_r(line, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
			if (strncmp(l, "verification time", 17) == 0)
				break;
			/* skip instructions, register states, source lines */
			if ((l[0] >= '0' && l[0] <= '9') || l[0] == ';' || strncmp(l, "mark_precise", 12) == 0 ||
			    strstr(l, "PROG LOAD LOG") != NULL || strncmp(l, "func#", 5) == 0)
				continue;
			cause = l;
			break;
		}
		if (cause != NULL && bpf_msg[0] == '\0')
			snprintf(bpf_msg, sizeof(bpf_msg), "verifier: %.400s", cause);
		return 0;
	}
	/* libbpf's guess that RLIMIT_MEMLOCK is too low is no cause on a
	 * kernel that accounts BPF memory to the cgroup (5.11 and later),
	 * and it comes first when bpf() itself is refused: not kept */
	if (strstr(line, "RLIMIT_MEMLOCK") != NULL || strstr(line, "ulimit -l") != NULL)
		return 0;
	if (bpf_msg[0] == '\0' && n > 0)
		snprintf(bpf_msg, sizeof(bpf_msg), "%.400s", line);
	return 0;
}

/* Why the kernel says EPERM to bpf() although llcd has the capabilities
 * (tracer_unavailable() passed): the cause to name instead of libbpf's. */
static void
eperm_cause(char *buf, size_t len)
{
	char line[256], lock[128] = "";
	FILE *f = fopen("/proc/self/status", "re");
	bool filtered = false;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Seccomp:", 8) == 0)
			filtered = atoi(line + 8) == 2;
	if (f != NULL)
		fclose(f);
	if (filtered) {
		snprintf(buf, len, "the bpf() system call is refused with EPERM under a seccomp filter (Seccomp: 2 in "
		    "/proc/self/status): a unit's SystemCallFilter= must allow bpf (llcd.service does)");
		return;
	}
	if ((f = fopen("/sys/kernel/security/lockdown", "re")) != NULL) {
		if (fgets(lock, sizeof(lock), f) == NULL)
			lock[0] = '\0';
		fclose(f);
	}
	if (strstr(lock, "[confidentiality]") != NULL) {
		snprintf(buf, len, "the bpf() system call is refused with EPERM: kernel lockdown (confidentiality) forbids "
		    "reading kernel memory");
		return;
	}
	snprintf(buf, len, "the bpf() system call is refused with EPERM although llcd has CAP_BPF and CAP_PERFMON "
	    "(a security module?)");
}

static bool
have_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	return (d[cap / 32].effective & (1u << (cap % 32))) != 0;
}

const char *
tracer_unavailable(void)
{
	if (access(BTF_PATH, R_OK) != 0)
		return "the kernel has no BTF (" BTF_PATH " missing: CONFIG_DEBUG_INFO_BTF=n)";
	if (!have_cap(CAP_SYS_ADMIN) && !(have_cap(CAP_BPF) && have_cap(CAP_PERFMON)))
		return "llcd lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)";
	return NULL;
}

/* Offset of a per-CPU variable (or of one member of it) in the kernel's
 * .data..percpu section, from its BTF; -1 when not there. */
static long long
percpu_offset(const struct btf *btf, const char *var, const char *member)
{
	int sec = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const struct btf_type *st;
	const struct btf_var_secinfo *vi;

	if (sec < 0)
		return -1;
	st = btf__type_by_id(btf, (__u32)sec);
	vi = btf_var_secinfos(st);
	for (int i = 0; i < btf_vlen(st); i++, vi++) {
		const struct btf_type *vt = btf__type_by_id(btf, vi->type);
		if (vt == NULL || strcmp(btf__name_by_offset(btf, vt->name_off), var) != 0)
			continue;
		if (member == NULL)
			return vi->offset;
		const struct btf_type *t = btf__type_by_id(btf, vt->type);
		while (t != NULL && (btf_is_typedef(t) || btf_is_mod(t)))
			t = btf__type_by_id(btf, t->type);
		if (t == NULL || !btf_is_struct(t))
			return -1;
		const struct btf_member *m = btf_members(t);
		for (int k = 0; k < btf_vlen(t); k++, m++)
			if (strcmp(btf__name_by_offset(btf, m->name_off), member) == 0)
				return vi->offset + btf_member_bit_offset(t, (__u32)k) / 8;
		return -1;
	}
	return -1;
}

/* Where the preempt count is relative to the runqueue (tracer.bpf.c,
 * in_irq_context): __preempt_count (x86 before 6.2 and since 6.15) or
 * pcpu_hot.preempt_count (6.2 to 6.14). 0: not found. */
static long long
preempt_from_rq(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	long long rq, pc;

	if (btf == NULL)
		return 0;
	rq = percpu_offset(btf, "runqueues", NULL);
	pc = percpu_offset(btf, "__preempt_count", NULL);
	if (pc < 0)
		pc = percpu_offset(btf, "pcpu_hot", "preempt_count");
	btf__free(btf);
	if (rq < 0 || pc < 0 || pc == rq)
		return 0;
	return pc - rq;
}

static void *
map_mmap(struct bpf_map *m, size_t *len, struct llcd_err *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t vs = ((size_t)bpf_map__value_size(m) + 7) & ~(size_t)7;
	size_t n = vs * bpf_map__max_entries(m);
	void *p;

	n = (n + page - 1) / page * page;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED) {
		llcd_err_set(err, "tracer: mmap of map %s: %s", bpf_map__name(m), strerror(errno));
		return NULL;
	}
	*len = n;
	return p;
}

struct tracer *
tracer_new(struct llcd_err *err)
{
	const char *why = tracer_unavailable();
	libbpf_print_fn_t old;
	struct tracer *t;
	int rc;

	if (why != NULL) {
		llcd_err_set(err, "%s", why);
		return NULL;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		llcd_err_set(err, "tracer: out of memory");
		return NULL;
	}
	t->keys = calloc(TRACER_MAX_EDGES, sizeof(*t->keys));
	t->vals = calloc(TRACER_MAX_EDGES, sizeof(*t->vals));
	t->out = calloc(TRACER_MAX_EDGES, sizeof(*t->out));
	if (t->keys == NULL || t->vals == NULL || t->out == NULL) {
		llcd_err_set(err, "tracer: out of memory");
		goto fail;
	}
	bpf_msg[0] = '\0';
	old = libbpf_set_print(capture_print);
	t->skel = tracer_bpf__open();
	if (t->skel == NULL) {
		rc = -errno;
		libbpf_set_print(old);
		llcd_err_set(err, "tracer: opening the BPF object: %s%s%s", strerror(-rc),
		    bpf_msg[0] ? ": " : "", bpf_msg);
		goto fail;
	}
	t->skel->rodata->preempt_from_rq = preempt_from_rq();
	t->irq_check = t->skel->rodata->preempt_from_rq != 0;
	rc = tracer_bpf__load(t->skel);
	if (rc != 0) {
		libbpf_set_print(old);
		if (rc == -EPERM)
			eperm_cause(bpf_msg, sizeof(bpf_msg));
		llcd_err_set(err, "tracer: loading the BPF programs: %s%s%s", strerror(-rc),
		    bpf_msg[0] ? ": " : "", bpf_msg);
		goto fail;
	}
	rc = tracer_bpf__attach(t->skel);
	libbpf_set_print(old);
	if (rc != 0) {
		llcd_err_set(err, "tracer: attaching to the scheduler tracepoints: %s%s%s", strerror(-rc),
		    bpf_msg[0] ? ": " : "", bpf_msg);
		goto fail;
	}
	t->slots = map_mmap(t->skel->maps.threads, &t->slots_len, err);
	t->doms = map_mmap(t->skel->maps.domains, &t->doms_len, err);
	if (t->slots == NULL || t->doms == NULL)
		goto fail;
	t->edges_fd = bpf_map__fd(t->skel->maps.edges);
	t->next_gen = 1;
	return t;
fail:
	tracer_free(t);
	return NULL;
}

void
tracer_free(struct tracer *t)
{
	if (t == NULL)
		return;
	if (t->slots != NULL)
		munmap(t->slots, t->slots_len);
	if (t->doms != NULL)
		munmap(t->doms, t->doms_len);
	tracer_bpf__destroy(t->skel);
	free(t->keys);
	free(t->vals);
	free(t->out);
	free(t);
}

/* ---- registration ---------------------------------------------------------- */

int
tracer_domain_add(struct tracer *t, struct llcd_err *err)
{
	for (int i = 0; i < TRACER_MAX_DOMAINS; i++) {
		struct dom_user *u = &t->du[i];
		struct tracer_domain *d = &t->doms[i];
		if (u->used)
			continue;
		/* id: a generation above the index, never 0 */
		uint32_t id = (t->next_gen++ << 12) | (uint32_t)i;
		if (t->next_gen >= (1u << 20))
			t->next_gen = 1;
		d->inserted = d->drained = d->dropped = 0;
		__atomic_store_n(&d->id, id, __ATOMIC_RELEASE);
		memset(u, 0, sizeof(*u));
		u->used = true;
		u->id = id;
		t->ndomains++;
		return i;
	}
	t->st.domains_refused++;
	return llcd_err_set(err, "tracer: %d domains tracked already", TRACER_MAX_DOMAINS);
}

void
tracer_domain_remove(struct tracer *t, int dom)
{
	if (dom < 0 || dom >= TRACER_MAX_DOMAINS || !t->du[dom].used)
		return;
	for (int i = 0; i < TRACER_MAX_THREADS; i++)
		if (t->slots[i].tid != 0 && (int)t->slots[i].dom == dom)
			tracer_thread_remove(t, i);
	__atomic_store_n(&t->doms[dom].id, 0, __ATOMIC_RELEASE);
	t->du[dom].used = false;
	t->ndomains--;
}

int
tracer_thread_add(struct tracer *t, int dom, int tid, int vcpu, struct llcd_err *err)
{
	int s = -1;

	if (dom < 0 || dom >= TRACER_MAX_DOMAINS || !t->du[dom].used)
		return llcd_err_set(err, "tracer: no domain %d", dom);
	if (tid <= 0 || (unsigned)tid >= TRACER_TID_LIMIT)
		return llcd_err_set(err, "tracer: bad TID %d", tid);
	if (vcpu > 65535)
		return llcd_err_set(err, "tracer: vCPU %d out of range", vcpu);
	for (int k = 0; k < TRACER_MAX_THREADS; k++) {
		int i = (t->free_slot_hint + k) % TRACER_MAX_THREADS;
		if (t->slots[i].tid == 0) {
			s = i;
			break;
		}
	}
	if (s < 0) {
		t->st.threads_refused++;
		return llcd_err_set(err, "tracer: %d threads tracked already; TID %d is sampled from /proc",
		    TRACER_MAX_THREADS, tid);
	}
	struct tracer_slot *p = &t->slots[s];
	memset(p, 0, sizeof(*p));
	p->dom = (__u32)dom;
	p->dom_id = t->du[dom].id;
	p->vcpu = vcpu < 0 ? -1 : vcpu;
	p->last_cpu = -1;
	__atomic_store_n(&p->tid, (__u32)tid, __ATOMIC_RELEASE);
	__u16 *ts = &t->skel->bss->tid_slot[tid];
	__u16 none = 0;
	if (!__atomic_compare_exchange_n(ts, &none, (__u16)(s + 1), false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
		p->tid = 0;
		return llcd_err_set(err, "tracer: TID %d is tracked already", tid);
	}
	__atomic_fetch_or(&t->skel->bss->tid_bits[tid >> 6], 1ull << (tid & 63), __ATOMIC_RELEASE);
	t->free_slot_hint = (s + 1) % TRACER_MAX_THREADS;
	t->nthreads++;
	t->added = true;
	if ((__u32)s + 1 > t->skel->bss->nslots)
		t->skel->bss->nslots = (__u32)s + 1;
	return s;
}

void
tracer_thread_remove(struct tracer *t, int slot)
{
	struct tracer_slot *p;
	__u32 key;

	if (slot < 0 || slot >= TRACER_MAX_THREADS || t->slots[slot].tid == 0)
		return;
	p = &t->slots[slot];
	key = p->tid;
	/* clear the TID only if it still points here (an exited thread's TID
	 * may have been registered again, to another slot) */
	__u16 mine = (__u16)(slot + 1);
	if (key < TRACER_TID_LIMIT &&
	    __atomic_compare_exchange_n(&t->skel->bss->tid_slot[key], &mine, 0, false, __ATOMIC_RELEASE,
	        __ATOMIC_RELAXED))
		__atomic_fetch_and(&t->skel->bss->tid_bits[key >> 6], ~(1ull << (key & 63)), __ATOMIC_RELEASE);
	__atomic_store_n(&p->tid, 0, __ATOMIC_RELEASE);
	t->nthreads--;
}

/* ---- reading ----------------------------------------------------------------- */

int
tracer_thread_read(const struct tracer *t, int slot, struct tracer_sample *out)
{
	const struct tracer_slot *p;
	uint32_t s1, s2;
	int tries = 0;

	if (slot < 0 || slot >= TRACER_MAX_THREADS || t->slots[slot].tid == 0)
		return -1;
	p = &t->slots[slot];
	do {
		s1 = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
		out->runtime_ns = __atomic_load_n(&p->runtime_ns, __ATOMIC_RELAXED);
		out->delay_ns = __atomic_load_n(&p->delay_ns, __ATOMIC_RELAXED);
		out->last_cpu = __atomic_load_n(&p->last_cpu, __ATOMIC_RELAXED);
		out->exited = __atomic_load_n(&p->exited, __ATOMIC_RELAXED) != 0;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
	} while ((s1 != s2 || (s1 & 1)) && ++tries < 100);
	return 0;
}

bool
tracer_stale(const struct tracer *t)
{
	return t->added;
}

int
tracer_refresh(struct tracer *t, struct llcd_err *err)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);

	/* one run of the syscall program: every slot in use, its task
	 * looked up by TID, the kernel's counters copied */
	if (bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.llcd_sample), &o) < 0)
		return llcd_err_set(err, "tracer: running the sampling program: %s", strerror(errno));
	t->st.refreshes++;
	t->added = false;
	return 0;
}

struct sortrec {
	int dom;
	struct tracer_edge e;
};

static int
sortrec_cmp(const void *a, const void *b)
{
	const struct sortrec *x = a, *y = b;

	if (x->dom != y->dom)
		return x->dom < y->dom ? -1 : 1;
	if (x->e.count != y->e.count)
		return x->e.count > y->e.count ? -1 : 1;
	if (x->e.waker != y->e.waker)
		return x->e.waker < y->e.waker ? -1 : 1;
	return x->e.wakee < y->e.wakee ? -1 : (x->e.wakee > y->e.wakee);
}

int
tracer_drain_edges(struct tracer *t, struct llcd_err *err)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t in_batch = 0, out_batch = 0;
	bool first = true;
	int n = 0;

	for (;;) {
		__u32 count = (__u32)(TRACER_MAX_EDGES - n);
		int rc;
		if (count == 0)
			break;
		rc = bpf_map_lookup_and_delete_batch(t->edges_fd, first ? NULL : &in_batch, &out_batch,
		    t->keys + n, t->vals + n, &count, &opts);
		t->st.drain_syscalls++;
		if (rc != 0 && errno != ENOENT)
			return llcd_err_set(err, "tracer: draining the wakeup edges: %s", strerror(errno));
		n += (int)count;
		if (rc != 0)            /* ENOENT: the whole map was walked */
			break;
		in_batch = out_batch;
		first = false;
	}
	t->st.drains++;
	struct sortrec *tmp = malloc(sizeof(*tmp) * (size_t)(n > 0 ? n : 1));
	if (tmp == NULL)
		return llcd_err_set(err, "tracer: out of memory");
	int m = 0;
	for (int i = 0; i < n; i++) {
		int d = (int)(t->keys[i].dom_id & (TRACER_MAX_DOMAINS - 1));
		if (!t->du[d].used || t->du[d].id != t->keys[i].dom_id)
			continue;       /* a removed domain's */
		tmp[m].dom = d;
		tmp[m].e.waker = t->keys[i].waker;
		tmp[m].e.wakee = t->keys[i].wakee;
		tmp[m].e.count = t->vals[i];
		m++;
	}
	qsort(tmp, (size_t)m, sizeof(*tmp), sortrec_cmp);
	for (int d = 0; d < TRACER_MAX_DOMAINS; d++) {
		struct dom_user *u = &t->du[d];
		u->first = u->n = 0;
		if (!u->used)
			continue;
		uint64_t dr = __atomic_load_n(&t->doms[d].dropped, __ATOMIC_RELAXED);
		u->dropped = dr - u->prev_dropped;
		u->prev_dropped = dr;
		t->st.edges_dropped += u->dropped;
	}
	for (int i = 0; i < m; i++) {
		struct dom_user *u = &t->du[tmp[i].dom];
		if (u->n == 0)
			u->first = i;
		u->n++;
		t->out[i] = tmp[i].e;
	}
	for (int d = 0; d < TRACER_MAX_DOMAINS; d++)
		if (t->du[d].used && t->du[d].n > 0)
			__atomic_fetch_add(&t->doms[d].drained, (uint64_t)t->du[d].n, __ATOMIC_RELEASE);
	t->nout = m;
	free(tmp);
	return m;
}

int
tracer_domain_edges(const struct tracer *t, int dom, const struct tracer_edge **edges,
    uint64_t *dropped)
{
	if (dom < 0 || dom >= TRACER_MAX_DOMAINS || !t->du[dom].used) {
		*edges = NULL;
		if (dropped != NULL)
			*dropped = 0;
		return 0;
	}
	*edges = t->out + t->du[dom].first;
	if (dropped != NULL)
		*dropped = t->du[dom].dropped;
	return t->du[dom].n;
}

bool
tracer_irq_check(const struct tracer *t)
{
	return t->irq_check;
}

void
tracer_stats(const struct tracer *t, struct tracer_stats *st)
{
	*st = t->st;
	st->copied = t->skel->bss->copied;
	st->threads = t->nthreads;
	st->domains = t->ndomains;
}

int
tracer_prog_stats(const struct tracer *t, struct tracer_prog_stats *out, struct llcd_err *err)
{
	struct bpf_program *progs[3] = {
		t->skel->progs.llcd_sample, t->skel->progs.llcd_waking, t->skel->progs.llcd_exit,
	};

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 3; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len) != 0)
			return llcd_err_set(err, "tracer: program info: %s", strerror(errno));
		out->prog[i].name = bpf_program__name(progs[i]);
		out->prog[i].run_time_ns = info.run_time_ns;
		out->prog[i].run_cnt = info.run_cnt;
		out->run_time_ns += info.run_time_ns;
		out->run_cnt += info.run_cnt;
	}
	out->nprogs = 3;
	return 0;
}
