// SPDX-License-Identifier: GPL-2.0-or-later
/* handlers_guest.c - llcd's answers about a domain's guest: the guest
 * topology llcd recommends (topology DOMAIN), writing it to the persistent
 * definition (topology --apply), checking the guest topology against the
 * pins (check), and adding the guest helper's channel (guest-channel). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "guesttopo.h"
#include "guestxml.h"
#include "handlers_int.h"

/* The guest topology llcd recommends for a domain: a dry placement beside
 * the others (recommend.h). */
static int
recommend(struct daemon *d, const struct policy_domain_in *in, struct guesttopo_rec *rec,
          struct llcd_err *err)
{
	const struct agent_obs *o = agent_loop_obs(d->loop);

	return recommend_compute(&d->host, in, o->domains, o->ndomains, rec, err);
}

/* Append to buf (len bytes, *o used); past the end *o only grows. */
static void
out(char *buf, size_t len, size_t *o, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
out(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + (*o < len ? *o : len - 1), *o < len ? len - *o : 1, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o += (size_t)n;
}

/* The recommendation as the lines of a Proxmox VE VM config
 * (/etc/pve/qemu-server/VMID.conf): sockets and cores (cores per socket;
 * Proxmox has no dies or threads), numa and numaN (the guest cells, or one
 * cell bound to the host node), affinity (the CPUs of the pins), and an
 * args: -smp line where dies or threads must be said (QEMU merges -smp
 * options, the last value wins, and args: comes last). */
static int
proxmox_lines(const struct guesttopo_rec *rec, char *buf, size_t len)
{
	const struct policy_guest_topo *g = &rec->topo;
	struct cpuset all = rec->emulator;
	char cs[1024];
	size_t o = 0;

	out(buf, len, &o, "# Proxmox VE: lines for /etc/pve/qemu-server/VMID.conf (or qm set VMID --sockets ... --cores ...),\n"
	    "# used from the VM's next start; llcd does not edit them\n");
	out(buf, len, &o, "sockets: %d\n", g->sockets);
	out(buf, len, &o, "cores: %d\n", g->dies * g->clusters * g->cores * g->threads);
	if (rec->ncells > 0) {
		out(buf, len, &o, "numa: 1\n");
		for (int i = 0; i < rec->ncells; i++) {
			cpuset_format(&rec->cells[i].vcpus, cs, sizeof(cs));
			for (char *p = cs; *p; p++)
				if (*p == ',')
					*p = ';';
			out(buf, len, &o, "numa%d: cpus=%s,hostnodes=%d,policy=bind\n", i, cs, rec->cells[i].host_node);
		}
	} else if (cpuset_count(&rec->nodeset) == 1) {
		out(buf, len, &o, "numa: 1\n");
		out(buf, len, &o, "numa0: cpus=0-%d,hostnodes=%d,policy=bind\n", rec->nvcpus - 1, cpuset_first(&rec->nodeset));
	}
	for (int v = 0; v < rec->nvcpus; v++)
		cpuset_or(&all, &all, &rec->pins[v]);
	cpuset_format(&all, cs, sizeof(cs));
	out(buf, len, &o, "affinity: %s\n", cs);
	if (g->dies > 1 || g->threads > 1) {
		out(buf, len, &o, "# Proxmox has no dies or threads option: this -smp overrides its own (the last value wins)\n");
		out(buf, len, &o, "args: -smp %d,sockets=%d,dies=%d,cores=%d,threads=%d\n", rec->nvcpus, g->sockets, g->dies,
		    g->cores, g->threads);
	}
	out(buf, len, &o, "# L3: QEMU describes one L3 cache per guest die (its default l3-cache=on): %d guest die%s, "
	    "each on one host LLC\n", rec->ndies, rec->ndies == 1 ? "" : "s");
	out(buf, len, &o, "# affinity is where the whole QEMU process may run; llcd pins each vCPU within it\n");
	return o < len ? 0 : -1;
}

/* topology DOMAIN's reply (proxmox: the config lines instead of XML, for a
 * back-end whose VMs are configured in lines, DAEMON_VM_CONFIG_LINES). */
static json_object *
rec_reply(const struct topo *t, const char *name, const struct policy_guest_topo *guest,
          const struct guesttopo_rec *rec, bool proxmox)
{
	char text[8192];
	json_object *o = json_object_new_object();

	if (proxmox)
		proxmox_lines(rec, text, sizeof(text));
	else
		guesttopo_format(t, rec, text, sizeof(text));
	json_object_object_add(o, "name", jstr(name));
	json_object_object_add(o, "current", daemon_gtopo_json(guest));
	json_object *r = daemon_gtopo_json(&rec->topo), *reasons = json_object_new_array();
	json_object_object_add(r, "cache", jstr(rec->cache_mode));
	json_object_object_add(r, "numa_cells", json_object_new_int(rec->ncells));
	json_object_object_add(r, "nodeset", cpuset_json(&rec->nodeset));
	json_object_object_add(o, "recommended", r);
	for (int i = 0; i < rec->nreasons; i++)
		json_object_array_add(reasons, jstr(rec->reasons[i]));
	json_object_object_add(o, "reasons", reasons);
	json_object_object_add(o, "text", jstr(text));
	json_object_object_add(o, "format", jstr(proxmox ? "proxmox" : "libvirt"));
	bool same = guest->sockets == rec->topo.sockets && guest->dies == rec->topo.dies &&
	            guest->cores == rec->topo.cores && guest->threads == rec->topo.threads;
	json_object_object_add(o, "matches", json_object_new_boolean(same));
	return o;
}

/* The fingerprint of the placement now (recommend_fingerprint), once per
 * period, tune or topology change. */
static uint64_t
placement_fp(struct daemon *d)
{
	if (d->rec.fp_gen != d->obs_gen || d->obs_gen == 0) {
		d->rec.fp = recommend_fingerprint(&d->host, d->topo_gen, agent_loop_obs(d->loop));
		d->rec.fp_gen = d->obs_gen;
	}
	return d->rec.fp;
}

static struct daemon_rec_cache *
cache_find(struct daemon *d, uint64_t key, uint64_t fp)
{
	for (int i = 0; i < RECOMMEND_CACHE; i++)
		if (d->rec.cache[i].key == key && d->rec.cache[i].fp == fp && (d->rec.cache[i].reply || d->rec.cache[i].rc))
			return &d->rec.cache[i];
	return NULL;
}

/* Keep an answer (reply taken over, or NULL with rc and error): over a
 * stale entry (another fingerprint) if there is one, else round robin. */
static void
cache_put(struct daemon *d, uint64_t key, uint64_t fp, json_object *reply, int rc, const char *error)
{
	struct daemon_rec_cache *e = NULL;

	for (int i = 0; e == NULL && i < RECOMMEND_CACHE; i++)
		if (d->rec.cache[i].fp != fp || (d->rec.cache[i].reply == NULL && d->rec.cache[i].rc == 0))
			e = &d->rec.cache[i];
	if (e == NULL)
		e = &d->rec.cache[d->rec.cache_next++ % RECOMMEND_CACHE];
	json_object_put(e->reply);
	e->key = key;
	e->fp = fp;
	e->reply = reply;
	e->rc = rc;
	snprintf(e->error, sizeof(e->error), "%s", error ? error : "");
}

/* Synchronously, without a control socket (tests driving daemon_handle). */
static int
topology_domain_now(struct daemon *d, const struct policy_domain_in *in, struct control_request *req)
{
	struct guesttopo_rec *rec = guesttopo_rec_new();
	struct llcd_err err;

	if (rec == NULL)
		return CTL_E_INTERNAL;
	if (recommend(d, in, rec, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		guesttopo_rec_free(rec);
		return CTL_E_INVAL;
	}
	req->reply = rec_reply(d->topo, in->name, &in->guest, rec, d->be.vm_config == DAEMON_VM_CONFIG_LINES);
	guesttopo_rec_free(rec);
	return CTL_OK;
}

int
daemon_topology_domain(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	struct llcd_err err;

	if (d->ctl == NULL)
		return topology_domain_now(d, in, req);
	uint64_t fp = placement_fp(d);
	struct daemon_rec_cache *e = cache_find(d, in->key, fp);
	if (e != NULL) {
		d->rec.cached++;
		snprintf(req->error, sizeof(req->error), "%s", e->error);
		req->reply = e->reply ? json_object_get(e->reply) : NULL;
		return e->reply ? CTL_OK : e->rc;
	}
	if (d->rec.nwait == RECOMMEND_MAX_JOBS) {
		snprintf(req->error, sizeof(req->error), "%d topology requests wait already; ask again later",
		    d->rec.nwait);
		return CTL_E_BUSY;
	}
	bool queued = false;
	for (int i = 0; !queued && i < d->rec.nwait; i++)
		queued = d->rec.wait[i].key == in->key && d->rec.wait[i].fp == fp;
	if (!queued) {
		if (d->rec.worker == NULL && (d->rec.worker = recommend_new(&err)) == NULL) {
			snprintf(req->error, sizeof(req->error), "%s", err.msg);
			return CTL_E_INTERNAL;
		}
		if (recommend_submit(d->rec.worker, &d->host, fp, agent_loop_obs(d->loop), in->key, &err) < 0) {
			snprintf(req->error, sizeof(req->error), "%s", err.msg);
			return CTL_E_BUSY;
		}
	}
	d->rec.wait[d->rec.nwait++] = (struct daemon_rec_wait){ in->key, fp, req->client, req->seq };
	return CONTROL_DEFER;
}

void
daemon_recommend_ready(struct daemon *d)
{
	struct recommend_result *res;

	while (d->rec.worker != NULL && (res = recommend_take(d->rec.worker)) != NULL) {
		json_object *reply = NULL;
		int rc = CTL_OK;
		if (res->rc == 0) {
			reply = rec_reply(res->topo, res->name, &res->guest, res->rec, d->be.vm_config == DAEMON_VM_CONFIG_LINES);
		} else {
			rc = res->name[0] ? CTL_E_INVAL : CTL_E_NODOMAIN;
		}
		d->rec.computed++;
		if (res->compute_s > d->rec.compute_max_s)
			d->rec.compute_max_s = res->compute_s;
		for (int i = 0; i < d->rec.nwait; i++) {
			struct daemon_rec_wait *w = &d->rec.wait[i];
			if (w->key != res->key || w->fp != res->fp)
				continue;
			if (d->ctl)
				control_answer(d->ctl, w->client, w->seq, rc, reply ? json_object_get(reply) : NULL,
				    res->error);
			d->rec.wait[i--] = d->rec.wait[--d->rec.nwait];
		}
		cache_put(d, res->key, res->fp, reply, rc, res->error);
		recommend_result_free(res);
	}
}

void
daemon_recommend_free(struct daemon *d)
{
	recommend_free(d->rec.worker);
	d->rec.worker = NULL;
	for (int i = 0; i < RECOMMEND_CACHE; i++) {
		json_object_put(d->rec.cache[i].reply);
		d->rec.cache[i].reply = NULL;
	}
	d->rec.nwait = 0;
}

int
daemon_topology_apply(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	struct guesttopo_rec *rec = NULL;
	struct llcd_err err;
	char *xml = NULL, *out = NULL, *diff = NULL;
	size_t outlen;
	bool dry = arg_bool(req, "dry_run", false);
	int rc;

	if (d->be.vm_config == DAEMON_VM_CONFIG_LINES) {
		snprintf(req->error, sizeof(req->error), "llcd does not edit Proxmox VE or QEMU configurations: put the "
		    "lines of 'llcctl topology %s' in /etc/pve/qemu-server/VMID.conf (or qm set) and restart the VM",
		    in->name);
		return CTL_E_UNSUPPORTED;
	}
	if (d->be.query->get_xml == NULL || d->be.query->define_xml == NULL) {
		snprintf(req->error, sizeof(req->error), "the %s back-end has no domain XML to rewrite", d->be.name);
		return CTL_E_UNSUPPORTED;
	}
	rc = CTL_E_INTERNAL;
	if ((rec = guesttopo_rec_new()) == NULL || recommend(d, in, rec, &err) < 0 ||
	    d->be.query->get_xml(d->be.ctx, in->key, true, &xml, &err) < 0 ||
	    guestxml_apply(xml, strlen(xml), rec, GUESTXML_ALL, &out, &outlen, &err) < 0 ||
	    guestxml_diff(xml, strlen(xml), out, outlen, "current", "llcd", &diff, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		goto done;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "diff", jstr(diff));
	bool running = d->be.query->is_running ? d->be.query->is_running(d->be.ctx, in->key) : true;
	if (!dry && *diff && d->be.query->define_xml(d->be.ctx, out, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		json_object_put(req->reply);
		req->reply = NULL;
		goto done;
	}
	json_object_object_add(req->reply, "applied", json_object_new_boolean(!dry && *diff));
	json_object_object_add(req->reply, "message", jstr(dry ? "dry run: nothing written" : !*diff ?
	    "the persistent definition already has this topology" : running ?
	    "written to the persistent definition; it takes effect at the next boot (the running guest keeps its topology)" :
	    "written to the persistent definition"));
	rc = CTL_OK;
done:
	guesttopo_rec_free(rec);
	free(xml);
	free(out);
	free(diff);
	return rc;
}

int
daemon_check(struct daemon *d, struct control_request *req, const struct policy_domain_in *in)
{
	struct guesttopo_check *c = guesttopo_check_new();
	struct cpuset *pins;
	struct llcd_err err;

	if (c == NULL)
		return CTL_E_INTERNAL;
	pins = calloc((size_t)in->nvcpus, sizeof(*pins));
	/* an empty set is a thread the back-end found allowed everywhere and
	 * llcd never pinned (query.h): that is where it may run, so check it as
	 * llc-guesttopo checks a vCPU without <vcpupin>: on every host CPU */
	for (int v = 0; pins && v < in->nvcpus; v++)
		pins[v] = cpuset_empty(policy_sample_pin(&in->vcpus[v])) ? d->topo->all : *in->vcpus[v].pinned;
	if (pins == NULL || guesttopo_check(d->topo, &in->guest, in->nvcpus, pins, 64, c, &err) < 0) {
		snprintf(req->error, sizeof(req->error), "%s", pins ? err.msg : "out of memory");
		free(pins);
		guesttopo_check_free(c);
		return CTL_E_INVAL;
	}
	free(pins);
	json_object *arr = json_object_new_array();
	for (int i = 0; i < c->n; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "kind", jstr(guesttopo_issue_name(c->issues[i].kind)));
		json_object_object_add(o, "first_vcpu", json_object_new_int(c->issues[i].first_vcpu));
		json_object_object_add(o, "nvcpus", json_object_new_int(c->issues[i].nvcpus));
		json_object_object_add(o, "message", jstr(c->issues[i].msg));
		json_object_array_add(arr, o);
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in->name));
	json_object_object_add(req->reply, "guest_topology", daemon_gtopo_json(&in->guest));
	json_object_object_add(req->reply, "issues", arr);
	json_object_object_add(req->reply, "total", json_object_new_int(c->total));
	json_object_object_add(req->reply, "notes", json_object_new_int(c->notes));
	json_object_object_add(req->reply, "agree", json_object_new_boolean(c->total == c->notes));
	guesttopo_check_free(c);
	return CTL_OK;
}

int
daemon_guest_channel(struct daemon *d, struct control_request *req)
{
	const struct policy_domain_in *in = NULL;
	struct llcd_err err;
	char path[512];
	int rc = find_domain(d, req, &in);
	const char *name = arg_str(req, "domain");

	if (rc != CTL_OK && rc != CTL_E_NODOMAIN)
		return rc;
	if (!arg_bool(req, "add", false)) {
		snprintf(req->error, sizeof(req->error), "guest-channel needs --add");
		return CTL_E_INVAL;
	}
	if (d->be.query->add_guest_channel == NULL) {
		snprintf(req->error, sizeof(req->error), "the %s back-end has no guest channels (its guest helper is "
		    "simulated)", d->be.name);
		return CTL_E_UNSUPPORTED;
	}
	/* the persistent definition only, of a running domain (in) or of a
	 * stopped one the back-end looks up by name: hot-plugging a
	 * virtio-serial channel needs a controller the guest may not have;
	 * the channel comes with the next start */
	bool running = in != NULL;
	int added = d->be.query->add_guest_channel(d->be.ctx, in ? in->key : 0, in ? in->name : name, false, path,
	    sizeof(path), &err);
	if (added < 0) {
		snprintf(req->error, sizeof(req->error), "%s", err.msg);
		return added == -2 ? CTL_E_NODOMAIN : added == AGENT_QUERY_REFUSED ? CTL_E_UNSUPPORTED : CTL_E_INTERNAL;
	}
	req->reply = json_object_new_object();
	json_object_object_add(req->reply, "name", jstr(in ? in->name : name));
	json_object_object_add(req->reply, "socket", jstr(path));
	json_object_object_add(req->reply, "running", json_object_new_boolean(running));
	json_object_object_add(req->reply, "live", json_object_new_boolean(false));
	json_object_object_add(req->reply, "added", json_object_new_boolean(added == 0));
	return CTL_OK;
}
