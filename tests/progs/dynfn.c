/*
 * Functions to plant dynamic probes in (dynprobe.test), written in
 * assembly so that their first instructions are known: dyn_rip starts
 * with a RIP-relative load, dyn_mid has an instruction boundary at +4,
 * dyn_short is too short for a jump.
 *
 *   dynfn N          calls dyn_rip(i) and dyn_mid(i, 2i) for i = 1..N,
 *                    dyn_short() once, and prints what they computed
 *   dynfn --loop     calls dyn_rip(1) in a loop on a second thread until
 *                    its standard input ends, printing "ready PID" first,
 *                    then the calls made and the sum, which must agree
 *                    (probes are planted and removed under it), and
 *                    "done"; blocked reading meanwhile (a safe point)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long dyn_rip(long x);
long dyn_mid(long a, long b);
long dyn_short(void);
long dyn_counter;

__asm__(".text\n"
	".globl dyn_rip\n.type dyn_rip,@function\n"
	"dyn_rip:\n"
	"  mov dyn_counter(%rip), %rax\n"
	"  add %rdi, %rax\n"
	"  mov %rax, dyn_counter(%rip)\n"
	"  ret\n"
	".size dyn_rip, .-dyn_rip\n"
	".globl dyn_mid\n.type dyn_mid,@function\n"
	"dyn_mid:\n"
	"  lea (%rdi,%rdi,2), %rax\n"
	"  add %rsi, %rax\n"
	"  mov %rax, %rdx\n"
	"  mov %rdx, %rax\n"
	"  ret\n"
	".size dyn_mid, .-dyn_mid\n"
	".globl dyn_short\n.type dyn_short,@function\n"
	"dyn_short:\n"
	"  xor %eax, %eax\n"
	"  ret\n"
	".size dyn_short, .-dyn_short\n");

static volatile int stop;
static volatile long calls;

static void *looper(void *arg)
{
	(void)arg;
	while (!stop) {
		dyn_rip(1);
		calls++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long mid = 0;

	if (argc == 2 && strcmp(argv[1], "--loop") == 0) {
		pthread_t t;
		char buf[64];

		pthread_create(&t, NULL, looper, NULL);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (read(0, buf, sizeof(buf)) > 0)
			;
		stop = 1;
		pthread_join(t, NULL);
		printf("calls %ld sum %ld\ndone\n", calls, dyn_counter);
		return calls == dyn_counter ? 0 : 1;
	}
	if (argc != 2)
		return 2;
	for (long i = 1; i <= atol(argv[1]); i++) {
		dyn_rip(i);
		mid += dyn_mid(i, 2 * i);
	}
	printf("sum %ld mid %ld short %ld\n", dyn_counter, mid, dyn_short());
	return 0;
}
