/*
 * Escaping of text that others wrote, for people and for JSON: the one
 * place that decides what is shown as it is (see escape.h for the rule).
 */
#include <string.h>

#include "ctl/common/escape.h"

static const char hexdig[] = "0123456789abcdef";

uint32_t st_utf8_char(const unsigned char *s, size_t n, int32_t *cp)
{
	uint32_t len, v, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc0 && s[0] < 0xe0) {
		len = 2, v = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] < 0xf0) {
		len = 3, v = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] < 0xf8) {
		len = 4, v = s[0] & 0x07, min = 0x10000;
	} else {
		*cp = -1; /* a continuation byte, or 0xf8 and above */
		return 1;
	}
	if (n < len) {
		*cp = -1;
		return 1;
	}
	for (uint32_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*cp = -1;
			return 1;
		}
		v = v << 6 | (s[i] & 0x3f);
	}
	/* overlong, a UTF-16 surrogate, or beyond Unicode */
	if (v < min || (v >= 0xd800 && v < 0xe000) || v > 0x10ffff) {
		*cp = -1;
		return 1;
	}
	*cp = (int32_t)v;
	return len;
}

size_t st_esc_part(char *dst, size_t cap, const void *src, size_t n, unsigned flags, size_t *used)
{
	const unsigned char *s = src;
	bool quote = flags & (ST_ESC_QUOTE | ST_ESC_JSON), json = flags & ST_ESC_JSON;
	size_t i = 0, o = 0;

	while (i < n) {
		unsigned char e[ST_ESC_UNIT_MAX];
		uint32_t k, m = 0;
		int32_t cp;

		/* (printable ASCII, the bulk of it, a byte at a time) */
		while (i < n && o < cap && s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\' &&
		       (s[i] != '"' || !quote))
			dst[o++] = (char)s[i++];
		if (i == n || o == cap)
			break;
		k = st_utf8_char(s + i, n - i, &cp);
		if (cp == '\\' || (cp == '"' && quote)) {
			e[m++] = '\\';
			e[m++] = (unsigned char)cp;
		} else if (cp >= 0 && !st_is_control(cp)) {
			memcpy(e, s + i, k);
			m = k;
		} else if (json) {
			uint32_t u = cp < 0 ? 0xfffd : (uint32_t)cp;

			e[m++] = '\\';
			e[m++] = 'u';
			for (int sh = 12; sh >= 0; sh -= 4)
				e[m++] = (unsigned char)hexdig[(u >> sh) & 15];
		} else {
			for (uint32_t j = 0; j < k; j++) {
				e[m++] = '\\';
				e[m++] = 'x';
				e[m++] = (unsigned char)hexdig[s[i + j] >> 4];
				e[m++] = (unsigned char)hexdig[s[i + j] & 15];
			}
		}
		if (cap - o < m)
			break;
		memcpy(dst + o, e, m);
		o += m;
		i += k;
	}
	*used = i;
	return o;
}

size_t st_esc_cat(char *dst, size_t cap, const char *s)
{
	size_t len = strnlen(dst, cap), used;

	if (cap == 0 || len >= cap)
		return len;
	len += st_esc_part(dst + len, cap - 1 - len, s, strlen(s), ST_ESC_TEXT, &used);
	dst[len] = '\0';
	return len;
}

const char *st_esc(char *dst, size_t cap, const char *s)
{
	if (cap) {
		dst[0] = '\0';
		st_esc_cat(dst, cap, s);
	}
	return dst;
}

void st_esc_write(FILE *f, const void *s, size_t n, unsigned flags)
{
	char buf[256];

	while (n) {
		size_t used, k = st_esc_part(buf, sizeof(buf), s, n, flags, &used);

		fwrite(buf, 1, k, f);
		s = (const char *)s + used;
		n -= used;
	}
}

void st_json_write(FILE *f, const char *s)
{
	fputc('"', f);
	if (s)
		st_esc_write(f, s, strlen(s), ST_ESC_JSON);
	fputc('"', f);
}

void st_json_write_or_null(FILE *f, const char *s)
{
	if (s)
		st_json_write(f, s);
	else
		fputs("null", f);
}
