/*
 * LINES: the DWARF line table of one object, for the call sites.
 *
 * The daemon turns the return address recorded with each event into the
 * start of the line-table row holding the call (ctl/daemon/objects/callsite.c). It
 * needs, per object, the addresses where rows start and where sequences
 * end; this builds them from the object's own DWARF or, failing that, from
 * its separate debug file found by build-id under /usr/lib/debug, and sends
 * them as sorted 64-bit values (proto.h) in a memfd
 * sealed against any change.
 *
 * A row counts only within the address ranges of its own compile unit:
 * sequences of functions the linker discarded are left at address 0 (and
 * the unit's ranges for them too) and would otherwise overlap real code.
 * That is what a lookup through dwarf_addrdie() and dwarf_getsrc_die()
 * gives, done once per object instead of once per call site.
 *
 * This parses a file the traced process chose: it runs here, in the
 * inspector, within its limits. A table over max_rows is refused.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/inspect/channel.h"
#include "ctl/inspect/lines.h"

struct rows {
	uint64_t *v;
	size_t n, cap, max;
	bool too_many;
};

static void add(struct rows *r, uint64_t addr, bool end)
{
	if (r->too_many)
		return;
	if (r->n == r->max) {
		r->too_many = true;
		return;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		uint64_t *v = realloc(r->v, cap * sizeof(*v));

		if (!v) {
			r->too_many = true;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = addr << 1 | (end ? 0 : 1);
}

/* The address ranges of a unit, [lo, hi) pairs. */
struct ranges {
	Dwarf_Addr (*v)[2];
	size_t n, cap;
};

/*
 * The ranges the unit cu says are its own, from DW_AT_ranges or low/high
 * pc; those starting at address 0 are left out: the linker puts the
 * functions it discarded there, and their sequences would shadow real
 * code near the start of the object.
 */
static void unit_ranges(Dwarf_Die *cu, struct ranges *r)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	r->n = 0;
	while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
		if (lo == 0 || hi <= lo)
			continue;
		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 16;
			Dwarf_Addr(*v)[2] = realloc(r->v, cap * sizeof(*v));

			if (!v)
				return;
			r->v = v;
			r->cap = cap;
		}
		r->v[r->n][0] = lo;
		r->v[r->n][1] = hi;
		r->n++;
	}
}

static bool in_ranges(const struct ranges *r, Dwarf_Addr a, size_t *hint)
{
	if (*hint < r->n && a >= r->v[*hint][0] && a < r->v[*hint][1])
		return true;
	for (size_t i = 0; i < r->n; i++)
		if (a >= r->v[i][0] && a < r->v[i][1]) {
			*hint = i;
			return true;
		}
	return false;
}

/* The rows of the unit cu that its own addresses hold. */
static void unit_rows(Dwarf_Die *cu, struct ranges *rg, struct rows *r)
{
	Dwarf_Lines *lines;
	size_t n, hint = 0;
	bool kept = false;

	if (dwarf_getsrclines(cu, &lines, &n) != 0)
		return;
	unit_ranges(cu, rg);
	for (size_t i = 0; i < n && !r->too_many; i++) {
		Dwarf_Line *line = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		bool end;

		if (!line || dwarf_lineaddr(line, &addr) != 0 || dwarf_lineendsequence(line, &end) != 0)
			continue;
		if (addr >> 62)
			continue; /* a tombstone (-1, -2) */
		if (!end) {
			bool own = in_ranges(rg, addr, &hint);

			/* leaving the unit's addresses ends its run of rows there,
			 * as a sequence's end would */
			if (kept && !own)
				add(r, addr, true);
			kept = own;
		}
		if (kept)
			add(r, addr, end);
		if (end)
			kept = false;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The object's DWARF, or its separate debug file's. */
static Dwarf *open_dwarf(int fd, const struct st_insp_lines_req *req, int *debug_fd)
{
	char path[256];
	size_t n;
	struct stat st;
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);

	*debug_fd = -1;
	if (dw || req->build_id_len < 2 || req->build_id_len > ST_INSP_BUILD_ID_MAX)
		return dw;
	/* a directory root keeps: the name is made of the build-id's hex digits */
	n = (size_t)snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/",
			     req->build_id[0]);
	for (uint32_t i = 1; i < req->build_id_len; i++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%02x", req->build_id[i]);
	snprintf(path + n, sizeof(path) - n, ".debug");
	*debug_fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (*debug_fd < 0)
		return NULL;
	if (fstat(*debug_fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !(dw = dwarf_begin(*debug_fd, DWARF_C_READ))) {
		close(*debug_fd);
		*debug_fd = -1;
		return NULL;
	}
	return dw;
}

static void reply(uint64_t id, uint64_t rows, int fd)
{
	struct st_insp_line_table m = { { ST_INSP_LINE_TABLE, sizeof(m), id }, rows };

	st_insp_send(&m, sizeof(m), fd);
}

void st_insp_lines(const struct st_insp_lines_req *req)
{
	struct rows r = { .max = req->max_rows };
	struct ranges rg = { 0 };
	Dwarf_Off off = 0, next;
	size_t hsize, k = 0, bytes;
	int fd = st_insp_handed(&req->key), debug_fd, mfd;
	struct stat st;
	Dwarf *dw;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		reply(req->hdr.id, 0, -1);
		st_insp_done(req->hdr.id, -ENOENT, 0, "the object file was not handed over");
		return;
	}
	dw = open_dwarf(fd, req, &debug_fd);
	if (!dw) {
		close(fd);
		reply(req->hdr.id, 0, -1);
		st_insp_done(req->hdr.id, 0, 0, "no line information");
		return;
	}
	while (!r.too_many && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu))
			unit_rows(&cu, &rg, &r);
		off = next;
	}
	free(rg.v);
	dwarf_end(dw);
	close(fd);
	if (debug_fd >= 0)
		close(debug_fd);
	if (r.too_many) {
		free(r.v);
		reply(req->hdr.id, 0, -1);
		st_insp_done(req->hdr.id, -EFBIG, 0, "line table over %llu rows",
			     (unsigned long long)req->max_rows);
		return;
	}
	qsort(r.v, r.n, sizeof(*r.v), cmp_u64);
	for (size_t i = 0; i < r.n; i++)
		if (k == 0 || r.v[i] != r.v[k - 1])
			r.v[k++] = r.v[i];
	bytes = k * sizeof(*r.v);
	mfd = memfd_create("shimtrace-lines", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0 || (bytes && write(mfd, r.v, bytes) != (ssize_t)bytes) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int e = errno;

		if (mfd >= 0)
			close(mfd);
		free(r.v);
		reply(req->hdr.id, 0, -1);
		st_insp_done(req->hdr.id, -e, 0, "cannot pass the line table: %s", strerror(e));
		return;
	}
	free(r.v);
	reply(req->hdr.id, k, k ? mfd : -1);
	close(mfd);
	st_insp_done(req->hdr.id, 0, 0, "%zu rows", k);
}
