/*
 * What an inspector reads from an object file's ELF headers: type, load
 * extent, GNU build-id and .gnu_debuglink (for the statedump), and dynamic
 * symbols (for load-probe's dlopen).
 *
 * The file is whatever the traced process mapped: libelf parses it here,
 * in the inspector, with the owner's rights and the inspector's limits.
 * Facts are cached by the file's identity (device, inode, size, and both
 * modification and change times: the change time cannot be set back): the
 * same objects come back in every process of a user.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl/inspect/elfinfo.h"

static void elf_notes(Elf_Data *data, struct st_insp_facts *o)
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

static void debug_link(Elf_Data *data, struct st_insp_facts *o)
{
	const char *s = data->d_buf;
	size_t n, crc_off;

	if (!s || data->d_size < 8)
		return;
	n = strnlen(s, data->d_size);
	crc_off = (n + 1 + 3) & ~(size_t)3;
	if (n > 0 && n < ST_INSP_PATH_MAX && crc_off + 4 <= data->d_size) {
		o->debug_link = strndup(s, n);
		memcpy(&o->crc, s + crc_off, 4);
	}
}

/* Reads the facts of the ELF file fd into o; 0, or -1 if it is none. */
static int elf_info(int fd, struct st_insp_facts *o)
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
	o->lowest = o->lowest_off0 = UINT64_MAX;
	o->end = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		found = true;
		if (ph.p_vaddr < o->lowest)
			o->lowest = ph.p_vaddr;
		if (ph.p_offset == 0 && ph.p_vaddr < o->lowest_off0)
			o->lowest_off0 = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > o->end)
			o->end = ph.p_vaddr + ph.p_memsz;
	}
	if (!found || o->end < o->lowest) {
		elf_end(e);
		return -1;
	}
	if (o->lowest_off0 == UINT64_MAX)
		o->lowest_off0 = o->lowest;
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
			} else if (name && strcmp(name, ".gnu_debuglink") == 0 && !o->debug_link) {
				data = elf_getdata(scn, NULL);
				if (data)
					debug_link(data, o);
			}
		}
	}
	elf_end(e);
	return 0;
}

struct cached {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	bool valid; /* an ELF object we can describe */
	struct st_insp_facts f;
};

#define CACHE_SIZE 512 /* entries; the oldest is replaced when full */
static struct cached cache[CACHE_SIZE];
static uint32_t cache_next;

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

const struct st_insp_facts *st_insp_facts(int fd)
{
	struct stat st;
	struct cached *c;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	for (uint32_t i = 0; i < CACHE_SIZE; i++) {
		c = &cache[i];
		if (c->ino && c->ino == st.st_ino && c->dev == st.st_dev && c->size == st.st_size &&
		    same_time(&c->mtime, &st.st_mtim) && same_time(&c->ctime, &st.st_ctim))
			return c->valid ? &c->f : NULL;
	}
	c = &cache[cache_next++ % CACHE_SIZE];
	free(c->f.debug_link);
	memset(c, 0, sizeof(*c));
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->size = st.st_size;
	c->mtime = st.st_mtim;
	c->ctime = st.st_ctim;
	elf_version(EV_CURRENT);
	if (elf_info(fd, &c->f) < 0) {
		free(c->f.debug_link);
		c->f.debug_link = NULL;
		return NULL;
	}
	c->valid = true;
	return &c->f;
}

uint64_t st_insp_elf_symbol(int fd, const char *name)
{
	uint64_t value = 0;
	Elf_Scn *scn = NULL;
	Elf *e;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !value && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0) {
				value = sym.st_value;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	return value;
}
