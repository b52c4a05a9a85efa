// SPDX-License-Identifier: GPL-2.0-or-later
/* guestchan_xml.c - find the guest helper's channel in a domain XML
 * (guestchan.h), read with the one hardened domain-XML reader (xmlsafe.h). */
#include "guestchan.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "guestproto.h"
#include "xmlsafe.h"

int
guestchan_from_domain_xml(const char *xml, size_t len, char *path, size_t plen)
{
	char mode[16];

	return guestchan_channel_from_xml(xml, len, path, plen, mode, sizeof(mode));
}

int
guestchan_channel_from_xml(const char *xml, size_t len, char *path, size_t plen, char *mode, size_t mlen)
{
	struct llcd_err e;
	xmlDocPtr doc = xmlsafe_read_domain(xml, len, &e);
	int rc = -1;

	if (doc == NULL)
		return -1;
	xmlNodePtr root = xmlDocGetRootElement(doc), devs = NULL;
	for (xmlNodePtr n = root ? root->children : NULL; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, BAD_CAST "devices"))
			devs = n;
	for (xmlNodePtr ch = devs ? devs->children : NULL; ch && rc < 0; ch = ch->next) {
		if (ch->type != XML_ELEMENT_NODE || xmlStrcmp(ch->name, BAD_CAST "channel"))
			continue;
		xmlChar *type = xmlGetProp(ch, BAD_CAST "type"), *src = NULL, *tname = NULL, *smode = NULL;
		for (xmlNodePtr c = ch->children; c; c = c->next) {
			if (c->type != XML_ELEMENT_NODE)
				continue;
			if (!xmlStrcmp(c->name, BAD_CAST "source") && src == NULL) {
				src = xmlGetProp(c, BAD_CAST "path");
				smode = xmlGetProp(c, BAD_CAST "mode");
			}
			if (!xmlStrcmp(c->name, BAD_CAST "target") && tname == NULL)
				tname = xmlGetProp(c, BAD_CAST "name");
		}
		if (type && !xmlStrcmp(type, BAD_CAST "unix") && src && tname &&
		    !xmlStrcmp(tname, BAD_CAST GUESTPROTO_PORT) && strlen((const char *)src) < plen) {
			snprintf(path, plen, "%s", (const char *)src);
			/* libvirt's default for a unix channel is bind (QEMU listens) */
			snprintf(mode, mlen, "%s", smode ? (const char *)smode : "bind");
			rc = 0;
		}
		xmlFree(type);
		xmlFree(smode);
		xmlFree(src);
		xmlFree(tname);
	}
	xmlFreeDoc(doc);
	return rc;
}

/* Is path (the real path of its directory) below dir? */
static bool
below(const char *real_dir, const char *dir)
{
	char rd[PATH_MAX];
	size_t n;

	if (dir == NULL || dir[0] == '\0' || realpath(dir, rd) == NULL)
		return false;
	n = strlen(rd);
	return strncmp(real_dir, rd, n) == 0 && (real_dir[n] == '/' || real_dir[n] == '\0');
}

int
guestchan_channel_allowed(const char *path, const char *mode, const char *libvirt_dir, const char *own_dir,
                          char *why, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	struct stat st;
	const char *slash = strrchr(path, '/');

	if (strcmp(mode, "bind") != 0) {
		snprintf(why, len, "channel %.200s: source mode '%.16s' (llcd connects only to a socket QEMU binds)",
		    path, mode);
		return -1;
	}
	if (path[0] != '/' || slash == NULL || strstr(path, "/../") || (size_t)(slash - path) >= sizeof(dir)) {
		snprintf(why, len, "channel %.200s: not an absolute path to a socket", path);
		return -1;
	}
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if (realpath(dir[0] ? dir : "/", real) == NULL) {
		snprintf(why, len, "channel %.200s: its directory: %s", path, strerror(errno));
		return -1;
	}
	if (!below(real, libvirt_dir) && !below(real, own_dir)) {
		snprintf(why, len, "channel %.200s: outside libvirt's channel directory (%.100s) and guest-channel-dir "
		    "(%.100s)", path, libvirt_dir ? libvirt_dir : "-", own_dir && own_dir[0] ? own_dir : "not set");
		return -1;
	}
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		snprintf(why, len, "channel %.200s: %s, not a socket", path, S_ISLNK(st.st_mode) ? "a symbolic link" :
		    "a file");
		return -1;
	}
	return 0;
}
