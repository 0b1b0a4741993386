// Package checks holds Probity's check catalog and the pure checks that turn the
// Observation of one probe round into exactly one Result per catalog check, in catalog
// order. Gathering the Observation from a live endpoint is checks/probe's job; nothing
// here does I/O.
package checks
