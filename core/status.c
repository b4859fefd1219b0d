/*
 * Status memory: the process's half of the status query, as shared memory.
 *
 * One memfd per process. Page 0 is the control page (struct
 * st_abi_control): session configurations and the clock, written by the
 * daemon; loss counters, written by the process. Page k >= 1 backs the
 * state page of the k-th provider registered: the provider's own page-aligned
 * page inside its object is replaced (MAP_FIXED) by a shared mapping of page
 * k, so the tracepoint sites keep reading their page with one RIP-relative
 * load while the daemon switches tracepoints on and off by writing to it.
 *
 * The memfd is sealed against shrinking, so the daemon's mapping can never
 * fault; it has its full size from the start (pages are allocated as they
 * are written): provider pages, then the registration log (abi.h).
 *
 * The page of a provider that went away (dlclose) is parked with a stamp,
 * the number of the SYNC that follows its PROVIDER_GONE, and given to a
 * later provider only once the daemon has answered that SYNC (or no daemon
 * knows the process): until then the daemon may still write the old
 * provider's ids and enable bits there, and a new provider must not read
 * them as its own. A program that opens and closes a library in a loop
 * thus reuses a few pages instead of running out. The provider's own
 * page goes back to private memory with nothing enabled, so that whoever
 * still reads it never sees the page's next owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "internal.h"
#include "sys.h"

/* Provider pages end where the registration log begins. */
#define MAX_PAGES ((uint32_t)(ST_ABI_REGLOG_OFF / ST_ABI_PAGE))

struct st_abi_control *st__control;

static struct st__fdid status = { .fd = -1 };
static uint32_t npages; /* pages in the memfd, control page included */

#define MAX_PARKED 64
static struct {
	uint32_t page;
	uint64_t stamp;
} parked[MAX_PARKED];
static uint32_t nparked;

/* The descriptor, if it still is our memfd (the program may have closed
 * it and opened something else under the same number); -1 otherwise. */
int st__status_fd(void)
{
	return st__fdid_ours(&status) ? status.fd : -1;
}

static int status_create(void)
{
	struct st_abi_control *c;
	long fd = st__sys2(SYS_memfd_create, "shimtrace-status", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return (int)fd;
	/* Full size at once: pages cost nothing until written, and the file
	 * then never changes size (the daemon may map any part of it). */
	if (st__sys2(SYS_ftruncate, fd, ST_ABI_REGLOG_OFF + ST_ABI_REGLOG_MAX) < 0 ||
	    st__sys3(SYS_fcntl, fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0) {
		st__close((int)fd);
		return -EIO;
	}
	c = st__mmap(NULL, ST_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (!c || st__fdid_take(&status, (int)fd) < 0) {
		st__close((int)fd);
		return -ENOMEM;
	}
	c->magic = ST_ABI_CONTROL_MAGIC;
	c->version = ST_ABI_VERSION;
	npages = 1;
	st_store_release(&st__control, c);
	return 0;
}

int st__status_init(void)
{
	return status.fd >= 0 ? 0 : status_create();
}

static const uint8_t zero_page[ST_ABI_PAGE];

/* Backs `state` with page `page` of the memfd fd (st__status_fd(), just
 * checked), which starts as `init`. */
static int map_page(int fd, struct st_provider_state *state, uint32_t page, const void *init)
{
	long off = (long)page * ST_ABI_PAGE;

	if (st__sys4(SYS_pwrite64, fd, init, ST_ABI_PAGE, off) != ST_ABI_PAGE)
		return -EIO;
	if (st__mmap(state, ST_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		     off) != (void *)state)
		return -ENOMEM;
	return 0;
}

int st__status_attach(struct st_provider_state *state, uint64_t acked)
{
	uint32_t page = npages, k;
	int ret;

	int fd = st__status_fd();

	if (fd < 0)
		return -EBADF;
	if ((uintptr_t)state & (ST_ABI_PAGE - 1))
		return -EINVAL;
	for (k = 0; k < nparked && parked[k].stamp > acked; k++)
		;
	if (k < nparked)
		page = parked[k].page;
	else if (page >= MAX_PAGES)
		return -ENOSPC;
	/* A provider registers with nothing enabled. */
	ret = map_page(fd, state, page, zero_page);
	if (ret < 0)
		return ret;
	if (k < nparked)
		parked[k] = parked[--nparked];
	else
		npages = page + 1;
	return (int)page;
}

void st__status_detach(struct st_provider_state *state, uint32_t page, uint64_t stamp)
{
	int fd = st__status_fd();

	/* The provider's page is private again, all off: its memory may
	 * outlive the registration (a provider made at run time, a thread
	 * still in a tracepoint of an object being closed), and must never
	 * read the bits of the page's next owner. */
	st__mmap(state, ST_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0);
	/* Cleared in the memfd too, so the daemon's view is consistent. */
	if (fd < 0 || page == 0 || page >= npages)
		return;
	st__sys4(SYS_pwrite64, fd, zero_page, ST_ABI_PAGE, (long)page * ST_ABI_PAGE);
	if (nparked < MAX_PARKED)
		parked[nparked++] = (typeof(parked[0])){ page, stamp };
}

/*
 * Appends a registration message to the log, for a daemon that finds this
 * process later. Called where registrations are serialised (constructors,
 * destructors, a fork child). A full log is left as it is: a daemon then
 * learns the rest when the process connects.
 */
void st__status_log(const void *msg, uint32_t len)
{
	static const uint8_t pad[8];
	uint64_t at;
	uint32_t padded = (len + 7) & ~7u;

	int fd = st__status_fd();

	if (!st__control || fd < 0)
		return;
	at = st__control->reglog_len;
	if (at + padded > ST_ABI_REGLOG_MAX)
		return;
	if (st__sys4(SYS_pwrite64, fd, msg, len, (long)(ST_ABI_REGLOG_OFF + at)) != len ||
	    (padded > len && st__sys4(SYS_pwrite64, fd, pad, padded - len,
				      (long)(ST_ABI_REGLOG_OFF + at + len)) != padded - len))
		return;
	st_store_release(&st__control->reglog_len, at + padded);
}

uint32_t st__status_size(void)
{
	return npages * ST_ABI_PAGE;
}

/*
 * Fork child: the inherited mappings are shared with the parent. Give the
 * child its own memfd (nothing enabled); the caller then re-backs every
 * provider page (st__registry_reattach).
 */
int st__status_reinit_child(void)
{
	struct st_abi_control *old = st__control;

	st__control = NULL;
	st__fdid_close(&status);
	/* (private memory, not a hole: a write interrupted by the signal
	 * handler that forked may still use the old page when it resumes) */
	if (old)
		st__mmap(old, ST_ABI_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	nparked = 0; /* the child's daemon has seen none of them */
	return status_create();
}

/* Used by st__registry_reattach(): re-backs a provider at its old index,
 * with nothing enabled until the child has registered. */
int st__status_reattach(struct st_provider_state *state, uint32_t page)
{
	int fd = st__status_fd();

	if (fd < 0)
		return -EBADF;
	if (page == 0 || page >= MAX_PAGES)
		return -EINVAL;
	if (page >= npages)
		npages = page + 1;
	return map_page(fd, state, page, zero_page);
}

/* (tracepoint.h: the daemon writes the page, so an acquire load; 0 before
 * the control page exists or for a slot out of range) */
ST_API uint32_t st_session_generation(uint32_t s)
{
	struct st_abi_control *c = st_load_acquire(&st__control);

	if (!c || s >= ST_ABI_MAX_SESSIONS)
		return 0;
	return st_load_acquire(&c->session[s].generation);
}
