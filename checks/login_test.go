package checks

import "testing"

func TestObservationLogin(t *testing.T) {
	meta := Challenge{Scheme: "Bearer", Params: map[string]string{"Resource_Metadata": "https://a.example/.well-known/oauth-protected-resource"}}
	realm := Challenge{Scheme: "Bearer", Params: map[string]string{"realm": "mcp"}}
	for _, c := range []struct {
		name string
		obs  Observation
		want Login
	}{
		{"no 401", Observation{}, Login{}},
		{"handshake, metadata URL in the second challenge",
			Observation{Handshake: Handshake{Unauthorized: true}, Auth: Auth{Challenged: true, Challenges: []Challenge{realm, meta}}},
			Login{LoginAtHandshake, ChallengeWithMetadata}},
		{"tools/list, no metadata URL (a well-known URL tried is not one)",
			Observation{Tools: ToolsList{Unauthorized: true}, Auth: Auth{Challenged: true, Challenges: []Challenge{realm}, MetadataURL: "https://a.example/.well-known/oauth-protected-resource/mcp"}},
			Login{LoginAtToolsList, ChallengeWithoutMetadata}},
		{"only the nonexistent tool's call, no header",
			Observation{ErrorProbe: ErrorProbe{Attempted: true, HTTPStatus: 401}, Auth: Auth{Challenged: true}},
			Login{LoginAtToolsCall, ChallengeNone}},
		{"another request, unparseable",
			Observation{Auth: Auth{Challenged: true, ChallengeError: "bad"}},
			Login{LoginAtOther, ChallengeUnparseable}},
		{"handshake wins over tools/call",
			Observation{Handshake: Handshake{Unauthorized: true}, ErrorProbe: ErrorProbe{HTTPStatus: 401}, Auth: Auth{Challenged: true, Challenges: []Challenge{meta}}},
			Login{LoginAtHandshake, ChallengeWithMetadata}},
	} {
		if got := c.obs.Login(); got != c.want {
			t.Errorf("%s: Login() = %+v, want %+v", c.name, got, c.want)
		}
	}
}
