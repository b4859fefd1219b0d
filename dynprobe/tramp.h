/*
 * A probe's trampoline (tramp.c): the code its jump leads to. It tests
 * the tracepoint's enable word, calls the hit function when some session
 * records it, runs the displaced instructions and jumps back.
 */
#ifndef ST_DYNPROBE_TRAMP_H
#define ST_DYNPROBE_TRAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the displaced instructions start in a trampoline. */
#define DP_TRAMP_DISPLACED 43
/* The largest trampoline. */
#define DP_TRAMP_MAX 1024

/*
 * The saved registers the hit function is given (frame[i]), in this
 * order; the probed code's stack pointer is frame + DP_FRAME_RSP bytes.
 */
enum dp_frame {
	DP_RBX, DP_R11, DP_R10, DP_R9, DP_R8, DP_RDI, DP_RSI, DP_RDX, DP_RCX, DP_RAX, DP_FLAGS,
	DP_FRAME_WORDS
};
#define DP_FRAME_RSP (DP_FRAME_WORDS * 8 + 128)

/* void hit(void *arg, uint64_t *frame) */
typedef void (*dp_hit_fn)(void *arg, uint64_t *frame);

struct dp_tramp {
	uint64_t addr;		  /* where the trampoline will run */
	const uint32_t *enabled;  /* tested before anything is saved: 0, off */
	dp_hit_fn hit;
	void *arg;
	const uint8_t *displaced; /* relocated for addr + DP_TRAMP_DISPLACED */
	uint32_t displaced_len;
	bool ends;		  /* the displaced code never falls through */
	uint64_t resume;	  /* where the probed code goes on */
	bool ymm;		  /* save the 256-bit vector registers (AVX) */
	bool xinuse;		  /* ... only when xgetbv(1) says they are in use */
	bool entry;		  /* at a function's entry: flags and xmm8-15 dead */
};

/*
 * Writes the trampoline t into buf (at least DP_TRAMP_MAX bytes); returns
 * its length, or 0 when `resume` is out of a rel32's reach.
 */
size_t dp_tramp_build(const struct dp_tramp *t, uint8_t *buf);

#endif /* ST_DYNPROBE_TRAMP_H */
