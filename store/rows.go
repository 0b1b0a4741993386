package store

import (
	"encoding/json"
	"fmt"
)

// This file holds what both backends share in writing and reading rows beyond the input
// rules of validate.go: how a change's nullable columns and badges are stored, and the
// pages of the walks.

// walkPage is how many rows WalkRounds and WalkUptime read per query. Each page is a
// query of its own, so no connection, transaction or snapshot is held while the
// caller's function runs; a page of round summaries is a few MB.
const walkPage = 5000

// walkPages calls fn for every row of the pages read returns, in order, until a page
// has fewer than walkPage rows or fn fails. read appends to buf the page after the row
// last (nil for the first page); the pages share one buffer, so fn gets each row by value.
func walkPages[T any](read func(buf []T, last *T) ([]T, error), fn func(T) error) error {
	buf := make([]T, 0, walkPage)
	var last *T
	for {
		page, err := read(buf[:0], last)
		if err != nil {
			return err
		}
		for _, row := range page {
			if err := fn(row); err != nil {
				return err
			}
		}
		if len(page) < walkPage {
			return nil
		}
		after := page[len(page)-1]
		last, buf = &after, page
	}
}

// entryDay is a row of uptime_days: one entry's uptime on one day.
type entryDay struct {
	EntryID int64
	Day     UptimeDay
}

// days drops the entry ids of one entry's days.
func days(ds []entryDay) []UptimeDay {
	var out []UptimeDay
	for _, d := range ds {
		out = append(out, d.Day)
	}
	return out
}

// changeRow is a checked change with its badges column and its payload digest ("" when
// unsigned).
type changeRow struct {
	*ChangeRecord
	badges string
	digest string
}

// newChangeRows encodes the badges of checked changes and computes their payload
// digests.
func newChangeRows(cs []ChangeRecord) ([]changeRow, error) {
	rows := make([]changeRow, len(cs))
	for i := range cs {
		b, err := encodeBadges(cs[i].Badges)
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", cs[i].Number, err)
		}
		d, err := signedDigest(cs[i].Envelope, cs[i].KeyID, cs[i].PayloadDigest, maxChangeEnvelope)
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", cs[i].Number, err)
		}
		rows[i] = changeRow{&cs[i], b, d}
	}
	return rows, nil
}

// encodeBadges is the badges column: a JSON array, never null.
func encodeBadges(badges []string) (string, error) {
	if len(badges) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(badges)
	return string(b), err
}

// decodeBadges reads the badges column; an empty array is nil.
func decodeBadges(s string) ([]string, error) {
	var badges []string
	if err := json.Unmarshal([]byte(s), &badges); err != nil {
		return nil, fmt.Errorf("badges %q: %w", s, err)
	}
	if len(badges) == 0 {
		return nil, nil
	}
	return badges, nil
}

// nullID is a round id as stored: NULL for 0.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// supplyState is a supply run without its documents (Facts, Verdict and Envelope nil),
// and whether it is signed: what EntryDigest reads of the newest run.
type supplyState struct {
	run    SupplyRecord
	signed bool
}
