package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/probity-dev/probity/accounts"
	"github.com/probity-dev/probity/operators"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
)

const operatorsUsage = `Usage:

	probity operators add EMAIL
	probity operators remove EMAIL
	probity operators list

Grants, takes back and lists the operator role (issue 18). An operator signs in to the
site like anyone and finds the console at /ops: the dispute and report queues, hiding
and unhiding changes, deleting entries, reviewing claims, and the audit log.

add gives the role to the account with the e-mail address EMAIL; the account must
exist, so the person signs in once first (with an e-mail code, or with GitHub after
adding the address to the account). remove takes the role back; deleting the account
takes it too. list prints every operator: account id, address, GitHub login, since
when (UTC). Each add and remove is recorded in the operators' audit log, by "cli".

` + envHelp

func runOperators(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity operators", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, operatorsUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, operatorsUsage)
		return 2
	}
	operands := fs.Args()
	if len(operands) == 0 {
		fmt.Fprintf(stderr, "error: operators wants add, remove or list\nhint: probity operators add EMAIL\n")
		return 2
	}
	sub, operands := operands[0], operands[1:]
	switch {
	case sub != "add" && sub != "remove" && sub != "list":
		fmt.Fprintf(stderr, "error: unknown subcommand %q\nhint: probity operators add EMAIL, remove EMAIL or list\n", sub)
		return 2
	case sub == "list" && len(operands) != 0:
		fmt.Fprintf(stderr, "error: operators list takes no arguments\nhint: probity operators list\n")
		return 2
	case sub != "list" && len(operands) != 1:
		fmt.Fprintf(stderr, "error: operators %s wants one EMAIL\nhint: probity operators %s person@example.org\n", sub, sub)
		return 2
	}
	ctx := context.Background()
	st, _, err := ef.openStore(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	svc, err := operators.New(operators.Config{Store: st})
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	switch sub {
	case "list":
		ops, err := svc.List(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "error: couldn't list the operators: %v\n", err)
			return 2
		}
		if len(ops) == 0 {
			fmt.Fprintln(stdout, "no operators\nhint: probity operators add EMAIL")
			return 0
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACCOUNT\tE-MAIL\tGITHUB\tSINCE (UTC)")
		for _, o := range ops {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", o.AccountID, dash(o.Email), dash(o.GitHubLogin), o.GrantedAt.UTC().Format("2006-01-02 15:04:05"))
		}
		tw.Flush()
		return 0
	case "add":
		acc, added, err := svc.Grant(ctx, operators.CLI, operands[0])
		if code := printOperatorError(stderr, operands[0], err); code != 0 {
			return code
		}
		if !added {
			fmt.Fprintf(stdout, "account %d (%s) is an operator already\n", acc.ID, acc.Email)
			return 0
		}
		fmt.Fprintf(stdout, "account %d (%s) is an operator now: the console is at /ops\n", acc.ID, acc.Email)
		return 0
	default: // remove
		acc, removed, err := svc.Revoke(ctx, operators.CLI, operands[0])
		if code := printOperatorError(stderr, operands[0], err); code != 0 {
			return code
		}
		if !removed {
			fmt.Fprintf(stdout, "account %d (%s) was not an operator\n", acc.ID, acc.Email)
			return 0
		}
		fmt.Fprintf(stdout, "account %d (%s) is no longer an operator\n", acc.ID, acc.Email)
		return 0
	}
}

// printOperatorError prints why the role of email could not change and returns the
// exit code (0 for no error).
func printOperatorError(w io.Writer, email string, err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, accounts.ErrInvalidEmail):
		fmt.Fprintf(w, "error: %q is not an e-mail address this site accepts\n", email)
		return 2
	case errors.Is(err, operators.ErrNoAccount):
		fmt.Fprintf(w, "error: no account has the address %q\nhint: the person signs in to the site once (with an e-mail code), then run this again\n", email)
		return 1
	case errors.Is(err, store.ErrNotFound):
		fmt.Fprintf(w, "error: the account of %q is gone\n", email)
		return 1
	}
	fmt.Fprintf(w, "error: couldn't change the operator role of %q: %v\n", email, err)
	return 2
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// addOperators gives the write paths the operator role and console (web.Config's
// Operators and Console): a revoked claim that was an entry's last moves its cadence
// round by schedule, as a lapsed one does.
func (w *writePaths) addOperators(st store.Store, schedule rounds.Schedule, logger *slog.Logger) error {
	var err error
	w.operators, err = operators.New(operators.Config{Store: st, Schedule: schedule, Logger: logger})
	return err
}
