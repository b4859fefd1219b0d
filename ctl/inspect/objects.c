/*
 * OBJECTS: the loaded objects of a process, for its statedump and the
 * call-site line tables.
 *
 * One object per file, found at its mapping of file offset 0. Each is sent
 * with its ELF facts and the identity of its file (the daemon keys its
 * line tables by it), and the open file goes to the lines inspector of the
 * pair (proto.h), where the daemon asks for its table if it needs it. A
 * file on a file system a user process serves (FUSE) is not opened.
 *
 * base is the load bias for position-independent objects (the address of
 * file virtual address 0) and the first segment's address otherwise;
 * memsz the extent of the loadable segments from there.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/inspect/channel.h"
#include "ctl/inspect/elfinfo.h"
#include "ctl/inspect/objects.h"
#include "ctl/inspect/target.h"

/* Where the object lies; false for an extent the daemon refuses (none,
 * over 2^47 bytes, or past the end of the address space). */
static bool extent(const struct st_insp_mapping *m, const struct st_insp_facts *f, uint64_t *base,
		   uint64_t *memsz)
{
	uint64_t bias = f->lowest_off0 & ~(uint64_t)4095;

	if (f->is_pic) {
		if (m->start < bias)
			return false;
		*base = m->start - bias;
		*memsz = f->end;
	} else {
		*base = f->lowest;
		*memsz = f->end - f->lowest;
	}
	return *memsz > 0 && *memsz <= (1ull << 47) && *base <= UINT64_MAX - *memsz;
}

static void send_object(uint64_t id, const struct st_insp_mapping *m,
			const struct st_insp_facts *f, const struct st_insp_key *key, uint64_t base,
			uint64_t memsz)
{
	struct {
		struct st_insp_object o;
		char tail[2 * ST_INSP_PATH_MAX];
	} msg;
	size_t plen = strlen(m->path) + 1, llen = f->debug_link ? strlen(f->debug_link) + 1 : 0;

	memset(&msg.o, 0, sizeof(msg.o));
	msg.o.hdr.type = ST_INSP_OBJECT;
	msg.o.hdr.id = id;
	msg.o.key = *key;
	msg.o.is_pic = f->is_pic;
	msg.o.base = base;
	msg.o.memsz = memsz;
	msg.o.crc = f->crc;
	msg.o.build_id_len = f->build_id_len;
	memcpy(msg.o.build_id, f->build_id, sizeof(msg.o.build_id));
	msg.o.path_len = (uint16_t)plen;
	msg.o.link_len = (uint16_t)llen;
	memcpy(msg.tail, m->path, plen);
	if (llen)
		memcpy(msg.tail + plen, f->debug_link, llen);
	msg.o.hdr.len = (uint32_t)(sizeof(msg.o) + plen + llen);
	st_insp_send(&msg, msg.o.hdr.len, -1);
}

void st_insp_objects(const struct st_insp_target *t, int pidfd)
{
	struct st_insp_mapping *maps;
	struct st_insp_proc p;
	uint32_t sent = 0;
	char why[512];
	size_t n, nfuse;
	dev_t *fuse;
	int ret = st_insp_proc_open(t, pidfd, &p, why, sizeof(why));

	if (ret < 0) {
		st_insp_done(t->hdr.id, ret, 0, "%s", why);
		return;
	}
	nfuse = st_insp_user_fs(&p, &fuse);
	ret = nfuse == SIZE_MAX ? -EACCES : st_insp_read_maps(&p, &maps, &n);
	if (ret < 0) {
		st_insp_done(t->hdr.id, ret, 0, "cannot read the mappings of process %d: %s",
			     t->pid, strerror(-ret));
		free(fuse);
		st_insp_proc_close(&p);
		return;
	}
	for (size_t i = 0; i < n && sent < ST_INSP_MAX_OBJECTS; i++) {
		const struct st_insp_facts *f;
		struct st_insp_key key;
		uint64_t base, memsz;
		bool seen = false;
		int fd;

		if (maps[i].offset != 0 || st_insp_dev_in(maps[i].dev, fuse, nfuse))
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = maps[k].offset == 0 && maps[k].dev == maps[i].dev &&
			       maps[k].ino == maps[i].ino;
		if (seen)
			continue;
		fd = st_insp_open_mapped(&p, maps[i].start, maps[i].end, maps[i].dev, maps[i].ino,
					 maps[i].path);
		if (fd < 0)
			continue;
		f = st_insp_facts(fd);
		if (f && extent(&maps[i], f, &base, &memsz) && st_insp_key_of(fd, &key) == 0) {
			/* the file first: asked for after the daemon has the object */
			st_insp_handoff(&key, fd);
			send_object(t->hdr.id, &maps[i], f, &key, base, memsz);
			sent++;
		}
		close(fd);
	}
	st_insp_maps_free(maps, n);
	free(fuse);
	st_insp_proc_close(&p);
	st_insp_done(t->hdr.id, 0, sent, "%u objects", sent);
}
