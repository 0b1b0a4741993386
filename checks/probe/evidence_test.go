package probe

import (
	"fmt"
	"strings"
	"testing"

	"github.com/probity-dev/probity/checks"
)

func TestDuplicateMember(t *testing.T) {
	msg := func(result string) []byte { return []byte(`{"jsonrpc":"2.0","id":1,"result":` + result + `}`) }
	tests := []struct {
		name string
		doc  []byte
		want string
	}{
		{"clean list", msg(`{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"x"}`), ""},
		{"same name in two tools", msg(`{"tools":[{"name":"a"},{"name":"a"}]}`), ""},
		{"tools twice", msg(`{"tools":[],"tools":[{"name":"a"}]}`), "tools"},
		{"nextCursor twice", msg(`{"tools":[],"nextCursor":"a","nextCursor":"b"}`), "nextCursor"},
		{"a tool's name twice", msg(`{"tools":[{"name":"a"},{"name":"b","name":"c"}]}`), "tool.name"},
		{"a tool's description twice", msg(`{"tools":[{"name":"a","description":"x","description":"y"}]}`), "tool.description"},
		{"deep in a schema", msg(`{"tools":[{"name":"a","inputSchema":{"properties":{"p":{"type":"string","type":"number"}}}}]}`), "tool.inputSchema"},
		{"an unknown tool member", msg(`{"tools":[{"name":"a","x-evil":1,"x-evil":2}]}`), "tool.member"},
		{"an unknown result member", msg(`{"tools":[],"z":1,"z":2}`), "result.member"},
		{"result twice", []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]},"result":{"tools":[{"name":"a"}]}}`), "result"},
		{"id twice", []byte(`{"jsonrpc":"2.0","id":1,"id":2,"result":{"tools":[]}}`), "message"},
		{"names equal after NFC", msg("{\"tools\":[{\"name\":\"a\",\"caf\u00e9\":1,\"cafe\u0301\":2}]}"), "tool.member"},
		{"escaped spelling of the same name", msg(`{"tools":[{"name":"a","n\u0061me":"b"}]}`), "tool.name"},
		{"instructions twice", msg(`{"protocolVersion":"2025-11-25","instructions":"a","instructions":"b"}`), "instructions"},
		{"protocolVersion twice", msg(`{"protocolVersion":"2025-11-25","protocolVersion":"2024-11-05"}`), "protocolVersion"},
		{"serverInfo.name twice", msg(`{"serverInfo":{"name":"a","name":"b"}}`), "serverInfo.name"},
		{"serverInfo other member", msg(`{"serverInfo":{"name":"a","x":1,"x":2}}`), "serverInfo.member"},
		{"discover serverInfo name twice", msg(`{"supportedVersions":["2026-07-28"],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a","name":"b"}}}`), "serverInfo.name"},
		{"capabilities nested", msg(`{"capabilities":{"tools":{"listChanged":true,"listChanged":false}}}`), "capabilities"},
		{"a lone surrogate is not a duplicate", msg(`{"tools":[{"name":"\ud800"}]}`), ""},
		{"not JSON", []byte(`{"tools":`), ""},
		{"a dotted name is no scope", msg(`{"tools":[],"tool.name":1,"tool.name":2}`), "result.member"},
		{"serverInfo twice", msg(`{"serverInfo":{"name":"a"},"serverInfo":{"name":"b"}}`), "serverInfo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := duplicateMember(tt.doc); got != tt.want {
				t.Errorf("duplicateMember(%s) = %q; want %q", tt.doc, got, tt.want)
			}
		})
	}
}

// Every group a repeated member can be named by is a token checks signs.
func TestMemberGroupsSigned(t *testing.T) {
	for _, g := range []string{"message", "result", "result.member", "tool.member", "serverInfo.member"} {
		if !checks.IsMemberToken(g) {
			t.Errorf("%s is not a token checks signs", g)
		}
	}
}

func TestFirstEventName(t *testing.T) {
	tests := map[string]string{
		"event: endpoint\ndata: /messages?s=1\n\n":                     "endpoint",
		"id: 1\ndata: \n\nevent: endpoint\ndata: /m\n\n":               "endpoint", // a priming event is never dispatched
		"data: {\"jsonrpc\":\"2.0\"}\n\nevent: endpoint\ndata: /m\n\n": "message",
		"event: endpoint\r\ndata: /m\r\n\r\n":                          "endpoint",
		"event: endpoint\ndata: /m":                                    "", // not complete
		"":                                                             "",
	}
	for body, want := range tests {
		if got := firstEventName([]byte(body)); got != want {
			t.Errorf("firstEventName(%q) = %q; want %q", body, got, want)
		}
	}
}

// BenchmarkDuplicateMember measures the repeated-name check on a clean page of 2,000
// tools (about 1 MiB), next to reading the page, which every page costs anyway.
func BenchmarkDuplicateMember(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)
	for i := range 2000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"name":"tool_%04d","description":"%s","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"A path."}},"required":["path"]}}`, i, strings.Repeat("Reads a file. ", 30))
	}
	sb.WriteString(`]}}`)
	msg := []byte(sb.String())
	b.Run("duplicateMember", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if duplicateMember(msg) != "" {
				b.Fatal("a clean page has a repeated member")
			}
		}
	})
	b.Run("parseToolsPage", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			resp, _ := decodeResponse(msg)
			if _, ok := parseToolsPage(resp.Result); !ok {
				b.Fatal("page not parsed")
			}
		}
	})
}
