/*
 * Trampolines: the code a probe's jump leads to.
 *
 *   0  lea -128(%rsp),%rsp      the red zone of a leaf function is live
 *      push %rcx                 (a probe may be anywhere in one)
 *      movabs $enabled,%rcx
 *      mov (%rcx),%ecx
 *      jrcxz off                 tests without touching the flags, which
 *      pop %rcx                  may be live at a bare probe
 *      lea 128(%rsp),%rsp
 *      jmp slow
 *   off: pop %rcx
 *      lea 128(%rsp),%rsp
 *  43  <displaced instructions, relocated>
 *      jmp resume                (rel32: the trampoline is within 2 GiB)
 *   slow:
 *      lea -128(%rsp),%rsp
 *      pushfq; cld               (the C ABI wants the direction flag clear)
 *      push rax rcx rdx rsi rdi r8 r9 r10 r11 rbx
 *      mov %rsp,%rbx; and $-16,%rsp
 *      sub $512,%rsp
 *      AVX state in use (xgetbv 1)?
 *        yes: vmovdqu %ymm0-15 to it; vzeroupper; call; vmovdqu back
 *        no:  movdqu %xmm0-15 to it; call; movdqu back
 *          (call: movabs $arg,%rdi; mov %rbx,%rsi; movabs $hit,%rax;
 *           call *%rax)
 *      mov %rbx,%rsp
 *      pop rbx r11 r10 r9 r8 rdi rsi rdx rcx rax; popfq
 *      lea 128(%rsp),%rsp
 *      jmp 43
 *
 * A disabled probe costs two jumps, one load and a few register moves;
 * the probed code's registers, flags and vector registers (the low 256
 * bits: glibc's AVX2 string functions, which the slow path of an event
 * may reach, clear the upper halves) come back as they were. AVX-512's
 * upper registers and the x87 state are not saved: nothing on the event
 * path uses them. Saving the ymm registers and calling SSE code with
 * their upper halves dirty cost ~100 ns a hit (AVX-SSE transitions,
 * bench/run-dynprobe.sh): hence the vzeroupper, and the 128-bit saves
 * when the upper halves are known clean. At a function's entry the ABI
 * says the flags, the direction flag and xmm8-15 hold nothing the
 * function reads: a function-entry probe keeps neither (popfq alone
 * costs ~7 ns).
 */
#include <string.h>

#include "dynprobe/tramp.h"

struct out {
	uint8_t *p;
	size_t n;
};

static void emit(struct out *o, const void *bytes, size_t n)
{
	memcpy(o->p + o->n, bytes, n);
	o->n += n;
}

#define EMIT(o, ...)                                          \
	do {                                                  \
		static const uint8_t b_[] = { __VA_ARGS__ };  \
		emit(o, b_, sizeof(b_));                      \
	} while (0)

static void emit64(struct out *o, uint64_t v)
{
	emit(o, &v, 8);
}

static void emit32(struct out *o, int32_t v)
{
	emit(o, &v, 4);
}

/* jmp rel32 from the current end to target; false when out of reach. */
static bool jump(struct out *o, uint64_t base, uint64_t target)
{
	int64_t rel = (int64_t)(target - (base + o->n + 5));

	if (rel < INT32_MIN || rel > INT32_MAX)
		return false;
	EMIT(o, 0xe9);
	emit32(o, (int32_t)rel);
	return true;
}

/* (v)movdqu between vector register r and r * size(%rsp): store or load. */
static void vmove(struct out *o, unsigned r, bool ymm, bool store)
{
	uint8_t modrm = (uint8_t)(0x84 | (r & 7) << 3);
	int32_t disp = (int32_t)(r * (ymm ? 32 : 16));
	uint8_t op = store ? 0x7f : 0x6f;

	if (ymm) {
		/* VEX.256.F3.0F 7F/6F: two-byte VEX, R inverted */
		uint8_t vex[2] = { 0xc5, (uint8_t)((r < 8 ? 0x80 : 0) | 0x78 | 0x04 | 0x02) };

		emit(o, vex, 2);
	} else {
		EMIT(o, 0xf3);
		if (r >= 8)
			EMIT(o, 0x44);
		EMIT(o, 0x0f);
	}
	emit(o, &op, 1);
	emit(o, &modrm, 1);
	EMIT(o, 0x24);
	emit32(o, disp);
}

static void patch32(uint8_t *buf, size_t at, size_t rel)
{
	int32_t v = (int32_t)rel;

	memcpy(buf + at, &v, 4);
}

/*
 * The vector registers saved at (%rsp), the hit function called, and
 * them restored: the 256-bit ones then vzeroupper before the call (so the
 * SSE code of the event path pays no AVX transition; they come back
 * as they were after it), or the 128-bit ones only (legacy SSE moves,
 * which leave the upper halves as they are: used when they are all zero).
 */
static void hit_call(struct out *o, const struct dp_tramp *t, bool ymm)
{
	unsigned nregs = t->entry ? 8 : 16; /* (xmm8-15 hold nothing at an entry) */

	for (unsigned r = 0; r < nregs; r++)
		vmove(o, r, ymm, true);
	if (ymm)
		EMIT(o, 0xc5, 0xf8, 0x77);	/* vzeroupper */
	EMIT(o, 0x48, 0xbf);			/* movabs $arg,%rdi */
	emit64(o, (uint64_t)(uintptr_t)t->arg);
	EMIT(o, 0x48, 0x89, 0xde);		/* mov %rbx,%rsi */
	EMIT(o, 0x48, 0xb8);			/* movabs $hit,%rax */
	emit64(o, (uint64_t)(uintptr_t)t->hit);
	EMIT(o, 0xff, 0xd0);			/* call *%rax */
	for (unsigned r = 0; r < nregs; r++)
		vmove(o, r, ymm, false);
}

size_t dp_tramp_build(const struct dp_tramp *t, uint8_t *buf)
{
	struct out o = { buf, 0 };
	size_t slow_jump;

	/* the test */
	EMIT(&o, 0x48, 0x8d, 0x64, 0x24, 0x80); /* lea -0x80(%rsp),%rsp */
	EMIT(&o, 0x51);				/* push %rcx */
	EMIT(&o, 0x48, 0xb9);			/* movabs $enabled,%rcx */
	emit64(&o, (uint64_t)(uintptr_t)t->enabled);
	EMIT(&o, 0x8b, 0x09);			/* mov (%rcx),%ecx */
	EMIT(&o, 0xe3, 14);			/* jrcxz off */
	EMIT(&o, 0x59);				/* pop %rcx */
	EMIT(&o, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00); /* lea 0x80(%rsp),%rsp */
	slow_jump = o.n;
	EMIT(&o, 0xe9, 0, 0, 0, 0);		/* jmp slow (below) */
	/* off: */
	EMIT(&o, 0x59);
	EMIT(&o, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00);
	if (o.n != DP_TRAMP_DISPLACED)
		return 0;
	emit(&o, t->displaced, t->displaced_len);
	if (!t->ends && !jump(&o, t->addr, t->resume))
		return 0;
	/* slow: */
	{
		int32_t rel = (int32_t)(o.n - (slow_jump + 5));

		memcpy(buf + slow_jump + 1, &rel, 4);
	}
	EMIT(&o, 0x48, 0x8d, 0x64, 0x24, 0x80);	/* lea -0x80(%rsp),%rsp */
	if (t->entry)
		EMIT(&o, 0x48, 0x8d, 0x64, 0x24, 0xf8); /* lea -8(%rsp),%rsp: the flags' place */
	else
		EMIT(&o, 0x9c, 0xfc);		/* pushfq; cld */
	EMIT(&o, 0x50, 0x51, 0x52, 0x56, 0x57);	/* push rax rcx rdx rsi rdi */
	EMIT(&o, 0x41, 0x50, 0x41, 0x51, 0x41, 0x52, 0x41, 0x53); /* push r8-r11 */
	EMIT(&o, 0x53);				/* push rbx */
	EMIT(&o, 0x48, 0x89, 0xe3);		/* mov %rsp,%rbx */
	EMIT(&o, 0x48, 0x83, 0xe4, 0xf0);	/* and $-16,%rsp */
	EMIT(&o, 0x48, 0x81, 0xec, 0x00, 0x02, 0x00, 0x00); /* sub $512,%rsp */
	if (!t->ymm) {
		hit_call(&o, t, false);
	} else if (t->xinuse) {
		size_t jz, jmp;

		EMIT(&o, 0xb9, 0x01, 0x00, 0x00, 0x00); /* mov $1,%ecx */
		EMIT(&o, 0x0f, 0x01, 0xd0);		/* xgetbv: XINUSE */
		EMIT(&o, 0xa8, 0x04);			/* test $4,%al: AVX state in use */
		jz = o.n;
		EMIT(&o, 0x0f, 0x84, 0, 0, 0, 0);	/* jz sse */
		hit_call(&o, t, true);
		jmp = o.n;
		EMIT(&o, 0xe9, 0, 0, 0, 0);		/* jmp done */
		patch32(buf, jz + 2, o.n - (jz + 6));	/* sse: */
		hit_call(&o, t, false);
		patch32(buf, jmp + 1, o.n - (jmp + 5)); /* done: */
	} else {
		hit_call(&o, t, true);
	}
	EMIT(&o, 0x48, 0x89, 0xdc);		/* mov %rbx,%rsp */
	EMIT(&o, 0x5b);				/* pop rbx */
	EMIT(&o, 0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58); /* pop r11-r8 */
	EMIT(&o, 0x5f, 0x5e, 0x5a, 0x59, 0x58);	/* pop rdi rsi rdx rcx rax */
	if (t->entry)
		EMIT(&o, 0x48, 0x8d, 0x64, 0x24, 0x08); /* lea 8(%rsp),%rsp */
	else
		EMIT(&o, 0x9d);			/* popfq */
	EMIT(&o, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00); /* lea 0x80(%rsp),%rsp */
	if (!jump(&o, t->addr, t->addr + DP_TRAMP_DISPLACED))
		return 0;
	return o.n;
}
