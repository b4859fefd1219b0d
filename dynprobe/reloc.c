/*
 * Relocating the instructions a probe displaces, with capstone.
 *
 * A probe replaces the instructions at its address with a 5-byte jump to
 * its trampoline, which runs them elsewhere and jumps back after them.
 * That is sound only if
 *   - the address starts an instruction: the function is decoded from its
 *     first byte, the way the processor runs it (a linear sweep; code
 *     that hides data inside a function cannot be planned);
 *   - the displaced instructions lie inside the function (a jump written
 *     past its end would break the next one);
 *   - no branch of the function lands inside them but on the first:
 *     after the patch those bytes hold the jump's operand (uftrace's
 *     dynamic patching checks only the displaced bytes themselves); nor
 *     a branch of the parts of the function the compiler placed apart
 *     (foo.cold, foo.part.0: dp_plan_check_part), which come back into
 *     its middle;
 *   - each can run at another address: a relative branch gets a rel32
 *     for its new place (a short jcc grows to its long form), a
 *     RIP-relative operand a new displacement; both must still reach
 *     their target, and loop/jrcxz/xbegin, which have no longer form,
 *     are refused.
 * Indirect branches (jump tables) cannot be checked statically: a table
 * entry pointing inside the displaced bytes is not seen.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dynprobe/reloc.h"

static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

bool dp_is_endbr64(const struct dp_code *fn, uint64_t at)
{
	return at >= fn->addr && at - fn->addr + 4 <= fn->size &&
	       memcmp(fn->bytes + (at - fn->addr), endbr64, 4) == 0;
}

static int refuse(struct dp_plan *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(struct dp_plan *p, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return err;
}

static bool group(const cs_insn *i, uint8_t g)
{
	for (uint8_t k = 0; k < i->detail->groups_count; k++)
		if (i->detail->groups[k] == g)
			return true;
	return false;
}

/* The target of a relative branch, or false when i is none. */
static bool rel_target(const cs_insn *i, uint64_t *target)
{
	const cs_x86 *x = &i->detail->x86;

	if (!(group(i, CS_GRP_JUMP) || group(i, CS_GRP_CALL)) || x->op_count != 1 ||
	    x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

/*
 * Appends instruction i, relocated to run at plan->code's end (dest +
 * code_len). Returns 0 or a refusal.
 */
static int relocate(struct dp_plan *p, const cs_insn *i, uint64_t dest)
{
	const cs_x86 *x = &i->detail->x86;
	uint64_t here = dest + p->code_len, target;
	uint8_t *out = p->code + p->code_len;
	uint32_t room = DP_DISPLACED_MAX - p->code_len;

	if (i->id == X86_INS_JRCXZ || i->id == X86_INS_JECXZ || i->id == X86_INS_JCXZ ||
	    i->id == X86_INS_LOOP || i->id == X86_INS_LOOPE || i->id == X86_INS_LOOPNE ||
	    i->id == X86_INS_XBEGIN)
		return refuse(p, -ENOTSUP, "'%s' at 0x%" PRIx64 " has no form that reaches from "
				  "elsewhere", i->mnemonic, i->address);
	if (room < 16)
		return refuse(p, -ENOTSUP, "the displaced instructions grow too large");
	if (rel_target(i, &target)) {
		uint8_t op = x->opcode[0];
		uint32_t n;

		if (i->id == X86_INS_CALL) {
			out[0] = 0xe8;
			n = 5;
		} else if (i->id == X86_INS_JMP) {
			out[0] = 0xe9;
			n = 5;
		} else if ((op & 0xf0) == 0x70 || (op == 0x0f && (x->opcode[1] & 0xf0) == 0x80)) {
			out[0] = 0x0f;
			out[1] = (uint8_t)(0x80 | ((op == 0x0f ? x->opcode[1] : op) & 0x0f));
			n = 6;
		} else {
			return refuse(p, -ENOTSUP, "cannot relocate '%s %s' at 0x%" PRIx64,
				      i->mnemonic, i->op_str, i->address);
		}
		if (!fits32((int64_t)(target - (here + n))))
			return refuse(p, -ENOTSUP, "the target of '%s' at 0x%" PRIx64 " is out of "
					  "reach of the trampoline", i->mnemonic, i->address);
		put32(out + n - 4, (int32_t)(int64_t)(target - (here + n)));
		p->code_len += n;
		p->nriprel++;
		return 0;
	}
	memcpy(out, i->bytes, i->size);
	for (uint8_t k = 0; k < x->op_count; k++) {
		const cs_x86_op *o = &x->operands[k];
		int64_t disp;

		if (o->type != X86_OP_MEM || o->mem.base != X86_REG_RIP)
			continue;
		if (x->encoding.disp_size != 4 || x->encoding.disp_offset == 0 ||
		    x->encoding.disp_offset + 4u > i->size)
			return refuse(p, -ENOTSUP, "cannot find the displacement of '%s %s' at "
					  "0x%" PRIx64, i->mnemonic, i->op_str, i->address);
		/* the target stays; the instruction's end moves */
		disp = (int64_t)(i->address + i->size + (uint64_t)o->mem.disp - (here + i->size));
		if (!fits32(disp))
			return refuse(p, -ENOTSUP, "the operand of '%s' at 0x%" PRIx64 " is out of "
					  "reach of the trampoline", i->mnemonic, i->address);
		put32(out + x->encoding.disp_offset, (int32_t)disp);
		p->nriprel++;
	}
	p->code_len += i->size;
	return 0;
}

static bool never_falls_through(const cs_insn *i)
{
	return group(i, CS_GRP_RET) || (i->id == X86_INS_JMP) || i->id == X86_INS_UD2 ||
	       i->id == X86_INS_HLT;
}

/*
 * Sweeps code for a relative branch landing inside p's displaced bytes
 * but on their first: 0, or a refusal. own: code is p's function, which
 * must decode up to the displaced bytes (elsewhere the sweep just stops
 * at what cannot be decoded: padding, data).
 */
static int no_branch_inside(csh h, cs_insn *i, const struct dp_code *c, struct dp_plan *p, bool own)
{
	const uint8_t *code = c->bytes;
	size_t left = c->size;
	uint64_t addr = c->addr, target;

	while (left) {
		uint64_t start = addr;

		if (!cs_disasm_iter(h, &code, &left, &addr, i)) {
			if (own && start < p->at + p->len)
				return refuse(p, -EILSEQ, "cannot decode the function at 0x%" PRIx64,
					      start);
			return 0;
		}
		if (rel_target(i, &target) && target > p->at && target < p->at + p->len)
			return refuse(p, -ENOTSUP, "a branch at 0x%" PRIx64 " lands at 0x%" PRIx64
					   ", inside the %u bytes the jump would replace",
				      start, target, p->len);
	}
	return 0;
}

int dp_plan_check_part(const struct dp_code *c, struct dp_plan *p)
{
	cs_insn *i;
	csh h;
	int ret;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return refuse(p, -ENOMEM, "cannot start the disassembler");
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	i = cs_malloc(h);
	ret = i ? no_branch_inside(h, i, c, p, false) : refuse(p, -ENOMEM, "out of memory");
	if (i)
		cs_free(i, 1);
	cs_close(&h);
	return ret;
}

int dp_plan(const struct dp_code *fn, uint64_t at, uint64_t dest, struct dp_plan *p)
{
	const uint8_t *code = fn->bytes;
	size_t left = fn->size;
	uint64_t addr = fn->addr, end = fn->addr + fn->size;
	bool found = false;
	cs_insn *i;
	csh h;
	int ret = 0;

	memset(p, 0, sizeof(*p));
	p->at = at;
	if (at < fn->addr || at >= end)
		return refuse(p, -EINVAL, "0x%" PRIx64 " is not inside the function", at);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return refuse(p, -ENOMEM, "cannot start the disassembler");
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	i = cs_malloc(h);
	if (!i) {
		cs_close(&h);
		return refuse(p, -ENOMEM, "out of memory");
	}
	/* First pass: the instruction boundaries up to `at`, and those it
	 * displaces. */
	while (left && addr < at + DP_JUMP_LEN) {
		uint64_t start = addr;

		if (!cs_disasm_iter(h, &code, &left, &addr, i)) {
			ret = refuse(p, -EILSEQ, "cannot decode the function at 0x%" PRIx64
					  " (%" PRIu64 " bytes in)", start, start - fn->addr);
			goto out;
		}
		if (start < at)
			continue;
		if (start == at)
			found = true;
		if (!found) {
			ret = refuse(p, -EINVAL, "0x%" PRIx64 " is not an instruction boundary "
					  "(an instruction starts at 0x%" PRIx64 ")", at, start);
			goto out;
		}
		ret = relocate(p, i, dest);
		if (ret < 0)
			goto out;
		p->ninsn++;
		p->ends = never_falls_through(i);
	}
	if (!found) {
		ret = refuse(p, -EINVAL, "0x%" PRIx64 " is not an instruction boundary", at);
		goto out;
	}
	ret = 0;
	p->len = (uint32_t)(addr - at);
	if (p->len < DP_JUMP_LEN) {
		ret = refuse(p, -ENOSPC, "only %u byte%s of code from there to the end of the "
				  "function: a %d-byte jump does not fit", p->len,
			     p->len == 1 ? "" : "s", DP_JUMP_LEN);
		goto out;
	}
	/* Second pass: no branch of the function lands inside. */
	ret = no_branch_inside(h, i, fn, p, true);
out:
	cs_free(i, 1);
	cs_close(&h);
	(void)end;
	return ret;
}
