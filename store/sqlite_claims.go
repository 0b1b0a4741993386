package store

import "context"

// ProveClaim stores a successful proof, in one transaction: the token (its account's,
// unused, unexpired at p.At) is used, and the claim of its account, entry, method and
// part is made, or made live again. ErrNotFound for an unknown token or another
// account's, ErrClaimTokenUsed, ErrClaimTokenExpired.
func (s *sqliteStore) ProveClaim(ctx context.Context, p ClaimProof) (Claim, error) {
	if err := checkHash("a claim token's hash", p.TokenHash); err != nil {
		return Claim{}, err
	}
	var c Claim
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		var err error
		c, err = s.proveClaim(ctx, sqliteQuerier{tx}, p)
		return err
	})
	return c, err
}
