package commands

import (
	"github.com/urfave/cli/v2"
)

// urfave/cli's Names() runs a regexp per name, its parse asks for every flag's
// names once per other flag (runFlagActions → IsSet → lookupFlag), and its
// Setup renders the help line of every flag of a command whose flags have
// categories: for a browser command's ~30 flags that was most of urfave's time
// in the session host (540 → 160 µs a click's parse, warm). In a run that shows
// no help, the command it invokes gets its flags wrapped, each answering
// Names() from its name and aliases (dtb's names hold no comma or space,
// which is all urfave's regexp strips: TestFlagNamesAreNameAndAliases) and
// no category; every other method is the flag's own.

type namedBool struct {
	*cli.BoolFlag
	names []string
}
type namedString struct {
	*cli.StringFlag
	names []string
}
type namedDuration struct {
	*cli.DurationFlag
	names []string
}
type namedInt struct {
	*cli.IntFlag
	names []string
}
type namedFloat64 struct {
	*cli.Float64Flag
	names []string
}
type namedStringSlice struct {
	*cli.StringSliceFlag
	names []string
}

func (f *namedBool) Names() []string        { return f.names }
func (f *namedString) Names() []string      { return f.names }
func (f *namedDuration) Names() []string    { return f.names }
func (f *namedInt) Names() []string         { return f.names }
func (f *namedFloat64) Names() []string     { return f.names }
func (f *namedStringSlice) Names() []string { return f.names }

func (f *namedBool) GetCategory() string        { return "" }
func (f *namedString) GetCategory() string      { return "" }
func (f *namedDuration) GetCategory() string    { return "" }
func (f *namedInt) GetCategory() string         { return "" }
func (f *namedFloat64) GetCategory() string     { return "" }
func (f *namedStringSlice) GetCategory() string { return "" }

func (f *namedBool) unwrapFlag() cli.Flag        { return f.BoolFlag }
func (f *namedString) unwrapFlag() cli.Flag      { return f.StringFlag }
func (f *namedDuration) unwrapFlag() cli.Flag    { return f.DurationFlag }
func (f *namedInt) unwrapFlag() cli.Flag         { return f.IntFlag }
func (f *namedFloat64) unwrapFlag() cli.Flag     { return f.Float64Flag }
func (f *namedStringSlice) unwrapFlag() cli.Flag { return f.StringSliceFlag }

// baseFlag is f without the names wrapper.
func baseFlag(f cli.Flag) cli.Flag {
	if w, ok := f.(interface{ unwrapFlag() cli.Flag }); ok {
		return w.unwrapFlag()
	}
	return f
}

// withNamesOnce wraps the flags of c and its subcommands: c must be a copy
// of the registered command (the host runs several command lines at once), in
// a run that renders no help or completion (urfave renders those from the
// concrete types and their categories).
func withNamesOnce(c *cli.Command) {
	for i, f := range c.Flags {
		switch f := f.(type) {
		case *cli.BoolFlag:
			c.Flags[i] = &namedBool{f, flagNames(f.Name, f.Aliases)}
		case *cli.StringFlag:
			c.Flags[i] = &namedString{f, flagNames(f.Name, f.Aliases)}
		case *cli.DurationFlag:
			c.Flags[i] = &namedDuration{f, flagNames(f.Name, f.Aliases)}
		case *cli.IntFlag:
			c.Flags[i] = &namedInt{f, flagNames(f.Name, f.Aliases)}
		case *cli.Float64Flag:
			c.Flags[i] = &namedFloat64{f, flagNames(f.Name, f.Aliases)}
		case *cli.StringSliceFlag:
			c.Flags[i] = &namedStringSlice{f, flagNames(f.Name, f.Aliases)}
		}
	}
	for _, sub := range c.Subcommands {
		withNamesOnce(sub)
	}
}

func flagNames(name string, aliases []string) []string {
	return append([]string{name}, aliases...)
}

// isHelpOrCompletion: an argument that makes urfave render help or completion.
func isHelpOrCompletion(a string) bool {
	switch a {
	case "-h", "--help", "-help", "help", "--generate-bash-completion":
		return true
	}
	return false
}
