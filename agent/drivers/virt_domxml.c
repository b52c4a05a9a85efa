// SPDX-License-Identifier: GPL-2.0-or-later
/* virt_domxml.c - the parts of virt.h that need no connection: a domain's
 * XML read into struct virt_domain, its QEMU pid from libvirt's pid file,
 * domain keys, and the names of libvirt's event and close codes. */
#include "virt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "xmlsafe.h"

/* ---- domain XML, QEMU pid -------------------------------------------------- */

/* a vCPU count of the domain XML (0..XMLSAFE_MAX_VCPUS); the caller says
 * what was wrong */
static int
attr_int(xmlNodePtr n, const char *name, int *out)
{
	return xmlsafe_attr_int(n, name, 0, XMLSAFE_MAX_VCPUS, out, "domain XML", NULL);
}

static bool
is_elem(xmlNodePtr n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, (const xmlChar *)name) == 0;
}

int
virt_parse_domain_xml(const char *xml, size_t len, struct virt_domain *d,
    struct llcd_err *err)
{
	xmlDocPtr doc;
	xmlNodePtr root, n, t;
	xmlChar *s;
	char *end;
	long val;
	int rc = -1;

	if ((doc = xmlsafe_read_domain(xml, len, err)) == NULL)
		return -1;
	root = xmlDocGetRootElement(doc);
	if (root == NULL || !is_elem(root, "domain")) {
		llcd_err_set(err, "domain XML: root element is not <domain>");
		goto out;
	}
	memset(&d->topo, 0, sizeof(d->topo));
	d->nvcpus = d->maxvcpus = 0;
	for (n = root->children; n != NULL; n = n->next) {
		if (is_elem(n, "name") || is_elem(n, "uuid")) {
			s = xmlNodeGetContent(n);
			if (s != NULL) {
				if (is_elem(n, "name"))
					snprintf(d->name, sizeof(d->name), "%s", (const char *)s);
				else
					snprintf(d->uuid, sizeof(d->uuid), "%s", (const char *)s);
				xmlFree(s);
			}
		} else if (is_elem(n, "vcpu")) {
			s = xmlNodeGetContent(n);
			errno = 0;
			val = s ? strtol((const char *)s, &end, 10) : -1;
			if (s == NULL || errno != 0 || end == (char *)s || val < 1 || val > XMLSAFE_MAX_VCPUS) {
				llcd_err_set(err, "domain XML: <vcpu> is not a vCPU count");
				xmlFree(s);
				goto out;
			}
			xmlFree(s);
			d->maxvcpus = (int)val;
			d->nvcpus = (int)val;
			if (attr_int(n, "current", &d->nvcpus) < 0 || d->nvcpus > d->maxvcpus) {
				llcd_err_set(err, "domain XML: bad <vcpu current=>");
				goto out;
			}
		} else if (is_elem(n, "cpu")) {
			for (t = n->children; t != NULL; t = t->next) {
				if (!is_elem(t, "topology"))
					continue;
				if (attr_int(t, "sockets", &d->topo.sockets) < 0 ||
				    attr_int(t, "dies", &d->topo.dies) < 0 ||
				    attr_int(t, "clusters", &d->topo.clusters) < 0 ||
				    attr_int(t, "cores", &d->topo.cores) < 0 ||
				    attr_int(t, "threads", &d->topo.threads) < 0) {
					llcd_err_set(err, "domain XML: bad <cpu><topology> attribute");
					goto out;
				}
			}
		}
	}
	if (d->maxvcpus == 0) {
		llcd_err_set(err, "domain XML: no <vcpu>");
		goto out;
	}
	rc = 0;
out:
	xmlFreeDoc(doc);
	return rc;
}

enum virt_result
virt_qemu_pid(const char *pid_dir, const char *proc_root, const char *name,
    const char *uuid, int *pid, struct llcd_err *err)
{
	char path[PATH_MAX + VIRT_NAME_MAX + 16], buf[64 * 1024], want[VIRT_UUID_LEN + 8];
	ssize_t n;
	long val;
	char *end;
	int fd;
	size_t i, wl;

	*pid = 0;
	if (strchr(name, '/') != NULL) {
		llcd_err_set(err, "domain name with '/': %s", name);
		return VIRT_PERMANENT;
	}
	snprintf(path, sizeof(path), "%s/%s.pid", pid_dir, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		llcd_err_set(err, "%s: %s", path, strerror(errno));
		return errno == ENOENT ? VIRT_GONE : VIRT_PERMANENT;
	}
	n = read(fd, buf, 31);
	close(fd);
	if (n <= 0) {
		llcd_err_set(err, "%s: empty", path);
		return VIRT_GONE;
	}
	buf[n] = '\0';
	errno = 0;
	val = strtol(buf, &end, 10);
	if (errno != 0 || end == buf || (*end != '\0' && *end != '\n') || val <= 0 || val > INT_MAX) {
		llcd_err_set(err, "%s: not a pid", path);
		return VIRT_PERMANENT;
	}
	/* the process must be this domain's QEMU: "-uuid\0<uuid>\0" */
	snprintf(path, sizeof(path), "%s/%ld/cmdline", proc_root, val);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		llcd_err_set(err, "%s: %s", path, strerror(errno));
		return VIRT_GONE;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		llcd_err_set(err, "%s: %s", path, strerror(errno));
		return VIRT_GONE;
	}
	wl = (size_t)snprintf(want, sizeof(want), "-uuid%c%s", '\0', uuid) + 1;   /* with its NUL */
	for (i = 0; i + wl <= (size_t)n; i++)
		if (memcmp(buf + i, want, wl) == 0 && (i == 0 || buf[i - 1] == '\0')) {
			*pid = (int)val;
			return VIRT_OK;
		}
	llcd_err_set(err, "pid %ld from %s/%s.pid is not the QEMU of %s (no -uuid %s)",
	    val, pid_dir, name, name, uuid);
	return VIRT_GONE;
}

static bool
cmdline_has_uuid(const char *path, const char *uuid)
{
	char buf[64 * 1024], want[VIRT_UUID_LEN + 8];
	ssize_t n;
	size_t wl;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	wl = (size_t)snprintf(want, sizeof(want), "-uuid%c%s", '\0', uuid) + 1;   /* with its NUL */
	for (size_t i = 0; i + wl <= (size_t)n; i++)
		if (memcmp(buf + i, want, wl) == 0 && (i == 0 || buf[i - 1] == '\0'))
			return true;
	return false;
}

enum virt_result
virt_qemu_pid_scan(const char *proc_root, const char *root, const char *uuid, int *pid, struct llcd_err *err)
{
	char path[PATH_MAX + 64];
	struct stat want, st;
	struct dirent *de;
	DIR *dir;

	*pid = 0;
	if (stat(root, &want) < 0) {
		llcd_err_set(err, "%s: %s", root, strerror(errno));
		return VIRT_GONE;
	}
	if ((dir = opendir(proc_root)) == NULL) {
		llcd_err_set(err, "%s: %s", proc_root, strerror(errno));
		return VIRT_TRANSIENT;
	}
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/root", proc_root, de->d_name);
		if (stat(path, &st) < 0 || st.st_dev != want.st_dev || st.st_ino != want.st_ino)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cmdline", proc_root, de->d_name);
		if (cmdline_has_uuid(path, uuid)) {
			*pid = atoi(de->d_name);
			closedir(dir);
			return VIRT_OK;
		}
	}
	closedir(dir);
	llcd_err_set(err, "no process with -uuid %s under the root %s", uuid, root);
	return VIRT_GONE;
}

/* Fill d from dom. VIRT_GONE when the domain vanished meanwhile. */
/* ---- domain keys ---------------------------------------------------------- */

uint64_t
virt_uuid_key(const char *uuid)
{
	unsigned char b[16];
	int n = 0;
	uint64_t hi = 0, lo = 0, k;

	for (const char *p = uuid; p && *p; p++) {
		int x;
		if (*p == '-')
			continue;
		if (*p >= '0' && *p <= '9')
			x = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			x = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			x = *p - 'A' + 10;
		else
			return 0;
		if (n >= 32)
			return 0;
		if (n % 2 == 0)
			b[n / 2] = (unsigned char)(x << 4);
		else
			b[n / 2] |= (unsigned char)x;
		n++;
	}
	if (n != 32)
		return 0;
	for (int i = 0; i < 8; i++) {
		hi = hi << 8 | b[i];
		lo = lo << 8 | b[8 + i];
	}
	/* version-4 UUIDs are random in both halves; fold them */
	k = hi ^ (lo * 0x9e3779b97f4a7c15ull);
	return k ? k : 1;
}

uint64_t
virt_domain_key(const char *uuid, int pid)
{
	uint64_t k = virt_uuid_key(uuid);

	if (k == 0)
		return 0;
	k ^= (uint64_t)(unsigned)pid * 0xff51afd7ed558ccdull;
	return k ? k : 1;
}

const char *
virt_lifecycle_name(int event, char *buf, size_t len)
{
	static const char *const names[] = {
		[VIR_DOMAIN_EVENT_DEFINED] = "defined", [VIR_DOMAIN_EVENT_UNDEFINED] = "undefined",
		[VIR_DOMAIN_EVENT_STARTED] = "started", [VIR_DOMAIN_EVENT_SUSPENDED] = "suspended",
		[VIR_DOMAIN_EVENT_RESUMED] = "resumed", [VIR_DOMAIN_EVENT_STOPPED] = "stopped",
		[VIR_DOMAIN_EVENT_SHUTDOWN] = "shutdown", [VIR_DOMAIN_EVENT_PMSUSPENDED] = "pmsuspended",
		[VIR_DOMAIN_EVENT_CRASHED] = "crashed",
	};

	if (event >= 0 && (size_t)event < sizeof(names) / sizeof(names[0]) && names[event])
		return names[event];
	snprintf(buf, len, "event %d", event);
	return buf;
}

const char *
virt_close_reason_name(int reason, char *buf, size_t len)
{
	switch (reason) {
	case VIR_CONNECT_CLOSE_REASON_ERROR: return "error";
	case VIR_CONNECT_CLOSE_REASON_EOF: return "eof: libvirtd closed it";
	case VIR_CONNECT_CLOSE_REASON_KEEPALIVE: return "keepalive timeout";
	case VIR_CONNECT_CLOSE_REASON_CLIENT: return "closed by llcd";
	}
	snprintf(buf, len, "reason %d", reason);
	return buf;
}
