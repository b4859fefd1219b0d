/*
 * sockfuzz: sends malformed messages to a session daemon's sockets, to
 * check that it survives them and rejects only the sender.
 *
 *   sockfuzz RUNDIR ROUNDS SEED
 *
 * Each round connects to shimtrace.sock (registration) and control.sock
 * (control) and sends one of: random bytes of random length, a message
 * header whose length lies, a truncated HELLO, a HELLO with a memfd that
 * is not sealed or too small, a PROVIDER with counts beyond its length,
 * a POOL for a session that does not exist, messages before HELLO, an
 * empty message, a request with no NUL or no '='. Prints "sent N".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/common/fdpass.h"

static int dial(const char *dir, const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", dir, name);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror(a.sun_path);
		exit(1);
	}
	return fd;
}

static void send_fd(int sock, const void *buf, size_t len, int fd)
{
	st_send_fd(sock, buf, len, fd, MSG_DONTWAIT);
}

static void randomize(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)rand();
}

int main(int argc, char **argv)
{
	static uint8_t buf[70000];
	long rounds, sent = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: sockfuzz RUNDIR ROUNDS SEED\n");
		return 2;
	}
	rounds = atol(argv[2]);
	srand((unsigned)atoi(argv[3]));
	for (long r = 0; r < rounds; r++) {
		int p = dial(argv[1], "shimtrace.sock"), c = dial(argv[1], "control.sock");
		struct st_abi_hello *h = (struct st_abi_hello *)buf;
		struct st_abi_msg *m = (struct st_abi_msg *)buf;
		size_t len = (size_t)rand() % 600;
		int mfd = memfd_create("fuzz", MFD_ALLOW_SEALING);

		randomize(buf, sizeof(buf));
		switch (r % 8) {
		case 0: /* noise */
			send_fd(p, buf, len, -1);
			break;
		case 1: /* a header whose length lies */
			m->type = (uint32_t)(rand() % 12);
			m->len = (uint32_t)rand();
			send_fd(p, buf, len < 8 ? 8 : len, -1);
			break;
		case 2: /* truncated HELLO, with a memfd */
			h->hdr.type = ST_MSG_HELLO;
			h->hdr.len = (uint32_t)len;
			send_fd(p, buf, len % sizeof(*h), mfd);
			break;
		case 3: /* HELLO: unsealed memfd, random status size, random name */
			if (ftruncate(mfd, 4096) < 0)
				break;
			h->hdr.type = ST_MSG_HELLO;
			h->hdr.len = (uint32_t)(sizeof(*h) + 20);
			h->version = ST_ABI_VERSION;
			h->status_size = (uint32_t)rand();
			send_fd(p, buf, sizeof(*h) + 20, mfd);
			break;
		case 4: /* PROVIDER before HELLO, counts beyond the message */
			m->type = ST_MSG_PROVIDER;
			m->len = (uint32_t)len;
			send_fd(p, buf, len < 8 ? 8 : len, -1);
			break;
		case 5: /* POOL for no session, with a descriptor */
			m->type = ST_MSG_POOL;
			m->len = 32;
			send_fd(p, buf, 32, mfd);
			break;
		case 6: /* empty message, then a huge one */
			send_fd(p, buf, 0, -1);
			send_fd(p, buf, sizeof(buf), -1);
			break;
		case 7: /* control: no NUL, no '=', random verbs */
			buf[0] = 's';
			send_fd(c, buf, len, -1);
			break;
		}
		/* and always some noise on the control socket */
		send_fd(c, buf + 1, len / 2, mfd);
		sent++;
		close(mfd);
		close(p);
		close(c);
	}
	printf("sent %ld\n", sent);
	return 0;
}
