/*
 * The per-CPU commit as a restartable sequence, x86-64 (rseq.h).
 *
 * The kernel knows the critical section by a descriptor (struct rseq_cs:
 * its first instruction, its length, where to go on abort) that the thread
 * points its rseq area's rseq_cs field at before entering. If the thread is
 * preempted, migrated or gets a signal while its instruction pointer is in
 * [start, start + length), the kernel, on the way back to user space, moves
 * it to the abort address, which must follow the 4-byte signature RSEQ_SIG
 * (glibc registered its areas with it). The last instruction of the range
 * is the commit, a 16-byte store; once it has run, the sequence is done and
 * cannot be restarted.
 *
 * Nothing here changes errno, takes a lock, or calls anything: the event
 * path may call it from a signal handler.
 *
 * Owns: nothing.
 * Layer 1 (core/internal.h): uses no other file of core/.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/rseq.h>

#include "rseq.h"

/* Where glibc put each thread's rseq area, from the thread pointer, and
 * its size; looked up at run time, so that the library still loads with
 * a glibc older than 2.35 (which registers none): then the size stays 0. */
ptrdiff_t st__rseq_offset;
static unsigned int area_size;

void st__rseq_init(void)
{
	const ptrdiff_t *offset = dlsym(RTLD_DEFAULT, "__rseq_offset");
	const unsigned int *size = dlsym(RTLD_DEFAULT, "__rseq_size");

	if (offset && size) {
		st__rseq_offset = *offset;
		area_size = *size;
	}
}

bool st__rseq_usable(void)
{
	/* (the size is 0 when glibc did not register: the tunable
	 * glibc.pthread.rseq=0, or a kernel or a seccomp filter that refused) */
	return area_size >= offsetof(struct rseq, flags) + sizeof(uint32_t) &&
	       (int32_t)__atomic_load_n(&st__rseq_area()->cpu_id, __ATOMIC_RELAXED) >= 0;
}

#if !defined(__x86_64__)
#error "the per-CPU commit is written for x86-64 only"
#endif

__attribute__((noinline)) enum st_rseq_result st__rseq_commit(const struct st_rseq_op *op)
{
	struct rseq *rs = st__rseq_area();
	uint32_t res;

	__asm__ __volatile__(
		ST_RSEQ_ENTER
		/* (before the section: what the commit stores) */
		"movq %c[lo](%[op]), %%xmm0\n\t"
		"movq %c[hi](%[op]), %%xmm1\n\t"
		"punpcklqdq %%xmm1, %%xmm0\n\t"
		"movq %c[src](%[op]), %%rsi\n\t"
		"movq %c[dst](%[op]), %%rdi\n\t"
		"movq %c[words](%[op]), %%rcx\n\t"
		"movq %c[store](%[op]), %%r8\n\t"
		"movl %c[cpu](%[op]), %%edx\n"
		"1:\n\t"
		"cmpl %c[cpu_id](%[rs]), %%edx\n\t"
		"jne 5f\n\t"
		"movq %c[cmp0](%[op]), %%rax\n\t"
		"movq (%%rax), %%rax\n\t"
		"cmpq %c[exp0](%[op]), %%rax\n\t"
		"jne 5f\n\t"
		"movq %c[cmp1](%[op]), %%rax\n\t"
		"movq (%%rax), %%rax\n\t"
		"cmpq %c[exp1](%[op]), %%rax\n\t"
		"jne 5f\n\t"
		"movq %c[cmp2](%[op]), %%rax\n\t"
		"movq (%%rax), %%rax\n\t"
		"cmpq %c[exp2](%[op]), %%rax\n\t"
		"jne 5f\n\t"
		"testq %%rcx, %%rcx\n\t"
		"jz 7f\n"
		/* (downwards: a control's sequence, its first word, is
		 * stored last) */
		"8:\n\t"
		"movq -8(%%rsi, %%rcx, 8), %%rax\n\t"
		"movq %%rax, -8(%%rdi, %%rcx, 8)\n\t"
		"decq %%rcx\n\t"
		"jnz 8b\n"
		"7:\n\t"
		/* the commit: x86-64 keeps stores in order, so another CPU that
		 * sees it sees the copy */
		"movdqu %%xmm0, (%%r8)\n"
		"2:\n\t"
		"xorl %[res], %[res]\n\t"
		"jmp 6f\n"
		"5:\n\t"
		"movl $1, %[res]\n\t"
		"jmp 6f\n"
		"9:\n\t"
		"movl $2, %[res]\n\t"
		"jmp 6f\n\t"
		ST_RSEQ_ABORT("9b")
		"6:\n"
		: [res] "=&r"(res)
		: [op] "r"(op), [rs] "r"(rs), [cs] "i"(offsetof(struct rseq, rseq_cs)),
		  [cpu_id] "i"(offsetof(struct rseq, cpu_id)),
		  [lo] "i"(offsetof(struct st_rseq_op, lo)), [hi] "i"(offsetof(struct st_rseq_op, hi)),
		  [src] "i"(offsetof(struct st_rseq_op, src)),
		  [dst] "i"(offsetof(struct st_rseq_op, dst)),
		  [words] "i"(offsetof(struct st_rseq_op, words)),
		  [store] "i"(offsetof(struct st_rseq_op, store)),
		  [cpu] "i"(offsetof(struct st_rseq_op, cpu)),
		  [cmp0] "i"(offsetof(struct st_rseq_op, cmp[0])),
		  [cmp1] "i"(offsetof(struct st_rseq_op, cmp[1])),
		  [cmp2] "i"(offsetof(struct st_rseq_op, cmp[2])),
		  [exp0] "i"(offsetof(struct st_rseq_op, expect[0])),
		  [exp1] "i"(offsetof(struct st_rseq_op, expect[1])),
		  [exp2] "i"(offsetof(struct st_rseq_op, expect[2]))
		: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "xmm0", "xmm1", "memory", "cc");
	return (enum st_rseq_result)res;
}
