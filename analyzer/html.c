/* Shared pieces of slack's HTML pages (html.h). */
#include "html.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "slack.h"

/* Okabe-Ito: busy classes in blues and green, the stalls in the warm colors, other grey. */
static const char *const class_color[CLS_COUNT] = {
    "#0072B2", /* compute: blue */
    "#56B4E9", /* communication: sky blue */
    "#009E73", /* copy: bluish green */
    "#D55E00", /* serialization: vermillion */
    "#E69F00", /* copy stall: orange */
    "#CC79A7", /* data starvation: reddish purple */
    "#F0E442", /* launch overhead: yellow */
    "#B8B8B8", /* other: grey */
};

const char *html_class_color(int c) { return c >= 0 && c < CLS_COUNT ? class_color[c] : "#000"; }

static const char css[] =
    ":root{--fg:#1b1b1b;--muted:#595959;--line:#d0d0d0}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;color:var(--fg);background:#fff;font:15px/1.45 system-ui,-apple-system,"
    "'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}\n"
    "main{max-width:1120px;margin:0 auto;padding:12px 24px 48px}\n"
    "h1{font-size:1.5em;margin:.3em 0}\n"
    "h2{font-size:1.25em;margin:1.6em 0 .4em;padding-bottom:.15em;border-bottom:2px solid "
    "var(--line)}\n"
    "h3{font-size:1.05em;margin:1.1em 0 .3em}\n"
    "p{margin:.35em 0}\n"
    ".verdict{font-size:1.08em;border-left:6px solid #D55E00;background:#fbf1ea;"
    "padding:.45em .8em;margin:.5em 0}\n"
    ".verdict.ok{border-left-color:#009E73;background:#ecf7f2}\n"
    ".verdict b{font-weight:650}\n"
    "figure{margin:.5em 0 1.1em;break-inside:avoid}\n"
    "figcaption{color:var(--muted);font-size:.88em;margin-top:.2em}\n"
    "svg{display:block;width:100%;height:auto}\n"
    "svg text{font:11px system-ui,-apple-system,'Segoe UI',Arial,sans-serif;fill:#222}\n"
    "svg .axis{stroke:#777;stroke-width:.6}\n"
    "svg text.b{font-weight:700}\n"
    "svg .grid{stroke:#ddd;stroke-width:.5}\n"
    "svg .hit{fill:transparent;cursor:pointer}\n"
    "svg .hit:hover{fill:#0000001a}\n"
    "table{border-collapse:collapse;font-size:.88em;margin:.4em 0 .8em}\n"
    "th,td{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #e6e6e6}\n"
    "th{font-weight:600;border-bottom:1px solid #bbb}\n"
    ".n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    ".better{color:#006e4f}.worse{color:#b24400}\n"
    ".sw{display:inline-block;width:.85em;height:.85em;border:1px solid #0005;"
    "vertical-align:-.08em;margin-right:.3em}\n"
    ".legend{font-size:.88em;margin:.2em 0 .4em}.legend span{margin-right:1.1em;"
    "white-space:nowrap}\n"
    "code,.mono{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
    "word-break:break-all}\n"
    ".py{color:#0b4f8a}.stack{color:var(--muted)}\n"
    "details>summary{cursor:pointer;color:var(--muted);font-size:.9em}\n"
    ".muted{color:var(--muted)}.fix{margin:.1em 0 .5em;padding-left:.6em;border-left:3px solid "
    "#ccc}\n"
    ".tools{margin:.2em 0;font-size:.9em}.tools button{font:inherit;padding:1px 8px;"
    "margin-right:4px}\n"
    ".gpu{margin-top:1.2em}\n"
    "@media print{main{max-width:none;padding:0}body{font-size:10.5pt}.tools{display:none}"
    "h2{break-after:avoid}h3{break-after:avoid}table{break-inside:avoid}"
    ".verdict{-webkit-print-color-adjust:exact;print-color-adjust:exact}"
    "svg{-webkit-print-color-adjust:exact;print-color-adjust:exact}}\n";

void html_begin(FILE *f, const char *title) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"slack " SLACK_VERSION "\">\n<title>",
        f);
  html_text(f, title);
  fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", css);
}

void html_end(FILE *f, const char *script) {
  fputs("</main>\n", f);
  if (script) fprintf(f, "<script>\n%s</script>\n", script);
  fputs("</body>\n</html>\n", f);
}

void html_textn(FILE *f, const char *s, size_t n) {
  for (size_t i = 0; i < n && s[i]; i++) {
    switch (s[i]) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default:
      /* control bytes would make the page invalid; the rest of UTF-8 passes as it is */
      if ((unsigned char)s[i] < 0x20 && s[i] != '\n' && s[i] != '\t')
        fputc(' ', f);
      else
        fputc(s[i], f);
    }
  }
}

void html_text(FILE *f, const char *s) {
  if (s) html_textn(f, s, strlen(s));
}

void html_printf(FILE *f, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  html_text(f, buf);
}

const char *html_num(char *buf, size_t len, double v) {
  double r = round(v * 10) / 10;
  if (r == 0) r = 0; /* no "-0" */
  if (r == floor(r))
    snprintf(buf, len, "%.0f", r);
  else
    snprintf(buf, len, "%.1f", r);
  return buf;
}

void html_legend(FILE *f, unsigned mask) {
  fputs("<div class=\"legend\">", f);
  for (int c = 0; c < CLS_COUNT; c++)
    if (mask & (1u << c))
      fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>%s</span>", class_color[c],
              report_class_label[c]);
  fputs("</div>\n", f);
}

void html_svg_begin(FILE *f, const char *id, double width, double height, const char *title,
                    const char *desc) {
  char w[32], h[32];
  fprintf(f,
          "<svg id=\"%s\" viewBox=\"0 0 %s %s\" role=\"img\" aria-labelledby=\"%s-t %s-d\" "
          "xmlns=\"http://www.w3.org/2000/svg\">\n<title id=\"%s-t\">",
          id, html_num(w, sizeof w, width), html_num(h, sizeof h, height), id, id, id);
  html_text(f, title);
  fprintf(f, "</title>\n<desc id=\"%s-d\">", id);
  html_text(f, desc);
  fputs("</desc>\n", f);
}

void html_svg_end(FILE *f) { fputs("</svg>\n", f); }

void html_stack_row(FILE *f, const uint64_t *v, uint64_t full, double x, double y, double w,
                    double h) {
  char b[5][32];
  if (!full) return;
  for (int c = 0; c < CLS_COUNT; c++) {
    if (!v[c]) continue;
    double pw = w * (double)v[c] / (double)full;
    fprintf(f, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"><title>%s: %s",
            html_num(b[0], 32, x), html_num(b[1], 32, y), html_num(b[2], 32, pw < .1 ? .1 : pw),
            html_num(b[3], 32, h), class_color[c], report_class_label[c],
            slack_fmt_ns(b[4], 32, v[c]));
    fprintf(f, " (%.1f%%)</title></rect>\n", slack_pct(v[c], full));
    x += pw;
  }
}

uint64_t html_tick_step(uint64_t span) {
  uint64_t step = 1;
  /* step stays below span / 8 here, so step * 10 cannot wrap for any span < 2^64 */
  while (span / step > 8) {
    if (span / (step * 2) <= 8) return step * 2;
    if (span / (step * 5) <= 8) return step * 5;
    if (step > UINT64_MAX / 10) return step;
    step *= 10;
  }
  return step;
}

/* "0", "250 us", "15 ms", "2 s": a tick's label in the largest unit that the tick spacing (1, 2
 * or 5 times a power of ten) is a whole multiple of. */
const char *html_tick_label(char *buf, size_t len, uint64_t t, uint64_t step) {
  uint64_t unit = step >= 1000000000ull ? 1000000000ull
                  : step >= 1000000     ? 1000000
                  : step >= 1000        ? 1000
                                        : 1;
  const char *name = unit == 1000000000ull ? "s"
                     : unit == 1000000     ? "ms"
                     : unit == 1000        ? "us"
                                           : "ns";
  if (!t) return "0";
  snprintf(buf, len, "%llu %s", (unsigned long long)(t / unit), name);
  return buf;
}

void html_time_axis(FILE *f, double x0, double x1, double y, uint64_t span_ns) {
  char a[32], b[32], c[32], l[48];
  if (!span_ns || x1 <= x0) return;
  uint64_t step = html_tick_step(span_ns);
  fprintf(f, "<path class=\"axis\" d=\"M%s %sH%s\"/>\n", html_num(a, 32, x0), html_num(b, 32, y),
          html_num(c, 32, x1));
  for (uint64_t t = 0;; t += step) { /* stops before t would wrap past 2^64 (a damaged trace) */
    double x = x0 + (x1 - x0) * (double)t / (double)span_ns;
    fprintf(f, "<path class=\"axis\" d=\"M%s %sv4\"/><text x=\"%s\" y=\"%s\" ", html_num(a, 32, x),
            html_num(b, 32, y), html_num(c, 32, x), html_num(l, 32, y + 15));
    fprintf(f, "text-anchor=\"%s\">%s</text>\n", t ? "middle" : "start",
            html_tick_label(l, sizeof l, t, step));
    if (span_ns - t < step) break;
  }
}
