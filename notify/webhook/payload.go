package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/notify"
	"github.com/probity-dev/probity/store"
)

// EventEntryChanged is the type of every delivery: a followed entry changed.
const EventEntryChanged = "entry.changed"

// Payload is a delivery's body (see the package documentation for its JSON). It holds
// nothing a server wrote: no entry name, description, tool or version text; the change
// summary is Probity's own words ("2 tools added, 1 removed", "version 1.2.0 →
// 1.3.0"), built by Summary.
type Payload struct {
	Type      string      `json:"type"`
	Timestamp string      `json:"timestamp"` // when the change was recorded
	Data      PayloadData `json:"data"`
}

// PayloadData is the payload's data member.
type PayloadData struct {
	Entry  PayloadEntry  `json:"entry"`
	Change PayloadChange `json:"change"`
	Links  PayloadLinks  `json:"links"`
}

// PayloadEntry names the entry by its slug, the one name Probity chose.
type PayloadEntry struct {
	Slug string `json:"slug"`
	URL  string `json:"url"`
}

// PayloadChange is the change: its number in the entry's history, kind, summary and
// time, and its link.
type PayloadChange struct {
	Number     int64  `json:"number"`
	Kind       string `json:"kind"`
	Summary    string `json:"summary"`
	RecordedAt string `json:"recorded_at"`
	URL        string `json:"url"`
}

// PayloadLinks are the pages a receiver may open: the entry's history, the account's
// Followed page, and the key document whose webhook key verifies the delivery.
type PayloadLinks struct {
	History  string `json:"history"`
	Followed string `json:"followed"`
	Keys     string `json:"keys"`
}

// timeLayout is RFC 3339 in UTC with milliseconds, as every Probity timestamp.
const timeLayout = "2006-01-02T15:04:05.000Z"

// NewPayload builds the payload of change c of the entry slug for the site at base (no
// trailing slash).
func NewPayload(base, slug string, c store.ChangeRecord) Payload {
	entry := base + "/s/" + url.PathEscape(slug)
	at := c.RecordedAt.UTC().Format(timeLayout)
	return Payload{
		Type:      EventEntryChanged,
		Timestamp: at,
		Data: PayloadData{
			Entry: PayloadEntry{Slug: slug, URL: entry},
			Change: PayloadChange{
				Number: c.Number, Kind: c.Kind, Summary: Summary(c), RecordedAt: at,
				URL: fmt.Sprintf("%s/history#ch-%d", entry, c.Number),
			},
			Links: PayloadLinks{
				History:  entry + "/history",
				Followed: base + "/followed",
				Keys:     base + "/.well-known/probity-keys.json",
			},
		},
	}
}

// Summary is the payload's words for change c: Probity's own, never a server's text.
//
// A version change is told from its details, never from its stored summary (which
// holds the version text as the server gave it): "version 1.2.0 → 1.3.0" when both
// versions are semantic versions, shown as notify.ShownVersion shows them (the
// e-mails' rule: the three numbers, a common pre-release tag or "(pre-release)", no
// build metadata), "version 1.3.0" when only the new one is, and "version changed"
// otherwise (also when both show alike). A tools change's stored summary (history/diff's Summary: counts and fixed
// words) is checked part by part against the forms Probity writes, a version in it is
// shown by the same rule, and a summary with any other part is "tool list changed". An
// operator edit's summary names a field ("setup notes edited by the operator") or is
// "listing edited by the operator". Any other kind is "changed".
func Summary(c store.ChangeRecord) string {
	switch c.Kind {
	case attest.ChangeVersion:
		var before, after string
		if d, err := history.DecodeChangeDetails(c.Details); err == nil {
			before, after = d.VersionBefore, d.VersionAfter
		}
		return versionWords(before, after)
	case attest.ChangeTools:
		if len(c.Summary) > maxSummary {
			return "tool list changed"
		}
		parts := strings.Split(c.Summary, "; ")
		if len(parts) > maxSummaryParts {
			return "tool list changed"
		}
		for i, p := range parts {
			switch {
			case toolsPart.MatchString(p):
			case strings.HasPrefix(p, "version "):
				v := strings.TrimPrefix(p, "version ")
				before, after, ok := strings.Cut(v, " → ")
				if !ok {
					before, after = "", v
				}
				parts[i] = versionWords(before, after)
			default:
				return "tool list changed"
			}
		}
		return strings.Join(parts, "; ")
	case attest.ChangeOperatorEdit:
		if editPart.MatchString(c.Summary) {
			return c.Summary
		}
		return "listing edited by the operator"
	}
	return "changed"
}

// Bounds of a stored tools summary that Summary reads (the store keeps at most 200
// bytes; diff's Summary has at most four parts).
const (
	maxSummary      = 400
	maxSummaryParts = 8
)

// toolsPart is a part of history/diff's Summary other than the version, or history's
// "tool list changed"; editPart an operator edit's summary (history's RecordOperatorEdit:
// a field name of lower-case words).
var (
	toolsPart = regexp.MustCompile(`^(?:` +
		`(?:1 tool|[1-9][0-9]{0,5} tools) (?:added|removed|added, [1-9][0-9]{0,5} removed)` +
		`|(?:1 tool|[1-9][0-9]{0,5} tools) changed: ` + toolWord + `(?:, ` + toolWord + `){0,7}` +
		`|instructions (?:added|removed|changed)` +
		`|tool list changed` +
		`)$`)
	editPart = regexp.MustCompile(`^[a-z]{1,32}(?: [a-z]{1,32}){0,3} edited by the operator$`)
)

// toolWord is what history/diff's Summary says changed in tools.
const toolWord = `(?:title|description|parameters|parameter descriptions|input schema|output schema|hints|invisible characters)`

// versionWords says how the version changed, in Probity's words (Summary).
func versionWords(before, after string) string {
	b, a := notify.ShownVersion(before), notify.ShownVersion(after)
	switch {
	case a == "" || a == b:
		return "version changed"
	case b == "":
		return "version " + a
	}
	return "version " + b + " → " + a
}

// Marshal encodes p compactly, with <, > and & escaped: the exact body sent.
func (p Payload) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// messageID is the webhook-id of the delivery of change number of entry to webhook:
// the same on every attempt, different for every webhook, change and entry.
func messageID(webhookID, entryID, number int64) string {
	return fmt.Sprintf("msg_%d_%d_%d", webhookID, entryID, number)
}

// PayloadSlug is the entry slug of a stored payload ("" when it has none): the
// delivery log names the entry even after it was deleted.
func PayloadSlug(payload []byte) string {
	var p Payload
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	return p.Data.Entry.Slug
}
