package probe

import (
	"context"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientName is the clientInfo.name the probe sends in server/discover and initialize;
// clientInfo.version is Probity's version.
const ClientName = "probity"

// anonymousClient is the MCP client of one probe: a client with no capabilities at all.
// It declares capabilities {} (the go-sdk declares roots by default, and the reference
// servers list tools for roots, sampling and elicitation only to clients that declare
// them), it never fulfils the input requests of a multi-round-trip result (the SDK's
// default would answer roots/list, sampling and elicitation for it and retry the call),
// and it answers every server-to-client request but ping with the JSON-RPC error
// "Method not found" (see refuseServerRequests).
func anonymousClient(version string) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: ClientName, Version: version}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Logger:         slog.New(slog.DiscardHandler),
	})
	c.AddReceivingMiddleware(refuseServerRequests)
	return c
}

// refuseServerRequests answers the server-to-client requests a client offers only with a
// capability (roots/list, sampling/createMessage, elicitation/create, and any other
// request but ping) with the JSON-RPC error -32601 "Method not found": a client that
// declared no capability does not offer these methods, and JSON-RPC 2.0 answers a
// request for a method the receiver does not offer with exactly this error. An answer,
// rather than silence, lets a server that waits on it go on. ping is a utility every
// party answers whatever its capabilities; notifications are never answered.
func refuseServerRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "ping" || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
	}
}
