/* Levels from DRA attributes and PCI address helpers. Pure functions, any thread. */
#include "topology/locality.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *
rf_level_source_name(enum rf_level_source s)
{
	switch (s) {
	case RF_SRC_DRA:
		return "dra";
	case RF_SRC_ANNOTATION:
		return "annotation";
	case RF_SRC_NONE:
		break;
	}
	return "none";
}

enum rf_level
rf_locality_level(const struct rf_locality *a, const struct rf_locality *b,
		  enum rf_level_source *ret_src)
{
	enum rf_level_source src = RF_SRC_DRA;
	enum rf_level l;

	if (a->pcie_root && b->pcie_root && strcmp(a->pcie_root, b->pcie_root) == 0)
		l = RF_LEVEL_PHB;
	else if (a->numa >= 0 && b->numa >= 0)
		l = a->numa == b->numa ? RF_LEVEL_NODE : RF_LEVEL_SYS;
	else {
		l = RF_LEVEL_UNKNOWN;
		src = RF_SRC_NONE;
	}
	if (ret_src)
		*ret_src = src;
	return l;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Parse up to max hex digits (at least one) ending at a separator in seps or NUL. */
static int
hexfield(const char **p, int max, const char *seps, unsigned *ret)
{
	unsigned v = 0;
	int n = 0;
	while (**p && !strchr(seps, **p)) {
		int h = hexval((unsigned char)**p);
		if (h < 0 || n == max)
			return -EINVAL;
		v = v * 16 + (unsigned)h;
		n++;
		(*p)++;
	}
	if (n == 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

int
rf_pci_normalize(const char *in, char out[RF_PCI_ADDR_LEN])
{
	unsigned dom = 0, bus, dev, fn;
	const char *p = in;
	char sep1 = ':', sep2 = '.';

	if (!in)
		return -EINVAL;
	if (strncmp(p, "pci-", 4) == 0) {
		/* dranet: pci-<domain>-<bus>-<dev>-<fn> */
		p += 4;
		sep1 = '-';
		sep2 = '-';
		if (hexfield(&p, 4, "-", &dom) < 0 || *p++ != '-')
			return -EINVAL;
	} else {
		/* with or without the domain: count the colons */
		const char *c1 = strchr(p, ':');
		if (c1 && strchr(c1 + 1, ':')) {
			if (hexfield(&p, 4, ":", &dom) < 0 || *p++ != ':')
				return -EINVAL;
		}
	}
	char seps1[2] = { sep1, 0 }, seps2[2] = { sep2, 0 };
	if (hexfield(&p, 2, seps1, &bus) < 0 || *p++ != sep1)
		return -EINVAL;
	if (hexfield(&p, 2, seps2, &dev) < 0 || *p++ != sep2)
		return -EINVAL;
	if (hexfield(&p, 1, "", &fn) < 0 || *p)
		return -EINVAL;
	if (dev > 0x1f || fn > 7)
		return -EINVAL;
	snprintf(out, RF_PCI_ADDR_LEN, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

int
rf_pci_cmp(const char *a, const char *b)
{
	/* normalised addresses have fixed-width lower-case hex fields: byte order is numeric order
	 */
	return strcmp(a, b);
}
