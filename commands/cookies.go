package commands

import (
	"time"

	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/pagedata"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	urlsFlag := func() cli.Flag {
		return &cli.StringSliceFlag{Name: "url", Usage: "the cookies the browser would send to `URL` (repeatable; default: the tab's URL)"}
	}
	// get and clear: an optional NAME and the --url list.
	readOrClear := func(clear bool) cli.ActionFunc {
		return action(func(c *cli.Context, inv *invocation) (any, error) {
			if c.NArg() > 1 {
				return nil, output.Usage("cookies %s takes at most one cookie NAME, got %d arguments", c.Command.Name, c.NArg())
			}
			name, urls := c.Args().First(), c.StringSlice("url")
			return withPage(c, inv, func(ctx context.Context, _ *session.Session, p *cdp.Page) (any, error) {
				if clear {
					return pagedata.ClearCookies(ctx, p, urls, name)
				}
				return pagedata.Cookies(ctx, p, urls, name)
			})
		})
	}
	register(&cli.Command{
		Name:     "cookies",
		Category: catBrowser,
		Usage:    "list, set or clear the cookies of the tab's URL",
		UsageText: `dtb cookies [get [NAME] | set NAME VALUE | clear [NAME]] [--url URL]

Without a subcommand, as get: every cookie the browser would send to the tab's URL
(or to each --url), with name, value, domain, path, expires (null for a session
cookie), httpOnly, secure, sameSite and size. A cookie value counts as a secret: it
appears only in the result on stdout, never in an error.

Examples:
  dtb cookies --jq '.cookies[].name'
  dtb cookies get session -r --jq '.cookies[0].value'
  dtb cookies set theme dark --expires 24h --same-site Lax
  dtb cookies clear --url http://127.0.0.1:8080/`,
		Flags: pageFlags(urlsFlag()),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			if c.NArg() > 0 {
				// Not echoed: "dtb cookies NAME VALUE" (set forgotten) holds a value.
				return nil, output.Usage("cookies takes a subcommand: get [NAME], set NAME VALUE or clear [NAME]")
			}
			return withPage(c, inv, func(ctx context.Context, _ *session.Session, p *cdp.Page) (any, error) {
				return pagedata.Cookies(ctx, p, c.StringSlice("url"), "")
			})
		}),
		Subcommands: []*cli.Command{
			{
				Name:  "get",
				Usage: "list the cookies of the tab's URL, or the one named NAME",
				UsageText: `dtb cookies get [NAME] [--url URL]

With NAME only that cookie (no-such-cookie, exit 3, when there is none).

Examples:
  dtb cookies get
  dtb cookies get session --url http://127.0.0.1:8080/api -r --jq '.cookies[0].value'`,
				Flags:  pageFlags(urlsFlag()),
				Action: readOrClear(false),
			},
			{
				Name:  "set",
				Usage: "set a cookie for the tab's URL (or --url) and print it as the browser stored it",
				UsageText: `dtb cookies set NAME VALUE [--url URL] [--domain D] [--path P] [--expires WHEN] [--http-only] [--secure] [--same-site Strict|Lax|None]

A cookie without --expires is a session cookie. --expires takes a duration from
now (24h), an RFC 3339 time or Unix seconds. --stdin reads VALUE from stdin, out of
the process list. The DevTools protocol sets a cookie for any --domain, as a
server could for its own. A cookie the browser refuses (a ; or control character
in the name or value, an invalid domain or path) is cookie-rejected (exit 1),
naming the cookie, never its value.

Examples:
  dtb cookies set theme dark
  dtb cookies set session abc123 --http-only --secure --same-site Strict --url https://app.example.test/
  printf %s "$SESSION" | dtb cookies set session --stdin --expires 1h`,
				Flags: pageFlags(
					&cli.StringFlag{Name: "url", Usage: "the cookie's `URL` (default: the tab's URL)"},
					&cli.StringFlag{Name: "domain", Usage: "cookie `DOMAIN` (.example.test for its subdomains too; default: the URL's host only)"},
					&cli.StringFlag{Name: "path", Usage: "cookie `PATH` (default: the URL's directory)"},
					&cli.StringFlag{Name: "expires", Usage: "expiry `WHEN`: a duration from now (24h), an RFC 3339 time or Unix seconds (default: a session cookie)"},
					&cli.BoolFlag{Name: "http-only", Usage: "hidden from the page's scripts (document.cookie)"},
					&cli.BoolFlag{Name: "secure", Usage: "sent over https only"},
					&cli.StringFlag{Name: "same-site", Usage: "`POLICY`: Strict, Lax or None (None needs --secure)"},
					&cli.BoolFlag{Name: "stdin", Usage: "read VALUE from stdin (keeps it out of the process list)"},
				),
				Action: action(func(c *cli.Context, inv *invocation) (any, error) {
					stdin := c.Bool("stdin")
					want := 2
					if stdin {
						want = 1
					}
					if c.NArg() != want {
						// Never echo the arguments: one may be the value.
						return nil, output.Usage("cookies set takes NAME VALUE (or NAME with --stdin), got %d argument(s)", c.NArg())
					}
					args := positionals(c)
					value, err := valueArg(inv, args, stdin)
					if err != nil {
						return nil, err
					}
					spec := pagedata.CookieSpec{Name: args[0], Value: value, URL: c.String("url"), Domain: c.String("domain"), Path: c.String("path"),
						Expires: c.String("expires"), HTTPOnly: c.Bool("http-only"), Secure: c.Bool("secure")}
					if v := c.String("same-site"); v != "" {
						if spec.SameSite, err = pagedata.ParseSameSite(v); err != nil {
							return nil, err
						}
					}
					if spec.Expires != "" {
						if _, err := pagedata.ParseExpires(spec.Expires, time.Now()); err != nil {
							return nil, err
						}
					}
					return withPage(c, inv, func(ctx context.Context, _ *session.Session, p *cdp.Page) (any, error) {
						return pagedata.SetCookie(ctx, p, spec)
					})
				}),
			},
			{
				Name:  "clear",
				Usage: "delete the cookies of the tab's URL (or --url), or only the one named NAME",
				UsageText: `dtb cookies clear [NAME] [--url URL]

Deletes every cookie the browser would send to the URL, or only NAME
(no-such-cookie, exit 3, when there is none). Prints how many were deleted.

Examples:
  dtb cookies clear --jq .cleared
  dtb cookies clear session`,
				Flags:  pageFlags(urlsFlag()),
				Action: readOrClear(true),
			},
		},
	})
}
