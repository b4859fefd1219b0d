/*
 * The loaded-object statedump, built by the daemon.
 *
 * When a process registers, and after each dlopen/dlclose, it sends a MAPS
 * message and waits: the daemon reads /proc/PID/maps, opens each mapped ELF
 * object (through /proc/PID/map_files when allowed, so a file replaced on
 * disk since is not mistaken for the one mapped) and reads its type, load
 * extent, GNU build-id and .gnu_debuglink. The events are shaped like
 * LTTng-UST's statedump so babeltrace2's debug-info filter can symbolise
 * the `ip` of every event:
 *
 *   registration:  lttng_ust_statedump:start, then per object bin_info
 *                  (+ build_id, debug_link), then end
 *   dlopen/close:  lttng_ust_lib:load (+ build_id, debug_link) for new
 *                  objects, lttng_ust_lib:unload for objects gone
 *
 * baddr is the load bias for position-independent objects (the address of
 * file virtual address 0) and the first segment's address otherwise; memsz
 * the extent of the loadable segments from there.
 *
 * What an ELF file says is cached by the file's identity (device, inode,
 * size, modification time): the same objects come back in every process,
 * and a registering process waits while its statedump is made.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/daemon/daemon.h"

struct mapping {
	uint64_t start, end, offset;
	char *path;
};

static void elf_notes(Elf_Data *data, struct st_object *o)
{
	GElf_Nhdr nh;
	size_t off = 0, noff, doff;

	while ((off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((char *)data->d_buf + noff, "GNU", 4) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= sizeof(o->build_id)) {
			memcpy(o->build_id, (char *)data->d_buf + doff, nh.n_descsz);
			o->build_id_len = nh.n_descsz;
			return;
		}
	}
}

/* Reads type, load extent, build-id and debug link of the ELF file fd. */
static int elf_info(int fd, struct st_object *o, uint64_t *lowest, uint64_t *lowest_off0,
		    uint64_t *end)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	size_t nph, shstrndx;
	Elf_Scn *scn = NULL;
	bool found = false;

	if (!e)
		return -1;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getphdrnum(e, &nph) != 0 ||
	    (eh.e_type != ET_DYN && eh.e_type != ET_EXEC)) {
		elf_end(e);
		return -1;
	}
	o->is_pic = eh.e_type == ET_DYN;
	*lowest = UINT64_MAX;
	*lowest_off0 = UINT64_MAX;
	*end = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		found = true;
		if (ph.p_vaddr < *lowest)
			*lowest = ph.p_vaddr;
		if (ph.p_offset == 0 && ph.p_vaddr < *lowest_off0)
			*lowest_off0 = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > *end)
			*end = ph.p_vaddr + ph.p_memsz;
	}
	if (!found) {
		elf_end(e);
		return -1;
	}
	if (*lowest_off0 == UINT64_MAX)
		*lowest_off0 = *lowest;
	if (elf_getshdrstrndx(e, &shstrndx) == 0) {
		while ((scn = elf_nextscn(e, scn)) != NULL) {
			GElf_Shdr sh;
			const char *name;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(e, shstrndx, sh.sh_name);
			if (sh.sh_type == SHT_NOTE && !o->build_id_len) {
				data = elf_getdata(scn, NULL);
				if (data)
					elf_notes(data, o);
			} else if (name && strcmp(name, ".gnu_debuglink") == 0) {
				data = elf_getdata(scn, NULL);
				if (data && data->d_size >= 8) {
					const char *s = data->d_buf;
					size_t n = strnlen(s, data->d_size);
					size_t crc_off = (n + 1 + 3) & ~(size_t)3;

					if (n > 0 && crc_off + 4 <= data->d_size) {
						o->debug_link = strndup(s, n);
						memcpy(&o->crc, s + crc_off, 4);
					}
				}
			}
		}
	}
	elf_end(e);
	return 0;
}

struct elf_facts {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	bool valid; /* an ELF object we can describe */
	bool is_pic;
	uint64_t lowest, lowest_off0, end;
	uint8_t build_id[64];
	uint32_t build_id_len;
	char *debug_link;
	uint32_t crc;
};

#define CACHE_SIZE 1024 /* entries; the oldest is replaced when full */
static struct elf_facts cache[CACHE_SIZE];
static uint32_t cache_next;

/* The facts about the ELF file fd: from the cache, or read and cached. */
static const struct elf_facts *facts_of(int fd)
{
	struct st_object o;
	struct elf_facts *f;
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	for (uint32_t i = 0; i < CACHE_SIZE; i++) {
		f = &cache[i];
		if (f->ino == st.st_ino && f->dev == st.st_dev && f->size == st.st_size &&
		    f->mtime.tv_sec == st.st_mtim.tv_sec && f->mtime.tv_nsec == st.st_mtim.tv_nsec &&
		    f->ino)
			return f->valid ? f : NULL;
	}
	f = &cache[cache_next++ % CACHE_SIZE];
	free(f->debug_link);
	memset(f, 0, sizeof(*f));
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	memset(&o, 0, sizeof(o));
	if (elf_info(fd, &o, &f->lowest, &f->lowest_off0, &f->end) < 0) {
		free(o.debug_link);
		return NULL;
	}
	f->valid = true;
	f->is_pic = o.is_pic;
	memcpy(f->build_id, o.build_id, sizeof(f->build_id));
	f->build_id_len = o.build_id_len;
	f->debug_link = o.debug_link;
	f->crc = o.crc;
	return f;
}

static int open_mapped(pid_t pid, const struct mapping *m)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(m->path, O_RDONLY | O_CLOEXEC);
	return fd;
}

void st_objects_free(struct st_object *objs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		free(objs[i].path);
		free(objs[i].debug_link);
	}
	free(objs);
}

int st_maps_read(pid_t pid, struct st_object **out, uint32_t *nout)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	struct mapping *maps = NULL;
	size_t nmaps = 0, mcap = 0;
	struct st_object *objs = NULL;
	uint32_t nobjs = 0;
	FILE *f;

	*out = NULL;
	*nout = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	elf_version(EV_CURRENT);
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end, off;
		int pos = 0;
		char *file;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*u %n", &start, &end, &off,
			   &pos) < 3 || pos == 0)
			continue;
		file = line + pos;
		file[strcspn(file, "\n")] = '\0';
		/* Regular files only: not [vdso], not our memfds, not deleted. */
		if (file[0] != '/' || strncmp(file, "/memfd:", 7) == 0 ||
		    strstr(file, " (deleted)") != NULL)
			continue;
		if (nmaps == mcap) {
			size_t ncap = mcap ? mcap * 2 : 64;
			struct mapping *m = realloc(maps, ncap * sizeof(*m));

			if (!m)
				break;
			maps = m;
			mcap = ncap;
		}
		maps[nmaps].start = start;
		maps[nmaps].end = end;
		maps[nmaps].offset = off;
		maps[nmaps].path = strdup(file);
		if (maps[nmaps].path)
			nmaps++;
	}
	free(line);
	fclose(f);

	/* One object per file, found at its mapping of file offset 0. */
	for (size_t i = 0; i < nmaps; i++) {
		const struct elf_facts *ef;
		struct st_object o;
		bool seen = false;
		int fd;

		if (maps[i].offset != 0)
			continue;
		for (uint32_t k = 0; k < nobjs && !seen; k++)
			seen = strcmp(objs[k].path, maps[i].path) == 0;
		if (seen)
			continue;
		fd = open_mapped(pid, &maps[i]);
		if (fd < 0)
			continue;
		ef = facts_of(fd);
		close(fd);
		if (!ef)
			continue;
		memset(&o, 0, sizeof(o));
		o.is_pic = ef->is_pic;
		if (o.is_pic) {
			o.base = maps[i].start - (ef->lowest_off0 & ~(uint64_t)4095);
			o.memsz = ef->end;
		} else {
			o.base = ef->lowest;
			o.memsz = ef->end - ef->lowest;
		}
		memcpy(o.build_id, ef->build_id, sizeof(o.build_id));
		o.build_id_len = ef->build_id_len;
		o.crc = ef->crc;
		o.path = strdup(maps[i].path);
		o.debug_link = ef->debug_link ? strdup(ef->debug_link) : NULL;
		if (!o.path || (ef->debug_link && !o.debug_link)) {
			free(o.path);
			free(o.debug_link);
			continue;
		}
		{
			struct st_object *n = realloc(objs, (nobjs + 1) * sizeof(*n));

			if (!n) {
				free(o.path);
				free(o.debug_link);
				break;
			}
			objs = n;
			objs[nobjs++] = o;
		}
	}
	for (size_t i = 0; i < nmaps; i++)
		free(maps[i].path);
	free(maps);
	*out = objs;
	*nout = nobjs;
	return 0;
}

/* ---- building the statedump records ---- */

struct rec_buf {
	uint8_t *p;
	size_t len, cap;
	uint64_t events;
	int32_t pid;
	bool failed;
};

static void put(struct rec_buf *b, const void *v, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

static void put_u8(struct rec_buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_u32(struct rec_buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put_u64(struct rec_buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void put_str(struct rec_buf *b, const char *s)
{
	size_t n = strlen(s);

	put(b, s, n < 4095 ? n : 4095);
	put_u8(b, 0);
}

static void begin(struct rec_buf *b, uint32_t class_id, uint64_t ts)
{
	struct st_abi_record h = { (uint16_t)class_id, ts, b->pid, b->pid, 0 };

	put(b, &h, sizeof(h));
	b->events++;
}

static void object_events(struct rec_buf *b, const struct st_object *o, bool load, uint64_t ts)
{
	begin(b, load ? ST_EV_LIB_LOAD : ST_EV_STATEDUMP_BIN_INFO, ts);
	put_u64(b, o->base);
	put_u64(b, o->memsz);
	put_str(b, o->path);
	if (!load)
		put_u8(b, o->is_pic);
	put_u8(b, o->build_id_len > 0);
	put_u8(b, o->debug_link != NULL);
	if (o->build_id_len) {
		begin(b, load ? ST_EV_LIB_BUILD_ID : ST_EV_STATEDUMP_BUILD_ID, ts);
		put_u64(b, o->base);
		put_u64(b, o->build_id_len);
		put(b, o->build_id, o->build_id_len);
	}
	if (o->debug_link) {
		begin(b, load ? ST_EV_LIB_DEBUG_LINK : ST_EV_STATEDUMP_DEBUG_LINK, ts);
		put_u64(b, o->base);
		put_u32(b, o->crc);
		put_str(b, o->debug_link);
	}
}

static bool has(const struct st_object *objs, uint32_t n, const struct st_object *o)
{
	for (uint32_t i = 0; i < n; i++)
		if (objs[i].base == o->base && strcmp(objs[i].path, o->path) == 0)
			return true;
	return false;
}

/* The records for process p: a full statedump, or the difference. */
static void build(struct rec_buf *b, struct st_proc *p, const struct st_object *objs, uint32_t n,
		  uint32_t kind, uint64_t ts)
{
	if (kind == ST_MAPS_STATEDUMP) {
		begin(b, ST_EV_PROCESS, ts);
		put_u32(b, (uint32_t)p->ppid);
		put_u32(b, p->uid);
		put_str(b, p->name);
		put_str(b, p->exe);
		begin(b, ST_EV_STATEDUMP_START, ts);
		for (uint32_t i = 0; i < n; i++)
			object_events(b, &objs[i], false, ts);
		begin(b, ST_EV_STATEDUMP_END, ts);
		return;
	}
	for (uint32_t i = 0; i < p->nobjs; i++)
		if (!has(objs, n, &p->objs[i])) {
			begin(b, ST_EV_LIB_UNLOAD, ts);
			put_u64(b, p->objs[i].base);
		}
	for (uint32_t i = 0; i < n; i++)
		if (!has(p->objs, p->nobjs, &objs[i]))
			object_events(b, &objs[i], true, ts);
}

int st_statedump_into(struct st_daemon *d, struct st_proc *p, struct st_trace *t,
		      struct st_stream *stream, uint64_t ts)
{
	struct rec_buf b = { .pid = p->pid };
	uint8_t *buf;
	int ret = -ENOMEM;

	build(&b, p, p->objs, p->nobjs, ST_MAPS_STATEDUMP, ts);
	buf = b.failed ? NULL : st_packet_buf(b.len);
	if (buf) {
		memcpy(buf, b.p, b.len);
		ret = st_trace_metadata(t, &d->reg, &d->clock, false);
		if (ret == 0)
			ret = st_stream_packet(t, stream, buf, b.len, ts, ts, 0);
	}
	free(b.p);
	return ret;
}

void st_statedump(struct st_daemon *d, struct st_proc *p, uint32_t kind, uint64_t ts)
{
	struct st_object *objs;
	uint32_t n;

	if (st_maps_read(p->pid, &objs, &n) < 0 || n == 0) {
		/* No mappings at all: the process is gone (a dlclose message read
		 * after its exit); what it had loaded still holds. */
		if (!n && kind != ST_MAPS_STATEDUMP)
			return;
		st_log(ST_LOG_WARN, "process %d (%s): cannot read its mappings: callers will not be "
				    "symbolised", p->pid, p->name);
		return;
	}
	if (kind == ST_MAPS_STATEDUMP) {
		p->statedump_done = true;
		p->statedump_ts = ts;
	} else
		/* Events written before the change belong to the objects then
		 * loaded: take them out before the list changes. */
		st_consume_all(d, p, ST_DRAIN_FLUSH);
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct rec_buf b = { .pid = p->pid };
		uint64_t t;

		if (!d->sessions[s] || !d->sessions[s]->active || !p->control ||
		    p->control->session[s].generation != d->sessions[s]->generation)
			continue;
		t = ts < p->pools[s].meta.last_ts ? p->pools[s].meta.last_ts : ts;
		/* A session that saw no statedump yet gets a full one. */
		build(&b, p, objs, n, p->pools[s].has_meta ? kind : ST_MAPS_STATEDUMP, t);
		if (!b.failed && b.len)
			st_meta_write(d, p, s, b.p, b.len, b.events, t, t);
		free(b.p);
	}
	st_objects_free(p->objs, p->nobjs);
	p->objs = objs;
	p->nobjs = n;
	p->maps_ts = ts;
	st_callsites_reset(p);
}

/*
 * A session started after the process registered: its trace needs the
 * objects too, dated when they became what they are (before any event the
 * new pool can hold).
 */
void st_statedump_session(struct st_daemon *d, struct st_proc *p, uint32_t s)
{
	struct rec_buf b = { .pid = p->pid };

	if (!p->statedump_done || p->pools[s].has_meta)
		return;
	build(&b, p, p->objs, p->nobjs, ST_MAPS_STATEDUMP, p->maps_ts);
	if (!b.failed && b.len)
		st_meta_write(d, p, s, b.p, b.len, b.events, p->maps_ts, p->maps_ts);
	free(b.p);
}
