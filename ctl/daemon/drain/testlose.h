/*
 * A test mode of the consumer: losses at places a test chooses
 * (SHIMTRACE_TEST_LOSE, see testlose.c), so that the readers' and the
 * reports' handling of gaps can be tested with exact expectations.
 */
#ifndef ST_DAEMON_DRAIN_TESTLOSE_H
#define ST_DAEMON_DRAIN_TESTLOSE_H

#include <stdbool.h>
#include <stdint.h>

struct st_evclass;

/* Whether records of class c may be lost by the test mode (then the
 * consumer's fast path leaves them to its record-by-record one). */
bool st_test_lose_class(const struct st_evclass *c);

/* Whether the record of class c written at ring time ts is to be lost. */
bool st_test_lose(const struct st_evclass *c, uint64_t ts);

#endif
