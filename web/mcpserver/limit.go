package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"

	"github.com/probity-dev/probity/web/ratelimit"
	"github.com/probity-dev/probity/web/refusals"
)

// maxClients bounds the token buckets kept (ratelimit.Config.MaxClients); beyond it
// idle buckets are evicted.
const maxClients = 10000

// guard puts the rate limit, the body limit, the batch refusal and the response cap in
// front of next. Every refusal is counted and logged through refused (at most one line
// per client per minute).
//
// The client is r.RemoteAddr's address; forwarded headers (X-Forwarded-For and the
// like) are never trusted, since anyone can send them. An IPv6 client is its /64, the
// block one host usually holds, so one host cannot take a fresh bucket per address.
//
// The body is read here, at most MaxBody bytes, before next sees it: a larger body gets
// 413 whether or not it declared its length (the SDK would read any body whole). A body
// that is a JSON array, a JSON-RPC batch, gets 400 with a JSON-RPC error (see
// writeBatchRefusal). The answer is held to MaxResponse bytes (capWriter).
func guard(lim *ratelimit.Limiter, refused *refusals.Log, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client := clientKey(r.RemoteAddr)
		if ok, wait := lim.Allow(client); !ok {
			refused.Refused(r.Context(), client, reasonRateLimited)
			secs := max(1, int(math.Ceil(wait.Seconds())))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, http.StatusTooManyRequests, "too many requests; retry after "+strconv.Itoa(secs)+" s", secs)
			return
		}
		if r.ContentLength > MaxBody {
			refused.Refused(r.Context(), client, reasonBodyTooLarge)
			writeError(w, http.StatusRequestEntityTooLarge, "request body larger than 1 MiB", 0)
			return
		}
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			var err error
			body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
			if err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					refused.Refused(r.Context(), client, reasonBodyTooLarge)
					writeError(w, http.StatusRequestEntityTooLarge, "request body larger than 1 MiB", 0)
					return
				}
				log.Debug("mcp: couldn't read request body", "err", err)
				writeError(w, http.StatusBadRequest, "couldn't read the request body", 0)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		if r.Method == http.MethodPost && isBatch(body) {
			refused.Refused(r.Context(), client, reasonBatch)
			writeBatchRefusal(w)
			return
		}
		cw := &capWriter{ResponseWriter: w, limit: MaxResponse, id: requestID(body)}
		next.ServeHTTP(cw, r)
		cw.start() // a status without a body (202 to a notification) goes out now
		if cw.over {
			refused.Refused(r.Context(), client, reasonResponseTooLarge, slog.Int("limit", MaxResponse))
		}
	})
}

// Reasons of refusals, the label of probity_mcp_refused_total.
const (
	reasonRateLimited      = "rate_limited"
	reasonBodyTooLarge     = "body_too_large"
	reasonBatch            = "batch"
	reasonResponseTooLarge = "response_too_large"
)

// isBatch reports whether body is a JSON-RPC batch: a JSON array, whatever it holds
// (JSON allows only space, tab, line feed and carriage return before it).
func isBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\n\r")
	return len(b) > 0 && b[0] == '['
}

// codeInternalError is JSON-RPC 2.0's -32603 Internal error.
const codeInternalError = -32603

// batchRefusal is the answer to a batch, fixed. JSON-RPC 2.0 answers a request that is
// not a valid Request object with -32600 Invalid Request and id null; MCP 2025-06-18
// removed batching, and its Streamable HTTP transport answers input the server cannot
// accept with an HTTP error status, e.g. 400, whose body may be a JSON-RPC error
// without an id. So a batch gets 400 and this single error, never a batch of answers,
// whatever protocol version it claims.
const batchRefusal = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not accepted: send one JSON-RPC message per POST (MCP 2025-06-18 removed batching)"}}` + "\n"

func writeBatchRefusal(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, batchRefusal)
}

// requestID is the id of the JSON-RPC request in body as raw JSON, or null when body
// is not one request with a string or number id.
func requestID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 || (m.ID[0] != '"' && m.ID[0] != '-' && (m.ID[0] < '0' || m.ID[0] > '9')) {
		return json.RawMessage("null")
	}
	return m.ID
}

// errResponseTooLarge is what a capped answer's writer returns once the cap is passed.
var errResponseTooLarge = errors.New("mcp: response larger than the limit")

// capWriter holds an answer to limit bytes. The status is held back until the first
// write, so an answer that is too large in its first write (the SDK writes a JSON
// answer in one) is replaced by a JSON-RPC error response to the request (its id;
// -32603 Internal error, naming the limit) with HTTP 200 like any answer, so the
// client's call fails with that message instead of a broken transport. A stream (an
// event stream) whose later writes pass the limit cannot be replaced any more: those
// writes fail, which ends it.
type capWriter struct {
	http.ResponseWriter
	limit   int
	id      json.RawMessage
	status  int // held back until the first write; 0 none yet
	written int
	started bool // the status went out
	over    bool
}

func (w *capWriter) WriteHeader(status int) {
	if w.started || w.status != 0 {
		return
	}
	if status >= 100 && status < 200 {
		w.ResponseWriter.WriteHeader(status) // informational answers are not held back
		return
	}
	w.status = status
}

func (w *capWriter) start() {
	if !w.started {
		w.started = true
		if w.status == 0 {
			w.status = http.StatusOK
		}
		w.ResponseWriter.WriteHeader(w.status)
	}
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.over {
		return 0, errResponseTooLarge
	}
	if w.written+len(p) > w.limit {
		w.over = true
		if !w.started {
			w.refuse()
		}
		return 0, errResponseTooLarge
	}
	w.start()
	n, err := w.ResponseWriter.Write(p)
	w.written += n
	return n, err
}

// refuse writes the JSON-RPC error that replaces an answer larger than the limit.
func (w *capWriter) refuse() {
	w.started = true
	h := w.ResponseWriter.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.ResponseWriter.WriteHeader(http.StatusOK)
	body, _ := json.Marshal(map[string]any{ // of fixed types: always encodes
		"jsonrpc": "2.0",
		"id":      w.id,
		"error": map[string]any{
			"code":    codeInternalError,
			"message": "the answer would be larger than " + strconv.Itoa(w.limit>>20) + " MiB; ask for less (a smaller limit or another page)",
		},
	})
	_, _ = w.ResponseWriter.Write(append(body, '\n'))
}

// Flush sends what was written so far (the held-back status first).
func (w *capWriter) Flush() {
	if w.over {
		return
	}
	w.start()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *capWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeError writes a small JSON error body; retryAfter > 0 adds it in seconds.
func writeError(w http.ResponseWriter, status int, msg string, retryAfter int) {
	body := struct {
		Error      string `json:"error"`
		RetryAfter int    `json:"retry_after,omitempty"`
	}{msg, retryAfter}
	b, _ := json.Marshal(body) // a struct of a string and an int always encodes
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// clientKey is the rate-limit key of a remote address "host:port": the IPv4 address,
// or the /64 of an IPv6 address. An address that does not parse is its own key.
func clientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64) // cannot fail for an IPv6 address without a zone
		return p.String()
	}
	return a.String()
}
