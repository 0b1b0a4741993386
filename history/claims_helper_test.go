package history_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/probity-dev/probity/store"
)

// claimEntry makes the entry claimed the only way there is: an account's claim on its
// locator (the claims trigger sets entries.claimed).
func claimEntry(ctx context.Context, st store.Store, e store.Entry) error {
	now := time.Now().UTC()
	email := fmt.Sprintf("maintainer-%d@example.com", e.ID)
	a, _, err := st.EmailAccount(ctx, email, email, now)
	if err != nil {
		return err
	}
	h := sha256.Sum256([]byte(email))
	if _, err := st.AddClaimToken(ctx, store.ClaimToken{TokenHash: h[:], AccountID: a.ID, EntryID: e.ID, Method: "dns",
		Target: e.Locator, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		return err
	}
	_, err = st.ProveClaim(ctx, store.ClaimProof{TokenHash: h[:], AccountID: a.ID, Proof: "test", At: now})
	return err
}
