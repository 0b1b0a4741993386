package probe

import (
	"fmt"
	"strings"
	"testing"
)

func TestDuplicateMember(t *testing.T) {
	msg := func(result string) []byte { return []byte(`{"jsonrpc":"2.0","id":1,"result":` + result + `}`) }
	tests := []struct {
		name string
		doc  []byte
		kind resultKind
		want string
	}{
		{"clean list", msg(`{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"x"}`), toolsListKind, ""},
		{"same name in two tools", msg(`{"tools":[{"name":"a"},{"name":"a"}]}`), toolsListKind, ""},
		{"tools twice", msg(`{"tools":[],"tools":[{"name":"a"}]}`), toolsListKind, "tools"},
		{"nextCursor twice", msg(`{"tools":[],"nextCursor":"a","nextCursor":"b"}`), toolsListKind, "nextCursor"},
		{"a tool's name twice", msg(`{"tools":[{"name":"a"},{"name":"b","name":"c"}]}`), toolsListKind, "tool.name"},
		{"a tool's description twice", msg(`{"tools":[{"name":"a","description":"x","description":"y"}]}`), toolsListKind, "tool.description"},
		{"deep in a schema", msg(`{"tools":[{"name":"a","inputSchema":{"properties":{"p":{"type":"string","type":"number"}}}}]}`), toolsListKind, "tool.inputSchema"},
		{"an unknown tool member", msg(`{"tools":[{"name":"a","x-evil":1,"x-evil":2}]}`), toolsListKind, "tool.member"},
		{"an unknown result member", msg(`{"tools":[],"z":1,"z":2}`), toolsListKind, "result.member"},
		{"result twice", []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]},"result":{"tools":[{"name":"a"}]}}`), toolsListKind, "result"},
		{"id twice", []byte(`{"jsonrpc":"2.0","id":1,"id":2,"result":{"tools":[]}}`), toolsListKind, "message"},
		{"names equal after NFC", msg("{\"tools\":[{\"name\":\"a\",\"caf\u00e9\":1,\"cafe\u0301\":2}]}"), toolsListKind, "tool.member"},
		{"escaped spelling of the same name", msg(`{"tools":[{"name":"a","n\u0061me":"b"}]}`), toolsListKind, "tool.name"},
		{"instructions twice", msg(`{"protocolVersion":"2025-11-25","instructions":"a","instructions":"b"}`), handshakeKind, "instructions"},
		{"protocolVersion twice", msg(`{"protocolVersion":"2025-11-25","protocolVersion":"2024-11-05"}`), handshakeKind, "protocolVersion"},
		{"serverInfo.name twice", msg(`{"serverInfo":{"name":"a","name":"b"}}`), handshakeKind, "serverInfo.name"},
		{"serverInfo other member", msg(`{"serverInfo":{"name":"a","x":1,"x":2}}`), handshakeKind, "serverInfo.member"},
		{"discover serverInfo name twice", msg(`{"supportedVersions":["2026-07-28"],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a","name":"b"}}}`), handshakeKind, "serverInfo.name"},
		{"capabilities nested", msg(`{"capabilities":{"tools":{"listChanged":true,"listChanged":false}}}`), handshakeKind, "capabilities"},
		{"a lone surrogate is not a duplicate", msg(`{"tools":[{"name":"\ud800"}]}`), toolsListKind, ""},
		{"not JSON", []byte(`{"tools":`), toolsListKind, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := duplicateMember(tt.doc, tt.kind); got != tt.want {
				t.Errorf("duplicateMember(%s) = %q; want %q", tt.doc, got, tt.want)
			}
		})
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
			if duplicateMember(msg, toolsListKind) != "" {
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
