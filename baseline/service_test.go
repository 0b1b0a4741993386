package baseline_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/baseline"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/store"
)

// fakeStore is the service's Store over fixed rounds, keeping SaveBaseline's contract
// (the next number only, ErrBaselineNumber otherwise) and able to store a competing
// approval first (race) or fail (fail).
type fakeStore struct {
	mu        sync.Mutex
	entry     store.Entry
	rounds    []store.RoundSummary
	baselines []store.Baseline
	race      int // SaveBaseline calls that find another approval stored just before
	fail      error
}

func (f *fakeStore) Entry(ctx context.Context, slug string) (store.Entry, error) {
	if slug != f.entry.Slug {
		return store.Entry{}, store.ErrNotFound
	}
	return f.entry, nil
}

func (f *fakeStore) Rounds(ctx context.Context, entryID int64, limit int) ([]store.RoundSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]store.RoundSummary(nil), f.rounds[:min(limit, len(f.rounds))]...), f.fail
}

func (f *fakeStore) CurrentBaseline(ctx context.Context, entryID int64) (store.Baseline, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.baselines) == 0 {
		return store.Baseline{}, store.ErrNotFound
	}
	return f.baselines[len(f.baselines)-1], nil
}

func (f *fakeStore) SaveBaseline(ctx context.Context, b store.Baseline) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.race > 0 {
		f.race--
		other := b
		other.Number = int64(len(f.baselines)) + 1
		other.Fingerprints.Surface = attest.Digest([]byte("another approval"))
		f.baselines = append(f.baselines, other)
	}
	if b.Number != int64(len(f.baselines))+1 {
		return 0, store.ErrBaselineNumber
	}
	if len(b.Envelope) == 0 || b.KeyID == "" {
		return 0, errors.New("unsigned baseline")
	}
	b.ID = int64(len(f.baselines)) + 1
	f.baselines = append(f.baselines, b)
	return b.ID, nil
}

// fakeHistory records the operator edits it is given, or fails.
type fakeHistory struct {
	edits []string
	fail  error
}

func (h *fakeHistory) RecordOperatorEdit(ctx context.Context, entryID int64, field, before, after string, at time.Time) (store.ChangeRecord, error) {
	if h.fail != nil {
		return store.ChangeRecord{}, h.fail
	}
	h.edits = append(h.edits, field+" "+before+" → "+after)
	return store.ChangeRecord{Number: int64(len(h.edits))}, nil
}

type oneMaintainer struct{ account int64 }

func (m oneMaintainer) IsMaintainer(ctx context.Context, account, entry int64) (bool, error) {
	return account == m.account, nil
}

func signedRound(id string, tools int, surface string) store.RoundSummary {
	return store.RoundSummary{RoundID: id, Signed: true, Coverage: string(attest.CoverageFull), ToolCount: tools,
		PayloadDigest: strings.Repeat("a", 64), StartedAt: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC),
		Fingerprints: &attest.Fingerprints{Toolset: attest.Digest([]byte("t" + surface)), Schema: attest.Digest([]byte("s" + surface)),
			Surface: attest.Digest([]byte(surface)), Instructions: attest.Digest([]byte(`""`))}}
}

func newService(t *testing.T, st *fakeStore, h *fakeHistory) *baseline.Service {
	t.Helper()
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "keys")
	if _, err := signing.GenerateDir(dir, "https://probity.test", now.Add(-time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	_, signer, err := signing.OpenDir(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := baseline.New(baseline.Config{Store: st, Maintainers: oneMaintainer{7}, Signer: signer, History: h,
		ToolVersion: "test", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestApproveRefusals: no signed round (an unsigned one does not count), a newest
// signed round behind a login (an older full one is not taken) or of no tools, the approved surface again, another account,
// and a store failure are refused with their errors, and nothing is stored.
func TestApproveRefusals(t *testing.T) {
	entry := store.Entry{ID: 1, Slug: "weather", Kind: store.KindRemote, Locator: "https://weather.example/mcp"}
	unsigned := store.RoundSummary{RoundID: "u1", UnsignedReason: "no_handshake"}
	auth := store.RoundSummary{RoundID: "a1", Signed: true, Coverage: string(attest.CoverageAuthRequired), PayloadDigest: strings.Repeat("b", 64)}
	for name, tc := range map[string]struct {
		rounds  []store.RoundSummary
		account int64
		fail    error
		want    error
	}{
		"no round":            {nil, 7, nil, baseline.ErrNoRound},
		"no signed round":     {[]store.RoundSummary{unsigned}, 7, nil, baseline.ErrNoRound},
		"newest behind login": {[]store.RoundSummary{unsigned, auth, signedRound("f0", 2, "v0")}, 7, nil, baseline.ErrNoTools},
		"no tools":            {[]store.RoundSummary{signedRound("f1", 0, "empty")}, 7, nil, baseline.ErrNoTools},
		"not a maintainer":    {[]store.RoundSummary{signedRound("f1", 2, "v1")}, 8, nil, baseline.ErrNotMaintainer},
		"store fails":         {[]store.RoundSummary{signedRound("f1", 2, "v1")}, 7, errors.New("disk on fire"), nil},
		"unsigned is newest":  {[]store.RoundSummary{unsigned, signedRound("f1", 2, "v1")}, 7, nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			st := &fakeStore{entry: entry, rounds: tc.rounds, fail: tc.fail}
			h := &fakeHistory{}
			b, err := newService(t, st, h).Approve(context.Background(), tc.account, "weather")
			switch {
			case tc.fail != nil:
				if !errors.Is(err, tc.fail) || len(st.baselines) != 0 {
					t.Fatalf("Approve = %v, want the store's failure", err)
				}
			case tc.want != nil:
				if !errors.Is(err, tc.want) || len(st.baselines) != 0 || len(h.edits) != 0 {
					t.Fatalf("Approve = %+v, %v, want %v and nothing stored", b, err, tc.want)
				}
			default:
				// An unsigned newest round: the newest signed one is approved.
				if err != nil || b.BasisRoundID != "f1" || len(h.edits) != 1 {
					t.Fatalf("Approve = %+v, %v", b, err)
				}
			}
		})
	}
	st := &fakeStore{entry: entry, rounds: []store.RoundSummary{signedRound("f1", 2, "v1")}}
	svc := newService(t, st, &fakeHistory{})
	if _, err := svc.Approve(context.Background(), 7, "other"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Approve of no entry = %v, want ErrNotFound", err)
	}
	if _, err := svc.Approve(context.Background(), 7, "weather"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Approve(context.Background(), 7, "weather"); !errors.Is(err, baseline.ErrAlreadyApproved) || len(st.baselines) != 1 {
		t.Errorf("Approve of the approved surface = %v", err)
	}
}

// TestApproveSignsAndRecords: the stored baseline is the signed statement of the
// newest round's fingerprints (instructions left out), numbered after a competing
// approval, and the history gets the surfaces before and after; a history that cannot
// be written leaves the approval stored and says so.
func TestApproveSignsAndRecords(t *testing.T) {
	entry := store.Entry{ID: 1, Slug: "weather", Kind: store.KindRemote, Locator: "https://weather.example/mcp"}
	r := signedRound("f2", 3, "v2")
	st := &fakeStore{entry: entry, rounds: []store.RoundSummary{r}, race: 1}
	h := &fakeHistory{}
	svc := newService(t, st, h)
	b, err := svc.Approve(context.Background(), 7, "weather")
	if err != nil || b.Number != 2 || len(st.baselines) != 2 {
		t.Fatalf("Approve after a competing approval = %+v, %v", b, err)
	}
	_, payload, err := attest.ParseEnvelope(b.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := attest.DecodeStatement(payload)
	if err != nil || ds.Baseline == nil {
		t.Fatalf("the stored envelope: %v", err)
	}
	p := ds.Baseline
	if p.Number != 2 || p.ToolCount != 3 || p.Basis.RoundID != "f2" || p.Basis.PayloadDigest != "sha256:"+r.PayloadDigest ||
		p.Fingerprints.Surface != r.Fingerprints.Surface || p.Fingerprints.Toolset != r.Fingerprints.Toolset ||
		p.Entry.URL != entry.Locator || p.ApprovedAt != "2026-12-02T10:00:00.000Z" || b.Fingerprints.Instructions != "" {
		t.Fatalf("signed baseline %+v", p)
	}
	if strings.Contains(string(payload), `"7"`) || b.ApprovedBy != 7 {
		t.Errorf("approver: stored %d; the payload %s", b.ApprovedBy, payload)
	}
	want := "approved_baseline " + st.baselines[0].Fingerprints.Surface + " → " + r.Fingerprints.Surface
	if len(h.edits) != 1 || h.edits[0] != want {
		t.Errorf("history %v, want %q", h.edits, want)
	}
	if fp, err := svc.Approved(context.Background(), entry.ID); err != nil || fp == nil || fp.Surface != r.Fingerprints.Surface || fp.Instructions != "" {
		t.Errorf("Approved = %+v, %v", fp, err)
	}

	st.rounds = []store.RoundSummary{signedRound("f3", 4, "v3")}
	h.fail = errors.New("history is down")
	b, err = svc.Approve(context.Background(), 7, "weather")
	if err == nil || !errors.Is(err, h.fail) || b.Number != 3 || len(st.baselines) != 3 {
		t.Errorf("Approve with a failing history = %+v, %v", b, err)
	}
}
