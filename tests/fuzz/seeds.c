/*
 * Writes seed inputs for fuzz_ctl, fuzz_insp and fuzz_ring: a few valid
 * control requests, one valid inspector reply of each type (and a path at
 * its length limit), and the example pools of consume.c (valid ones of
 * each mode, forged times, corrupt records). Starting from
 * these, the fuzzers reach the checks behind a message's header at once
 * instead of having to discover each layout first. The replies are built
 * from the structures of ctl/inspect/proto.h, and the pools by consume.c,
 * so they follow any change there. See README.md here.
 *
 *   seeds CTL_DIR INSP_DIR RING_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/inspect/proto.h"
#include "tests/fuzz/consume.h"

static void write_seed(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* An OBJECT reply with a path of path_len bytes (NUL included). */
static size_t object(uint8_t *buf, size_t path_len, const char *link)
{
	struct st_insp_object o = { 0 };
	size_t link_len = link ? strlen(link) + 1 : 0;
	size_t len = sizeof(o) + path_len + link_len;

	o.hdr.type = ST_INSP_OBJECT;
	o.hdr.len = (uint32_t)len;
	o.hdr.id = 1;
	o.base = 0x7f1234560000ull;
	o.memsz = 0x1d2000;
	o.is_pic = 1;
	o.crc = 0x12345678;
	o.build_id_len = 20;
	for (int i = 0; i < 20; i++)
		o.build_id[i] = (uint8_t)(0x11 * i);
	o.path_len = (uint16_t)path_len;
	o.link_len = (uint16_t)link_len;
	memcpy(buf, &o, sizeof(o));
	memset(buf + sizeof(o), 'l', path_len - 1);
	memcpy(buf + sizeof(o), "/usr/lib/", 9);
	buf[sizeof(o) + path_len - 1] = '\0';
	if (link)
		memcpy(buf + sizeof(o) + path_len, link, link_len);
	return len;
}

int main(int argc, char **argv)
{
	static const char *const requests[] = {
		"list\0",
		"create\0name=s1\0output=/tmp/trace\0overwrite=1\0",
		"enable\0session=s1\0pattern=pthread:*\0pattern=libc:*\0pid=42\0",
		"status\0session=s1\0json=1\0",
	};
	static uint8_t buf[ST_INSP_MSG_MAX];
	size_t len;

	if (argc != 4) {
		fprintf(stderr, "usage: %s CTL_DIR INSP_DIR RING_DIR\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		const char *r = requests[i];
		char name[16];

		/* each ends with an empty string */
		for (len = 0; r[len]; len += strlen(r + len) + 1)
			;
		snprintf(name, sizeof(name), "req%zu", i);
		write_seed(argv[1], name, r, len);
	}

	write_seed(argv[2], "object", buf, object(buf, sizeof("/usr/lib/libc.so.6"), "libc.debug"));
	/* the longest path, and one byte more (rejected): the limit takes
	 * three fields changed together, which mutations seldom find */
	write_seed(argv[2], "object-long", buf, object(buf, ST_INSP_PATH_MAX, NULL));
	write_seed(argv[2], "object-too-long", buf, object(buf, ST_INSP_PATH_MAX + 1, NULL));
	{
		struct st_insp_line_table m = { { ST_INSP_LINE_TABLE, sizeof(m), 2 }, 4096 };

		write_seed(argv[2], "lines", &m, sizeof(m));
	}
	{
		static const char exe[] = "/usr/bin/sleep";
		struct st_insp_found m = { { ST_INSP_FOUND, sizeof(m) + sizeof(exe), 3 }, 1, "sleep", 0 };

		memcpy(buf, &m, sizeof(m));
		memcpy(buf + sizeof(m), exe, sizeof(exe));
		write_seed(argv[2], "found", buf, sizeof(m) + sizeof(exe));
	}
	{
		static const char text[] = "2 objects\n\tskipped: /dev/zero\x1b[0m";
		struct st_insp_done m = { { ST_INSP_DONE, sizeof(m) + sizeof(text), 4 }, -13, 2 };

		memcpy(buf, &m, sizeof(m));
		memcpy(buf + sizeof(m), text, sizeof(text));
		write_seed(argv[2], "done", buf, sizeof(m) + sizeof(text));
	}
	for (int k = 0; k < FZ_EX_COUNT; k++) {
		static uint8_t pool[1 << 16];
		struct fz_env e;
		char name[32];
		size_t n;

		if (fz_example(&e, (enum fz_example)k) < 0 || !(n = fz_input(&e, pool, sizeof(pool)))) {
			fprintf(stderr, "seeds: example pool %d\n", k);
			return 1;
		}
		snprintf(name, sizeof(name), "pool-%d", k);
		write_seed(argv[3], name, pool, n);
		fz_env_fini(&e);
	}
	return 0;
}
