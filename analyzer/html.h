/* What slack's HTML pages share (report_html.c for `slack report --html`, cmd_diff.c for
 * `slack diff --html`): one self-contained file each, with its CSS, SVG charts and script inline
 * and nothing fetched from the network, readable on a laptop and in print.
 *
 * The classes keep one color each on every page, from the Okabe-Ito palette (distinguishable
 * with the common color-vision deficiencies); color is never the only carrier: every chart has a
 * <title> and <desc> (role="img") and a table of its numbers beside it. */
#ifndef SLACK_HTML_H
#define SLACK_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "classify.h"

/* "#0072B2"...: the color of a class. */
const char *html_class_color(int c);

/* The page's head (title escaped, the CSS inline) and the opening of <main>. */
void html_begin(FILE *f, const char *title);
/* Closes <main> and the page; script (NULL: none) goes inline before </body>. */
void html_end(FILE *f, const char *script);

/* Text with &, <, >, " and ' escaped. */
void html_text(FILE *f, const char *s);
void html_textn(FILE *f, const char *s, size_t n);
/* printf, then escaped as text. */
void html_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A number for an SVG coordinate: at most one decimal, no trailing zeros. buf >= 32 bytes. */
const char *html_num(char *buf, size_t len, double v);

/* The legend of the classes: a swatch and the name of each (only those with mask bit 1 << c). */
void html_legend(FILE *f, unsigned mask);

/* <svg ... role="img" aria-labelledby=...><title>title</title><desc>desc</desc>: the opening of
 * a chart of viewBox width x height; id makes the title's and desc's ids unique. */
void html_svg_begin(FILE *f, const char *id, double width, double height, const char *title,
                    const char *desc);
void html_svg_end(FILE *f);

/* One row of a horizontal stacked bar of the classes inside an open SVG: v[c] scaled so that
 * full is w units wide, from (x, y), h high; each piece with a tooltip of its class and time. */
void html_stack_row(FILE *f, const uint64_t *v, uint64_t full, double x, double y, double w,
                    double h);

/* A tick spacing of 1, 2 or 5 times a power of ten that cuts span into at most 8. */
uint64_t html_tick_step(uint64_t span);
/* "0", "250 us", "15 ms", "2 s": the label of tick t for that spacing. */
const char *html_tick_label(char *buf, size_t len, uint64_t t, uint64_t step);

/* Ticks and labels of a time axis along y from x0 to x1 for a span of ns. */
void html_time_axis(FILE *f, double x0, double x1, double y, uint64_t span_ns);

#endif
