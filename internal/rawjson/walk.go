package rawjson

import (
	"encoding/json"
	"strconv"
)

// Walk calls visit for every string of the JSON document doc, member names with isKey
// set, in document order, with the path leading to it: one segment per enclosing member
// name (unescaped) or array index ("[i]"). A member name's path leads to the object that
// holds it; a value's path ends with its member name or index. Containers nested deeper
// than maxDepth are skipped whole. The strings are read in place (UnquoteView): path and
// v are valid only during the call, and doc must not change meanwhile.
//
// Walk returns false, having visited nothing, when doc is not one valid JSON value
// (json.Valid).
func Walk(doc []byte, maxDepth int, visit func(path []string, v string, isKey bool)) bool {
	if !json.Valid(doc) {
		return false
	}
	w := walker{doc: doc, maxDepth: maxDepth, visit: visit, path: make([]string, 0, 16)}
	w.value(SkipSpace(doc, 0))
	return true
}

type walker struct {
	doc      []byte
	maxDepth int
	visit    func(path []string, v string, isKey bool)
	path     []string // one segment per open container
}

// value walks the value at doc[i] and returns the index after it.
func (w *walker) value(i int) int {
	d := w.doc
	switch d[i] {
	case '"':
		end := SkipString(d, i)
		w.visit(w.path, UnquoteView(d[i:end]), false)
		return end
	case '{':
		if len(w.path) >= w.maxDepth {
			return SkipValue(d, i)
		}
		w.path = append(w.path, "")
		n := len(w.path)
		i = SkipSpace(d, i+1)
		for d[i] != '}' {
			end := SkipString(d, i)
			key := UnquoteView(d[i:end])
			w.visit(w.path[:n-1:n-1], key, true)
			w.path[n-1] = key
			i = SkipSpace(d, SkipSpace(d, end)+1) // past the colon
			i = SkipSpace(d, w.value(i))
			if d[i] == ',' {
				i = SkipSpace(d, i+1)
			}
		}
		w.path = w.path[:n-1]
		return i + 1
	case '[':
		if len(w.path) >= w.maxDepth {
			return SkipValue(d, i)
		}
		w.path = append(w.path, "")
		n := len(w.path)
		i = SkipSpace(d, i+1)
		for idx := 0; d[i] != ']'; idx++ {
			w.path[n-1] = indexSegment(idx)
			i = SkipSpace(d, w.value(i))
			if d[i] == ',' {
				i = SkipSpace(d, i+1)
			}
		}
		w.path = w.path[:n-1]
		return i + 1
	}
	return SkipValue(d, i)
}

// indexSegments are the path segments of the first array indexes, made once.
var indexSegments = func() [256]string {
	var s [256]string
	for i := range s {
		s[i] = "[" + strconv.Itoa(i) + "]"
	}
	return s
}()

func indexSegment(i int) string {
	if i < len(indexSegments) {
		return indexSegments[i]
	}
	return "[" + strconv.Itoa(i) + "]"
}
