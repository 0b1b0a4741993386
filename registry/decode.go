package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Refusals of a page. Each is matched with errors.Is; the error a walk returns is a
// *PageError wrapping one of them (or a *StatusError, or the context's error).
var (
	// ErrPageTooLarge: the page body exceeded Config.MaxPageBytes.
	ErrPageTooLarge = errors.New("registry: page too large")
	// ErrTooManyServers: the page held more items than Config.MaxServersPerPage.
	ErrTooManyServers = errors.New("registry: too many servers on one page")
	// ErrCursorLoop: the registry answered a cursor this walk had already requested.
	ErrCursorLoop = errors.New("registry: cursor loop")
	// ErrTooManyPages: the walk reached Config.MaxPages with more pages to come.
	ErrTooManyPages = errors.New("registry: too many pages")
	// ErrMalformedPage: the answer was not JSON, or not a list of servers.
	ErrMalformedPage = errors.New("registry: malformed page")
	// ErrRateLimited: the registry asked to wait longer than the client's bounds allow.
	ErrRateLimited = errors.New("registry: rate limited")
)

// Schema limits the decoder enforces (schema/server.schema.json, ServerDetail), and
// the longest cursor it echoes back.
const (
	maxNameLength    = 200
	maxVersionLength = 255
	maxCursorLength  = 1024
)

// namePattern is the schema's pattern for a server name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// listJSON is a ServerList with its items left undecoded, so their number is checked
// before any is decoded.
type listJSON struct {
	Servers  *[]json.RawMessage `json:"servers"`
	Metadata *struct {
		NextCursor *string `json:"nextCursor"`
		Count      *int    `json:"count"`
	} `json:"metadata"`
}

// itemJSON is a ServerResponse.
type itemJSON struct {
	Server json.RawMessage `json:"server"`
	Meta   json.RawMessage `json:"_meta"`
}

// metaJSON is the part of an item's _meta the decoder reads.
type metaJSON struct {
	Official *Official `json:"io.modelcontextprotocol.registry/official"`
}

// malformed returns an ErrMalformedPage error saying why.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedPage, fmt.Sprintf(format, args...))
}

// DecodePage decodes one list response body: its entries and its next cursor ("" on
// the last page). It refuses a body that is not one JSON object, a list of more than
// maxServers items (checked before any item is decoded), an item whose server lacks a
// valid name or a version, an unknown status, a metadata.count that disagrees with the
// items, and a cursor longer than 1 KiB. Unknown fields are ignored. Entries' Raw and
// Meta are copies; body may be reused afterwards.
func DecodePage(body []byte, maxServers int) ([]Entry, string, error) {
	var list listJSON
	if err := json.Unmarshal(body, &list); err != nil {
		if _, ok := errors.AsType[*json.SyntaxError](err); ok || len(bytes.TrimSpace(body)) == 0 {
			return nil, "", malformed("not JSON: %v", err)
		}
		return nil, "", malformed("not a server list: %v", err)
	}
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return nil, "", malformed("not a JSON object")
	}
	if list.Servers == nil {
		return nil, "", malformed(`no "servers" array`)
	}
	items := *list.Servers
	if len(items) > maxServers {
		return nil, "", fmt.Errorf("%w: %d items, at most %d allowed", ErrTooManyServers, len(items), maxServers)
	}
	var next string
	if m := list.Metadata; m != nil {
		if m.Count != nil && *m.Count != len(items) {
			return nil, "", malformed("metadata.count is %d but the page holds %d items", *m.Count, len(items))
		}
		if m.NextCursor != nil {
			next = *m.NextCursor
		}
	}
	if len(next) > maxCursorLength {
		return nil, "", malformed("nextCursor is %d bytes, longer than %d", len(next), maxCursorLength)
	}
	if !utf8.ValidString(next) {
		return nil, "", malformed("nextCursor is not UTF-8")
	}
	entries := make([]Entry, 0, len(items))
	for i, raw := range items {
		e, err := decodeItem(raw)
		if err != nil {
			return nil, "", fmt.Errorf("item %d: %w", i, err)
		}
		entries = append(entries, e)
	}
	return entries, next, nil
}

// decodeItem decodes one ServerResponse.
func decodeItem(raw json.RawMessage) (Entry, error) {
	var item itemJSON
	if err := json.Unmarshal(raw, &item); err != nil {
		return Entry{}, malformed("not a server response: %v", err)
	}
	if len(item.Server) == 0 || item.Server[0] != '{' {
		return Entry{}, malformed(`no "server" object`)
	}
	var e Entry
	if err := json.Unmarshal(item.Server, &e.Server); err != nil {
		return Entry{}, malformed("server: %v", err)
	}
	s := &e.Server
	if len(s.Name) < 3 || len(s.Name) > maxNameLength || !namePattern.MatchString(s.Name) {
		return Entry{}, malformed("server name %s is not namespace/name", quote(s.Name))
	}
	if s.Version == "" || len(s.Version) > maxVersionLength {
		return Entry{}, malformed("server %s: version missing or longer than %d bytes", s.Name, maxVersionLength)
	}
	e.Raw = item.Server // json.RawMessage copies what it decodes: body is not retained
	if len(item.Meta) > 0 && !bytes.Equal(item.Meta, []byte("null")) {
		if item.Meta[0] != '{' {
			return Entry{}, malformed("server %s %s: _meta is not an object", s.Name, quote(s.Version))
		}
		var meta metaJSON
		if err := json.Unmarshal(item.Meta, &meta); err != nil {
			return Entry{}, malformed("server %s %s: _meta: %v", s.Name, quote(s.Version), err)
		}
		if o := meta.Official; o != nil {
			switch o.Status {
			case "", StatusActive, StatusDeprecated, StatusDeleted:
			default:
				return Entry{}, malformed("server %s %s: unknown status %s", s.Name, quote(s.Version), quote(string(o.Status)))
			}
			e.Official = o
		}
		e.Meta = item.Meta
	}
	return e, nil
}

// quote quotes s for an error message, clipped to 64 bytes: server names and
// statuses come from the registry.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Sprintf("%q", s)
}
