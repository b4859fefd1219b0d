/*
 * The tracepoints of the `jobs` example: provider `jobs`, declared once here
 * (every file that fires them includes this header) and defined in exactly
 * one file of the program (jobs.c, with ST_PROVIDER_DEFINE).
 *
 * Each TP(provider, name, fields) line is a tracepoint; F(TYPE, name) a
 * field. The types are those of <shimtrace/tracepoint.h>: U8 to U64, S8 to
 * S64, SIZE (a byte count), HEX64 (an address), DOUBLE and STRING.
 */
#ifndef JOBS_TP_H
#define JOBS_TP_H

#include <shimtrace/tracepoint.h>

#define JOBS_TRACEPOINTS(TP, F)                                             \
	TP(jobs, job_begin, F(U32, id) F(STRING, name) F(SIZE, bytes))      \
	TP(jobs, job_end, F(U32, id) F(S32, status) F(U64, checksum) F(DOUBLE, mean))

ST_PROVIDER_DECLARE(jobs, JOBS_TRACEPOINTS)

#endif
