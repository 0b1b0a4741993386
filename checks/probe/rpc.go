package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"mime"
	"strings"

	"github.com/probity-dev/probity/checks"
)

// rpcResponse is a JSON-RPC response as Probity reads it from raw bytes, independent of
// what the SDK made of it.
type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
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
			if json.Unmarshal(c, &msgs) != nil {
				continue
			}
		} else {
			var m rpcResponse
			if json.Unmarshal(c, &m) != nil {
				continue
			}
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

// sseData returns the data of each event in a server-sent event stream.
func sseData(body []byte) [][]byte {
	var events [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, min(len(body)+1, 64<<10)), len(body)+1)
	flush := func() {
		if cur.Len() > 0 {
			events = append(events, bytes.Clone(cur.Bytes()))
			cur.Reset()
		}
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			if cur.Len() > 0 {
				cur.WriteByte('\n')
			}
			cur.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
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
	var page struct {
		Tools      *[]json.RawMessage `json:"tools"`
		NextCursor *string            `json:"nextCursor"`
	}
	if json.Unmarshal(result, &page) != nil || page.Tools == nil {
		return toolsPage{}, false
	}
	p := toolsPage{Tools: *page.Tools}
	if page.NextCursor != nil {
		p.NextCursor = *page.NextCursor
	}
	return p, true
}

// handshakeResult is the part of an initialize or server/discover result Probity reads.
type handshakeResult struct {
	ProtocolVersion   string   `json:"protocolVersion"`
	SupportedVersions []string `json:"supportedVersions"`
	Instructions      *string  `json:"instructions"`
	ServerInfo        *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Meta map[string]json.RawMessage `json:"_meta"`
}
