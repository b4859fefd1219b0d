/*
 * Line tables of the objects processes map, for the call sites
 * (callsite.c): asked of the owner's lines inspector, kept per user.
 *
 * An entry is keyed by the owner's uid and the identity of the file as
 * the owner's objects inspector saw it with fstat() (device, inode, size,
 * modification and change times; the change time cannot be set back), so
 * an entry describes exactly the file mapped. It is per uid because a
 * user's inspectors are as trusted as that user: what they say serves only
 * that user's processes. The daemon never holds the file: the objects
 * inspector handed it to the lines inspector of its pair, which the
 * daemon asks for the table by the identity.
 *
 * An entry is idle until an event's caller falls in the object (the
 * consumer asks, callsite.c: most objects a process maps never hold a
 * caller, and a table can cost a lot -- libc's, from its debug file, 200
 * ms), pending until the inspector answers, then ready (a table) or none
 * (no line information, a table over its limit, an inspector that failed
 * or was killed on it: that file's call sites are not refined, and it is
 * not tried again while the entry lives). Processes hold references;
 * an entry nobody holds is freed a minute later, or at once when its user
 * needs the room. What an entry keeps counts against the user's symbols
 * quota; beyond it an object gets no table.
 *
 * The tables are in a hash of BUCKETS chains: not cds_lfht: only the
 * daemon's thread reads and changes it, so an RCU table would add grace
 * periods and a library to the one thread for no reader; cds_lfht is for a
 * table another thread reads while this one changes it.
 *
 * Owns: the line tables, per uid, and the requests for them.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, loop, objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/fdsafe.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/daemon/objects/linecache.h"
#include "ctl/daemon/wire/inspect_msg.h"

#define BUCKETS 1024
#define UNUSED_MS 60000
#define WAIT_MS 3000 /* the consumer waits for a table this long at most */
#define MAX_ROWS (1ull << 26) /* 512 MiB of table: more is refused */

struct st_lines {
	struct st_lines *next;
	uid_t uid;
	struct st_insp_key key;
	enum st_lines_state state;
	uint32_t refs;	/* processes' objects, and the request in flight */
	struct st_owner owner; /* whose lines inspector holds the file */
	uint8_t build_id[ST_INSP_BUILD_ID_MAX];
	uint32_t build_id_len;
	uint64_t requested_at; /* ms */
	bool lost;	/* the lines inspector had not the file: to be handed again */
	bool rehanded;	/* (once) */
	const uint64_t *rows;
	uint64_t nrows;
	uint64_t charged; /* bytes taken from the user's quota */
	uint64_t unused_since; /* ms, while refs == 0 */
	struct st_user *user;
};

static struct st_lines *buckets[BUCKETS];

static uint32_t bucket_of(uid_t uid, const struct st_insp_key *k)
{
	return (uint32_t)((k->ino * 0x9E3779B97F4A7C15ull) ^ k->dev ^ ((uint64_t)uid << 7)) % BUCKETS;
}

static void entry_free(struct st_lines *l)
{
	struct st_lines **pp = &buckets[bucket_of(l->uid, &l->key)];

	for (; *pp; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	if (l->rows)
		munmap((void *)l->rows, l->nrows * sizeof(uint64_t));
	st_quota_give(l->user, ST_Q_SYMBOLS, l->charged);
	free(l);
}

/* Frees the user's unused entries, oldest first, until `need` more bytes
 * fit in the quota; returns whether they do. */
static bool make_room(struct st_user *u, uint64_t need)
{
	while (u && u->used[ST_Q_SYMBOLS] + need > st_quota_limit(ST_Q_SYMBOLS)) {
		struct st_lines *oldest = NULL;

		for (uint32_t b = 0; b < BUCKETS; b++)
			for (struct st_lines *l = buckets[b]; l; l = l->next)
				if (l->user == u && l->refs == 0 &&
				    (!oldest || l->unused_since < oldest->unused_since))
					oldest = l;
		if (!oldest)
			return false;
		entry_free(oldest);
	}
	return true;
}

static bool charge(struct st_lines *l, uint64_t bytes, pid_t pid)
{
	make_room(l->user, bytes);
	if (!st_quota_take(l->user, ST_Q_SYMBOLS, bytes, pid, "line tables"))
		return false;
	l->charged += bytes;
	return true;
}

void st_lines_put(struct st_lines *l)
{
	if (l && --l->refs == 0)
		l->unused_since = st_now_ms();
}

/* Takes the table out of the sealed memfd the inspector sent. */
static void take_table(struct st_lines *l, uint64_t rows, int fd)
{
	struct statfs sf;
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	void *p;

	if (rows > MAX_ROWS || seals < 0 ||
	    (seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)) !=
		    (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) ||
	    fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != rows * 8 ||
	    fstatfs(fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC) {
		st_log_user(l->uid, ST_LOG_WARN, "uid %u's inspector sent a malformed line table",
		       (unsigned)l->uid);
		return;
	}
	if (!charge(l, rows * 8, 0))
		return;
	p = mmap(NULL, rows * 8, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return;
	l->rows = p;
	l->nrows = rows;
	l->state = ST_LINES_READY;
}

static void on_reply(struct st_daemon *d, void *ctx, const struct st_insp_reply *r, int fd)
{
	struct st_lines *l = ctx;

	if (r && r->type == ST_INSP_LINE_TABLE && l->state == ST_LINES_PENDING && r->lines.rows &&
	    fd >= 0)
		take_table(l, r->lines.rows, fd);
	st_fd_drop(fd, l->uid);
	if (r && r->type != ST_INSP_DONE)
		return;
	/* The lines inspector did not hold the file (the pair was replaced
	 * since it was handed over): once, it is handed again by reading
	 * the objects of a process mapping it (callsite.c); else (DONE
	 * without a table, or the inspector failed on it) there is none. */
	if (l->state == ST_LINES_PENDING && r && r->done.status == -ENOENT && !l->rehanded) {
		l->state = ST_LINES_IDLE;
		l->lost = l->rehanded = true;
	} else if (l->state == ST_LINES_PENDING) {
		l->state = ST_LINES_NONE;
	}
	st_lines_put(l);
	st_loop_news(&d->loop, ST_NEWS_LINES);
}

struct st_lines *st_lines_get(const struct st_owner *o, const struct st_insp_key *key,
			      const uint8_t *build_id, uint32_t build_id_len)
{
	struct st_lines *l;
	uint32_t b = bucket_of(o->uid, key);

	for (l = buckets[b]; l; l = l->next)
		if (l->uid == o->uid && memcmp(&l->key, key, sizeof(*key)) == 0) {
			/* (an objects inspector just handed the file over) */
			if (l->lost && memcmp(&l->owner, o, sizeof(*o)) == 0)
				l->lost = false;
			l->refs++;
			return l;
		}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->uid = o->uid;
	l->key = *key;
	l->owner = *o;
	if (build_id_len <= sizeof(l->build_id)) {
		l->build_id_len = build_id_len;
		memcpy(l->build_id, build_id, build_id_len);
	}
	l->user = st_user_of(o->uid);
	l->state = ST_LINES_IDLE;
	if (!charge(l, sizeof(*l), 0)) {
		free(l);
		return NULL;
	}
	l->next = buckets[b];
	buckets[b] = l;
	l->refs = 1;
	return l;
}

bool st_lines_need(struct st_daemon *d, struct st_lines *l)
{
	struct st_insp_lines_req req;

	if (!l || l->state != ST_LINES_IDLE)
		return false;
	if (l->lost)
		return true; /* asked again once the objects are read again */
	memset(&req, 0, sizeof(req));
	req.hdr.type = ST_INSP_LINES;
	req.hdr.len = sizeof(req);
	req.key = l->key;
	req.max_rows = MAX_ROWS;
	req.build_id_len = l->build_id_len;
	memcpy(req.build_id, l->build_id, sizeof(req.build_id));
	l->state = ST_LINES_PENDING;
	l->requested_at = st_now_ms();
	l->refs++; /* the request's */
	if (st_insp_request(d, &l->owner, ST_INSP_ROLE_LINES, &req, sizeof(req), -1,
			    st_insp_limits.timeout_ms, on_reply, l) < 0) {
		l->state = ST_LINES_NONE;
		l->refs--;
	}
	return false;
}

bool st_lines_settled(const struct st_lines *l)
{
	return !l || l->state == ST_LINES_READY || l->state == ST_LINES_NONE ||
	       (l->state == ST_LINES_PENDING && st_now_ms() - l->requested_at >= WAIT_MS);
}

bool st_lines_held(const struct st_owner *o)
{
	for (uint32_t b = 0; b < BUCKETS; b++)
		for (const struct st_lines *l = buckets[b]; l; l = l->next)
			if (l->state == ST_LINES_IDLE && l->refs && l->uid == o->uid &&
			    memcmp(&l->owner, o, sizeof(*o)) == 0)
				return true;
	return false;
}

enum st_lines_state st_lines_state(const struct st_lines *l)
{
	return l ? l->state : ST_LINES_NONE;
}

uint64_t st_lines_find(const struct st_lines *l, uint64_t at)
{
	uint64_t lo = 0, hi, key = at << 1 | 1, row;

	if (!l || l->state != ST_LINES_READY || at >> 62)
		return UINT64_MAX;
	/* the last row at or before at: a start there sorts after an end at
	 * the same address, so it wins */
	hi = l->nrows;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (l->rows[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return UINT64_MAX;
	row = l->rows[lo - 1];
	return row & 1 ? row >> 1 : UINT64_MAX;
}

void st_lines_tick(void)
{
	uint64_t now = st_now_ms();

	for (uint32_t b = 0; b < BUCKETS; b++)
		for (struct st_lines *l = buckets[b], *next; l; l = next) {
			next = l->next;
			if (l->refs == 0 && now - l->unused_since > UNUSED_MS)
				entry_free(l);
		}
}

void st_lines_fini(void)
{
	for (uint32_t b = 0; b < BUCKETS; b++)
		while (buckets[b])
			entry_free(buckets[b]);
}
