package commands

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/pagedata"
)

func init() {
	register(&cli.Command{
		Name:     "route",
		Category: catBrowser,
		Usage:    "answer, fail or delay the requests whose URL matches PATTERN, in every tab (session host)",
		UsageText: `dtb route PATTERN [--status N] [--body TEXT|@FILE] [--header 'K: V'] [--delay DURATION] [--abort REASON]
dtb route --list

PATTERN is matched against the whole URL: * is any run of characters, ? one
character, \ escapes (the DevTools protocol's URL patterns): '*/api/items*',
'http://127.0.0.1:*/slow'. A route with --status, --body or --header answers the
request itself (status 200 unless given; the page sees that response); --abort
REASON fails it with a network error (Failed, Aborted, TimedOut,
ConnectionRefused, NameNotResolved, BlockedByClient …); --delay holds it that
long first (alone, the request then goes on to the server). The newest route
that matches a request takes it; a route of the same PATTERN replaces the old.

Routes live in the session host (dtb's normal mode) for the session: they hold
for every tab the host uses, from the tab's next request on, until unroute,
browser stop or the end of the host. The status command lists them with their
hits, and network marks each request a route took ("routed"). Without the host
(DTB_HOST=off, --cdp) routing fails no-host.

Examples:
  dtb route '*/api/items*' --body @items.json --header 'Content-Type: application/json'
  dtb route '*/api/save' --status 500 --body '{"error":"boom"}'
  dtb route '*.png' --abort BlockedByClient
  dtb route '*/api/slow*' --delay 2s
  dtb route --list --jq '.routes[] | "\(.pattern) \(.hits)"' -r`,
		Flags: withBrowserFlags(
			&cli.IntFlag{Name: "status", Usage: "answer with HTTP status `N` (default 200 when a body or header is given)"},
			&cli.StringFlag{Name: "body", Usage: "answer with the body `TEXT`, or the contents of @FILE"},
			&cli.StringSliceFlag{Name: "header", Usage: "answer with the header `'Name: value'` (repeatable)"},
			&cli.DurationFlag{Name: "delay", Usage: "hold the request `DURATION` before answering or letting it go on"},
			&cli.StringFlag{Name: "abort", Usage: "fail the request with the network error `REASON` (Failed, Aborted, ConnectionRefused …)"},
			&cli.BoolFlag{Name: "list", Usage: "list the routes instead of adding one"},
		),
		Action: action(routeCommand),
	})
	register(&cli.Command{
		Name:     "unroute",
		Category: catBrowser,
		Usage:    "remove the route of PATTERN, or every route",
		UsageText: `dtb unroute [PATTERN]

Without PATTERN every route of the session host goes. Prints the routes left
and how many were removed.

Examples:
  dtb unroute '*/api/items*'
  dtb unroute`,
		Flags:  withBrowserFlags(),
		Action: action(unrouteCommand),
	})
}

func routeCommand(c *cli.Context, inv *invocation) (any, error) {
	args := c.Args().Slice()
	if c.Bool("list") {
		if len(args) > 0 || c.IsSet("status") || c.IsSet("body") || c.IsSet("header") || c.IsSet("delay") || c.IsSet("abort") {
			return nil, output.Usage("--list goes alone")
		}
		if pagedata.Routing == nil {
			return nil, pagedata.ErrNoHost()
		}
		return pagedata.Routes{Routes: pagedata.Routing.List()}, nil
	}
	if len(args) != 1 || args[0] == "" {
		return nil, output.Usage("dtb route needs one PATTERN (or --list)")
	}
	r := pagedata.Route{Pattern: args[0], Status: c.Int("status"), DelayMs: c.Duration("delay").Milliseconds()}
	if r.Status != 0 && (r.Status < 100 || r.Status > 999) {
		return nil, output.Usage("--status wants an HTTP status (100–999), not %d", r.Status)
	}
	if c.Duration("delay") < 0 {
		return nil, output.Usage("--delay must not be negative")
	}
	for _, h := range c.StringSlice("header") {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, output.Usage("--header wants 'Name: value', got %q", h)
		}
		if r.Headers == nil {
			r.Headers = map[string]string{}
		}
		r.Headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	if c.IsSet("body") {
		body := c.String("body")
		if file, ok := strings.CutPrefix(body, "@"); ok {
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, output.Wrap("usage", err, "--body @FILE: cannot read "+file)
			}
			r.Body = b
		} else {
			r.Body = []byte(body)
		}
		r.BodyBytes = len(r.Body)
	}
	if c.IsSet("abort") {
		reason, err := pagedata.AbortReason(c.String("abort"))
		if err != nil {
			return nil, err
		}
		if r.Status != 0 || c.IsSet("body") || len(r.Headers) > 0 {
			return nil, output.Usage("--abort fails the request: it takes no --status, --body or --header")
		}
		r.Abort = reason
	}
	if r.Status == 0 && !c.IsSet("body") && len(r.Headers) == 0 && r.Abort == "" && r.DelayMs == 0 {
		return nil, output.Usage("a route needs what to do: --status, --body, --header, --abort or --delay")
	}
	if pagedata.Routing == nil {
		return nil, pagedata.ErrNoHost()
	}
	list, failed := pagedata.Routing.Add(c.Context, r)
	warnUnapplied(inv, failed)
	return pagedata.Routes{Routes: list, Added: &list[0]}, nil
}

// warnUnapplied says when the routes could not be applied to some tabs.
func warnUnapplied(inv *invocation, failed int) {
	if failed > 0 {
		inv.printer.Warn("routes-not-applied", fmt.Sprintf("the routes could not be applied to %d of the tabs the host uses (a tab that does not answer)", failed), map[string]any{"tabs": failed})
	}
}

func unrouteCommand(c *cli.Context, inv *invocation) (any, error) {
	args := c.Args().Slice()
	if len(args) > 1 {
		return nil, output.Usage("dtb unroute takes at most one PATTERN")
	}
	if pagedata.Routing == nil {
		return nil, pagedata.ErrNoHost()
	}
	pattern := ""
	if len(args) == 1 {
		pattern = args[0]
	}
	n, list, failed := pagedata.Routing.Remove(c.Context, pattern)
	warnUnapplied(inv, failed)
	if pattern != "" && n == 0 {
		return nil, output.Errorf("no-match", "no route of pattern %q (dtb route --list shows them)", pattern).With("pattern", pattern)
	}
	return pagedata.Routes{Routes: list, Removed: &n}, nil
}
