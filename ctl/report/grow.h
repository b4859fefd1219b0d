/*
 * Arrays that grow (grow.c): a report's tables, and its tables kept per
 * event class.
 */
#ifndef ST_REPORT_GROW_H
#define ST_REPORT_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Grows the array *v (of *cap elements of size sz, n in use) to hold one
 * more; 0, or -1 when out of memory (*v unchanged). */
int st_grow(void *v, uint32_t *cap, uint32_t n, size_t sz);

/* The entry of a table kept per event class (by st_event_class.index) in
 * *v, of *n entries of size sz, grown and zero-filled to hold index; NULL
 * when out of memory. */
void *st_class_slot(void *v, uint32_t *n, size_t sz, uint32_t index);

#endif
