package commands

import (
	"net/url"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/extract"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/read"
	"github.com/dtb-cli/dtb/internal/session"
)

const defaultEngine = extract.EngineDuckDuckGo

func init() {
	names := extract.EngineNames()
	register(&cli.Command{
		Name:     "search",
		Category: catBrowser,
		Usage:    "search the web in the session's search workspace and print classified hits",
		UsageText: `dtb search QUERY… [--engine NAME|URL-with-%s] [--workspace NAME] [--incognito=false] [--limit N]

Opens the results page in a new tab of the search workspace's window ("search" unless
--workspace says otherwise; incognito unless --incognito=false), waits until it is ready
like 'dtb extract', and reads the hits: {rank, title, url, snippet, kind} with kind
organic, ad, news, video or other, in page order. The engine is a built-in name (` + names + `;
default ` + defaultEngine + `, DuckDuckGo's HTML version) or a results-page URL template with %s
where the query goes. A template's parser is chosen by its host (or --parser NAME). A page
the parser cannot read (another layout, a captcha, a consent wall) is
"unsupported-results-page" (exit 1), never an empty list; a page that says it found
nothing gives "hits": [].

Examples:
  dtb search golang html parser -r --jq '.hits[] | select(.kind == "organic") | .url'
  dtb search --engine bing 'chromium devtools protocol' --limit 5
  DTB_SEARCH_ENGINE='http://127.0.0.1:8080/ddg?q=%s' dtb search test --incognito=false`,
		Flags: withBrowserFlags(append([]cli.Flag{
			&cli.StringFlag{Name: "engine", Aliases: []string{"e"}, Value: defaultEngine, Usage: "search engine: " + names + ", or a results-page `URL` template with %s for the query", EnvVars: []string{"DTB_SEARCH_ENGINE"}},
			&cli.StringFlag{Name: "parser", Usage: "results-page parser `NAME` for an --engine URL template (default: by its host, then by the page)", EnvVars: []string{"DTB_SEARCH_PARSER"}},
			&cli.BoolFlag{Name: "incognito", Value: true, Usage: "search in an incognito window (--incognito=false: the workspace's normal window)", EnvVars: []string{"DTB_SEARCH_INCOGNITO"}},
			&cli.BoolFlag{Name: "current", Usage: "load the results in the current tab instead of the search workspace"},
			&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: "print at most `N` hits (0: all)", EnvVars: []string{"DTB_SEARCH_LIMIT"}},
			&cli.DurationFlag{Name: "timeout", Value: 60 * time.Second, Usage: "deadline of the whole command (exit 4 when reached)", EnvVars: []string{"DTB_TIMEOUT"}, Category: catBrowserFlags},
		}, readyFlags()...)...),
		Action: action(runSearch),
	})
}

// searchEngine resolves --engine: a built-in name, or a URL template with one
// %s. The parser is the built-in's, --parser, or the template's host's ("" to
// detect it from the page).
func searchEngine(c *cli.Context) (name, template, parser string, err error) {
	raw := strings.TrimSpace(c.String("engine"))
	if raw == "" {
		raw = defaultEngine
	}
	parser = strings.TrimSpace(c.String("parser"))
	if parser != "" {
		e, ok := extract.EngineByName(parser)
		if !ok {
			return "", "", "", output.Usage("--parser: no results-page parser %q (known: %s)", parser, extract.EngineNames())
		}
		parser = e.Name
	}
	if !strings.Contains(raw, "%s") {
		e, ok := extract.EngineByName(raw)
		if !ok {
			return "", "", "", output.Usage("--engine: unknown engine %q: use one of %s, or a URL template with %%s for the query", raw, extract.EngineNames())
		}
		if parser == "" {
			parser = e.Name
		}
		return e.Name, e.Template, parser, nil
	}
	if strings.Count(raw, "%s") != 1 {
		return "", "", "", output.Usage("--engine: the URL template needs exactly one %%s, got %q", raw)
	}
	u, perr := url.Parse(strings.Replace(raw, "%s", "q", 1))
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", "", output.Usage("--engine: %q is neither a known engine nor an http(s) URL template with %%s", raw)
	}
	if parser == "" {
		if e, ok := extract.EngineFor(u.String()); ok {
			parser = e.Name
		}
	}
	name = parser
	if name == "" {
		name = u.Host
	}
	return name, raw, parser, nil
}

func runSearch(c *cli.Context, inv *invocation) (any, error) {
	query := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
	if query == "" {
		return nil, output.Usage("search wants a query")
	}
	name, template, parser, err := searchEngine(c)
	if err != nil {
		return nil, err
	}
	ready, err := readyOptions(c)
	if err != nil {
		return nil, err
	}
	if n := c.Int("limit"); n < 0 {
		return nil, output.Usage("--limit must be 0 or more, not %d", n)
	}
	o := read.SearchOptions{Query: query, Engine: name, Parser: parser, Limit: c.Int("limit"), Ready: ready}
	o.Open = session.OpenOptions{URL: extract.Engine{Name: name, Template: template}.URL(query), Wait: cdp.WaitNone, Prepare: read.AddTracker}
	switch {
	case c.Bool("current") || c.String("tab") != "":
		o.Open.Current, o.Open.Tab, o.Open.Workspace = c.Bool("current"), c.String("tab"), c.String("workspace")
		if c.IsSet("incognito") {
			return nil, output.Usage("--incognito opens a new window; it does not combine with --current or --tab")
		}
	default:
		o.Open.Workspace = "search"
		if c.IsSet("workspace") && c.String("workspace") != "" {
			o.Open.Workspace = c.String("workspace")
		}
		inc := c.Bool("incognito")
		o.Open.Incognito = &inc
	}
	sess, ctx, done, err := browserSession(c, inv)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := read.Search(ctx, sess, o, inv.printer.Warn)
	return res, timeoutOr(ctx, err)
}
