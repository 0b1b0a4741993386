package webhook

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// secretPath and secretQuery are a webhook URL's secret, as Slack's and Discord's
// URLs carry theirs.
const (
	secretPath  = "/services/T0001/B0002/pathSECRETxyz"
	secretQuery = "token=querySECRETabc"
)

// syncBuffer is a log's buffer that the service's parallel workers may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// refusingAddr is a loopback address where nothing listens.
func refusingAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// resettingAddr is a loopback address whose server reads each request and resets the
// connection instead of answering.
func resettingAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					io.Copy(io.Discard, req.Body)
				}
				c.(*net.TCPConn).SetLinger(0) // close with a RST
				c.Close()
			}()
		}
	}()
	return l.Addr().String()
}

// quietServer is an httptest server (TLS or not) whose handshake errors are not
// printed.
func quietServer(t *testing.T, tls bool) string {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// TestFailureHidesURL: a delivery that gets no response (refused, reset, an untrusted
// certificate, no TLS at all) is described in fixed words; neither the owner's
// delivery log, nor the webhook's disabled reason, nor the server's log holds the
// URL's path or query, where the receiver's secret may be.
func TestFailureHidesURL(t *testing.T) {
	for _, tc := range []struct {
		name, scheme string
		addr         func(*testing.T) string
		want         string
	}{
		{"refused", "http", refusingAddr, "could not connect: the connection was refused"},
		{"reset", "http", resettingAddr, "the connection was reset by the receiver"},
		{"untrusted certificate", "https", func(t *testing.T) string { return quietServer(t, true) },
			"TLS: the certificate is not signed by a trusted authority"},
		{"not TLS", "https", func(t *testing.T) string { return quietServer(t, false) },
			"TLS: the receiver did not answer in TLS (is it plain http?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, true)
			var logged syncBuffer
			f.svc.log = slog.New(slog.NewTextHandler(&logged, nil))
			f.svc.cfg.DisableAfter = 1 // the disabled reason quotes the failure too
			ctx := context.Background()
			w, err := f.svc.Register(ctx, f.accounts[0], tc.scheme+"://"+tc.addr(t)+secretPath+"?"+secretQuery)
			if err != nil {
				t.Fatal(err)
			}
			f.plan()
			f.now = f.now.Add(time.Second)
			f.change(1)
			f.plan()
			if n := f.deliver(); n != 1 {
				t.Fatalf("%d attempts", n)
			}
			ds, err := f.svc.Log(ctx, f.accounts[0], w.ID)
			if err != nil || len(ds) != 1 {
				t.Fatalf("log = %+v, %v", ds, err)
			}
			if ds[0].LastError != tc.want {
				t.Errorf("failure = %q, want %q", ds[0].LastError, tc.want)
			}
			got, err := f.st.Webhook(ctx, f.accounts[0], w.ID)
			if err != nil || got.Enabled() {
				t.Fatalf("webhook = %+v, %v (want disabled)", got, err)
			}
			out := logged.String()
			if !strings.Contains(out, "webhook delivery attempt") || !strings.Contains(out, tc.want) {
				t.Errorf("the attempt was not logged with its failure:\n%s", out)
			}
			for where, text := range map[string]string{"delivery log": ds[0].LastError, "disabled reason": got.DisabledReason, "server log": out} {
				if strings.Contains(text, "SECRET") || strings.Contains(text, "/services/") {
					t.Errorf("the %s holds the URL's secret: %s", where, text)
				}
			}
		})
	}
}

// TestDescribeFailureUnknown: a failure of no known kind is said in fixed words; its
// cause, for the server's log only, is the transport's error without the *url.Error's
// quoted URL, with the path and query cut out even where the transport's own text
// repeats them.
func TestDescribeFailureUnknown(t *testing.T) {
	raw := "https://hooks.example" + secretPath + "?" + secretQuery
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	inner := errors.New("net/http: something odd about " + raw + " and " + u.EscapedPath() + "\x00")
	failure, cause := describeFailure(&url.Error{Op: "Post", URL: raw, Err: inner}, u, time.Second)
	if failure != "no response: the connection failed, or the answer was not HTTP" {
		t.Errorf("failure = %q", failure)
	}
	if strings.Contains(cause, "SECRET") || strings.Contains(cause, "Post") || !strings.Contains(cause, "something odd about https://hooks.example") ||
		strings.ContainsRune(cause, 0) {
		t.Errorf("cause = %q", cause)
	}
	long := errors.New(strings.Repeat("x", 10*maxErrorText))
	if _, cause := describeFailure(long, u, time.Second); len(cause) > maxErrorText+len("…") {
		t.Errorf("cause of %d bytes", len(cause))
	}
	// A known kind under the *url.Error has no cause and never the URL.
	failure, cause = describeFailure(&url.Error{Op: "Post", URL: raw, Err: io.EOF}, u, time.Second)
	if failure != "the connection was closed before a response" || cause != "" {
		t.Errorf("EOF: %q, %q", failure, cause)
	}
}
