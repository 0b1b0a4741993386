package rounds

import (
	"github.com/probity-dev/probity/checks"
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
