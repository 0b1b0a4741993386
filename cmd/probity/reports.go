package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/operators"
	"github.com/probity-dev/probity/reports"
	"github.com/probity-dev/probity/store"
)

// addReports gives the write paths the report service (package reports): the report
// form of Verified entries and the operators' report console, its withdrawal records
// signed with the site's signing key, and the daily erasure of closed reports'
// contact addresses.
//
// Operator actions go to audit: reportsAudit, the operators' append-only audit log.
func (w *writePaths) addReports(st store.Store, signer *signing.Signer, audit reports.Auditor, logger *slog.Logger) error {
	var err error
	w.reports, err = reports.New(reports.Config{Store: st, Signer: signer, Auditor: audit, ToolVersion: version, Log: logger})
	return err
}

// reportsAudit appends the report desk's operator actions to the operators' audit log
// (package operators owns it), right after each action, as the console does.
type reportsAudit struct{ ops *operators.Service }

func (a reportsAudit) Record(ctx context.Context, x reports.Action) error {
	return a.ops.Record(ctx, operators.Action{By: operators.By(x.ActorID), Name: x.Action, EntrySlug: x.EntrySlug, Target: x.Target, Reason: x.Detail})
}

// reportsPruneArgs is the daily job that erases the contact address of every report
// closed 30 days ago (the privacy page's promise).
type reportsPruneArgs struct{}

func (reportsPruneArgs) Kind() string { return "probity_reports_prune" }

type reportsPruneWorker struct {
	river.WorkerDefaults[reportsPruneArgs]
	svc *reports.Service
}

func (w *reportsPruneWorker) Work(ctx context.Context, _ *river.Job[reportsPruneArgs]) error {
	_, err := w.svc.PruneContacts(ctx)
	return err
}

// reportsPeriodic is the daily run of reportsPruneArgs.
func reportsPeriodic() *river.PeriodicJob {
	const every = 24 * time.Hour
	return river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) {
			return reportsPruneArgs{}, &river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: every}}
		}, &river.PeriodicJobOpts{RunOnStart: true})
}
