package registry

import (
	"encoding/json"
	"time"
)

// Server is a server.json document: one published version of an MCP server, as
// schema/server.schema.json (definition ServerDetail) describes it. Fields the schema
// marks optional are zero when absent.
type Server struct {
	// Schema is the document's "$schema" URI, naming the schema revision it follows.
	Schema string `json:"$schema,omitempty"`
	// Name is the reverse-DNS server name, "namespace/name".
	Name string `json:"name"`
	// Title is an optional display name.
	Title string `json:"title,omitempty"`
	// Description says what the server does (at most 100 characters).
	Description string `json:"description"`
	// Version is this version's string, semantic by recommendation only.
	Version string `json:"version"`
	// WebsiteURL is an optional home page.
	WebsiteURL string `json:"websiteUrl,omitempty"`
	// Repository is the source repository, if listed.
	Repository *Repository `json:"repository,omitempty"`
	// Icons are optional display icons.
	Icons []Icon `json:"icons,omitempty"`
	// Packages are the installable packages (npm, pypi, oci, nuget, mcpb, ...).
	Packages []Package `json:"packages,omitempty"`
	// Remotes are the hosted endpoints.
	Remotes []Remote `json:"remotes,omitempty"`
	// Meta is the document's own "_meta" object (publisher-provided extensions), as
	// received.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Repository is a server's source repository.
type Repository struct {
	// URL is the repository's web and clone URL.
	URL string `json:"url"`
	// Source names the host ("github", "gitlab", ...).
	Source string `json:"source"`
	// ID is the host's stable identifier of the repository, if given.
	ID string `json:"id,omitempty"`
	// Subfolder is the server's path inside a monorepo, if any.
	Subfolder string `json:"subfolder,omitempty"`
}

// Icon is one display icon of a server.
type Icon struct {
	// Src is the icon's HTTPS URL.
	Src string `json:"src"`
	// MimeType optionally overrides the served type.
	MimeType string `json:"mimeType,omitempty"`
	// Sizes are "WxH" strings or "any".
	Sizes []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark", if the icon is made for one.
	Theme string `json:"theme,omitempty"`
}

// Package is one installable package of a server.
type Package struct {
	// RegistryType names the package registry: npm, pypi, oci, nuget, mcpb, ...
	RegistryType string `json:"registryType"`
	// RegistryBaseURL is the package registry's base URL, if not the default.
	RegistryBaseURL string `json:"registryBaseUrl,omitempty"`
	// Identifier is the package name, or for mcpb its download URL.
	Identifier string `json:"identifier"`
	// Version is the package version (never a range, never "latest").
	Version string `json:"version,omitempty"`
	// FileSHA256 is the hex SHA-256 of the package file (required for mcpb).
	FileSHA256 string `json:"fileSha256,omitempty"`
	// RuntimeHint names the runtime that starts the package (npx, uvx, docker, dnx).
	RuntimeHint string `json:"runtimeHint,omitempty"`
	// Transport is how a client talks to the started package.
	Transport Transport `json:"transport"`
	// RuntimeArguments are passed to the runtime command.
	RuntimeArguments []Argument `json:"runtimeArguments,omitempty"`
	// PackageArguments are passed to the package's binary.
	PackageArguments []Argument `json:"packageArguments,omitempty"`
	// EnvironmentVariables are set when the package runs.
	EnvironmentVariables []KeyValueInput `json:"environmentVariables,omitempty"`
}

// Transport is a package's transport: stdio, streamable-http or sse (the last two
// with a URL template and headers).
type Transport struct {
	// Type is "stdio", "streamable-http" or "sse".
	Type string `json:"type"`
	// URL is the endpoint template for the HTTP transports.
	URL string `json:"url,omitempty"`
	// Headers are the HTTP headers a client sends.
	Headers []KeyValueInput `json:"headers,omitempty"`
}

// Remote is a hosted endpoint of a server: a streamable-http or sse transport whose
// URL template may use Variables.
type Remote struct {
	// Type is "streamable-http" or "sse".
	Type string `json:"type"`
	// URL is the endpoint, possibly with {variables}.
	URL string `json:"url"`
	// Headers are the HTTP headers a client sends (names and descriptions; a
	// registry never lists secret values, and Probity never sends them).
	Headers []KeyValueInput `json:"headers,omitempty"`
	// Variables define the {variables} of URL.
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input describes a value a client supplies: an argument, a header, an environment
// variable or a URL variable.
type Input struct {
	// Description tells the user what the value is for.
	Description string `json:"description,omitempty"`
	// IsRequired says the value must be supplied.
	IsRequired bool `json:"isRequired,omitempty"`
	// Format is string (default), number, boolean or filepath.
	Format string `json:"format,omitempty"`
	// Value is a fixed value, possibly with {variables}.
	Value string `json:"value,omitempty"`
	// IsSecret marks a password or token; the registry lists no secret values.
	IsSecret bool `json:"isSecret,omitempty"`
	// Default is the value used when none is supplied.
	Default string `json:"default,omitempty"`
	// Placeholder is an example shown while configuring.
	Placeholder string `json:"placeholder,omitempty"`
	// Choices, when given, are the only allowed values.
	Choices []string `json:"choices,omitempty"`
}

// KeyValueInput is a named Input: a header or an environment variable.
type KeyValueInput struct {
	// Name is the header's or variable's name.
	Name string `json:"name"`
	Input
	// Variables define the {variables} of Value.
	Variables map[string]Input `json:"variables,omitempty"`
}

// Argument is a command-line argument: positional (Type "positional", ValueHint or
// Value) or named (Type "named", Name).
type Argument struct {
	// Type is "positional" or "named".
	Type string `json:"type"`
	// Name is a named argument's flag, dashes included.
	Name string `json:"name,omitempty"`
	// ValueHint labels a positional argument.
	ValueHint string `json:"valueHint,omitempty"`
	// IsRepeated says the argument may be given more than once.
	IsRepeated bool `json:"isRepeated,omitempty"`
	Input
	// Variables define the {variables} of Value.
	Variables map[string]Input `json:"variables,omitempty"`
}

// OfficialMetaKey is the _meta member the official registry writes on each list item.
const OfficialMetaKey = "io.modelcontextprotocol.registry/official"

// Status is a server version's lifecycle status in the registry.
type Status string

// The statuses of the registry's OpenAPI description (ServerResponse, _meta).
const (
	StatusActive     Status = "active"
	StatusDeprecated Status = "deprecated"
	StatusDeleted    Status = "deleted"
)

// Official is the registry-managed metadata of one list item, the
// "io.modelcontextprotocol.registry/official" member of its _meta.
type Official struct {
	// Status is active, deprecated or deleted.
	Status Status `json:"status,omitempty"`
	// StatusMessage optionally explains the status (a deprecation reason).
	StatusMessage string `json:"statusMessage,omitempty"`
	// StatusChangedAt is when Status last changed; zero if not given.
	StatusChangedAt time.Time `json:"statusChangedAt,omitzero"`
	// PublishedAt is when this version was first published.
	PublishedAt time.Time `json:"publishedAt,omitzero"`
	// UpdatedAt is when this item last changed; updated_since compares against it.
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
	// IsLatest marks the version the registry lists for the name.
	IsLatest bool `json:"isLatest"`
}

// Entry is one item of a list response: one version of one server.
type Entry struct {
	// Server is the decoded server.json.
	Server Server
	// Raw is the item's "server" object exactly as received; it is what a subregistry
	// republishes ("as listed"). It is a copy, safe to keep.
	Raw json.RawMessage
	// Official is the registry's metadata, or nil when the item has none (a
	// subregistry need not write it).
	Official *Official
	// Meta is the item's whole "_meta" object as received (the official member
	// included), or nil.
	Meta json.RawMessage
}

// Listed reports whether the registry lists this version: its status is active, or
// no status was given. Deprecated and deleted versions are unlisted.
func (e Entry) Listed() bool {
	return e.Official == nil || e.Official.Status == "" || e.Official.Status == StatusActive
}

// Page is one decoded page of GET /v0.1/servers.
type Page struct {
	// Number counts the pages of one walk from 1.
	Number int
	// Cursor is the cursor this page was requested with ("" for the first page).
	Cursor string
	// Entries are the page's items, in the registry's order.
	Entries []Entry
	// NextCursor is the cursor of the next page; "" on the last page. A caller that
	// stores it after committing this page can resume there after a crash.
	NextCursor string
}
