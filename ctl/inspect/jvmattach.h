/*
 * A client of HotSpot's attach mechanism (jvmattach.c), in an inspector
 * of the JVM's owner: a JVMTI agent loaded into a running JVM.
 */
#ifndef ST_INSPECT_JVMATTACH_H
#define ST_INSPECT_JVMATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ctl/inspect/target.h"

/* A JVM whose attach listener runs. */
struct st_jvm {
	const struct st_insp_proc *p;
	uid_t uid;   /* its owner: the socket's */
	pid_t nspid; /* its pid in its own pid namespace: the files' names */
	int tmpfd;   /* its /tmp (O_PATH), resolved inside its root */
};

/*
 * Makes sure p (owned by uid) is a HotSpot JVM whose attach listener
 * runs: it is found running, or started (the trigger file, one SIGQUIT,
 * a bounded wait). Nothing is sent to a process that does not map
 * libjvm.so, nor to a JVM that would not start its listener (attach
 * disabled, SIGQUIT not caught). 0, or -1 with why (one line).
 */
int st_jvm_listener(const struct st_insp_proc *p, uid_t uid, struct st_jvm *jvm, char *why,
		    size_t n);

/*
 * Loads the agent (an absolute path) with options into the JVM, whose
 * Agent_OnAttach must return 0; an agent the JVM maps already is not
 * loaded twice (*already then). 0, or -1 with why (one line: what the JVM
 * said, the agent's code).
 */
int st_jvm_load(struct st_jvm *jvm, const char *agent, const char *options, bool *already,
		char *why, size_t n);

void st_jvm_close(struct st_jvm *jvm);

#endif /* ST_INSPECT_JVMATTACH_H */
