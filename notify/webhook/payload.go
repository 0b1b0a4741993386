package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/probity-dev/probity/store"
)

// EventEntryChanged is the type of every delivery: a followed entry changed.
const EventEntryChanged = "entry.changed"

// Payload is a delivery's body (see the package documentation for its JSON). It holds
// nothing a server wrote: no entry name, description or tool text; the change summary
// is Probity's own one-line count ("2 tools added, 1 removed").
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
				Number: c.Number, Kind: c.Kind, Summary: oneLine(c.Summary), RecordedAt: at,
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

// oneLine keeps a summary to one line of at most 200 bytes (the store's bound).
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200]
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
			s = s[:len(s)-1]
		}
		if len(s) > 0 && s[len(s)-1] >= 0xC0 {
			s = s[:len(s)-1]
		}
	}
	return s
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
