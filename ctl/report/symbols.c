/*
 * Call sites as function and source line (see symbols.h).
 *
 * A process's map is the list of objects its statedump and library events
 * named, newest last; an object dlclosed is kept (events before the close
 * still point into it) and a later load at the same address replaces it.
 * A process with no statedump of its own (a fork child that registered no
 * objects) uses its parent's, from its shimtrace:process event.
 *
 * Addresses: the statedump's base is the load bias of a position-
 * independent object and the lowest address of one that is not, so the
 * address in the file is ip - base for the first and ip for the second,
 * which is what libdwfl takes for a module reported at 0 (ET_DYN) or at
 * its own addresses (ET_EXEC).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/common/escape.h"
#include "ctl/report/grow.h"
#include "ctl/report/javasyms.h"
#include "ctl/report/map.h"
#include "ctl/report/meaning.h"
#include "ctl/report/demangle.h"
#include "ctl/report/symbols.h"
#include "jvm/jvm-tp.h"

#define BUILD_ID_MAX 64

struct object {
	char *path;
	uint8_t build_id[BUILD_ID_MAX];
	uint32_t build_id_len;
	int state; /* 0: not opened yet; 1: usable; -1: cannot be read */
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

struct mapping {
	uint64_t base, memsz;
	bool pic;
	char *path;
	uint8_t build_id[BUILD_ID_MAX];
	uint32_t build_id_len;
	struct object *obj; /* found at the first lookup */
};

struct proc {
	int32_t pid, ppid;
	struct mapping *maps;
	uint32_t n, cap;
};

/* Field indices of a statedump class, resolved once per class. */
struct cls_fields {
	const struct st_event_class *cls;
	int kind;
	int baddr, memsz, path, is_pic, build_id, ppid;
};

enum { K_OTHER, K_BIN_INFO, K_LIB_LOAD, K_BUILD_ID, K_LIB_UNLOAD, K_PROCESS, K_JAVA };

/* What the object's DWARF and symbols say of an address in it. */
struct answer {
	const char *function, *file;
	uint32_t line;
};

struct st_syms {
	struct proc *procs;
	uint32_t nprocs, procs_cap;
	struct object **objs;
	uint32_t nobjs, objs_cap;
	struct cls_fields *cls; /* by st_event_class.index */
	uint32_t ncls;
	struct st_demangler dm; /* C++ names read, as people read them */
	/* the answers given, by (object, address in it): a report names the
	 * same site again and again (a thousand locks initialised by one
	 * function), and finding a function without DWARF reads the whole
	 * symbol table */
	struct st_map answer_ix;
	struct answer *answers;
	uint32_t nanswers, answers_cap;
	struct st_jsyms *java; /* the Java sites' names (javasyms.h) */
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct st_syms *st_syms_new(void)
{
	struct st_syms *s = calloc(1, sizeof(struct st_syms));

	if (s && !(s->java = st_jsyms_new())) {
		free(s);
		return NULL;
	}
	return s;
}

struct st_jsyms *st_syms_java(struct st_syms *s)
{
	return s->java;
}

void st_syms_free(struct st_syms *s)
{
	if (!s)
		return;
	st_demangler_free(&s->dm);
	st_jsyms_free(s->java);
	for (uint32_t i = 0; i < s->nprocs; i++) {
		for (uint32_t k = 0; k < s->procs[i].n; k++)
			free(s->procs[i].maps[k].path);
		free(s->procs[i].maps);
	}
	for (uint32_t i = 0; i < s->nobjs; i++) {
		if (s->objs[i]->dwfl)
			dwfl_end(s->objs[i]->dwfl);
		free(s->objs[i]->path);
		free(s->objs[i]);
	}
	free(s->procs);
	free(s->objs);
	free(s->cls);
	st_map_free(&s->answer_ix);
	free(s->answers);
	free(s);
}

static const struct cls_fields *fields_of(struct st_syms *s, const struct st_event_class *c)
{
	/* (the daemon's events, not a wrapper spec's) */
	static const struct st_meaning known[] = {
		{ "lttng_ust_statedump:bin_info", K_BIN_INFO, 0, NULL },
		{ "lttng_ust_lib:load", K_LIB_LOAD, 0, NULL },
		{ "lttng_ust_statedump:build_id", K_BUILD_ID, 0, NULL },
		{ "lttng_ust_lib:build_id", K_BUILD_ID, 0, NULL },
		{ "lttng_ust_lib:unload", K_LIB_UNLOAD, 0, NULL },
		{ "shimtrace:process", K_PROCESS, 0, NULL },
	};
	/* by the class's index in the metadata: one look per event */
	struct cls_fields *f;

	if (c->index < s->ncls && s->cls[c->index].cls == c)
		return &s->cls[c->index];
	f = st_class_slot(&s->cls, &s->ncls, sizeof(*s->cls), c->index);
	if (!f || f->cls == c)
		return f;
	memset(f, 0, sizeof(*f));
	f->cls = c;
	f->kind = st_meaning_of(c->name, known, sizeof(known) / sizeof(known[0]), K_OTHER);
	f->baddr = st_event_class_field(c, "baddr");
	f->memsz = st_event_class_field(c, "memsz");
	f->path = st_event_class_field(c, "path");
	f->is_pic = st_event_class_field(c, "is_pic");
	f->build_id = st_event_class_field(c, "build_id");
	f->ppid = st_event_class_field(c, "ppid");
	/* a class of that name without the fields it needs is someone
	 * else's: ignored */
	if ((f->kind == K_BIN_INFO || f->kind == K_LIB_LOAD) &&
	    (f->baddr < 0 || f->memsz < 0 || f->path < 0))
		f->kind = K_OTHER;
	if ((f->kind == K_BUILD_ID && (f->baddr < 0 || f->build_id < 0)) ||
	    (f->kind == K_LIB_UNLOAD && f->baddr < 0) || (f->kind == K_PROCESS && f->ppid < 0))
		f->kind = K_OTHER;
	if (f->kind == K_OTHER && st_jsyms_reads(s->java, c))
		f->kind = K_JAVA;
	return f;
}

static struct proc *proc_of(struct st_syms *s, int32_t pid, bool create)
{
	struct proc *p;

	for (uint32_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (!create || st_grow(&s->procs, &s->procs_cap, s->nprocs, sizeof(*s->procs)) < 0)
		return NULL;
	p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = -1;
	return p;
}

static struct mapping *mapping_at(struct proc *p, uint64_t base)
{
	for (uint32_t i = p->n; i-- > 0;)
		if (p->maps[i].base == base)
			return &p->maps[i];
	return NULL;
}

static int add_mapping(struct proc *p, const struct st_event *ev, const struct cls_fields *f)
{
	const struct st_value *v = ev->fields;
	uint64_t base = v[f->baddr].u, memsz = v[f->memsz].u;
	struct mapping *m = mapping_at(p, base);
	char *path;

	if (memsz == 0 || base > UINT64_MAX - memsz || !v[f->path].ptr)
		return 0;
	path = strndup(v[f->path].ptr, v[f->path].len);
	if (!path)
		return -1;
	if (!m) {
		if (st_grow(&p->maps, &p->cap, p->n, sizeof(*p->maps)) < 0) {
			free(path);
			return -1;
		}
		m = &p->maps[p->n++];
	} else {
		free(m->path);
	}
	memset(m, 0, sizeof(*m));
	m->base = base;
	m->memsz = memsz;
	/* (a library loaded later is a shared object: position-independent) */
	m->pic = f->is_pic >= 0 ? v[f->is_pic].u != 0 : true;
	m->path = path;
	return 0;
}

bool st_syms_reads(struct st_syms *s, const struct st_event_class *c)
{
	const struct cls_fields *f = fields_of(s, c);

	return !f || f->kind != K_OTHER; /* (out of memory: st_syms_event says so) */
}

int st_syms_event(struct st_syms *s, const struct st_event *ev)
{
	const struct cls_fields *f = fields_of(s, ev->cls);
	struct proc *p;
	struct mapping *m;

	if (!f)
		return -1;
	if (f->kind == K_OTHER || ev->pid < 0)
		return 0;
	if (f->kind == K_JAVA)
		return st_jsyms_event(s->java, ev);
	p = proc_of(s, ev->pid, true);
	if (!p)
		return -1;
	switch (f->kind) {
	case K_BIN_INFO:
	case K_LIB_LOAD:
		return add_mapping(p, ev, f);
	case K_BUILD_ID:
		m = mapping_at(p, ev->fields[f->baddr].u);
		if (m && ev->fields[f->build_id].len <= BUILD_ID_MAX) {
			memcpy(m->build_id, ev->fields[f->build_id].ptr, ev->fields[f->build_id].len);
			m->build_id_len = (uint32_t)ev->fields[f->build_id].len;
		}
		return 0;
	case K_PROCESS:
		p->ppid = (int32_t)ev->fields[f->ppid].i;
		return 0;
	default:
		return 0; /* unload: kept, for the events before it */
	}
}

/* Opens an object's file for libdwfl: a regular file only, never waiting
 * on it (a FIFO named in a trace must not hang the report). */
static int open_object(struct object *o)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	struct stat st;
	int fd = open(o->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	int n;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	o->dwfl = dwfl_begin(&callbacks);
	if (!o->dwfl) {
		close(fd);
		return -1;
	}
	dwfl_report_begin(o->dwfl);
	o->mod = dwfl_report_elf(o->dwfl, o->path, o->path, fd, 0, false);
	if (!o->mod)
		close(fd); /* (consumed only on success) */
	dwfl_report_end(o->dwfl, NULL, NULL);
	if (!o->mod)
		return -1;
	/* the file must be the one traced: another build is another map */
	if (o->build_id_len) {
		n = dwfl_module_build_id(o->mod, &id, &vaddr);
		if (n != (int)o->build_id_len || memcmp(id, o->build_id, o->build_id_len) != 0)
			return -1;
	}
	return 0;
}

static struct object *object_of(struct st_syms *s, const struct mapping *m)
{
	struct object *o;

	for (uint32_t i = 0; i < s->nobjs; i++) {
		o = s->objs[i];
		if (strcmp(o->path, m->path) == 0 && o->build_id_len == m->build_id_len &&
		    memcmp(o->build_id, m->build_id, m->build_id_len) == 0)
			return o;
	}
	if (st_grow(&s->objs, &s->objs_cap, s->nobjs, sizeof(*s->objs)) < 0)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->path = strdup(m->path);
	if (!o->path) {
		free(o);
		return NULL;
	}
	memcpy(o->build_id, m->build_id, m->build_id_len);
	o->build_id_len = m->build_id_len;
	s->objs[s->nobjs++] = o;
	return o;
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path;
}

static struct mapping *holding(struct st_syms *s, int32_t pid, uint64_t ip)
{
	/* the process's own map, else its parent's (a fork child) */
	for (int hops = 0; hops < 8; hops++) {
		struct proc *p = proc_of(s, pid, false);

		if (!p)
			return NULL;
		for (uint32_t i = p->n; i-- > 0;) {
			struct mapping *m = &p->maps[i];

			if (ip >= m->base && ip - m->base < m->memsz)
				return m;
		}
		if (p->n || p->ppid < 0)
			return NULL;
		pid = p->ppid;
	}
	return NULL;
}

/* The function whose code holds addr, an inlined one included (the line
 * a call site shows is in it), from the DWARF scopes; NULL without. */
static const char *innermost_function(Dwfl_Module *mod, Dwarf_Addr addr)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias), *scopes = NULL;
	const char *name = NULL;
	int n;

	if (!cu)
		return NULL;
	n = dwarf_getscopes(cu, addr - bias, &scopes);
	for (int i = 0; i < n && !name; i++) {
		Dwarf_Attribute attr;
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		/* (an inlined instance names its function through its origin) */
		if (dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr))
			name = dwarf_formstring(&attr);
	}
	free(scopes);
	return name;
}

/* The object of mapping m, opened (once); NULL when it cannot be. */
static struct object *opened(struct st_syms *s, struct mapping *m)
{
	struct object *o = m->obj ? m->obj : (m->obj = object_of(s, m));

	if (!o)
		return NULL;
	if (o->state == 0)
		o->state = open_object(o) == 0 ? 1 : -1;
	return o->state > 0 ? o : NULL;
}

/* The function, source file and line of address addr of object o. */
static struct answer look_up(struct st_syms *s, struct object *o, uint64_t addr)
{
	struct answer a = { 0 };
	Dwfl_Line *line;
	GElf_Off off;
	GElf_Sym sym;
	int lineno = 0;

	a.function = innermost_function(o->mod, addr);
	if (!a.function)
		a.function = dwfl_module_addrinfo(o->mod, addr, &off, &sym, NULL, NULL, NULL);
	/* (a symbol's name is the linker's: mangled, for C++) */
	a.function = st_demangle(&s->dm, a.function);
	line = dwfl_module_getsrc(o->mod, addr);
	if (line) {
		a.file = base_name(dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL));
		a.line = lineno > 0 ? (uint32_t)lineno : 0;
		if (!a.file)
			a.line = 0;
	}
	return a;
}

/* look_up's answer, found once for each address (the strings live as
 * long as s: libdwfl's and the demangler's). */
static struct answer answer_for(struct st_syms *s, struct object *o, uint64_t addr)
{
	int64_t i = st_map_get(&s->answer_ix, (uint64_t)(uintptr_t)o, addr);
	struct answer a;

	if (i >= 0)
		return s->answers[i];
	a = look_up(s, o, addr);
	/* (out of memory: found again next time) */
	if (st_grow(&s->answers, &s->answers_cap, s->nanswers, sizeof(*s->answers)) == 0 &&
	    st_map_put(&s->answer_ix, (uint64_t)(uintptr_t)o, addr, s->nanswers) == 0)
		s->answers[s->nanswers++] = a;
	return a;
}

/* A Java site: its method and line, from the jvm provider's statedump. */
static void java_site(struct st_syms *s, int32_t pid, uint64_t ip, struct st_site *out)
{
	struct st_jsite j;

	st_jsyms_site(s->java, pid, ip, &j);
	out->java = true;
	out->method = j.method_id;
	out->bci = j.bci;
	out->function = j.method;
	out->file = j.file;
	out->line = j.file ? j.line : 0;
}

void st_syms_resolve(struct st_syms *s, int32_t pid, uint64_t ip, struct st_site *out)
{
	struct mapping *m;
	struct object *o;
	struct answer a;

	memset(out, 0, sizeof(*out));
	out->ip = ip;
	if (ST_JVM_IS_SITE(ip)) {
		java_site(s, pid, ip, out);
		return;
	}
	m = holding(s, pid, ip);
	if (!m)
		return;
	out->object = base_name(m->path);
	out->offset = m->pic ? ip - m->base : ip;
	o = opened(s, m);
	if (!o)
		return;
	a = answer_for(s, o, out->offset);
	out->function = a.function;
	out->file = a.file;
	out->line = a.line;
}

const char *st_syms_data_name(struct st_syms *s, int32_t pid, uint64_t addr)
{
	struct mapping *m = holding(s, pid, addr);
	struct object *o;
	GElf_Off off;
	GElf_Sym sym;
	const char *name;

	if (!m || !(o = opened(s, m)))
		return NULL;
	name = dwfl_module_addrinfo(o->mod, m->pic ? addr - m->base : addr, &off, &sym, NULL, NULL,
				    NULL);
	/* (a variable that holds the address, not the one before it) */
	if (!name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || off >= sym.st_size)
		return NULL;
	return st_demangle(&s->dm, name);
}

void st_site_format(const struct st_site *site, char *buf, size_t n)
{
	char tail[32];

	/* (names from the trace and from the objects it names: escaped) */
	if (n == 0)
		return;
	buf[0] = '\0';
	if (site->java && !(site->function && site->file && site->line)) {
		/* (a Java site without a line: its method and bytecode index) */
		if (site->function) {
			st_esc_cat(buf, n, site->function);
			snprintf(tail, sizeof(tail), " (bci %" PRId32 ")", site->bci);
		} else if (site->method == 0) {
			/* (the agent found no Java frame: the JVM's own code,
			 * a thread's end that takes its Thread's monitor) */
			snprintf(tail, sizeof(tail), "(no Java frame)");
		} else {
			snprintf(tail, sizeof(tail), "java method %" PRIu32 " (bci %" PRId32 ")",
				 site->method, site->bci);
		}
	} else if (site->function) {
		st_esc_cat(buf, n, site->function);
		st_esc_cat(buf, n, " (");
		if (site->file && site->line) {
			st_esc_cat(buf, n, site->file);
			snprintf(tail, sizeof(tail), ":%" PRIu32 ")", site->line);
		} else {
			st_esc_cat(buf, n, site->object ? site->object : "(null)");
			snprintf(tail, sizeof(tail), ")");
		}
	} else if (site->object) {
		st_esc_cat(buf, n, site->object);
		snprintf(tail, sizeof(tail), "+0x%" PRIx64, site->offset);
	} else {
		snprintf(tail, sizeof(tail), "0x%" PRIx64, site->ip);
	}
	st_esc_cat(buf, n, tail);
}
