package commands

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/relay"
)

func init() {
	register(&cli.Command{
		Name:     "relay",
		Category: catRelay,
		Usage:    "serve the /__dev-toolbar relay routes (loopback only), alone or in front of a dev server",
		UsageText: `dtb relay [--listen localhost:7357] [--upstream URL | --static DIR] [--stale-ms 3000] [--timeout-ms 10000]

Runs the receiving half of the toolbar's report transport: the page checks in at
POST /__dev-toolbar/state, and dtb state / commands / run talk to the same routes.
--upstream proxies every other path to an existing dev server, so any app gains the
routes on its own origin; --static serves a directory instead. Check-ins are held open
for a moment so a queued command reaches the page at once instead of at its next poll.
Prints {"listening": URL, …} on stdout when ready; logs go to stderr. The default
port, 7357, is no dev server's and is where dtb state / commands / run look first; a
port already taken fails port-in-use. Stops on SIGINT/SIGTERM: hands out nothing more,
gives commands a page has taken a moment to report, and answers every other waiting
command 503 server-closing saying whether it was picked up (pickedUp).

Examples:
  dtb relay --upstream http://127.0.0.1:3000          # app on :3000, open it via :7357
  dtb relay --static ./dist --listen 127.0.0.1:0 -r --jq .listening
  dtb state --until .connection.connected   # the default relay is dtb relay's`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: relay.DefaultListen, Usage: "loopback `ADDR` to listen on (port 0 picks a free one; taken: port-in-use)", EnvVars: []string{"DTB_RELAY_LISTEN"}},
			&cli.StringFlag{Name: "upstream", Usage: "reverse-proxy every other path to the dev server at `URL`", EnvVars: []string{"DTB_RELAY_UPSTREAM"}},
			&cli.StringFlag{Name: "static", Usage: "serve `DIR` for every other path", EnvVars: []string{"DTB_RELAY_STATIC"}},
			&cli.IntFlag{Name: "stale-ms", Value: 3000, Usage: "a check-in counts as a live connection for `MS`", EnvVars: []string{"DTB_RELAY_STALE_MS"}},
			&cli.IntFlag{Name: "timeout-ms", Value: 10000, Usage: "a command waits `MS` for the page (restarting when the page picks it up)", EnvVars: []string{"DTB_RELAY_TIMEOUT_MS"}},
			&cli.IntFlag{Name: "hold-ms", Value: 2000, Usage: "hold an idle check-in open up to `MS` so commands reach the page at once (0: answer at once, like upstream)", EnvVars: []string{"DTB_RELAY_HOLD_MS"}},
			&cli.IntFlag{Name: "refresh-ms", Value: relay.DefaultRefreshMs, Usage: "a state read asks a held page for a fresh snapshot and waits up to `MS` for it (0: answer with the last one, like upstream)", EnvVars: []string{"DTB_RELAY_REFRESH_MS"}},
			&cli.IntFlag{Name: "max-conns", Value: relay.DefaultMaxConns, Usage: "ceiling on open connections; past it a new one is refused (503 too-many-connections)", EnvVars: []string{"DTB_RELAY_MAX_CONNS"}},
			&cli.BoolFlag{Name: "quiet", Usage: "do not log requests to stderr", EnvVars: []string{"DTB_RELAY_QUIET"}},
		},
		Action: action(noArgs(runRelay)),
	})
}

func runRelay(c *cli.Context, inv *invocation) (any, error) {
	if c.String("upstream") != "" && c.String("static") != "" {
		return nil, output.Usage("--upstream and --static exclude each other")
	}
	opts := relay.Options{
		Listen:     c.String("listen"),
		Upstream:   c.String("upstream"),
		Static:     c.String("static"),
		StaleMs:    c.Int("stale-ms"),
		TimeoutMs:  c.Int("timeout-ms"),
		LongPollMs: c.Int("hold-ms"),
		MaxConns:   c.Int("max-conns"),
		RefreshMs:  c.Int("refresh-ms"),
	}
	if !c.Bool("quiet") {
		opts.Logf = inv.printer.Logf
	}
	srv, err := relay.New(opts)
	if err != nil {
		return nil, relayStartError(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		return nil, relayStartError(err)
	}
	ready := map[string]any{
		"listening": fmt.Sprintf("http://%s", addr),
		"routes":    fmt.Sprintf("http://%s/__dev-toolbar/state", addr),
		"upstream":  opts.Upstream,
		"static":    opts.Static,
		"pid":       os.Getpid(),
	}
	// The ready line goes out before serving so a script can read the URL.
	if err := inv.printer.Result(c.Context, ready); err != nil {
		return nil, err
	}
	if err := srv.Serve(c.Context); err != nil {
		return nil, output.Wrap("failed", err, "relay stopped")
	}
	// Ctrl-C or SIGTERM is how a server is meant to stop: a clean stop exits 0.
	return nil, nil
}

func relayStartError(err error) error {
	var oe *relay.OptionError
	if errors.As(err, &oe) {
		return &output.Error{Reason: oe.Reason, Message: oe.Message, Cause: err}
	}
	// Anything else is the listen itself failing (permissions, no such address; a taken port is port-in-use, an OptionError).
	return output.Wrap("listen-failed", err, "cannot start the relay")
}
