/*
 * attachee: a program with many loaded objects, for run-attach.sh. It
 * dlopens DIR/libobj0.so .. libobjN-1.so (each calls pthread_mutex_lock
 * and unlock, pthread_cond_signal, malloc and free through its PLT: the
 * GOT slots an attach redirects), says "ready PID", then on each line of
 * input calls every object's function once ("round K"); at the end of its
 * input it says "done" and exits.
 *
 *   attachee DIR N
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0, rounds = 0;
	void (**fn)(void) = calloc((size_t)(n ? n : 1), sizeof(*fn));
	char path[4096], line[64];

	if (argc != 3 || n < 0 || !fn) {
		fprintf(stderr, "usage: attachee DIR N\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		void *h;

		snprintf(path, sizeof(path), "%s/libobj%d.so", argv[1], i);
		h = dlopen(path, RTLD_NOW);
		fn[i] = h ? (void (*)(void))dlsym(h, "obj_work") : NULL;
		if (!fn[i]) {
			fprintf(stderr, "attachee: %s: %s\n", path, dlerror());
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		for (int i = 0; i < n; i++)
			fn[i]();
		printf("round %d\n", ++rounds);
		fflush(stdout);
	}
	printf("done\n");
	return 0;
}
