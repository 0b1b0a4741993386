package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/probity-dev/probity/checks"
)

// allocated returns the bytes f allocates, the least of three runs.
func allocated(f func()) uint64 {
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// TestProbeReportFingerprintsOnce: probity probe reports the fingerprints its checks
// computed, so building the report costs what evaluating the round costs, not a second
// canonicalization of the tool list on top (issue 13: fingerprints computed once).
func TestProbeReportFingerprintsOnce(t *testing.T) {
	tools := make([]json.RawMessage, 2000)
	for i := range tools {
		tools[i] = json.RawMessage(fmt.Sprintf(`{"name":"tool_%d","description":"Returns the records of page %d, ordered by the time they were last changed.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Free-text search query."},"limit":{"type":"integer","minimum":1,"maximum":100}}}}`, i, i))
	}
	obs := &checks.Observation{
		URL:       "https://mcp.example.com/mcp",
		Reach:     checks.Reach{FirstStatus: 200},
		Transport: checks.TransportStreamableHTTP,
		Handshake: checks.Handshake{Method: "initialize", ProposedVersion: "2025-06-18", ProtocolVersion: "2025-06-18", ServerName: "x", ServerVersion: "1"},
		Tools:     checks.ToolsList{Attempted: true, Complete: true, Pages: 1, Tools: tools},
	}
	rep, results := newProbeReport(obs)
	fp, err := checks.Fingerprints(obs)
	if err != nil || fp == nil || rep.Fingerprints == nil || *rep.Fingerprints != *fp {
		t.Fatalf("report fingerprints %+v, want %+v (%v)", rep.Fingerprints, fp, err)
	}
	if len(results) != len(checks.CheckIDs()) || rep.ToolCount != len(tools) {
		t.Fatalf("%d results, %d tools", len(results), rep.ToolCount)
	}
	evaluate := allocated(func() { checks.Evaluate(obs) })
	fingerprints := allocated(func() { checks.Fingerprints(obs) })
	report := allocated(func() { newProbeReport(obs) })
	t.Logf("evaluate %d B (fingerprints alone %d B), report %d B", evaluate, fingerprints, report)
	if report > evaluate+fingerprints/2 {
		t.Errorf("the report allocates %d B, evaluating %d B: the fingerprints (%d B) are computed again", report, evaluate, fingerprints)
	}
}
