package web

import (
	"context"
	"fmt"
	"html/template"
	"strconv"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"
)

// An entry's tools are shown a page at a time, on its page (/s/{slug}?tools=N), in its
// JSON (/s/{slug}.json?tools=N, /api/v1/servers/{slug}?tools=N, with "toolsPage") and
// in its Markdown (/s/{slug}.md?tools=N). A page holds at most toolsPerPage tools and
// at most toolsPageCost of toolCost, the bytes its text can take in the most expensive
// of the three encodings, so a page of 3 KB descriptions full of "<" is as bounded as a
// page of one-line ones. The boundaries depend on the surface alone, so page N is the
// same tools in every format, and each page is remembered on its own (memo.go).
const (
	toolsPerPage  = 100
	toolsPageCost = 256 << 10
	// maxToolsPage bounds ?tools=: far beyond any surface the probe reads.
	maxToolsPage = 100000
	// toolPagesKept is how many pages one read of a surface remembers: the page asked
	// for and the ones after it, where readers go next, and always the first.
	toolPagesKept = 8
	// toolBuilds bounds the surfaces decoded at the same time: a surface of thousands
	// of tools is megabytes, and parallel views of different entries must not each
	// hold one.
	toolBuilds = 2
	// toolBuildTimeout bounds one read of a surface, which serves every request
	// waiting for it, so it does not end with the request that started it.
	toolBuildTimeout = 30 * time.Second
)

// toolPageKey names one page (1-based) of a surface's tools.
type toolPageKey struct {
	surface string
	page    int
}

// toolPage is one page of a surface's tools.
type toolPage struct {
	Tools []toolView
	// Page is this page, Pages how many there are (at least 1), Total the tools of the
	// surface, First the 1-based position of Tools[0] (0 when there are none).
	Page, Pages, Total, First int
}

// Last is the position of the page's last tool.
func (p toolPage) Last() int { return p.First + len(p.Tools) - 1 }

// Prev is the previous page's number, 0 on the first page.
func (p toolPage) Prev() int {
	if p.Page > 1 {
		return p.Page - 1
	}
	return 0
}

// Next is the next page's number, 0 on the last page.
func (p toolPage) Next() int {
	if p.Page < p.Pages {
		return p.Page + 1
	}
	return 0
}

func toolPageSize(p toolPage) int { return 64 + toolsSize(p.Tools) }

// parseToolsPage decodes ?tools=: absent is 1, otherwise 1 to maxToolsPage.
func parseToolsPage(v string) (int, bool) {
	if v == "" {
		return 1, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxToolsPage {
		return 0, false
	}
	return n, true
}

// toolBuilder reads surfaces into tool pages: one read per surface and page at a time
// (singleflight), at most toolBuilds reads at once.
type toolBuilder struct {
	flight singleflight.Group
	slots  *semaphore.Weighted
}

func newToolBuilder() *toolBuilder {
	return &toolBuilder{slots: semaphore.NewWeighted(toolBuilds)}
}

// toolsPage returns page of the surface's tools, remembered. A page past the end is
// errNotFound (page 1 of a surface without tools is an empty page).
func (s *site) toolsPage(ctx context.Context, surface string, page int) (toolPage, error) {
	return s.tools.get(toolPageKey{surface, page}, func() (toolPage, error) {
		v, err, _ := s.toolBuilds.flight.Do(surface+"#"+strconv.Itoa(page), func() (any, error) {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), toolBuildTimeout)
			defer cancel()
			if err := s.toolBuilds.slots.Acquire(ctx, 1); err != nil {
				return toolPage{}, err
			}
			defer s.toolBuilds.slots.Release(1)
			// A read that ran while this one waited may have remembered the page.
			if p, ok := s.tools.peek(toolPageKey{surface, page}); ok {
				return p, nil
			}
			return s.readToolPages(ctx, surface, page)
		})
		if err != nil {
			return toolPage{}, err
		}
		return v.(toolPage), nil
	})
}

// toolsPageHTML is the entry page's tools section for page of the surface, rendered
// once ("" surface: the section saying no list was read).
func (s *site) toolsPageHTML(ctx context.Context, surface string, page int) (template.HTML, error) {
	return section(s, s.toolsHTML, toolPageKey{surface, page}, "tools", func() (toolPage, error) {
		if surface == "" {
			if page != 1 {
				return toolPage{}, errNotFound
			}
			return toolPage{Page: 1, Pages: 1}, nil
		}
		return s.toolsPage(ctx, surface, page)
	})
}

// toolViewOf is the view of a tool's text.
func toolViewOf(name, title, description []byte) toolView {
	return toolView{Name: visibleLine(string(name)), Title: visibleLine(string(title)), Description: visible(string(description))}
}

// readToolPages reads the surface, splits its tools into pages and returns page want,
// remembering it, the first page and the toolPagesKept-1 pages after want. The surface
// is decoded one tool at a time and the views of other pages are dropped as they are
// made, so a read holds the stored document and the kept pages, not every tool twice.
func (s *site) readToolPages(ctx context.Context, surface string, want int) (toolPage, error) {
	doc, err := s.st.Surface(ctx, surface)
	if err != nil {
		return toolPage{}, err
	}
	keep := func(page int) bool { return page == 1 || (page >= want && page < want+toolPagesKept) }
	var kept []toolPage
	cur := toolPage{Page: 1, First: 1}
	cost, n, total := 0, 0, 0
	err = scanSurface(doc, func(t *scannedTool) {
		c := t.cost()
		if n > 0 && (n == toolsPerPage || cost+c > toolsPageCost) {
			if keep(cur.Page) {
				kept = append(kept, cur)
			}
			cur = toolPage{Page: cur.Page + 1, First: total + 1}
			cost, n = 0, 0
		}
		if keep(cur.Page) {
			cur.Tools = append(cur.Tools, toolViewOf(t.texts()))
		}
		cost += c
		n++
		total++
	})
	if err != nil {
		return toolPage{}, fmt.Errorf("surface %s: %w", surface, err)
	}
	if keep(cur.Page) {
		kept = append(kept, cur)
	}
	pages := cur.Page
	var out toolPage
	found := false
	for _, p := range kept {
		p.Pages, p.Total = pages, total
		if total == 0 {
			p.First = 0
		}
		if p.Page == want {
			out, found = p, true
			continue // remembered by the caller
		}
		s.tools.put(toolPageKey{surface, p.Page}, p)
	}
	if !found {
		return toolPage{}, errNotFound
	}
	return out, nil
}

// toolCost bounds the bytes a tool takes on a page: the textCost of its name, title
// and description, each the most its text takes in the costliest of the page (HTML
// escapes < > & ' "), the JSON (\u003c for < > &, \" \\ and \n) and the Markdown (a
// backslash before punctuation) after visible cut it and wrote hidden characters as
// escapes, plus its markup. scanSurface computes the text costs from the stored
// document, without making the view, so a surface's pages are found in one pass.
func toolCost(name, title, description int) int {
	return 96 + name + title + description
}

// asciiCost is the cost of each ASCII byte: 6 for \u003c and the like, 5 for &#39;, 2
// for a backslash escape, 7 for a control visible writes as \u0001 (whose backslash
// JSON escapes), 1 for letters, digits and space.
var asciiCost = func() (c [utf8.RuneSelf]int) {
	for b := range c {
		switch r := rune(b); {
		case r == '<' || r == '>' || r == '&' || r == '"':
			c[b] = 6
		case r == '\'':
			c[b] = 5
		case hides(r):
			c[b] = 7
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == ' ':
			c[b] = 1
		default:
			c[b] = 2
		}
	}
	return c
}()

func textCost(s []byte) int {
	cut := len(s) > maxShown
	if cut {
		s = s[:maxShown]
	}
	n := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			n += asciiCost[b]
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if (r == utf8.RuneError && size == 1) || hides(r) {
			n += 11 // \U000e0041 and the backslash's escape
		} else {
			n += size
		}
		i += size
	}
	if cut {
		n += len("…")
	}
	return n
}
