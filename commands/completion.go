package commands

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/output"
)

func init() {
	register(&cli.Command{
		Name:      "completion",
		Category:  catSetup,
		Usage:     "print a shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		UsageText: `dtb completion bash|zsh|fish

Prints the script as plain text (not JSON). Subcommands and flags are completed by
asking dtb itself (dtb … --generate-bash-completion), so the script never goes stale;
the fish script lists them and is regenerated with each release.

Examples:
  source <(dtb completion bash)                      # in ~/.bashrc
  dtb completion zsh > "${fpath[1]}/_dtb"            # then restart zsh
  dtb completion fish > ~/.config/fish/completions/dtb.fish`,
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			if c.NArg() != 1 {
				return nil, output.Usage("dtb completion needs one shell: bash, zsh or fish")
			}
			switch shell := c.Args().First(); shell {
			case "bash":
				return output.Text(bashCompletion), nil
			case "zsh":
				return output.Text(zshCompletion), nil
			case "fish":
				s, err := c.App.ToFishCompletion()
				if err != nil {
					return nil, output.Wrap("failed", err, "cannot generate the fish completion")
				}
				return output.Text(dedupLines(s)), nil
			default:
				return nil, output.Usage("dtb completion: unknown shell %q; use bash, zsh or fish", shell).With("shell", shell)
			}
		}),
	})
}

// dedupLines drops repeated "complete" lines: urfave lists --help and --version
// once from the app's flags and once more on its own once the app is set up.
func dedupLines(s string) string {
	seen := map[string]bool{}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if strings.HasPrefix(line, "complete ") {
			if seen[line] {
				continue
			}
			seen[line] = true
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// bashCompletion asks dtb for candidates like urfave/cli v2's bash_autocomplete,
// bound to dtb. It works without the bash-completion package and never evals the
// command line being completed.
const bashCompletion = `# bash completion for dtb; load it with: source <(dtb completion bash)

_dtb_bash_autocomplete() {
  local cur words cword opts
  COMPREPLY=()
  if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
    _get_comp_words_by_ref -n "=:" cur words cword
  else
    cur="${COMP_WORDS[COMP_CWORD]}"
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi
  words=("${words[@]:0:$cword}")
  if [[ "$cur" == "-"* ]]; then
    opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}

complete -o bashdefault -o default -o nospace -F _dtb_bash_autocomplete dtb
`

// zshCompletion follows urfave/cli v2's autocomplete/zsh_autocomplete, bound to dtb.
const zshCompletion = `#compdef dtb
# zsh completion for dtb; install with: dtb completion zsh > "${fpath[1]}/_dtb"

_dtb() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}

if [[ "$funcstack[1]" == "_dtb" ]]; then
  _dtb "$@"
else
  compdef _dtb dtb
fi
`
