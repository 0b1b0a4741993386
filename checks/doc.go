// Package checks holds Probity's check catalog and the pure checks that turn the
// Observation of one probe round into exactly one Result per catalog check, in catalog
// order. Gathering the Observation from a live endpoint is checks/probe's job; nothing
// here does I/O.
//
// The catalog (Catalog, SuiteVersion, SuiteDigest) is data: every check declares the
// statuses and reason keys it can give, each with typed parameters (KindInt, KindToken,
// KindBool) and a plain-English sentence that Describe fills in. Evaluate runs the
// checks and decides the round's coverage; Statement builds the in-toto statement of a
// signed round; Fingerprints gives the tool-list fingerprints the statement pins.
//
// Signed reasons carry only numbers, booleans and constant tokens of this suite, never
// server-supplied text. What a check found in server text goes into its Evidence,
// escaped and bounded, which is stored but never signed.
package checks
