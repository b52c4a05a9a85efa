// SPDX-License-Identifier: GPL-2.0-or-later
/* apply.c - the live back-end's apply(): pins through libvirt (or
 * sched_setaffinity without it), failures classed and backed off, and
 * core-scheduling cookies for isolated domains. */
#include "live_int.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "procstat.h"

#define TRANSIENT_STREAK 3              /* periods in a row before backing off */
#define BACKOFF_MAX_PERIODS 64

static enum agent_result
to_agent(enum virt_result r)
{
	switch (r) {
	case VIRT_OK: return AGENT_OK;
	case VIRT_TRANSIENT: return AGENT_TRANSIENT;
	case VIRT_GONE: return AGENT_GONE;
	case VIRT_PERMANENT: return AGENT_PERMANENT;
	}
	return AGENT_PERMANENT;
}

static void
set_error(struct ldom *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
set_error(struct ldom *d, const char *fmt, ...)
{
	char buf[LLCD_ERR_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ldom_str_set(&d->error_msg, sizeof(buf), "%s", buf);
	d->failed = true;
}

void
live_note_result(struct live *l, struct ldom *d, enum agent_result r, const char *msg)
{
	switch (r) {
	case AGENT_OK:
		l->st.pins_ok++;
		d->transient_streak = 0;
		d->backoff_until = 0;
		break;
	case AGENT_TRANSIENT:
		l->st.pins_transient++;
		if (d->last_transient_period == l->period)
			break;
		/* in a row: the period after the last failure, or the first one
		 * after a back-off */
		d->transient_streak = d->last_transient_period + 1 == l->period ||
		    (d->backoff_until != 0 && l->period == d->backoff_until) ? d->transient_streak + 1 : 1;
		d->last_transient_period = l->period;
		if (d->transient_streak >= TRANSIENT_STREAK) {
			int sh = d->transient_streak - TRANSIENT_STREAK + 1;
			uint64_t n = sh >= 6 ? BACKOFF_MAX_PERIODS : (uint64_t)1 << sh;
			d->backoff_until = l->period + 1 + n;
			log_dom(LOG_WARNING, d->name, -1, 0, "%d periods in a row with transient failures (%s): "
			    "no pinning for %llu periods", d->transient_streak, msg, (unsigned long long)n);
		}
		break;
	case AGENT_GONE:
		l->st.pins_gone++;
		d->todo |= LDOM_TODO_DISCOVER;
		break;
	case AGENT_PERMANENT:
		l->st.pins_permanent++;
		if (!d->failed)
			set_error(d, "%s", msg);
		break;
	}
}

/* libvirt's live pins of the domain, read once per period (only asked
 * where the kernel already agrees with the plan). */
static bool
libvirt_pins(struct live *l, struct ldom *d)
{
	struct llcd_err e;

	if (d->lv.period == l->period)
		return d->lv.ok;
	d->lv.period = l->period;
	d->lv.ok = false;
	if (d->lv.cap < d->maxvcpus) {
		struct cpuset *p = realloc(d->lv.pins, sizeof(*p) * (size_t)d->maxvcpus);
		if (p == NULL)
			return false;
		d->lv.pins = p;
		d->lv.cap = d->maxvcpus;
	}
	if (virt_get_pins(ldom_virt(d), d->uuid, d->lv.pins, d->lv.cap, &d->lv.n, &d->lv.emu, &e) != VIRT_OK) {
		log_dom(LOG_DEBUG, d->name, -1, 0, "libvirt's pins: %s", e.msg);
		return false;
	}
	d->lv.ok = true;
	return true;
}

/* The reaction to the started event: the first and last pin (or pin found
 * in place) after it. */
static void
react_note(struct live *l, struct ldom *d, bool call, bool vcpu)
{
	if (call)
		l->st.pin_calls++;
	else
		l->st.pins_in_place++;
	if (d->react.started_ns == 0)
		return;
	if (call)
		d->react.calls++;
	else
		d->react.kept++;
	if (d->react.act_period == 0)
		d->react.act_period = l->period;
	if (vcpu) {
		d->react.last_ns = llcd_mono_ns();
		if (d->react.first_ns == 0)
			d->react.first_ns = d->react.last_ns;
	}
}

/* Whether vCPU v is on cpus already, for the kernel (a fresh read) and
 * for libvirt: e.g. pinned at start from <cputune><vcpupin> of the
 * persistent definition (llcctl topology --apply wrote it). */
static bool
vcpu_in_place(struct live *l, struct ldom *d, int v, const struct cpuset *cpus)
{
	struct cpuset now;
	struct llcd_err e;

	if (d->v[v].tid <= 0 || procstat_affinity(d->v[v].tid, &now, &e) != PROCSTAT_OK || !cpuset_equal(&now, cpus))
		return false;
	return libvirt_pins(l, d) && v < d->lv.n && cpuset_equal(&d->lv.pins[v], cpus);
}

/* A thread's kernel affinity set to cpus: 0, or the errno. */
static int
set_affinity(int tid, const struct cpuset *cpus)
{
	cpu_set_t *set = CPU_ALLOC(CPUSET_MAX);
	size_t sz = CPU_ALLOC_SIZE(CPUSET_MAX);
	int cpu, rc = 0;

	if (set == NULL)
		return ENOMEM;
	CPU_ZERO_S(sz, set);
	CPUSET_FOREACH(cpu, cpus)
		CPU_SET_S((size_t)cpu, sz, set);
	if (tid <= 0)
		rc = ESRCH;
	else if (sched_setaffinity(tid, sz, set) < 0)
		rc = errno;
	CPU_FREE(set);
	return rc;
}

/* Whether d is being placed from its started event: the period that
 * observed it after the event, until the period of its first pin ends. */
static bool
reacting(const struct live *l, const struct ldom *d)
{
	return d->react.started_ns != 0 && (d->react.act_period == 0 || d->react.act_period == l->period);
}

static enum agent_result
pin_vcpu(struct live *l, struct ldom *d, int v, const struct cpuset *cpus, struct llcd_err *err)
{
	struct lvcpu *c = &d->v[v];
	enum agent_result r;
	int en;

	if (l->cfg.dry_run) {
		r = AGENT_OK;
	} else if (ldom_virt(d) != NULL && vcpu_in_place(l, d, v, cpus)) {
		char buf[256];
		cpuset_format(cpus, buf, sizeof(buf));
		log_dom(LOG_DEBUG, d->name, v, c->tid, "on %s already (kernel and libvirt): no pin call", buf);
		react_note(l, d, false, true);
		r = AGENT_OK;
	} else if (ldom_virt(d) != NULL && reacting(l, d) && set_affinity(c->tid, cpus) == 0) {
		/* a domain placed from its started event: the thread on its
		 * CPUs now (libvirt's pin call takes milliseconds each, one
		 * vCPU at a time, in libvirtd), libvirt told after the whole
		 * plan (live_applied: its cgroup and its record); where the
		 * kernel refuses (the vCPU's cpuset cgroup does not hold the
		 * CPUs) libvirt is called at once, as below */
		react_note(l, d, true, true);
		if (!c->lv_owed) {
			c->lv_owed = true;
			d->lv.owed++;
		}
		r = AGENT_OK;
	} else if (ldom_virt(d) != NULL) {
		r = to_agent(virt_pin_vcpu(ldom_virt(d), d->uuid, d->name, v, c->tid, cpus, err));
		react_note(l, d, true, true);
		if (r == AGENT_OK && d->lv.ok && v < d->lv.n)
			d->lv.pins[v] = *cpus;
		if (r == AGENT_OK && c->lv_owed) {
			c->lv_owed = false;
			d->lv.owed--;
		}
	} else {
		/* no libvirt (live_add_process): the thread directly */
		r = d->ext ? live_ext_cgroup(l, d, cpus, err) : AGENT_OK;
		if (r != AGENT_OK)
			;       /* the cgroup would not allow it (err says why) */
		else if ((en = set_affinity(c->tid, cpus)) != 0) {
			llcd_err_set(err, "sched_setaffinity: %s", strerror(en));
			r = en == ESRCH ? AGENT_GONE : en == ENOMEM ? AGENT_TRANSIENT : AGENT_PERMANENT;
		}
	}
	if (r == AGENT_OK) {
		lvcpu_set(d, &c->applied, cpus);
		c->hotplugged = false;
		lvcpu_set(d, &c->affinity, cpus);
		d->touched = true;
		l->state_dirty = true;
	}
	return r;
}

/* After the plan: libvirt told of the vCPU pins made directly for domains
 * placed from their started event (pin_vcpu), one pin call each, as if
 * they had been made through it. A transient failure is tried again after
 * the next step; a vCPU gone or a permanent failure is counted and
 * classed like a failed pin (the thread stays where it was put). */
void
live_applied(void *ctx)
{
	struct live *l = ctx;
	struct llcd_err e;

	for (int i = 0; i < l->ndoms; i++) {
		struct ldom *d = l->doms[i];
		if (d->lv.owed == 0 || ldom_virt(d) == NULL)
			continue;
		for (int v = 0; v < d->nvcpus && d->lv.owed > 0; v++) {
			struct lvcpu *c = &d->v[v];
			if (!c->lv_owed)
				continue;
			enum agent_result r = to_agent(virt_pin_vcpu(ldom_virt(d), d->uuid, d->name, v, c->tid,
			    c->applied, &e));
			if (r == AGENT_TRANSIENT) {
				log_dom(LOG_DEBUG, d->name, v, c->tid, "libvirt not told of the pin yet: %s", e.msg);
				live_note_result(l, d, r, e.msg);
				continue;
			}
			c->lv_owed = false;
			d->lv.owed--;
			if (r == AGENT_OK) {
				if (d->lv.ok && v < d->lv.n)
					d->lv.pins[v] = *c->applied;
			} else {
				log_dom(LOG_WARNING, d->name, v, c->tid, "pinned, but libvirt was not told: %s", e.msg);
				live_note_result(l, d, r, e.msg);
			}
		}
		if (d->lv.owed == 0 && d->react.started_ns != 0)
			d->react.told_ns = llcd_mono_ns();
	}
}

enum agent_result
live_pin_emulator(struct live *l, struct ldom *d, const struct cpuset *cpus, bool *called,
    struct llcd_err *err)
{
	enum agent_result r = AGENT_OK;
	struct cpuset now;
	struct llcd_err e;

	*called = true;
	/* after a restart the engine re-sends the emulator pin it cannot
	 * observe; where llcd left it (or libvirt put it at start, from
	 * <emulatorpin>) and the kernel agrees, do not call */
	if (d->pid > 0 && procstat_affinity(d->pid, &now, &e) == PROCSTAT_OK && cpuset_equal(&now, cpus) &&
	    (cpuset_equal(&d->emu_applied, cpus) ||
	     (!l->cfg.dry_run && ldom_virt(d) != NULL && libvirt_pins(l, d) && cpuset_equal(&d->lv.emu, cpus)))) {
		log_dom(LOG_DEBUG, d->name, -1, d->pid, "emulator threads already on the wanted CPUs");
		*called = false;
		if (!l->cfg.dry_run && ldom_virt(d) != NULL)
			react_note(l, d, false, false);
		if (!cpuset_equal(&d->emu_applied, cpus)) {
			d->emu_applied = *cpus;
			l->state_dirty = true;
		}
		cpuset_zero(&d->emu_pending);
		return AGENT_OK;
	}
	if (!l->cfg.dry_run && ldom_virt(d) != NULL) {
		r = to_agent(virt_pin_emulator(ldom_virt(d), d->uuid, d->name, cpus, err));
		react_note(l, d, true, false);
		if (r == AGENT_OK && d->lv.ok)
			d->lv.emu = *cpus;
	} else if (!l->cfg.dry_run && d->ext) {
		r = live_ext_pin_emulator(l, d, cpus, err);
	}
	if (r == AGENT_OK) {
		d->emu_applied = *cpus;
		cpuset_zero(&d->emu_pending);
		l->state_dirty = true;
	} else if (r == AGENT_TRANSIENT) {
		/* the engine cannot observe emulator pins and does not send
		 * this one again: the back-end retries it, once per period */
		d->emu_pending = *cpus;
	}
	return r;
}

static enum agent_result
worse(enum agent_result a, enum agent_result b)
{
	static const int rank[] = { [AGENT_OK] = 0, [AGENT_TRANSIENT] = 1, [AGENT_PERMANENT] = 2, [AGENT_GONE] = 3 };
	return rank[b] > rank[a] ? b : a;
}

enum agent_result
live_apply(void *ctx, const struct policy_action *a, struct llcd_err *err)
{
	struct live *l = ctx;
	struct ldom *d = ldom_by_key(l, a->key);
	enum agent_result r = AGENT_OK;
	char buf[256];

	if (d == NULL) {
		llcd_err_set(err, "no running domain with key %016llx", (unsigned long long)a->key);
		return AGENT_GONE;
	}
	switch (a->type) {
	case POLICY_ACT_PIN_VCPU:
	case POLICY_ACT_PIN_EMULATOR:
	case POLICY_ACT_RELEASE:
		if (l->period < d->backoff_until) {
			l->st.backoff_skips++;
			llcd_err_set(err, "domain %s: backing off after %d periods of transient failures", d->name,
			    d->transient_streak);
			return AGENT_TRANSIENT;
		}
		break;
	default:
		break;
	}
	if (a->type <= POLICY_ACT_RELEASE && (r = live_bound_check(l, d, &a->cpus, err)) != AGENT_OK) {
		live_note_result(l, d, r, err->msg);
		return r;       /* never a pin outside the domain's CPU bound */
	}
	if (a->type == POLICY_ACT_PIN_VCPU || a->type == POLICY_ACT_PIN_EMULATOR)
		d->touched = true;      /* from now on report the real affinity, so
		                         * that a failed pin is planned again */
	switch (a->type) {
	case POLICY_ACT_PIN_VCPU:
		if (a->vcpu < 0 || a->vcpu >= d->nvcpus) {
			llcd_err_set(err, "domain %s has no vCPU %d (%d online)", d->name, a->vcpu, d->nvcpus);
			r = AGENT_PERMANENT;
			break;
		}
		r = pin_vcpu(l, d, a->vcpu, &a->cpus, err);
		if (r == AGENT_OK) {
			cpuset_format(&a->cpus, buf, sizeof(buf));
			log_dom(LOG_INFO, d->name, a->vcpu, d->v[a->vcpu].tid, "pinned to %s: %s", buf, a->reason);
		}
		break;
	case POLICY_ACT_PIN_EMULATOR: {
		bool called;
		r = live_pin_emulator(l, d, &a->cpus, &called, err);
		if (r == AGENT_OK && called) {
			cpuset_format(&a->cpus, buf, sizeof(buf));
			log_dom(LOG_INFO, d->name, -1, 0, "emulator threads pinned to %s: %s", buf, a->reason);
		}
		break;
	}
	case POLICY_ACT_RELEASE: {
		struct llcd_err one;
		one.msg[0] = '\0';
		for (int v = 0; v < d->nvcpus; v++) {
			enum agent_result rv = pin_vcpu(l, d, v, &a->cpus, &one);
			if (rv != AGENT_OK && r == AGENT_OK)
				llcd_err_set(err, "vcpu %d: %s", v, one.msg);
			r = worse(r, rv);
		}
		bool called;
		enum agent_result re = live_pin_emulator(l, d, &a->cpus, &called, &one);
		if (re == AGENT_TRANSIENT)
			cpuset_zero(&d->emu_pending);   /* RELEASE is planned again */
		if (re != AGENT_OK && r == AGENT_OK)
			llcd_err_set(err, "emulator: %s", one.msg);
		r = worse(r, re);
		if (r == AGENT_OK) {
			/* released: llcd no longer holds these pins */
			for (int v = 0; v < d->maxvcpus; v++)
				lvcpu_clear(d, &d->v[v].applied);
			cpuset_zero(&d->emu_applied);
			d->touched = false;
			cpuset_format(&a->cpus, buf, sizeof(buf));
			log_dom(LOG_INFO, d->name, -1, 0, "released to %s: %s", buf, a->reason);
		}
		break;
	}
	case POLICY_ACT_REFUSE:
		if (d->refuse_msg == NULL || strcmp(d->refuse_msg, a->reason) != 0)
			log_dom(LOG_WARNING, d->name, -1, 0, "not placed: %s", a->reason);
		ldom_str_set(&d->refuse_msg, POLICY_REASON, "%s", a->reason);
		if (d->state == LDOM_MANAGED)
			d->state = LDOM_REFUSED;
		return AGENT_OK;
	case POLICY_ACT_PREFER:
		log_dom(LOG_DEBUG, d->name, -1, 0, "%s", a->reason);
		return AGENT_OK;
	case POLICY_ACT_BACKOFF:
		log_dom(LOG_INFO, d->name, -1, 0, "%s", a->reason);
		return AGENT_OK;
	}
	if (a->type == POLICY_ACT_PIN_VCPU && r == AGENT_OK)
		ldom_refusal_lifted(d);
	live_note_result(l, d, r, err->msg);
	return r;
}

void
live_report(void *ctx, const struct policy_action *a, enum agent_result r, const char *msg)
{
	struct live *l = ctx;
	struct ldom *d = ldom_by_key(l, a->key);

	if (r == AGENT_PERMANENT)
		log_dom(LOG_WARNING, d ? d->name : NULL, a->vcpu, d && a->vcpu >= 0 && a->vcpu < d->maxvcpus ?
		    d->v[a->vcpu].tid : 0, "%s failed permanently, domain no longer managed: %s",
		    policy_action_name(a->type), msg);
}

void
live_coresched(struct live *l, struct ldom *d, const int *newtids, int nnew)
{
	struct llcd_err e;
	enum coresched_result r;

	if (!ldom_annotated(d) || d->annot->isolation != POLICY_ISO_CORE || d->annot->mode == POLICY_MODE_NONE ||
	    d->pid <= 0 || nnew == 0)
		return;
	if (coresched_probe(l->cs) != CORESCHED_AVAIL_YES)
		return;         /* said once at start */
	if (d->cs_state == LDOM_CS_NONE) {
		uint64_t ck = 0;
		/* a cookie already there (llcd restarted): keep it, share it to
		 * any thread that lacks it */
		if (coresched_get(l->cs, newtids[0], &ck, &e) == CORESCHED_OK && ck != 0) {
			d->cs_state = LDOM_CS_COOKIE;
			d->cs_tid = newtids[0];
			log_dom(LOG_INFO, d->name, -1, newtids[0], "core-scheduling cookie already set; kept");
			if (nnew > 1)
				live_coresched(l, d, newtids + 1, nnew - 1);
			return;
		}
		r = coresched_assign(l->cs, d->pid, newtids[0], &e);
		if (r == CORESCHED_OK) {
			d->cs_state = LDOM_CS_COOKIE;
			d->cs_tid = newtids[0];
			l->st.coresched_assigned++;
			log_dom(LOG_INFO, d->name, -1, newtids[0], "core-scheduling cookie for QEMU pid %d", d->pid);
		} else if (r != CORESCHED_TRANSIENT) {
			d->cs_state = LDOM_CS_GAVE_UP; /* do not retry gone / permanent */
			log_dom(LOG_WARNING, d->name, -1, newtids[0], "core scheduling: %s [%s]", e.msg,
			    coresched_result_name(r));
		}
		return;
	}
	if (d->cs_state == LDOM_CS_COOKIE && d->cs_tid > 0) {
		int nshared = 0;
		r = coresched_share(l->cs, d->cs_tid, newtids, nnew, &nshared, &e);
		if (r != CORESCHED_OK)
			log_dom(LOG_WARNING, d->name, -1, d->cs_tid, "core scheduling: sharing to new vCPU threads: %s [%s]",
			    e.msg, coresched_result_name(r));
		else if (nshared)
			log_dom(LOG_INFO, d->name, -1, d->cs_tid, "core-scheduling cookie shared to %d new thread%s",
			    nshared, nshared == 1 ? "" : "s");
	}
}
