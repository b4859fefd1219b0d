/*
 * Executable memory for trampolines, within a rel32 jump of the code
 * probed (area.c), and writing code into a running process's own text.
 */
#ifndef ST_DYNPROBE_AREA_H
#define ST_DYNPROBE_AREA_H

#include <stddef.h>
#include <stdint.h>

/*
 * Room for n bytes of code (n <= 4096) whose every byte is within
 * 2 GiB - 64 KiB of `near`, aligned to 64 bytes: an address, or 0 when no
 * room can be mapped there. Areas are never given back: a thread may run
 * a trampoline long after its probe was removed.
 */
uint64_t dp_area_take(uint64_t near, size_t n);

/*
 * Writes n bytes at addr in this process, whatever the page's protection
 * (through /proc/self/mem, as a debugger does: the mapping is never made
 * writable, so no thread running elsewhere in the page faults). 0 or
 * -errno.
 */
int dp_write_code(uint64_t addr, const void *bytes, size_t n);

#endif /* ST_DYNPROBE_AREA_H */
