package logaudit

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/verifier"
)

// withdrawalRefs holds what checkWithdrawals needs once every envelope is verified:
// the payload digest of each supply record, and the supply record each withdrawal
// record names (attest, "Withdrawal predicate"). Verification runs in parallel: note
// locks.
type withdrawalRefs struct {
	mu     sync.Mutex
	supply map[int64][sha256.Size]byte // index -> SHA-256 of the supply record's payload
	refs   []withdrawalRef
}

type withdrawalRef struct {
	index  int64
	seq    int64  // the supply record's sequence number (its index + 1)
	digest string // "sha256:" + hex
}

// note keeps what a verified supply or withdrawal record says for checkWithdrawals.
func (w *withdrawalRefs) note(j job, r *verifier.Result) {
	switch {
	case j.kind == "supply":
		_, payload, err := attest.ParseEnvelope(j.env)
		if err != nil {
			return // verified a moment ago: cannot happen
		}
		sum := sha256.Sum256(payload)
		w.mu.Lock()
		if w.supply == nil {
			w.supply = map[int64][sha256.Size]byte{}
		}
		w.supply[j.index] = sum
		w.mu.Unlock()
	case r.Statement != nil && r.Statement.Withdrawal != nil:
		s := r.Statement.Withdrawal.Supply
		w.mu.Lock()
		w.refs = append(w.refs, withdrawalRef{index: j.index, seq: s.Seq, digest: s.PayloadDigest})
		w.mu.Unlock()
	}
}

// checkWithdrawals holds each withdrawal record to the supply record it names: an
// earlier leaf of the log, of kind supply, whose payload has the digest it names. A
// supply record the log no longer holds (removed with its entry) is not checked: its
// entry's withdrawals went with it.
func (a *auditor) checkWithdrawals() {
	w := &a.withdrawals
	for _, ref := range w.refs {
		idx := ref.seq - 1
		if _, gone := a.removed[idx]; gone {
			continue
		}
		if idx >= ref.index || idx < 0 || int(idx) >= len(a.kinds) || a.kindName(a.kinds[idx]) != "supply" {
			a.found.add(ref.index, ReasonWithdrawalSupply, "names seq %d, which is not an earlier supply record", ref.seq)
			continue
		}
		sum, ok := w.supply[idx]
		if !ok {
			continue // the supply record did not verify: reported at its own index
		}
		if "sha256:"+hex.EncodeToString(sum[:]) != strings.ToLower(ref.digest) {
			a.found.add(ref.index, ReasonWithdrawalSupply, "names seq %d with payload digest %s; its payload's is sha256:%x", ref.seq, clip(ref.digest), sum)
		}
	}
}
