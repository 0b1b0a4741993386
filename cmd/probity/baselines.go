package main

import (
	"errors"
	"log/slog"

	"github.com/probity-dev/probity/baseline"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/store"
)

// addBaselines gives the write paths the baseline service (issue 18, "Approve a
// baseline"): the maintainers of an entry, as the claims service answers
// (claims.Service.IsMaintainer), approve its newest round's tool surface on
// /s/{slug}/baseline; approvals are signed with the service's key and recorded in the
// history. The rounds read the approved baselines whatever this does
// (envFlags.runner).
func (w *writePaths) addBaselines(st store.Store, signer *signing.Signer, logger *slog.Logger) error {
	if w.claims == nil {
		return errors.New("baselines need the claims service")
	}
	h, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: version,
		Baselines: baseline.Approvals{Store: st}, Logger: logger})
	if err != nil {
		return err
	}
	w.baselines, err = baseline.New(baseline.Config{Store: st, Maintainers: w.claims, Signer: signer, History: h,
		ToolVersion: version, Logger: logger})
	return err
}
