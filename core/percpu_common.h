/*
 * The per-CPU writer's common record (percpu.c), inline in the event
 * writer (writer.c): the call and its arguments cost as much as the rest.
 */
#ifndef ST_CORE_PERCPU_COMMON_H
#define ST_CORE_PERCPU_COMMON_H

#include <emmintrin.h>
#include <stddef.h>

#include "internal.h"
#include "rseq.h"

/*
 * The compares that open a record's commit (label 1, the section's start):
 * still on CPU cpu, and *cur_p, *word_p and *mask_p still cur, word and
 * mask; else to retry. Operands of those names, rax clobbered.
 */
#define ST_COMMIT_COMPARES                     \
	"1:\n\t"                                \
	"cmpl %c[cpu_id](%[rs]), %[cpu]\n\t"    \
	"jne %l[retry]\n\t"                     \
	"movq (%[cur_p]), %%rax\n\t"            \
	"cmpq %[cur], %%rax\n\t"                \
	"jne %l[retry]\n\t"                     \
	"movq (%[word_p]), %%rax\n\t"           \
	"cmpq %[word], %%rax\n\t"               \
	"jne %l[retry]\n\t"                     \
	"movq (%[mask_p]), %%rax\n\t"           \
	"cmpq %[mask], %%rax\n\t"               \
	"jne %l[retry]\n\t"

/*
 * What closes a record's commit: copies payload_words 8-byte words from
 * payload to `to` (the start of an address the asm completes with the
 * index: "(%[reg]" or "10(%[reg]"), then the commit, the section's last
 * instruction: the 16 bytes of pair at word_p (label 2, its end).
 */
#define ST_COMMIT_PAYLOAD(to)                          \
	"xorl %%ecx, %%ecx\n\t"                         \
	"cmpq %[payload_words], %%rcx\n\t"              \
	"jae 7f\n"                                       \
	"9:\n\t"                                        \
	"movq (%[payload], %%rcx, 8), %%rax\n\t"        \
	"movq %%rax, " to ", %%rcx, 8)\n\t"             \
	"incq %%rcx\n\t"                                \
	"cmpq %[payload_words], %%rcx\n\t"              \
	"jb 9b\n"                                        \
	"7:\n\t"                                        \
	"movdqu %[pair], (%[word_p])\n" /* the commit */ \
	"2:\n\t"

/*
 * The record's commit: st__rseq_commit's sequence (rseq.c), specialised
 * with everything in registers. On CPU cpu only, if *cur_p, *word_p and
 * *mask_p still hold cur, word and mask: copies head_words 8-byte words
 * from head to dst and payload_words from payload to dst_payload (the
 * record's header, prepared on the stack, and its payload from where the
 * caller made it: each word is loaded as it was stored, so the stores
 * forward to the loads), then stores the 16 bytes of pair at word_p. False
 * when a compare failed or the kernel restarted it.
 */
static inline __attribute__((always_inline)) bool
st__commit_record(struct rseq *rs, uint32_t cpu, const uint64_t *cur_p, uint64_t cur,
	      uint64_t *word_p, uint64_t word, const uint64_t *mask_p, uint64_t mask, uint8_t *dst,
	      const uint8_t *head, uint64_t head_words, uint8_t *dst_payload, const uint8_t *payload,
	      uint64_t payload_words, __m128i pair)
{
	__asm__ goto(ST_RSEQ_ENTER
		     ST_COMMIT_COMPARES
		     "xorl %%ecx, %%ecx\n"
		     "8:\n\t"
		     "movq (%[head], %%rcx, 8), %%rax\n\t"
		     "movq %%rax, (%[dst], %%rcx, 8)\n\t"
		     "incq %%rcx\n\t"
		     "cmpq %[head_words], %%rcx\n\t"
		     "jb 8b\n\t"
		     ST_COMMIT_PAYLOAD("(%[dst_payload]")
		     ST_RSEQ_ABORT("%l[retry]")
		     :
		     : [rs] "r"(rs), [cpu] "r"(cpu), [cur_p] "r"(cur_p), [cur] "rm"(cur),
		       [word_p] "r"(word_p), [word] "rm"(word), [mask_p] "r"(mask_p),
		       [mask] "rm"(mask), [head] "r"(head), [dst] "r"(dst),
		       [head_words] "rm"(head_words), [payload] "r"(payload),
		       [dst_payload] "r"(dst_payload), [payload_words] "rm"(payload_words),
		       [pair] "x"(pair), [cs] "i"(offsetof(struct rseq, rseq_cs)),
		       [cpu_id] "i"(offsetof(struct rseq, cpu_id))
		     : "rax", "rcx", "memory", "cc"
		     : retry);
	return true;
retry:
	return false;
}

/*
 * The common record's commit: as st__commit_record, with the compact
 * header and ip (10 bytes) in a register, stored as 16 bytes at dst, and
 * the payload's payload_words after them (over the header's last 6).
 */
static inline __attribute__((always_inline)) bool
st__commit_common(struct rseq *rs, uint32_t cpu, const uint64_t *cur_p, uint64_t cur,
		  uint64_t *word_p, uint64_t word, const uint64_t *mask_p, uint64_t mask,
		  uint8_t *dst, __m128i head, const uint8_t *payload, uint64_t payload_words,
		  __m128i pair)
{
	_Static_assert(ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES == 10, "the asm's 10(dst)");
	__asm__ goto(ST_RSEQ_ENTER
		     ST_COMMIT_COMPARES
		     "movdqu %[head], (%[dst])\n\t"
		     ST_COMMIT_PAYLOAD("10(%[dst]")
		     ST_RSEQ_ABORT("%l[retry]")
		     :
		     : [rs] "r"(rs), [cpu] "r"(cpu), [cur_p] "r"(cur_p), [cur] "rm"(cur),
		       [word_p] "r"(word_p), [word] "rm"(word), [mask_p] "r"(mask_p),
		       [mask] "rm"(mask), [dst] "r"(dst), [head] "x"(head), [payload] "r"(payload),
		       [payload_words] "rm"(payload_words), [pair] "x"(pair),
		       [cs] "i"(offsetof(struct rseq, rseq_cs)),
		       [cpu_id] "i"(offsetof(struct rseq, cpu_id))
		     : "rax", "rcx", "memory", "cc"
		     : retry);
	return true;
retry:
	return false;
}

/*
 * Writes the common record at c's place on CPU cpu, the one c was filled
 * on: c's open sub-buffer has room, its last record is this thread's (then
 * no thread record is due), and the compact header fits. False when any of
 * it does not hold, or the commit failed: the general loop (percpu.c)
 * takes it.
 */
static inline __attribute__((always_inline)) bool
st__percpu_put(const struct st__pc *c, struct rseq *rs, uint32_t cpu, const uint64_t *mask_word,
	       uint64_t mw, uint32_t id, uint64_t ts, uint64_t site, const void *payload,
	       uint32_t len)
{
	struct st_abi_subbuf *ctl = c->ctl;
	uint64_t word = st_load_relaxed(&ctl->commit), tail = st_load_relaxed(&ctl->tail);
	uint64_t begin = st_load_relaxed(&ctl->begin_ts);
	uint64_t last = begin + ST_ABI_TAIL_TIME(tail), at = ts < last ? last : ts;
	uint32_t off = ST_ABI_COMMIT_OFF(word), n = ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES + len;
	uint8_t *dst = c->data + off;

	/* (a record that crosses into another chunk: the general loop, which
	 * makes the chunk after it resident on a first lap, percpu.c) */
	if ((int32_t)(word >> 32) != c->key || off == 0 || id >= ST_ABI_ID_EXTENDED ||
	    at - last >= (1u << ST_ABI_TS_BITS) || off + n > c->room ||
	    at - begin > ST_ABI_TAIL_TIME_MAX || ST_ABI_TAIL_EVENTS(tail) == ST_ABI_TAIL_EVENTS_MAX ||
	    (off >> c->chunk_shift) != ((off + n) >> c->chunk_shift))
		return false;
	return st__commit_common(
		rs, cpu, &c->slot->cur, c->cur, &ctl->commit, word, mask_word, mw, dst,
		_mm_set_epi64x((long long)(site >> 32),
			       (long long)(id | (at & 0xffffff) << 8 | site << 32)),
		payload, (len + 7) / 8,
		_mm_set_epi64x((long long)(((ST_ABI_TAIL_EVENTS(tail) + 1) << ST_ABI_TAIL_TIME_BITS) |
					   (at - begin)),
			       (long long)((off + n) | (uint64_t)(uint32_t)c->key << 32)));
}

/*
 * Fills c with the place of CPU cpu's buffer in pool p, whose open
 * sub-buffer is cur (index idx), for the thread of the given key; full:
 * that buffer was found full (discard mode). Whole before it says its
 * session (mask), for a signal handler that reads it between events.
 */
static inline void st__pc_fill(struct st__pc *c, struct st__pool *p, uint32_t cpu, uint64_t cur,
			       uint32_t idx, int32_t key, bool full)
{
	struct st__writer *w = &p->writers[cpu];

	c->mask = 0; /* (until whole) */
	st_barrier();
	c->gen = w->generation;
	c->live_gen = w->live_generation;
	c->pool = p;
	c->slot = w->slot;
	c->ctl = &w->slot->sb[idx];
	c->data = w->data + st_abi_subbuf_offset(p->sb_size, idx);
	c->cur = cur;
	c->cpu = cpu;
	c->key = key;
	c->room = p->sb_size - ST_PAYLOAD_SLACK;
	c->chunk_shift = p->chunk_shift;
	c->full = full;
	st_barrier();
	c->mask = 1u << p->session;
}

/*
 * The common record through a lookup of the CPU's buffer in pool p: its
 * place is cached in t->pc for the thread's next events (t NULL: in a
 * signal handler that interrupted an event, which must not tear the cache
 * the interrupted write reads). False as st__percpu_put, or when the CPU's
 * buffer is not ready for it.
 */
static inline __attribute__((always_inline)) bool
st__percpu_write_common(struct st__pool *p, struct st__thread *t, int32_t key,
			const uint64_t *mask_word, uint64_t mw, uint32_t id, uint64_t ts, uint64_t site,
			const void *payload, uint32_t len)
{
	struct rseq *rs = st__rseq_area();
	uint32_t cpu = st_load_relaxed(&rs->cpu_id_start), idx;
	struct st__pc local, *c = t ? &t->pc : &local;
	struct st__writer *w;
	uint64_t cur;

	if (cpu >= p->nslots)
		return false;
	w = &p->writers[cpu];
	cur = st_load_relaxed(&w->slot->cur);
	idx = (uint32_t)st_load_relaxed(&w->slot->cur_pad);
	if (!w->populated || idx >= p->sb_count ||
	    st_load_relaxed(&w->slot->sb[idx].seq) != cur + 1)
		return false;
	/* (the commit compares cur: a switch since makes it fail) */
	st__pc_fill(c, p, cpu, cur, idx, key, false);
	if (st__percpu_put(c, rs, cpu, mask_word, mw, id, ts, site, payload, len))
		return true;
	/* (the general loop may switch the sub-buffer: looked up again) */
	c->mask = 0;
	return false;
}

/* The aligned 8 bytes that hold tracepoint tp's enable word: the word the
 * commit compares. */
static inline const uint64_t *st__mask_word(const struct st_tracepoint *tp)
{
	return (const uint64_t *)((uintptr_t)&tp->state->mask[tp->slot] & ~(uintptr_t)7);
}

/* Whether session s's bit is set in mw, the 8 bytes st__mask_word gave. */
static inline bool st__mask_word_has(const struct st_tracepoint *tp, uint64_t mw, uint32_t s)
{
	return (mw >> (s + ((uintptr_t)&tp->state->mask[tp->slot] & 4 ? 32 : 0))) & 1;
}

/*
 * st_event_write's first try: the thread's last common record was in the
 * one session of mask, on the CPU it runs on, and this one is common too
 * (t->pc). False to take the general way; true when written, or when the
 * session switched the tracepoint off since the caller looked (no event).
 */
static inline __attribute__((always_inline)) bool
st__percpu_cached(struct st__thread *t, const struct st_tracepoint *tp, uint64_t ts, uint64_t site,
		  const void *payload, uint32_t len)
{
	struct rseq *rs = st__rseq_area();
	uint32_t cpu = st_load_relaxed(&rs->cpu_id_start);
	const uint64_t *mask_word = st__mask_word(tp);
	uint64_t mw;

	if (cpu != t->pc.cpu)
		return false;
	mw = st_load_relaxed(mask_word);
	if (!st__mask_word_has(tp, mw, (uint32_t)__builtin_ctz(t->pc.mask)))
		return true;
	if (__builtin_expect(t->pc.full, 0))
		return st__percpu_full(t);
	if (st__percpu_put(&t->pc, rs, cpu, mask_word, mw, tp->state->id[tp->slot], ts, site,
			   payload, len))
		return true;
	t->pc.mask = 0;
	return false;
}

/*
 * Writes one event into the buffer of the CPU the thread runs on, in pool
 * p (per-CPU) of session s, if tracepoint tp is still on there: the common
 * record inline, any other by st__percpu_write.
 */
static inline __attribute__((always_inline)) void
st__percpu_event(struct st__pool *p, struct st__thread *t, const struct st_tracepoint *tp,
		 uint32_t s, uint32_t id, uint64_t ts, uint64_t site, const void *payload,
		 uint32_t len, bool nested)
{
	const uint64_t *mask_word = st__mask_word(tp);
	uint64_t mw = st_load_relaxed(mask_word);

	if (!st__mask_word_has(tp, mw, s))
		return; /* switched off since the caller looked: no event */
	if (!st__percpu_write_common(p, nested ? NULL : t, t->tid ^ (int32_t)p->key_xor, mask_word,
				     mw, id, ts, site, payload, len))
		st__percpu_write(p, t, tp, s, id, ts, site, payload, len, nested);
}

#endif
