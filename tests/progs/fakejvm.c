/*
 * fakejvm: the events libshimtrace-jvm.so writes of a Java program, in the
 * order it writes them, with known counts and waits, for the reports'
 * tests (tests/integration/jvm-reports.test) without a JVM.
 *
 *   fakejvm order   two threads take the monitors of two accounts in
 *                   opposite orders (one lock-order cycle, two Java
 *                   lines each side), wait on the ledger's monitor and
 *                   on a pthread mutex, wait in Object.wait (woken, timed
 *                   out, and still waiting at the end), and contend at a
 *                   method the statedump never named
 *   fakejvm mixed   a thread owning a monitor waits for a pthread mutex
 *                   (JNI) that another holds while it contends for the
 *                   monitor: one cycle, a monitor and a mutex
 *
 * The statedump comes first (classes, methods, line tables), then each
 * Java thread's thread_start from the thread itself. The threads take
 * turns (an atomic counter, not a traced lock), so the trace's order is
 * the program's. The monitor waits' wait_ns are the numbers below, not
 * times measured: the reports' totals are exact. Prints "done MODE".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blocked.h"
#include "jvm/jvm-tp.h"

ST_PROVIDER_DECLARE(jvm, ST_JVM_TRACEPOINTS)
ST_PROVIDER_DEFINE(jvm, ST_JVM_TRACEPOINTS)

/* An event of the jvm provider at Java site ip, when a session records it. */
#define EMIT(name, ip, ...)                                                                  \
	do {                                                                                 \
		uint32_t m_ = st__state_jvm.mask[st__slot_jvm_##name];                       \
		if (m_)                                                                      \
			st__emit_jvm_##name(m_, st_clock_read(), (const void *)(uintptr_t)(ip), \
					    ##__VA_ARGS__);                                  \
	} while (0)

/* The classes, methods and monitors (tags) of the program. */
enum { C_BANK = 1, C_ACCOUNT, C_LEDGER, C_WORKER };
enum { M_TRANSFER = 1, M_RECORD, M_RUN, M_UNNAMED };
enum { MON_A = 1, MON_B, MON_LEDGER, MON_UNNAMED, MON_POOL };

static pthread_mutex_t native = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int turn;
static _Atomic int tids[2];

static void statedump(void)
{
	static const struct { uint32_t m, bci, line; } lines[] = {
		{ M_TRANSFER, 0, 40 }, { M_TRANSFER, 6, 41 }, { M_TRANSFER, 14, 42 },
		{ M_TRANSFER, 30, 44 }, { M_RECORD, 0, 10 }, { M_RECORD, 8, 12 },
	};

	EMIT(class, 0, C_BANK, "com.acme.Bank");
	EMIT(class, 0, C_ACCOUNT, "com.acme.Account");
	EMIT(class, 0, C_LEDGER, "com.acme.Ledger");
	EMIT(class, 0, C_WORKER, "com.acme.Worker");
	EMIT(method, 0, M_TRANSFER, C_BANK, "transfer", "(Lcom/acme/Account;Lcom/acme/Account;J)V",
	     "Bank.java");
	EMIT(method, 0, M_RECORD, C_LEDGER, "record", "(J)V", "Ledger.java");
	/* (no line table: shown with its bytecode index) */
	EMIT(method, 0, M_RUN, C_WORKER, "run", "()V", "Worker.java");
	/* (M_UNNAMED: never described) */
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		EMIT(method_line, 0, lines[i].m, lines[i].bci, lines[i].line);
	EMIT(thread_start, 0, "main", 0);
}

/* Waits for turn k; the next turn is the caller's to give (next()). */
static void wait_turn(int k)
{
	while (atomic_load(&turn) != k)
		sched_yield();
}

static void next(void)
{
	atomic_fetch_add(&turn, 1);
}

/* A contended enter of monitor mon (of class cls) at (method, bci), that
 * waited wait_ns, by a thread owning the monitors held[0..n) (their
 * frames' sites: held_at). */
static void contend(uint64_t mon, uint32_t cls, uint32_t method, int32_t bci, uint64_t wait_ns,
		    const uint64_t *held, const uint32_t *held_cls, const uint64_t *held_at, int n)
{
	uint64_t site = ST_JVM_SITE(method, bci);

	for (int i = 0; i < n; i++)
		EMIT(monitor_held, held_at[i], held[i], held_cls[i], ST_JVM_SITE_METHOD(held_at[i]),
		     ST_JVM_SITE_BCI(held_at[i]));
	EMIT(monitor_contended_enter, site, mon, cls, method, bci);
	EMIT(monitor_contended_entered, site, mon, cls, method, bci, wait_ns);
}

static void object_wait(uint64_t mon, uint32_t cls, uint32_t method, int32_t bci,
			int64_t timeout_ms, int timed_out, uint64_t wait_ns)
{
	uint64_t site = ST_JVM_SITE(method, bci);

	EMIT(monitor_wait, site, mon, cls, method, bci, timeout_ms);
	if (wait_ns)
		EMIT(monitor_waited, site, mon, cls, method, bci, (uint8_t)timed_out, wait_ns);
}

/* Thread i's part of `order`, turn by turn. */
static void order(int i)
{
	static const uint32_t acct[1] = { C_ACCOUNT };

	if (i == 0) {
		/* turn 0: a (Bank.java:41) held, b wanted at Bank.java:42 */
		wait_turn(0);
		contend(MON_B, C_ACCOUNT, M_TRANSFER, 14, 1000000, (uint64_t[]){ MON_A }, acct,
			(uint64_t[]){ ST_JVM_SITE(M_TRANSFER, 6) }, 1);
		/* the ledger's monitor, three times, from a method without
		 * lines */
		contend(MON_LEDGER, C_LEDGER, M_RUN, 7, 3000000, NULL, NULL, NULL, 0);
		contend(MON_LEDGER, C_LEDGER, M_RUN, 7, 4000000, NULL, NULL, NULL, 0);
		contend(MON_LEDGER, C_LEDGER, M_RUN, 7, 5000000, NULL, NULL, NULL, 0);
		/* the native mutex held (JNI), and a wait for it by thread 1 */
		pthread_mutex_lock(&native);
		next();
		wait_turn(2);
		while (!blocked_in(atomic_load(&tids[1]), SYS_futex, &native))
			sched_yield();
		nanosleep(&(struct timespec){ 0, 30000000 }, NULL);
		pthread_mutex_unlock(&native);
		/* Object.wait on the ledger: timed out after 50 ms */
		wait_turn(3);
		object_wait(MON_LEDGER, C_LEDGER, M_RECORD, 8, 50, 1, 50000000);
		next();
	} else {
		/* turn 1: b (Ledger.java:10) held, a wanted at Ledger.java:12 */
		wait_turn(1);
		contend(MON_A, C_ACCOUNT, M_RECORD, 8, 2000000, (uint64_t[]){ MON_B }, acct,
			(uint64_t[]){ ST_JVM_SITE(M_RECORD, 0) }, 1);
		/* a monitor at a method the statedump never named */
		contend(MON_UNNAMED, C_WORKER, M_UNNAMED, 3, 8000000, NULL, NULL, NULL, 0);
		next();
		pthread_mutex_lock(&native); /* waits: thread 0 holds it */
		pthread_mutex_unlock(&native);
		next();
		/* Object.wait on the ledger: woken after 7 ms; then again,
		 * never woken (still waiting at the end) */
		wait_turn(4);
		object_wait(MON_LEDGER, C_LEDGER, M_RECORD, 8, 0, 0, 7000000);
		object_wait(MON_LEDGER, C_LEDGER, M_RECORD, 8, 0, 0, 0);
		next();
	}
}

/* Thread i's part of `mixed`: thread 1 holds the native mutex (taken
 * through JNI); thread 0, owning the pool's monitor, blocks on it (the
 * agent's lock wait hook writes monitor_held before the wait event);
 * thread 1, still holding the mutex, contends for the pool's monitor. */
static void mixed(int i)
{
	if (i == 1) {
		wait_turn(0);
		pthread_mutex_lock(&native);
		next();
		while (!blocked_in(atomic_load(&tids[0]), SYS_futex, &native))
			sched_yield();
		/* the pool's monitor wanted at Ledger.java:12 */
		contend(MON_POOL, C_BANK, M_RECORD, 8, 6000000, NULL, NULL, NULL, 0);
		pthread_mutex_unlock(&native);
	} else {
		/* the pool's monitor owned at Bank.java:44 */
		wait_turn(1);
		EMIT(monitor_held, ST_JVM_SITE(M_TRANSFER, 30), MON_POOL, C_BANK, M_TRANSFER, 30);
		pthread_mutex_lock(&native); /* waits: thread 1 holds it */
		pthread_mutex_unlock(&native);
	}
}

static const char *mode;

static void *thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	char name[32];

	atomic_store(&tids[i], (int)syscall(SYS_gettid));
	snprintf(name, sizeof(name), "teller-%d", i + 1);
	EMIT(thread_start, 0, name, 0);
	if (strcmp(mode, "order") == 0)
		order(i);
	else
		mixed(i);
	/* (a thread still in Object.wait at the end does not end) */
	if (i == 0 || strcmp(mode, "mixed") == 0)
		EMIT(thread_end, 0, name);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "order") != 0 && strcmp(mode, "mixed") != 0) {
		fprintf(stderr, "usage: fakejvm order|mixed\n");
		return 2;
	}
	statedump();
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread, (void *)(intptr_t)i))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("done %s\n", mode);
	return 0;
}
