package commands

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/relay"
	"github.com/dtb-cli/dtb/internal/relayclient"
	"github.com/dtb-cli/dtb/internal/toolbar"
)

const catToolbarFlags = "Toolbar"

// toolbarFlags choose the toolbar transport and which page or instance to talk to.
func toolbarFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "relay", Usage: "relay `URL` (the dev server or `dtb relay`)", Value: relayclient.DefaultBase, EnvVars: []string{"DTB_RELAY"}, Category: catToolbarFlags},
		&cli.StringFlag{Name: "via", Usage: "toolbar transport: relay or cdp (default: relay when --relay/DTB_RELAY or --reporter is set, else cdp when a browser session is reachable, else relay)", EnvVars: []string{"DTB_VIA"}, Category: catToolbarFlags},
		&cli.StringFlag{Name: "reporter", Usage: "target one page by its reporter `ID` (relay only; see connection.reporterId)", EnvVars: []string{"DTB_REPORTER"}, Category: catToolbarFlags},
		&cli.StringFlag{Name: "instance", Usage: "toolbar instance `ID` when a page mounts several (cdp only)", EnvVars: []string{"DTB_INSTANCE"}, Category: catToolbarFlags},
		&cli.StringFlag{Name: "global", Value: toolbar.DefaultGlobal, Usage: "the bridge's global `NAME` (its globalName option; cdp only)", EnvVars: []string{"DTB_GLOBAL"}, Category: catToolbarFlags},
	}
}

// toolbarCommandFlags are the flags of state, commands and run: the command's own,
// the toolbar's, and the browser's (for --via cdp). The command's own --timeout
// wins over the browser group's.
func toolbarCommandFlags(own ...cli.Flag) []cli.Flag {
	return dedupFlags(append(append(own, toolbarFlags()...), browserFlags()...))
}

// toolbarTransport picks the transport as DESIGN.md says: --via wins; a relay URL
// (or a --reporter) given by flag or environment means relay; else cdp when a
// browser session is reachable; else the default relay. The caller defers the returned close (the
// CDP transport keeps its tab connection between calls).
func toolbarTransport(c *cli.Context, inv *invocation, timeout time.Duration) (toolbar.Transport, func(), error) {
	via := c.String("via")
	switch via {
	case "", "relay", "cdp":
	default:
		return nil, nil, output.Usage("--via must be relay or cdp, not %q", via)
	}
	if via == "" {
		via = "relay"
		// --reporter names a page that reports to a relay: it means the relay.
		if !c.IsSet("relay") && !c.IsSet("reporter") && cdpSessionReachable(c) {
			via = "cdp"
		}
	}
	if via == "cdp" {
		t, err := cdpToolbar(c, inv, timeout)
		if err != nil {
			return nil, nil, err
		}
		return t, t.Close, nil
	}
	if c.IsSet("instance") {
		return nil, nil, output.Usage("--instance selects an instance over CDP; the relay serves the instance that reports to it (use --reporter to pick a page)")
	}
	client, err := relayclient.New(c.String("relay"), timeout)
	if err != nil {
		return nil, nil, err
	}
	if !c.IsSet("relay") {
		client.SetDiscovery(relayclient.Discovery{Ports: relayCandidatePorts(inv.getenv), Found: func(from, to string) {
			inv.printer.Warn("relay-found", fmt.Sprintf("no relay at %s; using the one that answers at %s (set --relay or DTB_RELAY to choose)", from, to), map[string]any{"relay": to})
		}})
	}
	return &toolbar.Relay{Client: client, Reporter: c.String("reporter")}, func() {}, nil
}

// testRelayPortsEnv replaces the ports dtb looks for a relay on; for tests only
// (docs/toolbar.md), so that a test does not depend on what else listens on the
// machine's usual ports.
const testRelayPortsEnv = "DTB_TEST_RELAY_PORTS"

// relayCandidatePorts are where dtb looks for a relay when none was named and the
// default does not answer: the usual dev-server ports and dtb relay's own default.
// getenv is the command's environment (in the session host, the CLI's).
func relayCandidatePorts(getenv func(string) string) []int {
	if v := getenv(testRelayPortsEnv); v != "" {
		var ports []int
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			if p, err := strconv.Atoi(f); err == nil {
				ports = append(ports, p)
			}
		}
		return ports
	}
	ports := append([]int(nil), relayclient.CommonPorts...)
	if _, p, err := net.SplitHostPort(relay.DefaultListen); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			ports = append(ports, n)
		}
	}
	return ports
}
