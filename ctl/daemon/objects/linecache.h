/*
 * Line tables (linecache.c): per user, keyed by the file's identity,
 * asked of the owner's lines inspector when an event needs one.
 */
#ifndef ST_DAEMON_OBJECTS_LINECACHE_H
#define ST_DAEMON_OBJECTS_LINECACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/daemon/model/state.h"

struct st_owner;
enum st_lines_state { ST_LINES_IDLE, ST_LINES_PENDING, ST_LINES_READY, ST_LINES_NONE };
struct st_insp_key;
/* The table of the object file of identity key for owner o, with a
 * reference: known, or to be asked of o's lines inspector (which holds
 * the file) when an event needs it. NULL: none to be had. */
struct st_lines *st_lines_get(const struct st_owner *o, const struct st_insp_key *key,
			      const uint8_t *build_id, uint32_t build_id_len);
/* An event needs the table: asked for now if it was not. True: the file
 * must first be handed to the lines inspector again (read the objects of
 * the process again: p->refresh_objects). */
bool st_lines_need(struct st_daemon *d, struct st_lines *l);
/* Whether waiting for the table is over: it is here, there is none, or it
 * did not come within the time the consumer waits. */
bool st_lines_settled(const struct st_lines *l);
void st_lines_put(struct st_lines *l);
/* Whether owner o's lines inspector holds files of tables that may still
 * be asked for: its pair is not stopped for being idle. */
bool st_lines_held(const struct st_owner *o);
enum st_lines_state st_lines_state(const struct st_lines *l);
/* The start of the row holding file address at, or UINT64_MAX. */
uint64_t st_lines_find(const struct st_lines *l, uint64_t at);
void st_lines_tick(void);
void st_lines_fini(void);

#endif
