package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/pagedata"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "network",
		Category: catBrowser,
		Usage:    "list the requests the tab's page made, including those from before dtb attached",
		UsageText: `dtb network [--failed] [--filter PATTERN] [--fail-on-failed] [--watch DURATION] [--reload [--hard]]
dtb network --body ID

Each request has url, method, status, type, size, transferSize, durationMs, time,
failed and failure (net::ERR_… or "HTTP 404 (Not Found)"), and "source": timing
(the page's resource timing entries: status, sizes and duration, but no method
for fetch/XHR), log (a failed load only Chrome's log names) or live (seen while
watching). The requests of the current document count, from before this command
ran; see docs/ci.md for the limits (the 250-entry timing buffer, methods,
requests of earlier documents). A cross-origin request whose outcome the browser
hides from those records (a no-cors image or script answered 404) is listed
with "hidden": true and counted in "hidden": it is not known to have failed;
--reload records its real status.

Through the session host (dtb's normal mode) a tab is recorded from the first
command that used it: the list is that record ("source": "host", from
"recordedSince", across documents, up to 5,000 requests) joined with what the
current document loaded before it (resource timing), each recorded one with an "id",
method, status, type, requestHeaders and responseHeaders (cookie and
authorization values redacted), mimeType, initiator, redirects, sizes and timing.
--body ID prints that request's response body (text, or base64 when binary;
at most 4 MiB, "truncated" beyond). --har FILE also writes the list as HAR 1.2
(mode 0600; headers as listed, secrets redacted), for a HAR viewer or a diff.

--failed lists only 4xx, 5xx and network errors; --filter keeps URLs containing
PATTERN (or matching /REGEXP/); --fail-on-failed fails network-failures (exit 1,
nothing on stdout) when a listed request failed. --watch records new requests
live for that long; --reload reloads the tab (--hard: bypassing the cache) and
lists what the new document loads, recorded live with methods and statuses.

Examples:
  dtb open http://127.0.0.1:8080 && dtb network --fail-on-failed
  dtb network --failed --jq '.requests[] | "\(.status) \(.url)"' -r
  dtb network --filter /api/ --jq '[.requests[] | {url, status, durationMs}]'
  dtb network --reload --hard --filter '/\.js$/'
  dtb network --filter /api/ --jq '.requests[] | select(.method == "POST") | .id' -r
  dtb network --body 1234.56 --jq .body -r`,
		Flags: pageFlags(
			&cli.BoolFlag{Name: "failed", Usage: "list only failed requests (4xx, 5xx, network errors)"},
			&cli.StringFlag{Name: "filter", Usage: "list only URLs containing `PATTERN`, or matching /REGEXP/"},
			&cli.BoolFlag{Name: "fail-on-failed", Usage: "fail network-failures (exit 1) when a listed request failed"},
			&cli.DurationFlag{Name: "watch", Usage: "record new requests live this `LONG`"},
			&cli.BoolFlag{Name: "reload", Usage: "reload the tab and record what it loads (the tab must be dtb's)"},
			&cli.BoolFlag{Name: "hard", Usage: "with --reload, bypass the cache"},
			&cli.StringFlag{Name: "body", Usage: "print the response body of the recorded request `ID` (session host only)"},
			&cli.StringFlag{Name: "har", Usage: "also write the list as HAR 1.2 to `FILE` (mode 0600)"},
		),
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			o := pagedata.NetworkOptions{Failed: c.Bool("failed"), Filter: c.String("filter"), Wait: c.Duration("watch"), Reload: c.Bool("reload"), Hard: c.Bool("hard")}
			if o.Hard && !o.Reload {
				return nil, output.Usage("--hard goes with --reload")
			}
			if err := pagedata.CheckFilter(o.Filter); err != nil {
				return nil, err
			}
			if o.Wait < 0 {
				return nil, output.Usage("--watch must not be negative")
			}
			if id := c.String("body"); id != "" {
				if o.Failed || o.Filter != "" || o.Wait > 0 || o.Reload || c.Bool("fail-on-failed") {
					return nil, output.Usage("--body goes alone")
				}
				return withPage(c, inv, func(ctx context.Context, _ *session.Session, p *cdp.Page) (any, error) {
					return pagedata.ReadBody(ctx, p, id)
				})
			}
			return withPage(c, inv, func(ctx context.Context, sess *session.Session, p *cdp.Page) (any, error) {
				if o.Reload && !p.Owned {
					return nil, cdp.NotOwned(p)
				}
				res, err := pagedata.ReadNetwork(ctx, p, o)
				if err != nil {
					return nil, err
				}
				if c.IsSet("har") {
					data, err := pagedata.HAR(res.Requests, versionString())
					if err != nil {
						return nil, output.Wrap("io-error", err, "encoding the HAR")
					}
					path, err := session.WriteHAR(data, c.String("har"), sess.Name())
					if err != nil {
						return nil, err
					}
					res.HAR = &pagedata.HARFile{Path: path, Entries: len(res.Requests)}
				}
				if c.Bool("fail-on-failed") {
					if err := res.FailOnFailed(); err != nil {
						return nil, err
					}
				}
				return res, nil
			})
		})),
	})
}
