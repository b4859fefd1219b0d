/*
 * Unit tests of the relay URLs (ctl/common/relayurl.c): lttng's forms,
 * the default ports, and every malformed one refused with a reason.
 */
#include <string.h>

#include "ctl/common/relayurl.h"
#include "tests/unit/run.h"

START_TEST(net_urls)
{
	struct st_relay_url u;
	char err[256];

	ck_assert_int_eq(st_relay_url_parse("net://relay.example", &u, err, sizeof(err)), 0);
	ck_assert_str_eq(u.host, "relay.example");
	ck_assert_uint_eq(u.ctrl_port, 5342);
	ck_assert_uint_eq(u.data_port, 5343);
	ck_assert_int_eq(st_relay_url_parse("net://10.0.0.2:6000", &u, err, sizeof(err)), 0);
	ck_assert_str_eq(u.host, "10.0.0.2");
	ck_assert_uint_eq(u.ctrl_port, 6000);
	ck_assert_uint_eq(u.data_port, 5343);
	ck_assert_int_eq(st_relay_url_parse("net://h:6000:6001", &u, err, sizeof(err)), 0);
	ck_assert_uint_eq(u.ctrl_port, 6000);
	ck_assert_uint_eq(u.data_port, 6001);
	ck_assert_int_eq(st_relay_url_parse("net6://[::1]:7000:7001", &u, err, sizeof(err)), 0);
	ck_assert_str_eq(u.host, "::1");
	ck_assert_uint_eq(u.data_port, 7001);
	ck_assert_int_eq(st_relay_url_parse("net://h/", &u, err, sizeof(err)), 0);
}
END_TEST

START_TEST(bad_urls)
{
	static const char *const bad[] = { "",		  "relay:5342",	 "file:///tmp", "net://",
					   "net://:5342", "net://h:0",	 "net://h:65536", "net://h:1:2:3",
					   "net://h:x",	  "net://[::1", "net://h:5342/x" };
	struct st_relay_url u;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(st_relay_url_parse(bad[i], &u, err, sizeof(err)) == -1, "'%s' taken", bad[i]);
		ck_assert_msg(err[0] && !strchr(err, '\n'), "'%s': no one-line reason", bad[i]);
	}
}
END_TEST

START_TEST(tcp_urls)
{
	char host[64], err[256];
	uint16_t port;

	ck_assert_int_eq(st_relay_tcp_url_parse("tcp://h:5342", host, sizeof(host), &port, err, sizeof(err)), 0);
	ck_assert_str_eq(host, "h");
	ck_assert_uint_eq(port, 5342);
	ck_assert_int_eq(st_relay_tcp_url_parse("tcp6://[fe80::1]:9", host, sizeof(host), &port, err,
						sizeof(err)),
			 0);
	ck_assert_str_eq(host, "fe80::1");
	ck_assert_int_eq(st_relay_tcp_url_parse("tcp://h", host, sizeof(host), &port, err, sizeof(err)), -1);
	ck_assert_int_eq(st_relay_tcp_url_parse("net://h:1", host, sizeof(host), &port, err, sizeof(err)), -1);
	{
		struct st_relay_url u;

		ck_assert_int_eq(st_relay_urls_parse("tcp://c:10", "tcp://d:11", &u, err, sizeof(err)), 0);
		ck_assert_str_eq(u.host, "c");
		ck_assert_str_eq(u.data_host, "d");
		ck_assert_uint_eq(u.ctrl_port, 10);
		ck_assert_uint_eq(u.data_port, 11);
		ck_assert_int_eq(st_relay_urls_parse("tcp://c:10", "net://d", &u, err, sizeof(err)), -1);
	}
}
END_TEST

int main(void)
{
	return st_run_tests("relayurl", ST_TESTS(net_urls, bad_urls, tcp_urls));
}
