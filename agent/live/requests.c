// SPDX-License-Identifier: GPL-2.0-or-later
/* requests.c - what llcctl asks of a running domain through the daemon
 * (annotation, domain XML, the guest channel), passed to libvirt. */
#include "live_int.h"

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
	if (l->virt == NULL)
		return llcd_err_set(err, "domain %s: no libvirt connection in this back-end", d->name);
	if (virt_set_annotation_flags(l->virt, d->uuid, xml, live, config, err) != VIRT_OK)
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
	if (l->virt == NULL) {
		char buf[ANNOT_XML_MAX];
		if (ldom_annotated(d) && annot_format_metadata(&d->annot, buf, sizeof(buf), err) == 0 &&
		    (*xml = strdup(buf)) == NULL)
			return llcd_err_set(err, "out of memory");
		return 0;
	}
	if (virt_get_annotation(l->virt, d->uuid, xml, err) != VIRT_OK)
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
	if (l->virt == NULL)
		return llcd_err_set(err, "domain %s: no libvirt connection in this back-end", d->name);
	if (virt_get_xml(l->virt, d->uuid, inactive, xml, err) != VIRT_OK)
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

int
live_add_guest_channel(struct live *l, uint64_t key, bool live, char *path, size_t len,
                       struct llcd_err *err)
{
	struct ldom *d = ldom_by_key(l, key);
	char xml[1024];

	if (d == NULL || d->fake)
		return llcd_err_set(err, "no such libvirt domain");
	if (l->cfg.guest_channel_dir == NULL || l->cfg.guest_channel_dir[0] == '\0')
		return llcd_err_set(err, "guest-channel-dir is not set in llcd.conf");
	if (mkdir(l->cfg.guest_channel_dir, 0750) < 0 && errno != EEXIST)
		return llcd_err_set(err, "cannot create %s: %s", l->cfg.guest_channel_dir, strerror(errno));
	if (guestchan_sock_path(l->cfg.guest_channel_dir, d->uuid, path, len, err) < 0 ||
	    guestchan_channel_xml(path, xml, sizeof(xml), err) < 0)
		return -1;
	if (virt_attach_device(l->virt, d->uuid, xml, live, err) != VIRT_OK)
		return -1;
	log_dom(LOG_INFO, d->name, -1, 0, "guest channel added (%s): %s", live ? "live and config" : "config", path);
	/* connect at the next period (live) or after the next start */
	guestchan_free(d->gc);
	d->gc = guestchan_new(d->name, d->nvcpus, path, NULL);
	d->gc_looked = true;
	return 0;
}
