/*
 * What an open reader holds (struct st_reader, opaque in reader.h):
 * reader.c's, which opens and merges the streams; stream.c reads its
 * metadata and tables and leaves its errors there.
 */
#ifndef ST_READER_STATE_H
#define ST_READER_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/reader/desc.h"
#include "ctl/reader/fast.h"

struct st__stream;
struct st_follow;

#define ST__DAMAGE_KEPT 64

struct st_reader {
	char *dir; /* as given, without trailing slashes: for messages */
	struct st_tsdl meta;
	struct st__fast fast; /* tables of the records of fixed shape */
	struct st__stream *streams;
	uint32_t nstreams;
	struct st__stream **heap; /* min-heap on (key, info.index) */
	uint32_t nheap;
	bool pending; /* heap[0] was returned: advance it first */
	uint64_t lost;
	int error; /* sticky: once corrupt, always corrupt */
	char err[768];
	/* parts of streams skipped as damaged (stream.c), said in one line
	 * each: the first ST__DAMAGE_KEPT kept, all counted */
	char (*damage)[896];
	uint32_t ndamage;
	char incomplete[256]; /* st_reader_incomplete, "" for none */
	bool finished;	      /* the trace will not grow (st_reader_finished) */
	/* following (follow.h): where reading stopped last, saved again at
	 * close; no item after limit is given */
	struct st_follow *follow;
	bool limited;
	int64_t limit;
	uint64_t late; /* items given, of a time before one an earlier open gave */
	bool given;    /* an item was given, the latest at given_max */
	int64_t given_max;
};

/* Notes the damage r->err describes (stream.c made it), what was skipped
 * for it after it, and clears the error: reading goes on (errmsg.c). */
void st__reader_damage(struct st_reader *r, const char *skipped);

#endif
