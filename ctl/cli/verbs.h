/*
 * The shimtrace command's verbs (verbs.c): their options, help and man
 * page text, and what runs each.
 */
#ifndef ST_CLI_VERBS_H
#define ST_CLI_VERBS_H

#include "ctl/common/cli.h"

/* Every verb, then one with a NULL name. */
extern const struct st_verb st_verbs[];
/* The verb of that name, or NULL. */
const struct st_verb *st_verb_find(const char *name);

#endif
