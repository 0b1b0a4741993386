package probe

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/internal/rawjson"
)

// A response whose declared length is over the cap is cut at the cap, and a body held
// below the cap is allocated once, at its declared length.
func TestRegressionDeclaredLengthAllocation(t *testing.T) {
	body := appendCapped(nil, []byte("abc"), 1000, 4096)
	if cap(body) != 1000 {
		t.Errorf("a body declaring 1000 bytes got capacity %d", cap(body))
	}
	body = appendCapped(nil, []byte("abc"), 1<<30, 4096)
	if cap(body) != 4096 {
		t.Errorf("a body declaring 1 GiB under a 4 KiB cap got capacity %d", cap(body))
	}
	var grown []byte
	for range 100 {
		grown = appendCapped(grown, make([]byte, 1000), 0, 64<<10)
	}
	if cap(grown) > 128<<10 || len(grown) != 100_000 {
		t.Errorf("grown to len %d cap %d", len(grown), cap(grown))
	}
}

// Snapshots share the recorded bodies instead of copying every body on each call, and
// cannot write into them.
func TestRegressionSnapshotsShareBodies(t *testing.T) {
	rec := &recorder{}
	e := &exchange{Exchange: checks.Exchange{Method: "tools/list"}, body: append(make([]byte, 0, 64), `{"jsonrpc":"2.0"}`...)}
	rec.exchanges = []*exchange{e}
	snap := rec.snapshot()
	last, _ := rec.last("tools/list")
	all := rec.all()
	for name, b := range map[string][]byte{"snapshot": snap[0].Body, "last": last.Body, "all": all[0].Body} {
		if unsafe.SliceData(b) != unsafe.SliceData(e.body) {
			t.Errorf("%s copied the body", name)
		}
		if cap(b) != len(b) {
			t.Errorf("%s: capacity %d past its length %d lets an append write into the body", name, cap(b), len(b))
		}
	}
	if n := testing.AllocsPerRun(100, func() { rec.last("tools/list") }); n > 0 {
		t.Errorf("last allocates %v times", n)
	}
}

// The event filter keeps the events that can answer a request, with LF or CRLF line
// ends, and drops comments, notifications and requests.
func TestEventFilter(t *testing.T) {
	stream := ": keep-alive\n\n" +
		"event: endpoint\r\ndata: /message?sessionId=1\r\n\r\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n\n" +
		"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\n" +
		"data: \"error\":{\"code\":-32601}}\n\n" +
		"data: not json\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}" // incomplete: not kept yet
	want := []string{
		"/message?sessionId=1",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}",
		"not json",
		"{\"jsonrpc\":\"2.0\",\"id\":2,\n\"error\":{\"code\":-32601}}",
	}
	for _, chunk := range []int{1, 3, 7, 64, len(stream)} {
		f := &eventFilter{}
		var body []byte
		for s := stream; len(s) > 0; {
			n := min(chunk, len(s))
			body = f.write(body, []byte(s[:n]), 1<<20, 1<<20)
			s = s[n:]
		}
		var got []string
		for _, d := range sseData(body) {
			got = append(got, string(d))
		}
		for _, w := range want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("chunk %d: event %q not kept; kept %q", chunk, w, got)
			}
		}
		for _, drop := range []string{"keep-alive", "notifications/message", "roots/list", `"id":3`} {
			if bytes.Contains(body, []byte(drop)) {
				t.Errorf("chunk %d: %q kept:\n%s", chunk, drop, body)
			}
		}
	}
}

// rawjson.Members (through object) and rawjson.Elements split JSON into views that decode exactly as encoding/json
// decodes the same input into map[string]json.RawMessage and []json.RawMessage.
func TestRawJSONMatchesEncodingJSON(t *testing.T) {
	objects := []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "d":"x\"y" } `, `{"a":1,"a":2}`,
		`{"\u0074ools":[],"tools":null}`, `{"k\u00e9":true,"n":-1.5e3,"s":"\\"}`,
		"{\"bad\xff\":1}", `{"a":{"b":{"c":[[],{}]}}}`,
		`[]`, `null`, `"s"`, `{"a":}`, `{"a":1`, `{"a":1}x`, ``,
	}
	for _, in := range objects {
		var want map[string]json.RawMessage
		wantOK := json.Unmarshal([]byte(in), &want) == nil && want != nil
		got := object([]byte(in))
		if (got != nil) != wantOK {
			t.Errorf("object(%q): %v, encoding/json ok %v", in, got, wantOK)
			continue
		}
		if wantOK && !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Errorf("object(%q) = %q; encoding/json: %q", in, got, want)
		}
	}
	arrays := []string{`[]`, ` [ 1 , "a]" , {"b":[2]} , [ ] , null ] `, `[1,]`, `{}`, `null`, `[`}
	for _, in := range arrays {
		var want []json.RawMessage
		wantOK := json.Unmarshal([]byte(in), &want) == nil && want != nil
		got, ok := rawjson.Elements([]byte(in))
		if ok != wantOK {
			t.Errorf("elements(%q): ok %v, encoding/json ok %v", in, ok, wantOK)
			continue
		}
		if ok && !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Errorf("elements(%q) = %q; encoding/json: %q", in, got, want)
		}
		for _, v := range got {
			if cap(v) != len(v) {
				t.Errorf("elements(%q): a view with room to append into the input", in)
			}
		}
	}
}

// normalize makes nil and empty raw values comparable.
func normalize[T any](v T) string { b, _ := json.Marshal(v); return string(b) }
