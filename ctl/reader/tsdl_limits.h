/*
 * The bounds every stage of the metadata reader keeps to, so that no
 * input runs away.
 */
#ifndef ST_READER_TSDL_LIMITS_H
#define ST_READER_TSDL_LIMITS_H

#define ST__TSDL_MAX_DEPTH 16	     /* nested types */
#define ST__TSDL_MAX_FIELDS 4096     /* fields of one scope, flattened */
#define ST__TSDL_MAX_TOTAL (1u << 20) /* fields of all scopes */
#define ST__TSDL_MAX_ID (1u << 20)   /* event ids are table indices */

#endif
