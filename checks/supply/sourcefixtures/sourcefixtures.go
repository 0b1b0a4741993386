// Package sourcefixtures reads the recorded and documented answers of the supply-chain
// sources (npm, PyPI, GitHub, deps.dev, OSV, Scorecard) that checks/supply's tests, and
// the web package's load database, replay instead of reaching the network.
//
// The fixtures live in checks/supply/testdata/fixtures/<service>/: NAME.meta.json
// describes one response (method, path relative to the service, status, headers, body
// file, and optionally the JSON request body it answers), NAME.<ext> is the body. See
// that directory's README.md.
package sourcefixtures

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Services are the services with fixtures, each a directory of the fixture directory.
var Services = []string{"npm", "pypi", "github", "depsdev", "osv", "scorecard"}

// Meta is one NAME.meta.json.
type Meta struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"` // escaped path and query, relative to the service
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`    // file in the same directory; "" for none
	Request string            `json:"request"` // file: the JSON request body this answers
	Times   int               `json:"times"`   // served this many times, then the next; 0: always
	Order   int               `json:"order"`   // order among fixtures of one route
	Source  string            `json:"source"`  // recorded, derived or documented
	Note    string            `json:"note"`
}

// Fixture is one response.
type Fixture struct {
	Service string // one of Services
	Name    string // NAME
	Meta    Meta
	Body    []byte
	Request any // the decoded request body it answers; nil for any
}

// Route is the key a fixture answers under: its method, then its path under
// /<service>, e.g. "GET /npm/left-pad".
func (f *Fixture) Route() string { return f.Meta.Method + " /" + f.Service + f.Meta.Path }

// Load reads every fixture of every service under dir (the fixture directory). A meta
// file with a field this package does not know is an error.
func Load(dir string) ([]*Fixture, error) {
	var out []*Fixture
	for _, svc := range Services {
		sdir := filepath.Join(dir, svc)
		metas, err := filepath.Glob(filepath.Join(sdir, "*.meta.json"))
		if err != nil {
			return nil, err
		}
		for _, mp := range metas {
			data, err := os.ReadFile(mp)
			if err != nil {
				return nil, err
			}
			f := &Fixture{Service: svc, Name: strings.TrimSuffix(filepath.Base(mp), ".meta.json")}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f.Meta); err != nil {
				return nil, fmt.Errorf("%s: %w", mp, err)
			}
			if f.Meta.Body != "" {
				if f.Body, err = os.ReadFile(filepath.Join(sdir, f.Meta.Body)); err != nil {
					return nil, fmt.Errorf("%s: %w", mp, err)
				}
			}
			if f.Meta.Request != "" {
				rb, err := os.ReadFile(filepath.Join(sdir, f.Meta.Request))
				if err != nil {
					return nil, fmt.Errorf("%s: %w", mp, err)
				}
				if err := json.Unmarshal(rb, &f.Request); err != nil {
					return nil, fmt.Errorf("%s: request: %w", mp, err)
				}
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// Routes groups fixtures by Route, each route's fixtures in Meta.Order.
func Routes(fs []*Fixture) map[string][]*Fixture {
	routes := make(map[string][]*Fixture)
	for _, f := range fs {
		routes[f.Route()] = append(routes[f.Route()], f)
	}
	for _, l := range routes {
		slices.SortStableFunc(l, func(a, b *Fixture) int { return a.Meta.Order - b.Meta.Order })
	}
	return routes
}
