/*
 * Call stacks for the slow paths (a contended lock's wait, a futex wait):
 * the return addresses above a wrapper's call site, found with the C
 * runtime's own unwinder, libgcc's _Unwind_Backtrace, from the .eh_frame
 * tables every object of the system carries (C++ exceptions need them;
 * GCC emits them for C too): right whether or not the code keeps frame
 * pointers, which Debian's packages do not.
 *
 * Why this unwinder: it finds an address's object with glibc's
 * _dl_find_object (2.35), which takes no lock and makes no system call,
 * and unwinds on the stack, allocating nothing. libunwind, the other
 * choice, validates memory with system calls (mincore) and looks objects
 * up with dl_iterate_phdr, under the loader's lock: a thread waiting in
 * a dlopen's constructor for a lock that a thread unwinding here holds
 * would wait forever, a deadlock the program alone does not have.
 *
 * The depth: SHIMTRACE_STACK_DEPTH in the environment (frames above the
 * call site, at most ST_STACK_MAX; `record --stack N` sets it), or what
 * an attach says instead (abi.h), read once; none without it. Allocations
 * are sampled (st_stack_sample): SHIMTRACE_STACK_SAMPLE bytes between two
 * (default 512 KiB; 1: every allocation), read then too. Frames in our
 * own libraries (libshimtrace*.so, whose address ranges are noted then:
 * all are preloaded, so loaded before any constructor runs; an attach
 * loads the families after the core and notes them again) are not the
 * program's: skipped, not counted (the pthread family's thread-start
 * trampoline). errno is preserved.
 */
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "internal.h"

static uint32_t depth;

ST_API uint64_t st_stack_sample;

/* The address ranges of our libraries: [lo, hi) each. */
#define OURS_MAX 8
static struct {
	uintptr_t lo, hi;
} ours[OURS_MAX];
static uint32_t nours;

static int note_ours(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size;
	(void)arg;
	if (!base || strncmp(base + 1, "libshimtrace", 12) != 0 || nours == OURS_MAX)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (lo < hi) {
		ours[nours].lo = lo;
		ours[nours].hi = hi;
		nours++;
	}
	return 0;
}

static int is_ours(uintptr_t pc)
{
	for (uint32_t i = 0; i < nours; i++)
		if (pc >= ours[i].lo && pc < ours[i].hi)
			return 1;
	return 0;
}

/* A number from the environment, or dflt when unset or not a number. */
static unsigned long env_number(const char *name, unsigned long dflt)
{
	const char *v = secure_getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return dflt;
	n = strtoul(v, &end, 10);
	return *end || v[0] == '-' ? dflt : n;
}

void st__stack_note_ours(void)
{
	if (!depth)
		return;
	nours = 0;
	dl_iterate_phdr(note_ours, NULL);
}

void st__stack_init(void)
{
	const struct st_abi_attach *a = st__reg_attach_args();
	unsigned long n = a && a->stack_depth ? a->stack_depth - 1
					      : env_number("SHIMTRACE_STACK_DEPTH", 0);

	depth = n > ST_STACK_MAX ? ST_STACK_MAX : (uint32_t)n;
	if (!depth)
		return;
	st__stack_note_ours();
	n = a && a->stack_sample ? a->stack_sample
				 : env_number("SHIMTRACE_STACK_SAMPLE", 512 * 1024);
	st_store_relaxed(&st_stack_sample, n ? (uint64_t)n : 1);
}

struct walk {
	uint64_t *pcs;
	uint32_t n, max;
	uintptr_t from;
	int found; /* the call site's frame was passed */
};

static _Unwind_Reason_Code frame(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	uintptr_t pc = _Unwind_GetIP(ctx);

	if (!pc)
		return _URC_END_OF_STACK;
	if (!w->found) {
		/* (our own frames, up to the one the wrapper returns into) */
		w->found = pc == w->from;
		return _URC_NO_REASON;
	}
	if (is_ours(pc))
		return _URC_NO_REASON;
	w->pcs[w->n++] = pc;
	return w->n < w->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

ST_API uint32_t st_stack_capture(uint64_t *pcs, uint32_t max, const void *from)
{
	struct walk w = { pcs, 0, max < depth ? max : depth, (uintptr_t)from, 0 };
	int e;

	if (!w.max)
		return 0;
	e = errno;
	_Unwind_Backtrace(frame, &w);
	errno = e;
	return w.n;
}
