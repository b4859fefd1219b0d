/*
 * Floating-point numbers as text, for people and for JSON: what `shimtrace
 * view` shows of a DOUBLE field and what the exports write.
 *
 * Text: the fewest significant digits ("%.*g", 17 at most) that read
 * back (strtod) as the same double, so that a value is shown exactly and
 * 0.1 stays "0.1"; NaN and the infinities as C's printf
 * spells them ("nan", "-nan" for one with its sign bit set, "inf",
 * "-inf"), and -0.0 as "-0", as babeltrace2 prints them.
 *
 * JSON has no NaN or infinity: they are written as the strings "NaN",
 * "Infinity" and "-Infinity" (JavaScript's names: Number() reads them
 * back), any other value as a JSON number, the text above; -0.0 as
 * "-0.0", which parsers that read "-0" as the integer 0 (Python's) keep
 * negative.
 *
 * Both need the "C" numeric locale, which the command never leaves.
 */
#ifndef ST_CTL_NUMTEXT_H
#define ST_CTL_NUMTEXT_H

#include <stddef.h>

/* The room for st_double_text's text and its NUL:
 * "-2.2250738585072014e-308" is 24 characters. */
#define ST_DOUBLE_TEXT_MAX 32

/* v as text into buf (ST_DOUBLE_TEXT_MAX bytes, NUL-terminated); returns
 * its length. */
size_t st_double_text(char *buf, double v);

/* v as a JSON value into buf (ST_DOUBLE_TEXT_MAX bytes); returns its
 * length. */
size_t st_double_json(char *buf, double v);

#endif
