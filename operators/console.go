package operators

import (
	"context"
	"errors"
	"fmt"
	"github.com/probity-dev/probity/claims"
	"strconv"
	"strings"

	"github.com/probity-dev/probity/store"
)

// MaxChangesShown is how many of an entry's changes the console lists at once.
const MaxChangesShown = 100

// HideChange hides (hidden true) or shows again change number of the entry slug, with
// a reason (required to hide, optional to show again); the change and its audit row are written in one transaction.
// store.ErrNotFound when there is no such entry or change.
func (s *Service) HideChange(ctx context.Context, by Actor, slug string, number int64, hidden bool, reason string) error {
	r := ""
	if hidden || strings.TrimSpace(reason) != "" {
		var err error
		if r, err = checkReason(reason, MaxHideReason); err != nil {
			return err
		}
	}
	if err := s.checkActor(ctx, by); err != nil {
		return err
	}
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return err
	}
	name := ActionHideChange
	storedReason := r
	if !hidden {
		name, storedReason = ActionUnhideChange, ""
	}
	rec, err := Action{By: by, Name: name, EntrySlug: e.Slug, EntryID: e.ID, Target: "change " + strconv.FormatInt(number, 10), Reason: r}.row(s.now())
	if err != nil {
		return err
	}
	if err := s.st.HideChangeRecorded(ctx, e.ID, number, hidden, storedReason, rec); err != nil {
		return err
	}
	s.log.Info("operator action", "action", name, "actor", rec.Actor, "actor_account", by.accountID, "entry", e.Slug, "change", number)
	return nil
}

// Changes returns the entry slug and its newest changes, hidden ones included, at
// most MaxChangesShown, below beforeNumber (≤ 0: from the newest).
func (s *Service) Changes(ctx context.Context, slug string, beforeNumber int64) (store.Entry, []store.ChangeRecord, error) {
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return store.Entry{}, nil, err
	}
	if beforeNumber < 0 {
		beforeNumber = 0
	}
	cs, err := s.st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, BeforeNumber: beforeNumber, IncludeHidden: true,
		WithoutEnvelopes: true, Limit: MaxChangesShown})
	if err != nil {
		return store.Entry{}, nil, fmt.Errorf("couldn't read the changes of %s: %w", e.Slug, err)
	}
	return e, cs, nil
}

// DeleteEntry deletes the entry slug with its whole history (store.DeleteEntry: a
// tombstone in the ledger records the deletion and the reason), then appends the
// audit row: the deletion is its own transaction, so the row follows it (a crash
// between the two leaves the tombstone, which says the same, without the row).
func (s *Service) DeleteEntry(ctx context.Context, by Actor, slug, reason string) error {
	r, err := CheckReason(reason)
	if err != nil {
		return err
	}
	if err := s.checkActor(ctx, by); err != nil {
		return err
	}
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return err
	}
	if err := s.st.DeleteEntry(ctx, e.Slug, r); err != nil {
		return err
	}
	if err := s.Record(ctx, Action{By: by, Name: ActionDeleteEntry, EntrySlug: e.Slug, EntryID: e.ID, Target: "entry", Reason: r}); err != nil {
		return fmt.Errorf("the entry %s was deleted, but its audit row could not be appended: %w", e.Slug, err)
	}
	return nil
}

// Claims returns claims to review, newest first, with their entries.
func (s *Service) Claims(ctx context.Context, q store.ClaimReviewQuery) ([]store.ClaimReview, error) {
	return s.st.ClaimsForReview(ctx, q)
}

// RevokeClaim lapses the live claim id with the operator's reason (the maintainer sees
// "revoked by an operator: REASON"), with its audit row in one transaction, then moves
// the entry's cadence due time when that was its last live claim. store.ErrNotFound
// when there is no such live claim.
func (s *Service) RevokeClaim(ctx context.Context, by Actor, id int64, reason string) (store.Claim, error) {
	r, err := CheckReason(reason)
	if err != nil {
		return store.Claim{}, err
	}
	if err := s.checkActor(ctx, by); err != nil {
		return store.Claim{}, err
	}
	now := s.now()
	slug := ""
	var entryID int64
	if rs, err := s.st.ClaimsForReview(ctx, store.ClaimReviewQuery{BeforeID: id + 1, Limit: 1}); err != nil {
		return store.Claim{}, err
	} else if len(rs) == 1 && rs[0].ID == id {
		slug, entryID = rs[0].EntrySlug, rs[0].EntryID
	} else {
		return store.Claim{}, store.ErrNotFound
	}
	rec, err := Action{By: by, Name: ActionRevokeClaim, EntrySlug: slug, EntryID: entryID,
		Target: "claim " + strconv.FormatInt(id, 10), Reason: r}.row(now)
	if err != nil {
		return store.Claim{}, err
	}
	c, err := s.st.RevokeClaimRecorded(ctx, id, now, claims.RevokedReason(r), rec)
	if err != nil {
		return store.Claim{}, err
	}
	s.log.Info("operator action", "action", ActionRevokeClaim, "actor", rec.Actor, "actor_account", by.accountID, "entry", slug, "claim", id)
	if err := s.reschedule(ctx, c.EntryID); err != nil {
		return c, fmt.Errorf("the claim was revoked, but the entry's schedule could not be moved: %w", err)
	}
	return c, nil
}

// reschedule moves the entry's cadence due time when it is no longer claimed (as
// package claims does when a claim lapses).
func (s *Service) reschedule(ctx context.Context, entryID int64) error {
	if s.sched == nil {
		return nil
	}
	e, err := s.st.EntryByID(ctx, entryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil || e.Claimed {
		return err
	}
	due, err := s.st.DueTimes(ctx, entryID)
	if err != nil {
		return err
	}
	for _, u := range s.sched.ClaimedDue(e, due, s.now()) {
		if err := s.st.SetDue(ctx, entryID, u); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("couldn't move the due time of entry %s: %w", e.Slug, err)
		}
	}
	return nil
}

// DecidedDispute records an operator's decision of a dispute (package disputes makes
// and signs the outcome; the console records it right after it succeeded).
func (s *Service) DecidedDispute(ctx context.Context, by Actor, slug string, disputeID int64, decision, suiteVersion, reason string) error {
	fields := map[string]string{"decision": decision}
	if suiteVersion != "" {
		fields["suiteVersion"] = suiteVersion
	}
	return s.Record(ctx, Action{By: by, Name: ActionDecideDispute, EntrySlug: slug,
		Target: "dispute " + strconv.FormatInt(disputeID, 10), Reason: reason, Fields: fields})
}
