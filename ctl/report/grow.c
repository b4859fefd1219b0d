/*
 * Arrays that grow (see grow.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/report/grow.h"

int st_grow(void *v, uint32_t *cap, uint32_t n, size_t sz)
{
	void **p = v;
	uint32_t c;
	void *nv;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	nv = realloc(*p, (size_t)c * sz);
	if (!nv)
		return -1;
	*p = nv;
	*cap = c;
	return 0;
}

void *st_class_slot(void *v, uint32_t *n, size_t sz, uint32_t index)
{
	char **p = v;

	if (index >= *n) {
		uint32_t nn = index + 64;
		char *nv = realloc(*p, (size_t)nn * sz);

		if (!nv)
			return NULL;
		memset(nv + (size_t)*n * sz, 0, (size_t)(nn - *n) * sz);
		*p = nv;
		*n = nn;
	}
	return *p + (size_t)index * sz;
}
