/*
 * Unit tests of the tracepoint registry: providers declared with the public
 * macros register from their object's constructor; their state pages are
 * backed by the shared status memory (what the daemon writes there is what
 * the tracepoint sites read); the PROVIDER messages describe them exactly;
 * invalid descriptors are refused; unregistering says so. Providers made
 * at run time (java/native/dynamic.c) are taken in while the process is
 * connected, one tracepoint at a time, and an unregistered provider's
 * page no longer follows the status memory.
 */
#include <check.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/wire/msg.h"
#include "java/native/dynamic.h"
#include "tests/unit/harness.h"
#include "tests/unit/run.h"

#define ONE_TRACEPOINTS(TP, F)                                  \
	TP(one, first, F(U8, a) F(S16, b) F(HEX64, c) F(STRING, s) F(DOUBLE, r)) \
	TP(one, second, )
ST_PROVIDER_DECLARE(one, ONE_TRACEPOINTS)
ST_PROVIDER_DEFINE(one, ONE_TRACEPOINTS)

#define TWO_TRACEPOINTS(TP, F) TP(two, only, F(U32, x))
ST_PROVIDER_DECLARE(two, TWO_TRACEPOINTS)
ST_PROVIDER_DEFINE(two, TWO_TRACEPOINTS)

/* Collects the PROVIDER messages waiting on sock, by provider name. */
static int providers(int sock, struct st_msg_provider *out, int max)
{
	uint8_t buf[ST_ABI_MSG_MAX];
	const char *err;
	int n = 0, fd;
	uint32_t type;

	while ((type = harness_recv(sock, buf, sizeof(buf), &fd)) != 0) {
		struct st_abi_msg *h = (struct st_abi_msg *)buf;

		if (type != ST_MSG_PROVIDER || n == max)
			continue;
		ck_assert_int_eq(st_msg_parse_provider(buf, h->len, &out[n], &err), 0);
		n++;
	}
	return n;
}

static void free_providers(struct st_msg_provider *v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i].tps);
}

static const struct st_msg_provider *find(const struct st_msg_provider *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

START_TEST(registered_and_described)
{
	int sock = harness_daemon();
	struct st_msg_provider m[8];
	const struct st_msg_provider *one, *two;
	int n;

	harness_announce();
	n = providers(sock, m, 8);
	one = find(m, n, "one");
	two = find(m, n, "two");
	ck_assert_ptr_nonnull(one);
	ck_assert_ptr_nonnull(two);
	ck_assert_uint_ne(one->page, two->page);
	ck_assert_uint_eq(one->count, 2);
	for (uint32_t i = 0; i < one->count; i++) {
		const struct st_msg_tracepoint *tp = &one->tps[i];

		if (strcmp(tp->name, "first") == 0) {
			ck_assert_uint_eq(tp->slot, st__slot_one_first);
			ck_assert_uint_eq(tp->nfields, 5);
			ck_assert_str_eq(tp->fields[0].name, "a");
			ck_assert_uint_eq(tp->fields[0].type, ST_TYPE_U8);
			ck_assert_uint_eq(tp->fields[1].type, ST_TYPE_S16);
			ck_assert_uint_eq(tp->fields[2].type, ST_TYPE_HEX64);
			ck_assert_uint_eq(tp->fields[3].type, ST_TYPE_STRING);
			ck_assert_uint_eq(tp->fields[4].type, ST_TYPE_DOUBLE);
		} else {
			ck_assert_str_eq(tp->name, "second");
			ck_assert_uint_eq(tp->slot, st__slot_one_second);
			ck_assert_uint_eq(tp->nfields, 0);
		}
	}
	free_providers(m, n);
}
END_TEST

START_TEST(state_page_is_shared)
{
	int sock = harness_daemon(), fd = st__status_fd();
	struct st_msg_provider m[8];
	const struct st_msg_provider *two;
	uint32_t on = 5;
	int n;

	harness_announce();
	n = providers(sock, m, 8);
	two = find(m, n, "two");
	ck_assert_ptr_nonnull(two);
	ck_assert(!st_tracepoint_enabled(two, only));
	/* the daemon writes the mask through its own mapping of the memfd */
	ck_assert_int_eq(pwrite(fd, &on, sizeof(on),
				(off_t)two->page * ST_ABI_PAGE + st__slot_two_only * 4), 4);
	ck_assert(st_tracepoint_enabled(two, only));
	ck_assert_uint_eq(st__state_two.mask[st__slot_two_only], 5);
	free_providers(m, n);
}
END_TEST

static const struct st_field bad_fields[] = { { "ok", ST_TYPE_U32 }, { "bad name", ST_TYPE_U32 } };
static struct st_provider_state bad_state;
static const struct st_tracepoint bad_tps[] = {
	{ "bad", "has space", NULL, 0, 0, &bad_state },	       /* name */
	{ "bad", "fields", bad_fields, 2, 1, &bad_state },      /* field name */
	{ "bad", "slot", NULL, 0, ST_PROVIDER_MAX_TRACEPOINTS, &bad_state },
	{ "bad", "type", (const struct st_field[]){ { "x", 99 } }, 1, 2, &bad_state },
	{ "bad", "next", (const struct st_field[]){ { "x", ST_TYPE_LAST + 1 } }, 1, 3, &bad_state },
};

START_TEST(invalid_descriptors_refused)
{
	const struct st_tracepoint *v[] = { &bad_tps[0], &bad_tps[1], &bad_tps[2], &bad_tps[3],
					    &bad_tps[4], NULL };
	int sock = harness_daemon();
	struct st_msg_provider m[8];
	int n;

	/* the last one is a NULL pointer in the section */
	st_tracepoints_register(v, v + 6);
	harness_announce();
	n = providers(sock, m, 8);
	ck_assert_ptr_null(find(m, n, "bad"));
	ck_assert_ptr_nonnull(find(m, n, "one"));
	free_providers(m, n);
}
END_TEST

static struct st_provider_state late_state;
static const struct st_tracepoint late_tp = { "late", "event", NULL, 0, 0, &late_state };

/* The daemon's side of a registration made while connected: collects
 * the PROVIDER messages up to the SYNC, and answers it. */
struct answer {
	int sock;
	int n;
	struct st_msg_provider m[8];
};

static void *collect_and_answer(void *arg)
{
	struct answer *a = arg;
	uint8_t buf[ST_ABI_MSG_MAX];
	const char *err;
	int fd;

	for (;;) {
		uint32_t type = harness_recv(a->sock, buf, sizeof(buf), &fd);
		struct st_abi_msg *h = (struct st_abi_msg *)buf;

		if (type == ST_MSG_PROVIDER && a->n < 8) {
			ck_assert_int_eq(st_msg_parse_provider(buf, h->len, &a->m[a->n], &err), 0);
			a->n++;
		} else if (type == ST_MSG_SYNC) {
			struct st_abi_sync *sy = (struct st_abi_sync *)buf;

			sy->hdr.type = ST_MSG_READY;
			send(a->sock, sy, sizeof(*sy), 0);
			return NULL;
		} else if (type == 0) {
			usleep(1000);
		}
	}
}

START_TEST(late_provider_announced_and_removed)
{
	const struct st_tracepoint *v[] = { &late_tp };
	struct answer a = { .sock = harness_daemon() };
	int sock = a.sock, fd;
	uint8_t buf[ST_ABI_MSG_MAX];
	pthread_t t;
	uint32_t type;
	bool gone = false;

	/* a dlopen'ed object: PROVIDER, then SYNC answered by the daemon */
	pthread_create(&t, NULL, collect_and_answer, &a);
	st_tracepoints_register(v, v + 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(a.n, 1);
	ck_assert_str_eq(a.m[0].name, "late");
	free_providers(a.m, a.n);
	st_tracepoints_unregister(v, v + 1);
	while ((type = harness_recv(sock, buf, sizeof(buf), &fd)) != 0)
		gone |= type == ST_MSG_PROVIDER_GONE;
	ck_assert(gone);
	harness_announce();
	{
		struct st_msg_provider m[8];
		int n = providers(sock, m, 8);

		ck_assert_ptr_null(find(m, n, "late"));
		free_providers(m, n);
	}
}
END_TEST

/* Defines a tracepoint at run time with a daemon answering; what it was
 * told in *a. */
static const struct st_tracepoint *define_answered(struct answer *a, const char *provider,
						   const char *name, uint32_t n,
						   const char *const *names, const uint32_t *types)
{
	const struct st_tracepoint *tp;
	pthread_t t;

	a->n = 0;
	pthread_create(&t, NULL, collect_and_answer, a);
	tp = st_dyn_define(provider, name, n, names, types);
	pthread_join(t, NULL);
	return tp;
}

START_TEST(runtime_providers_taken_in_while_connected)
{
	const char *names[] = { "id", "path", "status" };
	const uint32_t types[] = { ST_TYPE_S64, ST_TYPE_STRING, ST_TYPE_S32 };
	struct answer a = { .sock = harness_daemon() };
	const struct st_tracepoint *req, *note, *tick;
	uint32_t on = 1, page;

	/* the first tracepoint brings its provider in */
	req = define_answered(&a, "japp", "request", 3, names, types);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(a.n, 1);
	ck_assert_str_eq(a.m[0].name, "japp");
	ck_assert_uint_eq(a.m[0].count, 1);
	ck_assert_str_eq(a.m[0].tps[0].name, "request");
	ck_assert_uint_eq(a.m[0].tps[0].slot, 0);
	ck_assert_uint_eq(a.m[0].tps[0].nfields, 3);
	ck_assert_str_eq(a.m[0].tps[0].fields[1].name, "path");
	ck_assert_uint_eq(a.m[0].tps[0].fields[2].type, ST_TYPE_S32);
	page = a.m[0].page;
	free_providers(a.m, a.n);

	/* the next one: the provider again, on its page, with both */
	note = define_answered(&a, "japp", "note", 0, NULL, NULL);
	ck_assert_ptr_eq(note->state, req->state);
	ck_assert_int_eq(a.n, 1);
	ck_assert_uint_eq(a.m[0].page, page);
	ck_assert_uint_eq(a.m[0].count, 2);
	ck_assert_str_eq(a.m[0].tps[1].name, "note");
	ck_assert_uint_eq(a.m[0].tps[1].slot, 1);
	free_providers(a.m, a.n);

	/* another provider: a page of its own */
	tick = define_answered(&a, "jother", "tick", 1, names, types);
	ck_assert_int_eq(a.n, 1);
	ck_assert_str_eq(a.m[0].name, "jother");
	ck_assert_uint_ne(a.m[0].page, page);
	ck_assert_ptr_ne(tick->state, req->state);
	free_providers(a.m, a.n);

	/* what the daemon writes is what the run-time page reads */
	ck_assert_uint_eq(note->state->mask[note->slot], 0);
	ck_assert_int_eq(pwrite(st__status_fd(), &on, sizeof(on),
				(off_t)page * ST_ABI_PAGE + note->slot * 4), 4);
	ck_assert_uint_eq(note->state->mask[note->slot], 1);
	ck_assert_uint_eq(req->state->mask[req->slot], 0);
}
END_TEST

START_TEST(unregistered_page_reads_off)
{
	struct st_provider_state *state = mmap(NULL, sizeof(*state), PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct st_tracepoint tp = { "gone", "event", NULL, 0, 3, state };
	const struct st_tracepoint *v[] = { &tp };
	int sock = harness_daemon(), fd = st__status_fd();
	struct st_msg_provider m[8];
	const struct st_msg_provider *gone;
	uint32_t on = 1;
	off_t at;
	int n;

	ck_assert_ptr_ne(state, MAP_FAILED);
	st_tracepoints_register(v, v + 1);
	harness_announce();
	n = providers(sock, m, 8);
	gone = find(m, n, "gone");
	ck_assert_ptr_nonnull(gone);
	at = (off_t)gone->page * ST_ABI_PAGE + 3 * 4;
	free_providers(m, n);
	ck_assert_int_eq(pwrite(fd, &on, sizeof(on), at), 4);
	ck_assert_uint_eq(state->mask[3], 1);

	st_tracepoints_unregister(v, v + 1);
	ck_assert_uint_eq(state->mask[3], 0);
	/* the page's next owner switched on: not this one */
	ck_assert_int_eq(pwrite(fd, &on, sizeof(on), at), 4);
	ck_assert_uint_eq(state->mask[3], 0);
}
END_TEST

int main(void)
{
	return st_run_tests("registry", ST_TESTS(registered_and_described,
						state_page_is_shared,
						invalid_descriptors_refused,
						late_provider_announced_and_removed,
						runtime_providers_taken_in_while_connected,
						unregistered_page_reads_off));
}
