/*
 * Floating-point numbers as text (see numtext.h).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/numtext.h"

/*
 * 17 significant digits always read back. A normal double that a decimal
 * of 15 digits or fewer reads back as is within half a unit of its last
 * place of that decimal, much closer than 15 digits can tell apart, so
 * its 15 digits are that decimal (%g drops the trailing zeros): trying
 * 15, 16, then 17 finds the fewest. A subnormal has fewer bits, and the
 * fewest digits that read back may be far fewer than 15 (the least one is
 * 5e-324): tried from 1 up (rare: the cost does not matter).
 */
size_t st_double_text(char *buf, double v)
{
	int n = 0;

	if (!isfinite(v))
		return (size_t)snprintf(buf, ST_DOUBLE_TEXT_MAX, "%g", v);
	for (int digits = v != 0 && fabs(v) < DBL_MIN ? 1 : 15; digits <= 17; digits++) {
		n = snprintf(buf, ST_DOUBLE_TEXT_MAX, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return (size_t)n;
}

size_t st_double_json(char *buf, double v)
{
	const char *s = isnan(v)   ? "\"NaN\""
			: isinf(v) ? (v > 0 ? "\"Infinity\"" : "\"-Infinity\"")
				   : "-0.0";

	if (isfinite(v) && (v != 0 || !signbit(v)))
		return st_double_text(buf, v);
	memcpy(buf, s, strlen(s) + 1);
	return strlen(s);
}
