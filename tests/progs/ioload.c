/*
 * ioload: I/O whose report is known, for report.test (report io). In the
 * directory DIR: writes 3 x 1000 bytes to DIR/big and reads them back in
 * two reads of 1500 (LINE: big-read), writes 5 x 10 bytes to DIR/small
 * through a dup of its descriptor, sends 7 bytes through a pipe and reads
 * them, fails a read on a closed descriptor, and writes 20 bytes to a
 * temporary file made by mkostemp (DIR/tmpXXXXXX) and reads them back.
 * usage: ioload DIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[4096];

int main(int argc, char **argv)
{
	char path[4096];
	int fd, d, p[2];

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/big", argv[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 3; i++)
		if (write(fd, buf, 1000) != 1000) /* LINE: big-write */
			return 1;
	lseek(fd, 0, SEEK_SET);
	for (int i = 0; i < 2; i++)
		if (read(fd, buf, 1500) != 1500) /* LINE: big-read */
			return 1;
	close(fd);
	snprintf(path, sizeof(path), "%s/small", argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	d = dup(fd);
	close(fd);
	for (int i = 0; i < 5; i++)
		if (write(d, buf, 10) != 10)
			return 1;
	close(d);
	if (pipe(p) < 0 || write(p[1], "1234567", 7) != 7 || read(p[0], buf, 7) != 7)
		return 1;
	close(p[0]);
	close(p[1]);
	printf("read closed: %zd\n", read(d, buf, 1));
	snprintf(path, sizeof(path), "%s/tmpXXXXXX", argv[1]);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0 || write(fd, buf, 20) != 20 || lseek(fd, 0, SEEK_SET) != 0 ||
	    read(fd, buf, 20) != 20)
		return 1;
	close(fd);
	return 0;
}
