package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeResolver answers from a table and records every lookup. Its answers for a host
// are a sequence: call n gets answers[host][min(n, len-1)].
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	err     error
	calls   []string // "network host"
}

func newResolver(t *testing.T, answers map[string][]string) *fakeResolver {
	t.Helper()
	r := &fakeResolver{answers: map[string][][]netip.Addr{}}
	for host, addrs := range answers {
		r.answers[host] = [][]netip.Addr{mustAddrs(t, addrs...)}
	}
	return r
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if strings.HasSuffix(c, " "+host) {
			n++
		}
	}
	r.calls = append(r.calls, network+" "+host)
	if r.err != nil {
		return nil, r.err
	}
	seq, ok := r.answers[host]
	if !ok || len(seq) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return seq[min(n, len(seq)-1)], nil
}

func (r *fakeResolver) lookups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// recordingDial never connects anywhere: it records the address and returns one end
// of a net.Pipe, or the error configured for the address.
type recordingDial struct {
	mu    sync.Mutex
	addrs []string
	fail  map[string]error
}

func (d *recordingDial) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, network+" "+addr)
	err := d.fail[addr]
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c1, c2 := net.Pipe()
	c2.Close()
	return c1, nil
}

func (d *recordingDial) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

func mustAddrs(t *testing.T, s ...string) []netip.Addr {
	t.Helper()
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", s, err)
	}
	return u
}

// assertBlocked checks err is a refusal with the given reason.
func assertBlocked(t *testing.T, err error, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("allowed, want blocked (%s)", reason)
	}
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("error %v (%T) does not match ErrBlocked", err, err)
	}
	var be *BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("error %v is not a *BlockedError", err)
	}
	if be.Reason != reason {
		t.Fatalf("reason %q, want %q (error: %v)", be.Reason, reason, err)
	}
}

// addrReasons are the reasons CheckURL gives for an IP-literal or numeric host; a URL
// refused for one of them must be refused identically by DialContext.
var addrReasons = map[string]bool{
	reasonLoopback: true, reasonPrivate: true, reasonLinkLocal: true, reasonCGNAT: true,
	reasonMulticast: true, reasonBroadcast: true, reasonUnspecified: true, reasonReserved: true,
	reasonDocumentation: true, reasonBenchmarking: true, reasonMetadata: true, reasonMapped: true,
	reasonCompatible: true, reasonNAT64: true, reason6to4: true, reasonZone: true, reasonNumericHost: true,
}

type hostileCase struct {
	name string
	// Exactly one of url, dial and redirect is set.
	url      string   // CheckURL
	dial     string   // DialContext("tcp", dial), names answered from dns
	redirect []string // CheckRedirect: the via chain, then the target
	dns      map[string][]string
	reason   string
}

var hostileCases = []hostileCase{
	// inet_aton numeric host forms.
	{name: "decimal loopback", url: "http://2130706433/", reason: reasonNumericHost},
	{name: "octal loopback", url: "http://0177.0.0.1/", reason: reasonNumericHost},
	{name: "hex octet loopback", url: "http://0x7f.0.0.1/", reason: reasonNumericHost},
	{name: "hex octet uppercase", url: "http://0X7F.1/", reason: reasonNumericHost},
	{name: "short form", url: "http://127.1/", reason: reasonNumericHost},
	{name: "hex dword", url: "http://0x7f000001/", reason: reasonNumericHost},
	{name: "octal dword", url: "http://017700000001/", reason: reasonNumericHost},
	{name: "leading zero octet", url: "http://127.0.0.01/", reason: reasonNumericHost},
	{name: "decimal private", url: "http://3232235521:8080/", reason: reasonNumericHost},
	{name: "hex metadata", url: "http://0xa9fea9fe/latest/meta-data/", reason: reasonNumericHost},
	{name: "five labels", url: "http://1.2.3.4.5/", reason: reasonNumericHost},
	{name: "bare 0x", url: "http://0x/", reason: reasonNumericHost},
	{name: "fullwidth digits", url: "http://１２７.０.０.１/", reason: reasonNumericHost},
	{name: "ideographic full stops", url: "http://127。0。0。1/", reason: reasonNumericHost},
	{name: "circled digit", url: "http://127.0.0.①/", reason: reasonNumericHost},
	{name: "trailing dot literal", url: "http://127.0.0.1./", reason: reasonLoopback},

	// IPv6 forms embedding IPv4.
	{name: "mapped dotted loopback", url: "http://[::ffff:127.0.0.1]/", reason: reasonMapped},
	{name: "mapped hex loopback", url: "http://[::ffff:7f00:1]/", reason: reasonMapped},
	{name: "mapped metadata", url: "http://[::ffff:169.254.169.254]/", reason: reasonMapped},
	{name: "mapped private with port", url: "https://[::ffff:10.0.0.1]:8443/", reason: reasonMapped},
	{name: "mapped unspecified", url: "http://[::ffff:0.0.0.0]/", reason: reasonMapped},
	{name: "compatible loopback", url: "http://[::127.0.0.1]/", reason: reasonCompatible},
	{name: "compatible metadata hex", url: "http://[::a9fe:a9fe]/", reason: reasonCompatible},
	{name: "compatible public still denied", url: "http://[::8.8.8.8]/", reason: reasonCompatible},
	{name: "nat64 loopback", url: "http://[64:ff9b::7f00:1]/", reason: reasonNAT64},
	{name: "nat64 metadata", url: "http://[64:ff9b::169.254.169.254]/", reason: reasonNAT64},
	{name: "nat64 private", url: "http://[64:ff9b::10.1.2.3]/", reason: reasonNAT64},
	{name: "6to4 loopback", url: "http://[2002:7f00:1::]/", reason: reason6to4},
	{name: "6to4 private", url: "http://[2002:c0a8:101::1]/", reason: reason6to4},
	{name: "6to4 metadata", url: "http://[2002:a9fe:a9fe::1]/", reason: reason6to4},

	// Unspecified.
	{name: "0.0.0.0", url: "http://0.0.0.0:8080/", reason: reasonUnspecified},
	{name: "this network", url: "http://0.1.2.3/", reason: reasonUnspecified},
	{name: "ipv6 unspecified", url: "http://[::]/", reason: reasonUnspecified},

	// Metadata services.
	{name: "aws gcp azure metadata", url: "http://169.254.169.254/latest/meta-data/", reason: reasonMetadata},
	{name: "aws ecs metadata", url: "http://169.254.170.2/v2/credentials", reason: reasonMetadata},
	{name: "aws ipv6 metadata", url: "http://[fd00:ec2::254]/latest/meta-data/", reason: reasonMetadata},
	{name: "alibaba metadata", url: "http://100.100.100.200/latest/meta-data/", reason: reasonMetadata},
	{name: "azure wireserver", url: "http://168.63.129.16/machine?comp=goalstate", reason: reasonMetadata},

	// Private, loopback, link-local and CGNAT range edges.
	{name: "cgnat first", url: "http://100.64.0.0/", reason: reasonCGNAT},
	{name: "cgnat last", url: "http://100.127.255.255/", reason: reasonCGNAT},
	{name: "10/8 first", url: "http://10.0.0.0/", reason: reasonPrivate},
	{name: "10/8 last", url: "http://10.255.255.255/", reason: reasonPrivate},
	{name: "172.16/12 first", url: "http://172.16.0.0/", reason: reasonPrivate},
	{name: "172.16/12 last", url: "http://172.31.255.255/", reason: reasonPrivate},
	{name: "192.168/16 first", url: "http://192.168.0.0/", reason: reasonPrivate},
	{name: "192.168/16 last", url: "http://192.168.255.255/", reason: reasonPrivate},
	{name: "loopback first", url: "http://127.0.0.0/", reason: reasonLoopback},
	{name: "loopback", url: "http://127.0.0.1:9000/", reason: reasonLoopback},
	{name: "loopback last", url: "http://127.255.255.255/", reason: reasonLoopback},
	{name: "ipv6 loopback", url: "http://[::1]:8080/", reason: reasonLoopback},
	{name: "link-local first", url: "http://169.254.0.0/", reason: reasonLinkLocal},
	{name: "link-local last", url: "http://169.254.255.255/", reason: reasonLinkLocal},
	{name: "ipv6 link-local", url: "http://[fe80::1]/", reason: reasonLinkLocal},
	{name: "ipv6 link-local last", url: "http://[febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/", reason: reasonLinkLocal},
	{name: "ula first", url: "http://[fc00::]/", reason: reasonPrivate},
	{name: "ula last", url: "http://[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/", reason: reasonPrivate},
	{name: "site-local", url: "http://[fec0::1]/", reason: reasonReserved},

	// Multicast, broadcast, reserved.
	{name: "multicast first", url: "http://224.0.0.0/", reason: reasonMulticast},
	{name: "multicast last", url: "http://239.255.255.255/", reason: reasonMulticast},
	{name: "ipv6 multicast", url: "http://[ff02::1]/", reason: reasonMulticast},
	{name: "broadcast", url: "http://255.255.255.255/", reason: reasonBroadcast},
	{name: "class E first", url: "http://240.0.0.0/", reason: reasonReserved},
	{name: "class E last", url: "http://255.255.255.254/", reason: reasonReserved},
	{name: "ietf protocol assignments", url: "http://192.0.0.8/", reason: reasonReserved},
	{name: "6to4 relay anycast", url: "http://192.88.99.1/", reason: reasonReserved},
	{name: "teredo", url: "http://[2001::1]/", reason: reasonReserved},
	{name: "orchid v2", url: "http://[2001:20::1]/", reason: reasonReserved},
	{name: "discard-only", url: "http://[100::1]/", reason: reasonReserved},
	{name: "local-use nat64", url: "http://[64:ff9b:1::a00:1]/", reason: reasonReserved},
	{name: "outside 2000::/3", url: "http://[4000::1]/", reason: reasonReserved},
	{name: "ipv4-translated", url: "http://[::ffff:0:808:808]/", reason: reasonReserved},

	// Documentation and benchmarking.
	{name: "test-net-1", url: "http://192.0.2.1/", reason: reasonDocumentation},
	{name: "test-net-2 last", url: "http://198.51.100.255/", reason: reasonDocumentation},
	{name: "test-net-3 first", url: "http://203.0.113.0/", reason: reasonDocumentation},
	{name: "ipv6 documentation", url: "http://[2001:db8::1]/", reason: reasonDocumentation},
	{name: "ipv6 documentation 3fff", url: "http://[3fff:fff::1]/", reason: reasonDocumentation},
	{name: "benchmarking first", url: "http://198.18.0.0/", reason: reasonBenchmarking},
	{name: "benchmarking last", url: "http://198.19.255.255/", reason: reasonBenchmarking},

	// Userinfo, schemes, zones, ports, malformed hosts.
	{name: "user", url: "http://user@example.com/", reason: reasonUserinfo},
	{name: "user and password", url: "http://user:pass@example.com/", reason: reasonUserinfo},
	{name: "empty userinfo", url: "http://@example.com/", reason: reasonUserinfo},
	{name: "empty password", url: "https://user:@example.com/", reason: reasonUserinfo},
	{name: "userinfo hiding a public-looking host", url: "http://example.com@127.0.0.1/", reason: reasonUserinfo},
	{name: "file scheme", url: "file:///etc/passwd", reason: reasonScheme},
	{name: "gopher scheme", url: "gopher://example.com:70/_x", reason: reasonScheme},
	{name: "ftp scheme", url: "ftp://example.com/", reason: reasonScheme},
	{name: "ws scheme", url: "ws://example.com/", reason: reasonScheme},
	{name: "relative url", url: "//example.com/", reason: reasonScheme},
	{name: "link-local zone", url: "http://[fe80::1%25eth0]/", reason: reasonZone},
	{name: "public zone", url: "http://[2606:4700::1111%25eth0]/", reason: reasonZone},
	{name: "opaque", url: "http:example.com", reason: reasonMissingHost},
	{name: "no host", url: "http:///path", reason: reasonMissingHost},
	{name: "port zero", url: "http://example.com:0/", reason: reasonPort},
	{name: "port too large", url: "http://example.com:65536/", reason: reasonPort},
	{name: "junk host characters", url: "http://exa!mple.com/", reason: reasonInvalidHost},
	{name: "empty label", url: "http://a..example/", reason: reasonInvalidHost},

	// Names resolving into denied space (fake resolver; Dial must never be called).
	{name: "name to private", dial: "internal.example:443", dns: map[string][]string{"internal.example": {"10.0.0.5"}}, reason: reasonPrivate},
	{name: "name to metadata", dial: "meta.example:80", dns: map[string][]string{"meta.example": {"169.254.169.254"}}, reason: reasonMetadata},
	{name: "name to loopback", dial: "localhost:80", dns: map[string][]string{"localhost": {"127.0.0.1"}}, reason: reasonLoopback},
	{name: "name to ipv6 loopback", dial: "v6.example:80", dns: map[string][]string{"v6.example": {"::1"}}, reason: reasonLoopback},
	{name: "name to cgnat", dial: "cgnat.example:80", dns: map[string][]string{"cgnat.example": {"100.64.1.1"}}, reason: reasonCGNAT},
	{name: "name to ula metadata", dial: "imds6.example:80", dns: map[string][]string{"imds6.example": {"fd00:ec2::254"}}, reason: reasonMetadata},
	{name: "name to mapped private (unmapped first)", dial: "mapped.example:80", dns: map[string][]string{"mapped.example": {"::ffff:10.0.0.1"}}, reason: reasonPrivate},
	{name: "name to nat64 loopback", dial: "nat64.example:80", dns: map[string][]string{"nat64.example": {"64:ff9b::127.0.0.1"}}, reason: reasonNAT64},
	{name: "name to public and private", dial: "mixed.example:443", dns: map[string][]string{"mixed.example": {"93.184.215.14", "192.168.1.1"}}, reason: reasonPrivate},
	{name: "name to public and ula", dial: "mixed6.example:443", dns: map[string][]string{"mixed6.example": {"2606:4700::1111", "fd12:3456::1"}}, reason: reasonPrivate},
	{name: "name to public and link-local zone", dial: "zone.example:443", dns: map[string][]string{"zone.example": {"8.8.8.8", "fe80::1%eth0"}}, reason: reasonZone},
	{name: "dial decimal host", dial: "2130706433:80", reason: reasonNumericHost},
	{name: "dial short host", dial: "127.1:80", reason: reasonNumericHost},
	{name: "dial mapped literal", dial: "[::ffff:127.0.0.1]:80", reason: reasonMapped},
	{name: "dial metadata literal", dial: "169.254.169.254:80", reason: reasonMetadata},
	{name: "dial zone literal", dial: "[fe80::1%eth0]:80", reason: reasonZone},
	{name: "dial trailing dot literal", dial: "127.0.0.1.:80", reason: reasonLoopback},
	{name: "dial port zero", dial: "example.com:0", reason: reasonPort},
	{name: "dial service name port", dial: "example.com:http", reason: reasonPort},
	{name: "dial junk host", dial: "exa mple.com:80", reason: reasonInvalidHost},
	{name: "dial non-ascii host", dial: "bücher.example:80", reason: reasonInvalidHost},
	{name: "dial no port", dial: "example.com", reason: reasonInvalidHost},

	// Redirects.
	{name: "redirect to private", redirect: []string{"https://example.com/mcp", "https://10.0.0.1/mcp"}, reason: reasonPrivate},
	{name: "redirect to metadata", redirect: []string{"http://example.com/", "http://example.org/", "http://169.254.169.254/latest/meta-data/"}, reason: reasonMetadata},
	{name: "redirect to numeric host", redirect: []string{"http://example.com/", "http://0x7f.1/"}, reason: reasonNumericHost},
	{name: "redirect to file", redirect: []string{"http://example.com/", "file:///etc/passwd"}, reason: reasonScheme},
	{name: "redirect adds userinfo", redirect: []string{"https://example.com/", "https://a:b@example.com/"}, reason: reasonUserinfo},
	{name: "https to http downgrade", redirect: []string{"https://example.com/mcp", "http://example.com/mcp"}, reason: reasonDowngrade},
	{name: "downgrade after earlier https", redirect: []string{"https://example.com/", "https://example.org/", "http://example.net/"}, reason: reasonDowngrade},
	{name: "fourth redirect", redirect: []string{"https://a.example/", "https://b.example/", "https://c.example/", "https://d.example/", "https://e.example/"}, reason: reasonTooManyRedirec},
}

func TestHostile(t *testing.T) {
	if len(hostileCases) < 70 {
		t.Fatalf("only %d hostile cases", len(hostileCases))
	}
	seen := map[string]bool{}
	for _, tc := range hostileCases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			res := newResolver(t, tc.dns)
			rec := &recordingDial{}
			g := New(Config{Resolver: res, Dial: rec.Dial})
			ctx := context.Background()
			switch {
			case tc.url != "":
				u := mustURL(t, tc.url)
				assertBlocked(t, g.CheckURL(u), tc.reason)
				if addrReasons[tc.reason] {
					// The same host must be refused at dial time too, without a lookup.
					port := u.Port()
					if port == "" {
						port = "80"
					}
					_, err := g.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
					assertBlocked(t, err, tc.reason)
				}
			case tc.dial != "":
				c, err := g.DialContext(ctx, "tcp", tc.dial)
				if c != nil {
					c.Close()
				}
				assertBlocked(t, err, tc.reason)
			case len(tc.redirect) > 0:
				var via []*http.Request
				for _, s := range tc.redirect[:len(tc.redirect)-1] {
					via = append(via, &http.Request{URL: mustURL(t, s)})
				}
				req := &http.Request{URL: mustURL(t, tc.redirect[len(tc.redirect)-1])}
				assertBlocked(t, g.CheckRedirect(req, via), tc.reason)
			default:
				t.Fatal("empty case")
			}
			if d := rec.dialed(); len(d) != 0 {
				t.Fatalf("Dial was called: %v", d)
			}
			if tc.dns == nil {
				if l := res.lookups(); len(l) != 0 {
					t.Fatalf("resolver was asked: %v", l)
				}
			}
		})
	}
}

func TestPublicAllowed(t *testing.T) {
	for _, s := range []string{
		"8.8.8.8", "1.1.1.1", "2606:4700::1111", "2001:4860:4860::8888",
		"9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
		"168.63.129.15", "168.63.129.17", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
		"192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255",
		"::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1", "2001:200::1", "3fff:1000::1",
	} {
		a := netip.MustParseAddr(s)
		if err := New(Config{}).CheckAddr(a); err != nil {
			t.Errorf("CheckAddr(%s): %v", s, err)
		}
	}
	for _, s := range []string{
		"https://8.8.8.8/", "https://1.1.1.1:443/mcp", "https://[2606:4700::1111]/", "http://example.com/mcp",
		"HTTPS://Example.COM:8443/mcp?x=1", "https://mcp.example.com./", "https://xn--bcher-kva.example/",
		"https://bücher.example/", "https://my_host.example/", "https://1password.com/", "http://example.com:/",
	} {
		if err := New(Config{}).CheckURL(mustURL(t, s)); err != nil {
			t.Errorf("CheckURL(%s): %v", s, err)
		}
	}
}

func TestDialPublic(t *testing.T) {
	res := newResolver(t, map[string][]string{
		"public.example": {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:10c8", "93.184.215.14"},
		"hosts.example":  {"::ffff:8.8.4.4"},
	})
	rec := &recordingDial{fail: map[string]error{"93.184.215.14:443": errors.New("unreachable")}}
	g := New(Config{Resolver: res, Dial: rec.Dial})
	ctx := context.Background()
	for _, tc := range []struct {
		network, addr string
		want          []string
	}{
		{"tcp", "8.8.8.8:53", []string{"tcp 8.8.8.8:53"}},
		{"tcp", "1.1.1.1:443", []string{"tcp 1.1.1.1:443"}},
		{"tcp", "[2606:4700::1111]:443", []string{"tcp [2606:4700::1111]:443"}},
		// The first address fails; the next checked literal is tried; duplicates are dropped.
		{"tcp", "public.example:443", []string{"tcp 93.184.215.14:443", "tcp [2606:2800:21f:cb07:6820:80da:af6b:10c8]:443"}},
		{"tcp6", "public.example:443", []string{"tcp6 [2606:2800:21f:cb07:6820:80da:af6b:10c8]:443"}},
		{"tcp4", "public.example:80", []string{"tcp4 93.184.215.14:80"}},
		{"tcp", "hosts.example:443", []string{"tcp 8.8.4.4:443"}},
	} {
		rec.mu.Lock()
		rec.addrs = nil
		rec.mu.Unlock()
		c, err := g.DialContext(ctx, tc.network, tc.addr)
		if err != nil {
			t.Fatalf("DialContext(%s, %s): %v", tc.network, tc.addr, err)
		}
		c.Close()
		if got := rec.dialed(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("DialContext(%s, %s) dialed %v, want %v", tc.network, tc.addr, got, tc.want)
		}
	}
	want := []string{"ip public.example", "ip6 public.example", "ip4 public.example", "ip hosts.example"}
	if got := res.lookups(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lookups %v, want %v", got, want)
	}
}

func TestDialErrors(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("a", 60) + "." + strings.Repeat("b", 60) + ".example"

	// Resolution failure: the DNS error survives for errors.As, the text stays short.
	res := &fakeResolver{err: &net.DNSError{Err: "no such host", Name: long + strings.Repeat(".x", 100), IsNotFound: true}}
	g := New(Config{Resolver: res, Dial: (&recordingDial{}).Dial})
	_, err := g.DialContext(ctx, "tcp", long+":443")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || errors.Is(err, ErrBlocked) {
		t.Fatalf("resolver failure: %v", err)
	}
	if len(err.Error()) > 160 {
		t.Errorf("error text too long (%d): %s", len(err.Error()), err)
	}

	// An empty answer is a not-found DNS error.
	g = New(Config{Resolver: newResolver(t, map[string][]string{"empty.example": {}}), Dial: (&recordingDial{}).Dial})
	if _, err := g.DialContext(ctx, "tcp", "empty.example:443"); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("empty answer: %v", err)
	}

	// No address of the requested family.
	g = New(Config{Resolver: newResolver(t, map[string][]string{"v4only.example": {"8.8.8.8"}}), Dial: (&recordingDial{}).Dial})
	if _, err := g.DialContext(ctx, "tcp6", "v4only.example:443"); !errors.As(err, &dnsErr) {
		t.Errorf("family mismatch: %v", err)
	}

	// Non-TCP networks are refused.
	for _, network := range []string{"udp", "unix", "ip4:icmp", ""} {
		_, err := g.DialContext(ctx, network, "8.8.8.8:53")
		assertBlocked(t, err, reasonNetwork)
	}

	// A cancelled context stops before dialling.
	rec := &recordingDial{}
	g = New(Config{Resolver: newResolver(t, map[string][]string{"p.example": {"8.8.8.8"}}), Dial: rec.Dial})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.DialContext(cctx, "tcp", "p.example:443"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if d := rec.dialed(); len(d) != 0 {
		t.Errorf("dialled after cancel: %v", d)
	}

	// At most maxDialAttempts checked addresses are tried.
	many := []string{"8.8.8.1", "8.8.8.2", "8.8.8.3", "8.8.8.4", "8.8.8.5", "8.8.8.6"}
	fail := map[string]error{}
	for _, a := range many {
		fail[a+":443"] = errors.New("unreachable")
	}
	rec = &recordingDial{fail: fail}
	g = New(Config{Resolver: newResolver(t, map[string][]string{"many.example": many}), Dial: rec.Dial})
	if _, err := g.DialContext(ctx, "tcp", "many.example:443"); err == nil || err.Error() != "unreachable" {
		t.Errorf("many: %v", err)
	}
	if d := rec.dialed(); len(d) != maxDialAttempts {
		t.Errorf("tried %d addresses, want %d: %v", len(d), maxDialAttempts, d)
	}
}

// TestRebinding: a resolver answering public first and private afterwards cannot
// rebind a connection, because DialContext looks the name up once and dials the
// checked IP literal it got.
func TestRebinding(t *testing.T) {
	res := &fakeResolver{answers: map[string][][]netip.Addr{
		"rebind.example": {mustAddrs(t, "93.184.215.14"), mustAddrs(t, "127.0.0.1")},
	}}
	rec := &recordingDial{}
	g := New(Config{Resolver: res, Dial: rec.Dial})
	c, err := g.DialContext(context.Background(), "tcp", "rebind.example:443")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := res.lookups(); len(got) != 1 {
		t.Fatalf("lookups %v, want exactly one", got)
	}
	got := rec.dialed()
	if len(got) != 1 || got[0] != "tcp 93.184.215.14:443" {
		t.Fatalf("dialed %v, want the checked literal 93.184.215.14:443", got)
	}
	if strings.Contains(got[0], "rebind") {
		t.Fatalf("Dial received the name: %v", got)
	}
	// The next connection does its own lookup, which now answers loopback: refused.
	_, err = g.DialContext(context.Background(), "tcp", "rebind.example:443")
	assertBlocked(t, err, reasonLoopback)
	if got := rec.dialed(); len(got) != 1 {
		t.Fatalf("dialed again: %v", got)
	}
}

func TestAllowLoopback(t *testing.T) {
	rec := &recordingDial{}
	res := newResolver(t, map[string][]string{"localhost": {"127.0.0.1", "::1"}, "lan.example": {"127.0.0.1", "10.0.0.1"}})
	g := New(Config{AllowLoopback: true, Resolver: res, Dial: rec.Dial})
	for _, s := range []string{"127.0.0.1", "127.0.0.0", "127.255.255.255", "::1", "::ffff:127.0.0.1"} {
		if err := g.CheckAddr(netip.MustParseAddr(s)); err != nil {
			t.Errorf("AllowLoopback CheckAddr(%s): %v", s, err)
		}
	}
	for s, reason := range map[string]string{
		"10.0.0.1": reasonPrivate, "192.168.1.1": reasonPrivate, "169.254.169.254": reasonMetadata,
		"0.0.0.0": reasonUnspecified, "::": reasonUnspecified, "fd00:ec2::254": reasonMetadata,
		"::127.0.0.1": reasonCompatible, "64:ff9b::7f00:1": reasonNAT64, "2002:7f00:1::": reason6to4,
		"::ffff:10.0.0.1": reasonMapped, "fe80::1": reasonLinkLocal, "100.100.100.200": reasonMetadata,
	} {
		assertBlocked(t, g.CheckAddr(netip.MustParseAddr(s)), reason)
	}
	if err := g.CheckURL(mustURL(t, "http://127.0.0.1:8080/mcp")); err != nil {
		t.Errorf("AllowLoopback CheckURL: %v", err)
	}
	if err := g.CheckURL(mustURL(t, "http://[::1]:8080/mcp")); err != nil {
		t.Errorf("AllowLoopback CheckURL v6: %v", err)
	}
	assertBlocked(t, g.CheckURL(mustURL(t, "http://127.1/")), reasonNumericHost)
	assertBlocked(t, g.CheckURL(mustURL(t, "http://10.0.0.1/")), reasonPrivate)
	c, err := g.DialContext(context.Background(), "tcp", "localhost:8080")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := rec.dialed(); fmt.Sprint(got) != "[tcp 127.0.0.1:8080]" {
		t.Errorf("dialed %v", got)
	}
	_, err = g.DialContext(context.Background(), "tcp", "lan.example:80")
	assertBlocked(t, err, reasonPrivate)

	// Denied by default.
	d := New(Config{})
	assertBlocked(t, d.CheckAddr(netip.MustParseAddr("127.0.0.1")), reasonLoopback)
	assertBlocked(t, d.CheckAddr(netip.MustParseAddr("::1")), reasonLoopback)
	assertBlocked(t, d.CheckAddr(netip.MustParseAddr("::ffff:127.0.0.1")), reasonMapped)
}

func TestControl(t *testing.T) {
	g := New(Config{})
	for _, tc := range []struct{ network, address, reason string }{
		{"tcp4", "127.0.0.1:80", reasonLoopback},
		{"tcp4", "10.1.2.3:443", reasonPrivate},
		{"tcp4", "169.254.169.254:80", reasonMetadata},
		{"tcp4", "168.63.129.16:32526", reasonMetadata},
		{"tcp4", "0.0.0.0:80", reasonUnspecified},
		{"tcp6", "[::1]:443", reasonLoopback},
		{"tcp6", "[::ffff:169.254.169.254]:80", reasonMapped},
		{"tcp6", "[fe80::1%eth0]:80", reasonZone},
		{"tcp6", "[fd00:ec2::254]:80", reasonMetadata},
		{"tcp6", "[::]:80", reasonUnspecified},
		{"tcp4", "8.8.8.8:0", reasonPort},
		{"tcp4", "garbage", reasonInvalidAddr},
		{"tcp4", "localhost:80", reasonInvalidAddr},
		{"unix", "/var/run/docker.sock", reasonInvalidAddr},
	} {
		assertBlocked(t, g.Control(tc.network, tc.address, nil), tc.reason)
	}
	for _, tc := range []struct{ network, address string }{
		{"tcp4", "8.8.8.8:53"}, {"tcp6", "[2606:4700::1111]:443"}, {"tcp6", "[::ffff:1.1.1.1]:443"},
	} {
		if err := g.Control(tc.network, tc.address, nil); err != nil {
			t.Errorf("Control(%s, %s): %v", tc.network, tc.address, err)
		}
	}
	lg := New(Config{AllowLoopback: true})
	if err := lg.Control("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Errorf("AllowLoopback Control tcp4: %v", err)
	}
	if err := lg.Control("tcp6", "[::1]:80", nil); err != nil {
		t.Errorf("AllowLoopback Control tcp6: %v", err)
	}
	assertBlocked(t, lg.Control("tcp4", "10.0.0.1:80", nil), reasonPrivate)
}

// TestDefaultDialControl shows the default Dial's Control refuses a denied address
// before connecting, even when handed a literal directly (loopback only).
func TestDefaultDialControl(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	ctx := context.Background()
	_, err = New(Config{}).dial(ctx, "tcp", ln.Addr().String())
	assertBlocked(t, err, reasonLoopback)
	c, err := New(Config{AllowLoopback: true}).dial(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("allowed connection not accepted")
	}
	select {
	case <-accepted:
		t.Fatal("the refused connection was made")
	default:
	}
}

func TestRedirectAllowed(t *testing.T) {
	g := New(Config{})
	chain := []string{"https://a.example/", "https://b.example/", "https://c.example/"}
	var via []*http.Request
	for _, s := range chain {
		via = append(via, &http.Request{URL: mustURL(t, s)})
		// Cross-host, https to https, up to 3 hops.
		if err := g.CheckRedirect(&http.Request{URL: mustURL(t, "https://d.example/")}, via); err != nil {
			t.Fatalf("hop %d: %v", len(via), err)
		}
	}
	if err := g.CheckRedirect(&http.Request{URL: mustURL(t, "https://example.com/")}, []*http.Request{{URL: mustURL(t, "http://example.com/")}}); err != nil {
		t.Errorf("http to https: %v", err)
	}
	one := New(Config{MaxRedirects: 1})
	assertBlocked(t, one.CheckRedirect(&http.Request{URL: mustURL(t, "https://d.example/")}, via[:2]), reasonTooManyRedirec)
}

func TestErrorText(t *testing.T) {
	long := strings.Repeat("é", 200) + "\x1b[31m"
	g := New(Config{Resolver: &fakeResolver{}, Dial: (&recordingDial{}).Dial})
	errs := []error{
		g.CheckURL(&url.URL{Scheme: "http", Host: long}),
		g.CheckURL(&url.URL{Scheme: "http", Host: "0x" + strings.Repeat("f", 500)}),
		g.CheckURL(&url.URL{Scheme: "http", Host: long, User: url.UserPassword("user", "s3cret")}),
		g.CheckURL(mustURL(t, "http://[fe80::1%25"+strings.Repeat("z", 300)+"]/")),
		g.CheckAddr(netip.MustParseAddr("fe80::1%" + strings.Repeat("z", 300))),
		g.CheckRedirect(&http.Request{URL: &url.URL{Scheme: "http", Host: long}}, []*http.Request{{URL: mustURL(t, "https://x.example/")}}),
	}
	_, err := g.DialContext(context.Background(), "tcp", strings.Repeat("a.", 300)+"com:443")
	errs = append(errs, err)
	_, err = g.DialContext(context.Background(), "tcp", strings.Repeat("x", 5000))
	errs = append(errs, err)
	for i, err := range errs {
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%d: not blocked: %v", i, err)
			continue
		}
		msg := err.Error()
		if len(msg) > 160 || strings.Contains(msg, "s3cret") || strings.Contains(msg, "\x1b") {
			t.Errorf("%d: error text %d bytes: %q", i, len(msg), msg)
		}
		var be *BlockedError
		if errors.As(err, &be) && (len(be.Host) > maxQuoted+3 || strings.ContainsAny(be.Host, "\"\\\x1b")) {
			t.Errorf("%d: Host field %d bytes", i, len(be.Host))
		}
	}
	if got := (*BlockedError)(nil).Error(); got != ErrBlocked.Error() {
		t.Errorf("nil BlockedError: %q", got)
	}
}

func TestNoPanics(t *testing.T) {
	g := New(Config{Resolver: newResolver(t, nil), Dial: (&recordingDial{}).Dial})
	_ = g.CheckURL(nil)
	_ = g.CheckURL(&url.URL{})
	_ = g.CheckURL(&url.URL{Scheme: "http", Host: "[::1"})
	_ = g.CheckURL(&url.URL{Scheme: "http", Host: "::1"})
	_ = g.CheckURL(&url.URL{Scheme: "http", Host: "\xff\xfe"})
	_ = g.CheckURL(&url.URL{Scheme: "http", Host: "."})
	_ = g.CheckURL(&url.URL{Scheme: "http", Host: "a:99999999999999999999"})
	_ = g.CheckAddr(netip.Addr{})
	_ = g.CheckRedirect(nil, nil)
	_ = g.CheckRedirect(&http.Request{}, nil)
	_ = g.CheckRedirect(&http.Request{URL: mustURL(t, "http://example.com/")}, []*http.Request{nil, {}})
	_ = g.Control("", "", nil)
	//lint:ignore SA1012 a nil context must not panic
	_, _ = g.DialContext(nil, "tcp", "example.com:80")
	for _, addr := range []string{"", ":", ":80", "[]:80", "[::1", "%:80", "[%]:80", "\x00:80", ".:80", "..:80"} {
		_, _ = g.DialContext(context.Background(), "tcp", addr)
	}
	assertBlocked(t, g.CheckAddr(netip.Addr{}), reasonInvalidAddr)
	assertBlocked(t, g.CheckURL(nil), reasonInvalidURL)
	assertBlocked(t, g.CheckRedirect(nil, nil), reasonInvalidURL)

	// A resolver answering an invalid address is refused, not dialled.
	res := &fakeResolver{answers: map[string][][]netip.Addr{"bad.example": {{netip.Addr{}}}}}
	g = New(Config{Resolver: res, Dial: (&recordingDial{}).Dial})
	_, err := g.DialContext(context.Background(), "tcp", "bad.example:80")
	assertBlocked(t, err, reasonInvalidAddr)
}

func FuzzGuard(f *testing.F) {
	for _, tc := range hostileCases {
		f.Add(tc.url + tc.dial)
	}
	f.Add("https://example.com/")
	f.Fuzz(func(t *testing.T, s string) {
		rec := &recordingDial{}
		g := New(Config{Resolver: &fakeResolver{answers: map[string][][]netip.Addr{}}, Dial: rec.Dial})
		if u, err := url.Parse(s); err == nil {
			if err := g.CheckURL(u); err != nil && len(err.Error()) > 160 {
				t.Errorf("long error: %d", len(err.Error()))
			}
			_ = g.CheckRedirect(&http.Request{URL: u}, []*http.Request{{URL: u}})
		}
		if c, err := g.DialContext(context.Background(), "tcp", s); err == nil {
			c.Close()
			// Only a literal can get here (the resolver knows no names): it must be allowed.
			for _, d := range rec.dialed() {
				ap, perr := netip.ParseAddrPort(strings.TrimPrefix(d, "tcp "))
				if perr != nil || g.CheckAddr(ap.Addr()) != nil {
					t.Fatalf("dialled %q", d)
				}
			}
		}
		_ = g.Control("tcp", s, nil)
		if a, err := netip.ParseAddr(s); err == nil {
			_ = g.CheckAddr(a)
		}
	})
}

func TestTransport(t *testing.T) {
	tr := New(Config{}).Transport()
	if tr.Proxy != nil || tr.DialContext == nil || tr.TLSClientConfig == nil ||
		tr.TLSClientConfig.MinVersion != tls.VersionTLS12 || !tr.ForceAttemptHTTP2 ||
		tr.TLSHandshakeTimeout != 5*time.Second || tr.ResponseHeaderTimeout != 10*time.Second ||
		tr.MaxResponseHeaderBytes != 64<<10 || tr.IdleConnTimeout != 30*time.Second || tr.DisableCompression {
		t.Fatalf("transport settings: %+v", tr)
	}
	if New(Config{}).Transport() == tr {
		t.Fatal("Transport must return a new transport")
	}
}

// TestTransportLoopback makes real connections, to 127.0.0.1 only.
func TestTransportLoopback(t *testing.T) {
	var hits sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.URL.Path, true)
		switch r.URL.Path {
		case "/redirect-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/redirect-self":
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server not on 127.0.0.1: %s", srv.URL)
	}

	get := func(g *Guard, path string) (string, error) {
		tr := g.Transport()
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr, CheckRedirect: g.CheckRedirect, Timeout: 10 * time.Second}
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	allow := New(Config{AllowLoopback: true})
	if body, err := get(allow, "/ok"); err != nil || body != "ok" {
		t.Fatalf("AllowLoopback: %q, %v", body, err)
	}
	if body, err := get(allow, "/redirect-self"); err != nil || body != "ok" {
		t.Fatalf("AllowLoopback redirect: %q, %v", body, err)
	}
	_, err := get(allow, "/redirect-metadata")
	assertBlocked(t, err, reasonMetadata)

	hits.Delete("/denied")
	_, err = get(New(Config{}), "/denied")
	assertBlocked(t, err, reasonLoopback)
	if _, ok := hits.Load("/denied"); ok {
		t.Fatal("the refused request reached the server")
	}
}

func ExampleGuard() {
	g := New(Config{})
	client := &http.Client{Transport: g.Transport(), CheckRedirect: g.CheckRedirect}
	_ = client

	err := g.CheckURL(&url.URL{Scheme: "http", Host: "0x7f.1"})
	fmt.Println(errors.Is(err, ErrBlocked), err)
	// Output: true egress: destination not allowed: numeric_host_form host "0x7f.1"
}
