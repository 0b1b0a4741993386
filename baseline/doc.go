// Package baseline approves baselines (issue 18, "Approve a baseline"): a maintainer of
// an entry takes the tool surface of the entry's newest signed round — its toolset,
// schema and surface fingerprints — as the approved one (refused when that round read
// no tools: none listed, or a login required first). The approval is a
// signed baseline/v1 statement (attest, "Baseline predicate"), stored as a ledger record
// of kind baseline with the store's baselines row, and recorded in the entry's history
// as an operator change (field approved_baseline, summary "new approved baseline",
// before and after the surface fingerprints), so that it appears in the history and
// goes to followers. From the entry's next round, the three *_unchanged_vs_approved
// checks compare with it (package rounds reads Service.Approved through its Baselines
// interface).
//
// Who approved is stored (store.Baseline.ApprovedBy) for the operators and never
// signed or shown. Whether an account may approve is the Maintainers interface's answer
// (claims.Service is one); the service asks it on every approval.
package baseline
