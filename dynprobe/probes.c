/*
 * The table of this process's dynamic probes: planning a probe (where it
 * goes, what it displaces, its trampoline, its tracepoint) and its
 * removal. What is planned is written into the probed code by the caller
 * with every other thread stopped: an inspector through ptrace
 * (ctl/inspect/dynprobe.c), or main.c when the process is still
 * single-threaded, before main().
 *
 * Every probe is a tracepoint probe:NAME of one provider whose state page
 * is dp_state, slot = its index in the table; enabling it is the daemon's
 * business like any other tracepoint's. A removed probe keeps its entry,
 * slot, tracepoint and trampoline (a thread may still be running in the
 * trampoline): planting it again at the same place reuses them.
 *
 * Serialised by the callers (main.c's busy flag). Never on the event
 * path.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "core/abi.h"
#include "core/sys.h"
#include "dynprobe/area.h"
#include "dynprobe/probes.h"
#include "dynprobe/reloc.h"
#include "dynprobe/tramp.h"

static struct dp_probe probes[DP_MAX_PROBES];
static const struct st_tracepoint *ptrs[DP_MAX_PROBES];
static uint32_t nprobes;

static int say(struct dp_reply *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int say(struct dp_reply *r, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = status;
	return status;
}

static struct dp_probe *find(const char *name)
{
	for (uint32_t i = 0; i < nprobes; i++)
		if (strcmp(probes[i].name, name) == 0)
			return &probes[i];
	return NULL;
}

/* Whether AVX state is on (the trampolines then save the ymm registers). */
static bool avx(void)
{
	uint32_t a, b, c, d, lo, hi;

	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!(c & (1u << 27)) || !(c & (1u << 28)))
		return false;
	__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo & 6) == 6;
}

/* Whether xgetbv(1) tells which state components are in use. */
static bool xinuse(void)
{
	uint32_t a, b, c, d;

	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(1));
	return a & (1u << 2);
}

/*
 * A private copy of function w's code with the original bytes of the
 * probes planted in it put back (their jumps would break the decoding);
 * NULL when out of memory.
 */
static uint8_t *pristine(const struct dp_where *w, struct dp_reply *r)
{
	uint8_t *copy = st__mmap(NULL, w->fn_size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!copy) {
		say(r, -ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(copy, (const void *)(uintptr_t)w->fn, w->fn_size);
	for (uint32_t i = 0; i < nprobes; i++) {
		const struct dp_probe *p = &probes[i];

		if (p->state == DP_PLANTED && p->at >= w->fn && p->at + p->len <= w->fn + w->fn_size)
			memcpy(copy + (p->at - w->fn), p->orig, p->len);
	}
	return copy;
}

static void set_tracepoint(struct dp_probe *p, uint32_t kind)
{
	p->tp.provider = DP_PROVIDER;
	p->tp.name = p->name;
	p->tp.fields = kind == DP_FUNCTION ? dp_fields_function : dp_fields_bare;
	p->tp.nfields = kind == DP_FUNCTION ? 6 : 0;
	p->tp.slot = (uint32_t)(p - probes);
	p->tp.state = &dp_state;
	p->kind = kind;
}

int dp_add(uint32_t kind, const char *name, const char *spec_text, struct dp_reply *r)
{
	char why[DP_MSG_MAX - 100], own[64];
	struct dp_spec spec;
	struct dp_where w;
	struct dp_plan plan;
	struct dp_probe *p;
	struct dp_code code;
	struct dp_tramp t;
	uint8_t tramp[DP_TRAMP_MAX], *copy;
	uint64_t at, tr;
	size_t n;
	bool is_new, endbr = false;
	int ret;

	memset(r, 0, sizeof(*r));
	if (dp_spec_parse(spec_text, &spec, why, sizeof(why)) < 0)
		return say(r, -EINVAL, "'%s': %s", spec_text, why);
	ret = dp_where(&spec, &w, why, sizeof(why));
	if (ret < 0)
		return say(r, ret, "%s", why);
	if (strncmp(w.obj, "libshimtrace", 12) == 0 || strncmp(w.obj, "libcapstone", 11) == 0)
		return say(r, -EPERM, "%s is in %s: the tracer's own code is not probed", w.sym,
			   w.obj);
	if (name && *name && strcmp(name, "-") != 0) {
		dp_name_from(name, own, sizeof(own));
		if (strcmp(own, name) != 0 || !st_abi_name_valid(name))
			return say(r, -EINVAL, "'%s' is not a tracepoint name (letters, digits and "
				   "'_', up to 63)", name);
	} else if (!dp_spec_default_name(&spec, own, sizeof(own))) {
		char tmp[DP_SPEC_MAX + 32];

		if (w.at == w.fn)
			snprintf(tmp, sizeof(tmp), "%s", w.sym);
		else
			snprintf(tmp, sizeof(tmp), "%s_0x%" PRIx64, w.sym, w.at - w.fn);
		dp_name_from(tmp, own, sizeof(own));
	}
	snprintf(r->name, sizeof(r->name), "%s", own);
	at = w.at;
	code = (struct dp_code){ (const uint8_t *)(uintptr_t)w.fn, w.fn, w.fn_size };
	if (dp_is_endbr64(&code, at) && (kind == DP_FUNCTION || at == w.fn)) {
		at += 4; /* the landing pad of indirect branches stays first */
		endbr = true;
	}
	p = find(own);
	if (p && p->state == DP_PLANTED)
		return say(r, -EEXIST, "probe:%s is already planted at 0x%" PRIx64, own, p->at);
	if (p && p->kind != kind)
		return say(r, -EEXIST, "probe:%s was a %s probe: choose another name", own,
			   p->kind == DP_FUNCTION ? "function-entry" : "bare");
	if (!p && nprobes == DP_MAX_PROBES)
		return say(r, -ENOSPC, "%d probes already: no room for another", DP_MAX_PROBES);
	copy = pristine(&w, r);
	if (!copy)
		return r->status;
	code.bytes = copy;
	tr = p && p->at == at && p->tramp ? p->tramp : dp_area_take(at, DP_TRAMP_MAX);
	if (!tr) {
		st__munmap(copy, w.fn_size);
		return say(r, -ENOMEM, "no memory can be mapped within 2 GiB of 0x%" PRIx64
			   " for the trampoline", at);
	}
	ret = dp_plan(&code, at, tr + DP_TRAMP_DISPLACED, &plan);
	st__munmap(copy, w.fn_size);
	for (uint32_t k = 0; ret == 0 && k < w.nparts; k++) {
		struct dp_code part = { (const uint8_t *)(uintptr_t)w.part[k], w.part[k],
					w.part_size[k] };

		ret = dp_plan_check_part(&part, &plan);
	}
	if (ret < 0)
		return say(r, ret, "%s+0x%" PRIx64 " in %s: refused: %s", w.sym, at - w.fn, w.obj,
			   plan.why);
	if (plan.len > DP_PATCH_MAX)
		return say(r, -ENOTSUP, "the instructions at 0x%" PRIx64 " are too long", at);
	for (uint32_t i = 0; i < nprobes; i++)
		if (probes[i].state == DP_PLANTED && probes[i].at < at + plan.len &&
		    at < probes[i].at + probes[i].len)
			return say(r, -EEXIST, "probe:%s replaces bytes there already (0x%" PRIx64
				   ", %u bytes)", probes[i].name, probes[i].at, probes[i].len);
	is_new = !p;
	if (is_new) {
		p = &probes[nprobes];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", own);
		set_tracepoint(p, kind);
	}
	t = (struct dp_tramp){
		.addr = tr,
		.enabled = &dp_state.mask[p->tp.slot],
		.hit = dp_hit,
		.arg = p,
		.displaced = plan.code,
		.displaced_len = plan.code_len,
		.ends = plan.ends,
		.resume = at + plan.len,
		.ymm = avx(),
		.xinuse = avx() && xinuse(),
		.entry = kind == DP_FUNCTION && (at == w.fn || (endbr && at == w.fn + 4)),
	};
	n = dp_tramp_build(&t, tramp);
	if (!n || (ret = dp_write_code(tr, tramp, n)) < 0)
		return say(r, n ? ret : -ENOTSUP, "cannot write the trampoline at 0x%" PRIx64, tr);
	p->at = at;
	p->len = plan.len;
	p->tramp = tr;
	memcpy(p->orig, (const void *)(uintptr_t)at, plan.len);
	{
		int32_t rel = (int32_t)(int64_t)(tr - (at + DP_JUMP_LEN));

		p->jump[0] = 0xe9;
		memcpy(p->jump + 1, &rel, 4);
		/* (the rest of the displaced bytes: never run, as no branch
		 * lands there; a trap if anything ever did) */
		memset(p->jump + DP_JUMP_LEN, 0xcc, plan.len - DP_JUMP_LEN);
	}
	if (is_new) {
		ptrs[nprobes] = &p->tp;
		nprobes++;
		st_tracepoints_register(&ptrs[nprobes - 1], &ptrs[nprobes]);
	}
	p->state = DP_PREPARED;
	r->at = at;
	r->len = plan.len;
	memcpy(r->bytes, p->jump, plan.len);
	memcpy(r->expect, p->orig, plan.len);
	r->state_addr = (uint64_t)(uintptr_t)&p->state;
	r->new_state = DP_PLANTED;
	return say(r, 0, "probe:%s at %s+0x%" PRIx64 " (0x%" PRIx64 ") in %s: a jump; %u "
		   "instruction%s (%u bytes) moved to the trampoline, %u RIP-relative%s",
		   p->name, w.sym, at - w.fn, at, w.obj, plan.ninsn, plan.ninsn == 1 ? "" : "s",
		   plan.len, plan.nriprel, endbr ? ", after endbr64" : "");
}

int dp_remove(const char *name, struct dp_reply *r)
{
	struct dp_probe *p = find(name);

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	if (!p || p->state == DP_EMPTY)
		return say(r, -ENOENT, "no probe:%s in this process", name);
	if (p->state == DP_REMOVED || p->state == DP_PREPARED) {
		p->state = DP_REMOVED;
		return say(r, -EALREADY, "probe:%s is not planted", name);
	}
	r->at = p->at;
	r->len = p->len;
	memcpy(r->bytes, p->orig, p->len);
	memcpy(r->expect, p->jump, p->len);
	r->state_addr = (uint64_t)(uintptr_t)&p->state;
	r->new_state = DP_REMOVED;
	return say(r, 0, "probe:%s removed from 0x%" PRIx64 ": its %u original bytes are back",
		   name, p->at, p->len);
}
