/*
 * Resolving a probe's specification in the process it is planted in.
 *
 * The loaded objects come from dl_iterate_phdr (their load bias and
 * segments); their symbols from their files' .symtab, else .dynsym, read
 * from a private read-only mapping of the file (the executable through
 * /proc/self/exe). A function is a STT_FUNC symbol with a size; an IFUNC
 * names its resolver, not the code that runs, and is refused. Runs
 * outside the event path, serialised by probes.c; system calls are made
 * directly (the io family interposes glibc's).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "core/sys.h"
#include "dynprobe/where.h"

#define MAX_OBJECTS 512

struct object {
	char path[DP_SPEC_MAX];
	uint64_t bias;
	uint64_t lo, hi; /* the extent of its loadable segments, in memory */
};

static struct object objects[MAX_OBJECTS];
static unsigned nobjects;

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object *o;

	(void)size;
	(void)arg;
	if (nobjects == MAX_OBJECTS)
		return 1;
	o = &objects[nobjects];
	memset(o, 0, sizeof(*o));
	if (!info->dlpi_name || !info->dlpi_name[0])
		snprintf(o->path, sizeof(o->path), "%s", nobjects == 0 ? "/proc/self/exe" : "");
	else
		snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name);
	if (!o->path[0] || strncmp(o->path, "linux-vdso", 10) == 0)
		return 0;
	o->bias = info->dlpi_addr;
	o->lo = UINT64_MAX;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (o->bias + ph->p_vaddr < o->lo)
			o->lo = o->bias + ph->p_vaddr;
		if (o->bias + ph->p_vaddr + ph->p_memsz > o->hi)
			o->hi = o->bias + ph->p_vaddr + ph->p_memsz;
	}
	nobjects++;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The executable's file name: /proc/self/exe's target's. */
static void exe_name(char *out, size_t n)
{
	char link[DP_SPEC_MAX];
	long r = st__sys3(SYS_readlink, "/proc/self/exe", link, sizeof(link) - 1);

	link[r > 0 ? r : 0] = '\0';
	snprintf(out, n, "%s", base_name(link));
}

static bool lib_matches(const struct object *o, const char *lib, bool exe)
{
	char name[DP_SPEC_MAX];
	size_t n = strlen(lib);

	if (exe)
		exe_name(name, sizeof(name));
	else
		snprintf(name, sizeof(name), "%s", base_name(o->path));
	return strncmp(name, lib, n) == 0 && (name[n] == '\0' || name[n] == '.' || name[n] == '-');
}

/* An object's file, mapped read-only. */
struct image {
	const uint8_t *p;
	size_t size;
};

static int image_open(const char *path, struct image *im)
{
	struct stat st;
	long fd = st__sys3(SYS_open, path, O_RDONLY | O_CLOEXEC, 0);

	im->p = NULL;
	if (fd < 0)
		return (int)fd;
	if (st__sys2(SYS_fstat, fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		st__close((int)fd);
		return -ENOEXEC;
	}
	im->size = (size_t)st.st_size;
	im->p = st__mmap(NULL, im->size, PROT_READ, MAP_PRIVATE, (int)fd, 0);
	st__close((int)fd);
	if (!im->p)
		return -ENOMEM;
	if (memcmp(im->p, ELFMAG, SELFMAG) != 0 || im->p[EI_CLASS] != ELFCLASS64) {
		st__munmap((void *)im->p, im->size);
		im->p = NULL;
		return -ENOEXEC;
	}
	return 0;
}

static void image_close(struct image *im)
{
	if (im->p)
		st__munmap((void *)im->p, im->size);
	im->p = NULL;
}

/* Whether [off, off + len) lies in the image. */
static bool inside(const struct image *im, uint64_t off, uint64_t len)
{
	return off <= im->size && len <= im->size - off;
}

/*
 * Calls fn on each symbol of the image's .symtab (or, without one, its
 * .dynsym) until it returns true; true then.
 */
typedef bool (*sym_fn)(const Elf64_Sym *s, const char *name, void *arg);

static bool each_symbol(const struct image *im, sym_fn fn, void *arg)
{
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)im->p;
	const Elf64_Shdr *sh;
	int pass;

	if (e->e_shentsize != sizeof(Elf64_Shdr) ||
	    !inside(im, e->e_shoff, (uint64_t)e->e_shnum * sizeof(Elf64_Shdr)))
		return false;
	sh = (const Elf64_Shdr *)(im->p + e->e_shoff);
	for (pass = 0; pass < 2; pass++) {
		uint32_t want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		bool had = false;

		for (unsigned i = 0; i < e->e_shnum; i++) {
			const Elf64_Shdr *s = &sh[i], *str;

			if (s->sh_type != want || s->sh_link >= e->e_shnum ||
			    s->sh_entsize != sizeof(Elf64_Sym) || !inside(im, s->sh_offset, s->sh_size))
				continue;
			str = &sh[s->sh_link];
			if (!inside(im, str->sh_offset, str->sh_size) || str->sh_size == 0)
				continue;
			had = true;
			for (uint64_t k = 0; k < s->sh_size / sizeof(Elf64_Sym); k++) {
				const Elf64_Sym *y = (const Elf64_Sym *)(im->p + s->sh_offset) + k;
				const char *strs = (const char *)im->p + str->sh_offset;

				if (y->st_name >= str->sh_size ||
				    !memchr(strs + y->st_name, '\0', str->sh_size - y->st_name))
					continue;
				if (fn(y, strs + y->st_name, arg))
					return true;
			}
		}
		if (had)
			return false;
	}
	return false;
}

struct by_name {
	const char *name;
	const Elf64_Sym *found;
	bool ifunc;
};

static bool match_name(const Elf64_Sym *s, const char *name, void *arg)
{
	struct by_name *b = arg;

	if (s->st_shndx == SHN_UNDEF || strcmp(name, b->name) != 0)
		return false;
	if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC) {
		b->ifunc = true;
		return false;
	}
	if (ELF64_ST_TYPE(s->st_info) != STT_FUNC)
		return false;
	b->found = s;
	return true;
}

struct by_addr {
	uint64_t vaddr;
	const Elf64_Sym *found;
	const char *name;
};

static bool match_addr(const Elf64_Sym *s, const char *name, void *arg)
{
	struct by_addr *b = arg;

	if (s->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s->st_info) != STT_FUNC || !s->st_size ||
	    b->vaddr < s->st_value || b->vaddr - s->st_value >= s->st_size)
		return false;
	b->found = s;
	b->name = name;
	return true;
}

struct parts {
	const char *name; /* the function's */
	size_t len;
	bool all; /* w is itself a part: the function it is part of too */
	struct dp_where *w;
	uint64_t bias;
};

static bool match_part(const Elf64_Sym *s, const char *name, void *arg)
{
	struct parts *p = arg;
	struct dp_where *w = p->w;
	uint64_t at = p->bias + s->st_value;

	if (s->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s->st_info) != STT_FUNC || !s->st_size ||
	    strncmp(name, p->name, p->len) != 0 ||
	    (name[p->len] != '.' && (name[p->len] || !p->all)) || at == w->fn ||
	    w->nparts == DP_MAX_PARTS)
		return false;
	for (uint32_t i = 0; i < w->nparts; i++)
		if (w->part[i] == at)
			return false; /* (in .symtab and .dynsym both) */
	w->part[w->nparts] = at;
	w->part_size[w->nparts++] = s->st_size;
	return false;
}

/* The parts of w's function placed apart (SYM.cold, ...), from im. */
static void find_parts(const struct image *im, const struct object *o, struct dp_where *w)
{
	struct parts p = { w->sym, strlen(w->sym), false, w, o->bias };
	const char *dot = strchr(w->sym, '.');

	/* (a part's own parts are its function's: foo.cold of foo.part.0,
	 * and foo itself) */
	if (dot) {
		p.len = (size_t)(dot - w->sym);
		p.all = true;
	}
	each_symbol(im, match_part, &p);
}

static void set_where(struct dp_where *w, const struct object *o, bool exe, const Elf64_Sym *s,
		      const char *name)
{
	w->fn = o->bias + s->st_value;
	w->fn_size = s->st_size;
	snprintf(w->sym, sizeof(w->sym), "%s", name);
	if (exe)
		exe_name(w->obj, sizeof(w->obj));
	else
		snprintf(w->obj, sizeof(w->obj), "%s", base_name(o->path));
}

static int by_symbol(const struct dp_spec *spec, struct dp_where *w, char *why, size_t n)
{
	bool ifunc = false, any = false;

	for (unsigned i = 0; i < nobjects; i++) {
		const struct object *o = &objects[i];
		struct by_name b = { spec->sym, NULL, false };
		struct image im;

		if (spec->lib[0] && !lib_matches(o, spec->lib, i == 0))
			continue;
		any = true;
		if (image_open(o->path, &im) < 0)
			continue;
		each_symbol(&im, match_name, &b);
		ifunc |= b.ifunc;
		if (b.found) {
			set_where(w, o, i == 0, b.found, spec->sym);
			find_parts(&im, o, w);
			image_close(&im);
			if (!w->fn_size) {
				snprintf(why, n, "%s in %s has no size: its end is not known", spec->sym,
					 w->obj);
				return -EINVAL;
			}
			if (spec->off >= w->fn_size) {
				snprintf(why, n, "%s+0x%" PRIx64 " is past the end of %s (%" PRIu64
					 " bytes)", spec->sym, spec->off, spec->sym, w->fn_size);
				return -EINVAL;
			}
			w->at = w->fn + spec->off;
			return 0;
		}
		image_close(&im);
	}
	if (spec->lib[0] && !any)
		snprintf(why, n, "no loaded object named %s", spec->lib);
	else if (ifunc)
		snprintf(why, n, "%s is an IFUNC (its symbol names the resolver): probe the "
			 "implementation it chooses", spec->sym);
	else
		snprintf(why, n, "no function %s in %s", spec->sym,
			 spec->lib[0] ? spec->lib : "the executable or its libraries");
	return ifunc ? -EINVAL : -ENOENT;
}

static int by_address(const struct dp_spec *spec, struct dp_where *w, char *why, size_t n)
{
	for (unsigned i = 0; i < nobjects; i++) {
		const struct object *o = &objects[i];
		uint64_t addr = spec->lib[0] ? o->bias + spec->off : spec->off;
		struct by_addr b = { addr - o->bias, NULL, NULL };
		struct image im;

		if (spec->lib[0] ? !lib_matches(o, spec->lib, i == 0) : addr < o->lo || addr >= o->hi)
			continue;
		if (image_open(o->path, &im) < 0)
			break;
		each_symbol(&im, match_addr, &b);
		if (b.found) {
			set_where(w, o, i == 0, b.found, b.name);
			find_parts(&im, o, w);
			w->at = addr;
			image_close(&im);
			return 0;
		}
		image_close(&im);
		break;
	}
	snprintf(why, n, "0x%" PRIx64 " is in no function of a symbol table: whether it starts "
		 "an instruction cannot be told", spec->off);
	return -ENOENT;
}

int dp_where(const struct dp_spec *spec, struct dp_where *w, char *why, size_t n)
{
	memset(w, 0, sizeof(*w));
	nobjects = 0;
	dl_iterate_phdr(collect, NULL);
	return spec->sym[0] ? by_symbol(spec, w, why, n) : by_address(spec, w, why, n);
}
