/*
 * Following a trace while it is written (follow.c): where the reading of
 * each stream file stopped, kept from one open of the trace to the next
 * (struct st_follow, opaque in reader.h), so that each open reads only
 * what was added since; and the time up to which the next open may give
 * events, chosen so that what it gives comes in time order.
 *
 * A stream stops at the head item the merge read but did not give (its
 * time was after the open's limit), or where its whole packets end. A
 * resume point is the start of a packet, with the stream's order state
 * before it (the lost events it declares are then given again: they were
 * not given yet), and, for a stream that stopped inside a packet, the
 * offset of the next record there and the clock and order state before
 * it: each record is given once over all the opens.
 */
#ifndef ST_READER_FOLLOW_H
#define ST_READER_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/reader/stream.h"

struct st_reader;

struct st__resume {
	char *file;
	uint32_t serial;    /* st_stream_info.serial: the same at every open */
	bool dead;	    /* damage ended its reading there: */
	uint64_t dead_at;   /* nothing from here on is read */
	uint64_t size;	    /* of the file when it was last opened */
	int64_t grew_mono;  /* CLOCK_MONOTONIC ns when it last grew */
	bool has_cls;	    /* a packet was seen: the stream's class and id */
	uint32_t cls;	    /* index in st_tsdl.streams */
	bool has_instance_id;
	uint64_t instance_id;
	uint64_t next;	    /* where reading goes on: a packet's start */
	struct st__order order; /* before that packet */
	bool inside;	    /* it goes on inside that packet, past its lost notice: */
	uint64_t pos;	    /* at this record (from the packet start), */
	uint64_t clock;	    /* with the clock and */
	uint64_t last_ts;   /* the order's latest time before it */
};

struct st_follow {
	struct st__resume *v; /* sorted by file name */
	uint32_t n, cap;
	uint32_t serials;     /* given so far */
	/* the latest time given so far: what comes after an open gave it, of
	 * an earlier time, is late (given out of time order) */
	bool given;
	int64_t given_max;
	int64_t limit;	      /* the last open's limit (INT64_MIN: none yet) */
	uint64_t late, behind;
};

/* The resume point of file, or NULL when the stream is new. */
struct st__resume *st__follow_find(struct st_follow *f, const char *file);
/* A new resume point for file, reading from its start; NULL when out of
 * memory. */
struct st__resume *st__follow_add(struct st_follow *f, const char *file);
/* Saves where each stream of r stopped (r is being closed). */
void st__follow_save(struct st_follow *f, struct st_reader *r);

#endif
