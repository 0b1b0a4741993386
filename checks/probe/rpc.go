package probe

import (
	"bytes"
	"encoding/json"
	"mime"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/internal/rawjson"
)

// rpcResponse is a JSON-RPC response as Probity reads it from raw bytes, independent of
// what the SDK made of it. Members are matched by their exact names, as MCP clients
// match them: encoding/json's case-insensitive matching would let a server show
// Probity a decoy "Tools" or "ProtocolVersion" that no client reads.
type rpcResponse struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *rpcError
	// Raw is the whole message as received, for duplicateMember.
	Raw []byte
}

type rpcError struct {
	Code int
}

// object decodes a JSON object into its members by exact name, the last of duplicates
// winning as with encoding/json; nil if raw is not an object. The values are views of
// raw (see rawjson.Members), not copies.
func object(raw []byte) map[string]json.RawMessage {
	ms, ok := rawjson.Members(raw)
	if !ok {
		return nil
	}
	m := make(map[string]json.RawMessage, len(ms))
	for _, x := range ms {
		m[x.Name] = x.Value
	}
	return m
}

// decodeResponse reads one JSON-RPC response object.
func decodeResponse(raw []byte) (rpcResponse, bool) {
	m := object(raw)
	if m == nil {
		return rpcResponse{}, false
	}
	r := rpcResponse{ID: m["id"], Result: m["result"], Raw: raw}
	if bytes.Equal(bytes.TrimSpace(r.Result), []byte("null")) {
		r.Result = nil
	}
	if e := object(m["error"]); e != nil {
		r.Error = &rpcError{}
		json.Unmarshal(e["code"], &r.Error.Code)
	}
	return r, true
}

// responseFor finds the JSON-RPC response to request id in a recorded exchange, whose
// body is either one JSON message (or a batch) or a server-sent event stream. It
// returns false when the body holds no such response.
func responseFor(ex checks.Exchange, id string) (rpcResponse, bool) {
	ct, _, _ := mime.ParseMediaType(firstHeader(ex, "Content-Type"))
	var candidates [][]byte
	if ct == "text/event-stream" {
		candidates = sseData(ex.Body)
	} else {
		candidates = [][]byte{ex.Body}
	}
	if ct == "" && bytes.HasPrefix(bytes.TrimSpace(ex.Body), []byte("event:")) {
		candidates = sseData(ex.Body)
	}
	for _, c := range candidates {
		c = bytes.TrimSpace(c)
		var msgs []rpcResponse
		if len(c) > 0 && c[0] == '[' {
			batch, ok := rawjson.Elements(c)
			if !ok {
				continue
			}
			for _, el := range batch {
				if m, ok := decodeResponse(el); ok {
					msgs = append(msgs, m)
				}
			}
		} else if m, ok := decodeResponse(c); ok {
			msgs = []rpcResponse{m}
		}
		for _, m := range msgs {
			if (m.Result != nil || m.Error != nil) && (id == "" || string(m.ID) == id) {
				return m, true
			}
		}
	}
	return rpcResponse{}, false
}

// sseData returns the data of each event in a server-sent event stream (lines end in
// LF, a CR before it dropped). The data of an event of one data line, the usual case,
// is a view of body rather than a copy.
func sseData(body []byte) [][]byte {
	var events [][]byte
	var cur []byte   // the data of the current event, when it has several data lines
	var first []byte // its first data line, a view of body
	lines := 0
	flush := func() {
		switch {
		case lines == 1 && len(first) > 0:
			events = append(events, first[:len(first):len(first)])
		case lines > 1 && len(cur) > 0:
			events = append(events, cur)
		}
		cur, first, lines = nil, nil, 0
	}
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			data := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			lines++
			switch lines {
			case 1:
				first = data
			case 2:
				cur = append(append(append(cur, first...), '\n'), data...)
			default:
				cur = append(append(cur, '\n'), data...)
			}
		}
	}
	flush()
	return events
}

func firstHeader(ex checks.Exchange, name string) string {
	if v := ex.Header[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// toolsPage is the part of a tools/list result Probity reads itself.
type toolsPage struct {
	Tools      []json.RawMessage
	NextCursor string
}

// parseToolsPage reads the raw tools and the next cursor of a tools/list result. Tools
// are kept as the server sent them, malformed ones included.
func parseToolsPage(result json.RawMessage) (toolsPage, bool) {
	m := object(result)
	tools, ok := rawjson.Elements(m["tools"])
	if m == nil || !ok {
		return toolsPage{}, false
	}
	p := toolsPage{Tools: tools}
	if c, ok := m["nextCursor"]; ok && json.Unmarshal(c, &p.NextCursor) != nil {
		return toolsPage{}, false
	}
	return p, true
}

// handshakeResult is the part of an initialize or server/discover result Probity reads,
// by exact member names.
type handshakeResult struct {
	ProtocolVersion   string
	SupportedVersions []string
	Instructions      *string
	ServerName        string
	ServerVersion     string
	HasServerInfo     bool
}

// parseHandshake reads an initialize or server/discover result. For server/discover the
// server's identity is in _meta under io.modelcontextprotocol/serverInfo.
func parseHandshake(result json.RawMessage) (handshakeResult, bool) {
	m := object(result)
	if m == nil {
		return handshakeResult{}, false
	}
	var hr handshakeResult
	json.Unmarshal(m["protocolVersion"], &hr.ProtocolVersion)
	json.Unmarshal(m["supportedVersions"], &hr.SupportedVersions)
	if raw, ok := m["instructions"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			hr.Instructions = &s
		}
	}
	info := object(m["serverInfo"])
	if info == nil {
		info = object(object(m["_meta"])["io.modelcontextprotocol/serverInfo"])
	}
	if info != nil {
		hr.HasServerInfo = true
		json.Unmarshal(info["name"], &hr.ServerName)
		json.Unmarshal(info["version"], &hr.ServerVersion)
	}
	return hr, true
}

// isToolError reports whether a tools/call result is a tool error: its isError member,
// by that exact name, is the JSON literal true.
func isToolError(result json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(object(result)["isError"]), []byte("true"))
}
