package locator

import "testing"

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://Example.COM":            "https://example.com/",
		"https://example.com:443/mcp":    "https://example.com/mcp",
		"http://example.com:80/a#frag":   "http://example.com/a",
		"https://example.com:8443/mcp?x": "https://example.com:8443/mcp?x",
		"https://[::1]:443/":             "https://[::1]/",
		"  https://example.com/mcp \n":   "https://example.com/mcp",
		"http://example.com:443/":        "http://example.com:443/",
	} {
		if got, err := NormalizeURL(in); err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://example.com", "https://user@example.com", "https://u:p@example.com", "mailto:x@example.com", "//example.com", "https://", "https://exa mple.com/", "abcdefghijklmnopqrstuvwxyz://x"} {
		if _, err := NormalizeURL(bad); err == nil {
			t.Errorf("NormalizeURL(%q) succeeded", bad)
		}
	}
	if _, err := NormalizeURL("abcdefghijklmnopqrstuvwxyz://x"); err == nil || err.Error() != `invalid URL: scheme "abcdefghijklmnop… (26 bytes)" is not http or https` {
		t.Errorf("long scheme: %v", err)
	}
}

// TestPEP503 is the table of the one PEP 503 normalizer. The rows marked "spec" are
// where the three normalizers before it disagreed: checks/supply dropped leading and
// trailing separators, targets dropped trailing ones and kept a leading one, and the
// provenance check kept both. re.sub(r"[-_.]+", "-", name).lower() keeps both, as '-'.
func TestPEP503(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"a", "a"},
		{"mcp-server-git", "mcp-server-git"},
		{"Mcp.Server__Git", "mcp-server-git"},
		{"Probity_Fixture..Classic", "probity-fixture-classic"},
		{"FRIENDLY-BARD", "friendly-bard"},
		{"Friendly.Bard", "friendly-bard"},
		{"friendly_bard", "friendly-bard"},
		{"friendly--bard", "friendly-bard"},
		{"FrIeNdLy-._.-bArD", "friendly-bard"},
		{"zope.interface", "zope-interface"},
		{"Foo_Bar-1.0.tar.gz", "foo-bar-1-0-tar-gz"},
		{"foo_bar-1.0-py3-none-any.whl", "foo-bar-1-0-py3-none-any-whl"},
		{"-bad", "-bad"}, // spec
		{"bad-", "bad-"}, // spec
		{"._x_.", "-x-"}, // spec
		{"...", "-"},     // spec
		{"Wëather", "wëather"},
		{"ÀB_C", "àb-c"},
	} {
		if got := PEP503(tt.in); got != tt.want {
			t.Errorf("PEP503(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
