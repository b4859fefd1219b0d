/*
 * The GOT slots of one loaded object that name a symbol: what attach.c
 * reads to redirect the calls a running process has bound already.
 *
 * An object reaches a function of another object through a slot of its
 * global offset table: a PLT call jumps through a slot that an
 * R_X86_64_JUMP_SLOT relocation fills (at load time under BIND_NOW, else
 * at the first call: until then the slot points back into the object's
 * own PLT), and code built with -fno-plt, or that takes the function's
 * address, reads a slot an R_X86_64_GLOB_DAT relocation fills. Both name
 * their symbol, with the version the reference needs (glibc keeps two
 * pthread_cond_wait, say). This reads the dynamic section as the loader
 * left it in memory: glibc rewrites its pointers into addresses (but for
 * a read-only dynamic section, where they stay offsets from the base),
 * so a value inside the object is an address and any other an offset.
 *
 * Writable or not: a slot is written only inside a writable segment
 * (PT_LOAD with PF_W); the part of it the loader made read-only after
 * relocating (PT_GNU_RELRO, rounded to pages as the loader rounds it: all
 * of the GOT under -z now -z relro) is given here, for attach.c to open
 * and close again around its writes.
 *
 * Nothing here allocates or takes a lock: the caller walks the objects
 * with dl_iterate_phdr, which holds the loader's list still.
 */
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

#define PAGE 4096ull

void st__obj_of(const struct dl_phdr_info *info, struct st__obj *o)
{
	uint64_t base = info->dlpi_addr;

	memset(o, 0, sizeof(*o));
	o->lo = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = base + ph->p_vaddr, end = start + ph->p_memsz;

		if (ph->p_type == PT_LOAD) {
			o->lo = start < o->lo ? start : o->lo;
			o->hi = end > o->hi ? end : o->hi;
			if ((ph->p_flags & PF_W) && o->nwrite < ST_OBJ_WSEGS) {
				o->wlo[o->nwrite] = start;
				o->whi[o->nwrite++] = end;
			}
		} else if (ph->p_type == PT_GNU_RELRO) {
			o->relro_lo = start & ~(PAGE - 1);
			o->relro_hi = end & ~(PAGE - 1);
		} else if (ph->p_type == PT_DYNAMIC) {
			o->dyn = start;
		}
	}
	if (o->lo == UINT64_MAX)
		o->lo = o->hi = 0;
}

static bool writable(const struct st__obj *o, uint64_t a)
{
	for (uint32_t i = 0; i < o->nwrite; i++)
		if (a >= o->wlo[i] && a + 8 <= o->whi[i])
			return true;
	return false;
}

/* The dynamic section's view of an object. */
struct dynview {
	const ElfW(Sym) *sym;
	const char *str;
	uint64_t strsz;
	const ElfW(Rela) *rela, *jmprel;
	uint64_t relasz, jmprelsz;
	const ElfW(Half) *versym;
	const ElfW(Verneed) *verneed;
	uint64_t verneednum;
	bool bind_now;
};

static uint64_t dyn_ptr(const struct st__obj *o, uint64_t base, uint64_t v)
{
	return v >= o->lo && v < o->hi ? v : base + v;
}

static bool read_dynamic(const struct dl_phdr_info *info, const struct st__obj *o,
			 struct dynview *v)
{
	uint64_t base = info->dlpi_addr;
	uint64_t pltrel = DT_RELA;

	memset(v, 0, sizeof(*v));
	if (!o->dyn)
		return false;
	for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(uintptr_t)o->dyn; d->d_tag != DT_NULL; d++) {
		uint64_t p = d->d_un.d_ptr;

		switch (d->d_tag) {
		case DT_SYMTAB: v->sym = (const void *)(uintptr_t)dyn_ptr(o, base, p); break;
		case DT_STRTAB: v->str = (const void *)(uintptr_t)dyn_ptr(o, base, p); break;
		case DT_STRSZ: v->strsz = d->d_un.d_val; break;
		case DT_RELA: v->rela = (const void *)(uintptr_t)dyn_ptr(o, base, p); break;
		case DT_RELASZ: v->relasz = d->d_un.d_val; break;
		case DT_JMPREL: v->jmprel = (const void *)(uintptr_t)dyn_ptr(o, base, p); break;
		case DT_PLTRELSZ: v->jmprelsz = d->d_un.d_val; break;
		case DT_PLTREL: pltrel = d->d_un.d_val; break;
		case DT_VERSYM: v->versym = (const void *)(uintptr_t)dyn_ptr(o, base, p); break;
		case DT_VERNEED: v->verneed = (const void *)(uintptr_t)dyn_ptr(o, base, p); break;
		case DT_VERNEEDNUM: v->verneednum = d->d_un.d_val; break;
		case DT_BIND_NOW: v->bind_now = true; break;
		case DT_FLAGS: v->bind_now |= (d->d_un.d_val & DF_BIND_NOW) != 0; break;
		case DT_FLAGS_1: v->bind_now |= (d->d_un.d_val & DF_1_NOW) != 0; break;
		default: break;
		}
	}
	if (pltrel != DT_RELA)
		v->jmprel = NULL; /* (x86-64 objects use RELA) */
	return v->sym && v->str;
}

/* The version a reference to symbol i needs, or NULL. */
static const char *needed_version(const struct dynview *v, uint32_t i)
{
	const ElfW(Verneed) *vn = v->verneed;
	uint16_t want;

	if (!v->versym || !vn)
		return NULL;
	want = v->versym[i] & 0x7fff;
	if (want < 2)
		return NULL;
	for (uint64_t k = 0; k < v->verneednum && vn; k++) {
		const ElfW(Vernaux) *a = (const void *)((const char *)vn + vn->vn_aux);

		for (uint32_t j = 0; j < vn->vn_cnt; j++) {
			if (a->vna_other == want)
				return a->vna_name < v->strsz ? v->str + a->vna_name : NULL;
			a = (const void *)((const char *)a + a->vna_next);
		}
		vn = vn->vn_next ? (const void *)((const char *)vn + vn->vn_next) : NULL;
	}
	return NULL; /* one of its own definitions' */
}

static void each_rela(const struct dl_phdr_info *info, const struct st__obj *o,
		      const struct dynview *v, const ElfW(Rela) *r, uint64_t size,
		      st__got_fn fn, void *arg)
{
	for (uint64_t k = 0; k < size / sizeof(*r); k++) {
		uint32_t type = ELF64_R_TYPE(r[k].r_info), i = ELF64_R_SYM(r[k].r_info);
		struct st__got_ref ref;
		uint64_t slot = info->dlpi_addr + r[k].r_offset;

		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || i == 0 ||
		    v->sym[i].st_name >= v->strsz || !writable(o, slot))
			continue;
		ref.slot = (uint64_t *)(uintptr_t)slot;
		ref.name = v->str + v->sym[i].st_name;
		ref.version = needed_version(v, i);
		/* not bound yet: the slot leads back into the object's PLT */
		ref.lazy = type == R_X86_64_JUMP_SLOT && !v->bind_now &&
			   *ref.slot >= o->lo && *ref.slot < o->hi;
		ref.relro = slot >= o->relro_lo && slot < o->relro_hi;
		fn(&ref, arg);
	}
}

void st__got_each(const struct dl_phdr_info *info, const struct st__obj *o, st__got_fn fn,
		  void *arg)
{
	struct dynview v;
	uint64_t ra, re, ja, je;

	if (!read_dynamic(info, o, &v))
		return;
	if (v.rela)
		each_rela(info, o, &v, v.rela, v.relasz, fn, arg);
	if (!v.jmprel)
		return;
	/* (some linkers count .rela.plt in DT_RELASZ too: once each) */
	ra = (uintptr_t)v.rela, re = ra + v.relasz;
	ja = (uintptr_t)v.jmprel, je = ja + v.jmprelsz;
	if (!v.rela || je <= ra || ja >= re)
		each_rela(info, o, &v, v.jmprel, v.jmprelsz, fn, arg);
}
