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
const supplyLedger = ` LEFT JOIN ledger l ON l.id = r.ledger_id`

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
