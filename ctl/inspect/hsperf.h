/*
 * HotSpot's performance data (hsperf.c): what a JVM says of itself in the
 * shared memory that jstat reads, here whether its attach mechanism is on.
 */
#ifndef ST_INSPECT_HSPERF_H
#define ST_INSPECT_HSPERF_H

#include <stddef.h>

/*
 * Whether the JVM whose performance data memory is the n bytes at buf
 * (its copy: the JVM may write it meanwhile, every offset is checked)
 * accepts attach requests: 1, 0 (-XX:+DisableAttachMechanism), or -1 when
 * the memory does not say (not performance data, not of this byte order,
 * not written yet).
 */
int st_hsperf_attachable(const unsigned char *buf, size_t n);

#endif /* ST_INSPECT_HSPERF_H */
