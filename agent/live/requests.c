// SPDX-License-Identifier: GPL-2.0-or-later
/* requests.c - what llcctl asks of a running domain through the daemon
 * (annotation, domain XML, the guest channel), passed to libvirt. */
#include "live_int.h"

#include <limits.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "annotation_xml.h"
#include "guestchan.h"
#include "log.h"

int
live_set_annotation(struct live *l, uint64_t key, const char *xml, bool live, bool config,
    struct llcd_err *err)
{
	struct ldom *d = ldom_by_key(l, key);

	if (d == NULL)
		return llcd_err_set(err, "no running domain with key %016llx", (unsigned long long)key);
	if (ldom_virt(d) == NULL && d->ext && l->have_src && l->src.annotation_refused) {
		llcd_err_set(err, "%s", l->src.annotation_refused);
		return AGENT_QUERY_REFUSED;
	}
	if (ldom_virt(d) == NULL)
		return llcd_err_set(err, "domain %s: no libvirt connection in this back-end", d->name);
	if (virt_set_annotation_flags(ldom_virt(d), d->uuid, xml, live, config, err) != VIRT_OK)
		return llcd_err_prefix(err, "domain %s", d->name);
	if (live || !config) {
		/* the metadata event follows; read now so describe is current */
		d->todo |= LDOM_TODO_ANNOT;
		ldom_read_annotation(l, d);
	}
	return 0;
}

int
live_get_annotation(struct live *l, uint64_t key, char **xml, struct llcd_err *err)
{
	struct ldom *d = ldom_by_key(l, key);

	*xml = NULL;
	if (d == NULL)
		return llcd_err_set(err, "no running domain with key %016llx", (unsigned long long)key);
	if (ldom_virt(d) == NULL && d->ext && l->have_src && l->src.get_annotation)
		return l->src.get_annotation(l->src.ctx, key, xml, err);
	if (ldom_virt(d) == NULL) {
		char buf[ANNOT_XML_MAX];
		if (ldom_annotated(d) && annot_format_metadata(d->annot, buf, sizeof(buf), err) == 0 &&
		    (*xml = strdup(buf)) == NULL)
			return llcd_err_set(err, "out of memory");
		return 0;
	}
	if (virt_get_annotation(ldom_virt(d), d->uuid, xml, err) != VIRT_OK)
		return llcd_err_prefix(err, "domain %s", d->name);
	return 0;
}

int
live_get_xml(struct live *l, uint64_t key, bool inactive, char **xml, struct llcd_err *err)
{
	struct ldom *d = ldom_by_key(l, key);

	*xml = NULL;
	if (d == NULL)
		return llcd_err_set(err, "no running domain with key %016llx", (unsigned long long)key);
	if (ldom_virt(d) == NULL)
		return llcd_err_set(err, "domain %s: no libvirt connection in this back-end", d->name);
	if (virt_get_xml(ldom_virt(d), d->uuid, inactive, xml, err) != VIRT_OK)
		return llcd_err_prefix(err, "domain %s", d->name);
	return 0;
}

int
live_define_xml(struct live *l, const char *xml, struct llcd_err *err)
{
	if (l->virt == NULL)
		return llcd_err_set(err, "no libvirt connection in this back-end");
	return virt_define_xml(l->virt, xml, err) == VIRT_OK ? 0 : -1;
}

/* mkdir -p for the channel directory (llcd may run outside its unit,
 * where /run/llcd does not exist yet). */
static int
mkdir_parents(const char *dir, struct llcd_err *err)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return llcd_err_set(err, "guest-channel-dir %s: path too long", dir);
	for (char *q = p + 1; ; q++) {
		if (*q != '/' && *q != '\0')
			continue;
		char c = *q;
		*q = '\0';
		if (mkdir(p, c ? 0755 : 0750) < 0 && errno != EEXIST)
			return llcd_err_set(err, "cannot create %s: %s", p, strerror(errno));
		*q = c;
		if (c == '\0')
			return 0;
	}
}

int
live_add_guest_channel(struct live *l, uint64_t key, const char *name, bool live, char *path, size_t len,
                       struct llcd_err *err)
{
	struct ldom *d = key ? ldom_by_key(l, key) : NULL;
	struct virt_domain vd;
	char xml[1024];
	char *def = NULL;

	if (l->have_src && l->src.channel_refused && ((d != NULL && d->ext) || (key == 0 && l->virt == NULL))) {
		llcd_err_set(err, "%s", l->src.channel_refused);
		return AGENT_QUERY_REFUSED;
	}
	if (key && (d == NULL || d->fake))
		return llcd_err_set(err, "no such libvirt domain");
	struct virt *v = d != NULL ? ldom_virt(d) : l->virt;
	if (v == NULL)
		return llcd_err_set(err, "no libvirt connection in this back-end%s",
		    d == NULL && l->nconns > 0 ? " for a domain that does not run (the daemons of "
		    "libvirt-socket-glob are asked only about their running domains)" : "");
	if (d != NULL) {
		snprintf(vd.uuid, sizeof(vd.uuid), "%s", d->uuid);
		snprintf(vd.name, sizeof(vd.name), "%s", d->name);
	} else {
		/* a defined domain that does not run: llcd does not track it,
		 * libvirt knows it by name */
		enum virt_result r = virt_domain_by_name(v, name, &vd, err);
		if (r != VIRT_OK)
			return r == VIRT_GONE ? -2 : -1;
	}
	if (l->cfg.guest_channel_dir == NULL || l->cfg.guest_channel_dir[0] == '\0')
		return llcd_err_set(err, "guest-channel-dir is not set in llcd.conf");
	/* idempotent: a definition that has the channel already is left as it
	 * is (a second org.llcd.guest.0 port stops the domain from starting) */
	if (virt_get_xml(v, vd.uuid, true, &def, err) != VIRT_OK)
		return llcd_err_prefix(err, "domain %s", vd.name);
	int have = guestchan_from_domain_xml(def, strlen(def), path, len) == 0;
	bool named = strstr(def, "name='org.llcd.guest.0'") || strstr(def, "name=\"org.llcd.guest.0\"");
	free(def);
	if (have)
		return 1;
	if (named)
		return llcd_err_set(err, "domain %s has an org.llcd.guest.0 channel that is not a unix socket; "
		    "llcd leaves it alone (docs/guest-channel.md)", vd.name);
	if (mkdir_parents(l->cfg.guest_channel_dir, err) < 0)
		return -1;
	if (guestchan_sock_path(l->cfg.guest_channel_dir, vd.uuid, path, len, err) < 0 ||
	    guestchan_channel_xml(path, xml, sizeof(xml), err) < 0)
		return -1;
	/* the persistent definition (VIR_DOMAIN_AFFECT_CONFIG), running or not */
	if (virt_attach_device(v, vd.uuid, xml, live, err) != VIRT_OK)
		return llcd_err_prefix(err, "domain %s", vd.name);
	log_dom(LOG_INFO, vd.name, -1, 0, "guest channel added (%s%s): %s", live ? "live and config" : "config",
	    d ? "" : ", the domain is not running", path);
	if (d != NULL) {
		/* connect at the next period (live) or after the next start */
		guestchan_free(d->gc);
		d->gc = guestchan_new(d->name, d->nvcpus, path, NULL);
		d->gc_looked = true;
	}
	return 0;
}
