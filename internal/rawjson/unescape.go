package rawjson

import (
	"errors"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file is the one reading of JSON strings in Probity outside attest's canonical
// form (which refuses what encoding/json repairs): NextRune reads one character of a
// string's content exactly as encoding/json's decoder does, and every other function
// here, the tool pages' scanner in web and the surface comparison in history/diff read
// strings through it. The functions are generic so that a caller holding a Go string
// gets substrings of it, not copies.

var (
	errQuote        = errors.New("unescaped quote in a string")
	errControl      = errors.New("control character in a string")
	errEscape       = errors.New("malformed escape in a string")
	errUnterminated = errors.New("unterminated string")
	errNotString    = errors.New("not a JSON string")
)

// special marks the bytes of a string's content that do not simply stand for
// themselves: the quote, the backslash, control characters and bytes that are not
// ASCII.
var special = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < ' ' || c >= utf8.RuneSelf
	}
	return t
}()

// Special reports whether NextRune must read the byte c of a string's content: a
// quote, a backslash, a control character or a byte that is not ASCII. Every other
// byte is a character that stands for itself (SkipPlain skips them).
func Special(c byte) bool { return special[c] }

// SkipPlain returns the index of the first byte at or after s[i] that NextRune must
// read (a quote, a backslash, a control character or a byte that is not ASCII), or
// len(s). The bytes it skips are characters that stand for themselves. It reads eight
// bytes at a time; a call that skips nothing is inlined.
func SkipPlain[T string | []byte](s T, i int) int {
	if i < len(s) && special[s[i]] {
		return i
	}
	return skipPlain(s, i)
}

func skipPlain[T string | []byte](s T, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		_ = s[i+7]
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// A byte of m has its high bit set when that byte of x is not ASCII (x), is
		// below ' ' (x - ' ' wraps), or is '"' or '\\' (q or b is zero there, so
		// q-1 or b-1 wraps). A byte that stands for itself sets none, and a borrow
		// only leaves a byte that set its own: m is exact for "some byte of x".
		q, b := x^(ones*'"'), x^(ones*'\\')
		m := x | (x - ones*' ') | (q-ones)&^q | (b-ones)&^b
		if m&highs != 0 {
			break
		}
	}
	for i < len(s) && !special[s[i]] {
		i++
	}
	return i
}

// shortEscapes maps the byte after a backslash to the character the escape stands for,
// 0 where it is no short escape.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// NextRune reads the character that starts at s[i] in the content of a JSON string
// (the bytes between its quotes) as encoding/json's decoder reads it, and returns the
// character and the index just past it:
//
//   - an escape stands for its character (\u escapes of a surrogate pair for one
//     character, twelve bytes read);
//   - a \u escape of a lone or mispaired surrogate stands for U+FFFD, and only its six
//     bytes are read (the next escape is a character of its own);
//   - a byte that does not start valid UTF-8 (a surrogate or an overlong form
//     included) stands for U+FFFD, one byte read;
//   - any other byte starts a character that stands for itself.
//
// The character returned is never a surrogate and always valid. NextRune returns an
// error when s[i] cannot be read in a string's content: a quote, a control character,
// or a backslash that starts no valid escape (cut off by the end of s included).
func NextRune[T string | []byte](s T, i int) (r rune, next int, err error) {
	// One function, so that a character costs its caller one call (the escapes
	// decoded as encoding/json's unquote decodes them).
	switch c := s[i]; {
	case c >= utf8.RuneSelf:
		// The conversion copies at most four bytes of a string, on the stack, and
		// nothing of a []byte.
		r, size := utf8.DecodeRune([]byte(s[i:min(i+utf8.UTFMax, len(s))]))
		return r, i + size, nil
	case c == '"':
		return 0, i, errQuote
	case c < ' ':
		return 0, i, errControl
	case c != '\\':
		return rune(c), i + 1, nil
	case i+1 >= len(s):
		return 0, i, errEscape
	}
	if e := shortEscapes[s[i+1]]; e != 0 {
		return rune(e), i + 2, nil
	}
	if s[i+1] != 'u' {
		return 0, i, errEscape
	}
	r, ok := hex4(s, i+2)
	switch {
	case !ok:
		return 0, i, errEscape
	case !utf16.IsSurrogate(r):
		return r, i + 6, nil
	case i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u':
		if r2, ok := hex4(s, i+8); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, i + 12, nil
			}
		}
	}
	return utf8.RuneError, i + 6, nil // a lone or mispaired surrogate
}

// hex4 reads the four hexadecimal digits at s[i:].
func hex4[T string | []byte](s T, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	r := rune(unhex[s[i]])<<12 | rune(unhex[s[i+1]])<<8 | rune(unhex[s[i+2]])<<4 | rune(unhex[s[i+3]])
	return r, r >= 0
}

// unhex maps a hexadecimal digit to its value, and every other byte to -1 (which makes
// hex4's result negative).
var unhex = func() (t [256]int8) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = int8(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = int8(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = int8(c - 'A' + 10)
		default:
			t[c] = -1
		}
	}
	return t
}()

// AppendUnescaped appends the text that content, the bytes between the quotes of a
// JSON string, stands for to dst, read by NextRune (as encoding/json reads it), and
// returns the extended slice. It returns an error, and dst extended by what it read
// so far, when content is not the content of a JSON string (NextRune's errors).
func AppendUnescaped[T string | []byte](dst []byte, content T) ([]byte, error) {
	for i := 0; i < len(content); {
		if c := content[i]; !special[c] {
			j := SkipPlain(content, i+1)
			if j == i+1 {
				dst = append(dst, c)
			} else {
				dst = append(dst, content[i:j]...)
			}
			i = j
			continue
		}
		r, next, err := NextRune(content, i)
		if err != nil {
			return dst, err
		}
		dst = utf8.AppendRune(dst, r)
		i = next
	}
	return dst, nil
}

// ScanString reads the JSON string whose opening quote is at d[i] and returns the
// index just past its closing quote, and whether the string is plain: without escapes
// and in valid UTF-8, so that its value is d[i+1:end-1] as it is. It returns an error
// when there is no string at d[i], or it does not end, or its content is malformed
// (NextRune's errors).
func ScanString[T string | []byte](d T, i int) (end int, plain bool, err error) {
	if i >= len(d) || d[i] != '"' {
		return i, false, errNotString
	}
	plain = true
	for i++; ; {
		i = SkipPlain(d, i)
		if i >= len(d) {
			return i, false, errUnterminated
		}
		if d[i] == '"' {
			return i + 1, plain, nil
		}
		r, next, err := NextRune(d, i)
		if err != nil {
			return next, false, err
		}
		if d[i] == '\\' || (r == utf8.RuneError && next == i+1) {
			plain = false
		}
		i = next
	}
}

// ReadString returns the value of the JSON string whose opening quote is at d[i], as
// encoding/json reads it, and the index just past its closing quote (ScanString's
// errors). The value of a plain string in a Go string is a substring of d, not a copy.
func ReadString[T string | []byte](d T, i int) (v string, end int, err error) {
	end, plain, err := ScanString(d, i)
	if err != nil {
		return "", i, err
	}
	if plain {
		return string(d[i+1 : end-1]), end, nil
	}
	return unescaped(d[i+1 : end-1]), end, nil
}

// unescaped is the text content stands for, content having been checked by ScanString.
func unescaped[T string | []byte](content T) string {
	b, _ := AppendUnescaped(make([]byte, 0, len(content)), content)
	return unsafe.String(unsafe.SliceData(b), len(b)) // b is not used again
}
