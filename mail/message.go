package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	netmail "net/mail"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-msgauth/dkim"
	gomail "github.com/wneessen/go-mail"
)

// Message is one e-mail to one recipient. Every field is checked before anything is
// sent: a value that could add or end a header field (CR or LF, other control
// characters) or that is too long is refused with an error matching ErrPermanent.
type Message struct {
	// To is the one recipient: "ada@example.org" or "Ada <ada@example.org>".
	// The address must be ASCII (no SMTPUTF8).
	To string
	// Subject is UTF-8 text, at most 900 bytes; non-ASCII (and text that would
	// read as an encoded word, "=?") is encoded (RFC 2047).
	Subject string
	// Text is the text/plain part; it must not be empty.
	Text string
	// HTML is the text/html alternative; empty sends the text part alone. The
	// caller escapes every value it puts into it.
	HTML string
	// MessageID is "left@right" (angle brackets optional), at most 250 bytes of
	// printable ASCII; empty generates a random one on the From domain. The outbox
	// passes its own, so that a message sent twice can be recognised.
	MessageID string
	// ListID is the List-Id field (RFC 2919), ASCII, like
	// "Probity changes <changes.probity.example>"; empty leaves it out.
	ListID string
	// ListUnsubscribe is one URL for the List-Unsubscribe field (RFC 2369): https,
	// or http to a loopback host (tests, the demo); empty leaves it out.
	ListUnsubscribe string
	// OneClick adds "List-Unsubscribe-Post: List-Unsubscribe=One-Click" (RFC 8058):
	// a POST to ListUnsubscribe unsubscribes without a page. It needs ListUnsubscribe.
	OneClick bool
	// Date is the Date field; zero means the sender's clock (Config.Now).
	Date time.Time
	// Headers are further header fields, at most 20, such as "X-Probity-Entries".
	// Names are letters, digits and '-'; the fields Send sets itself (From, To,
	// Subject, Date, Message-ID, MIME-Version, Auto-Submitted, Content-*, List-*,
	// DKIM-*, …) cannot be replaced here.
	Headers map[string]string
}

// Bounds of a Message.
const (
	maxHeaderValue = 900 // RFC 5322 section 2.1.1: a line is at most 998 characters, the name included
	maxMessageID   = 250
	maxURL         = 900     // List-Unsubscribe is one unfolded line
	maxBody        = 1 << 20 // each of Text and HTML
	maxHeaders     = 20
	maxHeaderName  = 76
	maxAddress     = 254 // RFC 5321 section 4.5.3.1.3: a path is at most 256 octets with its brackets
)

// reservedHeaders are set by Send itself; Message.Headers cannot replace them.
var reservedHeaders = map[string]bool{
	"from": true, "sender": true, "to": true, "cc": true, "bcc": true, "reply-to": true,
	"subject": true, "date": true, "message-id": true, "mime-version": true,
	"auto-submitted": true, "return-path": true, "received": true, "user-agent": true,
	"x-mailer": true, "in-reply-to": true, "references": true,
}

var reservedPrefixes = []string{"content-", "list-", "dkim-", "arc-", "resent-"}

// invalid describes what is wrong with a value. build adds ErrPermanent: a
// Message that is invalid now will be invalid at every retry.
func invalid(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// checkText refuses header text that could end the field (CR, LF) or that is
// not plain text (other control characters, invalid UTF-8), or that is too long.
func checkText(field, v string, max int) error {
	if len(v) > max {
		return invalid("the %s is %d bytes long, more than %d", field, len(v), max)
	}
	if !utf8.ValidString(v) {
		return invalid("the %s is not valid UTF-8", field)
	}
	for _, r := range v {
		switch {
		case r == '\r' || r == '\n':
			return invalid("the %s contains a line break (CR or LF), which would start a new header field; refused", field)
		case r < 0x20 && r != '\t', r == 0x7f, r >= 0x80 && r < 0xa0:
			return invalid("the %s contains the control character %U", field, r)
		}
	}
	return nil
}

// checkASCII is checkText for fields that must be printable ASCII.
func checkASCII(field, v string, max int) error {
	if err := checkText(field, v, max); err != nil {
		return err
	}
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return invalid("the %s must be ASCII", field)
		}
	}
	return nil
}

// parseAddress parses one address ("a@example.org" or "Name <a@example.org>") and
// keeps only what SMTP can carry without quoting or SMTPUTF8: an ASCII dot-atom
// local part and a domain name.
func parseAddress(field, s string) (*netmail.Address, error) {
	if err := checkText(field, s, maxHeaderValue); err != nil {
		return nil, err
	}
	a, err := netmail.ParseAddress(s)
	if err != nil {
		return nil, invalid("the %s %q is not an e-mail address: %v", field, clip(s), err)
	}
	if len(a.Address) > maxAddress {
		return nil, invalid("the %s address is %d bytes long, more than %d", field, len(a.Address), maxAddress)
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at <= 0 {
		return nil, invalid("the %s %q has no local part", field, clip(s))
	}
	local, domain := a.Address[:at], a.Address[at+1:]
	if !isDotAtom(local) {
		return nil, invalid("the %s %q has a local part that needs quoting or is not ASCII; only letters, digits, dots and !#$%%&'*+/=?^_`{|}~- are sent", field, clip(s))
	}
	if !isDomain(domain) {
		return nil, invalid("the %s %q has no valid ASCII domain name", field, clip(s))
	}
	if err := checkText(field+" name", a.Name, maxHeaderValue); err != nil {
		return nil, err
	}
	return a, nil
}

func isAtext(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$%&'*+/=?^_`{|}~-", c) >= 0
}

// isDotAtom reports whether s is an RFC 5322 dot-atom: atext runs separated by
// single dots.
func isDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '.' && !isAtext(s[i]) {
			return false
		}
	}
	return true
}

// isLabel reports whether s is one DNS label of letters, digits, '-' and '_'.
func isLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// isDomain reports whether s is an ASCII domain name of at least two labels, or
// "localhost".
func isDomain(s string) bool {
	if s == "localhost" {
		return true
	}
	if len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !isLabel(l) {
			return false
		}
	}
	return true
}

// checkMessageID returns id without angle brackets after checking it is
// "left@right" of printable ASCII without specials that would break the field.
func checkMessageID(id string) (string, error) {
	if err := checkASCII("Message-ID", id, maxMessageID); err != nil {
		return "", err
	}
	id = strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">")
	at := strings.IndexByte(id, '@')
	if at <= 0 || at == len(id)-1 || strings.Count(id, "@") != 1 {
		return "", invalid("the Message-ID %q is not left@right", clip(id))
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || strings.IndexByte(`<>()[]\",;:`, c) >= 0 {
			return "", invalid("the Message-ID %q contains %q; use letters, digits and .-_+=@", clip(id), c)
		}
	}
	return id, nil
}

// checkListID checks a List-Id value: an optional ASCII phrase and "<list.id>"
// (RFC 2919).
func checkListID(v string) error {
	if err := checkASCII("List-Id", v, maxHeaderValue); err != nil {
		return err
	}
	open := strings.LastIndexByte(v, '<')
	if open < 0 || !strings.HasSuffix(v, ">") {
		return invalid("the List-Id %q does not end in <list-id>, like \"Probity changes <changes.probity.example>\"", clip(v))
	}
	id := v[open+1 : len(v)-1]
	if !isDotAtom(id) || !strings.Contains(id, ".") {
		return invalid("the List-Id %q has no dotted list identifier between < and >", clip(v))
	}
	if strings.ContainsAny(v[:open], "<>") {
		return invalid("the List-Id %q has more than one <", clip(v))
	}
	return nil
}

// checkUnsubscribeURL allows https, and http only to a loopback host (tests and
// the demo). The URL goes into the field between angle brackets, so it may hold no
// spaces, brackets, quotes or commas.
func checkUnsubscribeURL(v string) error {
	if err := checkASCII("List-Unsubscribe URL", v, maxURL); err != nil {
		return err
	}
	if strings.ContainsAny(v, " \t<>\",") {
		return invalid("the List-Unsubscribe URL %q contains a space, bracket, quote or comma", clip(v))
	}
	u, err := url.Parse(v)
	if err != nil {
		return invalid("the List-Unsubscribe URL %q does not parse: %v", clip(v), err)
	}
	if u.User != nil || u.Host == "" || u.Fragment != "" {
		return invalid("the List-Unsubscribe URL %q must be an absolute URL without user info or fragment", clip(v))
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return invalid("the List-Unsubscribe URL %q is http; only https is allowed outside loopback (RFC 8058 one-click needs https)", clip(v))
		}
	default:
		return invalid("the List-Unsubscribe URL %q must be https", clip(v))
	}
	return nil
}

// checkHeaders checks the extra fields and returns their names in canonical form,
// sorted.
func checkHeaders(h map[string]string) ([]string, error) {
	if len(h) > maxHeaders {
		return nil, invalid("%d extra header fields, more than %d", len(h), maxHeaders)
	}
	names := make([]string, 0, len(h))
	for name, v := range h {
		if name == "" || len(name) > maxHeaderName {
			return nil, invalid("the header field name %q is empty or longer than %d bytes", clip(name), maxHeaderName)
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return nil, invalid("the header field name %q may hold only letters, digits and '-'", clip(name))
			}
		}
		lower := strings.ToLower(name)
		if reservedHeaders[lower] {
			return nil, invalid("the header field %q is set by the sender itself; use the Message field instead", name)
		}
		for _, p := range reservedPrefixes {
			if strings.HasPrefix(lower, p) {
				return nil, invalid("header fields starting with %q are set by the sender itself", p)
			}
		}
		if err := checkText("header field "+name, v, maxHeaderValue); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// isLoopbackHost reports whether host is "localhost" or a loopback IP literal.
// Other names are not resolved: a name is only as trustworthy as its DNS answer.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}

// clip shortens text quoted in an error to 64 bytes.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	s = s[:64]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// headerText returns v as it should go to go-mail: unchanged, unless it contains
// "=?", which a mail reader would take for the start of an RFC 2047 encoded word
// (and decode, possibly into line breaks); then the whole value is Q-encoded so
// that it reads back exactly as v.
func headerText(v string) string {
	if !strings.Contains(v, "=?") {
		return v
	}
	const prefix, suffix = "=?UTF-8?q?", "?="
	const maxWord = 75 - len(prefix) - len(suffix) // RFC 2047 section 2
	var out, word strings.Builder
	flush := func() {
		if out.Len() > 0 {
			out.WriteByte(' ')
		}
		out.WriteString(prefix + word.String() + suffix)
		word.Reset()
	}
	for _, r := range v {
		var buf [utf8.UTFMax]byte
		var enc strings.Builder
		for _, b := range buf[:utf8.EncodeRune(buf[:], r)] {
			switch {
			case b == ' ':
				enc.WriteByte('_')
			case 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("!*+-/", b) >= 0:
				enc.WriteByte(b)
			default:
				fmt.Fprintf(&enc, "=%02X", b)
			}
		}
		if word.Len()+enc.Len() > maxWord {
			flush()
		}
		word.WriteString(enc.String())
	}
	flush()
	return out.String()
}

// newMessageID returns a random Message-ID on domain: 20 random bytes, base32.
func newMessageID(domain string) string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])) + "@" + domain
}

// checked is what check derives from a Message.
type checked struct {
	to    *netmail.Address
	id    string
	names []string
	date  time.Time
}

// check validates every field of m.
func (s *Sender) check(m Message) (checked, error) {
	var c checked
	var err error
	if c.to, err = parseAddress("recipient (To)", m.To); err != nil {
		return c, err
	}
	if err := checkText("Subject", m.Subject, maxHeaderValue); err != nil {
		return c, err
	}
	if strings.TrimSpace(m.Subject) == "" {
		return c, errors.New("the Subject is empty")
	}
	if m.Text == "" {
		return c, errors.New("the text part is empty; every message needs one")
	}
	for _, p := range []struct{ name, v string }{{"text part", m.Text}, {"HTML part", m.HTML}} {
		if len(p.v) > maxBody {
			return c, fmt.Errorf("the %s is %d bytes long, more than %d", p.name, len(p.v), maxBody)
		}
		if !utf8.ValidString(p.v) {
			return c, fmt.Errorf("the %s is not valid UTF-8", p.name)
		}
	}
	c.id = m.MessageID
	if c.id == "" {
		c.id = newMessageID(s.fromDomain)
	} else if c.id, err = checkMessageID(c.id); err != nil {
		return c, err
	}
	if m.ListID != "" {
		if err := checkListID(m.ListID); err != nil {
			return c, err
		}
	}
	if m.ListUnsubscribe != "" {
		if err := checkUnsubscribeURL(m.ListUnsubscribe); err != nil {
			return c, err
		}
	} else if m.OneClick {
		return c, errors.New("OneClick needs a ListUnsubscribe URL")
	}
	if c.names, err = checkHeaders(m.Headers); err != nil {
		return c, err
	}
	c.date = m.Date
	if c.date.IsZero() {
		c.date = s.now()
	}
	return c, nil
}

// build checks m and renders it as a MIME message (CRLF line ends), DKIM-signed when
// a key is configured. It returns the bytes and the envelope recipient.
func (s *Sender) build(m Message) ([]byte, string, error) {
	c, err := s.check(m)
	if err != nil {
		return nil, "", fmt.Errorf("mail: %w: %w", err, ErrPermanent)
	}
	to, id, names, date := c.to, c.id, c.names, c.date

	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	msg.FromMailAddress(s.from)
	msg.ToMailAddress(to)
	msg.Subject(headerText(m.Subject))
	msg.SetMessageIDWithValue(id)
	msg.SetDateWithValue(date)
	// RFC 3834: an automatic message; vacation responders must not answer it.
	msg.SetGenHeader("Auto-Submitted", "auto-generated")
	if m.ListID != "" {
		msg.SetGenHeaderPreformatted("List-Id", m.ListID)
	}
	if m.ListUnsubscribe != "" {
		msg.SetGenHeaderPreformatted(gomail.HeaderListUnsubscribe, "<"+m.ListUnsubscribe+">")
		if m.OneClick {
			msg.SetGenHeaderPreformatted(gomail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
		}
	}
	for _, name := range names {
		msg.SetGenHeader(gomail.Header(name), headerText(m.Headers[name]))
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	var buf bytes.Buffer
	buf.Grow(2*len(m.Text) + 2*len(m.HTML) + 2048)
	if _, err := msg.WriteTo(&buf); err != nil {
		return nil, "", fmt.Errorf("mail: couldn't render the message: %w", err)
	}
	if s.dkim == nil {
		return buf.Bytes(), to.Address, nil
	}
	var signed bytes.Buffer
	signed.Grow(buf.Len() + 1024)
	opts := *s.dkim
	if err := dkim.Sign(&signed, &buf, &opts); err != nil {
		return nil, "", fmt.Errorf("mail: couldn't DKIM-sign the message: %w", err)
	}
	return signed.Bytes(), to.Address, nil
}
