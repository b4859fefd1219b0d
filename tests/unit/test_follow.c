/*
 * Unit tests of following a trace while it is written (st_reader_follow,
 * ctl/reader/follow.c): stream files that grow by arbitrary pieces (a
 * packet cut anywhere, a stream that appears late, lost-event notices)
 * read by one open after another must give every item of the whole trace
 * exactly once; with each open limited to what every stream holds, in the
 * very order one reading of the whole trace gives them; what comes out of
 * order is counted as late; damage is said once; a trace without its
 * metadata yet is -ENOENT.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/reader/reader.h"
#include "tests/unit/ctfbuild.h"

/* A stream file as it will be, and where its packets end. */
struct file {
	const char *name;
	struct buf b;
	size_t ends[16];    /* each packet's end */
	uint64_t ts_end[16]; /* and its timestamp_end */
	int npkt;
	bool present;	    /* the trace holds the file, */
	size_t written;	    /* so much of it so far */
};

static void packet_done(struct file *f, size_t start, size_t pad, uint64_t ts_end)
{
	pkt_end(&f->b, start, pad);
	f->ends[f->npkt] = f->b.len;
	f->ts_end[f->npkt++] = ts_end;
}

/* Three streams: aa and bb from the start, cc later; lost events in two
 * packets; records compact and extended. */
static void build(struct file *f)
{
	size_t p;

	memset(f, 0, 3 * sizeof(*f));
	f[0].name = "aa";
	f[1].name = "bb";
	f[2].name = "cc";
	p = pkt_begin(&f[0].b, 1, 10, 40, 0, 100, 1);
	ev_a(&f[0].b, 10, 1, 0);
	ev_s(&f[0].b, 20, "twenty");
	ev_a(&f[0].b, 40, 4, 0);
	packet_done(&f[0], p, 0, 40);
	p = pkt_begin(&f[0].b, 1, 50, 90, 3, 100, 1);
	ev_a(&f[0].b, 55, 5, 0);
	ev_head_as(&f[0].b, 0, 70, true);
	put_u32(&f[0].b, 7);
	put_u32(&f[0].b, 7);
	ev_a(&f[0].b, 90, 9, 0);
	packet_done(&f[0], p, 20, 90);
	p = pkt_begin(&f[0].b, 1, 100, 130, 3, 100, 1);
	ev_a(&f[0].b, 100, 10, 0);
	ev_a(&f[0].b, 130, 13, 0);
	packet_done(&f[0], p, 0, 130);

	p = pkt_begin(&f[1].b, 2, 15, 45, 0, 100, 2);
	ev_a(&f[1].b, 15, 1, 0);
	ev_a(&f[1].b, 40, 4, 0);
	ev_a(&f[1].b, 45, 4, 0);
	packet_done(&f[1], p, 8, 45);
	p = pkt_begin(&f[1].b, 2, 60, 65, 2, 100, 2);
	ev_s(&f[1].b, 60, "sixty");
	ev_a(&f[1].b, 65, 6, 0);
	packet_done(&f[1], p, 0, 65);
	p = pkt_begin(&f[1].b, 2, 95, 140, 2, 100, 2);
	ev_a(&f[1].b, 95, 9, 0);
	ev_a(&f[1].b, 120, 12, 0);
	ev_a(&f[1].b, 140, 14, 0);
	packet_done(&f[1], p, 0, 140);

	p = pkt_begin(&f[2].b, 3, 70, 80, 0, 100, 3);
	ev_a(&f[2].b, 70, 7, 0);
	ev_a(&f[2].b, 80, 8, 0);
	packet_done(&f[2], p, 0, 80);
	p = pkt_begin(&f[2].b, 3, 110, 150, 1, 100, 3);
	ev_a(&f[2].b, 110, 11, 0);
	ev_a(&f[2].b, 150, 15, 0);
	packet_done(&f[2], p, 0, 150);
}

static void free_files(struct file *f)
{
	for (int i = 0; i < 3; i++)
		free(f[i].b.p);
}

/* An item as a line of text: what it is, where, when. */
static void item_text(const struct st_item *it, char *out, size_t n)
{
	if (it->kind == ST_ITEM_EVENT)
		snprintf(out, n, "ev %s@%llu t%llu", it->event->stream->file,
			 (unsigned long long)it->event->offset,
			 (unsigned long long)it->event->cycles);
	else
		snprintf(out, n, "lost %llu %s t%llu-%llu", (unsigned long long)it->lost->count,
			 it->lost->stream->file, (unsigned long long)it->lost->begin_cycles,
			 (unsigned long long)it->lost->end_cycles);
}

struct items {
	char v[64][64];
	int64_t ns[64];
	int n;
};

static void add_item(struct items *l, const struct st_item *it)
{
	ck_assert_int_lt(l->n, 64);
	item_text(it, l->v[l->n], sizeof(l->v[0]));
	l->ns[l->n++] = it->kind == ST_ITEM_EVENT ? it->event->ns : it->lost->begin_ns;
}

/* The whole trace, read at once. */
static void read_whole(struct file *f, struct items *out)
{
	char *d = make_dir(), err[512];
	struct st_reader *r;
	struct st_item it;

	write_file(d, "metadata", small_meta, strlen(small_meta));
	for (int i = 0; i < 3; i++)
		write_file(d, f[i].name, f[i].b.p, f[i].b.len);
	ck_assert_msg(st_reader_open(&r, d, err, sizeof(err)) == 0, "%s", err);
	out->n = 0;
	while (st_reader_next(r, &it) > 0)
		add_item(out, &it);
	ck_assert_uint_eq(st_reader_damaged(r), 0);
	st_reader_close(r);
	remove_dir(d);
}

/* What the trace holds of each file: written bytes of it. */
static void write_parts(const char *d, struct file *f)
{
	for (int i = 0; i < 3; i++)
		if (f[i].present)
			write_file(d, f[i].name, f[i].b.p, f[i].written);
}

/* The time before which every file holds its items: the end of the last
 * whole packet of each (the next packet's events, and its lost notice,
 * may come at that very time) */
static int64_t whole_limit(const struct file *f)
{
	uint64_t limit = UINT64_MAX;

	for (int i = 0; i < 3; i++) {
		uint64_t t = 0;

		if (!f[i].present)
			continue;
		for (int k = 0; k < f[i].npkt && f[i].ends[k] <= f[i].written; k++)
			t = f[i].ts_end[k];
		if (t < limit)
			limit = t;
	}
	/* (the clock: 1 GHz from 1700000000 s + 500 ns) */
	return limit == UINT64_MAX ? INT64_MAX : 1700000000000000500ll + (int64_t)limit - 1;
}

/* One open of the followed trace in d, limited to limit: its items added
 * to out, which must be in time order. */
static void follow_once(const char *d, struct st_follow *fo, int64_t limit, struct items *out)
{
	char err[512];
	struct st_reader *r;
	struct st_item it;
	int first = out->n;

	ck_assert_msg(st_reader_follow(&r, d, fo, err, sizeof(err)) == 0, "%s", err);
	st_reader_limit(r, limit);
	while (st_reader_next(r, &it) > 0) {
		add_item(out, &it);
		ck_assert(it.kind != ST_ITEM_EVENT || it.event->ns <= limit);
		if (out->n - 1 > first)
			ck_assert_int_le(out->ns[out->n - 2], out->ns[out->n - 1]);
	}
	ck_assert_uint_eq(st_reader_damaged(r), 0);
	st_reader_close(r);
}

/* Grown by random pieces, each open limited to what every stream holds:
 * the order of a whole reading, nothing late. */
START_TEST(test_follow_order)
{
	struct file f[3];
	struct items whole, got = { .n = 0 };
	unsigned seed = 1000 + (unsigned)_i;
	char *d = make_dir();
	struct st_follow *fo = st_follow_new();

	build(f);
	read_whole(f, &whole);
	write_file(d, "metadata", small_meta, strlen(small_meta));
	for (int step = 0; step < 12; step++) {
		for (int i = 0; i < 3; i++) {
			size_t left = f[i].b.len - f[i].written;

			f[i].present = true;
			f[i].written += left ? (size_t)rand_r(&seed) % (left + 1) : 0;
		}
		write_parts(d, f);
		follow_once(d, fo, whole_limit(f), &got);
	}
	for (int i = 0; i < 3; i++) {
		f[i].present = true;
		f[i].written = f[i].b.len;
	}
	write_parts(d, f);
	follow_once(d, fo, INT64_MAX, &got);
	ck_assert_int_eq(got.n, whole.n);
	for (int i = 0; i < whole.n; i++)
		ck_assert_str_eq(got.v[i], whole.v[i]);
	ck_assert_uint_eq(st_follow_late(fo), 0);
	ck_assert_uint_eq(st_follow_behind(fo), 0);
	st_follow_free(fo);
	remove_dir(d);
	free_files(f);
}
END_TEST

static int by_text(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Grown by random pieces, opens limited anywhere (before the previous
 * limit too): every item once; those that come after a later one was
 * given are counted as late. */
START_TEST(test_follow_once)
{
	struct file f[3];
	struct items whole, got = { .n = 0 };
	unsigned seed = 77 + (unsigned)_i;
	char *d = make_dir();
	struct st_follow *fo = st_follow_new();
	uint64_t late = 0;
	int64_t given_max = INT64_MIN;

	build(f);
	read_whole(f, &whole);
	write_file(d, "metadata", small_meta, strlen(small_meta));
	for (int step = 0; step < 15; step++) {
		int before = got.n;

		for (int i = 0; i < 3; i++) {
			size_t left = f[i].b.len - f[i].written;

			/* (cc appears after a while, with older events) */
			f[i].present = i < 2 || step >= 4;
			if (f[i].present)
				f[i].written += left ? (size_t)rand_r(&seed) % (left / 2 + 1) : 0;
		}
		write_parts(d, f);
		follow_once(d, fo, 1700000000000000500ll + rand_r(&seed) % 160, &got);
		for (int k = before; k < got.n; k++)
			late += got.ns[k] < given_max;
		for (int k = before; k < got.n; k++)
			given_max = got.ns[k] > given_max ? got.ns[k] : given_max;
		ck_assert_uint_eq(st_follow_late(fo), late);
	}
	for (int i = 0; i < 3; i++) {
		f[i].present = true;
		f[i].written = f[i].b.len;
	}
	write_parts(d, f);
	follow_once(d, fo, INT64_MAX, &got);
	ck_assert_int_eq(got.n, whole.n);
	qsort(got.v, (size_t)got.n, sizeof(got.v[0]), by_text);
	qsort(whole.v, (size_t)whole.n, sizeof(whole.v[0]), by_text);
	for (int i = 0; i < whole.n; i++)
		ck_assert_str_eq(got.v[i], whole.v[i]);
	ck_assert_uint_eq(st_follow_behind(fo), 0);
	st_follow_free(fo);
	remove_dir(d);
	free_files(f);
}
END_TEST

/* Behind: what is held back. Damage: said at one open, not again. No
 * metadata yet: -ENOENT. */
START_TEST(test_follow_behind_damage)
{
	struct file f[3];
	char *d = make_dir(), err[512];
	struct st_follow *fo = st_follow_new();
	struct st_reader *r;
	struct st_item it;
	uint32_t damaged = 0;
	int n = 0;

	build(f);
	ck_assert_int_eq(st_reader_follow(&r, d, fo, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "no metadata file") != NULL, "%s", err);
	write_file(d, "metadata", small_meta, strlen(small_meta));
	f[0].present = true;
	f[0].written = f[0].b.len;
	write_parts(d, f);
	/* up to 45: the first packet's 3 events, the second's lost notice
	 * (dated at the first's end) */
	ck_assert_msg(st_reader_follow(&r, d, fo, err, sizeof(err)) == 0, "%s", err);
	st_reader_limit(r, 1700000000000000500ll + 45);
	while (st_reader_next(r, &it) > 0)
		n++;
	st_reader_close(r);
	ck_assert_int_eq(n, 4);
	/* (from the second packet's first record) */
	ck_assert_uint_eq(st_follow_behind(fo), f[0].b.len - f[0].ends[0] - PKT_HDR);
	/* a bad magic in the last packet: said once, the rest read */
	f[0].b.p[f[0].ends[1]] ^= 0xff;
	write_parts(d, f);
	for (int k = 0; k < 3; k++) {
		ck_assert_msg(st_reader_follow(&r, d, fo, err, sizeof(err)) == 0, "%s", err);
		while (st_reader_next(r, &it) > 0)
			n++;
		damaged += st_reader_damaged(r);
		st_reader_close(r);
	}
	ck_assert_uint_eq(damaged, 1);
	/* (the second packet's 3 events) */
	ck_assert_int_eq(n, 7);
	ck_assert_uint_eq(st_follow_behind(fo), 0);
	st_follow_free(fo);
	remove_dir(d);
	free_files(f);
}
END_TEST

static Suite *follow_suite(void)
{
	Suite *s = suite_create("follow");
	TCase *tc = tcase_create("follow");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_follow_order, 0, 200);
	tcase_add_loop_test(tc, test_follow_once, 0, 200);
	tcase_add_test(tc, test_follow_behind_damage);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(follow_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
