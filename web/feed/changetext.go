package feed

import "github.com/probity-dev/probity/store"

// ChangeText renders change c of the entry slug as plain text for a terminal, as its
// feed entry reads ("probity history show"): who recorded it and when (UTC), its
// summary, badges and details in words, server text made safe and visible as in the
// feeds, the whole cut at MaxContentBytes. baseURL, when not empty, gives the "Page:"
// line (the change's anchor on the history tab); the command line may not know it.
func ChangeText(baseURL, slug string, c *store.ChangeRecord) string {
	return content(site{base: baseURL}, slug, c)
}
