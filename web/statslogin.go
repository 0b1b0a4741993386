package web

import "github.com/probity-dev/probity/history/stats"

// loginTables lays out seed 003's two login tables as Report.Markdown does: the rows,
// labels and shares come from stats (Login.WhereRows and ChallengeRows); a reason key
// in a label is shown as a visible line.
func loginTables(l stats.Login) []statsTable {
	rows := func(rs []stats.TableRow) [][]string {
		out := make([][]string, len(rs))
		for i, r := range rs {
			c := r.Cells()
			out[i] = []string{visibleLine(c[0]), c[1], c[2]}
		}
		return out
	}
	return []statsTable{
		{ID: "login", Title: stats.LoginWhereTitle, Definition: l.LoginNote(), Head: stats.LoginHead, Rows: rows(l.WhereRows())},
		{ID: "login-challenges", Title: stats.LoginChallengesTitle, Definition: stats.LoginChallengesNote, Head: stats.LoginHead, Rows: rows(l.ChallengeRows())},
	}
}
