/*
 * The inspector (see proto.h): the daemon's own executable started again
 * with the credentials of a traced process's owner (inspector.c).
 */
#ifndef ST_INSPECTOR_H
#define ST_INSPECTOR_H

/* Runs the inspector when argv says so (argv[1] == ST_INSPECTOR_ARG);
 * returns only when it does not. Called first thing by both programs. */
void st_inspector_dispatch(int argc, char **argv);

#endif /* ST_INSPECTOR_H */
