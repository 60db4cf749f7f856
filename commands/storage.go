package commands

import (
	"context"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/pagedata"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "storage",
		Category: catBrowser,
		Usage:    "list, read, set, remove or clear the tab's localStorage or sessionStorage",
		UsageText: `dtb storage AREA [OP [KEY [VALUE]]]

AREA is local or session. OP is list (the default: every key and value), get KEY,
set KEY VALUE (--stdin reads VALUE from stdin), remove KEY or clear. The storage is
the current document's, of its origin. Values appear only on stdout: errors name
keys, never values. A missing key is no-such-key (exit 3); a document that may not
use storage (an opaque origin, a sandboxed frame) is storage-unavailable, a value
over the quota storage-failed (exit 1).

Examples:
  dtb storage local
  dtb storage local get token -r --jq .value
  dtb storage session set onboarding.done true
  printf %s "$TOKEN" | dtb storage local set token --stdin
  dtb storage local remove cart --jq .removed
  dtb storage session clear --jq .count`,
		Flags: pageFlags(
			&cli.BoolFlag{Name: "stdin", Usage: "set: read VALUE from stdin (keeps it out of the process list)"},
		),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			args := positionals(c)
			if len(args) == 0 {
				return nil, output.Usage("storage wants an area: local or session (dtb storage local [get KEY|set KEY VALUE|remove KEY|clear])")
			}
			area := strings.ToLower(args[0])
			if area != "local" && area != "session" {
				return nil, output.Usage("storage area must be local or session, not %q", args[0])
			}
			op, rest := "list", args[1:]
			if len(rest) > 0 {
				op, rest = strings.ToLower(rest[0]), rest[1:]
			}
			var key, value string
			// The arguments each operation takes (set's VALUE may come from stdin).
			want := map[string]int{"list": 0, "get": 1, "set": 2, "remove": 1, "clear": 0}
			n, ok := want[op]
			if !ok {
				return nil, output.Usage("storage operation must be list, get, set, remove or clear, not %q", op)
			}
			stdin := c.Bool("stdin")
			if stdin && op != "set" {
				return nil, output.Usage("--stdin goes with storage set")
			}
			if stdin {
				n = 1
			}
			if len(rest) != n {
				// Never echo the arguments: one of them may be a value.
				return nil, output.Usage("storage %s takes %s, got %d argument(s)", op, map[string]string{"list": "no arguments", "get": "KEY", "set": "KEY VALUE (or KEY with --stdin)", "remove": "KEY", "clear": "no arguments"}[op], len(rest))
			}
			if n > 0 {
				key = rest[0]
			}
			if op == "set" {
				v, err := valueArg(inv, rest, stdin)
				if err != nil {
					return nil, err
				}
				value = v
			}
			return withPage(c, inv, func(ctx context.Context, _ *session.Session, p *cdp.Page) (any, error) {
				return pagedata.Storage(ctx, p, area, op, key, value)
			})
		}),
	})
}

// valueArg is the VALUE of a set: the second argument, or stdin with --stdin
// (one trailing newline dropped, as a shell's echo adds it).
func valueArg(inv *invocation, args []string, stdin bool) (string, error) {
	if !stdin {
		return args[1], nil
	}
	in := inv.io.Stdin
	if in == nil {
		return "", output.Usage("--stdin: no standard input")
	}
	b, err := io.ReadAll(in)
	if err != nil {
		return "", output.Wrap("io-error", err, "cannot read stdin")
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}
