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
		     "1:\n\t"
		     "cmpl %c[cpu_id](%[rs]), %[cpu]\n\t"
		     "jne %l[retry]\n\t"
		     "movq (%[cur_p]), %%rax\n\t"
		     "cmpq %[cur], %%rax\n\t"
		     "jne %l[retry]\n\t"
		     "movq (%[word_p]), %%rax\n\t"
		     "cmpq %[word], %%rax\n\t"
		     "jne %l[retry]\n\t"
		     "movq (%[mask_p]), %%rax\n\t"
		     "cmpq %[mask], %%rax\n\t"
		     "jne %l[retry]\n\t"
		     "xorl %%ecx, %%ecx\n"
		     "8:\n\t"
		     "movq (%[head], %%rcx, 8), %%rax\n\t"
		     "movq %%rax, (%[dst], %%rcx, 8)\n\t"
		     "incq %%rcx\n\t"
		     "cmpq %[head_words], %%rcx\n\t"
		     "jb 8b\n\t"
		     "xorl %%ecx, %%ecx\n\t"
		     "cmpq %[payload_words], %%rcx\n\t"
		     "jae 7f\n"
		     "9:\n\t"
		     "movq (%[payload], %%rcx, 8), %%rax\n\t"
		     "movq %%rax, (%[dst_payload], %%rcx, 8)\n\t"
		     "incq %%rcx\n\t"
		     "cmpq %[payload_words], %%rcx\n\t"
		     "jb 9b\n"
		     "7:\n\t"
		     "movdqu %[pair], (%[word_p])\n" /* the commit */
		     "2:\n\t"
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
 * The common record, on its own so that it is short: the CPU's buffer is
 * there, its open sub-buffer has room, its last record is this thread's
 * (key: its tid, xored with the pool's key_xor; then no thread record is
 * due), and the compact header fits. False when any of it
 * does not hold, or the commit failed: the general loop below takes it.
 */
static inline __attribute__((always_inline)) bool
st__percpu_write_common(struct st__pool *p, struct st__thread *t, int32_t key,
			const uint64_t *mask_word, uint64_t mw, uint32_t id, uint64_t ts, uint64_t site,
			const void *payload, uint32_t len)
{
	struct rseq *rs = st__rseq_area();
	uint32_t cpu = st_load_relaxed(&rs->cpu_id_start), idx, off;
	uint64_t cur, word, tail, begin, last, at, head[2], n;
	uint8_t *dst;
	struct st_abi_subbuf *ctl;
	struct st_abi_slot *slot;

	if (t && t->pc.pool == p && t->pc.cpu == cpu) {
		/* (the commit compares cur: a switch since makes it fail) */
		slot = t->pc.slot;
		ctl = t->pc.ctl;
		cur = t->pc.cur;
		idx = t->pc.idx;
	} else {
		struct st__writer *w;

		if (cpu >= p->nslots)
			return false;
		w = &p->writers[cpu];
		slot = w->slot;
		cur = st_load_relaxed(&slot->cur);
		idx = (uint32_t)st_load_relaxed(&slot->cur_pad);
		if (!w->populated || idx >= p->sb_count)
			return false;
		ctl = &slot->sb[idx];
		if (st_load_relaxed(&ctl->seq) != cur + 1)
			return false;
		if (t) {
			t->pc.pool = p;
			t->pc.slot = slot;
			t->pc.ctl = ctl;
			t->pc.cur = cur;
			t->pc.cpu = cpu;
			t->pc.idx = idx;
		}
	}
	word = st_load_relaxed(&ctl->commit);
	tail = st_load_relaxed(&ctl->tail);
	begin = st_load_relaxed(&ctl->begin_ts);
	off = ST_ABI_COMMIT_OFF(word);
	last = begin + ST_ABI_TAIL_TIME(tail);
	at = ts < last ? last : ts;
	n = ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES + len;
	/* (a record that crosses into another chunk: the general loop, which
	 * makes the chunk after it resident on a first lap, percpu.c) */
	if ((int32_t)(word >> 32) != key || off == 0 || id >= ST_ABI_ID_EXTENDED ||
	    at - last >= (1u << ST_ABI_TS_BITS) || off + n + ST_PAYLOAD_SLACK > p->sb_size ||
	    at - begin > ST_ABI_TAIL_TIME_MAX ||
	    ST_ABI_TAIL_EVENTS(tail) == ST_ABI_TAIL_EVENTS_MAX ||
	    (off >> p->chunk_shift) != ((off + n) >> p->chunk_shift))
		goto general;
	st__put_header((uint8_t *)head, id, at, at - last, site);
	dst = (uint8_t *)slot + p->geo.hdr_size + st_abi_subbuf_offset(p->sb_size, idx) + off;
	if (st__commit_record(rs, cpu, &slot->cur, cur, &ctl->commit, word, mask_word, mw, dst,
			      (uint8_t *)head, 2, dst + ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES,
			      payload, (len + 7) / 8,
			      _mm_set_epi64x((long long)(((ST_ABI_TAIL_EVENTS(tail) + 1)
							  << ST_ABI_TAIL_TIME_BITS) |
							 (at - begin)),
					     (long long)((off + n) | (uint64_t)(uint32_t)key << 32))))
		return true;
general:
	/* (the general loop may switch the sub-buffer, and a cache read here
	 * may be of one switched since: looked up again next time) */
	if (t)
		t->pc.pool = NULL;
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
	const uint32_t *mask = &tp->state->mask[tp->slot];
	/* (the aligned 8 bytes that hold it, the word the commit compares) */
	const uint64_t *mask_word = (const uint64_t *)((uintptr_t)mask & ~(uintptr_t)7);
	uint64_t mw = st_load_relaxed(mask_word);

	if (!(((uint32_t)(mw >> ((uintptr_t)mask & 4 ? 32 : 0)) >> s) & 1))
		return; /* switched off since the caller looked: no event */
	/* (the thread's cache of where its records go: not in a signal
	 * handler that interrupted an event, which would tear it) */
	if (!st__percpu_write_common(p, nested ? NULL : t, t->tid ^ (int32_t)p->key_xor, mask_word,
				     mw, id, ts, site, payload, len))
		st__percpu_write(p, t, tp, s, id, ts, site, payload, len, nested);
}

#endif
