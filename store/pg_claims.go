package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ProveClaim: see sqliteStore.ProveClaim.
func (s *pgStore) ProveClaim(ctx context.Context, p ClaimProof) (Claim, error) {
	if err := checkHash("a claim token's hash", p.TokenHash); err != nil {
		return Claim{}, err
	}
	var c Claim
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		c, err = s.proveClaim(ctx, newPgQuerier(tx), p)
		return err
	})
	return c, err
}
