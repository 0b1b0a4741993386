package targets

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// asciiHost returns the ASCII form of a host name: unchanged when it is ASCII already,
// else mapped to lower case and NFKC (the bulk of the UTS #46 mapping: full-width
// letters and dots become ASCII) with every non-ASCII label punycode-encoded as
// xn--… (RFC 3492). It refuses labels with characters other than letters, marks,
// digits, '-' and '_'. This is not a full IDNA 2008 validation; it makes the spellings of
// one host name one locator, in the form the HTTP client resolves anyway.
func asciiHost(host string) (string, error) {
	if isASCII(host) {
		return host, nil
	}
	if !utf8.ValidString(host) {
		return "", errors.New("the host name is not valid UTF-8")
	}
	host = strings.ToLower(norm.NFKC.String(strings.ToLower(host)))
	host = strings.ReplaceAll(host, "\u3002", ".") // ideographic full stop
	labels := strings.Split(host, ".")
	for i, l := range labels {
		// Check ASCII labels too: the mapping can make '/', ':' or '@' of full-width
		// forms, which would move the host's end.
		for _, r := range l {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.M, r) && r != '-' && r != '_' {
				return "", errors.New("the host name has a character that cannot be part of a domain name")
			}
		}
		if isASCII(l) {
			continue
		}
		if utf8.RuneCountInString(l) > 63 {
			return "", errors.New("a label of the host name is longer than 63 characters")
		}
		labels[i] = "xn--" + punycode(l)
		if len(labels[i]) > 63 {
			return "", errors.New("a label of the host name is longer than 63 characters in its ASCII form")
		}
	}
	host = strings.Join(labels, ".")
	if len(host) > 253 {
		return "", errors.New("the host name is longer than 253 characters in its ASCII form")
	}
	return host, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Punycode parameters (RFC 3492, section 5).
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
)

// punycode encodes a label of at most 63 runes (RFC 3492, section 6.3); the caller
// bounds the length, so no step can overflow.
func punycode(label string) string {
	runes := []rune(label)
	var out []byte
	for _, r := range runes {
		if r < utf8.RuneSelf {
			out = append(out, byte(r))
		}
	}
	b := len(out)
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	n, delta, bias := rune(pcInitialN), 0, pcInitialBias
	for h < len(runes) {
		m := rune(utf8.MaxRune + 1)
		for _, r := range runes {
			if r >= n && r < m {
				m = r
			}
		}
		delta += int(m-n) * (h + 1)
		n = m
		for _, r := range runes {
			if r < n {
				delta++
			}
			if r != n {
				continue
			}
			q := delta
			for k := pcBase; ; k += pcBase {
				t := min(max(k-bias, pcTMin), pcTMax)
				if q < t {
					break
				}
				out = append(out, pcDigit(t+(q-t)%(pcBase-t)))
				q = (q - t) / (pcBase - t)
			}
			out = append(out, pcDigit(q))
			bias = pcAdapt(delta, h+1, h == b)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return string(out)
}

func pcDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

func pcAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}
