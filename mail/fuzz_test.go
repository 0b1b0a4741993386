package mail

import (
	"bytes"
	"mime"
	netmail "net/mail"
	"slices"
	"strings"
	"testing"
)

// FuzzBuildHeaders feeds arbitrary values into every header-bound field of a
// Message. Whatever build accepts must render to a message that parses, has
// exactly the expected header fields (no value can add one) and carries the
// recipient and subject unchanged.
//
//	go test ./mail -run '^$' -fuzz FuzzBuildHeaders -fuzztime 30s
func FuzzBuildHeaders(f *testing.F) {
	f.Add("Hello", "ada@example.org", "https://probity.example/u/1", "1", "id@probity.example", "Probity <c.probity.example>")
	f.Add("Hi\r\nBcc: x@example.org", "ada@example.org\r\nBcc: x@example.org", "https://a.example/u\r\nX: y", "v\nX: y", "a@b\r\n", "x <a.b>\r\n")
	f.Add("héllo — wörld, "+strings.Repeat("long words ", 20), "\"Ada, L.\" <ada@example.org>", "http://127.0.0.1:8080/u/x", "ü", "<a@b.example>", "<list.example>")
	f.Add("=?utf-8?q?a=0D=0Ab?=", "=?utf-8?q?A=0D=0ABcc:_x?= <ada@example.org>", "https://a.example/u>, <mailto:x@y", "\x00", "a>@b", "a <b> <c.d>")
	s, err := NewSender(Config{Host: "smtp.example.org", From: "Probity <notify@probity.example>"})
	if err != nil {
		f.Fatal(err)
	}
	base := []string{
		"Auto-Submitted", "Content-Type", "Date", "From", "List-Id", "List-Unsubscribe",
		"List-Unsubscribe-Post", "Message-Id", "Mime-Version", "Subject", "To", "X-Probity-Test",
	}
	f.Fuzz(func(t *testing.T, subject, to, unsub, header, id, listID string) {
		m := Message{
			To: to, Subject: subject, Text: "text", HTML: "<p>html</p>", MessageID: id, ListID: listID,
			ListUnsubscribe: unsub, OneClick: true, Headers: map[string]string{"X-Probity-Test": header},
		}
		raw, rcpt, err := s.build(m)
		if err != nil {
			return
		}
		msg, err := netmail.ReadMessage(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("accepted but unparsable: %v\n%s", err, raw)
		}
		var names []string
		for k := range msg.Header {
			names = append(names, k)
		}
		slices.Sort(names)
		want := base
		if listID == "" {
			want = slices.DeleteFunc(slices.Clone(base), func(s string) bool { return s == "List-Id" })
		}
		if !slices.Equal(names, want) {
			t.Fatalf("header fields %q, want %q\n%s", names, want, raw)
		}
		for k, v := range msg.Header {
			if len(v) != 1 {
				t.Fatalf("%s appears %d times", k, len(v))
			}
		}
		a, err := netmail.ParseAddress(msg.Header.Get("To"))
		if err != nil || a.Address != rcpt {
			t.Fatalf("To = %q (%v), envelope %q", msg.Header.Get("To"), err, rcpt)
		}
		got, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		if err != nil || strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(subject), " ") {
			t.Fatalf("Subject %q decodes to %q (%v)", subject, got, err)
		}
	})
}

// TestHeaderText: text that looks like an encoded word is encoded so that it reads
// back as written, never decoded into something else (here a line break).
func TestHeaderText(t *testing.T) {
	for _, v := range []string{
		"=?utf-8?q?a=0D=0Ab?=",
		"price =?= 5 " + strings.Repeat("ü", 40),
		"plain text", // unchanged
	} {
		enc := headerText(v)
		if !strings.Contains(v, "=?") && enc != v {
			t.Errorf("headerText(%q) = %q, want it unchanged", v, enc)
		}
		for _, w := range strings.Fields(enc) {
			if len(w) > 75 {
				t.Errorf("encoded word %q longer than 75", w)
			}
		}
		got, err := new(mime.WordDecoder).DecodeHeader(enc)
		if err != nil || got != v {
			t.Errorf("headerText(%q) = %q, decodes to %q (%v)", v, enc, got, err)
		}
	}
}
