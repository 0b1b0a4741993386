package notify

import (
	"context"
	"fmt"
	htmltemplate "html/template"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/store"
)

// Message is one e-mail to send, the fields of package mail's Message (the wiring
// copies them one to one).
type Message struct {
	To      string
	Subject string
	Text    string
	HTML    string
	// MessageID is the Message-ID header, "<…@host>", the same on every attempt.
	MessageID string
	// ListID is the List-Id header (RFC 2919).
	ListID string
	// ListUnsubscribe is the List-Unsubscribe URL (without angle brackets); OneClick
	// adds List-Unsubscribe-Post: List-Unsubscribe=One-Click (RFC 8058).
	ListUnsubscribe string
	OneClick        bool
	Date            time.Time
	Headers         map[string]string
}

// Sender sends e-mails. Send returns once the receiving server accepted the message
// (its reply to the end of DATA), or an error; a permanent refusal (SMTP 5xx) must be
// recognizable by Config.IsPermanent. Send must be safe for concurrent use.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// SenderFunc adapts a function to Sender.
type SenderFunc func(ctx context.Context, m Message) error

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, m Message) error { return f(ctx, m) }

// Email is a composed e-mail with what it told.
type Email struct {
	Message Message
	// Entries are the followed entries it names, Gone the deleted ones it tells.
	Entries []EmailEntry
	Gone    []GoneEntry
	// ToldGone are the followed_gone rows it tells (marked told once it is sent).
	ToldGone []int64
}

// EmailEntry is one changed entry in an e-mail.
type EmailEntry struct {
	EntryID    int64
	Slug, Name string
	Summary    string // Summary.Text(): counts, fixed words, version numbers
	Link       string // its newest change in its history
}

// errNothing says an e-mail had nothing left to tell when it was composed.
type errNothing string

func (e errNothing) Error() string { return string(e) }

// Compose makes the e-mail of an outbox row from the store as it is now: the followed
// entries whose changes in the row's window (numbered in (SeqFrom, SeqThrough]) are
// worth telling (the rules of Summarize), and the deleted followed entries not told
// yet. The 7-day rule holds at sending too: a change recorded more than MaxAge before
// now (a retried e-mail, say) is not told. It returns an errNothing error when nothing
// is left to tell (the account unfollowed, a change was hidden or grew too old).
func (s *Service) Compose(ctx context.Context, o store.OutboxEmail) (Email, error) {
	to, err := s.st.NotifyRecipient(ctx, o.AccountID)
	if err != nil {
		return Email{}, err
	}
	if to == "" {
		return Email{}, errNothing("the account has no e-mail address")
	}
	var em Email
	r := store.NotifyRange{AccountID: o.AccountID, Since: s.now().Add(-MaxAge), AfterSeq: o.SeqFrom, ThroughSeq: o.SeqThrough}
	err = s.st.NotifyChanges(ctx, r, func(group []store.NotifyChange) error {
		sum, err := s.summarize(ctx, group)
		if err != nil || !sum.Notable {
			return err
		}
		c := &group[0]
		// An e-mail names an entry by its slug, Probity's own name for it: a listed
		// title or name is the publisher's text, which an e-mail never carries (a
		// title such as "Reset your password at …" would arrive DKIM-signed).
		link := s.changeLink(c.Slug, sum.Last)
		if sum.Last == 0 {
			link = s.disputeLink(c.Slug, sum.LastDispute)
		}
		em.Entries = append(em.Entries, EmailEntry{EntryID: c.EntryID, Slug: c.Slug, Name: c.Slug, Summary: sum.Text(), Link: link})
		return nil
	})
	if err != nil {
		return Email{}, err
	}
	gone, err := s.st.UntoldGone(ctx, o.AccountID)
	if err != nil {
		return Email{}, err
	}
	for _, g := range gone {
		em.Gone = append(em.Gone, GoneEntry{Slug: g.Slug, Name: g.Slug, DeletedAt: g.DeletedAt})
		em.ToldGone = append(em.ToldGone, g.ID)
	}
	if len(em.Entries) == 0 && len(em.Gone) == 0 {
		return Email{}, errNothing("nothing left to tell")
	}
	st, err := s.st.NotifySettings(ctx, o.AccountID)
	if err != nil {
		return Email{}, err
	}
	if st.Mode == store.MailOff {
		// Turned off after the e-mail was planned (a one-click unsubscribe while it
		// waited for a retry, say): it is not sent.
		return Email{}, errNothing("change e-mails were turned off")
	}
	em.Message, err = s.message(o, to, st.Mode, &em)
	return em, err
}

// summarize applies Summarize to one entry's changes (NotifyChange, oldest first),
// with the entry's current version when a version changed.
func (s *Service) summarize(ctx context.Context, group []store.NotifyChange) (Summary, error) {
	cs := make([]Change, len(group))
	hasVersion := false
	for k := range group {
		cs[k] = ChangeOf(&group[k])
		hasVersion = hasVersion || cs[k].Kind == attest.ChangeVersion
	}
	current := ""
	if hasVersion {
		v, err := s.currentVersion(ctx, group[0].EntryID)
		if err != nil {
			return Summary{}, err
		}
		current = v
	}
	return Summarize(cs, current), nil
}

// currentVersion is the entry's version as its history state follows it ("" when
// unknown).
func (s *Service) currentVersion(ctx context.Context, entryID int64) (string, error) {
	raw, _, err := s.st.HistoryState(ctx, entryID)
	if err != nil {
		return "", err
	}
	st, err := history.DecodeState(raw)
	if err != nil {
		return "", nil // an unreadable state: the recorded versions decide
	}
	return st.Version, nil
}

// mailData is what the templates of an e-mail see. Every string is plain text (the
// HTML template escapes it); none is the server's.
type mailData struct {
	Entries []EmailEntry
	Gone    []GoneEntry
	// Link is what the e-mail links: the one entry's change, or the Followed page.
	Link, LinkText string
	Followed       string
	Unsubscribe    string
	// UnsubscribeText says what the unsubscribe page offers.
	UnsubscribeText string
	Mode            string
}

var textMail = texttemplate.Must(texttemplate.New("text").Parse(
	`{{if .Entries}}Changes to entries you follow on Probity:
{{range .Entries}}
- {{.Name}}: {{.Summary}}{{end}}
{{end}}{{if .Gone}}
Removed from the directory (nobody follows them any more):
{{range .Gone}}
- {{.Name}}{{end}}
{{end}}
{{.LinkText}}:
{{.Link}}

The history shows what Probity's anonymous checks saw. Before you allow a server's
tools in your client again, read the tool list your client shows: that list is
what your model gets.

You get these e-mails because you follow these entries ({{.Mode}}).
{{.UnsubscribeText}}:
{{.Unsubscribe}}
Your followed entries and e-mail settings:
{{.Followed}}
`))

var htmlMail = htmltemplate.Must(htmltemplate.New("html").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Probity</title></head>
<body style="font-family: sans-serif; line-height: 1.5; color: #111;">
{{if .Entries}}<p>Changes to entries you follow on Probity:</p>
<ul>{{range .Entries}}
<li><strong>{{.Name}}</strong>: {{.Summary}}</li>{{end}}
</ul>{{end}}
{{if .Gone}}<p>Removed from the directory (nobody follows them any more):</p>
<ul>{{range .Gone}}
<li><strong>{{.Name}}</strong></li>{{end}}
</ul>{{end}}
<p><a href="{{.Link}}">{{.LinkText}}</a></p>
<p style="color: #444;">The history shows what Probity's anonymous checks saw. Before you allow a server's tools in
your client again, read the tool list your client shows: that list is what your model gets.</p>
<p style="color: #444; font-size: small;">You get these e-mails because you follow these entries ({{.Mode}}).
<a href="{{.Unsubscribe}}">{{.UnsubscribeText}}</a> ·
<a href="{{.Followed}}">Your followed entries and e-mail settings</a></p>
</body></html>
`))

// message renders em for row o to address to.
func (s *Service) message(o store.OutboxEmail, to, mode string, em *Email) (Message, error) {
	now := s.now()
	d := mailData{Entries: em.Entries, Gone: em.Gone, Followed: s.base + "/followed", Mode: strings.ToLower(ModeLabel(mode))}
	if d.Mode == "" || mode == store.MailOff {
		d.Mode = "e-mails now off"
	}
	mailOff := s.tokens.issue(token{Account: o.AccountID, Action: ActionMailOff, Issued: day(now)})
	var subject string
	switch {
	case len(em.Entries) == 1 && len(em.Gone) == 0:
		e := em.Entries[0]
		d.Link, d.LinkText = e.Link, "See the change in the history of "+e.Name
		subject = e.Name + " changed: " + e.Summary
		// One entry: its page offers unfollowing it or turning e-mails off.
		d.Unsubscribe = s.base + "/unsubscribe/" + s.tokens.issue(token{Account: o.AccountID, Action: ActionUnfollow, Entry: e.EntryID, Issued: day(now)})
		d.UnsubscribeText = "Unfollow " + e.Name + " or turn off change e-mails"
	case len(em.Entries) == 0 && len(em.Gone) == 1:
		d.Link, d.LinkText = d.Followed, "Your followed entries"
		subject = em.Gone[0].Name + " was removed from the directory"
	default:
		d.Link, d.LinkText = d.Followed, "See their latest changes on your Followed page"
		var parts []string
		if n := len(em.Entries); n > 0 {
			parts = append(parts, plural(n, "followed entry", "followed entries")+" changed")
		}
		if n := len(em.Gone); n > 0 {
			parts = append(parts, plural(n, "entry", "entries")+" removed from the directory")
		}
		subject = strings.Join(parts, ", ")
	}
	if d.Unsubscribe == "" {
		d.Unsubscribe, d.UnsubscribeText = s.base+"/unsubscribe/"+mailOff, "Turn off change e-mails"
	}
	var text, html strings.Builder
	if err := textMail.Execute(&text, d); err != nil {
		return Message{}, fmt.Errorf("couldn't compose the e-mail: %w", err)
	}
	if err := htmlMail.Execute(&html, d); err != nil {
		return Message{}, fmt.Errorf("couldn't compose the e-mail: %w", err)
	}
	return Message{
		To: to, Subject: plainLine("Probity: "+subject, 150), Text: text.String(), HTML: html.String(),
		MessageID: o.MessageID,
		ListID:    "Probity change e-mails <changes." + s.host + ">",
		// The one-click address (RFC 8058): the one route of the site that takes a POST
		// from another origin, authenticated by its token alone.
		ListUnsubscribe: s.base + "/unsubscribe/" + mailOff + "/one-click",
		OneClick:        true,
		Date:            now,
	}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
