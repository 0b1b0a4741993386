package rounds

import (
	"encoding/json"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// authMetadataCheck is the id of the check whose outcome the login facts keep.
const authMetadataCheck = "auth_metadata"

// handshakeFacts sets the round's handshake path: the method that completed the
// handshake ("" when none did) and the version Probity proposed on the last path it
// tried. The statistics' handshake-path table reads them (seed 003).
func handshakeFacts(round *store.Round, obs *checks.Observation) {
	if obs.Handshake.Completed() {
		round.HandshakeMethod = obs.Handshake.Method
	}
	round.ProposedVersion = obs.Handshake.ProposedVersion
}

// loginFacts is what the round saw of a login challenge (checks.Observation.Login) and
// the auth_metadata check's reason key, for the statistics' login table (seed 003).
func loginFacts(obs *checks.Observation, results []checks.Result) store.Login {
	l := obs.Login()
	if l.Place == checks.LoginNone {
		return store.Login{}
	}
	out := store.Login{Unauthorized: string(l.Place), Challenge: string(l.Challenge)}
	for _, r := range results {
		if r.ID == authMetadataCheck && r.Reason != nil {
			out.Metadata = r.Reason.Key
		}
	}
	return out
}

// supplyTarget is the server the supply checks of entry e read (supply.Target), from its
// listing and linked parts (store.EntryListing, the primary part first):
//
//   - Kind and Locator: the entry's primary part, which names the signed statement;
//   - Remote: the entry's locator when the primary part is a remote (the endpoint its
//     rounds probe, whose last round gives the handshake facts); further remotes are
//     probed by their rounds, not by the supply checks;
//   - Package: the first npm or PyPI part (the primary one when it is a package);
//     further packages, OCI images, NuGet packages and MCP bundles are Unchecked;
//   - Repository: the first GitHub part, else the repository URL the listed
//     server.json names (a repository outside GitHub, which the check fails as one it
//     cannot read), else "" (the package's own link is then read).
//
// An entry without parts (none stored yet) is its primary part alone.
func supplyTarget(e store.Entry, l store.Listing, parts []store.Part) supply.Target {
	t := supply.Target{Kind: e.Kind, Locator: e.Locator, ServerName: l.ServerName}
	if e.Kind == store.KindRemote {
		t.Remote = e.Locator
	}
	if len(parts) == 0 {
		parts = []store.Part{{Kind: e.Kind, Locator: e.Locator}}
	}
	for _, p := range parts {
		switch p.Kind {
		case store.KindRemote:
			// The primary remote is the one probed; others are probed by their rounds.
		case store.KindNPM, store.KindPyPI:
			ref, _ := supply.PackageRefOf(p.Kind, p.Locator)
			if t.Package == nil {
				t.Package = &ref
			} else {
				t.Unchecked = append(t.Unchecked, supply.PartRef{Kind: p.Kind, Locator: p.Locator})
			}
		case store.KindGitHub:
			if t.Repository == "" {
				t.Repository = p.Locator
			}
		default:
			t.Unchecked = append(t.Unchecked, supply.PartRef{Kind: p.Kind, Locator: p.Locator})
		}
	}
	if t.Repository == "" {
		t.Repository = listedRepository(l.Document)
	}
	return t
}

// listedRepository is repository.url of a listed server.json, "" when it names none.
func listedRepository(doc []byte) string {
	if len(doc) == 0 {
		return ""
	}
	var d struct {
		Repository struct {
			URL string `json:"url"`
		} `json:"repository"`
	}
	if json.Unmarshal(doc, &d) != nil {
		return ""
	}
	return d.Repository.URL
}

// hasSupplyParts reports whether a server has a package or a source repository besides
// its remote: then its supply checks read more than the round does, and `probity round`
// runs them after the round.
func hasSupplyParts(t supply.Target) bool {
	return t.Package != nil || t.Repository != ""
}
