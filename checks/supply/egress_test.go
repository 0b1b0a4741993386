package supply

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/probe/egress"
)

// staticResolver answers every name from a fixed table; unknown names do not resolve.
type staticResolver map[string][]netip.Addr

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

// Names a hostile mirror or a redirect could use for private space.
var privateNames = staticResolver{
	"metadata.test":  {netip.MustParseAddr("169.254.169.254")},
	"intranet.test":  {netip.MustParseAddr("10.1.2.3")},
	"localhost.test": {netip.MustParseAddr("127.0.0.1")},
	// one public and one private address: the name is refused as a whole
	"mixed.test": {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("192.168.1.1")},
}

// TestClientRedirectsGoThroughTheGuard: a supply source on loopback (allowed, as in the
// tests) that redirects to a private or metadata address, by IP literal or by a name
// resolving there, is refused with the guard's error; so is a redirect loop past the
// hop limit and a redirect that falls back from https to http. A redirect between
// allowed addresses is still followed.
func TestClientRedirectsGoThroughTheGuard(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte(`{}`))
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/local":
			http.Redirect(w, r, "/ok", http.StatusMovedPermanently)
		default:
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		}
	}))
	defer srv.Close()
	c := NewClient(ClientConfig{AllowLoopback: true, Resolver: privateNames, MaxRetries: -1})
	ctx := context.Background()
	for _, tt := range []struct{ name, url, reason string }{
		{"metadata literal", srv.URL + "/r?to=http://169.254.169.254/latest/meta-data/", "metadata"},
		{"metadata by name", srv.URL + "/r?to=http://metadata.test/latest/meta-data/", "metadata"},
		{"private literal", srv.URL + "/r?to=http://10.0.0.1/", "private"},
		{"private by name", srv.URL + "/r?to=http://intranet.test:8080/", "private"},
		{"public and private name", srv.URL + "/r?to=https://mixed.test/", "private"},
		{"IPv4-mapped metadata", srv.URL + "/r?to=http://[::ffff:169.254.169.254]/", "ipv4_mapped"},
		{"numeric host form", srv.URL + "/r?to=http://2852039166/", ""},
		{"redirect loop", srv.URL + "/loop", "redirect"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.do(ctx, request{service: "test", url: tt.url})
			if !errors.Is(err, egress.ErrBlocked) {
				t.Fatalf("err %v, want the guard's refusal", err)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("err %q does not name %q", err, tt.reason)
			}
		})
	}
	resp, err := c.do(ctx, request{service: "test", url: srv.URL + "/local"})
	if err != nil || resp.status != http.StatusOK {
		t.Fatalf("a redirect on allowed loopback: %v %+v", err, resp)
	}

	// A replaced transport (fixtures) still has every URL and hop checked.
	fixtures := NewClient(ClientConfig{MaxRetries: -1, Transport: http.DefaultTransport})
	if _, err := fixtures.do(ctx, request{service: "test", url: "http://169.254.169.254/"}); !errors.Is(err, egress.ErrBlocked) {
		t.Errorf("a replaced transport: metadata literal: %v, want the guard's refusal", err)
	}
}

// TestClientRefusesPrivateBaseURLs: without the loopback opt-in (the production
// setting, and what a source builds when given no client) a base URL on loopback, a
// private network or the metadata service is refused before anything is sent, by IP
// literal or by a name resolving there, and the source reports SourceFailed with the
// reason.
func TestClientRefusesPrivateBaseURLs(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	ctx := context.Background()
	c := NewClient(ClientConfig{Resolver: privateNames, MaxRetries: -1, Timeout: 5 * time.Second})
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	for _, base := range []string{
		srv.URL,
		"http://localhost.test" + port,
		"http://[::1]" + port,
		"http://169.254.169.254",
		"http://metadata.test",
		"https://10.0.0.1",
		"https://intranet.test",
		"http://192.168.0.10:4873",
	} {
		t.Run(base, func(t *testing.T) {
			_, err := c.do(ctx, request{service: "npm", url: base + "/left-pad"})
			if !errors.Is(err, egress.ErrBlocked) {
				t.Fatalf("err %v, want the guard's refusal", err)
			}
			pkg := NewNPM(NPMConfig{BaseURL: base, Client: c}).Package(ctx, "left-pad")
			if pkg.Facts.Source.Outcome != SourceFailed || !strings.Contains(pkg.Facts.Source.Error, "egress") {
				t.Errorf("npm source: %+v, want Failed naming the guard", pkg.Facts.Source)
			}
		})
	}
	// A source given no client builds the production one: no loopback either.
	if pkg := NewNPM(NPMConfig{BaseURL: srv.URL}).Package(ctx, "left-pad"); pkg.Facts.Source.Outcome != SourceFailed || !strings.Contains(pkg.Facts.Source.Error, "egress") {
		t.Errorf("a source's default client: %+v, want Failed naming the guard", pkg.Facts.Source)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback source was reached %d times without the opt-in", n)
	}
	// With the opt-in the same base URL is read.
	lc := NewClient(ClientConfig{AllowLoopback: true, MaxRetries: -1})
	if pkg := NewNPM(NPMConfig{BaseURL: srv.URL, Client: lc}).Package(ctx, "left-pad"); pkg.Facts.Source.Outcome != SourceNoData {
		t.Errorf("with AllowLoopback: %+v, want NoData (404)", pkg.Facts.Source)
	}
}
