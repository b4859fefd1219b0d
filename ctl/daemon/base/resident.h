/*
 * Private memory made resident at once (resident.c).
 */
#ifndef ST_DAEMON_BASE_RESIDENT_H
#define ST_DAEMON_BASE_RESIDENT_H

#include <stdint.h>

/* len bytes of private memory, resident, and not inherited by children
 * (resident.c); NULL if out of memory. */
void *st_resident_alloc(uint64_t len);
void st_resident_free(void *p, uint64_t len);

#endif
