/*
 * The trace reader (reader.h): opens the directory, parses the metadata,
 * opens every stream file (stream.c) and merges their items in time order
 * with a min-heap of streams keyed on each stream's next item.
 *
 * The stream whose item was returned last is advanced only at the next
 * call, so what the caller holds stays valid until then.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl/reader/errmsg.h"
#include "ctl/reader/fast.h"
#include "ctl/reader/follow.h"
#include "ctl/reader/reader.h"
#include "ctl/reader/reader_state.h"
#include "ctl/reader/stream.h"
#include "ctl/reader/tsdl.h"

#define METADATA_MAX (16u << 20)

static bool before(const struct st__stream *a, const struct st__stream *b)
{
	return a->key < b->key || (a->key == b->key && a->info.index < b->info.index);
}

static void sift_down(struct st_reader *r, uint32_t i)
{
	struct st__stream **h = r->heap, *s = h[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= r->nheap)
			break;
		if (c + 1 < r->nheap && before(h[c + 1], h[c]))
			c++;
		if (!before(h[c], s))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = s;
}

/* Reads the metadata file whole and parses it. */
static int read_metadata(struct st_reader *r, int dirfd)
{
	char perr[512], *text;
	struct stat st;
	size_t got = 0;
	int fd, ret;

	fd = openat(dirfd, "metadata", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			snprintf(r->err, sizeof(r->err), "%s: no metadata file: not a CTF trace",
				 r->dir);
		else
			snprintf(r->err, sizeof(r->err), "%s/metadata: cannot read: %s", r->dir,
				 strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(r->err, sizeof(r->err), "%s/metadata: cannot read: %s", r->dir,
			 strerror(-ret));
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > METADATA_MAX) {
		snprintf(r->err, sizeof(r->err), "%s/metadata: %s", r->dir,
			 !S_ISREG(st.st_mode) ? "not a regular file" : "larger than 16 MiB");
		close(fd);
		return -EINVAL;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		snprintf(r->err, sizeof(r->err), "%s/metadata: out of memory", r->dir);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	ret = st_tsdl_parse(&r->meta, text, got, perr, sizeof(perr));
	free(text);
	if (ret < 0)
		snprintf(r->err, sizeof(r->err), "%s/metadata: %s", r->dir, perr);
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The stream files: regular files but metadata and dotfiles, sorted. */
static int list_streams(struct st_reader *r, int dirfd, char ***out, uint32_t *count)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char **names = NULL;
	uint32_t n = 0, cap = 0;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		snprintf(r->err, sizeof(r->err), "%s: cannot list: %s", r->dir, strerror(errno));
		return -errno;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (e->d_name[0] == '.' || strcmp(e->d_name, "metadata") == 0)
			continue;
		if (fstatat(dirfd, e->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap ? cap * 2 : 16) * sizeof(*v));

			if (!v)
				goto oom;
			names = v;
			cap = cap ? cap * 2 : 16;
		}
		names[n] = strdup(e->d_name);
		if (!names[n])
			goto oom;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*count = n;
	return 0;
oom:
	closedir(d);
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	snprintf(r->err, sizeof(r->err), "%s: out of memory", r->dir);
	return -ENOMEM;
}

/* Tie order: by stream_instance_id (as babeltrace2 numbers streams), then
 * by file name. */
static int cmp_streams(const void *a, const void *b)
{
	const struct st__stream *x = a, *y = b;

	if (x->info.has_instance_id != y->info.has_instance_id)
		return x->info.has_instance_id ? -1 : 1;
	if (x->info.instance_id != y->info.instance_id)
		return x->info.instance_id < y->info.instance_id ? -1 : 1;
	return strcmp(x->file, y->file);
}

/* The stream files, opened and sized before the metadata is read: the
 * writer declares a class before it writes a packet that uses it
 * (ctl/daemon/out/trace.c), so every packet they hold then is one the
 * metadata read after describes, even while the trace is written. */
static int open_files(struct st_reader *r, int dirfd)
{
	uint32_t n = 0;
	char **names = NULL;
	int ret;

	ret = list_streams(r, dirfd, &names, &n);
	if (ret < 0)
		return ret;
	r->streams = calloc(n ? n : 1, sizeof(*r->streams));
	r->heap = calloc(n ? n : 1, sizeof(*r->heap));
	if (!r->streams || !r->heap) {
		ret = -ENOMEM;
		snprintf(r->err, sizeof(r->err), "%s: out of memory", r->dir);
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		r->nstreams++;
		ret = st__stream_file(r, &r->streams[i], dirfd, names[i]);
		if (ret < 0)
			goto out;
	}
out:
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/* Where a stream of a followed trace goes on (a new one: from its
 * start), noting when it grew; NULL when out of memory. */
static struct st__resume *resume_of(struct st_reader *r, const struct st__stream *s)
{
	struct st__resume *from = st__follow_find(r->follow, s->file);
	struct timespec now;

	if (!from)
		from = st__follow_add(r->follow, s->file);
	if (from && (!from->size || s->size > from->size)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		from->grew_mono = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	}
	return from;
}

/* Checks the stream files' packets (a followed trace's from where its
 * last open stopped) and puts them in time-tie order. */
static int scan_streams(struct st_reader *r)
{
	uint32_t n = r->nstreams, per = r->meta.max_fields ? r->meta.max_fields : 1;
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		struct st__stream *s = &r->streams[i];
		const struct st__resume *from = NULL;

		s->ph = calloc(5 * (size_t)per, sizeof(*s->ph));
		if (s->ph && r->follow)
			from = resume_of(r, s);
		if (!s->ph || (r->follow && !from)) {
			snprintf(r->err, sizeof(r->err), "%s: out of memory", r->dir);
			return -ENOMEM;
		}
		s->pc = s->ph + per;
		s->eh = s->pc + per;
		s->ec = s->eh + per;
		s->fields = s->ec + per;
		s->info.serial = from ? from->serial : i;
		ret = st__stream_scan(s, from);
		if (ret < 0)
			return ret;
	}
	if (n)
		qsort(r->streams, n, sizeof(*r->streams), cmp_streams);
	for (uint32_t i = 0; i < n; i++) {
		struct st__stream *s = &r->streams[i];

		s->info.index = i;
		if (!r->follow)
			s->info.serial = i;
		s->info.file = s->file;
		s->ev.stream = &s->info;
		s->ev.fields = s->fields;
		s->ev.context = s->ec;
		s->lost.stream = &s->info;
	}
	return 0;
}

static const char *env_get(const struct st_tsdl *t, const char *key)
{
	for (uint32_t i = 0; i < t->nenv; i++)
		if (strcmp(t->env[i].key, key) == 0)
			return t->env[i].value;
	return NULL;
}

/* What the writer says of the trace's completeness (see reader.h), and
 * whether it will grow; dirfd is the trace's directory, which a recorder
 * holds locked while it writes (ctl/daemon/out/tracedir.c). */
static void check_complete(struct st_reader *r, int dirfd)
{
	const char *state = env_get(&r->meta, "shimtrace_state");
	const char *lost = env_get(&r->meta, "shimtrace_events_lost_writing");
	const char *why = env_get(&r->meta, "shimtrace_write_error");

	r->finished = true;
	if (lost && strcmp(lost, "0") != 0) {
		snprintf(r->incomplete, sizeof(r->incomplete), "%s events lost writing to disk (%s)",
			 lost, why ? why : "no reason given");
	} else if (state && strcmp(state, "streamed") == 0) {
		; /* (sent live: its packets, numbered, show what was not) */
	} else if (state && strcmp(state, "complete") != 0 && flock(dirfd, LOCK_SH | LOCK_NB) < 0 &&
		   errno == EWOULDBLOCK) {
		snprintf(r->incomplete, sizeof(r->incomplete),
			 "it is still being recorded: what its streams hold so far is shown");
		r->finished = false;
	} else if (state && strcmp(state, "complete") != 0) {
		snprintf(r->incomplete, sizeof(r->incomplete),
			 "its recording did not finish, or its final metadata could not be written "
			 "(a full disk?): what its streams hold is shown");
	}
	st__one_line(r->incomplete);
}

const char *st_reader_incomplete(const struct st_reader *r)
{
	return r->incomplete[0] ? r->incomplete : NULL;
}

static int open_at(struct st_reader **out, const char *dir, struct st_follow *f, char *err,
		   size_t errlen)
{
	struct st_reader *r = calloc(1, sizeof(*r));
	size_t len = strlen(dir);
	int dirfd = -1, ret;

	*out = NULL;
	if (!r) {
		snprintf(err, errlen, "%s: out of memory", dir);
		return -ENOMEM;
	}
	while (len > 1 && dir[len - 1] == '/')
		len--;
	r->dir = strndup(dir, len);
	if (!r->dir) {
		free(r);
		snprintf(err, errlen, "%s: out of memory", dir);
		return -ENOMEM;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		ret = -errno;
		snprintf(r->err, sizeof(r->err), "%s: %s", r->dir,
			 ret == -ENOTDIR ? "not a directory" : strerror(-ret));
		goto fail;
	}
	ret = open_files(r, dirfd);
	if (ret < 0)
		goto fail;
	ret = read_metadata(r, dirfd);
	if (ret < 0)
		goto fail;
	check_complete(r, dirfd);
	ret = st__fast_build(&r->fast, &r->meta);
	if (ret < 0) {
		snprintf(r->err, sizeof(r->err), "%s: out of memory", r->dir);
		goto fail;
	}
	r->follow = f;
	ret = scan_streams(r);
	if (ret < 0)
		goto fail;
	close(dirfd);
	dirfd = -1;
	for (uint32_t i = 0; i < r->nstreams; i++) {
		ret = st__stream_advance(&r->streams[i]);
		if (ret < 0)
			goto fail;
		if (ret > 0)
			r->heap[r->nheap++] = &r->streams[i];
	}
	for (uint32_t i = r->nheap / 2; i-- > 0;)
		sift_down(r, i);
	*out = r;
	return 0;
fail:
	st__one_line(r->err);
	snprintf(err, errlen, "%s", r->err);
	if (dirfd >= 0)
		close(dirfd);
	r->follow = NULL; /* (nothing read: nothing to save) */
	st_reader_close(r);
	return ret;
}

int st_reader_open(struct st_reader **out, const char *dir, char *err, size_t errlen)
{
	return open_at(out, dir, NULL, err, errlen);
}

int st_reader_follow(struct st_reader **out, const char *dir, struct st_follow *f, char *err,
		     size_t errlen)
{
	int ret = open_at(out, dir, f, err, errlen);

	if (ret < 0 || !(*out)->finished)
		return ret;
	/* (its stream files were looked at before the metadata said it is
	 * whole: again, now that they hold all it will) */
	(*out)->follow = NULL;
	st_reader_close(*out);
	return open_at(out, dir, f, err, errlen);
}

bool st_reader_finished(const struct st_reader *r)
{
	return r->finished;
}

void st_reader_limit(struct st_reader *r, int64_t ns)
{
	r->limited = true;
	r->limit = ns;
}

int st_reader_next(struct st_reader *r, struct st_item *item)
{
	struct st__stream *s;
	int ret;

	if (r->error)
		return r->error;
	if (r->pending) {
		r->pending = false;
		ret = st__stream_advance(r->heap[0]);
		if (ret < 0)
			return ret;
		if (ret == 0)
			r->heap[0] = r->heap[--r->nheap];
		if (r->nheap)
			sift_down(r, 0);
	}
	if (r->nheap == 0)
		return 0;
	s = r->heap[0];
	if (r->limited && s->key > r->limit)
		return 0; /* (left for the next open: follow.h) */
	if (r->follow && r->follow->given && s->key < r->follow->given_max)
		r->late++;
	if (r->follow && (!r->given || s->key > r->given_max)) {
		r->given = true;
		r->given_max = s->key;
	}
	r->pending = true;
	item->kind = s->head;
	item->event = s->head == ST_ITEM_EVENT ? &s->ev : NULL;
	item->lost = s->head == ST_ITEM_LOST ? &s->lost : NULL;
	if (s->head == ST_ITEM_LOST)
		r->lost += s->lost.count;
	return 1;
}

const char *st_reader_error(const struct st_reader *r)
{
	return r->err;
}

uint32_t st_reader_damaged(const struct st_reader *r)
{
	return r->ndamage;
}

const char *st_reader_damage(const struct st_reader *r, uint32_t i)
{
	return i < r->ndamage && i < ST__DAMAGE_KEPT && r->damage ? r->damage[i] : NULL;
}

const struct st_tsdl *st_reader_metadata(const struct st_reader *r)
{
	return &r->meta;
}

uint32_t st_reader_nstreams(const struct st_reader *r)
{
	return r->nstreams;
}

const struct st_stream_info *st_reader_stream(const struct st_reader *r, uint32_t i)
{
	return i < r->nstreams ? &r->streams[i].info : NULL;
}

uint64_t st_reader_stream_bytes(const struct st_reader *r)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < r->nstreams; i++)
		n += r->streams[i].size;
	return n;
}

uint64_t st_reader_bytes_read(const struct st_reader *r)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < r->nstreams; i++) {
		const struct st__stream *s = &r->streams[i];

		/* (stream.c: at the end head is 0; inside a packet pos is
		 * the next record's offset in it; between packets next_pkt
		 * is the next one's in the file) */
		if (!s->head)
			n += s->size;
		else if (s->in_packet)
			n += s->pkt.off + s->pos;
		else
			n += s->next_pkt;
	}
	return n;
}

uint64_t st_reader_lost(const struct st_reader *r)
{
	return r->lost;
}

void st_reader_close(struct st_reader *r)
{
	if (!r)
		return;
	if (r->follow)
		st__follow_save(r->follow, r);
	free(r->damage);
	for (uint32_t i = 0; i < r->nstreams; i++) {
		st__stream_close(&r->streams[i]);
		free(r->streams[i].ph);
	}
	free(r->streams);
	free(r->heap);
	st__fast_free(&r->fast);
	st_tsdl_free(&r->meta);
	free(r->dir);
	free(r);
}

int st_event_class_field(const struct st_event_class *c, const char *name)
{
	return st_plan_find(&c->fields, name);
}
