// Package feed renders Probity's Atom 1.0 feeds (RFC 4287): an entry's history feed,
// served at /s/{slug}/history.xml with its MaxEntryFeed newest visible changes, and the
// directory feed, served at /changes.xml with the MaxDirectoryFeed newest visible
// changes across the directory. It does no I/O: the caller reads the changes from the
// store and writes the bytes.
//
// # Identifiers
//
// Feed and entry ids are tag URIs (RFC 4151) whose authority is the host of
// Config.BaseURL (lower case, without a port) and whose date is TagYear, so they stay the
// same however often a feed is rendered and whichever feed shows a change:
//
//	tag:probity.dev,2026:s/<slug>/history      an entry's history feed
//	tag:probity.dev,2026:changes               the directory feed
//	tag:probity.dev,2026:s/<slug>/ch-<N>       change N of an entry, in either feed
//
// # Plain text only
//
// Every text construct is type="text": titles and content are never HTML, so a reader
// never renders a server's markup. The text is escaped by encoding/xml. Before that,
// every string that may come from a server (Details, the entry name, and defensively the
// summary and badges) is made safe and visible: invalid UTF-8 becomes U+FFFD; in
// multi-line text a CR LF or a lone CR becomes a line feed, in one-line text line feed,
// CR and tab are written \n, \r and \t; C0 and C1 controls other than tab and line feed,
// U+FFFE, U+FFFF and the other noncharacters, format (Cf) and default-ignorable
// characters (zero-width, bidi controls, tag characters, ...), line and paragraph
// separators, private use characters and variation selectors other than U+FE0E/U+FE0F
// after a visible character are written as \u escapes ("\u200b", "\U000e0041"), so a
// reader sees them and the XML holds only characters XML 1.0 allows. Server text in the
// content is quoted: multi-line text (descriptions, instructions, operator edits) on lines
// that start with "| ", short values (titles, versions) in double quotes with \" and \\
// escaped, so a server cannot forge the structure of the content around its text.
// Outside quotes a backslash is left as it is, so a literal "\u200b" typed by a server
// reads the same as a made-visible U+200B.
//
// # Bounds
//
// The content of one entry is cut at MaxContentBytes with a note that links to the
// change; Details larger than MaxDetailsBytes are not decoded. Titles are cut at
// maxTitleRunes. The caller passes changes newest first; each function reads only as
// many as it needs to fill its feed.
package feed

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/store"
)

// Feed sizes (issue 7).
const (
	// MaxEntryFeed is how many changes an entry's history feed holds.
	MaxEntryFeed = 30
	// MaxDirectoryFeed is how many changes the directory feed holds.
	MaxDirectoryFeed = 50
)

// MaxContentBytes bounds the content of one feed entry; longer content is cut with a
// note.
const MaxContentBytes = 16 << 10

// MaxDetailsBytes bounds the Details JSON a feed entry decodes; larger details are not
// shown in the feed, only linked.
const MaxDetailsBytes = 4 << 20

// TagYear is the date part of the feeds' tag URIs. It must never change: it is part of
// every id a feed reader has stored.
const TagYear = "2026"

// maxBadges bounds the categories of one entry (there are six kinds of badges).
const maxBadges = 16

// maxTitleRunes bounds a title (and an entry name in a title).
const maxTitleRunes = 200

// DirectoryPath is the path, below Config.BaseURL, of the recent changes page: the
// directory feed's alternate link.
const DirectoryPath = "/changes"

// Config is what the feeds need to know about the site.
type Config struct {
	// BaseURL is the site's absolute http or https URL without a trailing slash, e.g.
	// "https://probity.dev"; its host is the authority of the tag URIs.
	BaseURL string
	// Title is the site's name, used in feed titles and as the author; "" means
	// "Probity".
	Title string
}

// slugPattern is store.Entry.Slug's form.
var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,199}$`)

// site is a checked Config.
type site struct {
	base, title, tag string
}

func (c Config) site() (site, error) {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return site{}, fmt.Errorf("feed: invalid base URL %q: %w", c.BaseURL, err)
	}
	host := strings.ToLower(u.Hostname())
	if (u.Scheme != "http" && u.Scheme != "https") || host == "" || u.User != nil || u.RawQuery != "" ||
		u.Fragment != "" || strings.HasSuffix(c.BaseURL, "/") || u.Opaque != "" || !hostPattern.MatchString(host) {
		return site{}, fmt.Errorf("feed: invalid base URL %q: want an http or https URL with a host name and no trailing slash, query or fragment", c.BaseURL)
	}
	title := c.Title
	if title == "" {
		title = "Probity"
	}
	return site{base: c.BaseURL, title: line(title, maxTitleRunes), tag: "tag:" + host + "," + TagYear + ":"}, nil
}

// hostPattern is the DNSname of RFC 4151's taggingEntity (an IPv4 address matches too).
var hostPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

func (s site) entryURL(slug string) string { return s.base + "/s/" + slug }

// changeURL is a change's own address: its anchor on the entry's history tab.
func (s site) changeURL(slug string, n int64) string {
	return s.entryURL(slug) + "/history#ch-" + strconv.FormatInt(n, 10)
}

func (s site) changeID(slug string, n int64) string {
	return s.tag + "s/" + slug + "/ch-" + strconv.FormatInt(n, 10)
}

// EntryFeed renders the history feed of the entry slug, named name: the first
// MaxEntryFeed visible changes of changes, which the caller passes newest first. Hidden
// changes are skipped. A change whose EntrySlug is set to another entry's slug is an
// error. The feed's updated time is the newest change's RecordedAt, or now when the feed
// is empty.
func EntryFeed(cfg Config, slug, name string, changes []store.ChangeRecord, now time.Time) ([]byte, error) {
	s, err := cfg.site()
	if err != nil {
		return nil, err
	}
	if !slugPattern.MatchString(slug) {
		return nil, fmt.Errorf("feed: invalid entry slug %q", slug)
	}
	if name == "" {
		name = slug
	}
	f := newFeed(s, s.tag+"s/"+slug+"/history", s.title+": history of "+line(name, maxTitleRunes),
		s.entryURL(slug)+"/history.xml", s.entryURL(slug))
	for i := range changes {
		if len(f.Entries) == MaxEntryFeed {
			break
		}
		c := &changes[i]
		if c.Hidden {
			continue
		}
		if c.EntrySlug != "" && c.EntrySlug != slug {
			return nil, fmt.Errorf("feed: change %d belongs to entry %q, not %q", c.Number, c.EntrySlug, slug)
		}
		f.add(s.entry(slug, c, false))
	}
	return f.render(now)
}

// DirectoryFeed renders the directory feed: the first MaxDirectoryFeed visible changes
// of changes, which the caller passes newest first, each titled with its entry's slug and
// its summary. Hidden changes are skipped; a change without a valid EntrySlug is an
// error. The feed's updated time is the newest change's RecordedAt, or now when the feed
// is empty.
func DirectoryFeed(cfg Config, changes []store.ChangeRecord, now time.Time) ([]byte, error) {
	s, err := cfg.site()
	if err != nil {
		return nil, err
	}
	f := newFeed(s, s.tag+"changes", s.title+": recent changes", s.base+"/changes.xml", s.base+DirectoryPath)
	for i := range changes {
		if len(f.Entries) == MaxDirectoryFeed {
			break
		}
		c := &changes[i]
		if c.Hidden {
			continue
		}
		if !slugPattern.MatchString(c.EntrySlug) {
			return nil, fmt.Errorf("feed: change %d has an invalid entry slug %q", c.Number, c.EntrySlug)
		}
		f.add(s.entry(c.EntrySlug, c, true))
	}
	return f.render(now)
}

// The Atom document. encoding/xml writes the elements in field order.

type atomFeed struct {
	XMLName  xml.Name   `xml:"http://www.w3.org/2005/Atom feed"`
	ID       string     `xml:"id"`
	Title    text       `xml:"title"`
	Updated  string     `xml:"updated"`
	Links    []atomLink `xml:"link"`
	Author   atomPerson `xml:"author"`
	Entries  []atomEntry
	newest   time.Time
	hasEntry bool
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomPerson struct {
	Name string `xml:"name"`
}

type atomCategory struct {
	Term  string `xml:"term,attr"`
	Label string `xml:"label,attr,omitempty"`
}

type atomEntry struct {
	XMLName    xml.Name       `xml:"entry"`
	ID         string         `xml:"id"`
	Title      text           `xml:"title"`
	Updated    string         `xml:"updated"`
	Links      []atomLink     `xml:"link"`
	Author     atomPerson     `xml:"author"`
	Categories []atomCategory `xml:"category"`
	Content    text           `xml:"content"`
	at         time.Time
}

// text is an Atom text construct of type "text". It marshals its body as one character
// data token, so line feeds stay line feeds (encoding/xml's struct marshaling would write
// them as &#xA;); encoding/xml still escapes <, >, &, quotes, tab and CR.
type text string

// MarshalXML implements xml.Marshaler.
func (t text) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: "type"}, Value: "text"})
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	if err := e.EncodeToken(xml.CharData(t)); err != nil {
		return err
	}
	return e.EncodeToken(start.End())
}

func newFeed(s site, id, title, self, alternate string) *atomFeed {
	return &atomFeed{
		ID:    id,
		Title: text(title),
		Links: []atomLink{
			{Rel: "self", Type: "application/atom+xml", Href: self},
			{Rel: "alternate", Type: "text/html", Href: alternate},
		},
		Author: atomPerson{Name: s.title},
	}
}

func (f *atomFeed) add(e atomEntry) {
	if !f.hasEntry || e.at.After(f.newest) {
		f.newest, f.hasEntry = e.at, true
	}
	f.Entries = append(f.Entries, e)
}

func (f *atomFeed) render(now time.Time) ([]byte, error) {
	updated := now
	if f.hasEntry {
		updated = f.newest
	}
	f.Updated = atomTime(updated)
	var b bytes.Buffer
	b.WriteString(xml.Header)
	e := xml.NewEncoder(&b)
	e.Indent("", "  ")
	if err := e.Encode(f); err != nil {
		return nil, fmt.Errorf("feed: couldn't encode the feed: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// atomTime formats t as an RFC 3339 date-time in UTC, to the second.
func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// entry builds the feed entry of change c of the entry slug; withSlug prefixes the
// title with the slug (directory feed).
func (s site) entry(slug string, c *store.ChangeRecord, withSlug bool) atomEntry {
	title := line(c.Summary, maxTitleRunes)
	if title == "" {
		title = "Change " + strconv.FormatInt(c.Number, 10)
	}
	if withSlug {
		title = slug + ": " + title
	}
	e := atomEntry{
		ID:      s.changeID(slug, c.Number),
		Title:   text(title),
		Updated: atomTime(c.RecordedAt),
		Links:   []atomLink{{Rel: "alternate", Type: "text/html", Href: s.changeURL(slug, c.Number)}},
		Author:  atomPerson{Name: s.title},
		Content: text(content(s, slug, c)),
		at:      c.RecordedAt,
	}
	for i, b := range c.Badges {
		if i == maxBadges {
			break
		}
		term := line(b, 64)
		label, ok := badgeLabels[b]
		if !ok {
			label = strings.ReplaceAll(term, "_", " ")
		}
		e.Categories = append(e.Categories, atomCategory{Term: term, Label: label})
	}
	return e
}
