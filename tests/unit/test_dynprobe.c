/*
 * Dynamic probes, in-process: specifications parsed and resolved against
 * this program's symbols, and probes planned, relocated, planted and
 * removed on functions written below in assembly, so their first bytes
 * are known -- RIP-relative loads and stores, a short jcc and a call in
 * the displaced bytes, a branch landing inside them, a function too
 * short for a jump, endbr64, an address inside an instruction. Each
 * planted function is run and must compute what it computes unprobed,
 * with the red zone, the flags and the vector registers intact, and the
 * hit function must have been called exactly as often as enabled, with
 * the arguments.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dynprobe/area.h"
#include "dynprobe/reloc.h"
#include "dynprobe/tramp.h"
#include "dynprobe/where.h"
#include "tests/unit/run.h"

long dpt_rip(long x);
long dpt_lea(long i);
long dpt_jcc(long x);
long dpt_call(long x);
long dpt_short(void);
long dpt_intoloop(long n);
long dpt_mid(long a, long b);
long dpt_endbr(long x);
double dpt_fadd(double a, double b);
long dpt_flags(long a, long b);
long dpt_redzone(long x);
void dpt_ymm(const void *in, void *out);
long dpt_split(long x);
long dpt_counter;
long dpt_table[4] = { 10, 20, 30, 40 };

__asm__(".text\n"
	".globl dpt_rip\n.type dpt_rip,@function\n"
	"dpt_rip:\n"
	"  mov dpt_counter(%rip), %rax\n"	/* RIP-relative, first */
	"  add %rdi, %rax\n"
	"  mov %rax, dpt_counter(%rip)\n"
	"  ret\n"
	".size dpt_rip, .-dpt_rip\n"
	".globl dpt_lea\n.type dpt_lea,@function\n"
	"dpt_lea:\n"
	"  lea dpt_table(%rip), %rax\n"
	"  mov (%rax,%rdi,8), %rax\n"
	"  ret\n"
	".size dpt_lea, .-dpt_lea\n"
	".globl dpt_jcc\n.type dpt_jcc,@function\n"
	"dpt_jcc:\n"
	"  test %rdi, %rdi\n"			/* 3 bytes */
	"  je 1f\n"				/* 2: a short jcc, displaced */
	"  lea 1(%rdi), %rax\n"
	"  ret\n"
	"1: mov $100, %eax\n"
	"  ret\n"
	".size dpt_jcc, .-dpt_jcc\n"
	".globl dpt_helper\n.type dpt_helper,@function\n"
	"dpt_helper:\n"
	"  lea 1000(%rdi), %rax\n"
	"  ret\n"
	".size dpt_helper, .-dpt_helper\n"
	".globl dpt_call\n.type dpt_call,@function\n"
	"dpt_call:\n"
	"  call dpt_helper\n"			/* a call, displaced */
	"  add $1, %rax\n"
	"  ret\n"
	".size dpt_call, .-dpt_call\n"
	".globl dpt_short\n.type dpt_short,@function\n"
	"dpt_short:\n"
	"  xor %eax, %eax\n"
	"  ret\n"
	".size dpt_short, .-dpt_short\n"
	".globl dpt_intoloop\n.type dpt_intoloop,@function\n"
	"dpt_intoloop:\n"
	"  xor %eax, %eax\n"			/* 2 bytes */
	"1: add $1, %rax\n"			/* a branch target at +2 */
	"  sub $1, %rdi\n"
	"  jg 1b\n"
	"  ret\n"
	".size dpt_intoloop, .-dpt_intoloop\n"
	".globl dpt_mid\n.type dpt_mid,@function\n"
	"dpt_mid:\n"
	"  lea (%rdi,%rdi,2), %rax\n"		/* 4 bytes */
	"  add %rsi, %rax\n"			/* +4 */
	"  mov %rax, %rdx\n"
	"  mov %rdx, %rax\n"
	"  ret\n"
	".size dpt_mid, .-dpt_mid\n"
	".globl dpt_endbr\n.type dpt_endbr,@function\n"
	"dpt_endbr:\n"
	"  endbr64\n"
	"  lea 7(%rdi), %rax\n"
	"  nop\n"
	"  ret\n"
	".size dpt_endbr, .-dpt_endbr\n"
	".globl dpt_fadd\n.type dpt_fadd,@function\n"
	"dpt_fadd:\n"
	"  addsd %xmm1, %xmm0\n"
	"  ret\n"
	".size dpt_fadd, .-dpt_fadd\n"
	".globl dpt_flags\n.type dpt_flags,@function\n"
	"dpt_flags:\n"
	"  cmp %rsi, %rdi\n"			/* 3 bytes */
	"  mov $0, %eax\n"			/* +3: the flags are live here */
	"  setl %al\n"
	"  ret\n"
	".size dpt_flags, .-dpt_flags\n"
	".globl dpt_redzone\n.type dpt_redzone,@function\n"
	"dpt_redzone:\n"
	"  mov %rdi, -8(%rsp)\n"		/* 5 bytes, into the red zone */
	"  mov $0, %eax\n"			/* +5 */
	"  mov -8(%rsp), %rax\n"
	"  ret\n"
	".size dpt_redzone, .-dpt_redzone\n"
	".globl dpt_ymm\n.type dpt_ymm,@function\n"
	"dpt_ymm:\n"
	"  vmovdqu (%rdi), %ymm2\n"		/* 4 bytes: all 256 bits live */
	"  nop; nop; nop; nop; nop\n"		/* +4 */
	"  vmovdqu %ymm2, (%rsi)\n"
	"  vzeroupper\n"
	"  ret\n"
	".size dpt_ymm, .-dpt_ymm\n"
	".globl dpt_split\n.type dpt_split,@function\n"
	"dpt_split:\n"
	"  test %rdi, %rdi\n"
	"  jne dpt_split.cold\n"		/* +3 */
	"dpt_split_join:\n"
	"  xor %eax, %eax\n"			/* the cold part comes back here */
	"  add $5, %eax\n"
	"  ret\n"
	".size dpt_split, .-dpt_split\n"
	".type dpt_split.cold,@function\n"
	"dpt_split.cold:\n"
	"  mov $7, %edi\n"
	"  jmp dpt_split_join\n"
	".size dpt_split.cold, .-dpt_split.cold\n");

/* ---- the hit function the trampolines call ---- */

static uint32_t enabled;
static bool sse_only; /* the trampolines save the xmm registers, not the ymm */
static bool xinuse, entry; /* their other modes (dynprobe/tramp.h) */
static uint64_t hits, arg0, arg1, caller;

static void test_hit(void *arg, uint64_t *frame)
{
	volatile double clobber = 3.5;

	ck_assert_ptr_eq(arg, &hits);
	hits++;
	arg0 = frame[DP_RDI];
	arg1 = frame[DP_RSI];
	memcpy(&caller, (uint8_t *)frame + DP_FRAME_RSP, 8);
	/* the vector registers and flags are the trampoline's to keep */
	clobber = clobber * 2.0 + (double)hits;
	(void)clobber;
	__asm__ volatile("xorps %%xmm0, %%xmm0; xorps %%xmm1, %%xmm1; cmp %%rsp, %%rsp" ::: "xmm0",
			 "xmm1", "cc");
	/* as glibc's AVX2 functions end, which the event path may reach */
	if (__builtin_cpu_supports("avx"))
		__asm__ volatile("vzeroupper" ::: "xmm0", "xmm1", "xmm2", "xmm3");
}

struct planted {
	uint64_t at;
	uint32_t len;
	uint8_t orig[32];
};

/* Resolves spec in this program. */
static struct dp_where where(const char *text)
{
	struct dp_spec spec;
	struct dp_where w;
	char why[256];

	ck_assert_msg(dp_spec_parse(text, &spec, why, sizeof(why)) == 0, "%s: %s", text, why);
	ck_assert_msg(dp_where(&spec, &w, why, sizeof(why)) == 0, "%s: %s", text, why);
	return w;
}

/* Plans a probe at spec; its dp_plan status, the plan in *plan. */
static int plan_at(const char *spec, struct dp_plan *plan, uint64_t *tramp)
{
	struct dp_where w = where(spec);
	struct dp_code code = { (const uint8_t *)(uintptr_t)w.fn, w.fn, w.fn_size };

	*tramp = dp_area_take(w.at, DP_TRAMP_MAX);
	ck_assert(*tramp != 0);
	return dp_plan(&code, w.at, *tramp + DP_TRAMP_DISPLACED, plan);
}

/* Plans, writes the trampoline and plants the jump at spec. */
static struct planted plant(const char *spec, struct dp_plan *plan)
{
	uint8_t buf[DP_TRAMP_MAX], jump[32];
	struct planted p;
	struct dp_tramp t;
	uint64_t tr;
	int32_t rel;
	size_t n;

	ck_assert_msg(plan_at(spec, plan, &tr) == 0, "%s: %s", spec, plan->why);
	t = (struct dp_tramp){ .addr = tr, .enabled = &enabled, .hit = test_hit, .arg = &hits,
			       .displaced = plan->code, .displaced_len = plan->code_len,
			       .ends = plan->ends, .resume = plan->at + plan->len, .ymm = !sse_only,
			       .xinuse = xinuse, .entry = entry };
	n = dp_tramp_build(&t, buf);
	ck_assert_uint_gt(n, DP_TRAMP_DISPLACED);
	ck_assert_int_eq(dp_write_code(tr, buf, n), 0);
	p.at = plan->at;
	p.len = plan->len;
	memcpy(p.orig, (void *)(uintptr_t)p.at, p.len);
	rel = (int32_t)(int64_t)(tr - (p.at + 5));
	jump[0] = 0xe9;
	memcpy(jump + 1, &rel, 4);
	memset(jump + 5, 0xcc, sizeof(jump) - 5);
	ck_assert_int_eq(dp_write_code(p.at, jump, p.len), 0);
	return p;
}

static void unplant(const struct planted *p)
{
	ck_assert_int_eq(dp_write_code(p->at, p->orig, p->len), 0);
}

/* Calls through a function of ours, so the caller is known. */
static __attribute__((noinline)) long call_rip(long x)
{
	long r = dpt_rip(x);

	__asm__ volatile("" ::: "memory");
	return r;
}

/* ---- specifications ---- */

START_TEST(spec_numbers)
{
	struct dp_spec s;
	char why[256];

	ck_assert_int_eq(dp_spec_parse("0x10", &s, why, sizeof(why)), 0);
	ck_assert_uint_eq(s.off, 16);
	ck_assert_str_eq(s.sym, "");
	ck_assert_int_eq(dp_spec_parse("010", &s, why, sizeof(why)), 0);
	ck_assert_uint_eq(s.off, 8);
	ck_assert_int_eq(dp_spec_parse("10", &s, why, sizeof(why)), 0);
	ck_assert_uint_eq(s.off, 10);
	ck_assert_int_eq(dp_spec_parse("main+0x1f", &s, why, sizeof(why)), 0);
	ck_assert_str_eq(s.sym, "main");
	ck_assert_uint_eq(s.off, 31);
	ck_assert_int_eq(dp_spec_parse("foo+017", &s, why, sizeof(why)), 0);
	ck_assert_uint_eq(s.off, 15);
	ck_assert_int_eq(dp_spec_parse("libc.so.6:puts+4", &s, why, sizeof(why)), 0);
	ck_assert_str_eq(s.lib, "libc.so.6");
	ck_assert_str_eq(s.sym, "puts");
	ck_assert_uint_eq(s.off, 4);
	ck_assert_int_eq(dp_spec_parse("08", &s, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(dp_spec_parse("foo+", &s, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(dp_spec_parse("foo+x", &s, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(dp_spec_parse(":foo", &s, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(dp_spec_parse("fo-o", &s, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(dp_spec_parse("", &s, why, sizeof(why)), -EINVAL);
}
END_TEST

START_TEST(spec_resolved)
{
	struct dp_where w = where("dpt_rip"), w2;
	struct dp_spec s;
	char why[256], text[64];

	ck_assert_uint_eq(w.fn, (uintptr_t)dpt_rip);
	ck_assert_uint_eq(w.at, w.fn);
	ck_assert_uint_gt(w.fn_size, 10);
	ck_assert_str_eq(w.obj, "test_dynprobe");
	w2 = where("test_dynprobe:dpt_rip+7");
	ck_assert_uint_eq(w2.at, w.fn + 7);
	/* an address: the function holding it */
	snprintf(text, sizeof(text), "%#lx", (unsigned long)(uintptr_t)dpt_rip + 3);
	w2 = where(text);
	ck_assert_str_eq(w2.sym, "dpt_rip");
	ck_assert_uint_eq(w2.at, w.fn + 3);
	/* a library's */
	w2 = where("libc:getpid");
	ck_assert_str_eq(w2.sym, "getpid");
	ck_assert(strncmp(w2.obj, "libc.so", 7) == 0);
	/* what is not there */
	ck_assert_int_eq(dp_spec_parse("no_such_function_here", &s, why, sizeof(why)), 0);
	ck_assert_int_eq(dp_where(&s, &w2, why, sizeof(why)), -ENOENT);
	ck_assert_int_eq(dp_spec_parse("dpt_rip+4096", &s, why, sizeof(why)), 0);
	ck_assert_int_eq(dp_where(&s, &w2, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(dp_spec_parse("nosuchlib:dpt_rip", &s, why, sizeof(why)), 0);
	ck_assert_int_eq(dp_where(&s, &w2, why, sizeof(why)), -ENOENT);
	ck_assert_msg(strstr(why, "no loaded object") != NULL, "%s", why);
	/* an IFUNC names its resolver */
	ck_assert_int_eq(dp_spec_parse("libc:strlen", &s, why, sizeof(why)), 0);
	ck_assert_int_eq(dp_where(&s, &w2, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "IFUNC") != NULL, "%s", why);
}
END_TEST

/* ---- planning ---- */

START_TEST(refuses_inside_an_instruction)
{
	struct dp_plan plan;
	uint64_t tr;

	ck_assert_int_eq(plan_at("dpt_mid+1", &plan, &tr), -EINVAL);
	ck_assert_msg(strstr(plan.why, "not an instruction boundary") != NULL, "%s", plan.why);
	ck_assert_int_eq(plan_at("dpt_rip+2", &plan, &tr), -EINVAL);
}
END_TEST

START_TEST(refuses_too_short)
{
	struct dp_plan plan;
	uint64_t tr;

	ck_assert_int_eq(plan_at("dpt_short", &plan, &tr), -ENOSPC);
	ck_assert_msg(strstr(plan.why, "does not fit") != NULL, "%s", plan.why);
	/* and near a function's end */
	ck_assert_int_eq(plan_at("dpt_rip+17", &plan, &tr), -ENOSPC);
}
END_TEST

/* Planned as probes.c plans: the function's parts checked too. */
static int plan_with_parts(const char *spec, struct dp_plan *plan)
{
	struct dp_where w = where(spec);
	struct dp_code code = { (const uint8_t *)(uintptr_t)w.fn, w.fn, w.fn_size };
	uint64_t tr = dp_area_take(w.at, DP_TRAMP_MAX);
	int ret = dp_plan(&code, w.at, tr + DP_TRAMP_DISPLACED, plan);

	for (uint32_t k = 0; ret == 0 && k < w.nparts; k++) {
		struct dp_code part = { (const uint8_t *)(uintptr_t)w.part[k], w.part[k],
					w.part_size[k] };

		ret = dp_plan_check_part(&part, plan);
	}
	return ret;
}

START_TEST(refuses_branch_from_cold_part)
{
	struct dp_where w = where("dpt_split");
	struct dp_plan plan;

	ck_assert_uint_eq(w.nparts, 1);
	ck_assert_int_eq(plan_with_parts("dpt_split+3", &plan), -ENOTSUP);
	ck_assert_msg(strstr(plan.why, "lands at") != NULL, "%s", plan.why);
	/* the function's own sweep alone sees no such branch */
	{
		uint64_t tr;

		ck_assert_int_eq(plan_at("dpt_split+3", &plan, &tr), 0);
	}
	/* at the entry, the part's branch lands past the bytes replaced */
	ck_assert_int_eq(plan_with_parts("dpt_split", &plan), 0);
	/* and from the part's side: the function is a part of it */
	ck_assert_uint_eq(where("dpt_split.cold").nparts, 1);
	ck_assert_int_eq(dpt_split(0), 5);
	ck_assert_int_eq(dpt_split(1), 5);
}
END_TEST

START_TEST(refuses_branch_inside)
{
	struct dp_plan plan;
	uint64_t tr;

	ck_assert_int_eq(plan_at("dpt_intoloop", &plan, &tr), -ENOTSUP);
	ck_assert_msg(strstr(plan.why, "lands at") != NULL, "%s", plan.why);
	/* on the first byte is fine: the jump is there */
	ck_assert_int_eq(plan_at("dpt_intoloop+2", &plan, &tr), 0);
}
END_TEST

/* ---- planted and run ---- */

START_TEST(rip_relative_first)
{
	struct dp_plan plan;
	struct planted p = plant("dpt_rip", &plan);

	ck_assert_uint_eq(plan.ninsn, 1);
	ck_assert_uint_eq(plan.nriprel, 1);
	dpt_counter = 0;
	enabled = 1;
	ck_assert_int_eq(call_rip(5), 5);
	ck_assert_int_eq(call_rip(7), 12);
	ck_assert_uint_eq(hits, 2);
	ck_assert_uint_eq(arg0, 7);
	ck_assert_msg(caller > (uintptr_t)call_rip && caller < (uintptr_t)call_rip + 64,
		      "caller %#lx, call_rip %p", (unsigned long)caller, (void *)call_rip);
	enabled = 0;
	ck_assert_int_eq(call_rip(1), 13);
	ck_assert_uint_eq(hits, 2);
	enabled = 1;
	unplant(&p);
	ck_assert_int_eq(call_rip(1), 14);
	ck_assert_uint_eq(hits, 2);
	ck_assert_int_eq(dpt_counter, 14);
}
END_TEST

START_TEST(rip_relative_lea)
{
	struct dp_plan plan;

	plant("dpt_lea", &plan);
	enabled = 1;
	for (long i = 0; i < 4; i++)
		ck_assert_int_eq(dpt_lea(i), 10 * (i + 1));
	ck_assert_uint_eq(hits, 4);
	ck_assert_uint_eq(arg0, 3);
}
END_TEST

START_TEST(short_jcc_displaced)
{
	struct dp_plan plan;

	plant("dpt_jcc", &plan);
	ck_assert_uint_eq(plan.ninsn, 2);
	ck_assert_uint_eq(plan.nriprel, 1);
	enabled = 1;
	ck_assert_int_eq(dpt_jcc(0), 100);
	ck_assert_int_eq(dpt_jcc(41), 42);
	ck_assert_uint_eq(hits, 2);
}
END_TEST

START_TEST(call_displaced)
{
	struct dp_plan plan;

	plant("dpt_call", &plan);
	enabled = 1;
	ck_assert_int_eq(dpt_call(1), 1002);
	ck_assert_uint_eq(hits, 1);
	ck_assert_uint_eq(arg0, 1);
}
END_TEST

START_TEST(mid_function)
{
	struct dp_plan plan;
	struct planted p = plant("dpt_mid+4", &plan);

	ck_assert_uint_eq(p.at, (uintptr_t)dpt_mid + 4);
	enabled = 1;
	ck_assert_int_eq(dpt_mid(2, 5), 11);
	ck_assert_uint_eq(hits, 1);
	ck_assert_uint_eq(arg1, 5);
}
END_TEST

START_TEST(after_endbr64)
{
	struct dp_where w = where("dpt_endbr");
	struct dp_code code = { (const uint8_t *)(uintptr_t)w.fn, w.fn, w.fn_size };
	struct dp_plan plan;

	ck_assert(dp_is_endbr64(&code, w.fn));
	plant("dpt_endbr+4", &plan);
	enabled = 1;
	ck_assert_int_eq(dpt_endbr(1), 8);
	ck_assert_uint_eq(hits, 1);
	ck_assert_int_eq(memcmp((void *)(uintptr_t)dpt_endbr, "\xf3\x0f\x1e\xfa", 4), 0);
}
END_TEST

START_TEST(registers_kept)
{
	struct dp_plan plan;

	plant("dpt_fadd", &plan);
	plant("dpt_flags+3", &plan);
	plant("dpt_redzone+5", &plan);
	enabled = 1;
	ck_assert(dpt_fadd(1.25, 2.5) == 3.75);
	ck_assert_int_eq(dpt_flags(1, 2), 1);
	ck_assert_int_eq(dpt_flags(2, 1), 0);
	ck_assert_int_eq(dpt_redzone(0x1234567), 0x1234567);
	ck_assert_uint_eq(hits, 4);
}
END_TEST

START_TEST(registers_kept_sse)
{
	sse_only = true;
	registers_kept_fn(0);
}
END_TEST

START_TEST(registers_kept_xinuse)
{
	xinuse = true;
	registers_kept_fn(0);
}
END_TEST

START_TEST(function_entry_mode)
{
	struct dp_plan plan;

	entry = xinuse = true;
	plant("dpt_rip", &plan);
	plant("dpt_fadd", &plan);
	dpt_counter = 0;
	enabled = 1;
	ck_assert_int_eq(call_rip(3), 3);
	ck_assert_uint_eq(arg0, 3);
	ck_assert(dpt_fadd(0.5, 0.25) == 0.75);
	ck_assert_uint_eq(hits, 2);
}
END_TEST

/* The upper halves of a live ymm register survive a hit (whose event
 * path may run vzeroupper). */
static void ymm_kept(void)
{
	uint8_t in[32], out[32];
	struct dp_plan plan;

	if (!__builtin_cpu_supports("avx"))
		return;
	for (int i = 0; i < 32; i++)
		in[i] = (uint8_t)(i * 7 + 1);
	plant("dpt_ymm+4", &plan);
	enabled = 1;
	dpt_ymm(in, out);
	ck_assert_uint_eq(hits, 1);
	ck_assert_int_eq(memcmp(in, out, 32), 0);
}

START_TEST(ymm_kept_saved)
{
	ymm_kept();
}
END_TEST

START_TEST(ymm_kept_xinuse)
{
	xinuse = true;
	ymm_kept();
}
END_TEST

START_TEST(areas_near)
{
	uint64_t near = (uintptr_t)dpt_rip, a = dp_area_take(near, 640), b = dp_area_take(near, 640);

	ck_assert(a && b && b >= a + 640);
	ck_assert_uint_lt(a > near ? a - near : near - a, (uint64_t)2 << 30);
	ck_assert_uint_eq(a % 64, 0);
}
END_TEST

int main(void)
{
	return st_run_tests("dynprobe",
			    ST_TESTS(spec_numbers, spec_resolved, refuses_inside_an_instruction,
				     refuses_too_short, refuses_branch_inside,
				     refuses_branch_from_cold_part, rip_relative_first,
				     rip_relative_lea, short_jcc_displaced, call_displaced,
				     mid_function, after_endbr64, registers_kept, registers_kept_sse,
				     registers_kept_xinuse, function_entry_mode, ymm_kept_saved,
				     ymm_kept_xinuse, areas_near));
}
