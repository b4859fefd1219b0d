/*
 * The tables of fast.h, computed from the plans once per trace.
 */
#include <errno.h>
#include <stdlib.h>

#include "ctl/reader/decode.h"
#include "ctl/reader/fast.h"

bool st__fast_enabled = true;
uint64_t st__fast_decoded;

/* A byte-aligned integer, or a float: read as the integer of its bits. */
static bool is_int(const struct st_field_desc *f)
{
	return (f->kind == ST_FIELD_UINT || f->kind == ST_FIELD_SINT || f->kind == ST_FIELD_HEX ||
		f->kind == ST_FIELD_FLOAT) &&
	       f->size >= 1 && f->size <= 8 && f->align <= 1;
}

/*
 * The header of a record whose first byte is `tag`, found by following
 * the plan as decode.c does: which fields the record holds and where,
 * then, of the fields the reader interprets (eh_use), the last id and the
 * one timestamp. Not described (ok 0) when the plan would read anything
 * but byte-aligned integers, or a variant tagged by another field, or a
 * tag value that selects no option (decode.c says why), or more than one
 * timestamp.
 */
static void head_of(const struct st_stream_class *sc, unsigned tag, uint32_t *off,
		    struct st__fast_head *h)
{
	const struct st_plan *p = &sc->event_header;
	uint32_t pos = 0, nts = 0;
	const struct st_header_use *id = NULL, *ts = NULL;

	*h = (struct st__fast_head){ 0 };
	for (uint32_t i = 0; i < p->n; i++)
		off[i] = UINT32_MAX; /* not in the record */
	for (uint32_t i = 0; i < p->n;) {
		const struct st_field_desc *f = &p->v[i];
		int32_t k;

		off[i] = pos;
		i = f->next;
		if (f->kind == ST_FIELD_VARIANT) {
			if (f->variant->tag != 0)
				return;
			k = st__option_of(f->variant, tag);
			if (k < 0)
				return;
			if (f->variant->opt[k].first < f->variant->opt[k].end)
				i = f->variant->opt[k].first;
		} else if (is_int(f)) {
			pos += f->size;
		} else {
			return;
		}
	}
	if (pos > 255 - 8)
		return;
	for (uint32_t k = 0; k < sc->neh_use; k++) {
		const struct st_header_use *u = &sc->eh_use[k];

		if (off[u->field] == UINT32_MAX)
			continue;
		if (u->is_id) {
			id = u;
		} else {
			ts = u;
			nts++;
		}
	}
	if (nts > 1)
		return;
	h->len = (uint8_t)pos;
	if (id && id->field == 0) {
		h->id_from = 1;
	} else if (id) {
		h->id_from = 2;
		h->id_off = (uint8_t)off[id->field];
		h->id_shift = (uint8_t)(64 - 8 * p->v[id->field].size);
	}
	if (ts) {
		h->ts_off = (uint8_t)off[ts->field];
		h->ts_bytes = ts->size;
	}
	h->ok = 1;
}

/* The header table of a stream class whose event header starts with a
 * one-byte unsigned tag, as shimtrace's compact header does. */
static int stream_of(const struct st_stream_class *sc, struct st__fast_stream *fs)
{
	const struct st_plan *p = &sc->event_header;
	uint32_t *off;

	fs->ok = false;
	if (p->n == 0 || p->v[0].kind == ST_FIELD_SINT || !is_int(&p->v[0]) || p->v[0].size != 1)
		return 0;
	off = malloc(p->n * sizeof(*off));
	if (!off)
		return -ENOMEM;
	fs->maxlen = 0;
	for (unsigned t = 0; t < 256; t++) {
		head_of(sc, t, off, &fs->head[t]);
		if (fs->head[t].ok && fs->head[t].len > fs->maxlen)
			fs->maxlen = fs->head[t].len;
	}
	free(off);
	fs->ok = true;
	return 0;
}

/* Adds the values of scope p, at `*size` bytes into the body. */
static bool add_scope(const struct st_plan *p, bool in_payload, struct st__fast_event *fe,
		      uint32_t *size)
{
	if (!p->fixed)
		return false;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct st_field_desc *f = &p->v[i];
		struct st__fast_value *v = &fe->v[fe->n++];

		*v = (struct st__fast_value){ .off = (uint16_t)*size,
					      .in_payload = in_payload,
					      .index = (uint16_t)i };
		if (f->kind == ST_FIELD_BYTES && f->len_field < 0 && f->align <= 1) {
			v->is_bytes = 1;
			v->count = (uint32_t)f->count;
			*size += (uint32_t)f->count;
		} else if (is_int(f)) {
			v->shift = (uint8_t)(64 - 8 * f->size);
			v->is_signed = f->kind == ST_FIELD_SINT;
			*size += f->size;
		} else {
			return false;
		}
		if (*size > UINT16_MAX || i > UINT16_MAX)
			return false;
	}
	return true;
}

static int event_of(const struct st_event_class *ec, struct st__fast_event *fe)
{
	const struct st_plan *ctx = &ec->stream->event_context;
	uint32_t size = 0;

	fe->ok = false;
	fe->n = 0;
	fe->v = malloc(((size_t)ctx->n + ec->fields.n + 1) * sizeof(*fe->v));
	if (!fe->v)
		return -ENOMEM;
	if (!add_scope(ctx, false, fe, &size) || !add_scope(&ec->fields, true, fe, &size))
		return 0;
	fe->size = size;
	fe->ok = true;
	return 0;
}

int st__fast_build(struct st__fast *f, const struct st_tsdl *t)
{
	f->streams = calloc(t->nstreams ? t->nstreams : 1, sizeof(*f->streams));
	f->events = calloc(t->nevents ? t->nevents : 1, sizeof(*f->events));
	if (!f->streams || !f->events)
		return -ENOMEM;
	f->nevents = t->nevents;
	for (uint32_t i = 0; i < t->nstreams; i++)
		if (stream_of(&t->streams[i], &f->streams[i]) < 0)
			return -ENOMEM;
	for (uint32_t i = 0; i < t->nevents; i++)
		if (event_of(&t->events[i], &f->events[t->events[i].index]) < 0)
			return -ENOMEM;
	return 0;
}

void st__fast_free(struct st__fast *f)
{
	for (uint32_t i = 0; f->events && i < f->nevents; i++)
		free(f->events[i].v);
	free(f->events);
	free(f->streams);
	f->events = NULL;
	f->streams = NULL;
}
