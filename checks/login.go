package checks

// LoginPlace says where a probe round was first answered with HTTP 401.
type LoginPlace string

// The places a 401 can come first, in the order the probe sends its requests.
const (
	LoginNone        LoginPlace = ""           // no response was a 401
	LoginAtHandshake LoginPlace = "handshake"  // the handshake (Handshake.Unauthorized)
	LoginAtToolsList LoginPlace = "tools_list" // an open handshake, then tools/list (ToolsList.Unauthorized)
	LoginAtToolsCall LoginPlace = "tools_call" // only the call of the nonexistent tool (ErrorProbe.HTTPStatus)
	LoginAtOther     LoginPlace = "other"      // another request (Auth.Challenged only)
)

// ChallengeKind says what the WWW-Authenticate headers of a round's 401s held.
type ChallengeKind string

// The kinds of challenge.
const (
	ChallengeAbsent          ChallengeKind = ""                 // no 401
	ChallengeWithMetadata    ChallengeKind = "with_metadata"    // a challenge names an RFC 9728 resource_metadata URL
	ChallengeWithoutMetadata ChallengeKind = "without_metadata" // challenges, none with a resource_metadata URL
	ChallengeUnparseable     ChallengeKind = "unparseable"      // headers that did not parse as challenges
	ChallengeNone            ChallengeKind = "none"             // 401 without a WWW-Authenticate header
)

// Login is what a round saw of a login challenge, as seed 003's login table counts it:
// where the first 401 came and what its challenges held. How the challenge and its
// metadata are judged is the auth_metadata check's, not this.
type Login struct {
	Place     LoginPlace
	Challenge ChallengeKind
}

// Login reads where the round was first answered with 401 and what the challenges held,
// from the facts the probe recorded. A challenge "with metadata" carries a
// resource_metadata parameter (RFC 9728 §5.1; the parameter name compared without
// case, as auth_metadata reads it); a well-known URL the probe tried in its absence does
// not count.
func (o *Observation) Login() Login {
	var l Login
	switch {
	case o.Handshake.Unauthorized:
		l.Place = LoginAtHandshake
	case o.Tools.Unauthorized:
		l.Place = LoginAtToolsList
	case o.ErrorProbe.HTTPStatus == 401:
		l.Place = LoginAtToolsCall
	case o.Auth.Challenged:
		l.Place = LoginAtOther
	default:
		return l
	}
	a := &o.Auth
	switch {
	case len(a.Challenges) > 0:
		l.Challenge = ChallengeWithoutMetadata
		for _, c := range a.Challenges {
			if challengeParam(c, "resource_metadata") != "" {
				l.Challenge = ChallengeWithMetadata
				break
			}
		}
	case a.ChallengeError != "":
		l.Challenge = ChallengeUnparseable
	default:
		l.Challenge = ChallengeNone
	}
	return l
}
