package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"
)

func claimHash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func mustClaimToken(t *testing.T, s Store, account, entry int64, method, target, token string, at time.Time) {
	t.Helper()
	if _, err := s.AddClaimToken(context.Background(), ClaimToken{TokenHash: claimHash(token), AccountID: account, EntryID: entry,
		Method: method, Target: target, CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour)}); err != nil {
		t.Fatalf("AddClaimToken(%s) = %v", token, err)
	}
}

func claimedOf(t *testing.T, s Store, id int64) bool {
	t.Helper()
	e, err := s.EntryByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return e.Claimed
}

// TestClaimsContract: tokens are single use, their own account's, short-lived and
// bounded; a proof makes a claim and the entry claimed; a re-check lapses it and the
// entry is unclaimed once no live claim is left; deleting an account or an entry takes
// its claims (and the entry's claimed state) with it.
func TestClaimsContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := insertTestAccount(t, s, "a@example.com", t0)
		b := insertTestAccount(t, s, "b@example.com", t0)
		e := mustAddEntry(t, s, "one")
		target := e.Locator

		mustClaimToken(t, s, a, e.ID, "well-known", target, "tok-a", t0)
		tok, err := s.ClaimToken(ctx, claimHash("tok-a"))
		if err != nil || tok.AccountID != a || tok.EntryID != e.ID || tok.Method != "well-known" || tok.Target != target ||
			!tok.CreatedAt.Equal(ms(t0)) || !tok.ExpiresAt.Equal(ms(t0.Add(24*time.Hour))) || !tok.UsedAt.IsZero() {
			t.Fatalf("ClaimToken = %+v, %v", tok, err)
		}
		if _, err := s.ClaimToken(ctx, claimHash("nope")); !errors.Is(err, ErrNotFound) {
			t.Errorf("ClaimToken(unknown) = %v, want ErrNotFound", err)
		}
		// Refusals: a missing account or entry, a bad hash, a bad target.
		for _, bad := range []ClaimToken{
			{TokenHash: claimHash("x1"), AccountID: 9999, EntryID: e.ID, Method: "dns", Target: target, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
			{TokenHash: claimHash("x2"), AccountID: a, EntryID: 9999, Method: "dns", Target: target, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		} {
			if _, err := s.AddClaimToken(ctx, bad); !errors.Is(err, ErrNotFound) {
				t.Errorf("AddClaimToken(%d, %d) = %v, want ErrNotFound", bad.AccountID, bad.EntryID, err)
			}
		}
		for _, bad := range []ClaimToken{
			{TokenHash: []byte("short"), AccountID: a, EntryID: e.ID, Method: "dns", Target: target, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
			{TokenHash: claimHash("x3"), AccountID: a, EntryID: e.ID, Method: "dns", Target: "", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
			{TokenHash: claimHash("x4"), AccountID: a, EntryID: e.ID, Method: "dns", Target: target, CreatedAt: t0, ExpiresAt: t0},
			{TokenHash: claimHash("x5"), AccountID: a, EntryID: e.ID, Method: "telepathy", Target: target, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		} {
			if _, err := s.AddClaimToken(ctx, bad); err == nil || errors.Is(err, ErrNotFound) {
				t.Errorf("AddClaimToken(%+v) = %v, want a refusal", bad, err)
			}
		}

		// Another account cannot use a's token; an expired token is refused.
		if _, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash("tok-a"), AccountID: b, Proof: "p", At: t0}); !errors.Is(err, ErrNotFound) {
			t.Errorf("ProveClaim(another account) = %v, want ErrNotFound", err)
		}
		if _, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash("tok-a"), AccountID: a, Proof: "p", At: t0.Add(24 * time.Hour)}); !errors.Is(err, ErrClaimTokenExpired) {
			t.Errorf("ProveClaim(expired) = %v, want ErrClaimTokenExpired", err)
		}
		if claimedOf(t, s, e.ID) {
			t.Fatal("claimed before any claim")
		}

		// A proof: the claim, the entry claimed, the token used once.
		c, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash("tok-a"), AccountID: a, Proof: "found at https://one.example.com/.well-known/probity-claim", At: t0.Add(time.Minute)})
		if err != nil || c.AccountID != a || c.EntryID != e.ID || c.Method != "well-known" || c.Target != target || !c.Live() ||
			!c.VerifiedAt.Equal(ms(t0.Add(time.Minute))) || !c.LastCheckedAt.Equal(c.VerifiedAt) || !bytes.Equal(c.TokenHash, claimHash("tok-a")) {
			t.Fatalf("ProveClaim = %+v, %v", c, err)
		}
		if !claimedOf(t, s, e.ID) {
			t.Fatal("not claimed after a proof")
		}
		if _, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash("tok-a"), AccountID: a, Proof: "p", At: t0.Add(2 * time.Minute)}); !errors.Is(err, ErrClaimTokenUsed) {
			t.Errorf("second ProveClaim = %v, want ErrClaimTokenUsed", err)
		}

		// b claims too, by DNS: two maintainers.
		mustClaimToken(t, s, b, e.ID, "dns", target, "tok-b", t0)
		cb, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash("tok-b"), AccountID: b, Proof: "TXT", At: t0.Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		if cs, err := s.Claims(ctx, e.ID); err != nil || len(cs) != 2 || cs[0].ID != c.ID || cs[1].ID != cb.ID {
			t.Fatalf("Claims = %+v, %v", cs, err)
		}
		if cs, err := s.AccountClaims(ctx, b); err != nil || len(cs) != 1 || cs[0].ID != cb.ID {
			t.Fatalf("AccountClaims = %+v, %v", cs, err)
		}

		// Re-checks: both due a day later (the default next check); a's proven again,
		// b's lapsed: still claimed.
		if due, err := s.ClaimsDue(ctx, t0.Add(24*time.Hour), 10); err != nil || len(due) != 0 {
			t.Fatalf("ClaimsDue before a day = %+v, %v", due, err)
		}
		due, err := s.ClaimsDue(ctx, t0.Add(25*time.Hour), 10)
		if err != nil || len(due) != 2 || due[0].ID != c.ID || !due[0].NextCheckAt.Equal(ms(t0.Add(24*time.Hour+time.Minute))) {
			t.Fatalf("ClaimsDue = %+v, %v", due, err)
		}
		if due, err := s.ClaimsDue(ctx, t0.Add(25*time.Hour), 1); err != nil || len(due) != 1 || due[0].ID != c.ID {
			t.Fatalf("ClaimsDue(limit 1) = %+v, %v", due, err)
		}
		at := t0.Add(25 * time.Hour)
		if got, err := s.RecheckClaim(ctx, c.ID, ClaimRecheck{At: at, Answered: true, NextCheckAt: at.Add(24 * time.Hour)}); err != nil ||
			!got.Live() || !got.LastCheckedAt.Equal(ms(at)) || !got.NextCheckAt.Equal(ms(at.Add(24*time.Hour))) {
			t.Fatalf("RecheckClaim(proven) = %+v, %v", got, err)
		}
		if _, err := s.RecheckClaim(ctx, c.ID, ClaimRecheck{At: at, Answered: true, NextCheckAt: at}); err == nil {
			t.Error("RecheckClaim with the next check not after it: no error")
		}
		// No answer: the last check stays, unanswered_since is kept; the proof gone:
		// gone_since is kept; neither lapses.
		nb, err := s.RecheckClaim(ctx, cb.ID, ClaimRecheck{At: at, NextCheckAt: at.Add(time.Hour), UnansweredSince: at})
		if err != nil || !nb.Live() || !nb.LastCheckedAt.Equal(cb.LastCheckedAt) || !nb.UnansweredSince.Equal(ms(at)) ||
			!nb.GoneSince.IsZero() || !nb.NextCheckAt.Equal(ms(at.Add(time.Hour))) {
			t.Fatalf("RecheckClaim(unanswered) = %+v, %v", nb, err)
		}
		if due, err := s.ClaimsDue(ctx, at.Add(2*time.Hour), 10); err != nil || len(due) != 1 || due[0].ID != cb.ID {
			t.Fatalf("ClaimsDue after the retry time = %+v, %v", due, err)
		}
		at2 := at.Add(time.Hour)
		nb, err = s.RecheckClaim(ctx, cb.ID, ClaimRecheck{At: at2, Answered: true, NextCheckAt: at2.Add(25 * time.Hour), GoneSince: at2})
		if err != nil || !nb.Live() || !nb.LastCheckedAt.Equal(ms(at2)) || !nb.UnansweredSince.IsZero() || !nb.GoneSince.Equal(ms(at2)) {
			t.Fatalf("RecheckClaim(gone) = %+v, %v", nb, err)
		}
		got, err := s.RecheckClaim(ctx, cb.ID, ClaimRecheck{At: at2.Add(25 * time.Hour), Answered: true, GoneSince: at2, LapseReason: "the TXT record is gone"})
		if err != nil || got.Live() || got.LapseReason != "the TXT record is gone" || !got.LapsedAt.Equal(ms(at2.Add(25*time.Hour))) {
			t.Fatalf("RecheckClaim(lapsed) = %+v, %v", got, err)
		}
		if _, err := s.RecheckClaim(ctx, cb.ID, ClaimRecheck{At: t0.Add(60 * time.Hour), Answered: true, NextCheckAt: t0.Add(80 * time.Hour)}); !errors.Is(err, ErrNotFound) {
			t.Errorf("RecheckClaim(lapsed claim) = %v, want ErrNotFound", err)
		}
		if !claimedOf(t, s, e.ID) {
			t.Fatal("unclaimed while a live claim is left")
		}
		// a's lapses too: unclaimed.
		if _, err := s.RecheckClaim(ctx, c.ID, ClaimRecheck{At: t0.Add(49 * time.Hour), LapseReason: "the file is gone"}); err != nil {
			t.Fatal(err)
		}
		if claimedOf(t, s, e.ID) {
			t.Fatal("claimed with no live claim")
		}
		// A new proof of b makes its claim live again (one row per account, method, part).
		mustClaimToken(t, s, b, e.ID, "dns", target, "tok-b2", t0.Add(50*time.Hour))
		again, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash("tok-b2"), AccountID: b, Proof: "TXT again", At: t0.Add(50 * time.Hour)})
		if err != nil || again.ID != cb.ID || !again.Live() || again.Proof != "TXT again" || !bytes.Equal(again.TokenHash, claimHash("tok-b2")) ||
			!again.GoneSince.IsZero() || !again.UnansweredSince.IsZero() || !again.NextCheckAt.Equal(ms(t0.Add(74*time.Hour))) {
			t.Fatalf("ProveClaim again = %+v, %v", again, err)
		}
		if !claimedOf(t, s, e.ID) {
			t.Fatal("not claimed after a renewed proof")
		}

		// Deleting b's account deletes its claim: unclaimed (a's is lapsed).
		if err := s.DeleteAccount(ctx, b); err != nil {
			t.Fatal(err)
		}
		if cs, _ := s.Claims(ctx, e.ID); len(cs) != 1 || cs[0].AccountID != a {
			t.Fatalf("claims after deleting b = %+v", cs)
		}
		if claimedOf(t, s, e.ID) {
			t.Fatal("claimed after its maintainer's account was deleted")
		}

		// Deleting the entry deletes its tokens and claims.
		mustClaimToken(t, s, a, e.ID, "npm", "pkg:npm/one", "tok-a3", t0.Add(50*time.Hour))
		if err := s.DeleteEntry(ctx, e.Slug, "test"); err != nil {
			t.Fatal(err)
		}
		if cs, err := s.AccountClaims(ctx, a); err != nil || len(cs) != 0 {
			t.Fatalf("AccountClaims after deleting the entry = %+v, %v", cs, err)
		}
		if _, err := s.ClaimToken(ctx, claimHash("tok-a3")); !errors.Is(err, ErrNotFound) {
			t.Errorf("a token of a deleted entry = %v, want ErrNotFound", err)
		}

		// Pruning: used and expired tokens go.
		e2 := mustAddEntry(t, s, "two")
		mustClaimToken(t, s, a, e2.ID, "dns", e2.Locator, "old", t0)
		mustClaimToken(t, s, a, e2.ID, "well-known", e2.Locator, "used", t0)
		if _, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash("used"), AccountID: a, Proof: "p", At: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		mustClaimToken(t, s, a, e2.ID, "dns", e2.Locator, "new", t0.Add(72*time.Hour))
		if n, err := s.PruneClaimTokens(ctx, t0.Add(48*time.Hour)); err != nil || n != 2 { // "old" (expired) and "used"
			t.Fatalf("PruneClaimTokens = %d, %v", n, err)
		}
		if _, err := s.ClaimToken(ctx, claimHash("new")); err != nil {
			t.Errorf("a live token was pruned: %v", err)
		}
	})
}

// TestClaimTokenLimit: an account holds at most MaxLiveClaimTokens live tokens; used
// or expired ones do not count.
func TestClaimTokenLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := insertTestAccount(t, s, "a@example.com", t0)
		e := mustAddEntry(t, s, "one")
		for i := range MaxLiveClaimTokens {
			mustClaimToken(t, s, a, e.ID, "dns", e.Locator, "t"+string(rune('a'+i)), t0)
		}
		over := ClaimToken{TokenHash: claimHash("over"), AccountID: a, EntryID: e.ID, Method: "dns", Target: e.Locator, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		if _, err := s.AddClaimToken(ctx, over); !errors.Is(err, ErrClaimTokenLimit) {
			t.Fatalf("AddClaimToken over the limit = %v", err)
		}
		over.CreatedAt, over.ExpiresAt = t0.Add(25*time.Hour), t0.Add(26*time.Hour) // the others expired
		if _, err := s.AddClaimToken(ctx, over); err != nil {
			t.Fatalf("AddClaimToken once the others expired = %v", err)
		}
	})
}

// TestProveClaimConcurrent: of two checks of one token at once, exactly one claims.
func TestProveClaimConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := insertTestAccount(t, s, "a@example.com", t0)
		e := mustAddEntry(t, s, "one")
		mustClaimToken(t, s, a, e.ID, "dns", e.Locator, "tok", t0)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash("tok"), AccountID: a, Proof: "p", At: t0.Add(time.Minute)})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrClaimTokenUsed):
				t.Errorf("ProveClaim = %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d checks claimed with one token, want 1", ok)
		}
	})
}

// TestLapseConcurrent: an entry's last two claims lapsed at once leave it unclaimed
// (the trigger counts after the other transaction committed).
func TestLapseConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		e := mustAddEntry(t, s, "one")
		var ids []int64
		for i, email := range []string{"a@example.com", "b@example.com"} {
			a := insertTestAccount(t, s, email, t0)
			tok := "tok" + string(rune('a'+i))
			mustClaimToken(t, s, a, e.ID, "dns", e.Locator, tok, t0)
			c, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash(tok), AccountID: a, Proof: "p", At: t0})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, c.ID)
		}
		for range 5 {
			var wg sync.WaitGroup
			for _, id := range ids {
				wg.Go(func() {
					if _, err := s.RecheckClaim(ctx, id, ClaimRecheck{At: t0.Add(time.Hour), LapseReason: "gone"}); err != nil {
						t.Errorf("RecheckClaim = %v", err)
					}
				})
			}
			wg.Wait()
			if claimedOf(t, s, e.ID) {
				t.Fatal("claimed after both claims lapsed at once")
			}
			// Live again, for the next try.
			if err := s.(testExecer).execForTest(ctx, `UPDATE claims SET lapsed_at = NULL, lapse_reason = NULL`); err != nil {
				t.Fatal(err)
			}
			if !claimedOf(t, s, e.ID) {
				t.Fatal("not claimed with live claims")
			}
		}
	})
}

// TestMaintainsEntry: an account maintains an entry while it holds a live claim on a
// part the entry counts now: its locator, or a listed remote, npm or PyPI part; not a
// listed repository that is not the locator, not a part no longer listed, not a lapsed
// claim, not another entry's, not a github-permission claim.
func TestMaintainsEntry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := insertTestAccount(t, s, "a@example.com", t0)
		b := insertTestAccount(t, s, "b@example.com", t0)
		parts := []Part{{Kind: KindRemote, Locator: "https://mcp.acme.example/mcp"}, {Kind: KindNPM, Locator: "pkg:npm/acme"},
			{Kind: KindGitHub, Locator: "https://github.com/acme/monorepo"}}
		res, err := s.UpsertServer(ctx, ServerUpsert{SlugBase: "acme", Name: "Acme", Source: "registry",
			Listing: Listing{ServerName: "example.acme/server"}, Parts: parts})
		if err != nil {
			t.Fatal(err)
		}
		e := res.Entry
		other := mustAddEntry(t, s, "other")
		n := 0
		claim := func(account, entry int64, method, target string) int64 {
			t.Helper()
			n++
			tok := "tok" + string(rune('a'+n))
			mustClaimToken(t, s, account, entry, method, target, tok, t0)
			c, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash(tok), AccountID: account, Proof: "p", At: t0})
			if err != nil {
				t.Fatal(err)
			}
			return c.ID
		}
		is := func(account, entry int64) bool {
			t.Helper()
			yes, err := s.MaintainsEntry(ctx, account, entry)
			if err != nil {
				t.Fatal(err)
			}
			return yes
		}
		if is(a, e.ID) {
			t.Fatal("a maintainer without a claim")
		}
		// A listed repository that is not the locator does not count; nor does a
		// github-permission claim on anything.
		claim(a, e.ID, "repo-file", parts[2].Locator)
		claim(a, e.ID, "github-permission", parts[2].Locator)
		if is(a, e.ID) {
			t.Fatal("a listed repository made a maintainer")
		}
		// The npm part counts; it does not for another entry.
		npm := claim(a, e.ID, "npm", "pkg:npm/acme")
		if !is(a, e.ID) || is(a, other.ID) || is(b, e.ID) {
			t.Fatal("the npm claim: wrong maintainers")
		}
		// The npm part no longer listed: the claim does not count.
		if _, err := s.UpsertServer(ctx, ServerUpsert{SlugBase: "acme", Name: "Acme", Source: "registry",
			Listing: Listing{ServerName: "example.acme/server"}, Parts: []Part{parts[0], parts[2]}}); err != nil {
			t.Fatal(err)
		}
		if is(a, e.ID) {
			t.Fatal("a claim on a removed part counts")
		}
		// The locator by its method's kind: a DNS claim counts, lapsed it does not.
		dns := claim(b, e.ID, "dns", parts[0].Locator)
		if !is(b, e.ID) {
			t.Fatal("a claim on the locator does not count")
		}
		if _, err := s.RecheckClaim(ctx, dns, ClaimRecheck{At: t0.Add(time.Hour), LapseReason: "gone"}); err != nil {
			t.Fatal(err)
		}
		if is(b, e.ID) {
			t.Fatal("a lapsed claim counts")
		}
		// A repository that is the entry's own locator counts.
		repo, _, err := s.AddEntry(ctx, NewEntry{SlugBase: "repo", Kind: KindGitHub, Locator: "https://github.com/acme/tool", Name: "tool", Source: "import"})
		if err != nil {
			t.Fatal(err)
		}
		claim(b, repo.ID, "repo-file", repo.Locator)
		if !is(b, repo.ID) {
			t.Fatal("a repo-file claim on the entry's own repository does not count")
		}
		_ = npm
	})
}
