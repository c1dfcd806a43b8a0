#!/usr/bin/env python3
"""Checks a page of `slack report --html` or `slack diff --html`:

    check_html.py [--sections ID,ID...] [--max-bytes N] [--shots DIR] [--static-only] [--zoom]
                  PAGE.html...

Without a browser (always): the file is at most --max-bytes; its elements nest (every element
that is opened is closed in order); it is self-contained: no <link>, <img>, <iframe>, <object>,
<embed>, no <script src>, no url(...) or @import in its CSS, no src or href attribute that leaves
the page (only "#..." anchors); every --sections id is a <section>.

In headless Chromium (python3-selenium with Debian's chromium and chromium-driver; not with
--static-only): the page loads with no console error and fetches nothing (the Resource Timing
list is empty); every section is displayed with a heading; every chart (svg[role=img]) has a
non-empty <title> and <desc>, is drawn with a size, and holds at least one painted rect or path;
with --zoom, window.slackZoom(0, ...) redraws the first window chart for its typical step with
painted paths inside the chart's box and without an error; the page prints to PDF; a screenshot of the whole page is
saved as DIR/PAGE.png with --shots. One browser serves every page. Prints one JSON line per page;
exit 1 on any failure, 3 when the browser part cannot run (selenium, chromium or chromedriver
missing: the static checks still ran).
"""
import base64
import json
import os
import re
import shutil
import sys
from html.parser import HTMLParser

errors = []


def fail(msg):
    errors.append(msg)
    print("check_html: FAIL: " + msg, file=sys.stderr)


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Nesting(HTMLParser):
    """Elements must be closed in the order they were opened (p and li may be left open)."""

    def __init__(self):
        super().__init__()
        self.stack, self.bad = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_endtag(self, tag):
        while self.stack and self.stack[-1][0] in ("p", "li") and tag != self.stack[-1][0]:
            self.stack.pop()
        if not self.stack or self.stack[-1][0] != tag:
            self.bad.append("</%s> at line %d" % (tag, self.getpos()[0]))
        else:
            self.stack.pop()


def static_checks(path, html, sections, max_bytes):
    size = len(html.encode())
    n = Nesting()
    n.feed(html)
    n.close()
    if n.bad or n.stack:
        fail("%s: elements do not nest: %s" % (path, (n.bad + ["<%s> at line %d left open" %
                                                              (t, p[0]) for t, p in n.stack])[:5]))
    if max_bytes and size > max_bytes:
        fail("%s: %d bytes, more than %d" % (path, size, max_bytes))
    for tag in ("link", "img", "iframe", "object", "embed"):
        if re.search(r"<%s[\s>]" % tag, html, re.I):
            fail("%s: has a <%s> element" % (path, tag))
    if re.search(r"<script[^>]*\ssrc=", html, re.I):
        fail("%s: loads a script" % path)
    if re.search(r"url\(|@import", html, re.I):
        fail("%s: its CSS loads something" % path)
    for m in re.finditer(r"\s(src|href)\s*=\s*\"([^\"]*)\"", html, re.I):
        if not m.group(2).startswith("#"):
            fail("%s: %s=\"%s\" leaves the page" % (path, m.group(1), m.group(2)[:80]))
    for s in sections:
        if not re.search(r"<section id=\"%s\"" % re.escape(s), html):
            fail("%s: no section %s" % (path, s))
    return size


def driver():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None, "python3-selenium is not installed"
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    drv = shutil.which("chromedriver")
    if not browser or not drv:
        return None, "chromium or chromedriver is not installed"
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,900", "--hide-scrollbars"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(drv), options=opts), None
    except Exception as e:  # a browser that does not start is a missing tool, not a page bug
        return None, "chromium did not start: %s" % str(e).splitlines()[0]


CHART_JS = """
var out = [];
document.querySelectorAll('svg[role=img]').forEach(function (s) {
  var t = s.querySelector('title'), d = s.querySelector('desc'), r = s.getBoundingClientRect();
  var painted = 0;
  s.querySelectorAll('rect, path').forEach(function (e) {
    if (e.classList.contains('hit') || e.classList.contains('sel')) return;
    if (e.tagName === 'path' && !(e.getAttribute('d') || '').length) return;
    var b = e.getBBox();
    if (b.width > 0 && b.height > 0) painted++;
  });
  out.push({id: s.id, title: t ? t.textContent.trim() : '', desc: d ? d.textContent.trim() : '',
            w: r.width, h: r.height, painted: painted});
});
return out;
"""

SECTION_JS = """
var s = document.getElementById(arguments[0]);
if (!s) return null;
var r = s.getBoundingClientRect(), h = s.querySelector('h2');
return {tag: s.tagName, w: r.width, h: r.height, heading: h ? h.textContent.trim() : ''};
"""

ZOOM_JS = """
var el = document.getElementById('slack-data');
if (!el) return {none: true};
var d = JSON.parse(el.textContent);
if (!d.gpus.length) return {none: true};
var g = d.gpus[0], a = g.typ[1] > g.typ[0] ? g.typ[0] : 0, b = g.typ[1] > g.typ[0] ? g.typ[1] : d.span / 4;
var label = window.slackZoom(0, a, b);
var n = 0;
document.querySelectorAll('#zoom-0 .cols path').forEach(function (p) { n += (p.getAttribute('d') || '').length; });
var box = document.querySelector('#zoom-0 .cols').getBBox();
var vb = document.getElementById('zoom-0').viewBox.baseVal;
var back = window.slackZoom(0, 0, d.span);
return {label: label, painted: n, back: back, y: box.y, bottom: box.y + box.height, h: vb.height,
        left: box.x, right: box.x + box.width, w: vb.width};
"""


def browser_page(d, path, sections, shot, zoom):
    d.set_window_size(1280, 900)
    d.get("file://" + path)
    logs = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    if logs:
        fail("%s: console errors: %s" % (path, logs[:3]))
    res = d.execute_script("return performance.getEntriesByType('resource').length")
    if res:
        fail("%s: the page fetched %d resources" % (path, res))
    for s in sections:
        info = d.execute_script(SECTION_JS, s)
        if not info or info["tag"] != "SECTION" or info["h"] <= 0 or not info["heading"]:
            fail("%s: section %s missing, empty or without a heading: %s" % (path, s, info))
    charts = d.execute_script(CHART_JS)
    if not charts:
        fail("%s: no charts" % path)
    for c in charts:
        if not c["title"] or not c["desc"]:
            fail("%s: chart %s without a title or desc (its text alternative)" % (path, c["id"]))
        if c["w"] <= 0 or c["h"] <= 0 or c["painted"] < 1:
            fail("%s: chart %s is empty: %s" % (path, c["id"], c))
    if zoom:
        z = d.execute_script(ZOOM_JS)
        if z and z.get("none"):
            pass  # no GPU, no window chart
        elif not z or z["painted"] <= 0 or not z["label"].startswith("from ") or \
                z["back"] != "the whole window":
            fail("%s: zooming the window chart failed: %s" % (path, z))
        elif z["y"] < 0 or z["bottom"] > z["h"] or z["left"] < 0 or z["right"] > z["w"]:
            fail("%s: the zoomed window chart is drawn outside its box: %s" % (path, z))
    pdf = d.execute_cdp_cmd("Page.printToPDF", {"printBackground": True})
    if len(base64.b64decode(pdf.get("data", ""))) < 10000:
        fail("%s: printing gave an empty PDF" % path)
    logs = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    if logs:
        fail("%s: console errors after zooming: %s" % (path, logs[:3]))
    if shot:
        height = d.execute_script("return document.documentElement.scrollHeight")
        d.set_window_size(1280, min(max(int(height), 900), 16000))
        if not d.save_screenshot(shot) or os.path.getsize(shot) < 10000:
            fail("%s: no screenshot" % path)
    return {"charts": len(charts), "sections": len(sections)}


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    sections, max_bytes, shots, static_only, zoom, pages = [], 0, None, False, False, []
    while args:
        a = args.pop(0)
        if a == "--sections":
            sections = [s for s in args.pop(0).split(",") if s]
        elif a == "--max-bytes":
            max_bytes = int(args.pop(0))
        elif a == "--shots":
            shots = args.pop(0)
        elif a == "--static-only":
            static_only = True
        elif a == "--zoom":
            zoom = True
        elif a.startswith("--"):
            sys.exit("unknown argument " + a)
        else:
            pages.append(os.path.abspath(a))
    results = []
    for path in pages:
        with open(path, encoding="utf-8") as f:
            results.append({"file": path, "bytes": static_checks(path, f.read(), sections,
                                                                  max_bytes)})
    skipped = None
    if not static_only and pages:
        d, skipped = driver()
        if d is not None:
            try:
                for r in results:
                    shot = None
                    if shots:
                        shot = os.path.join(shots, os.path.basename(r["file"])[:-5] + ".png")
                    try:
                        r.update(browser_page(d, r["file"], sections, shot, zoom))
                    except Exception as e:  # a script error on the page is the page's failure
                        fail("%s: %s" % (r["file"], str(e).splitlines()[0]))
            finally:
                d.quit()
    for r in results:
        if skipped:
            r["browser"] = "skipped: " + skipped
        print(json.dumps(r))
    return 1 if errors else 3 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
