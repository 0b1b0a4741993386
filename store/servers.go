package store

import (
	"time"
)

// An entry is a server (issue 14): one directory entry per server, with what its listing
// says (name, title, description, website, the server.json as listed) and its linked
// parts: the remote endpoints it is reached at, the packages it is installed from, its
// source repository and its MCP bundle. Parts are unique across entries: a remote,
// package or repository belongs to at most one entry.
//
// The entry's own Kind and Locator are its primary part (Parts[0]), the one its rounds
// read: a server's first remote (streamable-http before sse), else its first npm or PyPI
// package, else its repository. A bare reference (a URL, npm:NAME, …) makes a one-part
// entry. Listing, linking and unlisting leave no history (seed 000: changes from us or
// from public sources such as the registry do not appear in the history).

// Part kinds besides the checked entry kinds (KindRemote, KindNPM, KindPyPI,
// KindGitHub): listed and shown, not checked.
const (
	PartOCI   = "oci"   // an OCI image, by its identifier as listed
	PartNuGet = "nuget" // a NuGet package, by its identifier as listed
	PartMCPB  = "mcpb"  // an MCP bundle file, by its download URL as listed
)

// Listing statuses, as the official registry's status of a server version.
const (
	StatusActive     = "active"
	StatusDeprecated = "deprecated"
	StatusDeleted    = "deleted"
)

// Part is one linked part of a server.
type Part struct {
	// Kind is KindRemote, KindNPM, KindPyPI, KindGitHub (the source repository, or the
	// repository whose MCP bundle manifest is read), PartOCI, PartNuGet or PartMCPB.
	Kind string
	// Locator is canonical for the checked kinds, as Entry.Locator; for the others
	// the identifier as listed.
	Locator string
	// Transport is a remote's transport as listed ("streamable-http", "sse"; "" when
	// not listed); Version a package's listed version ("" when none).
	Transport string
	Version   string
}

// Listing is what a server's listing says.
type Listing struct {
	// ServerName is the registry's reverse-DNS server name (namespace/name); "" for an
	// entry from a bare reference. Unique across entries.
	ServerName  string
	Title       string
	Description string
	Website     string
	// Version is the listed server version ("" when none).
	Version string
	// Document is the server.json as listed (canonical JSON: icons, remotes, packages,
	// repository, the publisher's _meta); nil for a bare reference.
	Document []byte
	// RegistryMeta is the registry's own metadata of the listed version (the
	// io.modelcontextprotocol.registry/official object: status, publishedAt,
	// updatedAt, isLatest) as JSON; nil when the listing did not come from a registry.
	RegistryMeta []byte
	// Status is StatusActive, StatusDeprecated or StatusDeleted; "" reads as active.
	// A deprecated or deleted server is unlisted: kept with its history, left out of
	// the directory and of the schedule, and listed again when its status is active.
	Status string
	// UpdatedAt is when the listing last changed in Probity (set by UpsertServer).
	UpdatedAt time.Time
}

// Listed reports whether a listing with this status is shown and scheduled.
func (l Listing) Listed() bool { return l.Status == "" || l.Status == StatusActive }

// ServerUpsert is one server to add or update (UpsertServer).
type ServerUpsert struct {
	// SlugBase is the wanted slug of a new entry (as NewEntry.SlugBase).
	SlugBase string
	// Name is the display name.
	Name   string
	Source string // "import", "registry"
	// Listing is what the listing says; its UpdatedAt is ignored.
	Listing Listing
	// Parts are the server's parts, the primary one first; at least one, and the first
	// of a checked kind.
	Parts []Part
	// Due are a new entry's first due times (ignored when the entry exists).
	Due []Due
}

// PartConflict is a part UpsertServer did not link because another entry holds it.
type PartConflict struct {
	Part      Part
	EntrySlug string
}

// UpsertResult is what UpsertServer did.
type UpsertResult struct {
	Entry Entry
	// Created: a new entry; Updated: an existing entry's listing or parts changed (both
	// false: nothing changed).
	Created, Updated bool
	// Conflicts are the parts left unlinked because another entry holds them.
	Conflicts []PartConflict
}

// ListingQuery selects listed servers (Listings): entries with a server name, in
// server-name order.
type ListingQuery struct {
	// Name selects one server by its exact name ("" : every server).
	Name string
	// AfterName pages: only names above it.
	AfterName string
	// UpdatedSince selects listings updated at or after it (zero: all).
	UpdatedSince time.Time
	// IncludeUnlisted also returns deprecated and deleted servers.
	IncludeUnlisted bool
	// Search matches a substring of the name, case-insensitively ("" : no filter).
	Search string
	Limit  int // ≤ 0: no limit
}

// ServerListing is one entry with its listing and parts.
type ServerListing struct {
	Entry   Entry
	Listing Listing
	Parts   []Part
}

// RegistrySync is the state of the sync from one registry (RegistrySyncState,
// SaveRegistrySync): where a walk stands, so a crash resumes it, and the mark the next
// incremental sync starts from.
type RegistrySync struct {
	BaseURL string
	// Since is the updated_since of the next sync: the newest updatedAt of the last
	// completed walk (zero: the next sync reads everything).
	Since time.Time
	// WalkSince is the updated_since of the walk in progress, Cursor the cursor of its
	// next page ("" with WalkStarted zero: no walk in progress), and WalkNewest the
	// newest updatedAt it has read so far.
	WalkSince   time.Time
	Cursor      string
	WalkNewest  time.Time
	WalkStarted time.Time
	// Finished is when the last walk completed, Servers how many servers it read.
	Finished time.Time
	Servers  int64
}

// HTTPCacheEntry is one response kept by the supply sources' HTTP cache, for
// revalidation with ETag / Last-Modified across restarts.
type HTTPCacheEntry struct {
	// Key identifies the request (the client's cache key: method, URL, varying headers).
	Key          string
	Status       int
	ETag         string
	LastModified string
	// Header is the response's kept headers as JSON; Body the response body.
	Header   []byte
	Body     []byte
	StoredAt time.Time
}

// MaxHTTPCacheBody is the largest body the HTTP cache keeps; larger responses are not
// kept.
const MaxHTTPCacheBody = 8 << 20
