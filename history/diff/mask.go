package diff

import (
	"slices"
	"strings"
	"time"
)

// Dates are found by a small hand-written parser of the forms the package doc lists
// (Dates): it tries each word start of a text, keeps the longest match that ends at a
// boundary, and does work linear in the text. A regular expression of the same forms
// was measured at about 100 ns per byte (Go's NFA; the pattern is too large for its
// backtracker), which made BenchmarkCompare500 take 35 ms.

// placeholder replaces a masked date. U+FFFF is a noncharacter, which text does not use.
const placeholder = "\uFFFF"

// classes are the date forms masked only when they name the current date.
type classes uint8

const (
	classWeekday classes = 1 << iota
	classDayMonth
	classBasic
)

// masker masks dates in text for comparison.
type masker struct {
	// near are the current date in UTC and the days before and after it; none when
	// Options.Now is zero.
	near []time.Time
}

func newMasker(now time.Time) *masker {
	m := &masker{}
	if !now.IsZero() {
		d := now.UTC()
		d = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
		m.near = []time.Time{d.AddDate(0, 0, -1), d, d.AddDate(0, 0, 1)}
	}
	return m
}

// mask returns text with every full date replaced by the placeholder, and the dates of
// the forms in c.
func (m *masker) mask(text string, c classes) string {
	return m.current(m.full(text), c)
}

// full returns text with every full date replaced by the placeholder.
func (m *masker) full(text string) string {
	if hasYear(text) {
		text = replaceDates(text, fullDateAt)
	}
	return text
}

// current returns text with the dates of the forms in c replaced by the placeholder.
func (m *masker) current(text string, c classes) string {
	if c&classDayMonth != 0 {
		text = replaceDates(text, func(s string, i int) int { _, _, e := dayMonthAt(s, i); return e })
	}
	if c&classBasic != 0 {
		text = replaceDates(text, func(s string, i int) int { _, e := basicDateAt(s, i); return e })
	}
	if c&classWeekday != 0 {
		text = replaceDates(text, func(s string, i int) int { _, e := weekdayAt(s, i, true); return e })
	}
	return text
}

// classesOf returns the forms in which text names the current date (a day of m.near).
func (m *masker) classesOf(text string) classes {
	if len(m.near) == 0 {
		return 0
	}
	text = m.full(text)
	var c classes
	near := func(f func(t time.Time) bool) bool { return slices.ContainsFunc(m.near, f) }
	eachWordStart(text, func(i int) int {
		if mo, d, e := dayMonthAt(text, i); e > 0 {
			if near(func(t time.Time) bool { return t.Month() == mo && t.Day() == d }) {
				c |= classDayMonth
			}
			return e
		}
		if t0, e := basicDateAt(text, i); e > 0 {
			if near(func(t time.Time) bool { return t.Equal(t0) }) {
				c |= classBasic
			}
			return e
		}
		if wd, e := weekdayAt(text, i, true); e > 0 {
			if near(func(t time.Time) bool { return t.Weekday() == wd }) {
				c |= classWeekday
			}
			return e
		}
		return -1
	})
	return c
}

// eachWordStart calls f at every index of s where a word of ASCII letters, digits and
// '_' starts; f returns the end of a match found there, or -1, and the scan goes on
// after the match or the word.
func eachWordStart(s string, f func(i int) int) {
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		if e := f(i); e > i {
			i = e
			continue
		}
		for i < len(s) && isWordByte(s[i]) {
			i++
		}
	}
}

// replaceDates returns s with every match of at replaced by the placeholder.
func replaceDates(s string, at func(s string, i int) int) string {
	var b strings.Builder
	last := 0
	eachWordStart(s, func(i int) int {
		e := at(s, i)
		if e > i {
			b.WriteString(s[last:i])
			b.WriteString(placeholder)
			last = e
		}
		return e
	})
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isWordByte(c byte) bool { return isDigit(c) || isLetter(c) || c == '_' }

// endsAt reports whether a date may end at index i of s: at the end, or before a byte
// that is not an ASCII letter, digit or '_', nor ':' or '.' followed by a digit (so a
// time of day is not cut short before its seconds).
func endsAt(s string, i int) bool {
	if i == len(s) {
		return true
	}
	if (s[i] == ':' || s[i] == '.') && i+1 < len(s) && isDigit(s[i+1]) {
		return false
	}
	return !isWordByte(s[i])
}

// num reads the run of digits at s[i] and returns its value and end; the end is -1
// unless the run has minLen to maxLen digits.
func num(s string, i, minLen, maxLen int) (int, int) {
	v, j := 0, i
	for j < len(s) && isDigit(s[j]) {
		if j-i < 9 {
			v = v*10 + int(s[j]-'0')
		}
		j++
	}
	if n := j - i; n < minLen || n > maxLen {
		return 0, -1
	}
	return v, j
}

// spaceAt returns the end of one space (space, tab or no-break space) at s[i], or -1.
func spaceAt(s string, i int) int {
	switch {
	case i < len(s) && (s[i] == ' ' || s[i] == '\t'):
		return i + 1
	case strings.HasPrefix(s[i:], "\u00a0"):
		return i + 2
	}
	return -1
}

// spaces returns the end of one or more spaces at s[i], or -1.
func spaces(s string, i int) int {
	j := spaceAt(s, i)
	for k := j; k > 0; k = spaceAt(s, k) {
		j = k
	}
	return j
}

// optSpace skips at most one space.
func optSpace(s string, i int) int {
	if j := spaceAt(s, i); j > 0 {
		return j
	}
	return i
}

// word returns the end of the lowercase ASCII word w at s[i] in any letter case, or -1.
func word(s string, i int, w string) int {
	if len(s)-i < len(w) {
		return -1
	}
	for k := 0; k < len(w); k++ {
		if s[i+k]|0x20 != w[k] {
			return -1
		}
	}
	return i + len(w)
}

// wordThenSpaces returns the end of w and the spaces after it at s[i], or -1.
func wordThenSpaces(s string, i int, w string) int {
	if j := word(s, i, w); j > 0 {
		return spaces(s, j)
	}
	return -1
}

// name matches the longest of names at s[i] that no letter follows and returns its
// index and end; then one optional period, when dot.
func name(s string, i int, names []string, dot bool) (int, int) {
	best, end := -1, -1
	for k, n := range names {
		if j := word(s, i, n); j > end && (j == len(s) || !isLetter(s[j])) {
			best, end = k, j
		}
	}
	if end > 0 && dot && end < len(s) && s[end] == '.' {
		end++
	}
	return best, end
}

var monthNames = []string{
	"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
	"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
}

// monthOf maps an index of monthNames to its month.
var monthOf = []time.Month{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 6, 7, 8, 9, 9, 10, 11, 12}

// monthAt reads a month name, with an optional period.
func monthAt(s string, i int) (time.Month, int) {
	k, e := name(s, i, monthNames, true)
	if k < 0 {
		return 0, -1
	}
	return monthOf[k], e
}

var weekdayNames = []string{
	"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
	"sun", "mon", "tue", "wed", "thu", "fri", "sat", "tues", "thur", "thurs",
}

var weekdayOf = []time.Weekday{0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 2, 4, 4}

// weekdayAt reads a weekday name: spelled out and ending at a boundary when full, else
// also abbreviated, with an optional period.
func weekdayAt(s string, i int, full bool) (time.Weekday, int) {
	names := weekdayNames
	if full {
		names = names[:7]
	}
	k, e := name(s, i, names, !full)
	if k < 0 || (full && !endsAt(s, e)) {
		return 0, -1
	}
	return weekdayOf[k], e
}

// ordinal skips an ordinal suffix (st, nd, rd, th) that no letter follows.
func ordinal(s string, i int) int {
	for _, o := range [...]string{"st", "nd", "rd", "th"} {
		if j := word(s, i, o); j > 0 && (j == len(s) || !isLetter(s[j])) {
			return j
		}
	}
	return i
}

// yearAt reads a year 1900–2199 of exactly four digits.
func yearAt(s string, i int) int {
	y, e := num(s, i, 4, 4)
	if e < 0 || y < 1900 || y > 2199 {
		return -1
	}
	return e
}

// hasYear reports whether s has a run of exactly four digits that may be a year, which
// every full date has.
func hasYear(s string) bool {
	for i := 0; i+4 <= len(s); i++ {
		if isDigit(s[i]) && (i == 0 || !isDigit(s[i-1])) && yearAt(s, i) > 0 {
			return true
		}
	}
	return false
}

// dateAt reads the date of a full date (ISO, numeric or written, with a year) at s[i]
// and returns its end, or -1.
func dateAt(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	if !isDigit(s[i]) {
		// Month day, year: November 30, 2026.
		_, j := monthAt(s, i)
		if j < 0 {
			return -1
		}
		if j = spaces(s, j); j < 0 {
			return -1
		}
		if d, e := num(s, j, 1, 2); e < 0 || d < 1 || d > 31 {
			return -1
		} else {
			j = ordinal(s, e)
		}
		if j < len(s) && s[j] == ',' {
			j++
		}
		if j = spaces(s, j); j < 0 {
			return -1
		}
		return yearAt(s, j)
	}
	if j := yearAt(s, i); j > 0 {
		if j >= len(s) {
			return -1
		}
		switch sep := s[j]; sep {
		case '-': // 2026-11-30
			if mo, e := num(s, j+1, 2, 2); e > 0 && mo >= 1 && mo <= 12 && e < len(s) && s[e] == '-' {
				if d, e := num(s, e+1, 2, 2); e > 0 && d >= 1 && d <= 31 {
					return e
				}
			}
		case '/', '.': // 2026/11/30, 2026.11.30
			if mo, e := num(s, j+1, 1, 2); e > 0 && mo >= 1 && mo <= 12 && e < len(s) && s[e] == sep {
				if d, e := num(s, e+1, 1, 2); e > 0 && d >= 1 && d <= 31 {
					return e
				}
			}
		}
		return -1
	}
	d, j := num(s, i, 1, 2)
	if j < 0 || d < 1 || d > 31 {
		return -1
	}
	// 30.11.2026, 11/30/2026, 30-11-2026
	if j < len(s) && (s[j] == '.' || s[j] == '/' || s[j] == '-') {
		sep := s[j]
		if d2, e := num(s, j+1, 1, 2); e > 0 && d2 >= 1 && d2 <= 31 && e < len(s) && s[e] == sep {
			if y := yearAt(s, e+1); y > 0 {
				return y
			}
		}
	}
	// Day month year: 30 Nov 2026, 30th of November, 2026, 30. November 2026.
	j = ordinal(s, j)
	if j < len(s) && s[j] == '.' {
		j++
	}
	if j = spaces(s, j); j < 0 {
		return -1
	}
	if k := wordThenSpaces(s, j, "of"); k > 0 {
		j = k
	}
	if _, j = monthAt(s, j); j < 0 {
		return -1
	}
	if j < len(s) && s[j] == ',' {
		j++
	}
	if j = spaces(s, j); j < 0 {
		return -1
	}
	return yearAt(s, j)
}

// timeEnds appends the ends of a time of day with optional am/pm and zone at s[i] to
// out (package doc, Dates), in no particular order.
func timeEnds(s string, i int, out []int) []int {
	h, j := num(s, i, 1, 2)
	if j < 0 || h > 23 || j >= len(s) || s[j] != ':' {
		return out
	}
	mi, j := num(s, j+1, 2, 2)
	if j < 0 || mi > 59 {
		return out
	}
	bases := [3]int{j, -1, -1}
	if j < len(s) && s[j] == ':' {
		if sec, e := num(s, j+1, 2, 2); e > 0 && sec <= 60 {
			bases[1] = e
			if e < len(s) && (s[e] == '.' || s[e] == ',') {
				if _, f := num(s, e+1, 1, 9); f > 0 {
					bases[2] = f
				}
			}
		}
	}
	for _, b := range bases {
		if b < 0 {
			continue
		}
		ampm := [2]int{b, -1}
		// am, pm, a.m., p.m. (any case), after at most one space.
		k := optSpace(s, b)
		if k < len(s) && (s[k]|0x20 == 'a' || s[k]|0x20 == 'p') {
			k++
			dotted := k < len(s) && s[k] == '.'
			if dotted {
				k++
			}
			if k < len(s) && s[k]|0x20 == 'm' {
				k++
				if dotted && k < len(s) && s[k] == '.' {
					k++
				}
				ampm[1] = k
			}
		}
		for _, a := range ampm {
			if a < 0 {
				continue
			}
			out = append(out, a)
			out = zoneEnds(s, a, out)
		}
	}
	return out
}

// zoneEnds appends the ends of a zone after at most one space at s[i]: Z, an offset
// +01:00, +0100 or +01, or UTC or GMT with an optional offset.
func zoneEnds(s string, i int, out []int) []int {
	i = optSpace(s, i)
	if i >= len(s) {
		return out
	}
	offset := func(j int, minLen int) {
		if j >= len(s) || (s[j] != '+' && s[j] != '-') {
			return
		}
		v, e := num(s, j+1, minLen, 4)
		switch n := e - j - 1; {
		case e < 0 || n == 3:
		case n == 4: // +0100
			if v/100 <= 23 && v%100 <= 59 {
				out = append(out, e)
			}
		case v <= 23: // +01, +1 after UTC or GMT, +01:00
			out = append(out, e)
			if e < len(s) && s[e] == ':' {
				if m, f := num(s, e+1, 2, 2); f > 0 && m <= 59 {
					out = append(out, f)
				}
			}
		}
	}
	switch {
	case s[i] == 'Z' || s[i] == 'z':
		out = append(out, i+1)
	case s[i] == '+' || s[i] == '-':
		offset(i, 2)
	default:
		j := word(s, i, "utc")
		if j < 0 {
			j = word(s, i, "gmt")
		}
		if j > 0 {
			out = append(out, j)
			offset(j, 1)
		}
	}
	return out
}

// fullDateAt returns the end of the longest full date with its times at s[i], or -1.
func fullDateAt(s string, i int) int {
	if !isDigit(s[i]) && !isLetter(s[i]) {
		return -1
	}
	best := -1
	var buf [64]int
	// A time of day before the date: 06:45 UTC on 30 Nov 2026.
	for _, t := range timeEnds(s, i, buf[:0]) {
		j := t
		if j < len(s) && s[j] == ',' {
			j++
		}
		if j = spaces(s, j); j < 0 {
			continue
		}
		if k := wordThenSpaces(s, j, "on"); k > 0 {
			j = k
		}
		if e := dateTimeAt(s, j); e > best {
			best = e
		}
	}
	if e := dateTimeAt(s, i); e > best {
		best = e
	}
	return best
}

// dateTimeAt returns the end of the longest date, with an optional weekday before it
// and time of day after it, at s[i] that ends at a boundary, or -1.
func dateTimeAt(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	d := dateAt(s, i)
	if d < 0 {
		// Monday, November 30, 2026; Mon, 30 Nov 2026.
		_, j := weekdayAt(s, i, false)
		if j < 0 {
			return -1
		}
		if j < len(s) && s[j] == ',' {
			j++
		}
		if j = spaces(s, j); j < 0 {
			return -1
		}
		if d = dateAt(s, j); d < 0 {
			return -1
		}
	}
	best := -1
	if endsAt(s, d) {
		best = d
	}
	// A time of day after the date, after T, spaces (with an optional comma before and
	// "at" after them) or @.
	var starts [3]int
	n := 0
	if d < len(s) && (s[d] == 'T' || s[d] == 't') {
		starts[n] = d + 1
		n++
	}
	j := d
	if j < len(s) && s[j] == ',' {
		j++
	}
	if j = spaces(s, j); j > 0 {
		if k := wordThenSpaces(s, j, "at"); k > 0 {
			j = k
		}
		starts[n] = j
		n++
	}
	if k := optSpace(s, d); k < len(s) && s[k] == '@' {
		starts[n] = optSpace(s, k+1)
		n++
	}
	var buf [64]int
	for _, st := range starts[:n] {
		for _, e := range timeEnds(s, st, buf[:0]) {
			if e > best && endsAt(s, e) {
				best = e
			}
		}
	}
	return best
}

// dayMonthAt reads a day and month without a year (30 Nov, 30th of November,
// November 30th) that ends at a boundary.
func dayMonthAt(s string, i int) (time.Month, int, int) {
	if isDigit(s[i]) {
		d, j := num(s, i, 1, 2)
		if j < 0 || d < 1 || d > 31 {
			return 0, 0, -1
		}
		j = ordinal(s, j)
		if j < len(s) && s[j] == '.' {
			j++
		}
		if j = spaces(s, j); j < 0 {
			return 0, 0, -1
		}
		if k := wordThenSpaces(s, j, "of"); k > 0 {
			j = k
		}
		mo, e := monthAt(s, j)
		if e < 0 || !endsAt(s, e) {
			return 0, 0, -1
		}
		return mo, d, e
	}
	mo, j := monthAt(s, i)
	if j < 0 {
		return 0, 0, -1
	}
	if j = spaces(s, j); j < 0 {
		return 0, 0, -1
	}
	d, e := num(s, j, 1, 2)
	if e < 0 || d < 1 || d > 31 {
		return 0, 0, -1
	}
	if o := ordinal(s, e); endsAt(s, o) {
		return mo, d, o
	}
	return 0, 0, -1
}

// basicDateAt reads an ISO 8601 basic date, with an optional basic time, that ends at a
// boundary, and returns the date.
func basicDateAt(s string, i int) (time.Time, int) {
	v, j := num(s, i, 8, 8)
	if j < 0 {
		return time.Time{}, -1
	}
	y, mo, d := v/10000, v/100%100, v%100
	if y < 1900 || y > 2199 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, -1
	}
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if j < len(s) && (s[j] == 'T' || s[j] == 't') {
		if hms, e := num(s, j+1, 4, 6); e > 0 && (e-j-1)%2 == 0 {
			h, m := hms, 0
			if e-j-1 == 6 {
				h, m = hms/10000, hms/100%100
			} else {
				h, m = hms/100, hms%100
			}
			if h <= 23 && m <= 59 {
				if e < len(s) && (s[e] == 'Z' || s[e] == 'z') {
					e++
				}
				if endsAt(s, e) {
					return t, e
				}
			}
		}
	}
	if endsAt(s, j) {
		return t, j
	}
	return time.Time{}, -1
}
