/*
 * Buffer pools: one shared-memory pool per (process, session), holding a
 * bounded number of per-thread ring buffers (slots).
 *
 * A pool is a sealed memfd (it can neither shrink nor grow, so the daemon's
 * mapping can never fault) created by the first thread that needs it. Its
 * pages are allocated as they are first written, so the bound costs
 * nothing until used. Creating it makes no call to the daemon: the writer
 * offers it (st__pool_offer, over the socket when it can) and meanwhile
 * the control page names its descriptor, for a daemon the socket cannot
 * reach to take it with pidfd_getfd. Events are written into it from the
 * start: the daemon reads them whenever it gets the pool.
 *
 * A thread claims a free slot with a compare-and-swap on slot->owner (its
 * tid) on its first event and gives it back at exit; a later thread reuses
 * it, going on in its open sub-buffer. A slot whose owner died without
 * giving it back (a thread killed by pthread_cancel in a non-cancellable
 * place, say) is taken over when no slot is free.
 *
 * The pool holds the process's share of memory (nslots), but a slot never
 * claimed before is claimed only within the daemon's grant (the control
 * page's slots_allowed): the session's bound is shared by its processes,
 * and the daemon grants memory as threads need it (ctl/daemon/model/memory.c).
 * A thread beyond the grant drops its events, counted in lost_no_memory.
 *
 * Pools are never unmapped while the process lives: writers of other threads
 * may hold pointers into them. A session recreated under the same index gets
 * a new pool; the old one stays mapped and unused.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "internal.h"
#include "rseq.h"
#include "sys.h"

struct pool_ref {
	uint32_t lock;	      /* 1 while a thread creates the pool */
	uint32_t failed_gen;  /* generation whose creation failed: no retry */
	struct st__pool *pool; /* published with release */
	/* a per-user pool the daemon sent, until the session's configuration
	 * names it (release store; st__pool_received) */
	struct st__pool *received;
};

static struct pool_ref refs[ST_ABI_MAX_SESSIONS];


/* Where a pool's writers begin in its private mapping (page-aligned). */
#define WRITERS_OFF                                                                \
	((sizeof(struct st__pool) + ST_ABI_CACHE_LINE - 1) / ST_ABI_CACHE_LINE * \
	 ST_ABI_CACHE_LINE)

static struct st_abi_slot *slot_at(const struct st__pool *p, uint32_t i)
{
	return (struct st_abi_slot *)(p->base + st_abi_slot_offset(p->geo.slot_size, i));
}

/* Reads and validates the daemon's configuration of session s. */
static int read_config(uint32_t s, struct st__pool *p)
{
	uint32_t buffers;
	const struct st_abi_session *c = &st__control->session[s];

	p->session = s;
	p->generation = st_load_shared(&c->generation);
	p->mode = st_load_shared(&c->mode);
	p->sb_size = st_load_shared(&c->sb_size);
	p->sb_count = st_load_shared(&c->sb_count);
	p->nslots = st_load_shared(&c->nslots);
	/* per-CPU buffers need rseq; without it, per-thread ones of the same
	 * geometry (the pool header says which) */
	buffers = st_load_shared(&c->buffers);
	p->percpu = (buffers == ST_BUFFERS_PER_CPU || buffers == ST_BUFFERS_PER_USER) &&
		    st__rseq_usable();
	/* (a blocking overwrite session would be the daemon's mistake) */
	p->block_ms = p->mode == ST_MODE_DISCARD ? st_load_shared(&c->block_ms) : 0;
	if (p->generation == 0)
		return -ENOENT;
	if (st_abi_geometry(p->mode, p->sb_size, p->sb_count, p->nslots, &p->geo) < 0)
		return -EINVAL;
	return 0;
}

/* Per-CPU pools: the 8-byte words of a slot's bitmap of resident chunks
 * (percpu.c), after the writers in the private mapping; 0 otherwise. */
static uint64_t resident_words(const struct st__pool *p)
{
	return p->percpu ? (((uint64_t)p->sb_count * p->sb_size >> p->chunk_shift) + 63) / 64 : 0;
}

/* The bytes of p's private mapping. */
static uint64_t private_size(const struct st__pool *p)
{
	return WRITERS_OFF + (uint64_t)p->nslots * (sizeof(struct st__writer) + resident_words(p) * 8);
}

/*
 * The process-private part of a pool mapped at tmp->base with tmp's
 * configuration: the pool descriptor, the writers (each on cache lines of
 * their own) and, per-CPU, the bitmaps of resident chunks, in one private
 * mapping. NULL without memory.
 */
static struct st__pool *pool_private(const struct st__pool *tmp)
{
	struct st__pool *p, conf = *tmp;
	uint64_t *bits;

	/* (a chunk: 64 KiB, or the largest power of two that divides sb_size) */
	conf.chunk_shift = 16;
	while ((1u << conf.chunk_shift) > conf.sb_size || conf.sb_size % (1u << conf.chunk_shift))
		conf.chunk_shift--;
	p = st__mmap(NULL, private_size(&conf), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (!p)
		return NULL;
	*p = conf;
	p->writers = (struct st__writer *)((uint8_t *)p + WRITERS_OFF);
	bits = (uint64_t *)(p->writers + p->nslots);
	for (uint32_t i = 0; i < p->nslots; i++) {
		struct st__writer *w = &p->writers[i];

		w->slot = slot_at(p, i);
		w->data = (uint8_t *)w->slot + p->geo.hdr_size;
		w->sb_size = p->sb_size;
		w->off = p->sb_size; /* the first write opens a sub-buffer */
		w->pool = p;
		w->index = i;
		w->generation = p->generation;
		w->live_generation = &st__control->session[p->session].generation;
		w->percpu = p->percpu;
		w->resident = bits + (uint64_t)i * resident_words(p);
	}
	return p;
}

static void pool_private_free(struct st__pool *p)
{
	st__munmap(p, private_size(p));
}

static struct st__pool *pool_create(uint32_t s)
{
	/* Zeroed: below, only the configuration and the mappings are filled
	 * in, and pool_private copies every field: the rest must start cleared
	 * (handed: not offered yet; unserved: no wait found the daemon gone). */
	struct st__pool tmp = { .fd = { .fd = -1 } }, *p;
	struct st_abi_pool *hdr;
	long fd;

	if (!st__control || read_config(s, &tmp) < 0)
		return NULL;
	fd = st__sys2(SYS_memfd_create, "shimtrace-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return NULL;
	if (st__sys2(SYS_ftruncate, fd, tmp.geo.size) < 0 ||
	    st__sys3(SYS_fcntl, fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail_fd;
	tmp.base = st__mmap(NULL, tmp.geo.size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (!tmp.base)
		goto fail_fd;
	p = pool_private(&tmp);
	if (!p)
		goto fail_map;
	hdr = (struct st_abi_pool *)p->base;
	st_abi_pool_header(hdr, s, p->generation, p->mode, p->sb_size, p->sb_count, p->nslots,
			   &p->geo, p->percpu ? ST_BUFFERS_PER_CPU : ST_BUFFERS_PER_THREAD);
	if (st__fdid_take(&p->fd, (int)fd) < 0) {
		pool_private_free(p);
		goto fail_map;
	}
	/* No slot of the new pool is claimed (a fork child may have counted
	 * one of its parent's, finishing a claim a signal handler interrupted). */
	st_store_seq_cst(&st__control->slots_claimed[s], (uint64_t)p->generation << 32);
	if (p->percpu) {
		/* Every CPU's buffer claimed now, as far as the grant goes; the
		 * consumer looks at all of them. Their pages are not made
		 * resident here (tens of milliseconds, which the thread whose
		 * event made the pool would wait, and the others' events be
		 * lost meanwhile): the daemon allocates them as soon as it has
		 * the pool (ctl/daemon/model/memory.c, st_memory_fill), and
		 * a page a writer reaches before is faulted in by its store. */
		hdr->slots_used = p->nslots;
		for (uint32_t i = 0; i < p->nslots && st__pool_claim_cpu(p, i); i++)
			;
	}
	st_store_release(&st__control->pool_offer[s], ((uint64_t)p->generation << 32) | (uint32_t)fd);
	return p;

fail_map:
	st__munmap(tmp.base, tmp.geo.size);
fail_fd:
	st__close((int)fd);
	return NULL;
}

/*
 * A per-user pool (--buffers per-user, doc/percpu.md): the daemon made it,
 * with every CPU's buffer granted and its pages allocated, and sent it on
 * the socket before it configured the session here. Checked as the daemon
 * checks a process's pool: the header against the memfd's size. The
 * descriptor is closed (the mapping is what is used): the program may
 * close it anyway, and the daemon has its own.
 */
void st__pool_received(const struct st_abi_user_pool_msg *m, int fd)
{
	struct st__pool tmp = { .fd = { .fd = -1 } }, *p;
	const struct st_abi_pool *hdr;
	struct stat st;

	if (!st__control || m->session >= ST_ABI_MAX_SESSIONS || m->writer == 0 ||
	    m->size < ST_ABI_PAGE || st__sys2(SYS_fstat, fd, &st) < 0 ||
	    (uint64_t)st.st_size != m->size)
		goto out;
	tmp.base = st__mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!tmp.base)
		goto out;
	hdr = (const struct st_abi_pool *)tmp.base;
	tmp.session = m->session;
	tmp.generation = m->generation;
	tmp.mode = hdr->mode;
	tmp.sb_size = hdr->sb_size;
	tmp.sb_count = hdr->sb_count;
	tmp.nslots = hdr->nslots;
	if (hdr->magic != ST_ABI_POOL_MAGIC || hdr->version != ST_ABI_VERSION ||
	    hdr->session != m->session || hdr->generation != m->generation ||
	    hdr->buffers != ST_BUFFERS_PER_USER ||
	    st_abi_geometry(tmp.mode, tmp.sb_size, tmp.sb_count, tmp.nslots, &tmp.geo) < 0 ||
	    tmp.geo.size != m->size || hdr->slot_size != tmp.geo.slot_size ||
	    hdr->hdr_size != tmp.geo.hdr_size) {
		st__munmap(tmp.base, m->size);
		goto out;
	}
	tmp.percpu = true;
	tmp.handed = true; /* (the daemon's: nothing to offer) */
	tmp.writer = m->writer;
	tmp.key_xor = m->writer << ST_ABI_WRITER_SHIFT;
	p = pool_private(&tmp);
	if (!p) {
		st__munmap(tmp.base, m->size);
		goto out;
	}
	for (uint32_t i = 0; i < p->nslots; i++)
		p->writers[i].populated = true; /* (granted whole by the daemon) */
	st_store_release(&refs[m->session].received, p);
out:
	st__close(fd);
}

/*
 * The per-user pool of generation gen of session s, which the daemon sent
 * before it configured the session, if it was received (the caller read
 * the socket: st__reg_receive). NULL otherwise.
 */
static struct st__pool *user_pool(uint32_t s, uint32_t gen)
{
	struct st__pool *p = st_load_acquire(&refs[s].received), cfg;

	if (!p || p->generation != gen || read_config(s, &cfg) < 0 || cfg.generation != gen ||
	    cfg.mode != p->mode || cfg.sb_size != p->sb_size || cfg.sb_count != p->sb_count ||
	    cfg.nslots != p->nslots)
		return NULL;
	p->block_ms = cfg.block_ms;
	return p;
}

/* Whether session s asks for its user's pool, and this process can
 * write it (rseq). */
static bool wants_user_pool(uint32_t s)
{
	return st_load_shared(&st__control->session[s].buffers) == ST_BUFFERS_PER_USER &&
	       st__rseq_usable();
}

bool st__pool_from_daemon(uint32_t s)
{
	uint32_t gen;

	if (!st__control)
		return false;
	gen = st_load_acquire(&st__control->session[s].generation);
	return gen && refs[s].failed_gen != gen && wants_user_pool(s);
}

/* The most a thread waits for another thread making a pool; past it, the
 * event is lost (counted by the caller). */
#define MADE_WAIT_NS 10000000ull

/* The pool of generation gen that another thread is making, once it is
 * there; NULL if its making failed, or took longer than MADE_WAIT_NS. */
static struct st__pool *made_by_another(struct pool_ref *r, uint32_t gen)
{
	uint64_t deadline = st__clock_monotonic() + MADE_WAIT_NS;

	do {
		struct st__pool *p = st_load_acquire(&r->pool);

		if (p && p->generation == gen)
			return p;
		if (st_load_relaxed(&r->failed_gen) == gen)
			return NULL;
		st__sys0(SYS_sched_yield);
	} while (st__clock_monotonic() < deadline);
	return NULL;
}

struct st__pool *st__pool_get(uint32_t s, bool looked)
{
	struct pool_ref *r = &refs[s];
	struct st__pool *p = st_load_acquire(&r->pool);
	uint32_t gen, unlocked = 0;

	if (!st__control)
		return NULL;
	gen = st_load_acquire(&st__control->session[s].generation);
	if (p && p->generation == gen)
		return p;
	if (gen == 0 || r->failed_gen == gen)
		return NULL;
	/* One creator. The others wait for it (below): making a pool is a
	 * memfd and a mapping, its pages come later, so threads whose first
	 * events come together lose none. (A signal handler that interrupted
	 * the creator's event never gets here: it finds its thread busy.) */
	if (!st_cas_acquire(&r->lock, &unlocked, 1))
		return made_by_another(r, gen);
	p = st_load_acquire(&r->pool);
	if (!p || p->generation != gen) {
		bool wait = false;

		p = NULL;
		/* Per-user buffers: the daemon's pool, once the caller read it
		 * from the socket; not there then (it could not be sent, or
		 * this process has no rseq), one of its own, which the daemon
		 * reads as it reads per-CPU pools. */
		if (wants_user_pool(s)) {
			p = user_pool(s, gen);
			wait = !p && !looked;
		}
		if (!p && !wait)
			p = pool_create(s);
		if (p) {
			/* The daemon's clock: a daemon that found this process
			 * running wrote it, nobody told the process. */
			st__clock_configure();
			st_store_release(&r->pool, p);
		} else if (!wait) {
			st_store_relaxed(&r->failed_gen, gen);
		}
	}
	st_store_release(&r->lock, 0);
	return p && p->generation == gen ? p : NULL;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/*
 * Makes slot i's memory resident and mapped before its first event: a
 * page first touched by the event path would cost a fault each (11-14 us
 * on this kind of virtual machine: 100 ms over a 32 MiB buffer), where one
 * MADV_POPULATE_WRITE allocates and maps it all at once (8-11 ms; 2.5 ms
 * for pages another thread already used). Under a hypervisor that fills
 * its own page tables lazily, the first store into each page costs a few
 * microseconds more even then (22-30 ms per 32 MiB here: a short run paid
 * it on most of its events, 50 ns a pair), so each page is written once
 * here as well: a no-op store into the data pages (never used in this
 * process yet: zero), an atomic OR of 0 into the header's (the daemon and
 * other threads write there). Once per slot and process: a slot a later
 * thread reuses is mapped already. On a kernel without MADV_POPULATE_WRITE
 * the stores fault the pages in.
 */
static void populate(struct st__pool *p, uint32_t i)
{
	struct st__writer *w = &p->writers[i];
	uint8_t *base = (uint8_t *)slot_at(p, i);

	if (w->populated)
		return;
	w->populated = true;
	st__sys3(SYS_madvise, base, p->geo.slot_size, MADV_POPULATE_WRITE);
	for (uint64_t off = 0; off < p->geo.hdr_size; off += ST_ABI_PAGE)
		st_or_relaxed((uint32_t *)(base + off), 0);
	for (uint64_t off = p->geo.hdr_size; off < p->geo.slot_size; off += ST_ABI_PAGE)
		st_store_shared(base + off, 0);
}

/*
 * The slots of p claimed at least once, as the control page counts them.
 * (A fork child whose status memory could not be made has none: a claim
 * its signal handler interrupted goes on in private memory.)
 */
static uint32_t claimed(const struct st__pool *p)
{
	struct st_abi_control *ctl = st__control;
	uint64_t c = ctl ? st_load_seq_cst(&ctl->slots_claimed[p->session]) : 0;

	return (uint32_t)(c >> 32) == p->generation ? (uint32_t)c : 0;
}

/*
 * Whether slot i, never claimed before, is within the daemon's grant: the
 * claim is counted first, then the grant read (the Dekker exchange of
 * core/abi.h, against the daemon taking back what is not claimed). A claim
 * refused is uncounted again unless a later one was counted meanwhile.
 */
static bool grant_covers(struct st__pool *p, uint32_t i)
{
	struct st_abi_control *ctl = st__control;
	uint64_t *c, tag = (uint64_t)p->generation << 32, old;

	if (!ctl)
		return true; /* (see claimed()) */
	c = &ctl->slots_claimed[p->session];
	old = st_load_seq_cst(c);
	while (old >> 32 != p->generation || (uint32_t)old <= i)
		if (st_cas_seq_cst(c, &old, tag | (i + 1)))
			break;
	if (i < st_load_seq_cst(&ctl->slots_allowed[p->session]))
		return true;
	old = tag | (i + 1);
	st_cas_seq_cst(c, &old, tag | i);
	return false;
}

static struct st__writer *take(struct st__pool *p, uint32_t i, uint32_t expect, int32_t tid)
{
	struct st_abi_slot *slot = slot_at(p, i);
	struct st_abi_pool *hdr = (struct st_abi_pool *)p->base;
	uint32_t used = st_load_relaxed(&hdr->slots_used);

	if (!st_cas_acquire(&slot->owner, &expect, (uint32_t)tid))
		return NULL;
	if (i >= claimed(p) && !grant_covers(p, i)) {
		st_store_release(&slot->owner, 0);
		return NULL;
	}
	while (used <= i && !st_cas_release(&hdr->slots_used, &used, i + 1))
		;
	populate(p, i);
	return &p->writers[i];
}

/* Per-CPU pools: slot i claimed, within the grant (its pages: see
 * pool_create). `populated` says it is claimed. */
bool st__pool_claim_cpu(struct st__pool *p, uint32_t i)
{
	if (p->writers[i].populated)
		return true;
	if (i >= claimed(p) && !grant_covers(p, i))
		return false;
	p->writers[i].populated = true;
	return true;
}

/* Whether slot i is beyond the daemon's grant and not among the first
 * `used` slots (those claimed before, which need no grant). */
static bool beyond_grant(const struct st__pool *p, uint32_t i, uint32_t used)
{
	return st__control && i >= used &&
	       i >= st_load_relaxed(&st__control->slots_allowed[p->session]);
}

/*
 * The lowest free slot: buffers released by exited threads are reused
 * first (their pages are already there), and a program with N threads at a
 * time uses N buffers, however many threads it creates over time. A free
 * slot never claimed and beyond the grant ends the search (the ones after
 * it are beyond it too): *no_memory is then set if no slot is found.
 */
struct st__writer *st__pool_claim(struct st__pool *p, int32_t tid, bool *no_memory)
{
	uint32_t n = p->nslots, first = claimed(p);
	int32_t pid = st__live->pid;

	for (uint32_t i = 0; i < n; i++) {
		bool owned = st_load_relaxed(&slot_at(p, i)->owner) != 0;
		/* A slot never claimed before this search and beyond the grant:
		 * an owner there only tries it (take() gives it back at once),
		 * so it is as good as free, and beyond the grant: the thread
		 * lacks memory, not a slot, however the two threads interleave. */
		bool beyond = beyond_grant(p, i, first);
		struct st__writer *w;

		if (owned && !beyond)
			continue;
		if (!owned) {
			w = take(p, i, 0, tid);
			if (w)
				return w;
		}
		if (beyond || beyond_grant(p, i, claimed(p))) {
			*no_memory = true;
			break;
		}
	}
	/* No free slot: take over one whose owner thread no longer exists. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t owner = st_load_relaxed(&slot_at(p, i)->owner);
		struct st__writer *w;

		if (owner == 0 || st__sys3(SYS_tgkill, pid, owner, 0) != -ESRCH)
			continue;
		w = take(p, i, owner, tid);
		if (w) {
			*no_memory = false;
			return w;
		}
	}
	return NULL;
}

/*
 * Gives the slot back. Its open sub-buffer stays open: what the thread
 * wrote is committed (the consumer sees it), and the next owner goes on
 * writing there (every event carries its thread id) rather than waste the
 * rest of the sub-buffer: threads that come and go fast would otherwise
 * use up the sub-buffers long before the memory.
 */
void st__writer_release(struct st__writer *w)
{
	if (w->percpu)
		return; /* (a CPU's: nobody's to give back) */
	st_store_release(&w->slot->owner, 0);
	/* (a thread's exit, not the event path: the one atomic add there) */
	st_add_relaxed(&w->pool->releases, 1);
}

uint32_t st__pool_mark(const struct st__pool *p)
{
	uint32_t allowed = st__control ? st_load_relaxed(&st__control->slots_allowed[p->session]) : 0;
	uint32_t m = p->generation * 0x9E3779B1u ^ st_load_relaxed(&p->releases) * 0x85EBCA77u ^
		     allowed * 0xC2B2AE3Du;

	return m ? m : 1;
}

void st__pools_forget(void)
{
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st__pool *p = refs[s].pool;

		/* The child must not write into the parent's buffers, but a
		 * write a signal handler interrupted to fork may still finish
		 * here when the handler returns: the range becomes private,
		 * untouched memory rather than a hole. The descriptor, if the
		 * child inherited it, is the parent's offer, not the child's. */
		if (p) {
			st__mmap(p->base, p->geo.size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
			st__fdid_close(&p->fd);
		}
		p = refs[s].received;
		if (p && p != refs[s].pool)
			st__mmap(p->base, p->geo.size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
		refs[s].pool = refs[s].received = NULL;
		refs[s].lock = 0;
		refs[s].failed_gen = 0;
	}
}
