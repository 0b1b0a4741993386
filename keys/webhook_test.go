package keys

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/probity-dev/probity/attest"
)

// testDoc3 is testDoc2 (format 2, with a log) with a webhook key (seed 9): format 3.
func testDoc3(t *testing.T) *Document {
	t.Helper()
	d := testDoc2(t)
	pk, err := EncodeWebhookPublicKey(seedKey(9).Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	d.FormatVersion, d.Webhook = FormatVersion3, &Webhook{PublicKey: pk}
	return d
}

func TestWebhookPublicKeyEncoding(t *testing.T) {
	pub := seedKey(9).Public().(ed25519.PublicKey)
	s, err := EncodeWebhookPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if want := "whpk_" + base64.StdEncoding.EncodeToString(pub); s != want || len(s) != 49 {
		t.Fatalf("EncodeWebhookPublicKey = %q, want %q", s, want)
	}
	back, err := ParseWebhookPublicKey(s)
	if err != nil || !back.Equal(pub) {
		t.Fatalf("ParseWebhookPublicKey = %x, %v", back, err)
	}
	raw := base64.StdEncoding.EncodeToString(pub)
	for name, bad := range map[string]string{
		"no prefix":        raw,
		"secret prefix":    "whsk_" + raw,
		"symmetric prefix": "whsec_" + raw,
		"unpadded":         "whpk_" + strings.TrimRight(raw, "="),
		"url-safe":         "whpk_" + base64.URLEncoding.EncodeToString(append([]byte{0xfb, 0xff}, pub[2:]...)),
		"short":            "whpk_" + base64.StdEncoding.EncodeToString(pub[:31]),
		"long":             "whpk_" + base64.StdEncoding.EncodeToString(append(pub, 0)),
		"trailing space":   s + " ",
		"empty":            "",
	} {
		if _, err := ParseWebhookPublicKey(bad); err == nil {
			t.Errorf("%s: %q parsed", name, bad)
		}
	}
}

// TestDocumentWebhookRoundTrip: a format 3 document encodes with the webhook member last,
// parses back to the same document, and its canonical form is stable.
func TestDocumentWebhookRoundTrip(t *testing.T) {
	d := testDoc3(t)
	data, err := MarshalDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"format_version": 3`) || !strings.HasSuffix(strings.TrimSpace(string(data)), "\"public_key\": \""+d.Webhook.PublicKey+"\"\n  }\n}") {
		t.Errorf("format 3 document:\n%s", data)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Webhook == nil || *back.Webhook != *d.Webhook || back.FormatVersion != FormatVersion3 || !SameDocument(back, d) {
		t.Errorf("parsed %+v", back)
	}
	if pub, err := back.Webhook.Key(); err != nil || !pub.Equal(seedKey(9).Public().(ed25519.PublicKey)) {
		t.Errorf("webhook key %x, %v", pub, err)
	}
	again, err := MarshalDocument(back)
	if err != nil || string(again) != string(data) {
		t.Errorf("re-encoded differently:\n%s", again)
	}
	// encoding/json reads it too (what a reader of a published document uses).
	var loose Document
	if err := loose.UnmarshalJSON(data); err != nil || loose.Webhook == nil || loose.Webhook.PublicKey != d.Webhook.PublicKey {
		t.Errorf("UnmarshalJSON: %+v, %v", loose.Webhook, err)
	}
	// The documents of the earlier formats still parse and encode as they did.
	for _, old := range []*Document{testDoc(t), testDoc2(t)} {
		data, err := MarshalDocument(old)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "webhook") {
			t.Errorf("format %d document has a webhook member:\n%s", old.FormatVersion, data)
		}
		back, err := Parse(data)
		if err != nil || back.Webhook != nil || back.FormatVersion != old.FormatVersion {
			t.Errorf("format %d: %+v, %v", old.FormatVersion, back, err)
		}
	}
}

func TestDocumentWebhookRules(t *testing.T) {
	sameAsRecordKey := testDoc3(t)
	pk, _ := EncodeWebhookPublicKey(seedKey(2).Public().(ed25519.PublicKey))
	sameAsRecordKey.Webhook.PublicKey = pk
	v2WithWebhook := testDoc3(t)
	v2WithWebhook.FormatVersion = FormatVersion
	v3Without := testDoc3(t)
	v3Without.Webhook = nil
	v1WithWebhook := testDoc(t)
	v1WithWebhook.Webhook = testDoc3(t).Webhook
	badKey := testDoc3(t)
	badKey.Webhook.PublicKey = "whpk_AAAA"
	for name, tc := range map[string]struct {
		d    *Document
		want string
	}{
		"webhook key is a record key":  {sameAsRecordKey, "webhook.public_key is the key of keys[1]"},
		"format 2 with a webhook":      {v2WithWebhook, "webhook is not a member of format_version 2"},
		"format 1 with a webhook":      {v1WithWebhook, "webhook is not a member of format_version 1"},
		"format 3 without a webhook":   {v3Without, "webhook is required in format_version 3"},
		"malformed webhook public key": {badKey, "webhook.public_key"},
	} {
		err := tc.d.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	// Parse is as strict about the member as about the others.
	good := string(rawJSON(t, testDoc3(t)))
	for name, data := range map[string]string{
		"unknown member in webhook": strings.Replace(good, `"public_key"`, `"extra": 1, "public_key"`, 1),
		"webhook null":              strings.Replace(good, "\"webhook\": {\n    \"public_key\": \""+testDoc3(t).Webhook.PublicKey+"\"\n  }", `"webhook": null`, 1),
		"webhook missing":           strings.Replace(good, `"format_version": 3`, `"format_version": 2`, 1),
		"format 4":                  strings.Replace(good, `"format_version": 3`, `"format_version": 4`, 1),
		"public_key a number":       strings.Replace(good, `"public_key": "`+testDoc3(t).Webhook.PublicKey+`"`, `"public_key": 1`, 1),
	} {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("%s parsed:\n%s", name, data)
		}
	}
}

// TestCheckChangeWebhook: webhook_key_added sets the webhook member and changes nothing
// else; no other event may set it, and no version may replace or remove it.
func TestCheckChangeWebhook(t *testing.T) {
	prev := testDoc2(t)
	prev.Keys[0].ValidUntil = nil
	prev.Keys = prev.Keys[:1]
	at := t1
	next := func(edit func(*Document)) *Document {
		c := *prev
		c.Keys = append([]Key(nil), prev.Keys...)
		c.FormatVersion, c.Webhook = FormatVersion3, testDoc3(t).Webhook
		if edit != nil {
			edit(&c)
		}
		return &c
	}
	added := next(nil)
	other := next(func(d *Document) {
		pk, _ := EncodeWebhookPublicKey(seedKey(8).Public().(ed25519.PublicKey))
		d.Webhook = &Webhook{PublicKey: pk}
	})
	for name, tc := range map[string]struct {
		prev, next *Document
		event      string
		want       string
	}{
		"added":                 {prev, added, attest.KeysEventWebhookKeyAdded, ""},
		"added as a rotation":   {prev, added, attest.KeysEventRotated, "does not describe the change"},
		"added as the log key":  {prev, added, attest.KeysEventLogKeyAdded, "does not describe the change"},
		"added with a new key":  {prev, next(func(d *Document) { d.Keys = append(d.Keys, testKey(t, 3, at)) }), attest.KeysEventWebhookKeyAdded, "does not describe the change"},
		"nothing added":         {prev, prev, attest.KeysEventWebhookKeyAdded, "does not describe the change"},
		"replaced":              {added, other, attest.KeysEventWebhookKeyAdded, "the webhook key is replaced or removed"},
		"removed":               {added, prev, attest.KeysEventRotated, "the webhook key is replaced or removed"},
		"rotation keeps it":     {added, next(func(d *Document) { d.Keys[0].ValidUntil = ptr(at); d.Keys = append(d.Keys, testKey(t, 3, at)) }), attest.KeysEventRotated, ""},
		"added twice, the same": {added, added, attest.KeysEventWebhookKeyAdded, "does not describe the change"},
	} {
		err := CheckChange(tc.prev, tc.next, tc.event, at)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.want != "" && (err == nil || !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
