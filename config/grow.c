/* Array growth (see grow.h). */
#include "config/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 16

int
rf_grow(void *ptr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : MIN_CAP;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	/* ptr holds some T *: read and write it as the void * it converts to */
	void *old, *p;
	memcpy(&old, ptr, sizeof(old));
	p = realloc(old, ncap * elem);
	if (!p)
		return -ENOMEM;
	memcpy(ptr, &p, sizeof(p));
	*cap = ncap;
	return 0;
}
