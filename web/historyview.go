package web

import "strconv"

// The history tab (issue 16): what the top of the history says, how a change is
// named, and the changed words of its texts marked.

// caseLabels name each of seed 000's cases in a few words, before its caseTexts.
var caseLabels = map[string]string{
	caseRemote:     "Remote server, tools listed without a login",
	caseLogin:      "Remote server behind a login: no tool list",
	caseManifest:   "Tools from an MCP bundle manifest",
	casePackage:    "Package: its version only",
	caseRepository: "Repository without a bundle manifest: no tool list",
	caseUnread:     "Remote server, tools not read yet",
}

// baselineLabel names an entry's first read, where observation began: a baseline is
// not a change (seed 000: "nichts davor zählt als Änderung"), as the directory's last
// change (store.Entry.LastChangeAt) leaves it out.
const baselineLabel = "First read (baseline)"

// changeLabel names change number n on pages: "Change N", or baselineLabel.
func changeLabel(n int64, baseline bool) string {
	if baseline {
		return baselineLabel
	}
	return "Change " + strconv.FormatInt(n, 10)
}

// markDetails marks the changed words of the texts of d that changed (tool
// descriptions, the server's instructions, an operator's edit) for the page, the
// diffs' steps taken from *cells (a page's historyDiffCells); call it after
// fitDetails, so only the texts shown are compared.
func markDetails(d *detailView, cells *int) {
	for i := range d.Changed {
		if t := &d.Changed[i]; t.DescriptionChanged {
			t.DescriptionMarks = markWords("Description", t.DescriptionBefore, t.DescriptionAfter, cells)
		}
	}
	if d.InstructionsChanged {
		d.InstructionsMarks = markWords("Instructions", d.InstructionsBefore, d.InstructionsAfter, cells)
	}
	if d.EditHasText {
		d.EditMarks = markWords("Text", d.EditBefore, d.EditAfter, cells)
	}
}
