/*
 * The instructions of a method's bytecode, decoded only as far as their
 * lengths (The Java Virtual Machine Specification, chapter 6), to find
 * its monitorenters: a byte 0xc2 may as well be an operand.
 */
#include <stddef.h>

#include "jvm/bytecode.h"

#define MONITORENTER ST_JVM_MONITORENTER
#define TABLESWITCH 0xaa
#define LOOKUPSWITCH 0xab
#define WIDE 0xc4
#define IINC 0x84

/* The fixed lengths of the JVM's instructions (The Java Virtual Machine
 * Specification, chapter 6), by ranges of opcodes; the switches and wide
 * are decoded apart, others are not instructions. */
static const struct {
	uint8_t first, last, length;
} fixed[] = {
	{ 0x00, 0x0f, 1 }, /* nop .. dconst_1 */
	{ 0x10, 0x10, 2 }, /* bipush */
	{ 0x11, 0x11, 3 }, /* sipush */
	{ 0x12, 0x12, 2 }, /* ldc */
	{ 0x13, 0x14, 3 }, /* ldc_w, ldc2_w */
	{ 0x15, 0x19, 2 }, /* iload .. aload */
	{ 0x1a, 0x35, 1 }, /* iload_0 .. saload */
	{ 0x36, 0x3a, 2 }, /* istore .. astore */
	{ 0x3b, 0x83, 1 }, /* istore_0 .. lxor */
	{ 0x84, 0x84, 3 }, /* iinc */
	{ 0x85, 0x98, 1 }, /* i2l .. dcmpg */
	{ 0x99, 0xa8, 3 }, /* ifeq .. jsr */
	{ 0xa9, 0xa9, 2 }, /* ret */
	{ 0xac, 0xb1, 1 }, /* ireturn .. return */
	{ 0xb2, 0xb8, 3 }, /* getstatic .. invokestatic */
	{ 0xb9, 0xba, 5 }, /* invokeinterface, invokedynamic */
	{ 0xbb, 0xbb, 3 }, /* new */
	{ 0xbc, 0xbc, 2 }, /* newarray */
	{ 0xbd, 0xbd, 3 }, /* anewarray */
	{ 0xbe, 0xbf, 1 }, /* arraylength, athrow */
	{ 0xc0, 0xc1, 3 }, /* checkcast, instanceof */
	{ 0xc2, 0xc3, 1 }, /* monitorenter, monitorexit */
	{ 0xc5, 0xc5, 4 }, /* multianewarray */
	{ 0xc6, 0xc7, 3 }, /* ifnull, ifnonnull */
	{ 0xc8, 0xc9, 5 }, /* goto_w, jsr_w */
};

static int32_t s32(const unsigned char *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* The length of the switch at code[at] (its operands start at the next
 * multiple of 4); 0 when it does not fit in n bytes. */
static uint64_t switch_length(const unsigned char *code, uint32_t n, uint32_t at)
{
	uint64_t operands = ((uint64_t)at + 4) & ~(uint64_t)3, length;

	if (operands + 12 > n)
		return 0;
	if (code[at] == TABLESWITCH) {
		int64_t low = s32(code + operands + 4), high = s32(code + operands + 8);

		if (high < low)
			return 0;
		length = 12 + 4 * (uint64_t)(high - low + 1);
	} else {
		int32_t pairs = s32(code + operands + 4);

		if (pairs < 0)
			return 0;
		length = 8 + 8 * (uint64_t)pairs;
	}
	return operands - at + length;
}

/* The length of the instruction at code[at] (0: not one, or past n). */
static uint64_t length_at(const unsigned char *code, uint32_t n, uint32_t at)
{
	uint8_t op = code[at];

	if (op == TABLESWITCH || op == LOOKUPSWITCH)
		return switch_length(code, n, at);
	if (op == WIDE)
		return at + 1 < n ? (code[at + 1] == IINC ? 6 : 4) : 0;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (op >= fixed[i].first && op <= fixed[i].last)
			return fixed[i].length;
	return 0;
}

int st__jvm_monitorenters(const unsigned char *code, uint32_t n, uint32_t *first)
{
	int count = 0;

	for (uint32_t at = 0; at < n;) {
		uint64_t length = length_at(code, n, at);

		if (length == 0 || at + length > n)
			return -1;
		if (code[at] == MONITORENTER && count++ == 0)
			*first = at;
		at += (uint32_t)length;
	}
	return count;
}

int64_t st__jvm_monitorenter_at(const unsigned char *code, uint32_t n, uint32_t loc)
{
	int64_t prev = -1;
	uint32_t at = 0;

	while (at < loc && at < n) {
		uint64_t length = length_at(code, n, at);

		if (length == 0 || at + length > n)
			return loc;
		prev = at;
		at += (uint32_t)length;
	}
	if (at != loc || (loc < n && code[loc] == MONITORENTER))
		return loc;
	return prev >= 0 && code[prev] == MONITORENTER ? prev : loc;
}
