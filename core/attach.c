/*
 * Attach: sending the calls of a process that was started without the
 * preload to the wrappers loaded into it since, and putting them back.
 *
 * The inspector loads the core and the families into the running process
 * (dlopen, ctl/inspect/attach.c) and calls st_attach at a safe point of
 * one thread. Its calls are bound already, through the GOT of each object
 * (got.c): st_attach points every slot that names a function a family
 * wraps at the wrapper, and st_attach_undo puts back what it held. Objects
 * loaded later are redirected by the dlopen hook (dl.c) while attached,
 * and the record of an object unloaded is forgotten by the dlclose hook.
 *
 * Which function is real: the one the slot reached. A slot bound already
 * holds it; one of a lazily bound object that was never called holds an
 * address in the object's PLT, and reaches what the loader's lookup
 * would find (dlvsym with the version the reference needs). A wrapper
 * keeps one real function, so the first slot found for a function, in
 * the loader's order (the program first), chooses it, and a slot that
 * reaches another one is left alone: a call is never sent to a function
 * other than the one it would have reached. A reference to a version
 * that is not the function's default (glibc's old pthread_cond_wait) is
 * left alone, as the preload leaves it (wrappers/pthread.map.in). The
 * real function is stored in the wrapper before any slot is pointed at it.
 *
 * The slots and other threads: a slot is one aligned word, changed with a
 * compare-and-swap from the value it was read with (the loader binding a
 * lazy slot meanwhile wins; that slot stays unredirected). A thread that
 * read the old value finishes that call untraced; one that read the
 * wrapper finishes it in the wrapper, whose code is never unmapped: the
 * undo changes only later calls. Slots in the part the loader made
 * read-only after relocating (RELRO: every slot under -z now -z relro)
 * are made writable for the writes and read-only again after.
 *
 * Locks: the attach lock serialises st_attach, st_attach_undo and the
 * hooks' passes, and is taken before the loader's: a pass reads the
 * objects under dl_iterate_phdr (the loader's list lock, which keeps an
 * object mapped while it is listed) and looks symbols up between two
 * walks, never inside one (dlsym takes the loader's other lock, which a
 * dlopen holds while it waits for the list lock). The families offer
 * their tables from constructors without it (append-only, published
 * with a release store). The tracer's own objects and the loader are
 * never rewritten.
 *
 * Memory: the slots found and those redirected are kept in anonymous
 * mappings (the tracer calls no malloc: a family may wrap it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "attach.h"
#include "internal.h"
#include "lock.h"
#include "sys.h"

#define MAX_FAMILIES 16
#define MAX_NAMES 1024
#define MAX_VERSIONS 64
#define VERSION_LEN 48

static struct {
	struct st__wrap *w;
	uint32_t n;
} fams[MAX_FAMILIES];
static uint32_t nfams; /* published with a release store */

static uint32_t lockword;
static bool attached;

/* A slot found (scratch) or redirected (done). */
struct binding {
	uint64_t key_addr;    /* its object: the base and name pointer */
	const char *key_name; /* dl_iterate_phdr gives */
	uint64_t *slot;
	uint64_t old; /* what it held */
	uint64_t now; /* the wrapper */
	struct st__wrap *w;
	uint16_t version; /* 1 + index in versions, 0: none */
	uint8_t lazy, relro;
	uint8_t live; /* (st__attach_prune's mark) */
};

struct vec {
	struct binding *b;
	uint64_t n, cap;
};

static struct vec scratch, done;

/* The names wrapped, sorted, for one pass (under the lock). */
static struct st__wrap *names[MAX_NAMES];
static uint32_t nnames;
static char versions[MAX_VERSIONS][VERSION_LEN];
static uint32_t nversions;

void st__attach_offer(struct st__wrap *wraps, uint32_t n)
{
	uint32_t k = st_load_relaxed(&nfams);

	if (k == MAX_FAMILIES)
		return;
	fams[k].w = wraps;
	fams[k].n = n;
	st_store_release(&nfams, k + 1);
}

static int push(struct vec *v, const struct binding *b)
{
	if (v->n == v->cap) {
		uint64_t cap = v->cap ? v->cap * 2 : 1024;
		struct binding *nb = st__mmap(NULL, cap * sizeof(*nb), PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (!nb)
			return -ENOMEM;
		if (v->b) {
			memcpy(nb, v->b, v->n * sizeof(*nb));
			st__munmap(v->b, v->cap * sizeof(*nb));
		}
		v->b = nb;
		v->cap = cap;
	}
	v->b[v->n++] = *b;
	return 0;
}

/* Every family's names, sorted (insertion: a few hundred, once a pass). */
static void index_names(void)
{
	uint32_t nf = st_load_acquire(&nfams);

	nnames = 0;
	for (uint32_t f = 0; f < nf; f++)
		for (uint32_t i = 0; i < fams[f].n && nnames < MAX_NAMES; i++) {
			struct st__wrap *w = &fams[f].w[i];
			uint32_t k = nnames++;

			while (k > 0 && strcmp(names[k - 1]->name, w->name) > 0) {
				names[k] = names[k - 1];
				k--;
			}
			names[k] = w;
		}
}

static struct st__wrap *wrap_of(const char *name)
{
	uint32_t lo = 0, hi = nnames;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		int c = strcmp(names[mid]->name, name);

		if (c == 0)
			return names[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* 1 + the index of version v (copied), 0 for none, -1 when it does not fit. */
static int version_of(const char *v)
{
	if (!v)
		return 0;
	for (uint32_t i = 0; i < nversions; i++)
		if (strcmp(versions[i], v) == 0)
			return (int)i + 1;
	if (nversions == MAX_VERSIONS || strlen(v) >= VERSION_LEN)
		return -1;
	strcpy(versions[nversions], v);
	return (int)++nversions;
}

/* Objects a pass leaves alone: the loader's, the tracer's own. */
static bool ours(const struct st__obj *o)
{
	uint64_t mark[2] = { (uintptr_t)&_r_debug, (uintptr_t)&st_attach };
	uint32_t nf = st_load_acquire(&nfams);

	for (int i = 0; i < 2; i++)
		if (mark[i] >= o->lo && mark[i] < o->hi)
			return true;
	for (uint32_t f = 0; f < nf; f++)
		if ((uintptr_t)fams[f].w >= o->lo && (uintptr_t)fams[f].w < o->hi)
			return true;
	return false;
}

/* ---- a pass: find the slots, choose, write ---- */

struct found {
	const struct dl_phdr_info *info;
	int err;
};

static void on_ref(const struct st__got_ref *ref, void *arg)
{
	struct found *f = arg;
	struct st__wrap *w = wrap_of(ref->name);
	struct binding b;
	int v;

	if (!w || *ref->slot == (uintptr_t)w->wrapper)
		return;
	v = version_of(ref->version);
	if (v < 0)
		return;
	b.key_addr = f->info->dlpi_addr;
	b.key_name = f->info->dlpi_name;
	b.slot = ref->slot;
	b.old = st_load_relaxed(ref->slot);
	b.now = (uintptr_t)w->wrapper;
	b.w = w;
	b.version = (uint16_t)v;
	b.lazy = ref->lazy;
	b.relro = ref->relro;
	if (push(&scratch, &b) < 0)
		f->err = -ENOMEM;
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found f = { info, 0 };
	struct st__obj o;

	(void)size;
	st__obj_of(info, &o);
	if (!ours(&o))
		st__got_each(info, &o, on_ref, &f);
	if (f.err)
		*(int *)arg = f.err;
	return 0;
}

/* Outside the loader's locks: which slots to redirect, and to what real
 * function (a slot not taken gets now = 0). */
static void choose(void)
{
	for (uint64_t i = 0; i < scratch.n; i++) {
		struct binding *b = &scratch.b[i];
		void *def = dlsym(RTLD_DEFAULT, b->w->name), *target;

		if (b->version && dlvsym(RTLD_DEFAULT, b->w->name, versions[b->version - 1]) != def)
			def = NULL; /* not the default version: left alone */
		target = b->lazy ? def : (void *)(uintptr_t)b->old;
		if (!def || !target || target == b->w->wrapper) {
			b->now = 0;
			continue;
		}
		if (!b->w->chosen)
			b->w->chosen = target;
		if (target != b->w->chosen)
			b->now = 0;
	}
	for (uint32_t i = 0; i < nnames; i++)
		if (names[i]->chosen && names[i]->real)
			st_store_release(names[i]->real, names[i]->chosen);
}

static int protect(const struct st__obj *o, int prot)
{
	return (int)st__sys3(SYS_mprotect, o->relro_lo, o->relro_hi - o->relro_lo, prot);
}

/*
 * A walk that swaps the slots of v in each object (old to now, or back
 * for an undo), the object's RELRO pages made writable meanwhile if need
 * be; what it swapped is counted, and copied to out (if any).
 */
struct swap {
	struct vec *v, *out;
	bool undo;
	uint64_t count;
	int err;
};

static int swap_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct swap *s = arg;
	struct st__obj o;
	bool opened = false, failed = false;

	(void)size;
	st__obj_of(info, &o);
	for (uint64_t k = s->v->n; k-- > 0;) {
		struct binding *b = &s->v->b[k];
		uint64_t from = s->undo ? b->now : b->old, to = s->undo ? b->old : b->now;

		if (!b->now || b->key_addr != info->dlpi_addr || b->key_name != info->dlpi_name)
			continue;
		if (b->relro && !opened) {
			if (failed || protect(&o, PROT_READ | PROT_WRITE) < 0) {
				failed = true;
				continue;
			}
			opened = true;
		}
		if (__atomic_compare_exchange_n(b->slot, &from, to, false, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED)) {
			s->count++;
			if (s->out && push(s->out, b) < 0)
				s->err = -ENOMEM;
		}
	}
	if (opened)
		protect(&o, PROT_READ);
	return 0;
}

/* One pass over every object loaded (the lock held); -errno or the number
 * of slots redirected now. */
static int64_t pass(void)
{
	struct swap s = { &scratch, &done, false, 0, 0 };
	int err = 0;

	index_names();
	scratch.n = 0;
	dl_iterate_phdr(collect, &err);
	if (err)
		return err;
	if (scratch.n == 0)
		return 0;
	choose();
	dl_iterate_phdr(swap_object, &s);
	return s.err ? s.err : (int64_t)s.count;
}

/* ---- the entry points ---- */

int st__attach_redirect(void)
{
	uint32_t busy = st__tls.busy;
	int64_t n;

	st__tls.busy = 2;
	st__mutex_lock(&lockword);
	attached = true;
	st__stack_note_ours();
	n = pass();
	if (n >= 0 && st__control)
		st_store_release(&st__control->attach_state, ST_ABI_ATTACHED);
	st__mutex_unlock(&lockword);
	st__tls.busy = busy;
	return (int)n;
}

int st_attach(const char *rundir)
{
	uint32_t busy = st__tls.busy;
	int ret;

	st__tls.busy = 2;
	ret = st__reg_home(rundir);
	st__tls.busy = busy;
	return ret < 0 ? ret : st__attach_redirect();
}

int st_attach_undo(void)
{
	struct swap s = { &done, NULL, true, 0, 0 };
	uint32_t busy = st__tls.busy;

	st__tls.busy = 2;
	st__mutex_lock(&lockword);
	attached = false;
	dl_iterate_phdr(swap_object, &s);
	done.n = 0; /* (those of objects gone went with them) */
	if (st__control)
		st_store_release(&st__control->attach_state, ST_ABI_DETACHED);
	st__mutex_unlock(&lockword);
	st__tls.busy = busy;
	return (int)s.count;
}

void st__attach_rebind(void)
{
	uint32_t busy;

	if (!st_load_relaxed(&attached))
		return;
	/* (what the lookups allocate is the tracer's, not the program's) */
	busy = st__tls.busy;
	st__tls.busy = 2;
	st__mutex_lock(&lockword);
	if (attached)
		pass();
	st__mutex_unlock(&lockword);
	st__tls.busy = busy;
}

/* Fork child, one thread: the lock may have been held by a thread that
 * does not exist here. */
void st__attach_fork_child(void)
{
	lockword = 0;
}

/* Marks the slots of objects still loaded. */
static int mark_live(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	for (uint64_t k = 0; k < done.n; k++)
		if (done.b[k].key_addr == info->dlpi_addr && done.b[k].key_name == info->dlpi_name)
			done.b[k].live = 1;
	return 0;
}

void st__attach_prune(void)
{
	uint64_t kept = 0;

	if (!st_load_relaxed(&attached))
		return;
	st__mutex_lock(&lockword);
	for (uint64_t k = 0; k < done.n; k++)
		done.b[k].live = 0;
	dl_iterate_phdr(mark_live, NULL);
	for (uint64_t k = 0; k < done.n; k++)
		if (done.b[k].live)
			done.b[kept++] = done.b[k];
	done.n = kept;
	st__mutex_unlock(&lockword);
}
