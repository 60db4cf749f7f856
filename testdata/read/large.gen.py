#!/usr/bin/env python3
"""Writes large.html: a long documentation page (thousands of elements: navigation,
sections with headings, paragraphs, lists, tables and code, a sidebar and a
footer) for scripts/bench and the read tests. Deterministic: run it again to get
the same file."""
import random

random.seed(7)
words = ("tide pool kelp anemone urchin barnacle limpet mussel crab shore rock wave "
         "current reef sand gull heron otter seal fog salt drift channel inlet cove "
         "estuary marsh dune lagoon spray foam shell pebble basalt granite harbor").split()

def sentence(n=None):
    n = n or random.randint(8, 18)
    s = " ".join(random.choice(words) for _ in range(n))
    return s[0].upper() + s[1:] + "."

out = ['<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
       '<title>dtb read: a large documentation page</title>\n'
       '<meta name="description" content="A long generated page for benchmarks.">\n'
       '<style>.hidden{display:none} nav a{margin-right:4px} .sidebar{float:right;width:200px}</style>\n'
       '</head>\n<body>\n<header><nav id="top">']
for i in range(150):
    out.append('<a href="/docs/topic-%d.html">Topic %d</a>' % (i, i))
out.append('</nav></header>\n<aside class="sidebar"><h3>On this page</h3><ul>')
for s in range(120):
    out.append('<li><a href="#s%d">Section %d</a></li>' % (s, s))
out.append('</ul></aside>\n<main><article>\n<h1>The Large Coastal Handbook</h1>\n')
for s in range(120):
    out.append('<section id="s%d"><h2>Section %d: %s</h2>\n' % (s, s, sentence(3)[:-1]))
    for _ in range(3):
        out.append('<p>%s %s <a href="https://example.org/ref/%d">reference</a> %s <em>%s</em></p>\n'
                   % (sentence(), sentence(), s, sentence(), random.choice(words)))
    out.append('<ul>' + "".join('<li>%s</li>' % sentence(6) for _ in range(4)) + '</ul>\n')
    if s % 3 == 0:
        out.append('<table><tr><th>Name</th><th>Depth</th><th>Notes</th></tr>')
        for r in range(4):
            out.append('<tr><td>%s</td><td>%d m</td><td>%s</td></tr>' % (random.choice(words), r * 3 + 1, sentence(5)))
        out.append('</table>\n')
    if s % 4 == 0:
        out.append('<pre><code>tide --station %d --days 7\nfilter depth &lt; %d</code></pre>\n' % (s, s + 2))
    out.append('<div class="hidden">hidden note %d</div></section>\n' % s)
out.append('</article></main>\n<footer><p>© 2025 Coastal Handbook</p><ul>')
for i in range(40):
    out.append('<li><a href="/legal/%d.html">Legal %d</a></li>' % (i, i))
out.append('</ul></footer>\n</body>\n</html>\n')
open("large.html", "w").write("".join(out))
