// SPDX-License-Identifier: GPL-2.0-or-later
/* guestchan_xml.c - find the guest helper's channel in a domain XML
 * (guestchan.h), read with the one hardened domain-XML reader (xmlsafe.h). */
#include "guestchan.h"

#include <stdio.h>
#include <string.h>

#include "guestproto.h"
#include "xmlsafe.h"

int
guestchan_from_domain_xml(const char *xml, size_t len, char *path, size_t plen)
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
		xmlChar *type = xmlGetProp(ch, BAD_CAST "type"), *src = NULL, *tname = NULL;
		for (xmlNodePtr c = ch->children; c; c = c->next) {
			if (c->type != XML_ELEMENT_NODE)
				continue;
			if (!xmlStrcmp(c->name, BAD_CAST "source") && src == NULL)
				src = xmlGetProp(c, BAD_CAST "path");
			if (!xmlStrcmp(c->name, BAD_CAST "target") && tname == NULL)
				tname = xmlGetProp(c, BAD_CAST "name");
		}
		if (type && !xmlStrcmp(type, BAD_CAST "unix") && src && tname &&
		    !xmlStrcmp(tname, BAD_CAST GUESTPROTO_PORT) && strlen((const char *)src) < plen) {
			snprintf(path, plen, "%s", (const char *)src);
			rc = 0;
		}
		xmlFree(type);
		xmlFree(src);
		xmlFree(tname);
	}
	xmlFreeDoc(doc);
	return rc;
}
