package probe

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// shortBody sends a few bytes of a body that declared far more, then fails as a closed
// connection does.
type shortBody struct{ r io.Reader }

func (b *shortBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *shortBody) Close() error { return nil }

// declaringTransport answers every request with a response that declares a 4 MiB body
// and sends 10 bytes of it.
type declaringTransport struct{}

func (declaringTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		ContentLength: 4 << 20, Body: &shortBody{strings.NewReader(`{"jsonrpc"`)}, Request: req}, nil
}

// A response that declares its length but ends early (or is closed early) keeps only
// what arrived: the allocation made for the declared length is not held by the
// observation. Without this a server that declares 4 MiB and sends 10 bytes pins 4 MiB
// per request, unbounded by what the probe read.
func TestRegressionDeclaredLengthNotHeld(t *testing.T) {
	rec := &recorder{base: declaringTransport{}, maxBody: 4 << 20, maxTotal: 32 << 20, maxRequests: 8, maxPages: 100}
	for _, drain := range []bool{true, false} {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://mcp.example/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rec.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if drain {
			if _, err := io.Copy(io.Discard, resp.Body); err == nil {
				t.Fatal("a short body read without error")
			}
		} else {
			// The reader stops after the first bytes and closes the body.
			if _, err := resp.Body.Read(make([]byte, 4)); err != nil {
				t.Fatal(err)
			}
		}
		resp.Body.Close()
		e := rec.exchanges[len(rec.exchanges)-1]
		rec.mu.Lock()
		n, c := len(e.body), cap(e.body)
		rec.mu.Unlock()
		if c > 64<<10 {
			t.Errorf("drained %v: %d bytes recorded are held in %d bytes of capacity", drain, n, c)
		}
	}
}
