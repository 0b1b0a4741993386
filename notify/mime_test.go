package notify

import (
	"context"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/mail"
	"github.com/probity-dev/probity/mail/sink"
	"github.com/probity-dev/probity/store"
)

// receivedMail is one message as the sink's .eml file holds it, parsed and decoded.
type receivedMail struct {
	header map[string]string // each field decoded (RFC 2047), by canonical name
	text   string            // the text/plain part, decoded, LF line ends
	html   string            // the text/html part, decoded, LF line ends
	raw    string            // the file as received
}

// readEML parses the .eml file the sink wrote: a multipart/alternative message with
// a text/plain and a text/html part, each decoded from its transfer encoding.
func readEML(t *testing.T, file string) receivedMail {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := netmail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	r := receivedMail{header: map[string]string{}, raw: string(raw)}
	var dec mime.WordDecoder
	for name, values := range msg.Header {
		if len(values) != 1 {
			t.Errorf("%s: %d %s fields", file, len(values), name)
		}
		v, err := dec.DecodeHeader(values[0])
		if err != nil {
			t.Errorf("%s: field %s: %v", file, name, err)
		}
		r.header[name] = v
	}
	typ, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || typ != "multipart/alternative" {
		t.Fatalf("%s: Content-Type %q: %v", file, msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart() // decoded below, whatever the encoding
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		ptyp, pparams, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil || !strings.EqualFold(pparams["charset"], "utf-8") {
			t.Errorf("%s: part Content-Type %q: %v", file, p.Header.Get("Content-Type"), err)
		}
		var body io.Reader = p
		switch cte := strings.ToLower(p.Header.Get("Content-Transfer-Encoding")); cte {
		case "quoted-printable":
			body = quotedprintable.NewReader(p)
		case "base64":
			body = base64.NewDecoder(base64.StdEncoding, &newlineDropper{p})
		case "", "7bit", "8bit":
		default:
			t.Fatalf("%s: Content-Transfer-Encoding %q", file, cte)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatalf("%s: %s part: %v", file, ptyp, err)
		}
		s := strings.ReplaceAll(string(b), "\r\n", "\n") // the wire's line ends
		switch ptyp {
		case "text/plain":
			r.text = s
		case "text/html":
			r.html = s
		default:
			t.Errorf("%s: a %s part", file, ptyp)
		}
	}
	if r.text == "" || r.html == "" {
		t.Errorf("%s: text part %d bytes, html part %d bytes", file, len(r.text), len(r.html))
	}
	return r
}

// newlineDropper drops the line breaks of a base64 body.
type newlineDropper struct{ r io.Reader }

func (d *newlineDropper) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	j := 0
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	return j, err
}

// checkNoServerTextReceived fails when a decoded field or part of m holds server text
// or an entry's listed name (mark).
func checkNoServerTextReceived(t *testing.T, m receivedMail, mark string) {
	t.Helper()
	places := map[string]string{"text part": m.text, "html part": m.html}
	for name, v := range m.header {
		places["field "+name] = v
	}
	for place, v := range places {
		for _, s := range append([]string{mark}, serverText...) {
			if strings.Contains(strings.ToLower(v), strings.ToLower(s)) {
				t.Errorf("the %s holds server text %q", place, s)
			}
		}
	}
}

// TestReceivedMIME: the change e-mails as an SMTP server receives them, sent through
// the real mail.Sender to the loopback sink: several entries in one e-mail, and a
// deleted entry; the fields, the links, the parts, and no server text.
func TestReceivedMIME(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		mails, err := sink.Start("127.0.0.1:0", filepath.Join(t.TempDir(), "mail"), sink.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer mails.Close()
		e := newEnv(t, b)
		// The sender as serve wires it (cmd/probity/accounts.go), security "none" to
		// loopback.
		sender, err := mail.NewSender(mail.Config{Host: mails.Host(), Port: mails.Port(), Security: "none",
			From: "Probity test <notify@probity.test>", HeloName: "probity.test", Now: e.clock.Now, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer sender.Close()
		e.svc, err = New(Config{Store: b.st, BaseURL: testBase, Key: testKey, Now: e.clock.Now,
			Sender: SenderFunc(func(ctx context.Context, m Message) error { return sender.Send(ctx, mail.Message(m)) }),
			Settle: time.Minute, DailyHour: 7, Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		const mark = "SERVERTEXT" // in every entry's listed name
		received := func(t *testing.T, n int) receivedMail {
			t.Helper()
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			msgs, err := mails.Wait(wctx, n)
			if err != nil || len(msgs) != n {
				t.Fatalf("%d messages, want %d: %v", len(msgs), n, err)
			}
			return readEML(t, msgs[n-1].File)
		}
		linksFollowed := func(t *testing.T, m receivedMail) {
			t.Helper()
			followed := testBase + "/followed"
			if !strings.Contains(m.text, "\n"+followed+"\n") || !strings.Contains(m.html, `href="`+followed+`"`) ||
				strings.Contains(m.raw, "#ch-") || strings.Contains(m.raw, "/history") {
				t.Errorf("links: not the Followed page alone:\n%s\n%s", m.text, m.html)
			}
		}

		acct := e.account("several@example.com")
		a := e.entry("mime-a", mark+"-<script>alert(1)</script> A")
		c := e.entry("mime-c", mark+"-<b>C</b>")
		e.follow(acct, a)
		e.follow(acct, c)
		e.clock.Add(time.Minute)
		e.tools(a, []string{"secret_tool_alpha"}, []string{"secret_tool_alpha", "secret_tool_beta"})
		e.version(c, "1.0.0", "2.0.0", "2.0.0")
		e.clock.Add(2 * time.Minute)
		e.cycle()
		m := received(t, 1)

		t.Run("several entries", func(t *testing.T) {
			h := m.header
			if !strings.Contains(h["To"], "several@example.com") || !strings.Contains(h["From"], "notify@probity.test") ||
				!strings.Contains(h["Subject"], "2 followed entries changed") || h["Date"] == "" || h["Mime-Version"] != "1.0" {
				t.Errorf("fields: %q", h)
			}
			for _, want := range []string{a.Slug + ": 1 tool added", c.Slug + ": version 1.0.0 → 2.0.0"} {
				if !strings.Contains(m.text, "- "+want+"\n") {
					t.Errorf("the text part does not say %q:\n%s", want, m.text)
				}
			}
			for _, want := range []string{"<strong>" + a.Slug + "</strong>: 1 tool added", "<strong>" + c.Slug + "</strong>: version 1.0.0 → 2.0.0"} {
				if !strings.Contains(m.html, want) {
					t.Errorf("the html part does not say %q:\n%s", want, m.html)
				}
			}
			linksFollowed(t, m)
			if !strings.HasPrefix(h["Message-Id"], "<probity.") || !strings.HasSuffix(h["Message-Id"], "@probity.test>") ||
				h["List-Id"] != "Probity change e-mails <changes.probity.test>" || h["List-Unsubscribe-Post"] != "List-Unsubscribe=One-Click" {
				t.Errorf("fields: Message-ID %q List-Id %q List-Unsubscribe-Post %q", h["Message-Id"], h["List-Id"], h["List-Unsubscribe-Post"])
			}
			unsub := h["List-Unsubscribe"]
			prefix, suffix := "<"+testBase+"/unsubscribe/", "/one-click>"
			if !strings.HasPrefix(unsub, prefix) || !strings.HasSuffix(unsub, suffix) || len(unsub) <= len(prefix)+len(suffix) {
				t.Fatalf("List-Unsubscribe %q", unsub)
			}
			// The one-click token turns the e-mails off and keeps the follows.
			tok := strings.TrimSuffix(strings.TrimPrefix(unsub, prefix), suffix)
			if err := e.svc.OneClick(ctx, tok); err != nil {
				t.Fatal(err)
			}
			st, err := b.st.NotifySettings(ctx, acct)
			if err != nil || st.Mode != store.MailOff || st.Follows != 2 {
				t.Errorf("after one click: %+v, %v", st, err)
			}
			for _, en := range []store.Entry{a, c} {
				if following, err := e.svc.Following(ctx, acct, en.ID); !following || err != nil {
					t.Errorf("after one click, %s no longer followed: %v", en.Slug, err)
				}
			}
			checkNoServerTextReceived(t, m, mark)
		})

		t.Run("a deleted entry", func(t *testing.T) {
			acct := e.account("gone@example.com")
			d := e.entry("mime-gone", mark+"-<i>D</i>")
			e.follow(acct, d)
			e.clock.Add(time.Minute)
			if err := b.st.DeleteEntry(ctx, d.Slug, "removed by its operator"); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(2 * time.Minute)
			e.cycle()
			m := received(t, 2)
			if !strings.Contains(m.header["To"], "gone@example.com") || !strings.Contains(m.header["Subject"], d.Slug+" was removed from the directory") ||
				!strings.Contains(m.text, "Removed from the directory") || !strings.Contains(m.text, "- "+d.Slug+"\n") ||
				!strings.Contains(m.html, "<strong>"+d.Slug+"</strong>") || strings.Contains(m.text, "Changes to entries") {
				t.Errorf("e-mail: %q\n%s\n%s", m.header, m.text, m.html)
			}
			linksFollowed(t, m)
			checkNoServerTextReceived(t, m, mark)
		})
		if n := len(mails.Messages()); n != 2 {
			t.Errorf("the sink received %d messages, want 2", n)
		}
		if sent := e.sender.take(); len(sent) != 0 {
			t.Errorf("the fake sender got %d messages", len(sent))
		}
	})
}
