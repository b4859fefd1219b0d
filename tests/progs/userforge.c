/*
 * userforge: a hostile process for attack-peruser.test. Traced in a
 * session of per-user buffers (--buffers per-user), it takes a lock (its
 * first event gets it its user's pool from the daemon), finds the pool in
 * its mappings, and for ROUNDS rounds scribbles over every CPU's buffer
 * while the user's other processes write there too: records of threads it
 * names with writer numbers 1 to 64 (other processes of its user, and
 * numbers nobody holds), events with ids and call sites at random, commit
 * words, tails, sequences and the open sub-buffer's number at random, and
 * bytes at random over the data. Then it prints "scribbled N" (forged
 * runs) and exits.
 *
 *   userforge ROUNDS
 *
 * It only ever writes its own user's pool: what the test checks is that
 * another user's processes and the daemon do not notice.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/abi.h"

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* The per-user pool in this process's mappings, or NULL. */
static uint8_t *user_pool(uint64_t *size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint8_t *base = NULL;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;

		if (strstr(line, "/memfd:shimtrace-user-pool") &&
		    sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 && off == 0) {
			base = (uint8_t *)lo;
			*size = hi - lo;
			break;
		}
	}
	if (f)
		fclose(f);
	return base;
}

/* A forged run at p (n bytes at most): a thread record naming writer w,
 * then events of random ids and call sites; returns the bytes written. */
static uint32_t forged_run(uint8_t *p, uint32_t n, uint32_t w)
{
	uint32_t id = ST_ABI_ID_THREAD_OF, tid = (uint32_t)next() % 4000000, at;
	uint64_t ts = next();

	if (n < ST_ABI_THREAD_OF_REC + 64)
		return 0;
	p[0] = ST_ABI_ID_EXTENDED;
	memcpy(p + 1, &id, 4);
	memcpy(p + 5, &ts, 8);
	memcpy(p + 13, &tid, 4);
	memcpy(p + 17, &w, 4);
	at = ST_ABI_THREAD_OF_REC;
	for (int k = 0; k < 4; k++) {
		uint64_t w0 = next() % 8 | (next() & 0xffffff) << 8 | next() << 32, fields = next();

		memcpy(p + at, &w0, 8);
		memcpy(p + at + 8, &fields, 8);
		at += ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES + 8;
	}
	return at;
}

int main(int argc, char **argv)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	const struct st_abi_pool *h;
	uint64_t size = 0, scribbled = 0;
	uint8_t *base;

	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	base = user_pool(&size);
	if (!base) {
		fprintf(stderr, "userforge: no per-user pool mapped\n");
		return 1;
	}
	h = (const struct st_abi_pool *)base;
	if (h->nslots == 0 || h->sb_count == 0 || h->slot_size == 0 ||
	    ST_ABI_PAGE + (uint64_t)h->nslots * h->slot_size > size) {
		fprintf(stderr, "userforge: the pool's header is not what it expected\n");
		return 1;
	}
	for (long r = 0; r < rounds; r++) {
		for (uint32_t i = 0; i < h->nslots; i++) {
			uint8_t *slot_base = base + ST_ABI_PAGE + (uint64_t)i * h->slot_size;
			struct st_abi_slot *slot = (struct st_abi_slot *)slot_base;
			uint8_t *data = slot_base + h->hdr_size;
			uint32_t idx = (uint32_t)(slot->cur % h->sb_count), off;
			struct st_abi_subbuf *sb = &slot->sb[idx];

			/* a forged run after what the open sub-buffer holds,
			 * committed as a writer would (the consumer reads it) */
			slot->cur_pad = idx;
			sb->seq = slot->cur + 1;
			off = (uint32_t)(sb->commit & 0xffffffff) % h->sb_size;
			off += forged_run(data + (uint64_t)idx * h->sb_size + off, h->sb_size - off - 64,
					  1 + (uint32_t)(next() % 64));
			sb->commit = off | next() << 32;
			scribbled++;
			/* then, one time in four, controls, the open sub-buffer or
			 * data at random */
			if (next() % 4)
				continue;
			sb = &slot->sb[next() % h->sb_count];
			switch (next() % 6) {
			case 0:
				sb->commit = next();
				break;
			case 1:
				sb->tail = next();
				sb->begin_ts = next();
				break;
			case 2:
				sb->seq = next() % (2 * h->sb_count);
				break;
			case 3:
				slot->cur = next() % (4 * h->sb_count);
				slot->cur_pad = next();
				break;
			case 4:
				for (int k = 0; k < 64; k++)
					data[next() % ((uint64_t)h->sb_count * h->sb_size)] = (uint8_t)next();
				break;
			default:
				sb->events = next();
				sb->lost = next();
				break;
			}
		}
	}
	printf("scribbled %llu\n", (unsigned long long)scribbled);
	return 0;
}
