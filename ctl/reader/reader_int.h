/*
 * Reader internals shared by reader.c (the directory, the merge) and
 * stream.c (the packets and records of one stream file).
 */
#ifndef ST_READER_INT_H
#define ST_READER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/reader/fast.h"
#include "ctl/reader/reader.h"
#include "ctl/reader/window.h"

/* A packet's header and context, checked. Offsets in bytes. */
struct st__packet {
	uint64_t off;	  /* packet start in the file */
	uint64_t data;	  /* first record, from the packet start */
	uint64_t content; /* end of the records, from the packet start */
	uint64_t size;	  /* whole packet, padding included */
	const struct st_stream_class *cls;
	bool has_begin, has_end, has_discarded, has_instance;
	uint64_t ts_begin, ts_end;
	uint64_t discarded;
	uint64_t discarded_mask; /* the counter wraps at this + 1 */
	uint64_t instance_id;
	int32_t pid, tid;
};

/* What must only grow along a stream, checked packet after packet. */
struct st__order {
	bool seen;	    /* a packet was read */
	uint64_t last_ts;   /* latest timestamp: nothing may go below it */
	uint64_t discarded; /* events_discarded of the previous packet */
	uint64_t prev_end;  /* timestamp_end of the previous packet */
};

struct st__stream {
	struct st_stream_info info;
	struct st_reader *r;
	char *file;
	struct st__window win; /* the file's bytes */
	uint64_t size;
	/* where reading is */
	uint64_t next_pkt; /* file offset of the next packet */
	bool in_packet;
	struct st__packet pkt;
	const uint8_t *bytes; /* the packet's, while in_packet */
	const struct st__fast_stream *fast; /* its class's, NULL if none */
	uint64_t pos;	/* next record, from the packet start */
	uint64_t clock; /* current clock value, cycles */
	struct st__order order;
	/* the head item: the next one this stream gives */
	enum st_item_kind head; /* 0 at the end */
	int64_t key;		/* its time, ns */
	struct st_event ev;
	struct st_lost lost;
	/* decoded values: packet header, packet context, event header,
	 * event context, payload; max_fields each */
	struct st_value *ph, *pc, *eh, *ec, *fields;
};

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
	char incomplete[256]; /* st_reader_incomplete, "" for none */
};

/* Opens the file and checks every packet header; fills s->info. */
int st__stream_open(struct st_reader *r, struct st__stream *s, int dirfd, const char *file);
/* Moves to the next item: 1 (s->head set), 0 at the end, <0 on error. */
int st__stream_advance(struct st__stream *s);
void st__stream_close(struct st__stream *s);

/* Sets r->err to "DIR/FILE: what (at offset N)"; returns -EBADMSG. */
int st__stream_fail(struct st__stream *s, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
