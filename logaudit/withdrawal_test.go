package logaudit_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/logaudit"
)

// TestWithdrawalRecords: a withdrawal and a restoration logged after the supply run they
// name audit clean and are counted by kind; a withdrawal whose reason was altered and
// the log re-signed fails its signature; one naming a record that is not a supply run,
// or the supply run with another payload digest, fails; one logged under another kind
// fails its kind.
func TestWithdrawalRecords(t *testing.T) {
	ctx := context.Background()
	s := mustSigner(t)
	// Sequence number 2 (leaf 1) of the shared records is the supply run of pkg-2,
	// evaluated at 00:02 (logaudittest.Records): signed again, its payload is the same.
	supplyAt := time.Date(2026, 6, 1, 0, 2, 0, 0, time.UTC)
	supply, err := s.Supply(ctx, "pkg-2", supplyAt)
	if err != nil {
		t.Fatal(err)
	}
	var buildWith func(f *fixture, reason string, seq int64, digest string) [][]byte
	build := func(f *fixture, reason string) [][]byte {
		return buildWith(f, reason, 2, supply.PayloadDigest)
	}
	buildWith = func(f *fixture, reason string, seq int64, digest string) [][]byte {
		w, err := s.Withdrawal(ctx, "pkg-2", 1, attest.WithdrawalWithdrawn, reason, seq, digest, time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Withdrawal(ctx, "pkg-2", 2, attest.WithdrawalRestored, "The maintainer removed the upload.", seq, digest, time.Date(2026, 6, 1, 10, 0, 10, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(f.leaves))
		wl, err := attest.RecordLeaf(n+1, "withdrawal", w.Envelope)
		if err != nil {
			t.Fatal(err)
		}
		rl, err := attest.RecordLeaf(n+2, "withdrawal", r.Envelope)
		if err != nil {
			t.Fatal(err)
		}
		return append(append([][]byte{}, f.leaves...), wl, rl)
	}

	f := newFixture(t)
	f.write(build(f, "It uploads the files it reads."))
	rep := f.audit(f.config())
	if !rep.OK() || rep.Counts["withdrawal"] != 2 || rep.Verified != 602 {
		t.Fatalf("ok %v counts %v verified %d failures %+v", rep.OK(), rep.Counts, rep.Verified, rep.Failures)
	}

	t.Run("altered reason, re-signed", func(t *testing.T) {
		f := newFixture(t)
		l := build(f, "It uploads the files it reads.")
		p, err := attest.ParseLeaf(l[600])
		if err != nil {
			t.Fatal(err)
		}
		env, payload, err := attest.ParseEnvelope(p.Data)
		if err != nil {
			t.Fatal(err)
		}
		env.Payload = base64.StdEncoding.EncodeToString([]byte(strings.Replace(string(payload), "uploads", "archives", 1)))
		raw, err := attest.EncodeEnvelope(env)
		if err != nil {
			t.Fatal(err)
		}
		if l[600], err = attest.RecordLeaf(601, "withdrawal", raw); err != nil {
			t.Fatal(err)
		}
		f.write(l)
		wantReason(t, f.audit(f.config()), logaudit.Reason("bad_signature"), 600)
	})
	t.Run("names a record that is not a supply run", func(t *testing.T) {
		f := newFixture(t)
		f.write(buildWith(f, "x", 3, supply.PayloadDigest)) // seq 3 is a probe round
		wantReason(t, f.audit(f.config()), logaudit.ReasonWithdrawalSupply, 600)
	})
	t.Run("names the supply run with another digest", func(t *testing.T) {
		f := newFixture(t)
		f.write(buildWith(f, "x", 2, strings.Repeat("ab", 32)))
		wantReason(t, f.audit(f.config()), logaudit.ReasonWithdrawalSupply, 600)
	})
	t.Run("under another kind, re-signed", func(t *testing.T) {
		f := newFixture(t)
		l := build(f, "It uploads the files it reads.")
		p, _ := attest.ParseLeaf(l[601])
		l[601], _ = attest.RecordLeaf(602, "change", p.Data)
		f.write(l)
		wantReason(t, f.audit(f.config()), logaudit.ReasonKindMismatch, 601)
	})
}
