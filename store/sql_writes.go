package store

// This file holds the write statements both backends run, written once with ?
// placeholders. How they are sent differs, and stays in the backends' files: PostgreSQL
// queues them in pipelined batches after a row lock (pg_rounds.go, pg_entries.go, whose
// plans and round trips were measured), SQLite runs them one by one in an IMMEDIATE
// transaction through its statement cache (sqlite_rounds.go). PostgreSQL binds them once,
// at start-up (pgStatements).

// insertSurfaceSQL stores a surface or instructions document (fingerprint, doc,
// created_at). The document's digest is its fingerprint (checkRound, checkSurfaceDoc),
// so an existing row holds the same bytes; ON CONFLICT also waits for, and then yields
// to, another transaction inserting the same document.
const insertSurfaceSQL = `
	INSERT INTO surfaces (fingerprint, doc, created_at) VALUES (?, ?, ?)
	ON CONFLICT (fingerprint) DO NOTHING`

// deleteDueSQL clears one due time (entry_id, reason).
const deleteDueSQL = `DELETE FROM due WHERE entry_id = ? AND reason = ?`

// upsertDueSQL sets one due time (entry_id, reason, at).
const upsertDueSQL = `
	INSERT INTO due (entry_id, reason, at) VALUES (?, ?, ?)
	ON CONFLICT (entry_id, reason) DO UPDATE SET at = excluded.at`

// upsertUptimeSQL writes an entry's day of uptime (entry_id, day, answered, no_answer,
// inconclusive, status) in d's spelling.
func upsertUptimeSQL(d dialect) string {
	return `
	INSERT INTO uptime_days (entry_id, day, answered, no_answer, inconclusive, status)
	VALUES (?, ` + d.day("?") + `, ?, ?, ?, ?)
	ON CONFLICT (entry_id, day) DO UPDATE SET
		answered = excluded.answered, no_answer = excluded.no_answer,
		inconclusive = excluded.inconclusive, status = excluded.status`
}

// insertRoundSQL inserts a round, with ledgerID (an expression, or ? for one more
// parameter) as its ledger record's id, and returns its id. Its first 30 parameters are
// roundArgs.
func insertRoundSQL(ledgerID string) string {
	return `
	INSERT INTO rounds (
		entry_id, due_at, reason, round_id, started_at, finished_at, coverage, signed,
		unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version,
		server_name, server_version, tool_count, pages, fp_surface, fp_toolset, fp_schema,
		fp_instructions, results, timings, handshake_method, proposed_version,
		login_unauthorized, login_challenge, login_metadata, ledger_id)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ` + ledgerID + `)
	RETURNING id`
}

// roundArgs are the first 30 parameters of insertRoundSQL for the checked round r, in
// d's spelling.
func roundArgs(d dialect, r *Round) []any {
	fpSurface, fpToolset, fpSchema, fpInstructions := fingerprintArgs(r)
	return []any{
		r.EntryID, d.time(r.DueAt), string(r.Reason), r.RoundID, d.time(r.StartedAt), d.time(r.FinishedAt),
		r.Coverage, r.Signed(), r.UnsignedReason, r.Reach, r.HTTPStatus, r.Stop, string(r.Uptime),
		r.RetryAfter.Milliseconds(), r.ProtocolVersion, r.ServerName, r.ServerVersion, r.ToolCount, r.Pages,
		fpSurface, fpToolset, fpSchema, fpInstructions, r.Results, r.Timings, r.HandshakeMethod,
		r.ProposedVersion, r.Login.Unauthorized, r.Login.Challenge, r.Login.Metadata,
	}
}

// fingerprintArgs are r's fingerprints as parameters: NULL (a nil *string, typed for
// PostgreSQL) when the round did not read the tool list.
func fingerprintArgs(r *Round) (surface, toolset, schema, instructions *string) {
	if fp := r.Fingerprints; fp != nil {
		return &fp.Surface, &fp.Toolset, &fp.Schema, &fp.Instructions
	}
	return nil, nil, nil, nil
}

// insertSupplySQL inserts a supply run, with ledgerID (an expression, or ? for one more
// parameter) as its ledger record's id, and returns its id. Its first 7 parameters are
// supplyArgs.
func insertSupplySQL(ledgerID string) string {
	return `
	INSERT INTO supply_runs (entry_id, ran_at, score, verified, latest_version, facts, verdict, ledger_id)
	VALUES (?, ?, ?, ?, ?, ?, ?, ` + ledgerID + `)
	RETURNING id`
}

// supplyArgs are the first 7 parameters of insertSupplySQL for the checked run r.
func supplyArgs(d dialect, r *SupplyRecord) []any {
	return []any{r.EntryID, d.time(r.RanAt), r.Score, r.Verified, r.LatestVersion, r.Facts, r.Verdict}
}
