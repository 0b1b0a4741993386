// Package registry reads the MCP Registry API: the official registry at
// https://registry.modelcontextprotocol.io and any subregistry that answers in its shape.
//
// # The API
//
// The registry lists MCP servers as server.json documents (schema/server.schema.json)
// wrapped in list responses (schema/openapi.yaml, the ServerList and ServerResponse
// schemas). One request is
//
//	GET {base}/v0.1/servers?limit=100&cursor=C&updated_since=T&include_deleted=true
//
// and one answer is
//
//	{"servers": [{"server": {...server.json...},
//	              "_meta": {"io.modelcontextprotocol.registry/official":
//	                        {"status": "active", "isLatest": true,
//	                         "publishedAt": "...", "updatedAt": "..."}}}, ...],
//	 "metadata": {"nextCursor": "C2", "count": 100}}
//
// Every published version of a server is its own item: a name appears once per
// version, and the registry's official metadata marks one of them isLatest. Status is
// active, deprecated or deleted; deleted versions are listed only with include_deleted
// (which the registry implies when updated_since is given). Cursors are opaque; an
// absent or empty nextCursor ends the list. SOURCES.md says which revision of the two
// schema files is shipped and how to refresh them.
//
// # What the client promises
//
// Client.Pages walks the list page by page and yields each page once it is read and
// decoded in full: a page is either wholly returned or refused, never half. When a
// page is refused, the pages before it have already been yielded and the error, a
// *PageError, carries the cursor of the refused page, so the caller keeps everything
// it received and a later run resumes where this one stopped (ListOptions.Cursor).
// Latest picks, per server name, the version the registry lists (isLatest) and says
// whether it is listed (active) or unlisted (deprecated, deleted).
//
// The client sends no credentials, no cookies and nothing but the query above. Its
// HTTP client is the caller's; the default one goes through Probity's egress guard
// (checks/probe/egress), like the supply sources', so a base URL or a redirect cannot
// reach private networks, the host itself or a cloud metadata service.
//
// # Bounds, and why
//
// A registry is a remote service Probity does not control; a bug, a compromised
// mirror or a hostile subregistry must not make a sync run forever, fill memory or
// import garbage. So every loop is bounded before it runs, and every refusal is a
// typed error (errors.Is with the sentinels below; *StatusError for HTTP answers):
//
//   - a page body over Config.MaxPageBytes (default 4 MiB; a page of 100 real servers
//     is well under 1 MiB) is refused with ErrPageTooLarge, read no further;
//   - a page holding more than Config.MaxServersPerPage items (default 500; the
//     official registry answers at most 100) is refused with ErrTooManyServers before
//     any item is decoded;
//   - a nextCursor already requested in this walk is a loop: ErrCursorLoop;
//   - more than Config.MaxPages pages (default 2,000, 200,000 servers at the default
//     limit) end the walk with ErrTooManyPages, resumable from the cursor it carries;
//   - an answer other than 200, or a 200 that is not JSON, is refused with a
//     *StatusError (status, content type and a short, sanitized excerpt of the body) or
//     ErrMalformedPage; a page that is JSON but not a ServerList (servers missing, an
//     item without a server, a name outside the schema's pattern, an empty version, an
//     unknown status, a count that disagrees with the items, a cursor over 1 KiB) is
//     refused with ErrMalformedPage;
//   - 429, and 503 with Retry-After, are retried after the wait the registry asks for,
//     at most Config.MaxRetries times and Config.MaxRetryWait in total per page
//     (default 3 and 60 s); a longer wait, or one that would outlast the page's
//     timeout or the context's deadline, is refused with ErrRateLimited instead of
//     sleeping;
//   - one page, retries included, takes at most Config.PageTimeout (default 60 s), and
//     the caller's context cancels the walk at any point.
//
// # Strict, but open to additions
//
// Decoding refuses what is not a list of servers, but ignores fields it does not
// know: the registry adds fields to server.json and to _meta between schema revisions
// (icons and websiteUrl came that way), and a sync must not break on the next one.
// Each Entry keeps the server object's bytes as received (Entry.Raw) and the whole
// _meta object, so nothing the registry sent is lost to the typed view.
//
// # The sync
//
// Package registry/regsync syncs a registry into Probity's store with this client
// (`probity registry sync`, and a periodic job under `probity serve`); this package
// stays free of the store and its drivers (TestClientStaysApartFromTheStore).
package registry
