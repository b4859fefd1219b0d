/*
 * Registration by hand, for the test programs that play a hostile process
 * (flood, execkeep): what the preload does, done directly on the socket so
 * that the test decides every byte.
 */
#ifndef ST_TEST_RAWREG_H
#define ST_TEST_RAWREG_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <shimtrace/tracepoint.h>

#include "core/abi.h"
#include "ctl/common/fdpass.h"

/* Connects to RUNDIR/shimtrace.sock; exits on failure. */
static inline int raw_dial(const char *rundir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", rundir, ST_ABI_SOCKET_NAME);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror(a.sun_path);
		exit(1);
	}
	return fd;
}

/* Sends one message, with a descriptor if fd >= 0; 0 or -1. */
static inline int raw_send(int sock, const void *buf, size_t len, int fd)
{
	return st_send_fd(sock, buf, len, fd, 0) == 0 ? 0 : -1;
}

/* A status memfd as the preload makes it: full size, sealed, with the
 * control page's magic. Returns the descriptor; exits on failure. */
static inline int raw_status_memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct st_abi_control c;

	memset(&c, 0, sizeof(c));
	c.magic = ST_ABI_CONTROL_MAGIC;
	c.version = ST_ABI_VERSION;
	if (fd < 0 || ftruncate(fd, ST_ABI_REGLOG_OFF + ST_ABI_REGLOG_MAX) < 0 ||
	    pwrite(fd, &c, sizeof(c), 0) != (ssize_t)sizeof(c) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0) {
		perror("status memfd");
		exit(1);
	}
	return fd;
}

/* HELLO with status_fd as the status memory (announced up to the
 * registration log, as the preload does). */
static inline int raw_hello(int sock, int status_fd)
{
	struct {
		struct st_abi_hello h;
		char exe[8];
	} m;

	memset(&m, 0, sizeof(m));
	m.h.hdr.type = ST_MSG_HELLO;
	m.h.version = ST_ABI_VERSION;
	m.h.ppid = (int32_t)getppid();
	m.h.status_size = (uint32_t)ST_ABI_REGLOG_OFF;
	prctl(PR_GET_NAME, m.h.name);
	strcpy(m.exe, "/x");
	m.h.hdr.len = (uint32_t)(sizeof(m.h) + strlen(m.exe) + 1);
	return raw_send(sock, &m, m.h.hdr.len, status_fd);
}

#endif
