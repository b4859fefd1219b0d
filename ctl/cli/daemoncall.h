/*
 * The CLI's own calls to the session daemon, through the control protocol
 * as the control verbs speak it (ctl/common/client.h), with the reply
 * kept to read, and the few JSON values read from `status --json`
 * (daemoncall.c): top follows a session with them, and create checks
 * that the daemon reaches the relay it was given.
 */
#ifndef ST_CLI_DAEMONCALL_H
#define ST_CLI_DAEMONCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Sends verb and its items; the reply's text in *text (to free) if text is
 * not NULL. Returns the exit status. The daemon's error lines are said as
 * label's (its "shimtrace VERB: " left out): all of them when quiet is
 * false (warnings too), none when it is true.
 */
int st_daemon_call(const char *label, const char *verb, const char *const *items, size_t n,
		   bool autostart, char **text, bool quiet);

/* The JSON string after the first "key": in json into out (n bytes): 0,
 * or -1 when there is none (null, say), or it does not fit, or it holds a
 * byte JSON could not carry (the daemon writes one that is not UTF-8 as
 * U+FFFD). */
int st_json_string_at(const char *json, const char *key, char *out, size_t n);
/* The number after the first "key": in json; 0 when there is none. */
uint64_t st_json_number_at(const char *json, const char *key);
/* Whether the first "key": in json is followed by true. */
bool st_json_true_at(const char *json, const char *key);

#endif
