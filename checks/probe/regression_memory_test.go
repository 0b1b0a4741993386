package probe

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/probity-dev/probity/checks"
)

// keptPrefix is how much of a body cut at a cap the probe keeps (the recorder's
// truncatedPrefix, spelled out so that these tests also run against older probes).
const keptPrefix = 64 << 10

// gzipBody compresses s into one gzip member.
func gzipBody(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A 401's resource_metadata answering a gzip bomb: the probe reads no more than the
// per-response cap of decompressed bytes from it, keeps a prefix of it, and records no
// metadata.
func TestRegressionMetadataGzipBombHeldToResponseCap(t *testing.T) {
	member := gzipBody(t, strings.Repeat(" ", 1<<20)) // 1 MiB of spaces, about 1 KiB sent
	var sent atomic.Int64
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, base+"/meta"))
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("/meta", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		for range 256 { // 256 MiB decompressed
			if _, err := w.Write(member); err != nil {
				return
			}
			sent.Add(1 << 20)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	base = srv.URL
	const maxResponse = 1 << 20
	var read int64
	obs := probe(t, prober(func(c *Config) { c.Budget.MaxResponseBytes = maxResponse; c.Logger = bytesReadLogger(&read) }), srv.URL+"/mcp")
	if obs.Auth.MetadataError == "" || obs.Auth.Resource != "" {
		t.Errorf("metadata error %q, resource %q: a bomb is no metadata", obs.Auth.MetadataError, obs.Auth.Resource)
	}
	if read := atomic.LoadInt64(&read); read > maxResponse+64<<10 {
		t.Errorf("the probe read %d decompressed bytes; the per-response cap is %d", read, maxResponse)
	}
	ex := lastExchange(t, obs, "GET")
	if !ex.Truncated || len(ex.Body) > keptPrefix {
		t.Errorf("the metadata body: truncated %v, %d bytes kept; want truncated, at most %d", ex.Truncated, len(ex.Body), keptPrefix)
	}
}

// A gzip-encoded tools/list page that decompresses past the cap is cut at the cap of
// decompressed bytes: the transport must not decompress it behind the recorder's back,
// and the page must not be read.
func TestRegressionGzipPageCountsDecompressedBytes(t *testing.T) {
	page := `{"jsonrpc":"2.0","id":"probity-1","result":{"tools":[{"name":"a","description":"` + strings.Repeat("x", 3<<20) + `"}]}}`
	zipped := gzipBody(t, page)
	srv := jsonRPCServer(t, func(w http.ResponseWriter, r *http.Request, req rpcRequest) {
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}}`, req.ID)
		case "tools/list":
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				t.Errorf("tools/list sent with Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(zipped)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, req.ID)
		}
	})
	// Under the cap the gzip page is read, decompressed, like any client reads it.
	obs := probe(t, prober(), srv.URL)
	if !obs.Tools.Complete || len(obs.Tools.Tools) != 1 {
		t.Fatalf("a 3 MiB gzip page under the 4 MiB cap: complete %v, %d tools, partial %q", obs.Tools.Complete, len(obs.Tools.Tools), obs.Tools.Partial)
	}
	// Over the cap it is cut, though fewer than 4 KiB of it crossed the wire.
	obs = probe(t, prober(func(c *Config) { c.Budget.MaxResponseBytes = 1 << 20 }), srv.URL)
	if obs.Tools.Complete || obs.Tools.Partial != checks.PartialSizeCap {
		t.Errorf("a 3 MiB gzip page over a 1 MiB cap: complete %v, partial %q", obs.Tools.Complete, obs.Tools.Partial)
	}
	if ex := lastExchange(t, obs, "tools/list"); !ex.Truncated || len(ex.Body) > keptPrefix {
		t.Errorf("the page: truncated %v, %d bytes kept", ex.Truncated, len(ex.Body))
	}
}

// Compressed bytes count too: an endless stream of empty gzip members decompresses to
// nothing, and must still end at the cap.
func TestRegressionEmptyGzipMembersEndAtTheCap(t *testing.T) {
	empty := gzipBody(t, "")
	var sent atomic.Int64
	srv := jsonRPCServer(t, func(w http.ResponseWriter, r *http.Request, req rpcRequest) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		for r.Context().Err() == nil {
			if _, err := w.Write(empty); err != nil {
				return
			}
			sent.Add(int64(len(empty)))
		}
	})
	obs := probe(t, prober(func(c *Config) { c.Budget.MaxResponseBytes = 256 << 10 }), srv.URL)
	if obs.Stop == checks.StopTimeBudget {
		t.Errorf("the probe ran into its time budget reading empty gzip members (%d bytes sent)", sent.Load())
	}
	if ex := lastExchange(t, obs, "server/discover"); !ex.Truncated {
		t.Errorf("the endless gzip answer was not cut: %+v", ex.Exchange)
	}
}

// A legacy SSE stream that floods notifications is held to the per-response cap for
// what it carries besides responses, though the stream as a whole may use the total.
func TestRegressionSSEFloodHeldToResponseCap(t *testing.T) {
	event := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + strings.Repeat("x", 64<<10) + "\"}}\n\n"
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /message\n\n")
			w.(http.Flusher).Flush()
			for r.Context().Err() == nil {
				n, err := io.WriteString(w, event)
				sent.Add(int64(n))
				if err != nil {
					return
				}
			}
		case r.URL.Path == "/message":
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	defer srv.Close()
	const maxResponse = 1 << 20
	var read int64
	obs := probe(t, prober(func(c *Config) { c.Budget.MaxResponseBytes = maxResponse; c.Logger = bytesReadLogger(&read) }), srv.URL)
	if read := atomic.LoadInt64(&read); read > 2*maxResponse+64<<10 {
		t.Errorf("the probe read %d bytes of notifications; the per-response cap is %d", read, maxResponse)
	}
	ex := lastExchange(t, obs, "GET")
	if bytes.Contains(ex.Body, []byte("notifications/message")) || !bytes.Contains(ex.Body, []byte("/message")) {
		t.Errorf("the recorded stream keeps notifications or lost its endpoint event: %.200q", ex.Body)
	}
}

// bytesReadLogger returns a logger that stores the bytes_read of the probe's log line.
func bytesReadLogger(read *int64) *slog.Logger { return slog.New(readHandler{read}) }

type readHandler struct{ read *int64 }

func (h readHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h readHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h readHandler) WithGroup(string) slog.Handler            { return h }
func (h readHandler) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if r.Message == "probe" && a.Key == "bytes_read" {
			atomic.StoreInt64(h.read, a.Value.Int64())
		}
		return true
	})
	return nil
}

// lastExchange is the last recorded exchange of method.
func lastExchange(t *testing.T, obs *checks.Observation, method string) recorded {
	t.Helper()
	for i := len(obs.Exchanges) - 1; i >= 0; i-- {
		if obs.Exchanges[i].Method == method {
			return recorded{Exchange: obs.Exchanges[i]}
		}
	}
	t.Fatalf("no %s exchange recorded", method)
	return recorded{}
}
