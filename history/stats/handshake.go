package stats

// NotRecordedPath labels the handshake-path row of rounds stored before Probity
// recorded the handshake method (migration 0005): they answered with a version, but on
// which path, proposing which version, is unknown, so they count as answered only.
const NotRecordedPath = "Path not recorded (rounds stored before migration 0005)"

// PathLabel names a handshake path as the report shows it: "<method>, proposing
// <version>", the method formatted by code and the version by text (each escapes for
// its format); NotRecordedPath for a row without a method.
func PathLabel(row PathRow, code, text func(string) string) string {
	if row.Method == "" {
		return NotRecordedPath
	}
	return code(row.Method) + ", proposing " + text(row.Proposed)
}
