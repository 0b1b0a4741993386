package registry_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/registry"
)

// A sync walks every page, keeps what each page brought, and picks the listed version
// of each name at the end. On a refusal it keeps the pages it has and reports where to
// resume.
func ExampleClient_Pages() {
	page, err := os.ReadFile("testdata/good_page_official.json")
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("cursor") != "" { // the recorded page names a next page: an empty one
			w.Write([]byte(`{"servers":[],"metadata":{"count":0}}`))
			return
		}
		w.Write(page)
	}))
	defer srv.Close()

	c, err := registry.New(registry.Config{
		BaseURL: srv.URL,
		// The CLI passes a client behind the egress guard; loopback only for tests
		// and --allow-loopback.
		HTTPClient: registry.GuardedHTTPClient(egress.Config{AllowLoopback: true}),
	})
	if err != nil {
		log.Fatal(err)
	}
	var latest registry.Latest
	opts := registry.ListOptions{Progress: func(p registry.Progress) {
		fmt.Printf("page %d: %d servers so far\n", p.Pages, p.Servers)
	}}
	for p, err := range c.Pages(context.Background(), opts) {
		if pe, ok := errors.AsType[*registry.PageError](err); ok {
			fmt.Printf("stopped: %v; resume from %q\n", err, pe.Cursor)
			break
		}
		latest.Add(p.Entries)
	}
	for _, l := range latest.Listings() {
		fmt.Printf("%s %s listed=%v (%d versions seen)\n", l.Name, l.Latest.Server.Version, l.Listed, l.Versions)
	}
	// Output:
	// page 1: 4 servers so far
	// page 2: 4 servers so far
	// io.github.user/local-weather 1.0.0 listed=false (1 versions seen)
	// io.github.user/remote-weather 2.1.0 listed=true (2 versions seen)
	// io.github.user/weather 1.0.2 listed=true (1 versions seen)
}
