package main

import (
	"context"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/web"
)

// disputeDesk is the console's dispute queue (web.DisputeDesk) over the disputes
// service: the console's decisions "uphold" and "reject" are the records' "upheld" and
// "rejected".
type disputeDesk struct{ s *disputes.Service }

func (d disputeDesk) Queue(ctx context.Context) ([]web.OpsDispute, error) {
	q, err := d.s.Queue(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]web.OpsDispute, 0, len(q))
	for _, x := range q {
		out = append(out, web.OpsDispute{ID: x.ID, Slug: x.Slug, Number: int(x.Number), RoundID: x.RoundID, CheckID: x.CheckID,
			Status: string(x.Status), Statement: x.Statement, Evidence: x.Evidence, OpenedAt: x.OpenedAt})
	}
	return out, nil
}

func (d disputeDesk) Decide(ctx context.Context, operatorAccountID, disputeID int64, decision, suiteVersion, reason string) error {
	switch decision {
	case web.DecisionUphold:
		decision = attest.DecisionUpheld
	case web.DecisionReject:
		decision = attest.DecisionRejected
	}
	_, err := d.s.Decide(ctx, operatorAccountID, disputeID, decision, suiteVersion, reason)
	return err
}
