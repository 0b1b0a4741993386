package attest

import (
	"fmt"
	"time"
)

// TimeLayout is the only timestamp form Probity signs or accepts: RFC 3339 in UTC
// with exactly three fractional digits and a literal "Z", e.g. 2026-08-22T00:00:00.000Z.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeLayout, converting to UTC and truncating to the millisecond.
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Millisecond).Format(TimeLayout)
}

// ParseTime parses a timestamp in exactly TimeLayout. Other RFC 3339 forms (offsets,
// more or fewer fractional digits, lower-case letters) are rejected, so that one instant
// has one spelling in signed data and in key documents.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(TimeLayout, s)
	if err != nil || t.Format(TimeLayout) != s {
		return time.Time{}, fmt.Errorf("timestamp %q is not RFC 3339 UTC with milliseconds (want e.g. 2026-08-22T00:00:00.000Z)", s)
	}
	return t, nil
}
