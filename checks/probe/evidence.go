package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
)

// duplicateMember returns the token (see checks.IsMemberToken) of the first member name
// that repeats within one object of the JSON-RPC message msg, a tools/list page or a
// handshake answer, anywhere in it, or "" when no name repeats. Names are compared after Unicode NFC, as attest's
// canonical form compares them. encoding/json, like most parsers, keeps the last of
// repeated members; others keep the first or reject the document, so a message with a
// repeated name means different things to different clients and Probity must not sign
// what it read of it.
func duplicateMember(msg []byte) string {
	// The strict scanner accepts the document only when no name repeats (after NFC); it
	// is fast, and the walk below, which says where, runs only when it refuses.
	if len(msg) == 0 || attest.CheckJSON(msg) == nil {
		return ""
	}
	path, found := repeatedPath(msg)
	if !found {
		return "" // refused for another reason (a lone surrogate, a huge number, depth)
	}
	return memberOf(path)
}

// repeatedPath walks doc and returns the path (member names, "[]" for array elements)
// of the first member whose name repeats an earlier name of the same object.
func repeatedPath(doc []byte) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var found []string
	var walk func(path []string) error
	walk = func(path []string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				nk := norm.NFC.String(k)
				if seen[nk] {
					found = append(slices.Clone(path), k)
					return errFound
				}
				seen[nk] = true
				if err := walk(append(path, k)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(append(path, "[]")); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	err := walk(nil)
	return found, errors.Is(err, errFound)
}

var errFound = errors.New("found")

// memberOf names a repeated member by the path repeatedPath found in a JSON-RPC message:
// by the member's own name where checks signs it (a member of the result, of a tool or
// of serverInfo, the handshake's serverInfo in _meta included), else by its group.
func memberOf(path []string) string {
	if len(path) == 0 || path[0] != "result" {
		return "message"
	}
	if len(path) == 1 {
		return "result"
	}
	sub := path[1:]
	switch {
	case len(sub) == 1:
		return named("", sub[0], "result.member")
	case sub[0] == "tools" && sub[1] == "[]" && len(sub) >= 3:
		return named("tool.", sub[2], "tool.member")
	case sub[0] == "serverInfo":
		return named("serverInfo.", sub[1], "serverInfo.member")
	case sub[0] == "_meta" && sub[1] == "io.modelcontextprotocol/serverInfo" && len(sub) >= 3:
		return named("serverInfo.", sub[2], "serverInfo.member")
	}
	// Deeper in a member of the result (capabilities, a tool's schema's parent list, _meta).
	return named("", sub[0], "result.member")
}

// named is scope+member when that is a token checks signs and member is one name (no
// dot that could make it another scope's), else group.
func named(scope, member, group string) string {
	if tok := scope + member; !strings.Contains(member, ".") && checks.IsMemberToken(tok) {
		return tok
	}
	return group
}

// sseEndpointShown reports whether a GET of the endpoint was answered with an event
// stream whose first event is "endpoint": what the MCP transport spec names as the sign
// of a legacy HTTP+SSE server, whatever its later requests are answered with (a 401
// included).
func (r *round) sseEndpointShown() bool {
	for _, ex := range r.rec.matching(func(e *exchange) bool { return e.Method == http.MethodGet && e.Status == http.StatusOK }) {
		ct, _, _ := mime.ParseMediaType(firstHeader(ex.Exchange, "Content-Type"))
		if ct == "text/event-stream" && firstEventName(ex.Body) == "endpoint" {
			return true
		}
	}
	return false
}

// firstEventName returns the type of the first event of a server-sent event stream that
// is dispatched, one with data ("message" when it names no type), or "" when none is
// complete.
func firstEventName(body []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	name, hasData := "", false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if hasData {
				if name == "" {
					return "message"
				}
				return name
			}
			name = ""
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			// An event whose data is empty is never dispatched (a priming event).
			hasData = hasData || strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ") != ""
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return ""
}
