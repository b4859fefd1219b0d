/*
 * The process model: what the daemon knows of a registered process -- its
 * providers and event classes, its pools -- and what it hands over,
 * checked (its connection is procconn.c's).
 *
 * Memory a process hands over must be a memfd sealed against shrinking
 * (pools also against growing), so the daemon's mappings can never fault;
 * sizes are checked against fstat and against what the daemon configured.
 *
 * A process refers to its event classes by ids of its own, given here and
 * written into its provider pages: the id in each record it writes indexes
 * p->classes.cls. A class it registers twice (one provider on two pages, or one
 * library loaded again) keeps its id.
 *
 * Owns: a process's classes part (providers, event ids) and its pools as
 *       handed over; st_proc_new makes a process.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, model, out, wire.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/wire/msg.h"
#include "ctl/daemon/wire/ring.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define REFUSED ST_PROC_REFUSED

void st_proc_warn(struct st_proc *p, const char *what)
{
	st_log_user(p->uid, ST_LOG_WARN, "process %d (%s): %s", p->pid, p->name[0] ? p->name : "?", what);
}

/*
 * The memfd must be sealed with `seals`, at least `size` bytes, and plain
 * shared memory: a hugetlbfs memfd would make a read of ours fault with
 * SIGBUS when huge pages run out.
 */
int st_check_memfd(int fd, int seals, uint64_t size)
{
	struct statfs sf;
	struct stat st;
	int have = fcntl(fd, F_GET_SEALS);

	if (have < 0 || (have & seals) != seals || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < size || fstatfs(fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
		return -1;
	return 0;
}

void st_proc_claim(struct st_daemon *d, struct st_proc *p)
{
	struct st_abi_control *c = p->control;

	if (!c)
		return;
	c->daemon_pid = getpid();
	if (strlen(d->sock_path) < sizeof(c->attach_path))
		memcpy(c->attach_path, d->sock_path, strlen(d->sock_path) + 1);
	else
		c->attach_path[0] = '\0';
}

static struct st_proc_provider *provider_at(struct st_proc *p, uint32_t page)
{
	for (uint32_t i = 0; i < p->classes.nprovs; i++)
		if (p->classes.provs[i]->page == page)
			return p->classes.provs[i];
	return NULL;
}

/* The slot of class id in p's index, or where it would go. */
static uint32_t *index_slot(const struct st_proc *p, uint32_t id)
{
	uint32_t mask = p->classes.ids_size - 1, i = (id * 2654435761u) & mask;

	while (p->classes.ids_by_class[i] && p->classes.cls[p->classes.ids_by_class[i] - 1]->id != id)
		i = (i + 1) & mask;
	return &p->classes.ids_by_class[i];
}

/* Room for one more class in p->classes.cls and its index. */
static int grow_ids(struct st_proc *p)
{
	if (p->classes.ncls == p->classes.cls_cap) {
		uint32_t cap = p->classes.cls_cap ? p->classes.cls_cap * 2 : 64;
		struct st_evclass **v = realloc(p->classes.cls, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->classes.cls = v;
		p->classes.cls_cap = cap;
	}
	if (2 * (p->classes.ncls + 1) > p->classes.ids_size) {
		uint32_t size = p->classes.ids_size ? p->classes.ids_size * 2 : 128;
		uint32_t *old = p->classes.ids_by_class, *v = calloc(size, sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->classes.ids_by_class = v;
		p->classes.ids_size = size;
		for (uint32_t i = 0; i < p->classes.ncls; i++)
			*index_slot(p, p->classes.cls[i]->id) = i + 1;
		free(old);
	}
	return 0;
}

/*
 * p's event id for the class of tracepoint tp of provider `provider`: the
 * one it has, or a new one within its owner's quotas. Returns the id, or
 * -1 (REFUSED: a quota; else out of memory).
 */
static int class_id(struct st_daemon *d, struct st_proc *p, const char *provider,
		    const struct st_msg_tracepoint *tp, int *why)
{
	struct st_evclass *c = st_evreg_find(&d->reg, provider, tp->name, tp->fields, tp->nfields);
	uint32_t *slot;

	*why = -1;
	if (c && p->classes.ids_size && *(slot = index_slot(p, c->id)))
		return (int)*slot - 1;
	if (!st_quota_check(p->user, ST_Q_FIELDS, tp->nfields, p->pid,
			    "an event class with too many fields") ||
	    !st_quota_check(p->user, ST_Q_CLASSES, p->classes.ncls + 1, p->pid,
			    "too many tracepoints in one process") ||
	    p->classes.ncls >= UINT16_MAX) {
		*why = REFUSED;
		return -1;
	}
	if (grow_ids(p) < 0 ||
	    (!c && !(c = st_evreg_intern(&d->reg, provider, tp->name, tp->fields, tp->nfields))))
		return -1;
	st_evclass_ref(c);
	if (st_evclass_user_add(c, p->uid)) {
		/* new to this user: it counts against the user's quotas */
		if (!st_quota_take(p->user, ST_Q_CLASSES, 1, p->pid, "too many event classes"))
			goto refused;
		if (!st_quota_take(p->user, ST_Q_METADATA, c->decl_bytes, p->pid,
				   "too much metadata")) {
			st_quota_give(p->user, ST_Q_CLASSES, 1);
			goto refused;
		}
	}
	p->classes.cls[p->classes.ncls] = c;
	*index_slot(p, c->id) = p->classes.ncls + 1;
	return (int)p->classes.ncls++;
refused:
	st_evclass_user_del(c, p->uid);
	st_evclass_unref(&d->reg, c);
	*why = REFUSED;
	return -1;
}

/* Gives back p's classes (it is being freed). */
static void release_classes(struct st_daemon *d, struct st_proc *p)
{
	for (uint32_t i = 0; i < p->classes.ncls; i++) {
		struct st_evclass *c = p->classes.cls[i];

		if (st_evclass_user_del(c, p->uid)) {
			st_quota_give(p->user, ST_Q_CLASSES, 1);
			st_quota_give(p->user, ST_Q_METADATA, c->decl_bytes);
		}
		st_evclass_unref(&d->reg, c);
	}
	free(p->classes.cls);
	free(p->classes.ids_by_class);
	p->classes.cls = NULL;
	p->classes.ids_by_class = NULL;
	p->classes.ncls = p->classes.ids_size = 0;
}

/* Providers under the daemon's own names would shadow its events. */
static bool builtin_provider(const char *name)
{
	return strcmp(name, "lttng_ust_statedump") == 0 || strcmp(name, "lttng_ust_lib") == 0 ||
	       strcmp(name, "shimtrace") == 0;
}

static void provider_free(struct st_proc *p, struct st_proc_provider *pr)
{
	p->classes.registrations -= pr->count;
	munmap(pr->map, ST_ABI_PAGE);
	free(pr->tps);
	free(pr);
}

int st_proc_on_provider(struct st_daemon *d, struct st_proc *p, const void *buf, size_t len)
{
	struct st_msg_provider m;
	struct st_proc_provider *pr;
	struct st_proc_tp *tps = NULL;
	struct stat st;
	const char *err;
	int ret = -1;

	if (st_msg_parse_provider(buf, len, &m, &err) < 0) {
		st_proc_warn(p, err);
		return -1;
	}
	if (builtin_provider(m.name)) {
		st_proc_warn(p, "PROVIDER under a name of the daemon's own events");
		goto out;
	}
	if (fstat(p->status_fd, &st) < 0 || (uint64_t)m.page >= (uint64_t)st.st_size / ST_ABI_PAGE) {
		st_proc_warn(p, "PROVIDER page beyond its status memory");
		goto out;
	}
	pr = provider_at(p, m.page);
	if (pr && strcmp(pr->name, m.name) != 0) {
		st_proc_warn(p, "PROVIDER page reused under another name");
		goto out;
	}
	/* Tracepoints held at once count against the classes quota too: a
	 * process cannot make us keep more than that, whatever it repeats. */
	if (!st_quota_check(p->user, ST_Q_CLASSES, p->classes.registrations - (pr ? pr->count : 0) + m.count,
			    p->pid, "too many tracepoints in one process")) {
		ret = REFUSED;
		goto out;
	}
	tps = calloc(m.count, sizeof(*tps));
	if (!tps)
		goto out;
	for (uint32_t i = 0; i < m.count; i++) {
		int why, id = class_id(d, p, m.name, &m.tps[i], &why);

		if (id < 0) {
			ret = why;
			goto out;
		}
		tps[i] = (struct st_proc_tp){ m.tps[i].slot, (uint32_t)id };
	}
	if (!pr) {
		struct st_proc_provider **v = realloc(p->classes.provs, (p->classes.nprovs + 1) * sizeof(*v));

		if (!v || !(pr = calloc(1, sizeof(*pr)))) {
			if (v)
				p->classes.provs = v;
			goto out;
		}
		p->classes.provs = v;
		pr->map = mmap(NULL, ST_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, p->status_fd,
			       (off_t)m.page * ST_ABI_PAGE);
		if (pr->map == MAP_FAILED) {
			free(pr);
			goto out;
		}
		pr->page = m.page;
		memcpy(pr->name, m.name, sizeof(pr->name));
		p->classes.provs[p->classes.nprovs++] = pr;
	}
	/* (a provider announced again, after a reconnection: its list anew) */
	p->classes.registrations += m.count - pr->count;
	free(pr->tps);
	pr->tps = tps;
	pr->count = m.count;
	tps = NULL;
	st_session_apply(d, p);
	ret = 0;
out:
	free(tps);
	free(m.tps);
	return ret;
}

void st_proc_on_provider_gone(struct st_proc *p, const struct st_abi_provider_gone *m)
{
	for (uint32_t i = 0; i < p->classes.nprovs; i++) {
		struct st_proc_provider *pr = p->classes.provs[i];

		if (pr->page != m->page)
			continue;
		provider_free(p, pr);
		p->classes.provs[i] = p->classes.provs[--p->classes.nprovs];
		return;
	}
}

void st_proc_pool_close(struct st_proc *p, uint32_t s)
{
	st_proc_pool_unmap(&p->pools[s]);
}

int st_proc_on_pool(struct st_daemon *d, struct st_proc *p, const struct st_abi_pool_msg *m, int fd)
{
	struct st_session *ses = m->session < ST_ABI_MAX_SESSIONS ? st_session_at(d, m->session, p) : NULL;
	struct st_proc_pool *pool;
	const struct st_abi_pool *hdr;
	struct st_abi_geometry g;
	uint8_t *base;
	int keep;

	if (fd < 0 || !ses || ses->generation != m->generation) {
		/* A pool for a session that is gone: not an error. */
		return 0;
	}
	if (st_abi_geometry(ses->mode, ses->sb_size, ses->sb_count, ses->nslots, &g) < 0)
		return -1;
	if (m->size != g.size || st_check_memfd(fd, F_SEAL_SHRINK | F_SEAL_GROW, g.size) < 0) {
		st_proc_warn(p, "buffer pool is not a sealed memfd of the configured size");
		return -1;
	}
	pool = &p->pools[m->session];
	if (pool->ring.base) {
		/* (offered in the control page and sent as well: the first wins) */
		if (pool->generation == m->generation)
			return 0;
		st_proc_pool_unmap(pool);
	}
	base = mmap(NULL, g.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -1;
	hdr = (const struct st_abi_pool *)base;
	if (hdr->magic != ST_ABI_POOL_MAGIC || hdr->version != ST_ABI_VERSION ||
	    hdr->session != m->session || hdr->generation != m->generation ||
	    hdr->sb_size != ses->sb_size || hdr->sb_count != ses->sb_count ||
	    hdr->nslots != ses->nslots || hdr->slot_size != g.slot_size ||
	    hdr->hdr_size != g.hdr_size ||
	    (hdr->buffers != ST_BUFFERS_PER_THREAD &&
	     !(hdr->buffers == ST_BUFFERS_PER_CPU && ses->buffers != ST_BUFFERS_PER_THREAD))) {
		munmap(base, g.size);
		st_proc_warn(p, "buffer pool header does not match the session");
		return -1;
	}
	pool->slots = calloc(ses->nslots, sizeof(*pool->slots));
	/* records are read from it with pread (ring.h); without a descriptor
	 * to spare, from the mapping */
	keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (!pool->slots ||
	    st_ring_init(&pool->ring, base, keep, g.size, ses->mode, ses->sb_size, ses->sb_count,
			 ses->nslots) < 0) {
		munmap(base, g.size);
		if (keep >= 0)
			close(keep);
		free(pool->slots);
		memset(pool, 0, sizeof(*pool));
		return -1;
	}
	/* (a process without rseq makes per-thread buffers of the same
	 * geometry: read as it made them) */
	pool->ring.percpu = hdr->buffers == ST_BUFFERS_PER_CPU;
	if (ses->buffers != ST_BUFFERS_PER_THREAD && !pool->ring.percpu && !p->warned[ST_WARN_NO_RSEQ]) {
		/* (said once: the process's choice, the fallback of doc/percpu.md) */
		p->warned[ST_WARN_NO_RSEQ] = true;
		st_proc_warn(p, "it has no rseq area (glibc before 2.35, or "
				"GLIBC_TUNABLES=glibc.pthread.rseq=0): per-thread buffers instead of "
				"per-CPU ones");
	}
	pool->filled = 0;
	/* the first sub-buffer of every CPU's buffer now, the rest by ticks */
	st_memory_fill(pool, st_memory_claimed(p, m->session, ses->generation, ses->nslots),
		       ses->nslots);
	pool->generation = ses->generation;
	/* the process may close its descriptor of the pool now */
	__atomic_store_n(&p->control->pool_taken[m->session], m->generation, __ATOMIC_RELEASE);
	return 1;
}

int st_proc_pool_adopt(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t gen, int fd)
{
	struct st_session *ses = s < ST_ABI_MAX_SESSIONS ? st_session_at(d, s, p) : NULL;
	struct st_abi_pool_msg m = { { ST_MSG_POOL, sizeof(m) }, s, gen, 0 };
	struct st_abi_geometry g;
	int ret;

	if (!ses || st_abi_geometry(ses->mode, ses->sb_size, ses->sb_count, ses->nslots, &g) < 0)
		return 0;
	m.size = g.size;
	ret = st_proc_on_pool(d, p, &m, fd);
	if (ret < 0)
		st_proc_warn(p, "the buffer pool it offered is unusable");
	return ret;
}

struct st_proc *st_proc_new(struct st_daemon *d, pid_t pid, uid_t uid, gid_t gid)
{
	struct st_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->d = d;
	p->pid = pid;
	p->uid = uid;
	p->gid = gid;
	p->instance = d->next_instance++;
	p->pidfd = p->status_fd = p->conn.fd = -1;
	return p;
}

void st_proc_free(struct st_daemon *d, struct st_proc *p)
{
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++)
		free(p->held_cur[s]);
	for (uint32_t i = 0; i < p->classes.nprovs; i++)
		provider_free(p, p->classes.provs[i]);
	free(p->classes.provs);
	release_classes(d, p);
	if (p->control)
		munmap(p->control, ST_ABI_PAGE);
	if (p->status_fd >= 0)
		close(p->status_fd);
	free(p);
}

