/*
 * HotSpot's performance data: a JVM keeps its counters in memory shared
 * with a file, /tmp/hsperfdata_USER/PID, which jstat and the JDK's attach
 * client read. The JDK's client reads one counter before it signals a
 * JVM, and so do we: sun.rt.jvmCapabilities, a string of '0' and '1'
 * whose first character is '1' when the attach mechanism is on. A JVM
 * started with -XX:+DisableAttachMechanism answers SIGQUIT, the signal
 * that starts its attach listener, with a thread dump on its standard
 * output instead: it must never be sent.
 *
 * The layout (HotSpot's perfMemory.hpp), all in the JVM's byte order but
 * the magic:
 *
 *   prologue   0 magic CA FE C0 C0   4 byte order (1: little endian)
 *              5 major  6 minor      7 accessible
 *              8 used   12 overflow  16 modification time (8 bytes)
 *             24 offset of the first entry   28 number of entries
 *   entry      0 length of the entry  4 offset of its name (from the entry)
 *              8 vector length       12 type ('B': bytes, a string)
 *             13 flags 14 units 15 variability
 *             16 offset of its data (from the entry)
 *
 * The memory is the JVM's to write: every length and offset is checked
 * against the copy, and a name or a value that runs past its entry is not
 * read.
 */
#include <stdint.h>
#include <string.h>

#include "ctl/inspect/hsperf.h"

#define PROLOGUE 32
#define ENTRY 20
#define CAPABILITIES "sun.rt.jvmCapabilities"

/* The 32-bit little-endian value at p. */
static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int st_hsperf_attachable(const unsigned char *buf, size_t n)
{
	static const unsigned char magic[4] = { 0xca, 0xfe, 0xc0, 0xc0 };
	size_t off;
	uint32_t count;

	if (n < PROLOGUE || memcmp(buf, magic, 4) != 0 || buf[4] != 1 /* little endian */)
		return -1;
	off = le32(buf + 24);
	count = le32(buf + 28);
	for (uint32_t i = 0; i < count && off <= n - ENTRY; i++) {
		const unsigned char *e = buf + off;
		size_t len = le32(e), name = le32(e + 4), vlen = le32(e + 8), data = le32(e + 16);

		if (len < ENTRY || len > n - off)
			return -1;
		if (name < len && memchr(e + name, '\0', len - name) &&
		    strcmp((const char *)e + name, CAPABILITIES) == 0) {
			if (e[12] != 'B' || vlen < 1 || data >= len)
				return -1;
			return e[data] == '1' ? 1 : e[data] == '0' ? 0 : -1;
		}
		off += len;
	}
	return -1;
}
