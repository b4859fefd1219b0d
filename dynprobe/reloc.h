/*
 * Relocation of the instructions a probe's jump displaces (reloc.c): is
 * an address an instruction boundary of its function, do the
 * instructions from there cover a jump, does no branch land inside them,
 * and the same instructions re-encoded to run elsewhere (the trampoline).
 * Decoding is capstone's; nothing here reads or writes a process.
 */
#ifndef ST_DYNPROBE_RELOC_H
#define ST_DYNPROBE_RELOC_H

#include <stdbool.h>
#include <stdint.h>

/* The jump planted at the probe: e9 rel32. */
#define DP_JUMP_LEN 5
/* The most bytes the displaced instructions take once relocated. */
#define DP_DISPLACED_MAX 96

/* A function's code, as mapped at `addr` (bytes[i] is at addr + i). */
struct dp_code {
	const uint8_t *bytes;
	uint64_t addr, size;
};

struct dp_plan {
	uint64_t at;	     /* where the jump goes */
	uint32_t len;	     /* bytes it displaces: whole instructions, >= DP_JUMP_LEN */
	uint32_t ninsn;	     /* instructions displaced */
	uint32_t nriprel;    /* of them RIP-relative (memory operand or branch) */
	uint8_t code[DP_DISPLACED_MAX]; /* the displaced instructions, to run at dest */
	uint32_t code_len;
	bool ends;	     /* the last one never falls through (ret, jmp) */
	char why[200];	     /* the reason a probe is refused */
};

/*
 * Plans a probe at `at` in function fn (fn->addr <= at < fn->addr +
 * fn->size): `at` must be where an instruction starts when fn is decoded
 * from its first byte; the instructions from `at` must cover DP_JUMP_LEN
 * bytes inside fn, be relocatable (relative branches and RIP-relative
 * operands re-encoded for dest, within +-2 GiB; loop and jrcxz, whose
 * rel8 cannot grow, are not), and no relative branch of fn may land
 * inside them but on `at`. The relocated instructions, to be placed at
 * dest, go to plan->code. Returns 0, or -EINVAL (not an instruction
 * boundary, or not inside fn), -ENOSPC (too short), -ENOTSUP (cannot be
 * relocated), -EILSEQ (cannot be decoded), -ENOMEM, with plan->why
 * saying which, in one line.
 */
int dp_plan(const struct dp_code *fn, uint64_t at, uint64_t dest, struct dp_plan *plan);

/*
 * Whether a relative branch of code (another part of the function, such
 * as its .cold part) lands inside plan's displaced bytes but on their
 * first: -ENOTSUP with plan->why then, else 0. Code that cannot be
 * decoded is not read past.
 */
int dp_plan_check_part(const struct dp_code *code, struct dp_plan *plan);

/* Whether code at `at` starts with endbr64 (a function's indirect-branch
 * landing pad, which must stay first). */
bool dp_is_endbr64(const struct dp_code *fn, uint64_t at);

#endif /* ST_DYNPROBE_RELOC_H */
