/*
 * Unit tests of the packet writer (ctl/daemon/out/tracefile.c): files written
 * past the bytes left to the kernel's writeback are sent on to the disk
 * and dropped from the cache by the flusher thread, and still hold every
 * packet, in order, whole, including a file closed while ranges of it were
 * queued or on their way. Packets of one file made one after another
 * are written together.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/daemon/out/tracefile.h"
#include "tests/unit/run.h"

#define NFILES 3
#define PACKETS 200

/* The byte at offset k of packet i of file n. */
static uint8_t pattern(uint32_t n, uint32_t i, uint64_t k)
{
	return (uint8_t)(n * 31u + i * 7u + k * 13u);
}

/* Packet i's size: 1 to 9 KiB, odd sizes too. */
static uint64_t packet_size(uint32_t i)
{
	return 1000 + (i * 2654435761u) % 8200;
}

static void check_file(const char *path, uint32_t n, uint32_t packets)
{
	FILE *in = fopen(path, "rb");
	uint64_t expect = 0;
	uint8_t buf[9216];
	struct stat st;

	ck_assert_ptr_nonnull(in);
	for (uint32_t i = 0; i < packets; i++) {
		uint64_t len = packet_size(i);

		ck_assert_uint_eq(fread(buf, 1, len, in), len);
		/* (the u64 at offset 0 is the packet's events_discarded: the
		 * writer added no losses to it) */
		for (uint64_t k = 0; k < len; k++)
			if (buf[k] != pattern(n, i, k))
				ck_abort_msg("%s: packet %u byte %llu is %d", path, i,
					     (unsigned long long)k, buf[k]);
		expect += len;
	}
	ck_assert_int_eq(fgetc(in), EOF);
	ck_assert_int_eq(fstat(fileno(in), &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, expect);
	fclose(in);
}

START_TEST(files_past_the_hold_are_whole)
{
	char dir[] = "/tmp/st-writer-XXXXXX", path[NFILES][64];
	struct st_wloss loss = { 0 };
	struct st_file *f[NFILES];
	uint32_t written[NFILES] = { 0 };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* everything past the first byte is sent, 64 KiB at least, and at
	 * most 256 KiB are on their way: the flusher retires ranges */
	st_tracefile_limits(1, 65536, 262144);
	for (uint32_t n = 0; n < NFILES; n++) {
		snprintf(path[n], sizeof(path[n]), "%s/f%u", dir, n);
		f[n] = calloc(1, sizeof(*f[n]));
		ck_assert_ptr_nonnull(f[n]);
		f[n]->fd = open(path[n], O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
		ck_assert_int_ge(f[n]->fd, 0);
		f[n]->loss = &loss;
	}
	for (uint32_t i = 0; i < PACKETS; i++) {
		for (uint32_t n = 0; n < NFILES; n++) {
			uint64_t len = packet_size(i);
			uint8_t *p;

			/* file 1 is closed half way, with ranges queued */
			if (n == 1 && i >= PACKETS / 2)
				continue;
			p = st_tracefile_buf(len);
			ck_assert_ptr_nonnull(p);
			for (uint64_t k = 0; k < len; k++)
				p[k] = pattern(n, i, k);
			st_tracefile_queue(f[n], 0, 0, len, 1, 0);
			written[n]++;
		}
		if (i == PACKETS / 2)
			st_tracefile_close(f[1]);
	}
	st_tracefile_close(f[0]);
	st_tracefile_close(f[2]);
	st_tracefile_sync();
	ck_assert_uint_gt(st_tracefile_retired(), 0);
	st_tracefile_stop();
	ck_assert_uint_eq(loss.events, 0);
	for (uint32_t n = 0; n < NFILES; n++) {
		check_file(path[n], n, written[n]);
		unlink(path[n]);
	}
	rmdir(dir);
}
END_TEST

/*
 * Packets of one file made one after the other go in one buffer, after
 * each other (st_tracefile_more), and are written together: the file holds
 * each, whole and in order; a buffer asked for anything else, or a flush,
 * ends the run.
 */
START_TEST(packets_of_a_file_written_together)
{
	char dir[] = "/tmp/st-writer-XXXXXX", path[64];
	struct st_wloss loss = { 0 };
	struct st_file *f = calloc(1, sizeof(*f));
	uint32_t appended = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	ck_assert_ptr_nonnull(f);
	f->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
	ck_assert_int_ge(f->fd, 0);
	f->loss = &loss;
	for (uint32_t i = 0; i < PACKETS; i++) {
		uint64_t len = packet_size(i), room = 0;
		uint8_t *p = st_tracefile_more(f, &room);

		if (p && room >= len) {
			appended++;
		} else {
			p = st_tracefile_buf(64 << 10);
			ck_assert_ptr_nonnull(p);
		}
		for (uint64_t k = 0; k < len; k++)
			p[k] = pattern(0, i, k);
		st_tracefile_queue(f, 0, (uint64_t)(p - st_tracefile_base()), len, 1, 0);
		if (i == PACKETS / 2) {
			st_tracefile_flush();
			ck_assert_ptr_null(st_tracefile_more(f, &room));
		}
	}
	/* (64 KiB buffers of 1 to 9 KiB packets: most follow another) */
	ck_assert_uint_gt(appended, PACKETS / 2);
	st_tracefile_close(f);
	st_tracefile_sync();
	st_tracefile_stop();
	ck_assert_uint_eq(loss.events, 0);
	check_file(path, 0, PACKETS);
	unlink(path);
	rmdir(dir);
}
END_TEST

int main(void)
{
	return st_run_tests("writer", ST_TESTS(files_past_the_hold_are_whole,
					       packets_of_a_file_written_together));
}
