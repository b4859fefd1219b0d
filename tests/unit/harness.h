/*
 * Shared pieces of the core unit tests: the test plays the session daemon.
 *
 * The core objects are linked into the test program. harness_daemon()
 * connects the runtime to one end of a socketpair and returns the other;
 * harness_session() writes a session configuration into the control page
 * as the daemon would; harness_pool() receives the pool the runtime creates
 * on its first event and maps it, as the daemon does.
 */
#ifndef ST_TEST_HARNESS_H
#define ST_TEST_HARNESS_H

#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/internal.h"
#include "ctl/common/fdpass.h"
#include "tests/unit/run.h"

static inline int harness_daemon(void)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(st__transport_attach(sv[0]), 0);
	return sv[1];
}

static inline void harness_emit(const void *msg, uint32_t len, void *arg)
{
	(void)arg;
	st__transport_send(msg, len, -1);
}

/* Announces every provider, as registration does on connecting. */
static inline void harness_announce(void)
{
	st__conn_lock();
	st__registry_each(harness_emit, NULL);
	st__conn_unlock();
}

static inline void harness_session(uint32_t s, uint32_t gen, uint32_t mode, uint32_t sb_size,
				   uint32_t sb_count, uint32_t nslots)
{
	struct st_abi_session *c = &st__control->session[s];

	c->mode = mode;
	c->sb_size = sb_size;
	c->sb_count = sb_count;
	c->nslots = nslots;
	st__control->slots_allowed[s] = nslots; /* the whole share granted */
	__atomic_store_n(&c->generation, gen, __ATOMIC_RELEASE);
}

/* Reads one message; returns its type, and a passed descriptor in *fd. */
static inline uint32_t harness_recv(int sock, void *buf, size_t cap, int *fd)
{
	int truncated;
	ssize_t n = st_recv_fd(sock, buf, cap, fd, MSG_DONTWAIT, &truncated);

	if (n < (ssize_t)sizeof(struct st_abi_msg))
		return 0;
	return ((struct st_abi_msg *)buf)->type;
}

/* Maps the pool of the POOL message waiting on sock; NULL if none. Its
 * descriptor is kept in *keep (the daemon reads records with pread), or
 * closed if keep is NULL. */
static inline uint8_t *harness_pool_fd(int sock, uint64_t *size, int *keep)
{
	uint8_t buf[ST_ABI_MSG_MAX];
	uint32_t type;
	int fd;

	while ((type = harness_recv(sock, buf, sizeof(buf), &fd)) != 0) {
		struct st_abi_pool_msg *m = (struct st_abi_pool_msg *)buf;
		uint8_t *p;

		if (type != ST_MSG_POOL) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		ck_assert_int_ge(fd, 0);
		p = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ck_assert_ptr_ne(p, MAP_FAILED);
		if (keep)
			*keep = fd;
		else
			close(fd);
		*size = m->size;
		return p;
	}
	return NULL;
}

static inline uint8_t *harness_pool(int sock, uint64_t *size)
{
	return harness_pool_fd(sock, size, NULL);
}

#endif
