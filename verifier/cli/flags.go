package cli

import (
	"flag"
	"strings"
)

// ParseFlags parses args into fs with flags allowed anywhere among the positional
// arguments, as in "probity history show SLUG 3 --data-dir D" or "probity verify
// envelope.json --keys keys.json"; the positional arguments, in their order, are then
// fs.Args(). The standard flag package stops at the first positional argument; this
// moves every flag in front of them and parses once, so errors (an unknown flag, a bad
// value, -h) are the flag package's own.
//
// A flag's value is the next argument unless the flag is written -name=value or is a
// boolean flag (which takes no separate value): "--reason hide" gives --reason the value
// "hide", and "--json show" leaves "show" a positional argument. "--" ends the flags:
// everything after it is positional, dashes included. A lone "-" (standard input) is
// positional. It is the one flag parser of every probity and probity-verify command.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(a[1:], "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
			if i+1 == len(args) {
				return fs.Parse(flags) // "flag needs an argument", not "--" as its value
			}
			i++
			flags = append(flags, args[i])
		}
	}
	return fs.Parse(append(append(flags, "--"), positional...))
}

// isBoolFlag reports whether f takes no separate value, as the flag package decides it.
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
