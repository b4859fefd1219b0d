/*
 * Messages with a descriptor over SOCK_SEQPACKET sockets, for the daemon,
 * its inspectors and the test programs that play a process (the process
 * side has its own, on raw system calls: core/control.c).
 */
#ifndef ST_CTL_FDPASS_H
#define ST_CTL_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* Sends len bytes of buf, with fd if fd >= 0 (sendmsg flags: flags |
 * MSG_NOSIGNAL); 0 when all was sent, else -errno. */
int st_send_fd(int sock, const void *buf, size_t len, int fd, int flags);

/*
 * Receives one message into buf (cap bytes), with at most one descriptor,
 * close-on-exec, in *fd (else -1): any more are dropped by the kernel,
 * never installed. Returns recvmsg's result; *truncated: the message or
 * its descriptors did not fit (*fd is still the receiver's to let go of).
 */
ssize_t st_recv_fd(int sock, void *buf, size_t cap, int *fd, int flags, int *truncated);

#endif
