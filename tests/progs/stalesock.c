/*
 * stalesock: leaves a socket file at PATH with nobody listening, as a
 * daemon killed with SIGKILL does.
 * usage: stalesock PATH
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	if (argc != 2 || strlen(argv[1]) >= sizeof(a.sun_path) || fd < 0)
		return 2;
	strcpy(a.sun_path, argv[1]);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("bind");
		return 1;
	}
	return 0;
}
