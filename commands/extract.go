package commands

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/read"
	"github.com/dtb-cli/dtb/internal/session"
)

const catReadFlags = "Reading"

// readyFlags are the readiness flags of extract and search.
func readyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "quiet-ms", Value: int(read.DefaultQuiet / time.Millisecond), Usage: "the DOM must stay unchanged this many `MS` before reading (0: do not wait for quiet)", EnvVars: []string{"DTB_QUIET_MS"}, Category: catReadFlags},
		&cli.DurationFlag{Name: "ready-timeout", Value: read.DefaultTimeout, Usage: "readiness window `DURATION`; stretches to 30s while the page is still loading. Without a --wait-* condition a timeout only adds a warning", EnvVars: []string{"DTB_READY_TIMEOUT"}, Category: catReadFlags},
	}
}

func readyOptions(c *cli.Context) (read.ReadyOptions, error) {
	o := read.ReadyOptions{
		Conditions: read.Conditions{CSS: c.String("wait-css"), Text: c.String("wait-text"), URL: c.String("wait-url")},
		Timeout:    c.Duration("ready-timeout"),
	}
	q := c.Int("quiet-ms")
	switch {
	case q < 0:
		return o, output.Usage("--quiet-ms must be 0 or more, not %d", q)
	case q == 0:
		o.Quiet = -1
	default:
		o.Quiet = time.Duration(q) * time.Millisecond
	}
	if o.Timeout <= 0 {
		return o, output.Usage("--ready-timeout must be positive")
	}
	return o, nil
}

func init() {
	register(&cli.Command{
		Name:     "extract",
		Category: catBrowser,
		Usage:    "read a page: text, reader view, Markdown, links, headings and frames as JSON",
		UsageText: `dtb extract [URL] [--current | --tab ID | --workspace NAME] [--wait-css SEL] [--wait-text TEXT] [--wait-url PART]
            [--include FIELDS] [--max-chars N] [--quiet-ms MS] [--ready-timeout DURATION]

With a URL it opens it first, by the rules of 'dtb open' (a new tab by default); without
one it reads the selected tab. It waits until the page has loaded and its DOM has been
quiet for --quiet-ms (800 ms) inside --ready-timeout (8 s, stretching to 30 s while the
page still loads). A page dtb has touched before is known to be quiet at once. Without a
--wait-* condition a readiness timeout is not a failure: the page is read as it is, with a
warning in "warnings" and on stderr. A --wait-* condition that does not hold in time is
"timeout" (exit 4).

The page is read in one pass over its rendered, visible DOM: open shadow roots are
flattened in, same-origin and cross-origin frames are read (see "frames"), hidden elements,
scripts and styles are left out.

Prints {title, url, text, reader {title, byline, excerpt, text, markdown, length},
markdown, links [{text, href, sameSite}], headings [{level, text}], frames [{id, frameId,
url, origin, name, read, error}], warnings, readiness {ms, timedOut, loaded, quietMs, basis,
conditions}, tab {id, alias}, status, timing}. --include keeps only the named fields
(title, url, warnings, readiness, tab and timing are always there) and computes nothing
else; --max-chars cuts text, markdown and reader text with a "…[truncated N chars]" marker.

Examples:
  dtb extract http://127.0.0.1:8080/docs -r --jq .reader.markdown
  dtb extract --include links --jq '.links[] | select(.sameSite | not) | .href'
  dtb extract https://example.com --wait-css '#results li' --include text --max-chars 4000`,
		Flags: pageFlags(append([]cli.Flag{
			&cli.BoolFlag{Name: "current", Usage: "with a URL: navigate the current tab instead of opening a new one"},
			&cli.BoolFlag{Name: "incognito", Usage: "with a URL: open it in an incognito window/context"},
			&cli.StringFlag{Name: "wait-css", Usage: "wait until `SELECTOR` matches a rendered element", Category: catReadFlags},
			&cli.StringFlag{Name: "wait-text", Usage: "wait until the page's visible text contains `TEXT`", Category: catReadFlags},
			&cli.StringFlag{Name: "wait-url", Usage: "wait until the page's URL contains `PART`", Category: catReadFlags},
			&cli.StringFlag{Name: "include", Usage: "comma-separated `FIELDS` to compute: text, reader, markdown, links, headings, frames (default: all)", EnvVars: []string{"DTB_INCLUDE"}, Category: catReadFlags},
			&cli.IntFlag{Name: "max-chars", Usage: "cut text, markdown and reader text at `N` characters (0: no limit)", EnvVars: []string{"DTB_MAX_CHARS"}, Category: catReadFlags},
			&cli.DurationFlag{Name: "timeout", Value: 60 * time.Second, Usage: "deadline of the whole command (exit 4 when reached)", EnvVars: []string{"DTB_TIMEOUT"}, Category: catBrowserFlags},
		}, readyFlags()...)...),
		Action: action(runExtract),
	})
}

func runExtract(c *cli.Context, inv *invocation) (any, error) {
	if c.NArg() > 1 {
		return nil, output.Usage("extract takes at most one URL, got %d arguments", c.NArg())
	}
	include, err := read.ParseInclude(c.String("include"))
	if err != nil {
		return nil, err
	}
	if n := c.Int("max-chars"); n < 0 {
		return nil, output.Usage("--max-chars must be 0 or more, not %d", n)
	}
	ready, err := readyOptions(c)
	if err != nil {
		return nil, err
	}
	url := c.Args().First()
	if url == "" && c.IsSet("incognito") {
		return nil, output.Usage("--incognito opens a URL in a new window or tab; give a URL")
	}
	answer, err := cdp.ParseDialogAnswer(c.String("dialog"))
	if err != nil {
		return nil, err
	}
	t := read.TabOptions{Tab: tabSelector(c), Dialog: answer}
	if url != "" {
		t.Open = session.OpenOptions{URL: url, Current: c.Bool("current"), Tab: c.String("tab"), Workspace: c.String("workspace")}
		if c.IsSet("incognito") {
			v := c.Bool("incognito")
			t.Open.Incognito = &v
		}
	}
	opts := read.Options{Ready: ready, Include: include, MaxChars: c.Int("max-chars")}
	sess, ctx, done, err := browserSession(c, inv)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := read.ReadTab(ctx, sess, t, opts, inv.printer.Warn)
	return res, timeoutOr(ctx, err)
}
