package store

import (
	"context"
	"fmt"
)

// supplyColumns are the columns scanSupply reads, of supply_runs r joined with
// supplyLedger.
const supplyColumns = `r.id, r.entry_id, r.ran_at, r.score, r.verified, r.latest_version, r.facts,
	r.verdict, l.envelope, l.key_id, l.payload_digest`

// supplyLedger joins a supply run r with its ledger record l (NULL when unsigned).
const supplyLedger = ` LEFT JOIN ledger l ON l.seq = r.ledger_seq`

// scanSupply scans the supplyColumns of supply_runs r joined with supplyLedger.
func scanSupply(row rowScanner) (SupplyRecord, error) {
	var (
		r             SupplyRecord
		keyID, digest *string
	)
	err := row.Scan(&r.ID, &r.EntryID, timeCol(&r.RanAt), &r.Score, &r.Verified, &r.LatestVersion, &r.Facts,
		&r.Verdict, &r.Envelope, &keyID, &digest)
	if err != nil {
		return SupplyRecord{}, err
	}
	if keyID != nil && digest != nil {
		r.KeyID, r.PayloadDigest = *keyID, *digest
	}
	return r, nil
}

func (s *sqlStore) SupplyRuns(ctx context.Context, entryID int64, limit int) ([]SupplyRecord, error) {
	rs, err := queryAll(ctx, s.read, scanSupply, `
		SELECT `+supplyColumns+` FROM supply_runs r`+supplyLedger+`
		WHERE r.entry_id = ?
		ORDER BY r.ran_at DESC, r.id DESC
		LIMIT ?`, entryID, s.d.limit(limit))
	if err != nil {
		return nil, fmt.Errorf("couldn't list the supply runs of entry %d: %w", entryID, err)
	}
	return rs, nil
}

// walkSupply reads the entries e in keyset pages of walkSupplyPage by id, and for each
// the newest run r, which newestRun (a backend's FROM clause over entries e giving
// supply_runs r) finds on supply_runs_entry_ran without reading the other runs'
// documents; an entry without runs is skipped. As in WalkRounds, each page is a query of
// its own, so no connection, transaction or snapshot is held while fn runs. A run stored
// during the walk is seen when its entry is after the page being read.
func (s *sqlStore) walkSupply(ctx context.Context, newestRun string, fn func(SupplyRecord) error) error {
	query := `
		SELECT ` + supplyColumns + `
		FROM ` + newestRun + supplyLedger + `
		WHERE e.id > ?
		ORDER BY e.id
		LIMIT ?`
	return walkPagesOf(walkSupplyPage, func(buf []SupplyRecord, last *SupplyRecord) ([]SupplyRecord, error) {
		// Entry ids start at 1: the first page starts before every entry.
		var entry int64
		if last != nil {
			entry = last.EntryID
		}
		rows, err := s.read.Query(ctx, query, entry, walkSupplyPage)
		if err == nil {
			buf, err = appendRows(buf, rows, scanSupply)
		}
		if err != nil {
			return nil, fmt.Errorf("couldn't walk the supply runs: %w", err)
		}
		return buf, nil
	}, fn)
}
