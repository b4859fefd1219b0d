/*
 * Java sites by name (ctl/report/javasyms.c): the line of a bytecode
 * index (the entry with the greatest start at or before it, whatever
 * order the table came in), a method without a line table, a method never
 * described, numbers kept apart per process, a class named after its
 * method, and the Java thread names.
 */
#include <check.h>
#include <string.h>

#include "ctl/report/javasyms.h"
#include "jvm/jvm-tp.h"
#include "tests/unit/run.h"

/* The classes of the jvm statedump, as a trace's metadata has them. */
#define U(n) { .name = n, .kind = ST_FIELD_UINT, .size = 4 }
#define S(n) { .name = n, .kind = ST_FIELD_STRING }
static const struct st_field_desc class_f[] = { U("class"), S("name") };
static const struct st_field_desc method_f[] = { U("method"), U("class"), S("name"),
						 S("signature"), S("file") };
static const struct st_field_desc line_f[] = { U("method"), U("bci"), U("line") };
static const struct st_field_desc thread_f[] = { S("name"), U("daemon") };
static const struct st_event_class classes[] = {
	{ .name = "jvm:class", .index = 0, .fields = { class_f, 2 } },
	{ .name = "jvm:method", .index = 1, .fields = { method_f, 5 } },
	{ .name = "jvm:method_line", .index = 2, .fields = { line_f, 3 } },
	{ .name = "jvm:thread_start", .index = 3, .fields = { thread_f, 2 } },
	{ .name = "jvm:monitor_held", .index = 4, .fields = { line_f, 3 } },
};

static struct st_value str(const char *s)
{
	return (struct st_value){ .ptr = s, .len = strlen(s) };
}

static struct st_value num(uint64_t u)
{
	return (struct st_value){ .u = u };
}

static void feed(struct st_jsyms *j, int cls, int32_t pid, int32_t tid, const struct st_value *v)
{
	struct st_event ev = { .cls = &classes[cls], .pid = pid, .tid = tid, .fields = v };

	ck_assert_int_eq(st_jsyms_event(j, &ev), 0);
}

static void line(struct st_jsyms *j, int32_t pid, uint32_t m, uint32_t bci, uint32_t l)
{
	feed(j, 2, pid, pid, (struct st_value[]){ num(m), num(bci), num(l) });
}

static void method(struct st_jsyms *j, int32_t pid, uint32_t m, uint32_t cls, const char *name,
		   const char *file)
{
	feed(j, 1, pid, pid, (struct st_value[]){ num(m), num(cls), str(name), str("()V"), str(file) });
}

static struct st_jsite site(struct st_jsyms *j, int32_t pid, uint32_t m, int32_t bci)
{
	struct st_jsite s;

	st_jsyms_site(j, pid, ST_JVM_TRACE_SITE(m, bci), &s);
	return s;
}

START_TEST(lines)
{
	struct st_jsyms *j = st_jsyms_new();
	struct st_jsite s;

	ck_assert_ptr_nonnull(j);
	ck_assert(st_jsyms_reads(j, &classes[0]) && st_jsyms_reads(j, &classes[2]));
	ck_assert(!st_jsyms_reads(j, &classes[4]));
	feed(j, 0, 10, 10, (struct st_value[]){ num(1), str("com.acme.Bank") });
	method(j, 10, 7, 1, "transfer", "Bank.java");
	/* (out of order: sorted at the first lookup) */
	line(j, 10, 7, 14, 42);
	line(j, 10, 7, 0, 40);
	line(j, 10, 7, 6, 41);
	s = site(j, 10, 7, 13);
	ck_assert_str_eq(s.method, "com.acme.Bank.transfer");
	ck_assert_str_eq(s.file, "Bank.java");
	ck_assert_uint_eq(s.line, 41);
	ck_assert_uint_eq(site(j, 10, 7, 14).line, 42);
	ck_assert_uint_eq(site(j, 10, 7, 0).line, 40);
	ck_assert_uint_eq(site(j, 10, 7, 65535).line, 42);
	/* no bytecode index (a native frame): no line */
	s = site(j, 10, 7, -1);
	ck_assert_int_eq(s.bci, -1);
	ck_assert_uint_eq(s.line, 0);
	/* a line added later is found */
	line(j, 10, 7, 20, 43);
	ck_assert_uint_eq(site(j, 10, 7, 25).line, 43);
	st_jsyms_free(j);
}
END_TEST

START_TEST(unknowns)
{
	struct st_jsyms *j = st_jsyms_new();
	struct st_jsite s;

	ck_assert_ptr_nonnull(j);
	/* a method without lines, nor a file */
	method(j, 10, 3, 2, "run", "");
	s = site(j, 10, 3, 7);
	ck_assert_str_eq(s.method, "?.run"); /* (its class not said yet) */
	ck_assert_ptr_null(s.file);
	ck_assert_uint_eq(s.line, 0);
	/* its class named later: named after it at the next lookup */
	feed(j, 0, 10, 10, (struct st_value[]){ num(2), str("com.acme.Worker") });
	ck_assert_str_eq(site(j, 10, 3, 7).method, "com.acme.Worker.run");
	/* a method never described: its numbers only */
	s = site(j, 10, 99, 3);
	ck_assert_ptr_null(s.method);
	ck_assert_uint_eq(s.method_id, 99);
	ck_assert_int_eq(s.bci, 3);
	/* another process's numbers are its own */
	ck_assert_ptr_null(site(j, 11, 3, 7).method);
	ck_assert_ptr_null(st_jsyms_class(j, 11, 2));
	ck_assert_str_eq(st_jsyms_class(j, 10, 2), "com.acme.Worker");
	st_jsyms_free(j);
}
END_TEST

START_TEST(monitor_names)
{
	struct st_jsyms *j = st_jsyms_new();
	char buf[64];

	ck_assert_ptr_nonnull(j);
	feed(j, 0, 10, 10, (struct st_value[]){ num(2), str("com.acme.Pool") });
	feed(j, 0, 10, 10, (struct st_value[]){ num(3), str("evil\n\x1b[2J") });
	st_jsyms_monitor_name(j, 10, 2, true, buf, sizeof(buf));
	ck_assert_str_eq(buf, "monitor of com.acme.Pool");
	/* a class the trace did not name: its number */
	st_jsyms_monitor_name(j, 10, 7, false, buf, sizeof(buf));
	ck_assert_str_eq(buf, "monitor of class 7");
	/* a process's class name is data: escaped for text, as it is for
	 * JSON (whose writer escapes it) */
	st_jsyms_monitor_name(j, 10, 3, true, buf, sizeof(buf));
	ck_assert_ptr_null(strchr(buf, '\n'));
	ck_assert_ptr_null(strchr(buf, 0x1b));
	st_jsyms_monitor_name(j, 10, 3, false, buf, sizeof(buf));
	ck_assert_str_eq(buf, "monitor of evil\n\x1b[2J");
	/* cut short: at a whole escape, never inside one */
	st_jsyms_monitor_name(j, 10, 3, true, buf, 17);
	ck_assert_str_eq(buf, "monitor of evil");
	st_jsyms_monitor_name(j, 10, 3, true, buf, 5);
	ck_assert_str_eq(buf, "moni");
	st_jsyms_free(j);
}
END_TEST

START_TEST(threads)
{
	struct st_jsyms *j = st_jsyms_new();

	ck_assert_ptr_nonnull(j);
	feed(j, 3, 10, 12, (struct st_value[]){ str("teller-1"), num(0) });
	ck_assert_str_eq(st_jsyms_thread(j, 10, 12), "teller-1");
	ck_assert_ptr_null(st_jsyms_thread(j, 10, 13));
	/* renamed: the newest */
	feed(j, 3, 10, 12, (struct st_value[]){ str("pool-1-thread-1"), num(1) });
	ck_assert_str_eq(st_jsyms_thread(j, 10, 12), "pool-1-thread-1");
	st_jsyms_free(j);
}
END_TEST

int main(void)
{
	return st_run_tests("javasyms", ST_TESTS(lines, unknowns, monitor_names, threads));
}
